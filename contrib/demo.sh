#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The demo, from a fresh Debian 12 machine (as root):
#
#   bash contrib/demo.sh
#
# installs what lwm2 needs, builds it, starts a private four-node Slurm
# cluster with lwm2's SPANK and jobcomp plugins loaded from the build tree,
# runs a sample MPI job as an unprivileged user with `srun --lwm2=print`,
# shows the digest srun printed, reads it back from accounting with
# `lwm2 digest -j`, and stops the cluster again.
#
# LWM2_DEMO_DIR: where the build and the cluster live (default _build/demo).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
work=${LWM2_DEMO_DIR:-$top/_build/demo}
build=$work/build
cluster=$work/cluster
user=lwm2test

say() { printf '\n\033[1mdemo: %s\033[0m\n' "$*"; }
run() {
	printf '$ %s\n' "$*"
	"$@"
}

[ "$(id -u)" -eq 0 ] || {
	echo "demo: run as root (it installs packages and starts daemons)" >&2
	exit 1
}
mkdir -p "$work"

say "installing the Debian packages lwm2 needs"
bash "$top/contrib/install-deps.sh"

say "fetching the Slurm source of the installed version (for jobcomp/lwm2)"
src_line=$(bash "$top/contrib/slurm-source.sh" "$work/slurm-src" | tail -n 1)
slurm_src=${src_line#SLURM_SOURCE=}
slurm_src=${slurm_src%% *}
slurm_build=${src_line##*SLURM_BUILD=}

say "building lwm2"
(cd "$top" && ./autogen.sh >/dev/null 2>&1)
mkdir -p "$build"
(cd "$build" && "$top/configure" -q --with-slurm-source="$slurm_src:$slurm_build" | tail -n 14)
make -C "$build" -s -j2 >/dev/null

say "starting a private Slurm cluster (4 virtual nodes) with lwm2 loaded"
# The daemons load the plugins and the job's user loads liblwm2.so: give
# them copies in a directory everyone can read, whatever the clone's mode.
inst=$work/install
spool=$work/spool
install -d -m 755 "$inst" "$spool" "$cluster/etc"
install -m 755 "$build/spank/.libs/spank_lwm2.so" "$build/preload/.libs/liblwm2.so" \
	"$build/jobcomp/.libs/jobcomp_lwm2.so" "$build/digest/lwm2" "$inst/"
# jobcomp/lwm2 reads its settings from lwm2.conf next to slurm.conf.
cat >"$cluster/etc/lwm2.conf" <<EOF
SpoolDir=$spool
StateDir=$work/jobcomp-state
LateRecordWait=30
RecordSettle=1
LwmCommand=$inst/lwm2
SlurmConf=$cluster/etc/slurm.conf
EOF
export LWM2_PLUGIN_DIR="$inst"
export LWM2_PLUGSTACK="required $inst/spank_lwm2.so lib=$inst/liblwm2.so spool=$spool"
export LWM2_CLUSTER_EXTRA_CONF="JobCompType=jobcomp/lwm2
JobCompLoc=$work/lwm2-digests.jsonl"
trap 'bash "$top/tests/cluster/cluster.sh" stop "$cluster" >/dev/null 2>&1 || true' EXIT
bash "$top/tests/cluster/cluster.sh" start "$cluster"
eval "$(bash "$top/tests/cluster/cluster.sh" env "$cluster")"

say "compiling the sample MPI program (contrib/demo/lwm2-demo.c)"
jobdir=$work/job
install -d -o "$user" -m 755 "$jobdir"
mpicc -O2 -o "$jobdir/lwm2-demo" "$top/contrib/demo/lwm2-demo.c"
chmod 755 "$jobdir/lwm2-demo"

say "running it as $user on 2 nodes, 4 ranks, with the digest printed at the end"
as_user() { runuser -u "$user" -- env -C "$jobdir" "$@"; }
as_user srun --version >/dev/null
printf '$ srun -N2 -n4 --mpi=pmix --lwm2=print ./lwm2-demo\n'
as_user srun -N2 -n4 --mpi=pmix --lwm2=print ./lwm2-demo
# Accounting hears of the job a moment after srun returns.
jobid=
for _ in $(seq 100); do
	jobid=$(as_user sacct -n -X -P -o JobID --name=lwm2-demo | tail -n 1)
	[ -n "$jobid" ] && break
	sleep 0.3
done
[ -n "$jobid" ] || {
	echo "demo: the job did not reach accounting" >&2
	exit 1
}

say "reading the digest of job $jobid back from Slurm accounting"
run as_user "$inst/lwm2" digest --wait 60 -j "$jobid"

say "the same digest is stored as JSON in the job's AdminComment:"
printf '$ sacct -j %s -X -o AdminComment%%80\n' "$jobid"
sacct -j "$jobid" -X -n -P -o AdminComment | cut -c1-300
echo "..."

say "stopping the cluster"
bash "$top/tests/cluster/cluster.sh" stop "$cluster"
trap - EXIT
say "done: the build is in $build; 'lwm2 digest -j JOBID' reads any job's digest"
