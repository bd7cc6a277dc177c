#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 report`'s pages as a browser lays them out: no text cut off at
# window widths of 800, 1100 and 1600 px (tests/layout-lib.sh).  The job page's
# box plots once cut long metric labels ("Time in MPI calls, without
# Init/Finalize") at their left edge.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
# shellcheck source=tests/layout-lib.sh
. "$(dirname "$0")/../../tests/layout-lib.sh"
need_python3
export TZ=UTC

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip_all "chromium not installed (contrib/install-deps.sh)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-layout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
LAYOUT_TMP=$tmp

{
	./mkreportlog 101 alice 16 4 1700000000
	./mkreportlog 102 bob 8 2 1700000050 5
} >"$tmp/log.jsonl" || skip_all "mkreportlog failed"
./lwm2 report --file "$tmp/log.jsonl" -j 101 -o "$tmp/job.html" 2>/dev/null
is "$?" 0 "job page written"
./lwm2 report --site --file "$tmp/log.jsonl" -o "$tmp/site" 2>/dev/null
is "$?" 0 "site pages written"



for page in "$tmp/job.html" "$tmp/site/index.html" "$tmp/site/grid-mpi.html" \
	"$tmp/site/jobs/101.html" "$tmp/site/jobs/101/node-n1.html" "$tmp/site/users/alice.html"; do
	name=${page#"$tmp/"}
	for width in 800 1100 1600; do
		rep=$(layout_probe "$page" "$width")
		head=$(head -1 <<<"$rep")
		case $head in
		"LAYOUT texts="*" bad=0") ok "$name at $width px: no text cut off (${head#LAYOUT })" ;;
		"LAYOUT none") not_ok "$name at $width px: the browser ran the probe" ;;
		*)
			not_ok "$name at $width px: no text cut off (${head#LAYOUT })"
			tail -n +2 <<<"$rep" | head -8 | sed 's/^/# /'
			;;
		esac
	done
done

done_testing
