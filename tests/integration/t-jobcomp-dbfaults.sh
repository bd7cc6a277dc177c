#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2's central database under faults while jobs end: (a) its
# SQLite file on a full file system (a tmpfs of its own, filled), (b) a
# MariaDB database of lwm2's own on the cluster's server, the server shut
# down and the log rotated meanwhile.  Each time: every job's digest in the log at once, slurmctld's log
# says what happened once (not per job), and once the fault is gone the
# database catches up by itself (no job ending after it), every job once.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v sqlite3 >/dev/null || skip_all "sqlite3 not installed (contrib/install-deps.sh installs it)"
# the file system of the database's own, made before slurmctld reads
# lwm2.conf (jobcomp_setup makes a new TESTDIR: DBFS stays where it is)
cluster_up
DBFS=$TESTDIR/dbfs
mkdir -p "$DBFS"
fs_ok=0
if mount -t tmpfs -o size=2m,mode=755 lwm2-db-test "$DBFS" 2>/dev/null; then
	fs_ok=1
	# lazily: slurmctld may hold the database open until its restart
	at_exit 'umount -l "$DBFS" 2>/dev/null'
fi
jobcomp_setup "Database=$DBFS/lwm2.db"
plan 17

n=${LWM2_DBFAULTS_JOBS:-20}

# burst NAME COUNT: an array of COUNT tasks ended; prints its job id once
# they are all out of the queue (within 5 minutes)
burst() {
	local arr t0=$SECONDS
	arr=$(sbatch_as --array="1-$2" -N1 -n1 -J "$1" -o /dev/null --wrap true) || return 1
	while [ -n "$(squeue -h -j "$arr" -o %i 2>/dev/null)" ] && ((SECONDS - t0 < 300)); do
		sleep 0.5
	done
	echo "$arr"
}

# wait_for_output WANT SECONDS CMD...: until CMD prints WANT (a deadline
# for the whole wait); 1 when it does not
wait_for_output() {
	local want=$1 limit=$2 t0=$SECONDS
	shift 2
	until [ "$("$@")" = "$want" ]; do
		((SECONDS - t0 < limit)) || return 1
		sleep 0.5
	done
}

# ctld_since MARK PATTERN: lines of slurmctld's log after line MARK that
# match PATTERN
ctld_since() {
	tail -n "+$(($1 + 1))" "$CTLD_LOG" | grep -c -- "$2"
}

# fault_logged MARK ARRAY WHAT PATTERN: the array's tasks in the log while
# the fault lasts, and slurmctld's log says so once (PATTERN)
fault_logged() {
	wait_for_output "$n $n" 120 log_tasks "$2"
	is "$(log_tasks "$2")" "$n $n" "$3: the log has each of the $n tasks, once"
	is "$(ctld_since "$1" "lwm2: database:.*$4")" 1 \
		"  slurmctld's log says so once: $(tail -n "+$(($1 + 1))" "$CTLD_LOG" | grep -m1 -o "lwm2: database:.*$4")"
}

# log_lines: the lines of the log, and of the log before it where (b)
# rotated it
log_lines() {
	cat "$JCLOG.1" "$JCLOG" 2>/dev/null | wc -l
}

# caught_up MARK ARRAY WHAT ROWS ALL: the fault gone, the database catches
# up with no job ending (ROWS ARRAY: the array's rows and distinct tasks;
# ALL: rows and distinct jobs), and says so once
caught_up() {
	local t0=$SECONDS
	wait_for_output "$n $n" 90 "$4" "$2"
	is "$("$4" "$2")" "$n $n" "$3: the database catches up by itself, each task once ($((SECONDS - t0)) s)"
	is "$("$5")" "$(log_lines) $(log_lines)" "  a row for every line of the log, no job twice"
	is "$(ctld_since "$1" 'lwm2: database:')" 2 "  slurmctld's log: the fault once, its end once"
	check "  which says so" bash -c "tail -n +$(($1 + 1)) '$CTLD_LOG' | grep -q 'lwm2: database: .* is written again'"
}

