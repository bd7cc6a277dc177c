#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An exec into another root (a container) passes lwm2's LD_PRELOAD entry
# on as the library's own path where that is the library, as
# /proc/self/fd/N where the step's descriptor still is, or not at all, so
# the loader never prints an error; it names the container; records go
# through the step's directory descriptor where LWM2_DIR is not there.
# "Another root" is made by giving LWM2_ROOT an identity "/" does not
# have: the rewriting is the same as under a real runtime (the container
# integration test runs those).
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}"
LWM2=$LWM2_BUILDDIR/digest/lwm2
tmp=$(mktemp -d /tmp/lwm2-container-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset LWM2_MODE LWM2_PRINT LWM2_DIR LWM2_SLICE LWM2_SLICE_MS LWM2_DEBUG LWM2_SIGNAL LWM2_ROOT_PPID
unset LWM2_PARENT LWM2_ROOT LWM2_LIB_FD LWM2_DIR_FD LWM2_CONTAINER LWM2_SHORT_MS
export LC_ALL=C
case ${LWM2_SANITIZER:-no} in
*address*|*thread*) skip_all "preloading into uninstrumented programs under -fsanitize" ;;
esac
for p in bash python3 stat; do
	command -v $p >/dev/null || skip_all "$p not installed"
done
[ -x "$LWM2" ] || skip_all "lwm2 not built"
[ -d /proc/self/fd ] || skip_all "no /proc"

ident() { stat -L -c '%d:%i' "$1"; }
# written STEPDIR: the bytes written to files that its records count.
written() {
	"$LWM2" merge "$1" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
c = r["counters"]
print(r["totals"]["c"][c.index("posix_write_bytes")])'
}
real_root=$(ident /)
other_root=1:1 # no file system has inode 1 as its root
[ "$real_root" != "$other_root" ] || skip_all "/ has the identity 1:1"
FD=905

# A copy of the library that the first process loads, then removes: in
# the "container" its path is gone, as a host path is under a runtime.
lib=$tmp/lib/liblwm2.so
mkdir -p "$tmp/lib"
cp "$LWM2_LIB" "$lib"
lib_id=$FD:$(ident "$lib")

# inside OUT ERR PRELOAD-FD-OPEN CMD...: run CMD after removing the copy,
# with the library loaded into the shell that execs CMD.
inside() {
	local out=$1 err=$2 keep_fd=$3
	shift 3
	cp "$LWM2_LIB" "$lib"
	lib_id=$FD:$(ident "$lib")
	if [ "$keep_fd" = yes ]; then
		LD_PRELOAD=$lib LWM2_ROOT=$other_root LWM2_LIB_FD=$lib_id \
			bash -c 'rm -f "$0"; exec "$@"' "$lib" "$@" >"$out" 2>"$err" 905<"$lib"
	else
		LD_PRELOAD=$lib LWM2_ROOT=$other_root LWM2_LIB_FD=$lib_id \
			bash -c 'rm -f "$0"; exec "$@"' "$lib" "$@" >"$out" 2>"$err"
	fi
}

# 1. The path is gone, the descriptor is there: /proc/self/fd/N.
inside "$tmp/o1" "$tmp/e1" yes env
check "descriptor open: LD_PRELOAD becomes /proc/self/fd/$FD" \
	grep -qx "LD_PRELOAD=/proc/self/fd/$FD" "$tmp/o1"
check "descriptor open: nothing on stderr" test ! -s "$tmp/e1"
check "descriptor open: the container is named (runtime: the program that exec'd)" \
	grep -qx 'LWM2_CONTAINER=bash:' "$tmp/o1"
# ... and the image that got it has the library loaded from there.
inside "$tmp/o1b" "$tmp/e1b" yes bash -c 'grep -c "/proc/self/fd/905\|liblwm2" /proc/$$/maps'
check "descriptor open: the new image has the library mapped" test "$(cat "$tmp/o1b")" -gt 0

# 2. Neither the path nor the descriptor: the entry goes, and so no
# loader error in the new image.
inside "$tmp/o2" "$tmp/e2" no env
check "nothing left: LD_PRELOAD taken out" bash -c "! grep -q '^LD_PRELOAD=' '$tmp/o2'"
check "nothing left: nothing on stderr (no loader error)" test ! -s "$tmp/e2"
# ... and the shell that exec'd counts the process it started unmeasured
# (its record in a step directory the host path reaches)
mkdir -p "$tmp/step2"
LWM2_DIR=$tmp/step2 inside "$tmp/o2c" "$tmp/e2c" no env
check "nothing left: the process counted as started unmeasured in a container" \
	test "$("$LWM2" merge "$tmp/step2" 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["totals"].get("unmeasured"))')" = "{'container': 1}"

