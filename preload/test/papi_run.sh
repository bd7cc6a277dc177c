#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The counter module against the real liblwm2.so and its rank records:
# the deferred start (no libpapi in a process that ends before the setup),
# no libpapi at all and a plain reason on a platform without hardware
# counters, the per-thread counting path driven by a software event in the
# cycles role, a one-second program counted under the default slice, fork
# and exit from an unattached thread without a hang, the back-off when the
# program uses PAPI itself, a bad LWM2_EVENTS.  Nothing waits for a time:
# the programs wait until lwm2 counts them, the script until the record or
# the process shows that the setup is done.
set -u

: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}" "${LWM2_SRCDIR:?}"
T=$LWM2_SRCDIR/preload/test
W=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-papi.XXXXXX")
trap 'rm -rf "$W"' EXIT
n=0
failed=0
tap() { # tap OK|FAIL description
	n=$((n + 1))
	if [ "$1" = OK ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
check() { if eval "$1"; then tap OK "$2"; else tap FAIL "$2"; fi; }

if ! ${CC:-cc} -std=gnu11 -I"$LWM2_SRCDIR/digest" -o "$W/dump" "$T/papi_dump.c" \
	"$LWM2_BUILDDIR/digest/.libs/liblwm2record.a" ||
	! ${CC:-cc} -std=gnu11 -O1 -o "$W/busy" "$T/papi_busy.c" -lpapi -lpthread ||
	! ${CC:-cc} -std=gnu11 -O1 -DLWM2_TEST_NO_PAPI -o "$W/plain" "$T/papi_busy.c" -lpthread; then
	echo "Bail out! cannot build the test programs"
	exit 1
fi

# A hang fails the test instead of stopping the suite; no result depends
# on how long anything takes.
HANG=${LWM2_TEST_HANG_S:-600}

# dump NAME: the record in $W/NAME/ (the first one found) into $W/NAME.rec
dump() {
	local f
	f=$(find "$W/$1" -type f | head -n 1)
	if [ -n "$f" ]; then "$W/dump" "$f" >"$W/$1.rec" 2>&1; else : >"$W/$1.rec"; fi
}

# run NAME ENV... -- ARGS: run busy (plain for the modes that look for
# libpapi) under liblwm2, record into $W/NAME/
run() {
	local name=$1 prog=busy
	shift
	rm -rf "${W:?}/$name" && mkdir -p "$W/$name"
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	case $1 in short | sleep | wait) prog=plain ;; esac
	timeout -k 10 "$HANG" env "${envs[@]}" LD_PRELOAD="$LWM2_LIB" LWM2_DIR="$W/$name" \
		"$W/$prog" "$@" >"$W/$name.out" 2>&1
	echo $? >"$W/$name.rc"
	dump "$name"
}
val() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$W/$1.rec"; }

# setup_done PID NAME: the module has counters open in PID, or its record
# (written at each 100 ms slice end) says why it has none
setup_done() {
	find "/proc/$1/fd" -lname '*perf_event*' 2>/dev/null | grep -q . && return 0
	dump "$2"
	[ -n "$(val "$2" missing_hwc)" ]
}

# run_past_setup NAME ENV...: run plain in wait mode with 100 ms slices,
# end it once the setup is done (or after $HANG s: then the test fails)
run_past_setup() {
	local name=$1 pid i
	shift
	rm -rf "${W:?}/$name" "$W/$name.in" && mkdir -p "$W/$name" && mkfifo "$W/$name.in"
	env "$@" LWM2_SLICE_MS=100 LD_PRELOAD="$LWM2_LIB" LWM2_DIR="$W/$name" "$W/plain" wait \
		<"$W/$name.in" >"$W/$name.out" 2>&1 &
	pid=$!
	exec 9>"$W/$name.in"
	for ((i = 0; i < HANG * 20; i++)); do
		setup_done $pid "$name" && break
		sleep 0.05
	done
	exec 9>&-
	wait $pid
	echo $? >"$W/$name.rc"
	dump "$name"
}

# -- zero cost at start: libpapi only from the setup on ------------------------
# Even with events that need PAPI, a process that ends before the setup
# (150 ms after the start) never loads it.  A run starved of the CPU for
# that long loads it rightly: one run of three must show it.
EV="cycles=perf::TASK-CLOCK,instructions=,fp_ops=,l1d_misses=,l1d_accesses=,llc_misses="
for _ in 1 2 3; do
	run short LWM2_SLICE=60 "LWM2_EVENTS=$EV" -- short
	[ "$(cat "$W/short.out")" = "libpapi loaded: 0" ] && break
done
check '[ "$(cat "$W"/short.out)" = "libpapi loaded: 0" ]' \
	"a process that ends before the setup never loads libpapi"
run_past_setup explicit "LWM2_EVENTS=$EV"
check '[ "$(cat "$W"/explicit.out)" = "libpapi loaded: 1" ] && [ -z "$(val explicit missing_hwc)" ]' \
	"events named in LWM2_EVENTS: the setup loads libpapi and counts ($(cat "$W"/explicit.out))"

# -- the default events: either counted, or missing with a plain reason ------
# Without hardware events in the kernel (or without permission for them)
# the default list cannot count anything: libpapi is not even loaded.
run_past_setup later
# shellcheck disable=SC2034 # read inside check's quoted condition
cyc=$(val later hwc_cycles)
reason=$(val later missing_hwc)
if [ -n "$reason" ]; then
	case $reason in
	"no hardware counters on this platform" | "hardware counters not permitted (perf_event_paranoid="*")")
		tap OK "no counters here: the record says so plainly ($reason)" ;;
	*) tap FAIL "no counters here: the record says so plainly ($reason)" ;;
	esac
	check '[ "${cyc:-x}" = 0 ]' "and counts no cycles"
	check '[ "$(cat "$W"/later.out)" = "libpapi loaded: 0" ]' \
		"and never loads libpapi ($(cat "$W"/later.out))"
