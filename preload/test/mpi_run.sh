#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The MPI module against real MPI runs: Open MPI (mpirun) and MPICH
# (mpiexec.hydra), C and Fortran programs, 2 and 4 ranks; each rank's
# record must hold exactly what the program says it did (mpi_check).
# Also: liblwm2 has no NEEDED libmpi, a non-MPI program maps no libmpi,
# and a second PMPI tool preloaded before or after liblwm2 neither
# recurses nor makes calls count twice.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
# mpicc.mpich reads MPICH_CC as the compiler to wrap: keep ours apart.
mpich_cc=${MPICH_CC:-}
unset MPICH_CC

: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}" "${LWM2_SRCDIR:?}"
T=$LWM2_SRCDIR/preload/test
W=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-mpi.XXXXXX")
trap 'rm -rf "$W"' EXIT

# mpi_check prints numbered TAP lines of its own: renumber them.
mpi_checks() { # mpi_checks RECDIR EXPDIR LABEL
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok * - }" ;;
		"not ok "*) not_ok "${line#not ok * - }" ;;
		*) echo "$line" ;;
		esac
	done < <("$W/mpi_check" "$@")
}

${CC:-cc} -std=gnu11 -I"$LWM2_SRCDIR/digest/format" -I"$LWM2_SRCDIR/tests" -o "$W/mpi_check" \
	"$T/mpi_check.c" "$LWM2_BUILDDIR/digest/.libs/liblwm2record.a" || { echo "Bail out! mpi_check"; exit 1; }

# -- the library itself ------------------------------------------------------
if readelf -d "$LWM2_LIB" | grep NEEDED | grep -q -i mpi; then
	not_ok "liblwm2.so has no NEEDED entry for an MPI library"
else
	ok "liblwm2.so has no NEEDED entry for an MPI library"
fi
${CC:-cc} -std=gnu11 -o "$W/nompi" "$T/mpi_nompi.c"
if out=$(LD_PRELOAD=$LWM2_LIB LWM2_DIR=$W "$W/nompi"); then
	ok "a program without MPI maps no MPI library under liblwm2 ($out)"
else
	not_ok "a program without MPI maps no MPI library under liblwm2 ($out)"
fi
rm -f "$W"/*.lwm2

sanitizer_rt=
case ${LWM2_SANITIZER:-no} in
*address*)
	for rt in libasan.so libclang_rt.asan-x86_64.so; do
		rt=$($CC -print-file-name=$rt 2>/dev/null)
		if [ -f "$rt" ]; then
			sanitizer_rt=$rt
			break
		fi
	done
	;;
esac

# -- runners -----------------------------------------------------------------
# run IMPL NP LABEL PRELOAD PROGRAM ARGS...: fresh record and expect dirs
run() {
	local impl=$1 np=$2 label=$3 pre=$4
	shift 4
	# A sanitized liblwm2.so needs its runtime up before any library
	# constructor calls a wrapper (MPICH's libnuma opens files in one).
	[ -z "$sanitizer_rt" ] || pre=$sanitizer_rt:$pre
	rm -rf "$W/rec" "$W/exp"
	mkdir -p "$W/rec" "$W/exp"
	case $impl in
	ompi)
		OMPI_MCA_btl=self,vader OMPI_MCA_io=${LWM2_TEST_OMPI_IO:-romio321} \
			timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" \
			-x LD_PRELOAD="$pre" -x LWM2_DIR="$W/rec" -x LWM2_EXPECT_DIR="$W/exp" \
			-x OMPI_MCA_btl -x OMPI_MCA_io "$@" >"$W/out" 2>&1
		;;
	mpich)
		timeout 60 mpiexec.mpich -n "$np" -genv LD_PRELOAD "$pre" -genv LWM2_DIR "$W/rec" \
			-genv LWM2_EXPECT_DIR "$W/exp" "$@" >"$W/out" 2>&1
		;;
	esac
	local rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "$label: run (exit $rc)"
		sed 's/^/# /' "$W/out" | head -20
		return 1
	fi
	mpi_checks "$W/rec" "$W/exp" "$label"
}

# no_mmap_write LABEL: no record of the last run has mmap_write (1 << 10):
# the MPI library's shared-memory segments (/dev/shm, its session
# directory) are no file written, and the program writes none
no_mmap_write() {
	local f flags bad=
	for f in "$W"/rec/*.lwm2; do
		flags=$("$LWM2_BUILDDIR/preload/test/recdump" "$f" | awk '$1 == "flags" { print $2 }')
		if [ -z "$flags" ] || (((flags >> 10) & 1)); then
			bad="$bad ${f##*/}"
		fi
	done
	if [ -z "$bad" ]; then
		ok "$1: no process flagged mmap_write"
	else
		not_ok "$1: no process flagged mmap_write:$bad"
	fi
}

