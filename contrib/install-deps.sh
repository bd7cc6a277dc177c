#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install the Debian 12 packages lwm2 needs to build and to run its tests.
# Safe to run again: with everything present it only checks and exits.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive

pkgs=(
	# build
	build-essential autoconf automake libtool pkg-config dpkg-dev
	gfortran clang clang-format libclang-rt-14-dev
	libjson-c-dev libpapi-dev papi-tools libmunge-dev
	# Slurm: the plugins are built against these exact headers
	slurm-wlm slurm-client slurmctld slurmd slurmdbd libslurm-dev
	munge mariadb-server mariadb-client
	# MPI: Open MPI through Slurm's PMIx plugin, MPICH through PMI2
	openmpi-bin libopenmpi-dev libpmix-dev mpich libmpich-dev
	# test harness (cluster.sh, lib.sh)
	procps iproute2 netcat-openbsd util-linux shellcheck git ca-certificates
	# static analysis of the C sources in the lint stage (tests/cppcheck.sh,
	# tests/scan-build.sh: scan-build is in clang-tools)
	cppcheck clang-tools
	# lwm2 report's pages opened in a headless browser (t-report.sh)
	chromium
	# export to a time-series engine: libcurl and zlib; InfluxDB 1.x for its tests
	libcurl4-openssl-dev zlib1g-dev influxdb influxdb-client
	# rotated logs read by lwm2 (gzip through zlib, zstd); the real
	# logrotate runs the shipped configuration (jobcomp/test/logrotate.sh)
	libzstd-dev logrotate
	# the central database of digests: SQLite embedded, the sqlite3
	# shell for looking inside
	libsqlite3-dev sqlite3
	# the site portal (lwm2 serve) on libmicrohttpd; curl asks it in t-serve.sh
	libmicrohttpd-dev curl
	# the tests read the JSON output with it
	python3
	# a real mail path for lwm2-mail: mail(1) and an MTA delivering locally
	exim4-daemon-light bsd-mailx
	# packaging: the .deb and .rpm builds of the suite
	debhelper fakeroot lintian rpm
	# Slurm 24.11 built from source (contrib/slurm-build.sh): slurmdbd's
	# MySQL plugin
	libmariadb-dev
	# asynchronous I/O engines for the POSIX module's tests (posixaio, libaio, io_uring)
	fio
	# leak check of the preload library on a clean program (preload/test/core.sh)
	valgrind
	# a log rewritten by another JSON tool (digest/test/cmd_digest.sh)
	jq
	# line coverage of the unit tests (configure --enable-coverage, make coverage)
	lcov
	# containerized jobs (t-containers.sh): Charliecloud's ch-run
	# (charliecloud-runtime; ch-image and ch-convert are in
	# charliecloud-builders, which pulls in docker.io and buildah, and the
	# tests need neither: their images are directories), bubblewrap,
	# rootless podman (newuidmap/newgidmap, its network and overlay
	# helpers; runc beside crun, which refuses hosts with hybrid cgroup
	# hierarchies), and debootstrap for the Debian 11 and 12 images
	# (tests/containers/image.sh)
	charliecloud-runtime bubblewrap
	podman uidmap slirp4netns fuse-overlayfs crun runc
	debootstrap
	# enroot and pyxis built from their sources (contrib/enroot-pyxis-build.sh,
	# t-pyxis.sh): musl, the kernel headers and makeself stand in for
	# enroot's git submodules; enroot runs with squashfs-tools, parallel
	# and pigz (jq is above)
	musl-tools linux-libc-dev makeself libcap2-bin squashfs-tools parallel pigz
)

installed() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

missing() {
	local p
	for p in "$@"; do
		installed "$p" || printf '%s\n' "$p"
	done
}

mapfile -t todo < <(missing "${pkgs[@]}")
want_lammps=1
if installed lammps; then
	want_lammps=0
fi

if [ "${#todo[@]}" -eq 0 ] && [ "$want_lammps" -eq 0 ]; then
	echo "install-deps: all packages present"
	exit 0
fi

# Package scripts would start munged, mariadbd and the Slurm daemons with
# the machine's own configuration; the tests start private instances
# instead. Forbid service starts for this run unless a policy already exists.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$policy"
	chmod 755 "$policy"
	trap 'rm -f "$policy"' EXIT
	echo "install-deps: service starts disabled for this run"
fi

echo "install-deps: apt-get update"
apt-get update -qq

# The benchmarks use LAMMPS where the archive has it (not on every arch).
if [ "$want_lammps" -eq 1 ]; then
	if apt-cache show lammps >/dev/null 2>&1; then
		todo+=(lammps)
	else
		echo "install-deps: lammps not in the archive, skipped"
	fi
fi

if [ "${#todo[@]}" -gt 0 ]; then
	echo "install-deps: installing ${todo[*]}"
	apt-get install -y -qq --no-install-recommends "${todo[@]}" >/dev/null
fi
echo "install-deps: done"
