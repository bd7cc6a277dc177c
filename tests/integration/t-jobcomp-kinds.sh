#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 and the kinds of jobs: a heterogeneous job (one digest per
# component, each in its own accounting row), a requeued job (one digest per
# run, the last run's in accounting), and sacct -c loading the plugin
# outside slurmctld (nothing starts, nothing breaks).
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

jobcomp_setup
plan 10

# --- heterogeneous job: two components, a step in each
cat >"$TESTDIR/$TEST_USER/het.sh" <<'EOF'
#!/bin/bash
#SBATCH -N1 -n1 -o het-%j.out
#SBATCH hetjob
#SBATCH -N1 -n2
srun --het-group=0 hostname
srun --het-group=1 hostname
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/het.sh"
het=$(submit_batch "$TESTDIR/$TEST_USER/het.sh") || het=0
wait_job "$het" 60 >/dev/null
for i in $(seq 1 180); do
	n=$(sacct -n -P -j "$het" -o JobID,AdminComment%60000 2>/dev/null | grep -c '^[0-9]*+[01]|.*LWM2:{')
	[ "$n" -ge 2 ] && break
	sleep 0.5
done
is "$n" 2 "het job $het: a digest in each component's row"
is "$(digest_as -j "$het+1" -p -n -o JobID,Status,Processes)" "$het+1|ok|2" \
	"lwm2 digest -j ID+1: the second component, its two tasks"
out=$(digest_as -j "$het+0" -p -n -o JobID,Status)
is "$out" "$het+0|ok" "lwm2 digest -j ID+0: the first component"
is "$(digest_as -j "$het" -p -n -o JobID | sort | tr '\n' ' ')" "$het+0 $het+1 " \
	"lwm2 digest -j ID: both components"

# --- requeued job: the first run is requeued while it sleeps, the second
# run ends at once
cat >"$TESTDIR/$TEST_USER/requeue.sh" <<'EOF'
#!/bin/bash
#SBATCH -N1 -n1 -o requeue-%j.out --requeue
srun hostname
if [ "${SLURM_RESTART_COUNT:-0}" -eq 0 ]; then sleep 120; fi
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/requeue.sh"
rq=$(submit_batch "$TESTDIR/$TEST_USER/requeue.sh") || rq=0
for i in $(seq 1 150); do
	compgen -G "$SPOOL/$rq/0.*" >/dev/null && break
	sleep 0.2
done
scontrol requeue "$rq"
# a requeued batch job waits for its credential to expire (begin time
# 120 s on); not here.  The begin time is set once the job is pending
# again: moved before that, it is overwritten.
for i in $(seq 1 100); do
	[ "$(squeue -h -j "$rq" -o %T 2>/dev/null)" = PENDING ] &&
		scontrol update jobid="$rq" StartTime=now >/dev/null 2>&1 && break
	sleep 0.2
done
is "$(wait_job "$rq" 60)" COMPLETED "requeued job $rq completed its second run"
for i in $(seq 1 120); do
	runs=$(python3 -c '
import json, sys
n = set()
for s in open(sys.argv[1]):
    l = json.loads(s)
    if l.get("job_id") == int(sys.argv[2]):
        n.add(l["start"])
print(len(n))' "$JCLOG" "$rq" 2>/dev/null)
	[ "${runs:-0}" -ge 2 ] && break
	sleep 0.5
done
is "$runs" 2 "log: one line per run, told apart by start time"
check "the second run's digest in accounting" wait_digest "$rq" 60
is "$(digest_as -j "$rq" -p -n -o JobID,Status,State)" "$rq|ok|COMPLETED" \
	"lwm2 digest -j: the last run"

# --- sacct -c loads the plugin in sacct: no worker, no crash
out=$(sacct -c -j "$het" 2>&1)
rc=$?
check "sacct -c with jobcomp/lwm2 does not crash (rc $rc)" test "$rc" -lt 128
check "and starts nothing there" test -z "$(grep 'lwm2: init' <<<"$out")"

done_testing
