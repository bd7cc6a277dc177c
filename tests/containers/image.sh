#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The container images of the tests (t-containers.sh): a minimal Debian
# root file system per release, made once per machine and reused.
#
#   bash tests/containers/image.sh RELEASE         # bullseye | bookworm
#   bash tests/containers/image.sh --tar RELEASE   # and a tar of it, for
#                                                  # `podman import`
#
# The last line of the output is the image directory (with --tar: the tar;
# beside it RELEASE.tar.id holds a short id of its content, for a podman
# tag).  The image is `debootstrap --variant=minbase --include=python3
# RELEASE` (Python's multiprocessing and subprocess start children the way
# many jobs do) from the Debian mirror of the machine's own apt sources
# (LWM2_IMAGE_MIRROR overrides), under ${LWM2_IMAGE_CACHE:-/var/cache/lwm2-suite/images}/RELEASE,
# readable by everyone, with the tests' own files added:
# /usr/local/bin/lwm2-static-echo (static-echo.c here, linked statically
# on the host).  It is built in a temporary directory and renamed when
# complete, so an interrupted build is never reused; a lock keeps two
# callers from building at once.  A complete image made there by hand
# (debootstrap with python3) is taken as it is and gets the tests' files;
# one without python3 (an image of an older version of this script) is
# made again.
#
# Making or completing an image needs root; a caller that is not root gets
# the path of an image that is complete already.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
want_tar=0
if [ "${1:-}" = --tar ]; then
	want_tar=1
	shift
fi
release=${1:-}
case $release in
bullseye) version=11 ;;
bookworm) version=12 ;;
*)
	echo "usage: image.sh [--tar] bullseye|bookworm" >&2
	exit 2
	;;
esac
cache=${LWM2_IMAGE_CACHE:-/var/cache/lwm2-suite/images}
dir=$cache/$release
tarball=$cache/$release.tar

say() { echo "image.sh: $*" >&2; }
die() {
	say "$*"
	exit 1
}

# The tests' own files change with this script and static-echo.c: their
# hash is what the image's stamp must say.
stamp_file=usr/local/share/lwm2-test-image
stamp_want() {
	{
		echo "lwm2 test image 2 $release python3"
		cat "$here/static-echo.c"
	} | sha256sum | cut -c1-16
}

# complete DIR: a root file system of the release that debootstrap
# finished (a shell, the release's debian_version and python3).
complete() {
	[ -e "$1/bin/sh" ] && [ -f "$1/etc/debian_version" ] &&
		grep -q "^${version}[./]" "$1/etc/debian_version" &&
		[ -x "$1/usr/bin/python3" ]
}

ready() {
	complete "$dir" && [ -f "$dir/$stamp_file" ] &&
		[ "$(cat "$dir/$stamp_file")" = "$(stamp_want)" ]
}

tar_ready() {
	[ -f "$tarball" ] && [ -f "$tarball.id" ] &&
		[ "$(cat "$tarball.id")" = "$(cat "$dir/$stamp_file")-$(cat "$dir/etc/debian_version")" ]
}

