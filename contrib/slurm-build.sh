#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build a second Slurm (Debian 13's 24.11, by default) into a private prefix,
# so that lwm2 is built and tested against it as well as against the
# machine's own Slurm.  The source comes from Debian's deb-src index through
# a private apt configuration (its own sources list, lists and cache below
# DIR): the machine's apt sources are left alone.
#
#   contrib/slurm-build.sh DIR [UPSTREAM-VERSION [SUITE]]
#
# Defaults: 24.11.5 from trixie.  A finished build is reused (the stamp
# records the version and flags).  Last line of output:
#   SLURM_PREFIX=<dir> SLURM_SOURCE=<dir> SLURM_BUILD=<dir>
# Configure lwm2 with --with-slurm=$SLURM_PREFIX and
# --with-slurm-source=$SLURM_SOURCE:$SLURM_BUILD; run the daemons from
# $SLURM_PREFIX/sbin (tests/cluster/cluster.sh reads LWM2_SLURM_PREFIX).
# Environment: LWM2_SLURM_JOBS (make -j, default 2).
set -euo pipefail

die() {
	echo "slurm-build: $*" >&2
	exit 1
}

[ $# -ge 1 ] && [ $# -le 3 ] || die "usage: $0 DIR [UPSTREAM-VERSION [SUITE]]"
upver=${2:-24.11.5}
suite=${3:-trixie}
# The mirror is the one the machine's own apt sources name for Debian's
# main archive (LWM2_DEBIAN_MIRROR overrides it).
mirror=${LWM2_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
fi
if [ -z "$mirror" ]; then
	mirror=$(awk '$1 == "deb" && $2 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }' \
		/etc/apt/sources.list 2>/dev/null)
fi
mkdir -p "$1"
# The physical path: the prefix is compiled into the daemons.
dir=$(cd "$1" && pwd -P)
apt_dir=$dir/apt
prefix=$dir/slurm-$upver
src=$dir/src-$upver
build=$dir/build-$upver
stamp=$prefix/.lwm2-built
orig=slurm-wlm_$upver.orig.tar.gz
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# Only what the test cluster runs: no REST daemon, no GUI, no optional
# hardware or profiling back ends.  The prefix is compiled into the
# daemons (plugin and configuration paths), so it must not move.
flags=(--prefix="$prefix" --sysconfdir="$prefix/etc" --localstatedir=/var
	--runstatedir=/run --with-munge --enable-multiple-slurmd --disable-debug
	--disable-slurmrestd --disable-sview --disable-pam --disable-x11
	--without-hdf5 --without-nvml --without-rsmi --without-oneapi
	--without-freeipmi --without-ofed --without-ucx --without-rdkafka
	--without-s2n --without-bpf --without-jwt --without-yaml
	--without-http-parser --without-libcurl --without-lua
	--with-pmix="/usr/lib/$ma/pmix2" SUCMD=/bin/su SLEEP_CMD=/bin/sleep)
want="slurm $upver ${flags[*]}"

report() {
	echo "SLURM_PREFIX=$prefix SLURM_SOURCE=$src SLURM_BUILD=$build"
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$prefix/sbin/slurmctld" ]; then
	echo "slurm-build: $upver already built in $prefix"
	report
	exit 0
fi

aptc=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list"
	-o "Dir::Etc::sourceparts=$apt_dir/sources.list.d"
	-o "Dir::Etc::preferencesparts=$apt_dir/preferences.d"
	-o "Dir::State::Lists=$apt_dir/lists"
	-o "Dir::Cache=$apt_dir/cache"
	-o "APT::Get::List-Cleanup=0"
	-o "APT::Sandbox::User=root")

fetch() {
	[ -n "$mirror" ] || die "no Debian mirror in the machine's apt sources; set LWM2_DEBIAN_MIRROR"
	mkdir -p "$apt_dir/sources.list.d" "$apt_dir/preferences.d" \
		"$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
		>"$apt_dir/sources.list"
	echo "slurm-build: apt-get update ($suite deb-src, private lists in $apt_dir)"
	apt-get "${aptc[@]}" update -qq
	local info ver sum
	info=$(apt-cache "${aptc[@]}" showsrc slurm-wlm) || die "no slurm-wlm in $suite's sources"
	# The newest Debian revision of this upstream version.
	ver=$(sed -n 's/^Version: //p' <<<"$info" | grep -E "^([0-9]+:)?$upver-" | sort -V | tail -n 1)
	[ -n "$ver" ] || die "$suite has no slurm-wlm $upver"
	sum=$(awk -v f="$orig" '/^Checksums-Sha256:/ { s = 1; next } /^[^ ]/ { s = 0 } s && $3 == f { print $1; exit }' <<<"$info")
	[ -n "$sum" ] || die "no SHA256 for $orig in the index"
	mkdir -p "$dir/dl"
	echo "slurm-build: fetching slurm-wlm $ver"
	# Only the upstream tarball is needed; the mirror may refuse the
	# Debian parts, which apt then reports as failures.
	(cd "$dir/dl" && apt-get "${aptc[@]}" source --download-only -qq "slurm-wlm=$ver" >/dev/null 2>&1) || true
	[ -f "$dir/dl/$orig" ] || die "apt-get source did not fetch $orig"
	echo "$sum  $dir/dl/$orig" | sha256sum -c --quiet - || die "$orig: checksum differs from the index"
	echo "slurm-build: $orig matches the index's SHA256 $sum"
}

if [ ! -f "$src/configure" ]; then
	[ -f "$dir/dl/$orig" ] || fetch
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xzf "$dir/dl/$orig" -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
fi

jobs=${LWM2_SLURM_JOBS:-2}
made=$build/.lwm2-made
t0=$(date +%s)
# A build that finished compiling is only installed again (the prefix may
# have been removed, or the install failed).
if [ ! -f "$made" ] || [ "$(cat "$made")" != "$want" ]; then
	rm -rf "$build"
	mkdir -p "$build"
	echo "slurm-build: configuring in $build"
	if ! (cd "$build" && "$src/configure" "${flags[@]}" >configure.out 2>&1); then
		tail -n 30 "$build/configure.out" >&2
		die "configure failed, see $build/configure.out"
	fi
	t1=$(date +%s)
	echo "slurm-build: building with make -j$jobs"
	# src/ holds the daemons, commands, libslurm and the plugins.
	if ! make -C "$build/src" -j"$jobs" >"$build/make.out" 2>&1; then
		tail -n 30 "$build/make.out" >&2
		die "make failed, see $build/make.out"
	fi
	echo "$want" >"$made"
	t2=$(date +%s)
	echo "slurm-build: configure took $((t1 - t0)) s, make -j$jobs $((t2 - t1)) s"
fi
t2=$(date +%s)
rm -rf "$prefix"
make -C "$build/src" install >"$build/install.out" 2>&1 || die "make install failed, see $build/install.out"
# The public headers are installed by the top directory.
make -C "$build" install-pkgincludeHEADERS >>"$build/install.out" 2>&1 ||
	die "installing the headers failed, see $build/install.out"
echo "slurm-build: install took $(($(date +%s) - t2)) s"
# configure leaves out what it finds no library for: the test cluster's
# slurmdbd needs its MySQL plugin (libmariadb-dev).
[ -f "$prefix/lib/slurm/accounting_storage_mysql.so" ] ||
	die "no accounting_storage/mysql plugin was built: install libmariadb-dev, remove $build and run again"
echo "$want" >"$stamp"
report
