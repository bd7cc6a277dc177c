#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Jobs in containers through Slurm's own path: pyxis (NVIDIA's SPANK
# plugin, listed before spank_lwm2.so in plugstack.conf) and enroot,
# `srun --container-image=IMAGE.sqsh`, jobs of the unprivileged test user
# on the private cluster.  For each image (Debian 11 "bullseye", glibc
# 2.31; Debian 12 "bookworm"; tests/containers/image.sh, made into a
# squashfs file as `enroot import` makes them) the same step runs with
# `srun --lwm2=off` and with `srun --lwm2`, and
#
#   - stdout, stderr and the exit status are identical (no loader message:
#     the library is not in the image; pyxis joins the container in its
#     task_init, after which slurmstepd execs the task there), the step
#     takes no longer and leaves no process behind;
#   - the job's digest has the bytes the payload wrote inside the
#     container (dd: 102400), counts its processes and names the container
#     (pyxis and the image);
#
# with the library absent from the image (reached through the descriptor
# the step passes on) and with the library's and the step directories'
# host directories mounted in (--container-mounts); in the Debian 12
# image, jobs whose children close what they inherited, start them by
# posix_spawn, by Python's multiprocessing (spawn) and subprocess
# (container-lib.sh's kids_cases: their bytes exact, their processes
# counted, three runs a step).
#
# enroot and pyxis are not packaged in Debian: contrib/enroot-pyxis-build.sh
# builds them from their sources into /var/cache/lwm2-suite/enroot-pyxis
# (pyxis once per Slurm release).  Where they are not built the test is
# skipped, saying how to build them.  The test's enroot is that build with a
# configuration of its own (its paths in the test user's directory), found
# by pyxis in the daemons' PATH (cluster.sh's LWM2_CLUSTER_PATH).
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

EP_CACHE=${LWM2_ENROOT_PYXIS_CACHE:-/var/cache/lwm2-suite/enroot-pyxis}
RELEASES=(bullseye bookworm)
BUILD_HOW="contrib/enroot-pyxis-build.sh ENROOT-SRC PYXIS-SRC (git clone https://github.com/NVIDIA/enroot and https://github.com/NVIDIA/pyxis; LWM2_SLURM_PREFIX=the Slurm prefix for a Slurm of its own)"

need_python3
# The Slurm release the daemons run: pyxis is built for one.
slurmd=/usr/sbin/slurmd
[ -n "${LWM2_SLURM_PREFIX:-}" ] && slurmd=$LWM2_SLURM_PREFIX/sbin/slurmd
slurm_ver=$("$slurmd" -V 2>/dev/null | awk '{ print $2 }')
ENROOT_PREFIX=""
for d in "$EP_CACHE"/enroot-*; do
	[ -x "$d/bin/enroot" ] && [ -f "$d/.lwm2-built" ] && ENROOT_PREFIX=$d
done
PYXIS=""
for f in "$EP_CACHE"/pyxis-*-slurm-"$slurm_ver"/spank_pyxis.so; do
	[ -n "$slurm_ver" ] && [ -f "$f" ] && PYXIS=$f
done
if [ -z "$ENROOT_PREFIX" ] || [ -z "$PYXIS" ]; then
	skip_all "enroot and pyxis are not built here${slurm_ver:+ (for Slurm $slurm_ver)}: $BUILD_HOW"
fi
for c in mksquashfs unsquashfs jq; do
	command -v "$c" >/dev/null ||
		skip_all "$c not installed (squashfs-tools, jq: enroot needs them; contrib/install-deps.sh)"
done

# The test's enroot, pyxis's line in plugstack.conf before lwm2's, and
# enroot's directory in the daemons' PATH: set up by jobcomp_setup once the
# test's directory is known.
jobcomp_before_reconfig() {
	local e=$TESTDIR/enroot home=$TESTDIR/$TEST_USER b
	install -d -m 755 "$e" "$e/bin" "$e/etc" "$TESTDIR/pyxis"
	cp -a "$ENROOT_PREFIX/etc/enroot" "$e/etc/"
	sed "s|$ENROOT_PREFIX/etc/enroot|$e/etc/enroot|g" "$ENROOT_PREFIX/bin/enroot" >"$e/bin/enroot"
	chmod 755 "$e/bin/enroot"
	for b in "$ENROOT_PREFIX"/bin/enroot-*; do
		ln -s "$b" "$e/bin/"
	done
	# pyxis passes no ENROOT_*_PATH of the job's on: the configuration
	# file says where the test user's containers go.
	cat >>"$e/etc/enroot/enroot.conf" <<-EOF
		ENROOT_RUNTIME_PATH $home/enroot/run
		ENROOT_CACHE_PATH $home/enroot/cache
		ENROOT_DATA_PATH $home/enroot/data
	EOF
	ENROOT_BIN=$e/bin
	JOBCOMP_PLUGSTACK_FIRST="optional $PYXIS runtime_path=$TESTDIR/pyxis"
	JOBCOMP_SETTINGS=("LWM2_CLUSTER_PATH=$e/bin")
}
jobcomp_setup

RUN=$(basename "$TESTDIR")
U=$TESTDIR/$TEST_USER
F=/tmp/lwm2-pyxis.$RUN
PAYLOAD="dd if=/dev/zero of=$F bs=4096 count=25 status=none; cat /etc/debian_version; echo done; ls /nonexistent; exit 3"
BYTES=102400
NATIVE_PROCS=4
# Each step unpacks its image (enroot create): 8 to 36 s here, on 2
# loaded cores, with and without lwm2 alike.
SLACK_MS=30000
t_start=$SECONDS