# The Debian URI of the machine's apt sources (deb822 or one-line form),
# not the security archive's.
mirror() {
	local f=/etc/apt/sources.list.d/debian.sources u=""
	if [ -n "${LWM2_IMAGE_MIRROR:-}" ]; then
		echo "$LWM2_IMAGE_MIRROR"
		return
	fi
	if [ -r "$f" ]; then
		u=$(awk 'BEGIN { RS = "" }
			/(^|\n)Types:[^\n]*deb([ \t]|\n|$)/ && !/(^|\n)Suites:[^\n]*-security/ {
				if (match($0, /(^|\n)URIs:[ \t]*[^ \t\n]+/)) {
					s = substr($0, RSTART, RLENGTH)
					sub(/^\n?URIs:[ \t]*/, "", s)
					print s
					exit
				}
			}' "$f")
	fi
	if [ -z "$u" ] && [ -r /etc/apt/sources.list ]; then
		u=$(awk '$1 == "deb" && $0 !~ /security/ {
			for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' /etc/apt/sources.list)
	fi
	echo "${u:-http://deb.debian.org/debian}"
}

# add_files DIR: the tests' files, idempotently; everything readable.
add_files() {
	local d=$1 tmp
	tmp=$(mktemp -d)
	if ! gcc -static -O2 -o "$tmp/lwm2-static-echo" "$here/static-echo.c"; then
		rm -rf "$tmp"
		die "gcc -static failed (libc6-dev has libc.a)"
	fi
	install -d -m 755 "$d/usr/local/bin" "$d/usr/local/share"
	if ! cmp -s "$tmp/lwm2-static-echo" "$d/usr/local/bin/lwm2-static-echo"; then
		install -m 755 "$tmp/lwm2-static-echo" "$d/usr/local/bin/lwm2-static-echo"
	fi
	rm -rf "$tmp"
	# ch-run binds the host's files over these; it cannot create them in
	# an image it may not write.
	local f
	for f in etc/hosts etc/resolv.conf; do
		[ -e "$d/$f" ] || [ -L "$d/$f" ] || : >"$d/$f"
	done
	chmod -R a+rX "$d"
	chmod 755 "$d"
	stamp_want >"$d/$stamp_file"
	chmod 644 "$d/$stamp_file"
}

build() {
	local tmp log m
	command -v debootstrap >/dev/null || die "debootstrap not installed (contrib/install-deps.sh)"
	m=$(mirror)
	tmp=$(mktemp -d "$cache/.$release.new.XXXXXX")
	log=$cache/$release.log
	say "debootstrap --variant=minbase --include=python3 $release from $m (log $log)"
	local t0=$SECONDS
	if ! debootstrap --variant=minbase --include=python3 "$release" "$tmp" "$m" >"$log" 2>&1; then
		tail -n 15 "$log" | sed 's/^/    /' >&2
		rm -rf "$tmp"
		die "debootstrap $release failed"
	fi
	complete "$tmp" || {
		rm -rf "$tmp"
		die "debootstrap $release made no complete root file system"
	}
	add_files "$tmp"
	# An incomplete one left there (by hand, or from an older script) is
	# put aside first, so that the rename is the last step.
	if [ -e "$dir" ]; then
		mv "$dir" "$cache/.$release.old.$$"
		rm -rf "$cache/.$release.old.$$"
	fi
	mv "$tmp" "$dir"
	say "$release made in $((SECONDS - t0)) s"
}

make_tar() {
	local tmp id
	id="$(cat "$dir/$stamp_file")-$(cat "$dir/etc/debian_version")"
	tmp=$(mktemp "$cache/.$release.tar.XXXXXX")
	# One owner for every file: a rootless podman without subordinate
	# IDs maps only the user's own.
	if ! tar -C "$dir" --numeric-owner --owner=0 --group=0 -cf "$tmp" .; then
		rm -f "$tmp"
		die "tar of $dir failed"
	fi
	chmod 644 "$tmp"
	echo "$id" >"$tarball.id.new"
	chmod 644 "$tarball.id.new"
	mv "$tmp" "$tarball"
	mv "$tarball.id.new" "$tarball.id"
}

if ! ready || { [ "$want_tar" -eq 1 ] && ! tar_ready; }; then
	[ "$(id -u)" -eq 0 ] || die "$dir is not ready and making it needs root"
	install -d -m 755 "$cache"
	exec 9>"$cache/.$release.lock"
	flock 9
	# Someone else may have finished while this one waited.
	if ! ready; then
		# Builds that were interrupted; a tar of what is replaced.
		rm -rf "$cache/.$release.new."* "$cache/.$release.old."*
		rm -f "$tarball.id"
		if complete "$dir"; then
			say "completing $dir"
			add_files "$dir"
		else
			build
		fi
	fi
	if [ "$want_tar" -eq 1 ] && ! tar_ready; then
		rm -f "$cache/.$release.tar."*
		make_tar
	fi
	flock -u 9
fi

if [ "$want_tar" -eq 1 ]; then
	echo "$tarball"
else
	echo "$dir"
fi
