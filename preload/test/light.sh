#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Light mode (LWM2_MODE=light, srun --lwm2=light): the program runs as
# without lwm2, its record keeps times, CPU time, threads and identity,
# and the I/O, MPI, CUDA and sampling groups are empty with light mode's
# reason.  The same programs measured fully count what light mode leaves
# out, so that each check can fail.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}" "${LWM2_SRCDIR:?}"
APP=$LWM2_BUILDDIR/preload/test/app
IO=$LWM2_BUILDDIR/preload/posix_app
DUMP=$LWM2_BUILDDIR/preload/test/recdump
REASON="light mode (--lwm2=light): counters and times at start and end only"
tmp=$(mktemp -d /tmp/lwm2-light-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset LWM2_MODE LWM2_PRINT LWM2_DIR LWM2_SLICE LWM2_SLICE_MS LWM2_DEBUG LWM2_SIGNAL LWM2_PARENT
# Every image keeps a record, however short.
export LWM2_SHORT_MS=0
case ${LWM2_SANITIZER:-no} in
*address*|*thread*) skip_all "preloading into uninstrumented programs under -fsanitize" ;;
esac

newcase() { D=$(mktemp -d "$tmp/case.XXXXXX"); }
# run MODE PROGRAM ARGS...: under the library in MODE, records in $D
run() { LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D LWM2_MODE=$1 "${@:2}"; }
nrec() { set -- "$D"/*.lwm2; [ -e "$1" ] && echo $# || echo 0; }
one() { set -- "$D"/*.lwm2; echo "$1"; }
# val FILE KEY
val() { "$DUMP" "$1" | awk -v k="$2" '$1 == k { sub(/^[^ ]* /, ""); print; exit }'; }
# the groups light mode leaves out, with their reasons
reasons() { for g in posix mpi sampling cuda; do echo "$g: $(val "$1" "missing_$g")"; done; }
want_reasons=$(for g in posix mpi sampling cuda; do echo "$g: $REASON"; done)
declare -A rc_io size_io reads writes why mpi

plan 18

# --- file I/O: counted when on, passed through untouched when light
for mode in on light; do
	newcase
	mkdir "$D/io"
	run $mode "$IO" read "$D/io"
	rc_io[$mode]=$?
	size_io[$mode]=$(wc -c <"$D/io/r")
	f=$(one)
	reads[$mode]=$(val "$f" posix_read_calls)
	writes[$mode]=$(val "$f" posix_write_calls)
	why[$mode]=$(reasons "$f")
done
is "${rc_io[on]} ${size_io[on]} ${rc_io[light]} ${size_io[light]}" "0 70 0 70" \
	"on and light: the I/O program succeeds, its file written whole"
is "${reads[on]} ${writes[on]}" "11 1" "on: its 11 reads and 1 write counted"
is "$(grep -c "light mode" <<<"${why[on]}")" 0 "on: no group left out for light mode"
is "${reads[light]} ${writes[light]}" "0 0" "light: no read or write counted"
is "${why[light]}" "$want_reasons" "light: I/O, MPI, sampling and CUDA not measured, light mode said"

# --- two busy threads: times, CPU time and threads kept, no sample taken
newcase
out=$(run light "$APP" busy 2 300); rc=$?
f=$(one)
is "$rc $out $(nrec)" "0  1" "light: a busy program runs, one record"
check "light: the run's wall time (>= 300 ms)" test "$(val "$f" wall_ms)" -ge 300
check "light: the CPU time of both threads (>= 500 ms)" test "$(val "$f" cpu_us)" -ge 500000
is "$(val "$f" threads_total)" 2 "light: threads followed"
is "$(val "$f" samples_total) $(val "$f" sample_period_us)" "0 0" \
	"light: no sample, no sampling period"
is "$(val "$f" exit_status) $(val "$f" incomplete)" "0 0" "light: the exit status recorded, complete"
check "light: hardware counters not left out for light mode" \
	test "$(val "$f" missing_hwc)" != "$REASON"

# --- the program's own use of the sampling signal: nothing taken from it
newcase
out=$(run light "$APP" ownsig); rc=$?
f=$(one)
is "$rc $out" "0 own 1" "light: a handler for the sampling signal gets it"
is "$(val "$f" missing_sampling)" "$REASON" "light: sampling's reason stays light mode's"

# --- output and exit status identical with and without the library
"$APP" output >"$tmp/o1" 2>"$tmp/e1"; rc1=$?
newcase
run light "$APP" output >"$tmp/o2" 2>"$tmp/e2"; rc2=$?
is "$(cmp -s "$tmp/o1" "$tmp/o2" && cmp -s "$tmp/e1" "$tmp/e2" && echo same) $rc2" "same $rc1" \
	"light: same stdout, stderr and exit status as without lwm2"

# --- MPI: the identity kept, no call counted
if [ -n "${MPICC:-}" ] && command -v mpirun.openmpi >/dev/null &&
	$MPICC -std=gnu11 -O2 -o "$tmp/mpi_prog" "$LWM2_SRCDIR/preload/test/mpi_prog.c" -lpthread; then
	for mode in on light; do
		newcase
		OMPI_MCA_btl=self,vader timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe \
			-np 2 -x LD_PRELOAD="$LWM2_LIB" -x LWM2_DIR="$D" -x LWM2_MODE=$mode \
			-x LWM2_SHORT_MS -x OMPI_MCA_btl "$tmp/mpi_prog" p2p >"$tmp/mpi.out" 2>&1
		rc=$?
		ranks='' calls=0 mpi_why=''
		for f in "$D"/*.lwm2; do
			[ "$(val "$f" executable)" = "$tmp/mpi_prog" ] || continue
			ranks="$ranks $(val "$f" mpi_rank)/$(val "$f" mpi_size)"
			calls=$((calls + $(val "$f" mpi_p2p_calls)))
			mpi_why=$(val "$f" missing_mpi)
		done
		ranks=$(tr ' ' '\n' <<<"$ranks" | sort | xargs)
		mpi[$mode]="$rc $ranks $calls"
		[ $mode = on ] || is "$mpi_why" "$REASON" "MPI, light: MPI not measured, light mode said"
	done
	check_eval '[ "${mpi[on]% *}" = "0 0/2 1/2" ] && [ "${mpi[on]##* }" -gt 0 ]' \
		"MPI, on: both ranks' identity, point-to-point calls counted (${mpi[on]})"
	is "${mpi[light]}" "0 0/2 1/2 0" "MPI, light: both ranks' identity, no call counted"
else
	skip "no Open MPI compiler wrapper or launcher"
	skip "no Open MPI compiler wrapper or launcher"
	skip "no Open MPI compiler wrapper or launcher"
fi

done_testing
