#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A rolling upgrade in one job: rank records of this build (./evolve) and
# of the next version's shape (./evolve_next: one counter more,
# posix_msync_bytes), each read by the other build, merged into node
# records by either and digested by either.  A counter a record lacks is
# "not measured" (never 0), one this build does not know is skipped in the
# rank record and kept by name where a node record names it.  Runs in the
# build directory (digest/).
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
need_python3

cur=./evolve next=./evolve_next
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-evolve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/mixed" "$tmp/old"

# py FILE EXPR: EXPR over the JSON digest d of FILE; its scope's totals t.
py() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["scope"]["totals"]; print(eval(sys.argv[2]))' "$@"
}

nc=$($cur ncounters) ncn=$($next ncounters)
is "$ncn" "$((nc + 1))" "the next build has one counter more ($nc, $ncn)"

check "this build writes a record" $cur write "$tmp/mixed" 0
check "the next build writes a record" $next write "$tmp/mixed" 1
check "this build writes a record (old dir)" $cur write "$tmp/old" 0

check "this build reads the next build's record: its counters, tail and slices" \
	$cur check "$tmp/mixed/rank-1.lwm2" "$ncn"
check "the next build reads this build's record: the new counter absent" \
	$next check "$tmp/mixed/rank-0.lwm2" "$nc"
check "each build reads its own" $next check "$tmp/mixed/rank-1.lwm2" "$ncn"

check "this build merges both builds' records" $cur node "$tmp/mixed" "$tmp/n-cur-mixed.json"
check "the next build merges both builds' records" $next node "$tmp/mixed" "$tmp/n-next-mixed.json"
check "the next build merges an older build's record" $next node "$tmp/old" "$tmp/n-next-old.json"
check "this build merges its record" $cur node "$tmp/old" "$tmp/n-cur-old.json"
is "$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["procs"]; print(sorted(x.get("absent",[]) for x in p))' "$tmp/n-next-mixed.json")" \
	"[[], ['posix_msync_bytes']]" "the next build's node record names the counter the older process lacked"

# This build's controller, the next build's node record: the new counter
# kept by name, both processes counted.
check "this build digests the next build's node record" $cur job "$tmp/d1" "$tmp/n-next-mixed.json"
is "$(py "$tmp/d1.json" 't.get("posix_msync_bytes")')" 4096 "a newer build's counter kept by name in the totals"
is "$(py "$tmp/d1.json" 't["posix_read_bytes"], d["scope"]["processes"]')" "(2000, 2)" \
	"both builds' processes counted"
check "the text digest names the newer counter" \
	grep -q "Counters of a newer lwm2: posix_msync_bytes 4096" "$tmp/d1.txt"

# The next build's controller, this build's node record: not measured.
check "the next build digests this build's node record" $next job "$tmp/d2" "$tmp/n-cur-old.json"
is "$(py "$tmp/d2.json" 't["posix_msync_bytes"], t["posix_read_bytes"]')" \
	"('not measured', 1000)" "a counter the older build lacked is not measured, never 0"
check "the text digest says not measured" \
	grep -q "Counters not measured (an older lwm2): posix_msync_bytes" "$tmp/d2.txt"

# The next build merged an older process's record (its "absent" list).
check "the next build digests its node record of an older process" $next job "$tmp/d3" "$tmp/n-next-old.json"
is "$(py "$tmp/d3.json" 't["posix_msync_bytes"]')" "not measured" "an older process's record: not measured"

# One job, both processes: the new counter measured by one of them.
check "the next build digests a mixed node" $next job "$tmp/d4" "$tmp/n-next-mixed.json"
is "$(py "$tmp/d4.json" 't["posix_msync_bytes"], t["posix_read_bytes"], d["scope"]["processes"]')" \
	"(4096, 2000, 2)" "the mixed node: the new counter from the process that had it"
check "no counter is said not measured where one process measured it" \
	bash -c "! grep -q 'not measured (an older' '$tmp/d4.txt'"

# Nodes of both builds in one job, read by either controller.
check "the next build digests nodes of both builds" $next job "$tmp/d5" "$tmp/n-cur-old.json" "$tmp/n-next-mixed.json"
is "$(py "$tmp/d5.json" 't["posix_msync_bytes"], d["scope"]["processes"]')" "(4096, 3)" \
	"nodes of both builds: every process counted"
check "this build digests nodes of both builds" $cur job "$tmp/d6" "$tmp/n-cur-old.json" "$tmp/n-next-mixed.json"
is "$(py "$tmp/d6.json" 't["posix_msync_bytes"], d["scope"]["processes"]')" "(4096, 3)" \
	"this build: every process counted, the newer counter by name"

# Step summaries of short processes: each build's read by the other.
mkdir "$tmp/sum-old" "$tmp/sum-new"
check "this build writes a step summary" $cur summary "$tmp/sum-old"
check "the next build writes a step summary" $next summary "$tmp/sum-new"
check "the next build merges this build's summary" $next node "$tmp/sum-old" "$tmp/n-s1.json"
check "this build merges the next build's summary" $cur node "$tmp/sum-new" "$tmp/n-s2.json"
check "the next build digests it" $next job "$tmp/d7" "$tmp/n-s1.json"
is "$(py "$tmp/d7.json" 't["posix_read_bytes"], t["posix_msync_bytes"], d["scope"]["processes"]')" \
	"(300, 'not measured', 3)" "an older build's summary: read, the new counter not measured"
check "this build digests it" $cur job "$tmp/d8" "$tmp/n-s2.json"
is "$(py "$tmp/d8.json" 't["posix_read_bytes"], "posix_msync_bytes" in t, d["scope"]["processes"]')" \
	"(300, False, 3)" "a newer build's summary: read, the counter it does not know skipped"

done_testing
