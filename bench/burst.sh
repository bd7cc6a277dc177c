#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A burst of jobs ending together on the private Slurm cluster
# (tests/cluster/) with jobcomp/lwm2 from the build tree, once a side:
#
#   burst.sh BUILD OUTDIR [JOBS [SIDES]]
#
# SIDES (default "none sqlite mariadb"): Database=none (the log alone),
# the default SQLite file beside the log, a MariaDB database of lwm2's own
# on the cluster's server (left out, with the reason in OUTDIR/mariadb.why,
# where lwm2 has no MariaDB).  Each side: a fresh log and database,
# slurmctld restarted and its RPC statistics reset (sdiag -r), an array of
# JOBS (1,000) `true` tasks, sdiag sampled every half second while it runs.
# Writes OUTDIR/SIDE, one "key value" a line:
#   jobs, log_lines, log_tasks, rows, row_tasks   what arrived, and once?
#   span_s       the first task's end to the last one's
#   log_s, db_s  the last end until every task is in the log, the database
#   rpc_NAME_count, rpc_NAME_us   sdiag's count and average time of the
#                RPCs slurmctld's job ends bring (REQUEST_COMPLETE_BATCH_SCRIPT,
#                MESSAGE_EPILOG_COMPLETE, REQUEST_JOB_INFO*)
#   threads_max, agent_queue_max, dbd_queue_max   sampled during the burst
#   db_messages  slurmctld's "lwm2: database:" lines (trouble) meanwhile
#   db_groups, db_group_jobs   the worker's transactions and the jobs in
#                them ("lwm2: database group:", slurmctld's debug level)
#   waited_out   jobs slurmctld still held COMPLETING after LateRecordWait
# Exits 77 with the reason on stderr where the cluster cannot be had.
# shellcheck source-path=SCRIPTDIR
set -uo pipefail

build=$1 outdir=$2 jobs=${3:-1000} sides=${4:-none sqlite mariadb}
# skip (exit 77), top
# shellcheck source=cluster-run.sh
. "$(dirname "$0")/cluster-run.sh"
[ -r "$build/jobcomp/.libs/jobcomp_lwm2.so" ] ||
	skip "jobcomp_lwm2.so is not built in $build (configure --with-slurm-source)"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
mkdir -p "$outdir"
cluster_run_lib
# shellcheck source=../tests/integration/jobcomp-lib.sh
. "$top/tests/integration/jobcomp-lib.sh"

export LWM2_BUILDDIR=$build
jobcomp_setup >&2
ctld() { bash "$LWM2_CLUSTER_SH" "$1" "$LWM2_CLUSTER_DIR" >/dev/null 2>&1; }
SOCK=$LWM2_CLUSTER_DIR/run/mysqld.sock
PW=lwm2-bench-$$
my() { timeout 30 mariadb --no-defaults --socket="$SOCK" -uroot -B -N "$@"; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# the array's tasks in the side's database: "ROWS DISTINCT"
db_tasks() {
	case $side in
	none) echo "0 0" ;;
	sqlite)
		sqlite3 -readonly "$JCDIR/lwm2.db" "SELECT count(*), count(DISTINCT sacct_id) FROM job
			WHERE sacct_id LIKE '${arr}\_%' ESCAPE '\\'" 2>/dev/null | tr '|' ' '
		;;
	mariadb)
		my -e "SELECT count(*), count(DISTINCT sacct_id) FROM lwm2.job
			WHERE sacct_id LIKE '${arr}\\_%'" 2>/dev/null | tr '\t' ' '
		;;
	esac
}

# sdiag's figures of interest, "key value" lines
sdiag_figures() {
	sdiag 2>/dev/null | awk '
		/^Server thread count:/ { print "threads", $4 }
		/^Agent queue size:/ { print "agent_queue", $4 }
		/^DBD Agent queue size:/ { print "dbd_queue", $5 }
		/^[ \t]+(REQUEST_COMPLETE_BATCH_SCRIPT|MESSAGE_EPILOG_COMPLETE|REQUEST_JOB_INFO[A-Z_]*) / {
			name = $1; c = t = ""
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^count:/) c = substr($i, 7)
				if ($i ~ /^ave_time:/) t = substr($i, 10)
			}
			if (c != "" && !seen[name]++) print "rpc_" name "_count", c "\nrpc_" name "_us", t
		}'
}

