#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# liblwm2.so and liblwm2cuda.so load with glibc 2.17 and newer.
#
# They are preloaded into the programs of container images whose glibc may
# be older than the build host's; a library that needs a symbol version the
# image's libc lacks stops every program there at its start ("version
# `GLIBC_2.33' not found").  From the built libraries' dynamic symbol
# tables (objdump -T): no import newer than GLIBC_2.17, each one named
# (preload/glibc_compat.h says how to bind it); and from their dynamic
# sections (readelf -d): the libraries they need are ones every image has;
# liblwm2.so needs neither libpthread.so.0 nor libdl.so.2 and imports the
# functions that lived there before glibc 2.34 as weak references, while
# liblwm2cuda.so, loaded into CUDA programs only, loads libdl.so.2.
set -u
: "${LWM2_LIB:?}" "${LWM2_SRCDIR:?}"
# shellcheck source=tests/tap.sh
. "$LWM2_SRCDIR/tests/tap.sh"

case ${LWM2_SANITIZER:-no} in
no | '') ;;
*) skip_all "a -fsanitize=$LWM2_SANITIZER build: the sanitizer runtime needs a newer glibc itself" ;;
esac
case $(uname -m) in
x86_64) ;;
*) skip_all "glibc_compat.h binds the versions of x86_64 only (this is $(uname -m))" ;;
esac
for tool in objdump readelf; do
	command -v $tool >/dev/null || skip_all "$tool is not installed (binutils)"
done

