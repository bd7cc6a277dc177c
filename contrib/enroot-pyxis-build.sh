#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build NVIDIA's enroot and pyxis (neither is packaged in Debian) from their
# sources, so that lwm2 is tested with the Slurm container path
# (`srun --container-image=...`, tests/integration/t-pyxis.sh).
#
#   contrib/enroot-pyxis-build.sh [ENROOT-SRC PYXIS-SRC]
#
# ENROOT-SRC and PYXIS-SRC (default: $LWM2_ENROOT_SRC, $LWM2_PYXIS_SRC) are
# source trees (git clone, a release's tar extracted) or bare git
# directories (their HEAD is built).  pyxis is built against the Slurm of
# LWM2_SLURM_PREFIX (its include/slurm/spank.h; default /usr, the
# machine's libslurm-dev): Slurm refuses a SPANK plugin built against
# another release's headers.  Results, reused while sources and flags are
# the same:
#
#   CACHE/enroot-VERSION/             enroot installed there (bin, etc, lib)
#   CACHE/pyxis-VERSION-slurm-SLURMVERSION/spank_pyxis.so
#
# with CACHE ${LWM2_ENROOT_PYXIS_CACHE:-/var/cache/lwm2-suite/enroot-pyxis}.
# The last line of output is
#   ENROOT_PREFIX=<dir> PYXIS_PLUGIN=<file>
#
# enroot's helpers are linked statically against musl, as its releases
# are, from its git submodules (deps/musl, deps/linux-headers,
# deps/makeself) where the tree has them (`git clone
# --recurse-submodules`); for one that is empty (a bare git directory, a
# plain `git clone`) Debian's package stands in: musl-tools (its musl-gcc
# with the static-PIE rule of enroot's deps/musl.patch), linux-libc-dev,
# makeself.  Debian packages needed: make gcc musl-tools linux-libc-dev
# makeself libcap2-bin to build; bash jq squashfs-tools parallel pigz to
# run (contrib/install-deps.sh).
set -euo pipefail

die() {
	echo "enroot-pyxis-build: $*" >&2
	exit 1
}
say() { echo "enroot-pyxis-build: $*"; }