else
	check '[ "${cyc:-0}" -gt 0 ] && [ "$(val later hwc_instructions)" -gt 0 ]' \
		"counters here: cycles and instructions counted"
	check '[ "$(cat "$W"/later.out)" = "libpapi loaded: 1" ]' "counters here: libpapi loaded"
	skip "no-counter reason (this platform has counters)"
fi
check '[ -z "$(val later missing_posix)" ] && [ "$(cat "$W"/later.rc)" = 0 ]' \
	"everything else works (exit status 0, POSIX group present)"

# -- the counting path, with a software event in the cycles role -------------
# perf::TASK-CLOCK counts a thread's CPU time in ns; the record's own
# rusage CPU time is the reference.  The program starts its work once it
# is counted; the two workers start after that and are counted whole: if
# only the heartbeat's or the main thread's view were taken, the sum would
# be far below.
run soft LWM2_SLICE_MS=100 "LWM2_EVENTS=$EV" -- busy
c=$(val soft hwc_cycles)
cpu=$(val soft cpu_ns)
check '[ -z "$(val soft missing_hwc)" ]' "software event accepted: no missing reason ($(val soft missing_hwc))"
check '[ "${c:-0}" -gt 0 ] && [ "${cpu:-0}" -gt 0 ]' "task-clock counted: ${c:-none} ns of ${cpu:-?} ns CPU"
if [ "${c:-0}" -gt 0 ] && [ "${cpu:-0}" -gt 0 ]; then
	pct=$((c * 100 / cpu))
	check '[ $pct -ge 70 ] && [ $pct -le 105 ]' \
		"all three threads summed: task-clock is $pct% of the process CPU time (70..105)"
else
	tap FAIL "all three threads summed"
fi
check '[ "$(val soft hwc_instructions)" = 0 ] && [ "$(val soft hwc_llc_misses)" = 0 ]' \
	"roles left out count nothing"
check '[ "$(val soft nslices)" -ge 2 ]' "the series has slices ($(val soft nslices))"

