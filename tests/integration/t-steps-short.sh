#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A step that runs many short commands: the task keeps a record of its
# own, the commands go to the step's summary, and the node record counts
# every one of them (processes, bytes read, exit status class) and names
# the executable that ran most; step end stays fast.  (Named to run after
# t-spank-robust.sh, whose step-end check reads every step end in the
# shared slurmd logs.)
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

spank_setup

N=10000
# The summary of short processes is on by default.
# shellcheck disable=SC2016 # expanded by the task's shell
run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID; head -c 100 /dev/zero >"in.$$";
	for ((i = 0; i < $0; i++)); do cat "in.$$"; done >/dev/null;
	ls "$LWM2_DIR" | wc -l | sed "s/^/files=/"; rm -f "in.$$"' $N
job=$(job_of "$JOB_OUT")
files=$(sed -n 's/.*files=\([0-9]*\).*/\1/p' <<<"$JOB_OUT" | head -n 1)
check "$N commands: at most 3 files in the step directory while it runs (${files:-?})" \
	test "${files:-99}" -le 3
f=$SPOOL/$job/0.n1.lwm2node
check "$N commands: node record written" test -f "$f"
if [ -f "$f" ]; then
	is "$(node_field "$f" "sum(p.get('n', 0) for p in r['procs'] if p['exe'] == 'cat')")" $N \
		"$N commands: every cat counted"
	is "$(node_field "$f" "r['totals']['c'][r['counters'].index('posix_read_bytes')] >= $N * 100")" \
		True "$N commands: their bytes read counted"
	# The series (the job's grid, the export) has every byte the totals have.
	is "$(node_field "$f" "sum(r['series']['c']['posix_read_bytes']) == r['totals']['c'][r['counters'].index('posix_read_bytes')]")" \
		True "$N commands: the node series has their bytes read too"
	is "$(node_field "$f" "r['totals']['processes'] >= $N + 1")" True \
		"$N commands: every process in the node totals"
	is "$(node_field "$f" "sum(p.get('exit_ok', 0) for p in r['procs'] if p['exe'] == 'cat')")" $N \
		"$N commands: every exit status counted"
	is "$(node_field "$f" "r['exes'][0]['exe']")" cat "$N commands: cat first among the executables"
	is "$(node_field "$f" "sum(1 for p in r['procs'] if p['exe'] == 'bash' and p['task'] == 0 and not p['flags'] & 8)")" 1 \
		"$N commands: the task keeps a record of its own"
	is "$(node_field "$f" "'missing_tasks' in r['flags']")" False "$N commands: no task missing"
else
	for t in "every cat counted" "their bytes read counted" \
		"the node series has their bytes read too" "every process in the node totals" \
		"every exit status counted" \
		"cat first among the executables" "the task keeps a record of its own" "no task missing"; do
		not_ok "$N commands: $t"
	done
fi
ms=$(slurmd_logs | sed -n "s/.*lwm2: step end: job $job step [0-9]* node record done in \([0-9.]*\) ms/\1/p" | sort -n | tail -n 1)
check "$N commands: step end took at most 1 s (${ms:-?} ms)" awk -v m="${ms:-9999}" 'BEGIN { exit !(m <= 1000) }'

done_testing
