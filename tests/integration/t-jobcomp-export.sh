#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2's export to a real InfluxDB 1.x (Debian's influxdb) on
# loopback, with authentication: multi-node, multi-step jobs of the test
# user with 1 s slices; their points read back with InfluxDB's own client:
# one lwm2_slice point per step, node and slice of the digest's grid, sums
# over the slices equal to the digest's totals, the tags; InfluxDB stopped
# while jobs end and started again: nothing lost, nothing doubled;
# `lwm2 export` back-fills the same points again without doubling them,
# and --dry-run prints them; every panel query of the Grafana dashboards
# in contrib/grafana runs against the data.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"
# shellcheck source=tests/integration/influx-lib.sh
. "$(dirname "$0")/influx-lib.sh"

influx_have || skip_all "influxd, influx or curl not installed (contrib/install-deps.sh)"
command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
build=$(jobcomp_builddir) || skip_all "jobcomp_lwm2.so, spank_lwm2.so, liblwm2.so or lwm2 not built"
if "$build/digest/lwm2" export --file /dev/null --url http://127.0.0.1:9/write 2>&1 |
	grep -q "without libcurl"; then
	skip_all "lwm2 built without libcurl (configure found no libcurl4-openssl-dev)"
fi

cluster_up
IDIR=$TESTDIR/influx
at_exit influx_stop
influx_start "$IDIR" || bail_out "influxd did not start: $(tail -n 5 "$IDIR/influxd.log")"
CRED=$TESTDIR/influx.cred
printf 'user=%s\npassword=%s\n' "$INFLUX_USER" "$INFLUX_PASSWORD" >"$CRED"
chmod 600 "$CRED"
jobcomp_setup "ExportURL=$INFLUX_URL" "ExportDatabase=lwm2" "ExportCredentials=$CRED" \
	"ExportBatchSize=7" "ExportTimeout=5"
EXPORT_DIR=$STATEDIR/export
plan 30

check "slurmctld: the export thread runs" grep -q "lwm2: export: to $INFLUX_URL database lwm2" "$CTLD_LOG"

# q EXPR QUERY: a Python expression over the result r (the series list)
# of an InfluxQL query.
q() {
	influx_q "$2" | python3 -c '
import json, sys
d = json.load(sys.stdin)
# the client gives each series a result of its own
for res in d["results"]:
    if "error" in res:
        print("ERROR", res["error"])
        sys.exit(0)
r = [s for res in d["results"] for s in res.get("series", [])]
print(eval(sys.argv[1]))' "$1"
}

# The job's digest as the log has it: EXPR over g (grid), t (totals).
digest_expr() {
	log_line "$1" "(lambda g, t: $2)(l['digest']['grid'], l['digest']['scope']['totals'])"
}

# wait_points JOB: until the job's lwm2_job point is in InfluxDB and the
# export directory has no file of it (the last batch was taken).
wait_points() {
	local i
	for ((i = 0; i < 120; i++)); do
		if [ "$(q 'len(r)' "SELECT count(duration_s) FROM lwm2_job WHERE job = '$1'" 2>/dev/null)" = 1 ] &&
			! compgen -G "$EXPORT_DIR/$1.*.job" >/dev/null; then
			return 0
		fi
		sleep 0.5
	done
	return 1
}

# An MPI program of known calls: 10 messages to the partner and 10 from it
# per rank, 5 allreduces; it prints nothing (no bytes written to files).
bin=$TESTDIR/bin
cat >"$bin/pingpong.c" <<'C'
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, i, x = 1, y;
	char buf[1000] = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 0; i < 10; i++) {
		if (rank % 2 == 0) {
			MPI_Send(buf, 1000, MPI_BYTE, rank + 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, 1000, MPI_BYTE, rank + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 1000, MPI_BYTE, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 1000, MPI_BYTE, rank - 1, 0, MPI_COMM_WORLD);
		}
	}
	for (i = 0; i < 5; i++)
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
C
mpicc.openmpi -o "$bin/pingpong" "$bin/pingpong.c" || bail_out "mpicc could not build the MPI program"
chmod -R a+rX "$bin"