# 3. The user's own entries stay, in their order.
: >"$tmp/user1.so"
cp "$LWM2_LIB" "$lib"
lib_id=$FD:$(ident "$lib")
LD_PRELOAD="$lib:libc.so.6" LWM2_ROOT=$other_root LWM2_LIB_FD=$lib_id \
	bash -c 'rm -f "$0"; exec env' "$lib" >"$tmp/o3" 2>"$tmp/e3" 905<"$lib"
check "user's entries: kept after lwm2's" grep -qx "LD_PRELOAD=/proc/self/fd/$FD:libc.so.6" "$tmp/o3"

# 4. The descriptor is another file now (the application reused the
# number): not used.
cp "$LWM2_LIB" "$lib"
lib_id=$FD:$(ident "$lib")
LD_PRELOAD=$lib LWM2_ROOT=$other_root LWM2_LIB_FD=$lib_id \
	bash -c 'rm -f "$0"; exec env' "$lib" >"$tmp/o4" 2>"$tmp/e4" 905</dev/null
check "descriptor reused for another file: entry taken out" bash -c "! grep -q '^LD_PRELOAD=' '$tmp/o4'"
check "descriptor reused for another file: nothing on stderr" test ! -s "$tmp/e4"

# 5. The same root as the step's: nothing is touched.
LD_PRELOAD=$LWM2_LIB LWM2_ROOT=$real_root LWM2_LIB_FD=$lib_id env >"$tmp/o5" 2>"$tmp/e5"
check "same root: LD_PRELOAD as it was" grep -qx "LD_PRELOAD=$LWM2_LIB" "$tmp/o5"
check "same root: no container named" bash -c "! grep -q '^LWM2_CONTAINER=' '$tmp/o5'"

# 6. A first process started by hand notes its root for its children.
LD_PRELOAD=$LWM2_LIB LWM2_MODE=on bash -c 'env' >"$tmp/o6" 2>/dev/null
check "by hand: LWM2_ROOT is the root's identity" grep -qx "LWM2_ROOT=$real_root" "$tmp/o6"

# 7. Records through the directory descriptor: LWM2_DIR names a
# directory that is not there (as the host's is not, inside); the
# process's record and the summary of its short children arrive in the
# step directory all the same.
step=$tmp/step
mkdir -p "$step"
LD_PRELOAD=$LWM2_LIB LWM2_DIR=$tmp/not-here LWM2_DIR_FD=906:$(ident "$step") \
	bash -c 'for i in 1 2 3; do head -c 1000 /dev/zero >"$0/f$i"; done' "$tmp" 906<"$step"
check "directory descriptor: records arrive in the step directory" \
	test "$(find "$step" -type f | wc -l)" -ge 1
check "directory descriptor: nothing made at LWM2_DIR's path" test ! -e "$tmp/not-here"
check "directory descriptor: every byte written counted (3000)" test "$(written "$step")" = 3000

# 8. The descriptor names another directory: not used, nothing written.
other=$tmp/other
mkdir -p "$other"
LD_PRELOAD=$LWM2_LIB LWM2_DIR=$tmp/not-here LWM2_DIR_FD=906:$(ident "$step") \
	bash -c 'head -c 10 /dev/zero >/dev/null' 906<"$other" 2>"$tmp/e8"
check "descriptor of another directory: nothing written there" \
	test "$(find "$other" -type f | wc -l)" -eq 0
check "descriptor of another directory: the program is quiet" test ! -s "$tmp/e8"

