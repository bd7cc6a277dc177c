#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Containerized jobs on the private cluster, jobs of the unprivileged test
# user: lwm2 must never break or change the output of a job that runs in a
# container, and must measure it.  For each runtime (Charliecloud ch-run,
# bubblewrap, rootless podman) and each image (Debian 11 "bullseye",
# glibc 2.31; Debian 12 "bookworm"; tests/containers/image.sh), the same
# step runs with `srun --lwm2=off` and with `srun --lwm2`, and
#
#   - stdout, stderr and the exit status are identical (no loader message,
#     no failed start: the library is not in the image, or needs a newer
#     glibc than the image's, or /proc is not mounted), the step takes no
#     longer and leaves no process behind;
#   - the job's digest has the bytes the payload wrote inside the
#     container (dd: 102400) and counts its processes;
#
# with the library also bound into the image at its own path; bubblewrap
# without /proc (unmeasured, unchanged); the static binary of the image (no
# loader, never measured) prints the same; a batch job and `lwm2 run --
# ch-run ...` outside Slurm; podman, which passes no environment (unchanged,
# unmeasured), with the caller's LD_PRELOAD and LWM2_* passed in
# (unchanged), and set up as spank_lwm2(8) says (measured); jobs whose
# children lwm2 must measure (container-lib.sh's kids_cases, three runs a
# step): a launcher whose four children close what they inherited (close
# over /proc/self/fd, close_range, closefrom, nothing) before they exec
# dd, one that starts them by posix_spawn, Python's multiprocessing Pool
# (fork, spawn, forkserver) and subprocess.run, all in bookworm under
# each runtime and the Python ones in bullseye under ch-run too: the
# digest has their bytes exactly and counts their processes.  Each point
# names runtime, image and case.  A runtime or image the host cannot give
# is skipped with the reason.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

need_python3
command -v gcc >/dev/null || skip_all "gcc not installed: it builds the images' static binary"
jobcomp_setup

RUN=$(basename "$TESTDIR")
U=$TESTDIR/$TEST_USER
RELEASES=(bullseye bookworm)
# Under ch-run, /tmp is the host's: the file has a name of this run's.
F=/tmp/lwm2-ctr.$RUN
PAYLOAD="dd if=/dev/zero of=$F bs=4096 count=25 status=none; cat /etc/debian_version; echo done; ls /nonexistent; exit 3"
BYTES=102400
STATIC=/usr/local/bin/lwm2-static-echo
t_start=$SECONDS

# ---------------------------------------------------------------- helpers
# shellcheck source=tests/integration/container-lib.sh
. "$(dirname "$0")/container-lib.sh"

# ---------------------------------------------------------------- images

