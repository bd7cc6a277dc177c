#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Named regions (include/lwm2.h, lwm2_view(3)): without liblwm2.so every
# call says "not measured"; under it test/regions.c's regions (nested, a
# recursion, two threads, more names than a record keeps, a fork) are in
# its rank record with the calls the program made and the time it measured
# itself, and lwm2_region_self says the same; the process's threads in
# its record (threads as a scope); the Fortran module's calls.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}" "${LWM2_SRCDIR:?}"
T=$LWM2_SRCDIR/preload/test
inc=$LWM2_SRCDIR/preload/include
recdump=$LWM2_BUILDDIR/preload/test/recdump
W=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-regions.XXXXXX")
trap 'rm -rf "$W"' EXIT


${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -I"$inc" -o "$W/regions" "$T/regions.c" \
	-lpthread -lm || bail_out "regions.c does not build against lwm2.h"
tap_relay "no lwm2" < <("$W/regions" expect-off)
tap_relay "lwm2 off" < <(LD_PRELOAD=$LWM2_LIB LWM2_DIR=$W/off LWM2_MODE=off "$W/regions" expect-off)

mkdir -p "$W/rec"
LD_PRELOAD=$LWM2_LIB LWM2_DIR=$W/rec "$W/regions" run >"$W/out.txt"
tap_relay "liblwm2.so" <"$W/out.txt"
pid=$(find "$W/rec" -name '*.lwm2' | while read -r f; do
	"$recdump" "$f" | awk '$1 == "fork_child" && $2 == 0 { found = 1 } $1 == "pid" { p = $2 } END { if (found) print p }'
done)
f=$(find "$W/rec" -name "$pid.*.lwm2" | head -1)
if [ -z "$f" ] || ! "$recdump" "$f" >"$W/rec.txt"; then
	bail_out "no record of the program (pid '$pid') in $W/rec"
fi

# The record's time is the clock from the begin to the end; the program's
# from before the begin to after the end: a few hundred ns more a call.
# Within 1 % and 1 ms, whatever the load (both are wall time).
for name in outer inner rec work; do
	read -r _ _ own_s own_calls < <(grep "^own $name " "$W/out.txt")
	read -r _ _ self_s self_calls < <(grep "^self $name " "$W/out.txt")
	read -r _ _ rec_calls rec_ns < <(grep "^region $name " "$W/rec.txt")
	is "${rec_calls:-none}" "$own_calls" "$name: the record's calls are the program's ($own_calls)"
	check "$name: the record's time ${rec_ns:-none} ns is the program's $own_s s within 1 % and 1 ms" \
		awk -v r="${rec_ns:-0}" -v o="$own_s" 'BEGIN { r /= 1e9; d = o - r; exit !(r > 0 && d >= -0.001 && d <= 0.01 * o + 0.001) }'
	is "$self_calls" "$own_calls" "$name: lwm2_region_self's calls"
	check "$name: lwm2_region_self's time $self_s s is the record's" \
		awk -v r="${rec_ns:-0}" -v s="$self_s" 'BEGIN { d = s - r / 1e9; exit !(d > -0.0001 && d < 0.0001) }'
done
# the recursion: the outermost call's time once (checked above against
# the program's), not the nested calls' each (at least 2.5 times that)
nested=$(awk '$1 == "nested" && $2 == "rec" { print $3 }' "$W/out.txt")
check "rec: a region entered again while open counts its time once, not each nested call's ($nested s)" \
	awk -v n="${nested:-0}" '$1 == "region" && $2 == "rec" { ok = $4 / 1e9 < 0.6 * n } END { exit !ok }' "$W/rec.txt"
# 304 names: 256 kept apart by the process, 48 beyond; the record keeps
# the 32 busiest, the 4 timed ones among them
is "$(awk '$1 == "regions_n" { print $2 }' "$W/rec.txt")" 32 "the record keeps 32 regions"
is "$(awk '$1 == "regions_folded" { print $2 }' "$W/rec.txt")" 225 \
	"224 named ones folded, and the 48 names beyond the process's table as one more"
is "$(awk '$1 == "regions_other_calls" { print $2 }' "$W/rec.txt")" 272 \
	"the folded calls: 272 names of one call each"

# Threads as a scope: main, 2 workers and 20 short threads; the record
# keeps 16, the main thread first, the two workers (the busiest) among
# them with the CPU time they measured themselves at their end.
is "$(awk '$1 == "threads_n" { print $2 }' "$W/rec.txt")" 16 "threads: the record keeps 16"
is "$(awk '$1 == "threads_folded" { print $2 }' "$W/rec.txt")" 7 "threads: the other 7 folded"
check "threads: the main thread first, flagged main" \
	awk -v pid="$pid" '$1 == "thread" { ok = $2 == pid && $3 == 1; exit } END { exit !ok }' "$W/rec.txt"
while read -r _ tid own; do
	check "thread $tid: ended, its CPU time in the record is its own ${own} s within 2 % and 2 ms" \
		awk -v t="$tid" -v o="$own" '$1 == "thread" && $2 == t { c = $4 / 1e9; ok = $3 == 2 && c - o < 0.02 * o + 0.002 && o - c < 0.02 * o + 0.002 } END { exit !ok }' "$W/rec.txt"
done < <(grep '^thread ' "$W/out.txt")
is "$(grep -c '^thread ' "$W/out.txt")" 2 "threads: both workers said their CPU time"

# The header from C++.
if command -v "${CXX:-g++}" >/dev/null &&
	"${CXX:-g++}" -std=c++11 -Wall -Wextra -Werror -I"$inc" -o "$W/regions_cxx" "$T/regions_cxx.cc" 2>"$W/cxx.log"; then
	is "$("$W/regions_cxx")" "rc 1 calls 0" "C++ without lwm2: not measured"
	is "$(LD_PRELOAD=$LWM2_LIB LWM2_DIR=$W/rec "$W/regions_cxx")" "rc 0 calls 1" "C++ under liblwm2.so: one call"
else
	skip "C++: no ${CXX:-g++} or lwm2.h does not build: $(head -c 200 "$W/cxx.log" 2>/dev/null)"
fi

# The Fortran module.
if command -v gfortran >/dev/null && (cd "$W" && gfortran -c "$inc/lwm2_view.f90" -o lwm2_view.o &&
	gfortran -o regions_f "$T/regions_fprog.f90" lwm2_view.o) >"$W/fc.log" 2>&1; then
	out=$("$W/regions_f")
	check "Fortran without lwm2: not measured ($out)" grep -q "^measured 0 " <<<"$out"
	rm -rf "$W/rec" && mkdir -p "$W/rec"
	out=$(LD_PRELOAD=$LWM2_LIB LWM2_DIR=$W/rec "$W/regions_f")
	# shellcheck disable=SC2016 # awk's fields
	check "Fortran under liblwm2.so: 5 calls, the time the program measured within 1 % and 1 ms ($out)" \
		awk '/^measured 1 / { d = $5 - $3; ok = $4 == 5 && $3 >= 0.09 && d >= -0.001 && d <= 0.01 * $5 + 0.001 } END { exit !ok }' <<<"$out"
else
	skip "Fortran: no gfortran or the module does not build"
	sed 's/^/# /' "$W/fc.log" 2>/dev/null | head -5
fi
done_testing
