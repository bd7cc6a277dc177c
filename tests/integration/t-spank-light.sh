#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# srun --lwm2=light on the private cluster (spank_lwm2(8), --lwm2=light):
# a task that writes and reads a file gives the same output and exit
# status as without lwm2; the task runs with LWM2_MODE=light; its node's
# digest has the duration and says that I/O, MPI and the threads' samples
# were not measured, with light mode's reason.  The same job with
# --lwm2=on measures the I/O, so each check can fail.  The site's
# default=light measures a job without --lwm2 so.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

spank_setup
LWM2=$(spank_builddir)/digest/lwm2
[ -x "$LWM2" ] || skip_all "lwm2 not built"
# shellcheck disable=SC2034 # read in check_eval
REASON="light mode (--lwm2=light): counters and times at start and end only"

plan 16

# The task: bash itself writes 500 lines to a file, reads them back and
# computes for one to two seconds, then ends with status 3; bash's
# builtins only, so every call is the task's own (the short processes of
# the step summary keep no reasons).  Its first line names the job and
# the mode.
# shellcheck disable=SC2016 # the task's own expansions
task='echo "job=$SLURM_JOB_ID mode=${LWM2_MODE:-none}"
f=light-io.$SLURM_JOB_ID
for i in {1..500}; do echo "line $i" >>"$f"; done
n=0; while read -r _; do n=$((n + 1)); done <"$f"
echo "lines=$n"
end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do :; done
exit 3'

# run [OPTION]: the task as a one-task step; its output in OUT (without
# the first line), its exit status in RC, its job in JOB, its mode in
# MODE_SEEN
run() {
	RC=0
	run_job_unchecked "$@" -N1 -n1 bash -c "$task" || RC=$?
	JOB=$(job_of "$JOB_OUT")
	MODE_SEEN=$(sed -n 's/^job=[0-9]* mode=//p' <<<"$JOB_OUT")
	OUT=$(grep -v -e '^job=' -e '^srun: ' <<<"$JOB_OUT")
}

# digest JOB: the text digest of step 0's node record
digest() {
	local f i
	for i in $(seq 1 50); do
		f=$(find "$SPOOL/$1" -name '0.*.lwm2node' 2>/dev/null | head -n 1)
		[ -n "$f" ] && break
		sleep 0.2
	done
	[ -n "$f" ] || { diag "job $1: no node record in $SPOOL/$1"; return 1; }
	"$LWM2" dump "$f" | "$LWM2" render -
}

# line TEXT METRIC: the digest line of METRIC
line() { grep -F "  $2" <<<"$1" | head -n 1; }

run --lwm2=off
want_out=$OUT want_rc=$RC
is "$want_rc $want_out" "3 lines=500" "--lwm2=off: the task's output and exit status"

run --lwm2=light
light_job=$JOB
is "$MODE_SEEN" light "--lwm2=light: the task runs with LWM2_MODE=light"
is "$RC $OUT" "$want_rc $want_out" "--lwm2=light: the same output and exit status"
light=$(digest "$light_job")
check "--lwm2=light: the node record renders as a digest" test -n "$light"
for metric in "Time in POSIX file I/O calls" "Time in MPI calls" "Average number of threads"; do
	check_eval '[[ "$(line "$light" "$metric")" == *"not measured: $REASON"* ]]' \
		"--lwm2=light: '$metric' not measured, light mode said"
done
check_eval '[[ "$(line "$light" "Duration (wall clock)")" =~ \ [12]\.[0-9]+\ s ]]' \
	"--lwm2=light: the duration is there (1 to 2 s): $(line "$light" "Duration (wall clock)")"
check "--lwm2=light: one process, the task" grep -q "Number of processes *1 " <<<"$light"

run --lwm2=on
is "$MODE_SEEN $RC $OUT" "on $want_rc $want_out" "--lwm2=on: LWM2_MODE=on, the same output and exit status"
on=$(digest "$JOB")
check_eval '! grep -q "light mode" <<<"$on" && [ -n "$on" ]' "--lwm2=on: nothing said of light mode"
check_eval '[[ "$(line "$on" "Data written to files")" =~ \ [1-9][0-9.]*\ ?[kM]?B ]]' \
	"--lwm2=on: the task's writes measured: $(line "$on" "Data written to files")"
check_eval '[[ "$(line "$on" "Time in POSIX file I/O calls")" =~ \ %\ .*\ %\ .*\ %$ ]]' \
	"--lwm2=on: the I/O time measured"

# --- short processes: a task's commands that end within the step
# summary's bound keep no reasons of their own; they take light mode's
# groups from the step's records, so the digest says not measured rather
# than 0 % for them
# shellcheck disable=SC2016 # the task's own expansions
run_job_unchecked --lwm2=light -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID
for i in 1 2 3 4; do head -c 4096 /dev/zero >short.$SLURM_JOB_ID.$i; cat short.$SLURM_JOB_ID.$i >/dev/null; done
sleep 1'
short=$(digest "$(job_of "$JOB_OUT")")
check_eval '[[ "$(line "$short" "Time in POSIX file I/O calls")" == *"not measured: $REASON"* ]]' \
	"--lwm2=light, short commands: I/O not measured, light mode said: $(line "$short" "Time in POSIX file I/O calls")"
check "--lwm2=light, short commands: they are among the processes" \
	grep -qE "Number of processes *(9|[1-9][0-9]) " <<<"$short"
[ -n "$short" ] && diag "$(grep -E "processes|POSIX file I/O" <<<"$short" | head -n 3)"

# --- the site's default: default=light measures every job so
spank_plugstack "$PLUGSTACK_ARGS default=light"
run
is "$MODE_SEEN $RC $OUT" "light $want_rc $want_out" \
	"plugstack default=light: a job without --lwm2 runs with LWM2_MODE=light"

done_testing