why_mariadb() {
	command -v mariadb >/dev/null || {
		echo "the mariadb client is not installed"
		return
	}
	"$LWM2" stats --db mysql://x@localhost/x 2>&1 | grep -q "built without MariaDB" && {
		echo "lwm2 built without MariaDB/MySQL"
		return
	}
	my -e "DROP DATABASE IF EXISTS lwm2; CREATE DATABASE lwm2;
		CREATE USER IF NOT EXISTS 'lwm2'@'localhost';
		ALTER USER 'lwm2'@'localhost' IDENTIFIED BY '$PW';
		GRANT ALL ON lwm2.* TO 'lwm2'@'localhost';" 2>&1 | tail -n 1
}

# one side: a fresh log and database, slurmctld restarted with them
run_side() {
	local database t0 first_end last_end log_done=0 db_done=0 n mark log_lines log_n rows row_n
	case $side in
	none) database=Database=none ;;
	sqlite) database= ;;
	mariadb) database="Database=mysql://lwm2:$PW@localhost/lwm2?socket=$SOCK" ;;
	esac
	jobcomp_conf ${database:+"$database"}
	rm -f "$JCLOG" "$JCDIR"/lwm2.db*
	ctld restart-ctld || skip "slurmctld did not start again"
	mark=$(wc -l <"$CTLD_LOG")
	sdiag -r >/dev/null
	arr=$(sbatch_as --array="1-$jobs" -N1 -n1 -J "lwm2-burst-$side" -o /dev/null --wrap true) ||
		skip "sbatch of the array failed"
	: >"$outdir/$side.samples"
	t0=$SECONDS
	# while tasks are queued or running, and until the log and the
	# database have every one (30 minutes at most)
	while ((SECONDS - t0 < 1800)); do
		sdiag_figures | grep -E '^(threads|agent_queue|dbd_queue) ' >>"$outdir/$side.samples"
		n=$(squeue -h -j "$arr" -o %i 2>/dev/null | wc -l)
		if [ "$n" -eq 0 ]; then
			[ "$log_done" = 0 ] && [ "$(log_tasks "$arr")" = "$jobs $jobs" ] && log_done=$(now_ms)
			[ "$side" = none ] && db_done=$log_done
			[ "$db_done" = 0 ] && [ "$(db_tasks)" = "$jobs $jobs" ] && db_done=$(now_ms)
			[ "$log_done" != 0 ] && [ "$db_done" != 0 ] && break
		fi
		sleep 0.5
	done
	# the tasks' ends from accounting (seconds), first and last
	read -r first_end last_end < <(SLURM_TIME_FORMAT=%s sacct -n -P -X -j "$arr" -o End 2>/dev/null |
		sort -n | sed -n '1p;$p' | tr '\n' ' ')
	last_end=${last_end:-$first_end}
	read -r log_lines log_n < <(log_tasks "$arr")
	read -r rows row_n < <(db_tasks)
	{
		echo "jobs $(sacct -n -P -X -j "$arr" -o JobID 2>/dev/null | wc -l)"
		echo "log_lines $log_lines"
		echo "log_tasks $log_n"
		echo "rows $rows"
		echo "row_tasks $row_n"
		echo "span_s $((last_end - first_end))"
		echo "log_s $(awk -v d="$log_done" -v e="$last_end" 'BEGIN { printf "%.1f", d ? d / 1000 - e : -1 }')"
		echo "db_s $(awk -v d="$db_done" -v e="$last_end" 'BEGIN { printf "%.1f", d ? d / 1000 - e : -1 }')"
		sdiag_figures | grep '^rpc_'
		for k in threads agent_queue dbd_queue; do
			echo "${k}_max $(awk -v k="$k" '$1 == k && $2 > m { m = $2 } END { print m + 0 }' "$outdir/$side.samples")"
		done
		echo "db_messages $(tail -n "+$((mark + 1))" "$CTLD_LOG" | grep -c 'lwm2: database:')"
		tail -n "+$((mark + 1))" "$CTLD_LOG" |
			awk '{ for (i = 1; i < NF - 2; i++) if ($i == "group:" && $(i - 1) == "database") { g++; j += $(i + 1) } }
				END { printf "db_groups %d\ndb_group_jobs %d\n", g, j }'
		echo "waited_out $(tail -n "+$((mark + 1))" "$CTLD_LOG" | grep -c 'lwm2: collect: job .* still completing after')"
	} >"$outdir/$side"
	# the jobs' AdminComment read-backs done before the next side
	t0=$SECONDS
	while compgen -G "$STATEDIR/*.job" >/dev/null && ((SECONDS - t0 < 300)); do
		sleep 1
	done
}

for side in $sides; do
	if [ "$side" = mariadb ]; then
		why=$(why_mariadb)
		if [ -n "$why" ]; then
			echo "$why" >"$outdir/mariadb.why"
			continue
		fi
	fi
	echo "burst: $jobs jobs, $side" >&2
	run_side
done
exit 0
