#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The counter module against the real liblwm2.so and its rank records:
# the deferred start (no libpapi in a process that ends before the setup),
# no libpapi at all and a plain reason on a platform without hardware
# counters, the per-thread counting path driven by a software event in the
# cycles role, a one-second program counted under the default slice, fork
# and exit from an unattached thread without a hang, the back-off when the
# program uses PAPI itself, a bad LWM2_EVENTS, and events PAPI cannot give
# on this host (its perf_event component off: software events counted all
# the same, others named in the reason).  Nothing waits for a time: the
# programs wait until lwm2 counts them (giving up after LWM2_TEST_WAIT_S,
# 20 s), the script until the record or the process shows that the setup
# is done.  What the host offers is probed first, the way lwm2 probes it;
# the cases that need what is missing are skipped with the reason.
#
# Run it with LIBPFM_DISABLED_PMUS set to the CPU's PMU (see "papi pmus"
# of papi_busy probe) to play a host whose PAPI has no perf_event
# component: every point must still pass or be skipped with the reason.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"

: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}" "${LWM2_SRCDIR:?}"
T=$LWM2_SRCDIR/preload/test
W=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-papi.XXXXXX")
trap 'rm -rf "$W"' EXIT
# skip_because DESCRIPTION REASON: the reason alone after "# SKIP", so that
# the suite's summary groups the points the host could not run by reason

if ! ${CC:-cc} -std=gnu11 -I"$LWM2_SRCDIR/digest/format" -o "$W/dump" "$T/papi_dump.c" \
	"$LWM2_BUILDDIR/digest/.libs/liblwm2record.a" ||
	! ${CC:-cc} -std=gnu11 -O1 -o "$W/busy" "$T/papi_busy.c" -lpapi -lpthread ||
	! ${CC:-cc} -std=gnu11 -O1 -DLWM2_TEST_NO_PAPI -o "$W/plain" "$T/papi_busy.c" -lpthread; then
	echo "Bail out! cannot build the test programs"
	exit 1
fi

# A hang fails the test instead of stopping the suite; no result depends
# on how long anything takes.  No case here needs more than a few seconds.
HANG=${LWM2_TEST_HANG_S:-60}

# -- what this host offers ---------------------------------------------------------
# The kernel's task clock for the calling thread (what lwm2 counts the
# software event with when PAPI cannot), and PAPI's own view of it (what
# the programs that use PAPI themselves need).  Without lwm2 preloaded.
"$W/busy" probe >"$W/probe.out" 2>&1
sed 's/^/# host: /' "$W/probe.out"
probe() { sed -n "s/^$1: //p" "$W/probe.out"; }
kernel_sw=$(probe "kernel task-clock")
papi_sw=$(probe "papi task-clock")
pmus=$(probe "papi pmus")
no_kernel_sw="the kernel does not count software events for this process (task-clock: $kernel_sw)"
no_papi_sw="PAPI cannot count perf::TASK-CLOCK on this host ($papi_sw)"
# counting CASE DESCRIPTION: true when the kernel counts software events
# here; otherwise the point is skipped with the reason.
counting() {
	[ "$kernel_sw" = ok ] && return 0
	skip_because "$1" "$no_kernel_sw"
	return 1
}

# dump NAME: the record in $W/NAME/ (the first one found) into $W/NAME.rec
dump() {
	local f
	f=$(find "$W/$1" -type f | head -n 1)
	if [ -n "$f" ]; then "$W/dump" "$f" >"$W/$1.rec" 2>&1; else : >"$W/$1.rec"; fi
}

# run NAME ENV... -- ARGS: run busy (plain for the modes that look for
# libpapi) under liblwm2, record into $W/NAME/.  The modes that wait until
# lwm2 counts them are ended as soon as their record (written at each
# slice end) says why lwm2 counts nothing: that wait cannot come true.
# Under the default 60 s slice the program's own bound ends it
# (LWM2_TEST_WAIT_S, 20 s).
run() {
	local name=$1 prog=busy pid waits=0 why
	shift
	rm -rf "${W:?}/$name" && mkdir -p "$W/$name"
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	case $1 in short | sleep | wait) prog=plain ;; busy | spin1 | rawexit | papi-late) waits=1 ;; esac
	timeout -k 10 "$HANG" env "${envs[@]}" LD_PRELOAD="$LWM2_LIB" LWM2_DIR="$W/$name" \
		"$W/$prog" "$@" >"$W/$name.out" 2>&1 &
	pid=$!
	while [ $waits = 1 ] && kill -0 $pid 2>/dev/null; do
		dump "$name"
		why=$(val "$name" missing_hwc)
		# These two come after counting began: the program waits no more.
		case $why in "the application uses PAPI itself" | "the hardware counters were taken"*) why= ;; esac
		if [ -n "$why" ]; then
			kill $pid 2>/dev/null
			echo "# ended: lwm2 counts nothing ($why)" >>"$W/$name.out"
			break
		fi
		sleep 0.1
	done
	wait $pid
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
# end it once the setup is done (or after $HANG s: then the test fails).
# The record says why when nothing is counted, so this never waits for a
# condition that cannot come.
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
check_eval '[ "$(cat "$W"/short.out)" = "libpapi loaded: 0" ]' \
	"a process that ends before the setup never loads libpapi"
