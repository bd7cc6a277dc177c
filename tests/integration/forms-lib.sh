# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What t-spank-forms.sh and t-spank-shapes.sh share: the cluster set up
# for them, the forms of --lwm2, the mode a step gets from its own form and
# its allocation's, a probe that prints what a step got, and the steps a
# job's digest holds.

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/jobcomp-lib.sh"

# forms_setup: jobcomp/lwm2 and the plugin with the site's default off (so
# that a step measured because its allocation said so shows), node records
# kept for the checks; U is the test user's directory.
forms_setup() {
	need_python3
	JOBCOMP_PLUGSTACK_ARGS="default=off"
	jobcomp_setup "KeepNodeRecords=yes"
	# shellcheck disable=SC2034 # used by the tests that source this file
	U=$TESTDIR/$TEST_USER
}

# The forms of --lwm2, in the order a forms script runs them (step ids).
# shellcheck disable=SC2034 # used by the tests that source this file
FORMS=(none bare on off print)

# A step's probe, run as bash -c "$FORMS_PROBE" TAG: what it got.
# shellcheck disable=SC2016,SC2034 # expanded by the step's shell; used by the tests
FORMS_PROBE='echo "tag=$0 job=$SLURM_JOB_ID step=$SLURM_STEP_ID mode=${LWM2_MODE:-off} slice=${LWM2_SLICE:-} events=${LWM2_EVENTS:-}"'

# probe_line OUTPUT TAG: the probe's line of TAG in OUTPUT, if it ran.
probe_line() {
	awk -v t="tag=$2" '$1 == t { print; exit }' <<<"$1"
}

# probe_fields OUTPUT TAG FIELD...: the values the probe of TAG printed for
# these fields (mode, slice, ...), space-separated; nothing where it did
# not run.
probe_fields() {
	local line f vals=()
	line=$(probe_line "$1" "$2")
	shift 2
	[ -n "$line" ] || return 0
	for f; do
		vals+=("$(sed -n "s/.* $f=\([^ ]*\).*/\1/p" <<<"$line")")
	done
	echo "${vals[*]}"
}

# form_flag FORM [NONE-WORD]: the option a form is written as; "none" is
# no option (NONE-WORD where the form is to be named, as in a test point).
form_flag() {
	case $1 in
	none) echo "${2:-}" ;;
	bare) echo "--lwm2" ;;
	*) echo "--lwm2=$1" ;;
	esac
}

# expect_mode OUTER INNER: off, on or print.  A step's own form counts,
# else the allocation's, else the site's default (off); --lwm2 alone is on.
expect_mode() {
	local f=$2
	[ "$f" = none ] && f=$1
	case $f in
	none | off) echo off ;;
	bare | on) echo on ;;
	print) echo print ;;
	esac
}

expect_word() {
	case $(expect_mode "$1" "$2") in
	off) echo "not measured" ;;
	on) echo "measured" ;;
	print) echo "measured, digest printed" ;;
	esac
}

# node_records JOB STEP: how many node records the step left in the spool.
node_records() {
	compgen -G "$SPOOL/$1/$2.*.lwm2node" | grep -c .
}

# check_step DESC OUTPUT TAG JOB STEP MODE ERRFILE: one test point: the
# probe of TAG ran in OUTPUT; LWM2_MODE in its environment and its node
# records are those of MODE; its srun printed the digest (ERRFILE) for
# print, and nothing of lwm2 otherwise.
check_step() {
	local desc=$1 out=$2 tag=$3 job=$4 step=$5 mode=$6 err=$7 line got_mode recs why=""
	line=$(probe_line "$out" "$tag")
	got_mode=$(probe_fields "$out" "$tag" mode)
	recs=$(node_records "$job" "$step")
	[ -n "$line" ] || why="$why; the step did not run"
	[ "$got_mode" = "$(sed 's/print/on/' <<<"$mode")" ] || why="$why; LWM2_MODE '$got_mode'"
	if [ "$mode" = off ]; then
		[ "$recs" -eq 0 ] || why="$why; $recs node records"
	else
		[ "$recs" -ge 1 ] || why="$why; no node record of step $job.$step"
	fi
	if [ "$mode" = print ]; then
		grep -q "Guidance:" "$err" 2>/dev/null || why="$why; no digest printed"
	elif grep -q "lwm2" "$err" 2>/dev/null; then
		why="$why; srun said: $(grep lwm2 "$err" | head -n 2)"
	fi
	if [ -z "$why" ]; then
		ok "$desc"
	else
		not_ok "$desc"
		diag "${why#; }" "job $job step $step, the probe's line: '$line'"
	fi
}

# digest_steps JOB [WANT]: the step ids the job's digest holds, sorted, one
# line, as its line in the JSON-lines log has them ("" for a job with no
# node records); waits for the line up to 60 s (the log itself appears
# with the first line), and while it holds other steps than WANT (late
# records) up to 30 s.
digest_steps() {
	local job=$1 want=${2-} got="" i
	for ((i = 0; i < 120; i++)); do
		got=$(log_line "$job" "' '.join(str(s) for s in sorted(x['step_id'] for x in (l.get('digest') or {}).get('steps', [])))" 2>/dev/null)
		if [ "$got" != NO-LINE ] && { [ "$got" = "$want" ] || [ "$i" -ge 60 ]; }; then
			break
		fi
		sleep 0.5
	done
	echo "$got"
}

# sacct_steps JOB: the job's steps as accounting has them (the batch step
# as its id, 4294967291), sorted like digest_steps; the extern step holds
# the allocation, no program of the user, and is never measured.
sacct_steps() {
	sacct -n -P -j "$1" -o JobIDRaw 2>/dev/null |
		sed -n "s/^$1\.//p" | sed 's/^batch$/4294967291/' | grep -vx extern |
		sort -n | tr '\n' ' ' | sed 's/ $//'
}
