#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Clang's static analyzer (scan-build, Debian 12: clang-tools 14) over a
# whole build with clang, tests' programs included.  tests/suite.sh's clang
# stage is this build: it runs the unit tests in DIR/build afterwards.
# Every finding fails (--status-bugs); a false positive is silenced in the
# code, at the narrowest place, with a comment that says why.
#
#   bash tests/scan-build.sh [DIR]     default DIR: _build/scan-build
#
# DIR is emptied and holds the build (DIR/build) and, where there are
# findings, the HTML report (DIR/report).  LWM2_SLURM_SOURCE=<src>:<build>
# is the --with-slurm-source of jobcomp/lwm2 (set and empty: none,
# jobcomp/lwm2 not built); unset, contrib/slurm-source.sh provides it (a
# Slurm source already configured there is reused).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
dir=${1:-$top/_build/scan-build}

if ! command -v scan-build >/dev/null; then
	echo "scan-build: not installed (contrib/install-deps.sh installs clang-tools)" >&2
	exit 1
fi
[ -x configure ] || ./autogen.sh

configure_args=(--enable-werror)
if [ -z "${LWM2_SLURM_SOURCE+set}" ]; then
	out=$(bash contrib/slurm-source.sh "${LWM2_SUITE_DIR:-$top/_build/suite}/slurm-src" | tail -n 1)
	src=${out#SLURM_SOURCE=}
	src=${src%% *}
	LWM2_SLURM_SOURCE="$src:${out##*SLURM_BUILD=}"
fi
[ -n "$LWM2_SLURM_SOURCE" ] && configure_args+=(--with-slurm-source="$LWM2_SLURM_SOURCE")

rm -rf "$dir"
mkdir -p "$dir/build"
dir=$(cd "$dir" && pwd)
cd "$dir/build"
# configure under scan-build records its compiler wrapper (which runs clang)
# in the Makefiles: no CC= here, it would replace the wrapper;
# what it finds in configure's own test programs is not ours (no
# --status-bugs, a report directory thrown away).
scan-build --use-cc=clang -o "$dir/configure-report" \
	"$top/configure" "${configure_args[@]}" >configure.log 2>&1 || {
	tail -n 25 configure.log >&2
	exit 1
}
rm -rf "$dir/configure-report"
# `check` with no TESTS: the libraries, plugins and commands, and every
# test program, built and analysed, none of them run.
exec scan-build --use-cc=clang --status-bugs -o "$dir/report" \
	make -j"$(nproc 2>/dev/null || echo 2)" check TESTS=