# shellcheck source=tests/integration/container-lib.sh
. "$(dirname "$0")/container-lib.sh"
# The children's cases that start them in the ways a runtime may lose
# them (each step unpacks the image: a few only), mounted in.
kids_setup "$F"
KIDS_ONLY="closekids spawn pool-spawn subprocess"

grep -q 'pyxis: version' "$LWM2_CLUSTER_DIR/log/slurmd-n1.log" ||
	bail_out "slurmd did not load pyxis: $(grep -i 'pyxis\|spank' "$LWM2_CLUSTER_DIR/log/slurmd-n1.log" | tail -n 3)"
diag "enroot $(cat "$ENROOT_PREFIX/.lwm2-built" | cut -d' ' -f2) ($ENROOT_PREFIX), $PYXIS"

# ---------------------------------------------------------------- images

# squashfs files of the test images, as `enroot import` makes them: no
# device nodes (the test user's unsquashfs could not make them), made once
# per image (beside it, with the image's id).
declare -A SQSH=() IMG_WHY=() VER=() ROOT=()
for rel in "${RELEASES[@]}"; do
	t0=$SECONDS
	if ! out=$(bash "$LWM2_TOP/tests/containers/image.sh" "$rel" 2>&1); then
		IMG_WHY[$rel]="no $rel image: $(tail -n 1 <<<"$out")"
		diag "tests/containers/image.sh $rel failed:" "$out"
		continue
	fi
	img=$(tail -n 1 <<<"$out")
	ROOT[$rel]=$img
	VER[$rel]=$(cat "$img/etc/debian_version")
	id="$(cat "$img/usr/local/share/lwm2-test-image")-${VER[$rel]}"
	sq=$EP_CACHE/images/$rel.sqsh
	if [ ! -f "$sq" ] || [ "$(cat "$sq.id" 2>/dev/null)" != "$id" ]; then
		install -d -m 755 "$EP_CACHE/images"
		rm -f "$sq" "$sq.id"
		if ! out=$(mksquashfs "$img" "$sq.new" -noappend -noI -noD -noF -noX -all-root \
			-no-progress -wildcards -e 'dev/*' 2>&1); then
			rm -f "$sq.new"
			IMG_WHY[$rel]="mksquashfs of the $rel image failed: $(tail -n 1 <<<"$out")"
			continue
		fi
		chmod 644 "$sq.new"
		mv "$sq.new" "$sq"
		echo "$id" >"$sq.id"
	fi
	SQSH[$rel]=$sq
	diag "image $rel (Debian ${VER[$rel]}): $sq ($((SECONDS - t0)) s)"
done

# enroot itself, as the test user outside Slurm: where it cannot start a
# container here (no unprivileged user namespaces), every case is skipped
# with its error.
RT_WHY=""
for rel in "${RELEASES[@]}"; do
	[ -n "${SQSH[$rel]:-}" ] || continue
	# shellcheck disable=SC2016 # expanded by the user's shell
	if ! out=$(as_user env PATH="$ENROOT_BIN:$PATH" timeout 120 bash -c \
		'enroot create --force --name lwm2-probe "$0" && enroot start lwm2-probe true; rc=$?
		enroot remove --force lwm2-probe; exit $rc' "${SQSH[$rel]}" 2>&1 >/dev/null); then
		RT_WHY="enroot cannot start a container here: $(tail -n 3 <<<"$out" | tr '\n' ' ' | cut -c1-200)"
	fi
	break
done

# ---------------------------------------------------------------- cases

for rel in "${RELEASES[@]}"; do
	d="pyxis $rel"
	why=${IMG_WHY[$rel]:-$RT_WHY}
	if [ -n "$why" ]; then
		for c in ", library not in the image" ", library and step directory mounted"; do
			skip_identical "$d$c" "$why"
			skip_measured "$d$c" "$why"
		done
		[ "$rel" != "$KIDS_RELEASE" ] || kids_skip "$d" "$rel" "$why"
		continue
	fi
	sq=${SQSH[$rel]}
	want_out=$(printf '%s\ndone' "${VER[$rel]}")
	t0=$SECONDS

	# The library is not in the image: the step's descriptor stands in
	# (LD_PRELOAD=/proc/self/fd/N), the records go through the other.
	step_pair "px-$rel" --container-image="$sq" sh -c "$PAYLOAD"
	identical "px-$rel" "$d, library not in the image" "$want_out" 3
	measure "px-$rel" "$d, library not in the image" exact "pyxis $sq"

	# As spank_lwm2(8) says a site may: the library's directory and the
	# step directories mounted at their paths.
	step_pair "px-$rel-mounted" --container-image="$sq" \
		--container-mounts="$LIBDIR:$LIBDIR:ro,$BASEDIR:$BASEDIR" sh -c "$PAYLOAD"
	identical "px-$rel-mounted" "$d, library and step directory mounted" "$want_out" 3
	measure "px-$rel-mounted" "$d, library and step directory mounted" exact "pyxis $sq"

	[ "$rel" != "$KIDS_RELEASE" ] ||
		kids_cases "px-$rel-kids" "$d" "$rel" "${ROOT[$rel]}" "pyxis $sq" --container-image="$sq" \
			--container-mounts="$KIDS:$KIDS:ro,$KIDS_PY:$KIDS_PY:ro"
	diag "time: $d $((SECONDS - t0)) s"
done

# ---------------------------------------------------------------- measured

check_measured

diag "time: children cases (included above) $KIDS_TIME s"
diag "time: whole test $((SECONDS - t_start)) s"
kids_cleanup
done_testing
