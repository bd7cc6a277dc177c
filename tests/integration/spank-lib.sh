# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the t-spank-*.sh tests share: put spank_lwm2.so and liblwm2.so of the
# build under test where slurmstepd and the test users can load them, and
# restart the private cluster with a plugstack.conf that lists the plugin.
#
#   spank_setup [KEY=VALUE...]    extra plugstack arguments
#
# Sets LIBDIR, BASEDIR, SPOOL, PLUGSTACK_ARGS.  LWM2_BUILDDIR is the build
# tree (the suite sets it; default: the source tree built in place).

spank_builddir() {
	local d
	for d in "${LWM2_BUILDDIR:-}" "$LWM2_TOP"; do
		if [ -n "$d" ] && [ -f "$d/spank/.libs/spank_lwm2.so" ] &&
			[ -f "$d/preload/.libs/liblwm2.so" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

spank_setup() {
	local build
	build=$(spank_builddir) || skip_all "spank_lwm2.so and liblwm2.so not built (make)"
	cluster_up
	# The build tree may be private to root; the test users' processes
	# load liblwm2.so, so the two libraries get a world-readable home.
	LIBDIR=$TESTDIR/lib
	install -d -m 755 "$LIBDIR"
	install -m 755 "$build/spank/.libs/spank_lwm2.so" "$LIBDIR/spank_lwm2.so"
	install -m 755 "$build/preload/.libs/liblwm2.so" "$LIBDIR/liblwm2.so"
	BASEDIR=$TESTDIR/run
	SPOOL=$TESTDIR/spool
	install -d -m 755 "$SPOOL"
	PLUGSTACK_ARGS="lib=$LIBDIR/liblwm2.so basedir=$BASEDIR spool=$SPOOL $*"
	spank_plugstack "$PLUGSTACK_ARGS"
}

# spank_plugstack ARGS: restart the Slurm daemons with the plugin and ARGS.
spank_plugstack() {
	cluster_reconfig "LWM2_PLUGSTACK=optional $LIBDIR/spank_lwm2.so $1" ||
		bail_out "cluster reconfig with the lwm2 plugstack failed"
}

# node_field FILE EXPR: a value of a signed node record (JSON after the
# munge credential), EXPR a Python expression over the record r.
node_field() {
	python3 - "$1" "$2" <<'PY'
import json, sys
b = open(sys.argv[1], 'rb').read()
nl = b.index(b'\n')
hdr = b[:nl].split()
cl, rl = int(hdr[2]), int(hdr[3])
start = nl + 1 + cl + 1
r = json.loads(b[start:start + rl])
print(eval(sys.argv[2]))
PY
}

# job_of OUTPUT: the job id a task printed as "job=<id>".
job_of() {
	sed -n 's/.*job=\([0-9][0-9]*\).*/\1/p' <<<"$1" | head -n 1
}

# slurmd_logs: every slurmd log of the cluster, for grepping.
slurmd_logs() {
	cat "$LWM2_CLUSTER_DIR"/log/slurmd-*.log 2>/dev/null
}
