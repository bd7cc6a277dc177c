#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 when slurmctld is killed (kill -9, as a crash would) while
# digests are pending: slurmdbd hung (SIGSTOP) with one job waiting on it
# and another finishing meanwhile, then slurmctld killed and restarted and
# slurmdbd resumed: both digests arrive.  And `srun true && kill -9
# slurmctld`, several times over: every job gets its digest.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

jobcomp_setup "VerifyWindow=0"
plan 10

D=$LWM2_CLUSTER_DIR
dbd_pid=$(cat "$D/run/slurmdbd.pid")
stopped=0
resume_dbd() {
	[ "$stopped" -eq 1 ] && kill -CONT "$dbd_pid" 2>/dev/null
	stopped=0
}
# never leave slurmdbd stopped for the tests that follow
trap 'resume_dbd; cluster_down' EXIT

ctld() {
	bash "$LWM2_CLUSTER_SH" "$1" "$D" >/dev/null 2>&1
}

# wait_line JOB: until the log has a line of the job (at most 60 s).
wait_line() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(log_line "$1" "l['status']")" = ok ] && return 0
		sleep 0.2
	done
	return 1
}

job_of() {
	sed -n 's/^job=//p' <<<"$JOB_OUT" | head -n 1
}

# --- slurmdbd hung: one job's worker waits on it, another job ends
kill -STOP "$dbd_pid" && stopped=1
run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
a=$(job_of)
# the worker logs the digest, then waits on accounting
check "slurmdbd hung: job $a gets its log line" wait_line "$a"
sleep 5
run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
b=$(job_of)
for i in $(seq 1 50); do
	grep -q "lwm2: log_record: job $b queued" "$CTLD_LOG" && break
	sleep 0.1
done
sleep 1
check "job $b is in the state dir within a second, the worker busy with $a" in_state "$b"
ctld kill-ctld || bail_out "kill -9 slurmctld failed"
# slurmctld waits on slurmdbd when it starts: let it go on after a while
(
	sleep 3
	kill -CONT "$dbd_pid"
) &
ctld start-ctld || bail_out "slurmctld did not start again"
wait
stopped=0
check "after the restart: job $a in the log" wait_line "$a"
check "and job $b" wait_line "$b"
check "job $a's digest reaches AdminComment" wait_digest "$a" 60
check "and job $b's" wait_digest "$b" 60

# --- srun true && kill -9 slurmctld, five times
jobs=()
for try in 1 2 3 4 5; do
	if run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID' && ctld kill-ctld; then
		jobs+=("$(job_of)")
	fi
	ctld start-ctld || bail_out "slurmctld did not start again (try $try)"
	# the nodes answer the new slurmctld before the next job
	for i in $(seq 1 100); do
		sinfo -h -N -o %t 2>/dev/null | grep -qvE '^(idle|mix|alloc)$' || break
		sleep 0.2
	done
done
is "${#jobs[@]}" 5 "five jobs run, slurmctld killed right after each"
lost=()
for j in "${jobs[@]}"; do
	wait_line "$j" || lost+=("$j")
done
is "${lost[*]}" "" "every one of them gets its log line"
lost=()
for j in "${jobs[@]}"; do
	wait_digest "$j" 30 || lost+=("$j")
done
is "${lost[*]}" "" "and its AdminComment"
for i in $(seq 1 100); do
	compgen -G "$STATEDIR/*.job" >/dev/null || break
	sleep 0.3
done
check "the state dir empties once all is done" bash -c "! compgen -G '$STATEDIR/*.job' >/dev/null"

done_testing
