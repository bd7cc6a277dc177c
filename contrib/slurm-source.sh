#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the source of exactly the installed Slurm and configure it, so that
# jobcomp/lwm2 can include src/slurmctld/slurmctld.h (which needs config.h).
#
#   contrib/slurm-source.sh DIR
#
# Last line of output: SLURM_SOURCE=<dir> SLURM_BUILD=<dir>; build jobcomp
# with --with-slurm-source=$SLURM_SOURCE (-I$SLURM_BUILD -I$SLURM_SOURCE).
set -euo pipefail

die() {
	echo "slurm-source: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: $0 DIR"
mkdir -p "$1"
dir=$(cd "$1" && pwd)

# Follow libslurm-dev, not slurm-wlm: the headers the plugins compile
# against are what must match the running daemons' plugin_version.
read -r srcpkg srcver < <(dpkg-query -W -f='${source:Package} ${source:Version}\n' libslurm-dev) ||
	die "libslurm-dev is not installed"
upver=${srcver#*:}
upver=${upver%-*}
src=$dir/$srcpkg-$upver
build=$dir/build-$srcver
stamp=$build/.lwm2-configured

# Debian's flags (debian/rules plus what dh_auto_configure adds): config.h
# decides the layout of slurmctld's structures and its compiled-in paths, so
# it must match how the installed slurmctld was built.
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
flags=(--prefix=/usr --sysconfdir=/etc/slurm --localstatedir=/var
	--runstatedir=/run --libdir="/usr/lib/$ma"
	--with-munge --enable-pam --without-rpath --disable-debug
	--enable-multiple-slurmd --with-pmix="/usr/lib/$ma/pmix2"
	SUCMD=/bin/su SLEEP_CMD=/bin/sleep)
if [ "$(dpkg-architecture -qDEB_TARGET_ARCH_BITS)" != 64 ]; then
	flags+=(--enable-deprecated)
fi
want="$srcpkg $srcver ${flags[*]}"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$build/config.h" ]; then
	echo "slurm-source: $srcpkg $srcver already configured"
	echo "SLURM_SOURCE=$src SLURM_BUILD=$build"
	exit 0
fi

have_src() {
	local out
	out=$(apt-cache showsrc "$srcpkg" 2>/dev/null) || return 1
	grep -qx "Version: $srcver" <<<"$out"
}

# deb-src entries are added beside the existing deb ones, in the same format,
# so the source comes from the same mirror (and snapshot) as the binaries.
add_deb_src() {
	[ "$(id -u)" -eq 0 ] || die "no deb-src entry for $srcpkg $srcver; run as root to add one"
	local d822=/etc/apt/sources.list.d/debian.sources
	local legacy=/etc/apt/sources.list
	if [ -f "$d822" ] && grep -q '^Types:.*\bdeb\b' "$d822"; then
		echo "slurm-source: adding deb-src stanzas to sources.list.d/lwm2-deb-src.sources"
		sed -n -e 's/^Types:.*/Types: deb-src/' -e '/^#/d' -e p "$d822" \
			>/etc/apt/sources.list.d/lwm2-deb-src.sources
	elif [ -f "$legacy" ] && grep -q '^deb ' "$legacy"; then
		echo "slurm-source: adding deb-src lines to sources.list.d/lwm2-deb-src.list"
		sed -n 's/^deb \(.*debian.*\)/deb-src \1/p' "$legacy" \
			>/etc/apt/sources.list.d/lwm2-deb-src.list
	else
		die "no Debian apt source found to mirror as deb-src"
	fi
	echo "slurm-source: apt-get update"
	apt-get update -qq
}

if [ ! -f "$src/configure" ]; then
	have_src || add_deb_src
	have_src || die "the archive has no source for $srcpkg $srcver"
	echo "slurm-source: fetching $srcpkg $srcver into $dir"
	(cd "$dir" && apt-get source -qq "$srcpkg=$srcver" >/dev/null)
	[ -f "$src/configure" ] || die "no configure in $src after apt-get source"
fi

echo "slurm-source: configuring in $build"
rm -rf "$build"
mkdir -p "$build"
if ! (cd "$build" && "$src/configure" "${flags[@]}" >configure.out 2>&1); then
	tail -n 30 "$build/configure.out" >&2
	die "configure failed, see $build/configure.out"
fi
echo "$want" >"$stamp"
echo "SLURM_SOURCE=$src SLURM_BUILD=$build"
