#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# LAMMPS on the private Slurm cluster (tests/cluster/), lwm2's SPANK plugin
# and liblwm2.so loaded from the build tree as contrib/demo.sh does:
#
#   lammps-cluster.sh BUILD INPUT STEPS RUNS OUTDIR
#
# Alternates `srun -N1 -n2 --mpi=pmix --lwm2=print lmp` and the same with
# --lwm2=off, RUNS times each, as the unprivileged test user.  Writes the
# wall milliseconds of each run to OUTDIR/with and OUTDIR/without, the
# step digest srun printed last to OUTDIR/digest.txt and its signed node
# record from the spool to OUTDIR/node.lwm2node.  Exits 77 with the
# reason on stderr when the cluster cannot be had here.
# shellcheck source-path=SCRIPTDIR
set -uo pipefail

build=$1 input=$2 steps=$3 runs=$4 outdir=$5
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

skip() {
	echo "$*" >&2
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "the private cluster needs root"
[ -r "$build/spank/.libs/spank_lwm2.so" ] || skip "spank_lwm2.so is not built in $build"
[ -r "$top/tests/cluster/lib.sh" ] || skip "no tests/cluster/lib.sh"
command -v lmp >/dev/null || skip "lmp is not installed"

# shellcheck source=../tests/cluster/lib.sh
. "$top/tests/cluster/lib.sh"
# lib.sh's skip_all and bail_out print TAP and exit; here they mean "no
# cluster run", which the caller turns into the mpirun row.
# shellcheck disable=SC2317 # called by lib.sh
skip_all() { skip "$*"; }
# shellcheck disable=SC2317 # called by lib.sh
bail_out() { skip "$*"; }

# The libraries where slurmstepd (root) and the test user can load them;
# the cluster starts with the plugin in its plugstack.conf.
libdir=$(mktemp -d /tmp/lwm2-bench-lib.XXXXXX)
chmod 755 "$libdir"
install -m 755 "$build/spank/.libs/spank_lwm2.so" "$libdir/spank_lwm2.so"
install -m 755 "$build/preload/.libs/liblwm2.so" "$libdir/liblwm2.so"
install -d -m 755 "$libdir/spool"
export LWM2_PLUGSTACK="optional $libdir/spank_lwm2.so lib=$libdir/liblwm2.so basedir=$libdir/run spool=$libdir/spool"
trap 'rm -rf "$libdir"' EXIT
cluster_up >&2
# cluster_up's own EXIT trap stops the cluster; the library copy goes too.
trap 'cluster_down; rm -rf "$libdir"' EXIT

work=$TESTDIR/$TEST_USER
install -m 644 "$input" "$work/in.melt"
chown "$TEST_USER" "$work/in.melt"
: >"$outdir/with"
: >"$outdir/without"
# One node, both ranks on it: shared memory works inside one virtual node.
ompi=OMPI_MCA_btl=self,vader,OMPI_MCA_btl_vader_single_copy_mechanism=none,OMPI_MCA_mpi_yield_when_idle=1
for ((i = 0; i < runs; i++)); do
	for side in with without; do
		mode=print
		[ "$side" = without ] && mode=off
		t0=$(date +%s%N)
		if ! as_user timeout 900 srun -N1 -n2 --mpi=pmix --lwm2=$mode --export="ALL,$ompi" \
			lmp -in in.melt -var x 16 -var steps "$steps" -log none -screen none \
			>"$outdir/srun.out" 2>"$outdir/srun.err"; then
			skip "srun failed: $(tail -n 3 "$outdir/srun.err" | tr '\n' ' ')"
		fi
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$outdir/$side"
		[ "$side" = with ] && cp "$outdir/srun.err" "$outdir/digest.txt"
	done
done
last=$(find "$libdir/spool" -name '*.lwm2node' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1)
[ -n "$last" ] && cp "${last#* }" "$outdir/node.lwm2node"
exit 0
