#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The MPI module under srun --mpi=pmix on the private cluster, as the
# unprivileged test user, ranks on two virtual nodes: each rank's record
# holds exactly the calls and bytes the test programs made (C: p2p,
# collectives, MPI-IO collective writes; Fortran), and a rank that waits in a
# barrier shows the wait as MPI time.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"

command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
# The build tree may be apart from the sources (the suite builds out of tree).
build=${LWM2_BUILDDIR:-$LWM2_TOP}
lib=${LWM2_LIB:-$build/preload/.libs/liblwm2.so}
[ -r "$lib" ] || skip_all "liblwm2.so not built ($lib)"
cluster_up

src=$LWM2_TOP/preload/test
bin=$TESTDIR/bin
mkdir -p "$bin"
cp "$lib" "$bin/liblwm2.so"
mpicc.openmpi -std=gnu11 -O2 -o "$bin/mpi_prog" "$src/mpi_prog.c" -lpthread ||
	bail_out "mpicc.openmpi cannot build mpi_prog"
fortran=
if command -v mpifort.openmpi >/dev/null &&
	mpifort.openmpi -cpp -DBINDING_mpi -o "$bin/mpi_fprog" "$src/mpi_fprog.F90" 2>/dev/null; then
	fortran=1
fi
${CC:-cc} -std=gnu11 -I"$LWM2_TOP/digest/format" -I"$LWM2_TOP/tests" -o "$bin/mpi_check" \
	"$src/mpi_check.c" "$build/digest/.libs/liblwm2record.a" ||
	bail_out "cannot build mpi_check"
chmod -R a+rX "$bin"

# Open MPI across virtual nodes of one machine (SLURM-NOTES.md).
ompi_env=OMPI_MCA_btl=self,tcp,OMPI_MCA_btl_tcp_if_include=lo,OMPI_MCA_pml=ob1,OMPI_MCA_io=romio321

# srun_check LABEL PROGRAM ARGS...: two ranks on two nodes, then mpi_check.
srun_check() {
	local label=$1 dir
	shift
	dir=$TESTDIR/$TEST_USER/$label
	as_user mkdir -p "$dir/rec" "$dir/exp"
	if run_job -N2 -n2 --mpi=pmix \
		--export="ALL,LD_PRELOAD=$bin/liblwm2.so,LWM2_DIR=$dir/rec,LWM2_EXPECT_DIR=$dir/exp,$ompi_env" \
		"$@"; then
		ok "$label: srun -N2 -n2 --mpi=pmix as $TEST_USER"
	else
		not_ok "$label: srun -N2 -n2 --mpi=pmix as $TEST_USER"
		return
	fi
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok * - }" ;;
		"not ok "*) not_ok "${line#not ok * - }" ;;
		*) echo "$line" ;;
		esac
	done < <("$bin/mpi_check" "$dir/rec" "$dir/exp" "srun $label")
}

srun_check p2p "$bin/mpi_prog" p2p
srun_check coll "$bin/mpi_prog" coll
srun_check io "$bin/mpi_prog" io
srun_check wait "$bin/mpi_prog" wait
if [ -n "$fortran" ]; then
	srun_check fortran "$bin/mpi_fprog"
else
	skip "fortran: mpifort.openmpi cannot build the mpi module program"
fi

done_testing