run_past_setup explicit "LWM2_EVENTS=$EV"
if counting "events named in LWM2_EVENTS are counted"; then
	check_eval '[ "$(cat "$W"/explicit.out)" = "libpapi loaded: 1" ] && [ -z "$(val explicit missing_hwc)" ]' \
		"events named in LWM2_EVENTS: the setup loads libpapi and counts ($(cat "$W"/explicit.out), $(val explicit missing_hwc))"
fi

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
		ok "no counters here: the record says so plainly ($reason)"
		check_eval '[ "${cyc:-x}" = 0 ]' "and counts no cycles"
		check_eval '[ "$(cat "$W"/later.out)" = "libpapi loaded: 0" ]' \
			"and never loads libpapi ($(cat "$W"/later.out))"
		;;
	"PAPI perf_event component disabled ("*")")
		# The kernel has hardware events, but PAPI knows no PMU here:
		# only PAPI could say so, so it was loaded.
		case $papi_sw in
		"perf_event component disabled: "*) ok "no counters here: the record says so plainly ($reason)" ;;
		*) not_ok "no counters here: the record says so plainly ($reason, but PAPI says: $papi_sw)" ;;
		esac
		check_eval '[ "${cyc:-x}" = 0 ]' "and counts no cycles"
		check_eval '[ "$(cat "$W"/later.out)" = "libpapi loaded: 1" ]' \
			"and PAPI was asked ($(cat "$W"/later.out))"
		;;
	*)
		not_ok "no counters here: the record says so plainly ($reason)"
		check_eval '[ "${cyc:-x}" = 0 ]' "and counts no cycles"
		;;
	esac
else
	check_eval '[ "${cyc:-0}" -gt 0 ] && [ "$(val later hwc_instructions)" -gt 0 ]' \
		"counters here: cycles and instructions counted"
	check_eval '[ "$(cat "$W"/later.out)" = "libpapi loaded: 1" ]' "counters here: libpapi loaded"
	skip_because "no counters here: the record says so plainly" "this platform has hardware counters"
fi
check_eval '[ -z "$(val later missing_posix)" ] && [ "$(cat "$W"/later.rc)" = 0 ]' \
	"everything else works (exit status 0, POSIX group present)"

# -- the counting path, with a software event in the cycles role -------------
# perf::TASK-CLOCK counts a thread's CPU time in ns; the record's own
# rusage CPU time is the reference.  The program starts its work once it
# is counted; the two workers start after that and are counted whole: if
# only the heartbeat's or the main thread's view were taken, the sum would
# be far below.
# soft_counted NAME [LABEL]: the points of a busy run with the software
# event in the cycles role
soft_counted() {
	local name=$1 label=${2:-} c cpu pct
	c=$(val "$name" hwc_cycles)
	cpu=$(val "$name" cpu_ns)
	check_eval '[ -z "$(val "$name" missing_hwc)" ] && [ "$(cat "$W/$name.rc")" = 0 ]' \
		"${label}software event accepted: no missing reason ($(val "$name" missing_hwc), rc $(cat "$W/$name.rc"))"
	check_eval '[ "${c:-0}" -gt 0 ] && [ "${cpu:-0}" -gt 0 ]' "${label}task-clock counted: ${c:-none} ns of ${cpu:-?} ns CPU"
	if [ "${c:-0}" -gt 0 ] && [ "${cpu:-0}" -gt 0 ]; then
		pct=$((c * 100 / cpu))
		check_eval '[ $pct -ge 70 ] && [ $pct -le 105 ]' \
			"${label}all three threads summed: task-clock is $pct% of the process CPU time (70..105)"
	else
		not_ok "${label}all three threads summed"
	fi
}
if counting "the counting path (software event in the cycles role)"; then
	run soft LWM2_SLICE_MS=100 "LWM2_EVENTS=$EV" -- busy
	soft_counted soft
	check_eval '[ "$(val soft hwc_instructions)" = 0 ] && [ "$(val soft hwc_llc_misses)" = 0 ]' \
		"roles left out count nothing"
	check_eval '[ "$(val soft nslices)" -ge 2 ]' "the series has slices ($(val soft nslices))"