# A job of 2 nodes, 2 tasks each: two steps that write 1 MB a second for
# 4 s, and an MPI step
cat >"$TESTDIR/$TEST_USER/io.sh" <<EOF
#!/bin/bash
#SBATCH -N2 -n4 -o io-%j.out
for s in 0 1; do
	srun bash -c 'for i in 1 2 3 4; do head -c 1000000 /dev/zero >"io.\$SLURM_JOB_ID.\$SLURM_STEP_ID.\$SLURM_PROCID.\$i"; sleep 1; done; rm -f io.\$SLURM_JOB_ID.\$SLURM_STEP_ID.\$SLURM_PROCID.*'
done
srun --mpi=pmix $bin/pingpong
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/io.sh"

job=$(submit_batch "$TESTDIR/$TEST_USER/io.sh" --lwm2-slice=1 -J "io test") || job=0
is "$(wait_job "$job" 120)" COMPLETED "job $job (2 nodes, 2 steps, 1 s slices) COMPLETED" ||
	diag "its output:" "$(tail -n 20 "$TESTDIR/$TEST_USER/io-$job.out" 2>&1)"
check "its points reach InfluxDB" wait_points "$job"

want=$(digest_expr "$job" "sum(x['n'] for x in g)")
got=$(q "sum(v[1] for s in r for v in s['values'])" "SELECT count(slice_s) FROM lwm2_slice WHERE job = '$job'")
is "$got" "$want" "lwm2_slice points = the slices of every node and step in the digest ($want)"
is "$(q "sorted((s['tags']['step'], s['tags']['node'], s['values'][0][1]) for s in r)" \
	"SELECT count(slice_s) FROM lwm2_slice WHERE job = '$job' GROUP BY step, node")" \
	"$(digest_expr "$job" "sorted((str(x['step']), x['node'], x['n']) for x in g)")" \
	"per step and node: one point per slice of the digest's series"
is "$(digest_expr "$job" "sorted(set((x['step'], x['node']) for x in g if x['step'] < 3))")" \
	"[(0, 'n1'), (0, 'n2'), (1, 'n1'), (1, 'n2'), (2, 'n1'), (2, 'n2')]" \
	"the digest has series of both nodes in each of the 3 steps"
for c in posix_write_bytes posix_write_calls mpi_p2p_calls mpi_coll_calls; do
	is "$(q "r[0]['values'][0][1]" "SELECT sum($c) FROM lwm2_slice WHERE job = '$job'")" \
		"$(digest_expr "$job" "t['$c']")" "sum of $c over the slices = the digest's total"
done
is "$(digest_expr "$job" "(t['posix_write_bytes'], t['mpi_p2p_calls'])")" "(32000000, 80)" \
	"the digest's totals: 2 steps x 4 tasks x 4 MB, 4 ranks x 20 messages"
is "$(q "sorted(set((s['tags']['user'], s['tags']['account'], s['tags']['partition'], s['tags']['cluster'], s['tags']['app']) for s in r))" \
	"SELECT count(slice_s) FROM lwm2_slice WHERE job = '$job' GROUP BY \"user\", account, partition, cluster, app")" \
	"[('$TEST_USER', 'lwm2', 'debug', 'lwm2', 'io test')]" "tags: user, account, partition, cluster, application (the job name)"
is "$(q "r[0]['values'][0][1:]" "SELECT state, status, total_posix_write_bytes, nodes FROM lwm2_job WHERE job = '$job'")" \
	"['COMPLETED', 'ok', 32000000, 2]" "lwm2_job: state, status, totals, nodes"
is "$(q "r[0]['values'][0][0] // 10**9" "SELECT state FROM lwm2_job WHERE job = '$job'")" \
	"$(log_line "$job" "l['end']")" "lwm2_job: at the job's end"
is "$(q "(min(v[0] for v in r[0]['values']) // 10**9, max(v[0] for v in r[0]['values']) // 10**9)" \
	"SELECT slice_s FROM lwm2_slice WHERE job = '$job' AND step = '0' AND node = 'n1'")" \
	"$(digest_expr "$job" "[(x['first_slice'], x['first_slice'] + x['n'] - 1) for x in g if x['step'] == 0 and x['node'] == 'n1'][0]")" \
	"slice timestamps: the aligned starts of the slices"

# --- InfluxDB down while jobs end: they wait on disk, then go; nothing lost
influx_stop
j2=$(submit_batch "$TESTDIR/$TEST_USER/io.sh" --lwm2-slice=1 -J outage-a) || j2=0
j3=$(submit_batch "$TESTDIR/$TEST_USER/io.sh" --lwm2-slice=2 -J outage-b) || j3=0
wait_job "$j2" 120 >/dev/null
wait_job "$j3" 120 >/dev/null
for _ in $(seq 120); do
	[ "$(log_line "$j3" "l['status']")" = ok ] && [ "$(log_line "$j2" "l['status']")" = ok ] && break
	sleep 0.5
