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
P=4
# The host must run the N commands within the job's 60 s: measured with
# N/50 of them under lwm2, the same way, first.
probe=$(mktemp -d /tmp/lwm2-short-probe.XXXXXX)
head -c 100 /dev/zero >"$probe/in"
t0=$(date +%s%N)
# shellcheck disable=SC2016 # expanded by the probe's shell
LD_PRELOAD=$LIBDIR/liblwm2.so LWM2_DIR=$probe bash -c 'for ((k = 0; k < $1; k++)); do
	( for ((i = 0; i < $0 / $1; i++)); do cat "$2"; done >/dev/null ) & done; wait' $((N / 50)) $P "$probe/in"
est_s=$((($(date +%s%N) - t0) * 50 / 1000000000))
rm -rf "$probe"
[ "$est_s" -le 45 ] ||
	skip_all "this host would take about $est_s s for $N commands under lwm2 now (load $(cut -d' ' -f1 /proc/loadavg)), beyond the job's 60 s"
# The summary of short processes is on by default.  P loops of N/P
# commands side by side, so that the case stays within the job's 60 s on
# a small machine; each loop's subshell keeps a record of its own.
# shellcheck disable=SC2016 # expanded by the task's shell
run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID; head -c 100 /dev/zero >"in.$$";
	for ((k = 0; k < $1; k++)); do
		( for ((i = 0; i < $0 / $1; i++)); do cat "in.$$"; done >/dev/null ) &
	done; wait;
	ls "$LWM2_DIR" | wc -l | sed "s/^/files=/"; rm -f "in.$$"' $N $P
job=$(job_of "$JOB_OUT")
files=$(sed -n 's/.*files=\([0-9]*\).*/\1/p' <<<"$JOB_OUT" | head -n 1)
check "$N commands: at most $((P + 2)) files in the step directory while it runs (${files:-?})" \
	test "${files:-99}" -le $((P + 2))
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