fi

# -- the record names the event that filled each role --------------------------
# A software event in the floating-point role: the record says so, and the
# process's own digest (LWM2_PRINT) labels the role's metrics by it, never
# as floating point.
if counting "the record names the event in the floating-point role"; then
	run fpslot LWM2_SLICE_MS=100 LWM2_PRINT=1 \
		"LWM2_EVENTS=cycles=,instructions=,fp_ops=perf::TASK-CLOCK,l1d_misses=,l1d_accesses=,llc_misses=" -- busy
	check_eval '[ "$(val fpslot hwc_events)" = "fp_ops=perf::TASK-CLOCK" ]' \
		"the record's events: $(val fpslot hwc_events)"
	check_eval 'grep -q "^  perf::TASK-CLOCK per second \[/s\]" "$W/fpslot.out"' \
		"the digest's rate is labelled by the event counted: $(grep -m1 "per second \[/s\]" "$W/fpslot.out")"
	check_eval '! grep -q "Floating-point" "$W/fpslot.out"' \
		"and no label says floating point"
	check_eval 'grep -q "^  Average cycles per instruction (CPI).*n/a (not measured: no event was counted for it" "$W/fpslot.out"' \
		"the roles left out: not measured, not 0"
fi

# -- a one-second program under the default 60 s slice --------------------------
if counting "a 1 s program is counted before any slice ends"; then
	run early LWM2_EVENTS=cycles=perf::TASK-CLOCK -- spin1
	c=$(val early hwc_cycles)
	cpu=$(val early cpu_ns)
	check_eval '[ "${c:-0}" -gt 0 ] && [ -z "$(val early missing_hwc)" ] && [ "$(cat "$W"/early.rc)" = 0 ]' \
		"a 1 s program is counted before any slice ends: ${c:-none} ns of ${cpu:-?} ns CPU"
fi

# -- fork and exit never hang -----------------------------------------------------
# Children forked while threads start and end (each takes the module's
# lock) and while 1 ms slices read the counters must not inherit a held
# lock; each child counts its own thread and exits.
case ${LWM2_SANITIZER:-no} in
*address* | *thread*)
	# The sanitizer runtimes' own locks are not fork-safe in a process
	# whose other threads allocate: the child can hang inside them.
	skip_because "200 forks under 1 ms slices" "not under -fsanitize=$LWM2_SANITIZER (its runtime is not fork-safe with threads)"
	;;
*)
	run fork LWM2_SLICE_MS=1 "LWM2_EVENTS=$EV" -- fork
	check_eval '[ "$(cat "$W"/fork.rc)" = 0 ] && [ "$(cat "$W"/fork.out)" = "forks: 200 ok" ]' \
		"200 forks under 1 ms slices while threads come and go ($(cat "$W"/fork.out), rc $(cat "$W"/fork.rc))"
	;;
esac
# The exit path reads the counters from a thread lwm2 never attached:
# reading must not attach it (attaching takes the module's lock again).
if counting "exit() from an unattached thread ends the process with the counts"; then
	run rawexit "LWM2_EVENTS=$EV" -- rawexit
	check_eval '[ "$(cat "$W"/rawexit.rc)" = 0 ] && [ "$(val rawexit hwc_cycles)" -gt 0 ]' \
		"exit() from an unattached thread ends the process with the counts (rc $(cat "$W"/rawexit.rc))"
fi

# -- the application uses PAPI itself ------------------------------------------
# lwm2 backs off whether or not the program's PAPI can count anything
# here; whether it counts is the host's business (PAPI without its
# perf_event component has no events at all), so that point is skipped.
if counting "the program that starts PAPI while lwm2 counts"; then
	run app LWM2_SLICE_MS=100 "LWM2_EVENTS=$EV" -- papi-late
	if [ "$papi_sw" = ok ]; then
		check_eval '[ "$(cat "$W"/app.out)" = "app measured: plausible" ] && [ "$(cat "$W"/app.rc)" = 0 ]' \
			"the program's own PAPI works under lwm2 ($(cat "$W"/app.out))"
	else
		skip_because "the program's own PAPI works under lwm2" "$no_papi_sw"
	fi
	check_eval '[ "$(val app missing_hwc)" = "the application uses PAPI itself" ]' \
		"the record says the application used PAPI itself ($(val app missing_hwc))"
	# shellcheck disable=SC2034 # read inside check's quoted condition
	rt=$(val app runtimes)
	check_eval '[ $(( ${rt:-0} & 128 )) -ne 0 ]' "the PAPI runtime flag is set"
	"$W/busy" papi >"$W/app-ref.out" 2>&1
	check_eval 'cmp -s "$W/app.out" "$W/app-ref.out"' "same output as without lwm2 ($(cat "$W"/app.out))"