# shellcheck disable=SC2034 # read through eval below
have_ompi=; have_mpich=
# shellcheck disable=SC2034 # read through eval below
if [ -n "${MPICC:-}" ] && command -v mpirun.openmpi >/dev/null; then
	have_ompi=1
	$MPICC -std=gnu11 -O2 -o "$W/prog_ompi" "$T/mpi_prog.c" -lpthread || have_ompi=
fi
# shellcheck disable=SC2034 # read through eval below
if [ -n "$mpich_cc" ] && command -v mpiexec.mpich >/dev/null; then
	have_mpich=1
	$mpich_cc -std=gnu11 -O2 -Wno-stringop-overflow -o "$W/prog_mpich" "$T/mpi_prog.c" -lpthread ||
		have_mpich=
fi

for impl in ompi mpich; do
	eval have=\$have_$impl
	if [ -z "$have" ]; then
		skip "$impl: no compiler wrapper or launcher"
		continue
	fi
	run $impl 2 "$impl p2p 2 ranks" "$LWM2_LIB" "$W/prog_$impl" p2p &&
		no_mmap_write "$impl p2p 2 ranks"
	run $impl 4 "$impl p2p 4 ranks" "$LWM2_LIB" "$W/prog_$impl" p2p
	run $impl 2 "$impl coll 2 ranks" "$LWM2_LIB" "$W/prog_$impl" coll
	run $impl 3 "$impl coll 3 ranks" "$LWM2_LIB" "$W/prog_$impl" coll
	run $impl 4 "$impl coll 4 ranks" "$LWM2_LIB" "$W/prog_$impl" coll
	run $impl 2 "$impl io 2 ranks" "$LWM2_LIB" "$W/prog_$impl" io
	run $impl 2 "$impl threads" "$LWM2_LIB" "$W/prog_$impl" threads 300
	run $impl 2 "$impl wait" "$LWM2_LIB" "$W/prog_$impl" wait

	# a second PMPI tool, before and after liblwm2
	tool=$W/other_$impl.so
	cc=$MPICC
	[ $impl = mpich ] && cc=$mpich_cc
	$cc -std=gnu11 -shared -fPIC -o "$tool" "$T/mpi_other_tool.c"
	run $impl 2 "$impl other tool first" "$tool:$LWM2_LIB" "$W/prog_$impl" p2p &&
		if grep -q "other tool: MPI_Send calls [1-9]" "$W/out"; then
			ok "$impl other tool first: the tool saw its calls"
		else
			not_ok "$impl other tool first: the tool saw its calls"
		fi
	run $impl 2 "$impl other tool after" "$LWM2_LIB:$tool" "$W/prog_$impl" p2p &&
		if grep -q "other tool: MPI_Send calls [1-9]" "$W/out"; then
			ok "$impl other tool after: the tool saw its calls"
		else
			not_ok "$impl other tool after: the tool saw its calls"
		fi

	# Fortran: mpif.h, the mpi module, mpi_f08
	fc=${MPIFC:-}
	[ $impl = mpich ] && fc=$(command -v mpifort.mpich)
	if [ -z "$fc" ]; then
		skip "$impl fortran: no compiler wrapper"
		continue
	fi
	for b in mpifh mpi f08; do
		cp "$T/mpi_fprog.F90" "$W/fprog_$b.F90"
		if $fc -cpp -DBINDING_$b -o "$W/fprog_${impl}_$b" "$W/fprog_$b.F90" 2>"$W/fc.err"; then
			run $impl 2 "$impl fortran $b" "$LWM2_LIB" "$W/fprog_${impl}_$b"
		else
			skip "$impl fortran $b: does not compile: $(head -c 200 "$W/fc.err" | tr '\n' ' ')"
		fi
	done
done

done_testing