# The images (made once per machine, tests/suite.sh's images stage) and,
# where podman is, their tars for `podman import`.
declare -A IMG=() IMG_WHY=() VER=() TARID=() BIMG=()
tarflag=()
command -v podman >/dev/null && tarflag=(--tar)
for rel in "${RELEASES[@]}"; do
	t0=$SECONDS
	if out=$(bash "$LWM2_TOP/tests/containers/image.sh" "${tarflag[@]}" "$rel" 2>&1); then
		path=$(tail -n 1 <<<"$out")
		if [ ${#tarflag[@]} -gt 0 ]; then
			IMG[$rel]=${path%.tar}
			TARID[$rel]=$(cat "$path.id")
		else
			IMG[$rel]=$path
		fi
		VER[$rel]=$(cat "${IMG[$rel]}/etc/debian_version")
		# The same image with a mount point for the library at its
		# host path (ch-run and bwrap bind only onto what exists): a copy
		# of hard links, this test's own.
		BIMG[$rel]=$TESTDIR/img/$rel
		mkdir -p "$TESTDIR/img"
		if ! cp -al "${IMG[$rel]}" "${BIMG[$rel]}" 2>/dev/null; then
			rm -rf "${BIMG[$rel]}"
			cp -a "${IMG[$rel]}" "${BIMG[$rel]}"
		fi
		mkdir -p "${BIMG[$rel]}$LIBDIR"
		chmod 755 "$TESTDIR/img" "${BIMG[$rel]}"
		diag "image $rel (Debian ${VER[$rel]}): ${IMG[$rel]} ($((SECONDS - t0)) s)"
	else
		IMG_WHY[$rel]="no $rel image: $(tail -n 1 <<<"$out")"
		diag "tests/containers/image.sh $rel failed:" "$out"
	fi
done

# Children that lwm2 must measure (container-lib.sh's kids_cases); under
# ch-run /tmp is the host's, the other runtimes bind the programs in.
kids_setup "$F"

# ---------------------------------------------------------------- host

# The payload on the host, no container: what the container cases are
# held against (its process count is the least a container case counts).
step_pair native sh -c "$PAYLOAD"
identical native "host (no container)" "$(printf '%s\ndone' "$(cat /etc/debian_version)")" 3
NATIVE_PROCS=4
measure native "host (no container)" exact none

# ---------------------------------------------------------------- runtimes

# Each runtime answers a trivial command as the test user, outside Slurm,
# or its cases are skipped with its error.
probe() {
	local out
	if out=$(as_user timeout 60 "$@" 2>&1); then
		return 0
	fi
	echo "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200)"
	return 1
}

declare -A RT_WHY=() RT_TIME=()
any_img=""
for rel in "${RELEASES[@]}"; do
	[ -n "${IMG[$rel]:-}" ] && any_img=${IMG[$rel]} && break
done

if ! command -v ch-run >/dev/null; then
	RT_WHY[ch-run]="ch-run not installed (charliecloud-runtime; contrib/install-deps.sh)"
elif [ -n "$any_img" ] && ! why=$(probe ch-run "$any_img" -- true); then
	RT_WHY[ch-run]="ch-run cannot run here: $why"
fi
if ! command -v bwrap >/dev/null; then
	RT_WHY[bwrap]="bwrap not installed (bubblewrap; contrib/install-deps.sh)"
elif [ -n "$any_img" ] && ! why=$(probe bwrap --ro-bind "$any_img" / --proc /proc --dev /dev \
	--tmpfs /tmp --unshare-user --unshare-pid true); then
	RT_WHY[bwrap]="bwrap cannot run here: $why"
fi

# Rootless podman: a storage of the test's own in the user's home (kept,
# so an image is imported once per machine), native overlay else vfs; the
# distribution's runtime (crun) else runc (crun refuses hybrid cgroup
# hierarchies); no network (slirp4netns needs /dev/net/tun).
PODMAN=()
if ! command -v podman >/dev/null; then
	RT_WHY[podman]="podman not installed (contrib/install-deps.sh)"
elif [ -z "$any_img" ]; then
	RT_WHY[podman]="no image"
else
	uid=$(id -u "$TEST_USER")
	home=$(getent passwd "$TEST_USER" | cut -d: -f6)
	errs=""
	for driver in overlay vfs; do
		base=(podman --root "$home/.local/share/lwm2-test-podman/$driver"
			--runroot "/tmp/lwm2-test-podman-run.$uid.$driver" --storage-driver "$driver")
		rel=""
		for r in "${RELEASES[@]}"; do [ -n "${IMG[$r]:-}" ] && rel=$r && break; done
		tag=localhost/lwm2-test-$rel:${TARID[$rel]}
		if ! as_user "${base[@]}" image exists "$tag" 2>/dev/null &&
			! why=$(probe "${base[@]}" import -q "${IMG[$rel]}.tar" "$tag"); then
			errs+="$driver: import: $why; "
			continue
		fi
		for runtime in "" runc; do
			cmd=("${base[@]}")
			[ -n "$runtime" ] && cmd+=(--runtime "$runtime")
			if why=$(probe "${cmd[@]}" run --rm --network=none "$tag" true); then
				PODMAN=("${cmd[@]}")
				break 2
			fi
			errs+="$driver ${runtime:-default runtime}: $why; "
		done
	done
	if [ ${#PODMAN[@]} -eq 0 ]; then
		RT_WHY[podman]="rootless podman cannot run here: ${errs%; }"
	elif [ -n "$errs" ]; then
		diag "podman: ${PODMAN[*]:1} (not: ${errs%; })"
	fi
fi

# ---------------------------------------------------------------- cases

for rel in "${RELEASES[@]}"; do
	img=${IMG[$rel]:-}
	bimg=${BIMG[$rel]:-}
	want_out=$(printf '%s\ndone' "${VER[$rel]:-?}")
	static_out="lwm2-static-echo: wrote $BYTES bytes to $F.static"

	# --- Charliecloud
	t0=$SECONDS
	why=${IMG_WHY[$rel]:-${RT_WHY[ch-run]:-}}
	d="ch-run $rel"
	if [ -n "$why" ]; then
		for c in "" ", library bound at its path" ", static binary" ", batch job" \
			", outside Slurm (lwm2 run)"; do
			skip_identical "$d$c" "$why"
			[ "$c" = ", static binary" ] || skip_measured "$d$c" "$why"
		done
		[ "$rel" != "$KIDS_RELEASE" ] || kids_skip "$d" "$rel" "$why"
	else
		step_pair "ch-$rel" ch-run "$img" -- sh -c "$PAYLOAD"
		identical "ch-$rel" "$d" "$want_out" 3
		measure "ch-$rel" "$d" exact "charliecloud $img"

		step_pair "ch-$rel-bound" ch-run -b "$LIBDIR:$LIBDIR" "$bimg" -- sh -c "$PAYLOAD"
		identical "ch-$rel-bound" "$d, library bound at its path" "$want_out" 3
		measure "ch-$rel-bound" "$d, library bound at its path" exact "charliecloud $bimg"

		step_pair "ch-$rel-static" ch-run "$img" -- "$STATIC" "$F.static" "$BYTES"
		identical "ch-$rel-static" "$d, static binary" "$static_out" 0

		batch_pair "ch-$rel-batch" "ch-run $img -- sh -c '$PAYLOAD'"
		identical "ch-$rel-batch" "$d, batch job" "$want_out" 3:0
		measure "ch-$rel-batch" "$d, batch job" dd "charliecloud $img"

		outside_pair "ch-$rel-run" ch-run "$img" -- sh -c "$PAYLOAD"
		identical "ch-$rel-run" "$d, outside Slurm (lwm2 run)" "$want_out" 3
		measure "ch-$rel-run" "$d, outside Slurm (lwm2 run)" run "charliecloud $img"

		kids_cases "ch-$rel-kids" "$d" "$rel" "$img" "charliecloud $img" ch-run "$img" --
		RT_TIME[ch-run]=$((${RT_TIME[ch-run]:-0} + SECONDS - t0))
	fi

	# --- bubblewrap
	t0=$SECONDS
	why=${IMG_WHY[$rel]:-${RT_WHY[bwrap]:-}}
	d="bwrap $rel"
	bw=(bwrap --ro-bind "$img" / --proc /proc --dev /dev --tmpfs /tmp --unshare-user --unshare-pid)
	if [ -n "$why" ]; then
		for c in "" ", no /proc" ", library bound at its path" ", static binary"; do
			skip_identical "$d$c" "$why"
			case $c in "" | ", library bound at its path") skip_measured "$d$c" "$why" ;; esac
		done
		[ "$rel" != "$KIDS_RELEASE" ] || kids_skip "$d" "$rel" "$why"
	else
		step_pair "bw-$rel" "${bw[@]}" sh -c "$PAYLOAD"
		identical "bw-$rel" "$d" "$want_out" 3
		measure "bw-$rel" "$d" exact "bubblewrap $img"

		# Without /proc the library cannot be reached through its
		# descriptor: it must stay out without a trace.
		step_pair "bw-$rel-noproc" bwrap --ro-bind "$img" / --dev /dev --tmpfs /tmp \
			--unshare-user --unshare-pid sh -c "$PAYLOAD"
		identical "bw-$rel-noproc" "$d, no /proc" "$want_out" 3

		step_pair "bw-$rel-bound" bwrap --ro-bind "$bimg" / --ro-bind "$LIBDIR" "$LIBDIR" \
			--proc /proc --dev /dev --tmpfs /tmp --unshare-user --unshare-pid sh -c "$PAYLOAD"
		identical "bw-$rel-bound" "$d, library bound at its path" "$want_out" 3
		measure "bw-$rel-bound" "$d, library bound at its path" exact "bubblewrap $bimg"

		step_pair "bw-$rel-static" "${bw[@]}" "$STATIC" "$F.static" "$BYTES"
		identical "bw-$rel-static" "$d, static binary" "$static_out" 0

		[ "$rel" != "$KIDS_RELEASE" ] ||
			kids_cases "bw-$rel-kids" "$d" "$rel" "$img" "bubblewrap $img" \
				"${bw[@]}" --ro-bind "$KIDS" "$KIDS" --ro-bind "$KIDS_PY" "$KIDS_PY"
		RT_TIME[bwrap]=$((${RT_TIME[bwrap]:-0} + SECONDS - t0))
	fi

	# --- podman, rootless
	t0=$SECONDS
	why=${IMG_WHY[$rel]:-${RT_WHY[podman]:-}}
	d="podman $rel"
	if [ -z "$why" ]; then
		tag=localhost/lwm2-test-$rel:${TARID[$rel]}
		if ! as_user "${PODMAN[@]}" image exists "$tag" 2>/dev/null &&
			! why=$(probe "${PODMAN[@]}" import -q "$img.tar" "$tag"); then
			why="podman import of the $rel image failed: $why"
		fi
	fi
	if [ -n "$why" ]; then
		for c in "" ", LD_PRELOAD and LWM2_* passed in" ", as spank_lwm2(8) says"; do
			skip_identical "$d$c" "$why"
			[ "$c" = ", as spank_lwm2(8) says" ] && skip_measured "$d$c" "$why"
		done
		[ "$rel" != "$KIDS_RELEASE" ] || kids_skip "$d" "$rel" "$why"
	else
		pr=("${PODMAN[@]}" run --rm --network=none --log-driver=none)
		# podman passes no environment unless asked: the container runs
		# unmeasured, and unchanged.
		step_pair "pm-$rel" "${pr[@]}" "$tag" sh -c "$PAYLOAD"
		identical "pm-$rel" "$d" "$want_out" 3

		# The caller's LD_PRELOAD passed in, the library not: the
		# loader must not print.  Only where the OCI runtime starts the
		# container's process through libc's exec, which lwm2 wraps:
		# runc (Go) makes the system call itself, and a host path passed
		# in by hand reaches the image's loader as it is (spank_lwm2(8)).
		if [[ " ${PODMAN[*]} " == *" --runtime runc "* ]]; then
			skip_identical "$d, LD_PRELOAD and LWM2_* passed in" \
				"runc starts the container's process without libc's exec: lwm2 cannot see it"
		else
			step_pair "pm-$rel-env" "${pr[@]}" --env LD_PRELOAD --env 'LWM2_*' "$tag" sh -c "$PAYLOAD"
			identical "pm-$rel-env" "$d, LD_PRELOAD and LWM2_* passed in" "$want_out" 3
		fi

		# Measured as spank_lwm2(8) says: the environment passed, the
		# library and the step directories bound.
		step_pair "pm-$rel-doc" "${pr[@]}" --env-host -v "$LIBDIR:$LIBDIR:ro" -v "$BASEDIR:$BASEDIR" \
			"$tag" sh -c "$PAYLOAD"
		identical "pm-$rel-doc" "$d, as spank_lwm2(8) says" "$want_out" 3
		# A rootless container does not tell its image (podman fills
		# /run/.containerenv for --privileged ones only): the runtime.
		measure "pm-$rel-doc" "$d, as spank_lwm2(8) says" dd "podman "

		# The children, set up the same way, the programs bound in.
		[ "$rel" != "$KIDS_RELEASE" ] ||
			kids_cases "pm-$rel-kids" "$d, as spank_lwm2(8) says" "$rel" "$img" "podman " \
				"${pr[@]}" --env-host -v "$LIBDIR:$LIBDIR:ro" -v "$BASEDIR:$BASEDIR" \
				-v "$KIDS:$KIDS:ro" -v "$KIDS_PY:$KIDS_PY:ro" "$tag"
		RT_TIME[podman]=$((${RT_TIME[podman]:-0} + SECONDS - t0))
	fi
done

# ---------------------------------------------------------------- measured

# Every measured job's digest, within one wait for all of them.
check_measured

for rt in ch-run bwrap podman; do
	diag "time: $rt ${RT_TIME[$rt]:-0} s${RT_WHY[$rt]:+ (skipped: ${RT_WHY[$rt]})}"
done
diag "time: children cases (included above) $KIDS_TIME s"
diag "time: whole test $((SECONDS - t_start)) s"
rm -rf "$TESTDIR/img"
rm -f "$F" "$F.static"
kids_cleanup

done_testing