fi

# -- the application starts PAPI at once ------------------------------------------
# Most likely before the setup, possibly during or after it on a loaded
# machine: every order must end the same way.
run appfirst LWM2_SLICE=60 "LWM2_EVENTS=$EV" -- papi
check_eval '[ "$(val appfirst missing_hwc)" = "the application uses PAPI itself" ]' \
	"PAPI used at once: lwm2 stays out of its way ($(val appfirst missing_hwc))"
if [ "$papi_sw" = ok ]; then
	check_eval '[ "$(cat "$W"/appfirst.out)" = "app measured: plausible" ]' \
		"PAPI used at once: the program measures ($(cat "$W"/appfirst.out))"
else
	skip_because "PAPI used at once: the program measures" "$no_papi_sw"
fi

# -- events PAPI cannot give on this host ---------------------------------------------
# Where PAPI's perf_event component is off (no PMU libpfm knows), PAPI has
# no events at all: the software event is counted straight from the
# kernel, an event that needs the PMU is named in the record with the
# reason, and the digest says the same.  On a host whose component is
# active, it is switched off for these runs the way libpfm allows
# (LIBPFM_DISABLED_PMUS), so both situations are tested on every host.
nopmu=()
case $papi_sw in
ok) [ -n "$pmus" ] && nopmu=("LIBPFM_DISABLED_PMUS=$pmus") ;;
esac
if [ "$papi_sw" = ok ] && [ -z "$pmus" ]; then
	skip_because "PAPI without its perf_event component" "PAPI lists no PMU to switch off here"
else
	env "${nopmu[@]}" "$W/busy" probe >"$W/probe-off.out" 2>&1
	case $(sed -n 's/^papi task-clock: //p' "$W/probe-off.out") in
	"perf_event component disabled: "*)
		# shellcheck disable=SC2034 # read inside check's quoted condition
		why="PAPI perf_event component disabled (no PMU)"
		# shellcheck disable=SC2034
		grep -q "PMU" "$W/probe-off.out" ||
			why="PAPI perf_event component disabled ($(sed -n 's/^papi task-clock: perf_event component disabled: \(Error \)\{0,1\}//p' "$W/probe-off.out" | cut -c1-50))"
		HW=perf::PERF_COUNT_HW_CPU_CYCLES
		run_past_setup nopmu "${nopmu[@]}" "LWM2_EVENTS=cycles=$HW"
		check_eval '[ "$(val nopmu missing_hwc)" = "event $HW not available: $why" ] && [ "$(cat "$W"/nopmu.rc)" = 0 ]' \
			"without PAPI's perf_event component, the record names the event and why ($(val nopmu missing_hwc))"
		"$LWM2_BUILDDIR/digest/lwm2" merge --digest "$W/nopmu" >"$W/nopmu.json" 2>&1
		check_eval 'grep -qF "not measured: event $HW not available: $why" "$W/nopmu.json"' \
			"and the digest says the same"
		if counting "without PAPI's perf_event component, the software event is counted"; then
			run softnopmu "${nopmu[@]}" LWM2_SLICE_MS=100 "LWM2_EVENTS=$EV" -- busy
			soft_counted softnopmu "without PAPI's perf_event component: "
		fi
		;;
	*) skip_because "PAPI without its perf_event component" "${nopmu[*]} does not switch it off ($(sed -n 's/^papi task-clock: //p' "$W/probe-off.out"))" ;;
	esac
fi

# -- switched off, mistyped -----------------------------------------------------
run off LWM2_SLICE_MS=100 LWM2_EVENTS=none -- sleep
check_eval '[ "$(val off missing_hwc)" = "switched off (LWM2_EVENTS=none)" ] && [ "$(cat "$W"/off.out)" = "libpapi loaded: 0" ]' \
	"LWM2_EVENTS=none: no PAPI at all, and the record says why"
run bad LWM2_SLICE_MS=100 LWM2_EVENTS=cycels=PAPI_TOT_CYC -- sleep
case "$(val bad missing_hwc)" in
"bad LWM2_EVENTS: unknown role cycels") ok "a mistyped LWM2_EVENTS is reported, not ignored" ;;
*) not_ok "a mistyped LWM2_EVENTS is reported, not ignored ($(val bad missing_hwc))" ;;
esac

done_testing
