#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# LAMMPS on the private Slurm cluster (tests/cluster/), lwm2's SPANK plugin
# and liblwm2.so loaded from the build tree as contrib/demo.sh does:
#
#   lammps-cluster.sh BUILD INPUT STEPS RUNS OUTDIR
#
# Alternates `srun -N1 -n2 --mpi=pmix --lwm2=print lmp`, the same with
# --lwm2=off, and the same again watched by its owner with `lwm2 top -d 2`
# (what a user keeps open in a terminal), RUNS times each, as the
# unprivileged test user.  Writes the wall milliseconds of each run to
# OUTDIR/with, OUTDIR/without and OUTDIR/watched (empty when the lwm2
# command is not built: BUILD/digest/lwm2), the
# step digest srun printed last to OUTDIR/digest.txt and its signed node
# record from the spool to OUTDIR/node.lwm2node.  Exits 77 with the
# reason on stderr when the cluster cannot be had here.
# shellcheck source-path=SCRIPTDIR
set -uo pipefail

build=$1 input=$2 steps=$3 runs=$4 outdir=$5
# skip (exit 77: the caller turns it into the mpirun row), top
# shellcheck source=cluster-run.sh
. "$(dirname "$0")/cluster-run.sh"
[ -r "$build/spank/.libs/spank_lwm2.so" ] || skip "spank_lwm2.so is not built in $build"
command -v lmp >/dev/null || skip "lmp is not installed"
cluster_run_lib

# The libraries where slurmstepd (root) and the test user can load them;
# the cluster starts with the plugin in its plugstack.conf.
libdir=$(mktemp -d /tmp/lwm2-bench-lib.XXXXXX)
chmod 755 "$libdir"
install -m 755 "$build/spank/.libs/spank_lwm2.so" "$libdir/spank_lwm2.so"
install -m 755 "$build/preload/.libs/liblwm2.so" "$libdir/liblwm2.so"
install -d -m 755 "$libdir/spool"
sides="with without"
if [ -x "$build/digest/lwm2" ]; then
	install -m 755 "$build/digest/lwm2" "$libdir/lwm2"
	sides="with without watched"
fi
export LWM2_PLUGSTACK="optional $libdir/spank_lwm2.so lib=$libdir/liblwm2.so basedir=$libdir/run spool=$libdir/spool"
trap 'rm -rf "$libdir"' EXIT
cluster_up >&2
# cluster_up's own EXIT trap stops the cluster; the library copy goes too.
trap 'cluster_down; rm -rf "$libdir"' EXIT

work=$TESTDIR/$TEST_USER
printf 'BaseDir=%s\nSlurmConf=%s\n' "$libdir/run" "$LWM2_CLUSTER_DIR/etc/slurm.conf" >"$libdir/lwm2.conf"
chmod 644 "$libdir/lwm2.conf"
install -m 644 "$input" "$work/in.melt"
chown "$TEST_USER" "$work/in.melt"
: >"$outdir/with"
: >"$outdir/without"
: >"$outdir/watched"
# One node, both ranks on it: shared memory works inside one virtual node.
ompi=OMPI_MCA_btl=self,vader,OMPI_MCA_btl_vader_single_copy_mechanism=none,OMPI_MCA_mpi_yield_when_idle=1
for ((i = 0; i < runs; i++)); do
	for side in $sides; do
		mode=print
		[ "$side" = without ] && mode=off
		t0=$(date +%s%N)
		as_user timeout 900 srun -N1 -n2 --mpi=pmix --lwm2=$mode --job-name="lwm2-bench-$side" \
			--export="ALL,$ompi" lmp -in in.melt -var x 16 -var steps "$steps" -log none -screen none \
			>"$outdir/srun.out" 2>"$outdir/srun.err" &
		srun_pid=$!
		if [ "$side" = watched ]; then
			# the owner's lwm2 top from the moment the job runs; it ends
			# by itself with the job
			job=
			for ((j = 0; j < 300; j++)); do
				job=$(squeue -h -t R -n lwm2-bench-watched -o %i 2>/dev/null | head -n 1)
				[ -n "$job" ] && break
				sleep 0.1
			done
			[ -n "$job" ] && as_user env LWM2_CONF="$libdir/lwm2.conf" timeout 900 \
				"$libdir/lwm2" top --json -d 2 -j "$job" >"$outdir/top.json" 2>&1 &
		fi
		if ! wait "$srun_pid"; then
			skip "srun failed: $(tail -n 3 "$outdir/srun.err" | tr '\n' ' ')"
		fi
		t1=$(date +%s%N)
		wait
		echo $(((t1 - t0) / 1000000)) >>"$outdir/$side"
		[ "$side" = with ] && cp "$outdir/srun.err" "$outdir/digest.txt"
	done
done
last=$(find "$libdir/spool" -name '*.lwm2node' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1)
[ -n "$last" ] && cp "${last#* }" "$outdir/node.lwm2node"
exit 0