# --- (a) the SQLite file on a full file system
sq_rows() {
	sqlite3 -readonly "$DBFS/lwm2.db" "SELECT count(*), count(DISTINCT sacct_id) FROM job
		WHERE sacct_id LIKE '${1}\_%' ESCAPE '\\'" 2>/dev/null | tr '|' ' '
}
sq_all() {
	sqlite3 -readonly "$DBFS/lwm2.db" "SELECT count(*), count(DISTINCT cluster || ' ' || job_id || ' ' || start) FROM job" \
		2>/dev/null | tr '|' ' '
}
if [ "$fs_ok" -eq 1 ]; then
	# the database made by a first job, then the file system filled
	first=$(burst dbfs-first 2)
	wait_for_output "2 2" 120 sq_rows "$first" ||
		diag "the first array's rows: $(sq_rows "$first")"
	dd if=/dev/zero of="$DBFS/fill" bs=4k 2>/dev/null
	mark=$(wc -l <"$CTLD_LOG")
	arr=$(burst dbfs-full "$n")
	fault_logged "$mark" "$arr" "full file system" full
	rows=$(sq_rows "$arr")
	check "  the database has not ($rows)" test "${rows%% *}" -lt "$n"
	rm -f "$DBFS/fill"
	caught_up "$mark" "$arr" "space freed" sq_rows sq_all
else
	for i in 1 2 3 4 5 6 7; do skip "cannot mount a tmpfs for the database here"; done
fi

# --- (b) MariaDB, its server shut down while jobs end
my_rows() {
	my -e "SELECT count(*), count(DISTINCT sacct_id) FROM lwm2.job
		WHERE sacct_id LIKE '${1}\\_%'" 2>/dev/null | tr '\t' ' '
}
my_all() {
	my -e "SELECT count(*), count(DISTINCT cluster, job_id, start) FROM lwm2.job" 2>/dev/null | tr '\t' ' '
}
PW=lwm2-dbfaults-$$
mariadb_database lwm2 "$PW"
my_up() {
	# never leave the cluster without its server for the tests that follow
	pid_file=$LWM2_CLUSTER_DIR/run/mariadb.pid
	[ -s "$pid_file" ] && [ -d "/proc/$(cat "$pid_file")" ] ||
		bash "$LWM2_CLUSTER_SH" start-mariadb "$LWM2_CLUSTER_DIR" >/dev/null 2>&1
}
if [ -z "$mariadb_why" ]; then
	at_exit my_up
	jobcomp_conf "Database=$MARIADB_URL"
	bash "$LWM2_CLUSTER_SH" restart-ctld "$LWM2_CLUSTER_DIR" >/dev/null 2>&1 ||
		bail_out "slurmctld did not start again"
	first=$(burst my-first 2)
	wait_for_output "2 2" 120 my_rows "$first" ||
		diag "the first array's rows: $(my_rows "$first")"
	mark=$(wc -l <"$CTLD_LOG")
	bash "$LWM2_CLUSTER_SH" stop-mariadb "$LWM2_CLUSTER_DIR" >/dev/null 2>&1 ||
		bail_out "couldn't stop the cluster's MariaDB"
	arr=$(burst my-down "$n")
	fault_logged "$mark" "$arr" "MariaDB down" "gone away"
	# the log rotated meanwhile (logrotate's rename, no job ending after
	# it): the worker reads the rest of the one it has open
	mv "$JCLOG" "$JCLOG.1"
	bash "$LWM2_CLUSTER_SH" start-mariadb "$LWM2_CLUSTER_DIR" >/dev/null 2>&1 ||
		bail_out "couldn't start the cluster's MariaDB again"
	caught_up "$mark" "$arr" "server back" my_rows my_all
	is "$(ctld_log | grep -c -- "$PW")" 0 "  and never shows the password"
	# slurmdbd reconnects: the tests that follow need accounting
	check "slurmdbd answers again" wait_for_output "$LWM2_CLUSTER_NAME" 60 \
		bash -c "sacctmgr -n -P show cluster format=cluster 2>/dev/null | grep -x '$LWM2_CLUSTER_NAME'"
else
	for i in 1 2 3 4 5 6 7 8; do skip "$mariadb_why"; done
fi

# --- the log's own lines: nothing lost anywhere
is "$(ctld_log | grep -c "lwm2: log: couldn't append")" 0 "slurmctld's log: no log line failed"
is "$(cat "$JCLOG.1" "$JCLOG" 2>/dev/null | python3 -c 'import json,sys; print(sum(1 for s in sys.stdin if json.loads(s).get("status") is not None))')" \
	"$(log_lines)" "every line of the log a digest line"

done_testing