done
for _ in $(seq 60); do
	grep -q "lwm2: export: couldn't send to $INFLUX_URL" "$CTLD_LOG" && break
	sleep 0.5
done
check "with InfluxDB down: the failure is logged" grep -q "lwm2: export: couldn't send to $INFLUX_URL.*jobs wait" "$CTLD_LOG"
check "with InfluxDB down: both jobs wait in the export directory" \
	bash -c "compgen -G '$EXPORT_DIR/$j2.*.job' >/dev/null && compgen -G '$EXPORT_DIR/$j3.*.job' >/dev/null"
influx_start "$IDIR" || bail_out "influxd did not start again: $(tail -n 5 "$IDIR/influxd.log")"
check "InfluxDB back: job $j2's points arrive" wait_points "$j2"
check "InfluxDB back: job $j3's points arrive" wait_points "$j3"
check "the export directory is empty" bash -c "! compgen -G '$EXPORT_DIR/*.job' >/dev/null"
check "slurmctld logs that the engine takes points again" grep -q "lwm2: export: the engine takes points again" "$CTLD_LOG"
count_all() {
	local j
	for j in "$job" "$j2" "$j3"; do
		printf '%s=%s ' "$j" "$(q "sum(v[1] for s in r for v in s['values'])" "SELECT count(slice_s) FROM lwm2_slice WHERE job = '$j'")"
	done
}
want_all="$job=$want $j2=$(digest_expr "$j2" "sum(x['n'] for x in g)") $j3=$(digest_expr "$j3" "sum(x['n'] for x in g)") "
is "$(count_all)" "$want_all" "after the outage: every job's slice points, none lost, none doubled"
is "$(q "r[0]['values'][0][1]" "SELECT sum(posix_write_bytes) FROM lwm2_slice WHERE job = '$j3'")" \
	"$(digest_expr "$j3" "t['posix_write_bytes']")" "job $j3 (2 s slices): sums equal the digest's totals"

# --- lwm2 export: the whole log again, and a dry run
out=$("$LWM2" export --file "$JCLOG" --url "$INFLUX_URL" --database lwm2 --credentials "$CRED" --batch 50 2>&1)
rc=$?
is "$rc" 0 "lwm2 export --file LOG --url: exit 0"
diag "$out"
is "$(count_all)" "$want_all" "sent again: the same points, nothing doubled"
is "$(q "r[0]['values'][0][1]" "SELECT count(duration_s) FROM lwm2_job WHERE job = '$j2'")" 1 \
	"sent again: one lwm2_job point per job"
n=$("$LWM2" export --file "$JCLOG" -j "$job" --dry-run 2>/dev/null | grep -c "^lwm2_slice,.*job=$job,")
is "$n" "$want" "lwm2 export --dry-run -j: the job's slice lines"
out=$("$LWM2" export --file "$JCLOG" --url "$INFLUX_URL" --database lwm2 --retries 1 2>&1)
case $out in *"HTTP 401"*) ok "lwm2 export without credentials: InfluxDB's refusal is reported" ;;
*) not_ok "lwm2 export without credentials: InfluxDB's refusal is reported" && diag "$out" ;; esac

# --- the Grafana dashboards: valid JSON, every panel query runs
node=n1
queries=$(python3 "$LWM2_TOP/tests/integration/grafana-queries.py" "job=$job" "node=$node" \
	metric=posix_write_bytes "timeFilter=time > now() - 1h" -- "$LWM2_TOP"/contrib/grafana/*.json 2>&1)
rc=$?
is "$rc" 0 "dashboards: JSON with a raw InfluxQL query in every panel"
bad=0
total=0
while IFS=$'\t' read -r f t query; do
	[ -n "$query" ] || continue
	total=$((total + 1))
	res=$(q "'ERROR' if not r else len(r)" "$query" 2>&1)
	case $res in
	[0-9]*) ;;
	*)
		bad=$((bad + 1))
		diag "$(basename "$f"): $t: $res ($query)"
		;;
	esac
done <<<"$queries"
check "dashboards: all $total panel queries return series for job $job, node $node" test "$bad" -eq 0 -a "$total" -ge 12