# -- a one-second program under the default 60 s slice --------------------------
run early LWM2_EVENTS=cycles=perf::TASK-CLOCK -- spin1
c=$(val early hwc_cycles)
cpu=$(val early cpu_ns)
check '[ "${c:-0}" -gt 0 ] && [ -z "$(val early missing_hwc)" ] && [ "$(cat "$W"/early.rc)" = 0 ]' \
	"a 1 s program is counted before any slice ends: ${c:-none} ns of ${cpu:-?} ns CPU"

# -- fork and exit never hang -----------------------------------------------------
# Children forked while threads start and end (each takes the module's
# lock) and while 1 ms slices read the counters must not inherit a held
# lock; each child counts its own thread and exits.
case ${LWM2_SANITIZER:-no} in
*address* | *thread*)
	# The sanitizer runtimes' own locks are not fork-safe in a process
	# whose other threads allocate: the child can hang inside them.
	skip "fork storm: not under -fsanitize=$LWM2_SANITIZER (its runtime is not fork-safe with threads)"
	;;
*)
	run fork LWM2_SLICE_MS=1 "LWM2_EVENTS=$EV" -- fork
	check '[ "$(cat "$W"/fork.rc)" = 0 ] && [ "$(cat "$W"/fork.out)" = "forks: 200 ok" ]' \
		"200 forks under 1 ms slices while threads come and go ($(cat "$W"/fork.out), rc $(cat "$W"/fork.rc))"
	;;
esac
# The exit path reads the counters from a thread lwm2 never attached:
# reading must not attach it (attaching takes the module's lock again).
run rawexit "LWM2_EVENTS=$EV" -- rawexit
check '[ "$(cat "$W"/rawexit.rc)" = 0 ] && [ "$(val rawexit hwc_cycles)" -gt 0 ]' \
	"exit() from an unattached thread ends the process with the counts (rc $(cat "$W"/rawexit.rc))"

# -- the application uses PAPI itself ------------------------------------------
run app LWM2_SLICE_MS=100 "LWM2_EVENTS=$EV" -- papi-late
check '[ "$(cat "$W"/app.out)" = "app measured: plausible" ] && [ "$(cat "$W"/app.rc)" = 0 ]' \
	"the program's own PAPI works under lwm2 ($(cat "$W"/app.out))"
check '[ "$(val app missing_hwc)" = "the application uses PAPI itself" ]' \
	"the record says the application used PAPI itself"
# shellcheck disable=SC2034 # read inside check's quoted condition
rt=$(val app runtimes)
check '[ $(( ${rt:-0} & 128 )) -ne 0 ]' "the PAPI runtime flag is set"
"$W/busy" papi >"$W/app-ref.out" 2>&1
check 'cmp -s "$W/app.out" "$W/app-ref.out"' "same output as without lwm2"

# -- the application starts PAPI at once ------------------------------------------
# Most likely before the setup, possibly during or after it on a loaded
# machine: every order must end the same way.
run appfirst LWM2_SLICE=60 "LWM2_EVENTS=$EV" -- papi
check '[ "$(val appfirst missing_hwc)" = "the application uses PAPI itself" ] && [ "$(cat "$W"/appfirst.out)" = "app measured: plausible" ]' \
	"PAPI used at once: lwm2 stays out of its way"

# -- switched off, mistyped -----------------------------------------------------
run off LWM2_SLICE_MS=100 LWM2_EVENTS=none -- sleep
check '[ "$(val off missing_hwc)" = "switched off (LWM2_EVENTS=none)" ] && [ "$(cat "$W"/off.out)" = "libpapi loaded: 0" ]' \
	"LWM2_EVENTS=none: no PAPI at all, and the record says why"
run bad LWM2_SLICE_MS=100 LWM2_EVENTS=cycels=PAPI_TOT_CYC -- sleep
case "$(val bad missing_hwc)" in
"bad LWM2_EVENTS: unknown role cycels") tap OK "a mistyped LWM2_EVENTS is reported, not ignored" ;;
*) tap FAIL "a mistyped LWM2_EVENTS is reported, not ignored ($(val bad missing_hwc))" ;;
esac

echo "1..$n"
[ $failed -eq 0 ]
