#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The counter module against the real liblwm2.so and its rank records:
# the deferred start (no libpapi in a process that ends before its first
# slice), the plain reason on a platform without hardware counters, the
# per-thread counting path driven by a software event in the cycles role,
# the back-off when the program uses PAPI itself, a bad LWM2_EVENTS.
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

# run NAME ENV... -- ARGS: run busy (plain for the modes that look for
# libpapi) under liblwm2, record into $W/NAME/
run() {
	local name=$1 prog=busy
	shift
	rm -rf "$W/$name" && mkdir -p "$W/$name"
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	case $1 in short | sleep) prog=plain ;; esac
	env "${envs[@]}" LD_PRELOAD="$LWM2_LIB" LWM2_DIR="$W/$name" "$W/$prog" "$@" >"$W/$name.out" 2>&1
	echo $? >"$W/$name.rc"
	local f
	f=$(find "$W/$name" -type f | head -n 1)
	if [ -n "$f" ]; then "$W/dump" "$f" >"$W/$name.rec" 2>&1; else : >"$W/$name.rec"; fi
}
val() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$W/$1.rec"; }

# -- zero cost at start: libpapi only after the first slice boundary ---------
run short LWM2_SLICE=60 -- sleep
check '[ "$(cat $W/short.out)" = "libpapi loaded: 0" ]' \
	"a process that ends before its first slice boundary never loads libpapi"
run later LWM2_SLICE_MS=100 -- sleep
check '[ "$(cat $W/later.out)" = "libpapi loaded: 1" ]' \
	"after the first slice boundary the heartbeat has loaded libpapi"

# -- the default events: either counted, or missing with a plain reason ------
cyc=$(val later hwc_cycles)
reason=$(val later missing_hwc)
if [ -n "$reason" ]; then
	check '[ "$reason" = "no hardware counters on this platform" ]' \
		"no counters here: the record says so plainly ($reason)"
	check '[ "${cyc:-x}" = 0 ]' "and counts no cycles"
else
	check '[ "${cyc:-0}" -gt 0 ] && [ "$(val later hwc_instructions)" -gt 0 ]' \
		"counters here: cycles and instructions counted"
	skip "no-counter reason (this platform has counters)"
fi
check '[ -z "$(val later missing_posix)" ] && [ "$(cat $W/later.rc)" = 0 ]' \
	"everything else works (exit status 0, POSIX group present)"

# -- the counting path, with a software event in the cycles role -------------
# perf::TASK-CLOCK counts a thread's CPU time in ns; the record's own
# rusage CPU time is the reference.  The main thread is counted from the
# first slice boundary (its early part is missed), the two workers start
# after it and are counted whole: if only the heartbeat's or the main
# thread's view were taken, the sum would be far below.
EV="cycles=perf::TASK-CLOCK,instructions=,fp_ops=,l1d_misses=,l1d_accesses=,llc_misses="
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

# -- the application uses PAPI itself ------------------------------------------
run app LWM2_SLICE_MS=100 "LWM2_EVENTS=$EV" -- papi
check '[ "$(cat $W/app.out)" = "app measured: plausible" ] && [ "$(cat $W/app.rc)" = 0 ]' \
	"the program's own PAPI works under lwm2 ($(cat $W/app.out))"
check '[ "$(val app missing_hwc)" = "the application uses PAPI itself" ]' \
	"the record says the application used PAPI itself"
rt=$(val app runtimes)
check '[ $(( ${rt:-0} & 128 )) -ne 0 ]' "the PAPI runtime flag is set"
"$W/busy" papi >"$W/app-ref.out" 2>&1
check 'cmp -s "$W/app.out" "$W/app-ref.out"' "same output as without lwm2"

# -- the application starts PAPI before lwm2 would ------------------------------
run appfirst LWM2_SLICE=60 -- papi
check '[ "$(val appfirst missing_hwc)" = "the application uses PAPI itself" ] && [ "$(cat $W/appfirst.out)" = "app measured: plausible" ]' \
	"PAPI used before the first heartbeat: lwm2 stays out of its way"

# -- switched off, mistyped -----------------------------------------------------
run off LWM2_SLICE_MS=100 LWM2_EVENTS=none -- sleep
check '[ "$(val off missing_hwc)" = "switched off (LWM2_EVENTS=none)" ] && [ "$(cat $W/off.out)" = "libpapi loaded: 0" ]' \
	"LWM2_EVENTS=none: no PAPI at all, and the record says why"
run bad LWM2_SLICE_MS=100 LWM2_EVENTS=cycels=PAPI_TOT_CYC -- sleep
case "$(val bad missing_hwc)" in
"bad LWM2_EVENTS: unknown role cycels") tap OK "a mistyped LWM2_EVENTS is reported, not ignored" ;;
*) tap FAIL "a mistyped LWM2_EVENTS is reported, not ignored ($(val bad missing_hwc))" ;;
esac

echo "1..$n"
[ $failed -eq 0 ]