# 9. A launcher that closes what it inherited before it execs (close on
# every number of /proc/self/fd, close_range, closefrom, close_range with
# CLOSE_RANGE_CLOEXEC), inside a "container": its child is measured
# through the descriptors all the same, and what it closed looks closed
# to it (the program checks: F_GETFD fails, the next open gets 3).
# Outside a container the same launcher's close_range closes them.
CLOSEFDS=$LWM2_BUILDDIR/preload/test/closefds
for how in close close_range closefrom cloexec; do
	step=$tmp/step-$how
	mkdir -p "$step"
	cp "$LWM2_LIB" "$lib"
	LD_PRELOAD=$lib LWM2_ROOT=$other_root LWM2_LIB_FD=$FD:$(ident "$lib") \
		LWM2_DIR=$tmp/not-here LWM2_DIR_FD=906:$(ident "$step") LWM2_SHORT_MS=0 \
		CLOSEFDS_KEPT="$FD 906" bash -c 'rm -f "$0"; exec "$@"' "$lib" \
		"$CLOSEFDS" "$how" "$tmp/out-$how" 5000 2>"$tmp/e-$how" 905<"$lib" 906<"$step"
	check "closed by $how: the launcher saw its descriptors closed, and ran its child" \
		test $? -eq 0 -a -s "$tmp/out-$how"
	check "closed by $how: nothing on stderr" test ! -s "$tmp/e-$how"
	check "closed by $how: the child's 5000 bytes counted" test "$(written "$step")" = 5000
done
step=$tmp/step-host
mkdir -p "$step"
LD_PRELOAD=$LWM2_LIB LWM2_DIR=$tmp/not-here LWM2_DIR_FD=906:$(ident "$step") \
	"$CLOSEFDS" close_range "$tmp/out-host" 5000 906<"$step"
check "outside a container: close_range closes them as it always did (the child unmeasured)" \
	test "$(written "$step")" = 0

# 10. A parent that ends its children with SIGTERM as they end on their
# own (a pool's exit): a signal that comes while a child writes its final
# record waits until it is written.  Records through the directory
# descriptor, to the step's summary and to record files of their own.
for short in 1000 0; do
	step=$tmp/step-term$short
	mkdir -p "$step" "$tmp/data-term"
	# Its report through a pipe: bytes written to a file would count.
	out=$(LD_PRELOAD=$LWM2_LIB LWM2_DIR=$tmp/not-here LWM2_DIR_FD=906:$(ident "$step") \
		LWM2_SHORT_MS=$short "$CLOSEFDS" term "$tmp/data-term" 4096 906<"$step")
	check "children ended by SIGTERM (LWM2_SHORT_MS=$short): the parent ran them all ($out)" \
		test "${out#exited }" != "$out"
	check "children ended by SIGTERM (LWM2_SHORT_MS=$short): every byte counted (32 x 4096)" \
		test "$(written "$step")" = $((32 * 4096))
	check "children ended by SIGTERM (LWM2_SHORT_MS=$short): every process counted (33)" \
		test "$("$LWM2" merge "$step" 2>/dev/null | python3 -c '
import json, sys
print(sum(e["processes"] for e in json.load(sys.stdin)["exes"]))')" = 33
	# A child whose SIGTERM came while its final record was written ends
	# by it once written: its record (or the summary) says it was
	# signaled, as the parent saw it.
	check "children ended by SIGTERM (LWM2_SHORT_MS=$short): the node record's signaled count is the parent's" \
		test "$("$LWM2" merge "$step" 2>/dev/null | python3 -c '
import json, sys
procs = json.load(sys.stdin)["procs"]
print(sum(p["signaled"] if p["flags"] & 2048 else (p["flags"] & 16) // 16 for p in procs))')" \
		= "${out##* }"
done

# 11. A container without sysfs: /sys is a plain directory of the image,
# on the device the files written are on.  Its files are still files.
if command -v bwrap >/dev/null && bwrap --ro-bind / / --dev /dev true 2>/dev/null; then
	mkdir -p "$tmp/nosys" "$tmp/data" "$tmp/step9"
	LD_PRELOAD=$LWM2_LIB LWM2_DIR=$tmp/step9 LWM2_SHORT_MS=0 \
		bwrap --ro-bind / / --bind "$tmp/data" "$tmp/data" --bind "$tmp/step9" "$tmp/step9" \
		--ro-bind "$tmp/nosys" /sys --proc /proc --dev /dev \
		bash -c 'head -c 5000 /dev/zero >"$0/f"' "$tmp/data"
	check "no sysfs at /sys (a plain directory of the image): file writes counted (5000)" \
		test "$(written "$tmp/step9")" = 5000
else
	skip "no sysfs at /sys: bubblewrap is not installed or cannot make namespaces here"
fi

done_testing
