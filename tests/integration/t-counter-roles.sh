#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Counter roles on the private cluster: a job that puts another event in
# the floating-point role (--lwm2-events) gets a digest that names the
# event counted there, never "floating point", and says the roles it left
# out were not measured; the node record keeps the events ("counter_events"
# of lwm2-counters(7)).  The kernel's task clock stands in for a hardware
# event: it is counted without a PMU, so the path is the same on every
# host.  A job with the default events says plainly what it could count.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

plan 13
spank_setup

events="cycles=,instructions=,fp_ops=perf::TASK-CLOCK,l1d_misses=,l1d_accesses=,llc_misses="
events+=",tlb_misses=perf::PAGE-FAULTS"
# about a second of CPU in each task: the counters start 150 ms in
# shellcheck disable=SC2016 # the task's own expansions
work='echo job=$SLURM_JOB_ID; i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done'

err=$TESTDIR/$TEST_USER/roles.err
out=$(as_user srun --lwm2=print "--lwm2-events=$events" -N2 -n2 bash -c "$work" 2>"$err")
job=$(job_of "$out")
check "srun --lwm2-events with the task clock in fp_ops: job $job ran, its digest printed" \
	grep -q "Guidance:\|Duration" "$err"
f=$SPOOL/$job/0.n1.lwm2node
is "$(node_field "$f" "r.get('counter_events')" 2>&1)" \
	"{'fp_ops': 'perf::TASK-CLOCK', 'tlb_misses': 'perf::PAGE-FAULTS'}" \
	"the node record keeps the event each role was counted with"
check "the digest names the events: $(grep -m1 '^Counted with' "$err")" \
	grep -qx "Counted with: fp_ops perf::TASK-CLOCK, tlb_misses perf::PAGE-FAULTS" "$err"
check "the rate is labelled by the event counted: $(grep -m1 'per second \[/s\]' "$err")" \
	grep -q "^  perf::TASK-CLOCK per second \[/s\] *[0-9]" "$err"
check "the job's rate, the sum over its two processes: $(grep -m1 '^    of the job' "$err")" \
	grep -qE "^    of the job: [0-9.]+ [kMG]?/s, the sum over 2 processes$" "$err"
check "no label says floating point" bash -c "! grep -qi 'floating-point' '$err'"
check "the roles left out are not measured, not 0" \
	grep -q "^  Average cycles per instruction (CPI).*n/a (not measured: no event was counted for it" "$err"
check "a role without defaults, named: shown, by its event: $(grep -m1 'PAGE-FAULTS per second' "$err")" \
	grep -q "^  perf::PAGE-FAULTS per second \[/s\] *[0-9]" "$err"
[ -s "$err" ] && diag "$(grep -E 'Counted|per second|CPI' "$err" | head -n 6)"

# --- the default events on this host
err=$TESTDIR/$TEST_USER/default.err
out=$(as_user srun --lwm2=print -N1 -n1 bash -c "$work" 2>"$err")
job=$(job_of "$out")
f=$SPOOL/$job/0.n1.lwm2node
ev=$(node_field "$f" "r.get('counter_events')" 2>&1)
reason=$(node_field "$f" "r['missing'].get('hwc', '')" 2>&1)
if [ -n "$reason" ]; then
	# no counters here: no events, and the reason said once per metric
	is "$ev" None "default events, no counters on this host ($reason): no events recorded"
	check "and the digest prints no 'Counted with' line" bash -c "! grep -q '^Counted with' '$err'"
	check "and says why the rate is missing: $(grep -m1 'Floating-point rate' "$err")" \
		grep -q "^  Floating-point rate \[/s\].*n/a (not measured: " "$err"
	check "the roles nobody named are not shown" bash -c "! grep -q 'TLB miss\|Level-2' '$err'"
	json=$(find "$SPOOL/print/$job" -name '*.json' 2>/dev/null | head -n 1)
	check "nor listed as missing in the digest (${json:-no digest})" \
		bash -c "[ -s '$json' ] && ! grep -q tlb_miss_freq '$json'"
else
	check "default events counted on this host: the record names them ($ev)" \
		bash -c "[[ '$ev' == *cycles* ]]"
	check "and the digest prints them" grep -q "^Counted with: .*cycles" "$err"
	check "and labels the rate by the floating-point event: $(grep -m1 'per second' "$err")" \
		grep -qE "^  Floating-point (instructions|operations) per second" "$err"
	check "the roles nobody named are not shown" bash -c "! grep -q 'TLB miss\|Level-2' '$err'"
	json=$(find "$SPOOL/print/$job" -name '*.json' 2>/dev/null | head -n 1)
	check "nor listed as missing in the digest (${json:-no digest})" \
		bash -c "[ -s '$json' ] && ! grep -q tlb_miss_freq '$json'"
fi