[ $# -eq 0 ] || [ $# -eq 2 ] || die "usage: $0 [ENROOT-SRC PYXIS-SRC]"
enroot_in=${1:-${LWM2_ENROOT_SRC:-}}
pyxis_in=${2:-${LWM2_PYXIS_SRC:-}}
[ -n "$enroot_in" ] && [ -n "$pyxis_in" ] ||
	die "no sources: give ENROOT-SRC PYXIS-SRC (or LWM2_ENROOT_SRC, LWM2_PYXIS_SRC): git clone https://github.com/NVIDIA/enroot, https://github.com/NVIDIA/pyxis"
slurm=${LWM2_SLURM_PREFIX:-/usr}
cache=${LWM2_ENROOT_PYXIS_CACHE:-/var/cache/lwm2-suite/enroot-pyxis}
jobs=${LWM2_ENROOT_PYXIS_JOBS:-2}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

spank_h=$slurm/include/slurm/spank.h
[ -f "$spank_h" ] || die "no $spank_h (libslurm-dev, or LWM2_SLURM_PREFIX=a Slurm prefix)"
# SLURM_VERSION_NUMBER 0xMMmmuu: the release the plugin is for.
slurm_num=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\([0-9a-fA-F]*\)$/\1/p' "$slurm/include/slurm/slurm_version.h")
[ -n "$slurm_num" ] || die "no SLURM_VERSION_NUMBER in $slurm/include/slurm/slurm_version.h"
slurm_ver=$(printf '%d.%02d.%d' $((16#$slurm_num >> 16)) $(((16#$slurm_num >> 8) & 255)) $((16#$slurm_num & 255)))
for c in make gcc sha256sum; do
	command -v "$c" >/dev/null || die "$c not installed"
done

mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
work=$(mktemp -d "$cache/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# unpack IN DEST: a copy of the source tree (or a bare git directory's
# HEAD) to build in; prints what identifies it.
unpack() {
	local in=$1 dest=$2
	mkdir -p "$dest"
	if [ -f "$in/HEAD" ] && [ -d "$in/objects" ]; then
		git --git-dir="$in" archive HEAD | tar -x -C "$dest"
		echo "git $(git --git-dir="$in" rev-parse HEAD)"
	elif [ -d "$in" ]; then
		cp -a "$in/." "$dest/"
		rm -rf "$dest/.git"
		(cd "$dest" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
	else
		die "no such source: $in"
	fi
}

# source_of NAME IN VAR OP: IN unpacked into $work/NAME; src_id says what
# it is, src_ver its version (VAR OP ... in its Makefile).
source_of() {
	local name=$1 in=$2 var=$3 op=$4
	src_id=$(unpack "$in" "$work/$name")
	src_ver=$(sed -n "s/^$var *$op *//p" "$work/$name/Makefile")
	[ -n "$src_ver" ] || die "$in: no $var in its Makefile (not $name?)"
}

# ---------------------------------------------------------------- enroot

say "enroot from $enroot_in"
source_of enroot "$enroot_in" VERSION ':='
esrc=$work/enroot eid=$src_id ever=$src_ver
eprefix=$cache/enroot-$ever
subs=""
for d in musl linux-headers makeself; do
	[ -n "$(ls -A "$esrc/deps/$d" 2>/dev/null)" ] || subs+=" $d"
done
ewant="enroot $ever $eid debian-for:${subs:- none}"

if [ -f "$eprefix/.lwm2-built" ] && [ "$(cat "$eprefix/.lwm2-built")" = "$ewant" ] &&
	[ -x "$eprefix/bin/enroot" ]; then
	say "enroot $ever already built in $eprefix"
else
	dist=$esrc/deps/dist
	case " $subs " in *" musl "*)
		# Debian's musl, with enroot's static-PIE rule (deps/musl.patch)
		# in the specs of a musl-gcc of the build's own.
		specs=/usr/lib/${ma%%-*}-linux-musl/musl-gcc.specs
		[ -f "$specs" ] || die "deps/musl is empty and Debian's musl is not installed (musl-tools)"
		mkdir -p "$dist/musl/bin" "$dist/musl/lib"
		sed -e 's|^%{!shared: \([^ ]*\)/Scrt1.o}|%{static-pie: \1/rcrt1.o} %{!static-pie: %{!shared: \1/Scrt1.o}}|' \
			-e 's|^-dynamic-linker \([^ ]*\) |%{static-pie:-no-dynamic-linker -static -pie} %{!static-pie:-dynamic-linker \1} |' \
			"$specs" >"$dist/musl/lib/musl-gcc.specs"
		grep -q 'static-pie' "$dist/musl/lib/musl-gcc.specs" ||
			die "$specs: its startfile and link rules are not the ones deps/musl.patch changes"
		printf '#!/bin/sh\nexec "${REALGCC:-gcc}" "$@" -specs "%s"\n' \
			"$dist/musl/lib/musl-gcc.specs" >"$dist/musl/bin/musl-gcc"
		chmod 755 "$dist/musl/bin/musl-gcc"
		touch "$esrc/deps/musl/.stamp"
		say "deps/musl: Debian's musl $(dpkg-query -W -f='${Version}' musl-dev 2>/dev/null || echo '?')"
		;;
	esac
	case " $subs " in *" linux-headers "*)
		[ -d /usr/include/linux ] && [ -d "/usr/include/$ma/asm" ] ||
			die "deps/linux-headers is empty and linux-libc-dev is not installed"
		mkdir -p "$dist/linux/include"
		cp -a /usr/include/linux /usr/include/asm-generic "$dist/linux/include/"
		cp -a "/usr/include/$ma/asm" "$dist/linux/include/asm"
		[ -d /usr/include/mtd ] && cp -a /usr/include/mtd "$dist/linux/include/"
		touch "$esrc/deps/linux-headers/.stamp"
		say "deps/linux-headers: Debian's linux-libc-dev"
		;;
	esac
	case " $subs " in *" makeself "*)
		command -v makeself >/dev/null || die "deps/makeself is empty and makeself is not installed"
		install -D -m 755 "$(command -v makeself)" "$dist/makeself/bin/enroot-makeself"
		touch "$esrc/deps/makeself/.stamp"
		say "deps/makeself: Debian's makeself"
		;;
	esac
	say "building enroot $ever (make -j$jobs)"
	# git submodule update fails without a git tree: nothing to fetch.
	if ! make -C "$esrc" -j"$jobs" prefix="$eprefix" >"$work/enroot.make.out" 2>&1; then
		tail -n 30 "$work/enroot.make.out" >&2
		die "make of enroot failed"
	fi
	rm -rf "$eprefix"
	make -C "$esrc" install prefix="$eprefix" >"$work/enroot.install.out" 2>&1 || {
		tail -n 20 "$work/enroot.install.out" >&2
		die "make install of enroot failed"
	}
	for b in enroot-nsenter enroot-switchroot enroot-mount; do
		file "$eprefix/bin/$b" 2>/dev/null | grep -q 'static' ||
			die "$eprefix/bin/$b is not linked statically"
	done
	chmod -R a+rX "$eprefix"
	echo "$ewant" >"$eprefix/.lwm2-built"
	say "enroot $ever installed in $eprefix"
fi

# ---------------------------------------------------------------- pyxis

say "pyxis from $pyxis_in, against Slurm $slurm_ver ($slurm)"
source_of pyxis "$pyxis_in" PYXIS_VER '?='
psrc=$work/pyxis pid=$src_id pver=$src_ver
pdir=$cache/pyxis-$pver-slurm-$slurm_ver
pwant="pyxis $pver $pid slurm $slurm_ver $(sha256sum "$spank_h" | cut -c1-16)"
if [ -f "$pdir/.lwm2-built" ] && [ "$(cat "$pdir/.lwm2-built")" = "$pwant" ] &&
	[ -f "$pdir/spank_pyxis.so" ]; then
	say "pyxis $pver for Slurm $slurm_ver already built in $pdir"
else
	# The Makefile puts the caller's CPPFLAGS after its own.
	if ! CPPFLAGS="-I$slurm/include" make -C "$psrc" -j"$jobs" >"$work/pyxis.make.out" 2>&1; then
		tail -n 30 "$work/pyxis.make.out" >&2
		die "make of pyxis failed"
	fi
	rm -rf "$pdir"
	install -d -m 755 "$pdir"
	install -m 755 "$psrc/spank_pyxis.so" "$pdir/spank_pyxis.so"
	echo "$pwant" >"$pdir/.lwm2-built"
	say "pyxis $pver for Slurm $slurm_ver installed in $pdir"
fi

echo "ENROOT_PREFIX=$eprefix PYXIS_PLUGIN=$pdir/spank_pyxis.so"