tmp=$(mktemp -d /tmp/lwm2-glibc-XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# too_new SYMS: "NAME (GLIBC_x.y)" for each symbol of an objdump -T listing
# with a version after GLIBC_2.17 (or a GLIBC_ version that is no number),
# one per line.  objdump -T prints the version before the name, in
# parentheses where it is not the default one.
too_new() {
	awk '
		NF >= 2 && $(NF - 1) ~ /^\(?GLIBC_[0-9A-Z.]+\)?$/ {
			v = $(NF - 1); gsub(/[()]/, "", v)
			split(substr(v, 7), p, ".")
			if (v !~ /^GLIBC_[0-9.]+$/ || p[1] > 2 || (p[1] == 2 && p[2] > 17))
				print $NF " (" v ")"
		}' "$1" | sort -u
}

# needed LIB: its NEEDED libraries, one per line.
needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# check_lib LIB NAME ALLOWED_RE REQUIRED...: the points for one library.
check_lib() {
	local lib=$1 name=$2 allowed=$3 newest new extra lack r
	shift 3
	if [ ! -f "$lib" ]; then
		not_ok "$name is built ($lib)"
		return
	fi
	# A listing without a single GLIBC_ version would pass for nothing.
	if ! objdump -T "$lib" >"$tmp/syms" || ! grep -q 'GLIBC_2\.2\.5' "$tmp/syms"; then
		not_ok "objdump -T lists $name's imports with their versions"
		diag "$(head -n 5 "$tmp/syms")"
		return
	fi
	newest=$(grep -o 'GLIBC_[0-9.]*' "$tmp/syms" | sort -uV | tail -n 1)
	new=$(too_new "$tmp/syms")
	if [ -z "$new" ]; then
		ok "$name imports no symbol version after GLIBC_2.17 (newest: $newest)"
	else
		not_ok "$name imports no symbol version after GLIBC_2.17 (newest: $newest)"
		diag "$name needs a newer glibc for:" "$new" \
			"bind each in preload/glibc_compat.h (its glibc 2.17 version) or define it in preload/glibc_compat.c"
	fi
	extra=$(needed "$lib" | grep -Ev "^($allowed)\$" | tr '\n' ' ')
	is "$extra" "" "$name needs no library a minimal image lacks ($(needed "$lib" | tr '\n' ' '))"
	[ $# -gt 0 ] || return
	lack=""
	for r in "$@"; do
		needed "$lib" | grep -qxF "$r" || lack="$lack$r "
	done
	if [ -z "$lack" ]; then
		ok "$name loads $* beside libc"
	else
		not_ok "$name loads $* beside libc"
		diag "not NEEDED: $lack(preload/Makefile.am, GLIBC_COMPAT_NEEDED)"
	fi
}

# The functions an old libc.so.6 lacks, from glibc_compat.h's table.
old_libc_lacks() {
	sed -n '/^#define LWM2_OLD_LIBC_LACKS/,/^$/s/.*X(\([a-z_0-9]*\)).*/\1/p' \
		"$LWM2_SRCDIR/preload/glibc_compat.h"
}

# check_weak LIB NAME: each of those it imports is a weak reference (an
# ordinary one stops a program without libpthread.so.0 or libdl.so.2 at
# its first call, "symbol lookup error"), and liblwm2.so loads neither.
check_weak() {
	local lib=$1 name=$2 fn strong="" n=0
	for fn in $(old_libc_lacks); do
		n=$((n + 1))
		grep -E "[[:space:]]$fn\$" "$tmp/syms" | grep -q 'UND' || continue
		grep -E "[[:space:]]$fn\$" "$tmp/syms" | grep -qE '^[0-9a-f]+ +w ' || strong="$strong$fn "
	done
	if [ "$n" -ge 10 ] && [ -z "$strong" ]; then
		ok "$name imports the $n functions an old libc.so.6 lacks as weak references"
	else
		not_ok "$name imports the $n functions an old libc.so.6 lacks as weak references"
		diag "not weak: ${strong:-(the table in glibc_compat.h was not read)}"
	fi
	is "$(needed "$lib" | grep -E '^(libpthread\.so\.0|libdl\.so\.2)$' | tr '\n' ' ')" "" \
		"$name needs neither libpthread.so.0 nor libdl.so.2 (every process start would open and map them)"
}

base='libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libm\.so\.6|ld-linux-x86-64\.so\.2'
check_lib "$LWM2_LIB" liblwm2.so "$base"
check_weak "$LWM2_LIB" liblwm2.so
# In an old glibc's program that loads neither library (dash, dd: one
# thread, no dlopen), where the weak imports are null: the suite's Debian 11
# image (tests/containers/image.sh), entered with chroot.
old_image() {
	local img=${LWM2_IMAGE_CACHE:-/var/cache/lwm2-suite/images}/bullseye dir out rc
	[ -x "$img/bin/sh" ] || {
		skip_because "a single-threaded program of glibc 2.31 measured" "no Debian 11 image at $img (the suite's images stage makes it)"
		return
	}
	if [ "$(id -u)" != 0 ] || ! command -v chroot >/dev/null; then
		skip_because "a single-threaded program of glibc 2.31 measured" "chroot needs root"
		return
	fi
	dir=$(mktemp -d "$img/tmp/lwm2-glibc-XXXXXX") || bail_out "mktemp in $img failed"
	cp "$LWM2_LIB" "$dir/liblwm2.so"
	out=$(chroot "$img" env LD_PRELOAD="${dir#"$img"}/liblwm2.so" LWM2_DIR="${dir#"$img"}" \
		/bin/sh -c 'dd if=/dev/zero of=/tmp/lwm2-glibc-dd bs=1024 count=100 status=none && echo done' 2>&1)
	rc=$?
	is "$rc:$out" "0:done" "a Debian 11 shell and dd under liblwm2.so: same output, exit 0, no loader message"
	out=$("$LWM2_BUILDDIR/digest/lwm2" merge "$dir" 2>&1 | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["totals"]["processes"], d["totals"]["c"][d["counters"].index("posix_write_bytes")])' 2>&1)
	is "$out" "2 102400" "both processes counted, and dd's 102,400 bytes written to a file"
	rm -rf "$dir" "$img/tmp/lwm2-glibc-dd"
}
old_image

if [ -n "${LWM2_CUDA_LIB:-}" ]; then
	# CUPTI's own library, where the CUDA driver loads the injection
	# library: it comes with the CUDA installation, as today.
	check_lib "$LWM2_CUDA_LIB" liblwm2cuda.so "$base|libcupti\.so(\.[0-9.]+)?" libdl.so.2
else
	skip_because "liblwm2cuda.so's symbol versions and libraries" "liblwm2cuda.so is not built (no CUPTI)"
fi
done_testing
