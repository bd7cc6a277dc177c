#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 grid` and `lwm2 nodes` over a log of synthetic jobs (./mkreportlog,
# made by the digest library): the cells and their order, selection by
# node, metric and period, JSON output, the verdict on nodes, unreadable
# lines, and usage errors.  The rules themselves are tested on synthetic
# grids in grid.t.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
export TZ=UTC

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-grid.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/jobs.jsonl
# job 101: 16 processes on n1-n4 from 1700000000; job 102: 8 on n2-n3
# 20 s later
{ ./mkreportlog 101 alice 16 4 1700000000 && ./mkreportlog 102 bob 8 2 1700000020 2; } >"$log" ||
	skip_all "mkreportlog failed"

./lwm2 grid -f "$log" >"$tmp/all" 2>"$tmp/err"
is "$?" 0 "grid: exit 0"
check "grid: nothing on stderr" test ! -s "$tmp/err"
is "$(head -n 1 "$tmp/all" | tr -s ' ')" \
	"slice node len job step write write_bw read read_bw mpi mpi_rate mpi_share" "grid: the header"
check "grid: cells in slice order" bash -c "tail -n +2 '$tmp/all' | cut -c1-19 | sort -c"
check "grid: job 102 on n2 and n3 only" bash -c \
	"[ \"\$(awk '\$4==102 {print \$2}' '$tmp/all' | sort -u | tr '\n' ' ')\" = 'n2 n3 ' ]"
n4=$(awk '$2=="n4"' "$tmp/all" | wc -l)
./lwm2 grid -f "$log" --node n4 --metric mpi_share >"$tmp/n4"
is "$(($(wc -l <"$tmp/n4") - 1))" "$n4" "--node n4: its cells, as many as in the whole grid"
is "$(head -n 1 "$tmp/n4" | tr -s ' ')" "slice node len job step mpi_share" "--metric: one column"
./lwm2 grid -f "$log" -S @1700000000 -E @1700000005 >"$tmp/p"
is "$(tail -n +2 "$tmp/p" | cut -c1-19 | sort -u)" "2023-11-14T22:13:20" "-S/-E: the slices that overlap the period"
./lwm2 grid -f "$log" --json >"$tmp/j"
if command -v python3 >/dev/null; then
	is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["cells"]), sorted({c["job"] for c in d["cells"]}))' "$tmp/j")" \
		"$(($(wc -l <"$tmp/all") - 1)) [101, 102]" "--json: every cell, both jobs"
else
	skip "python3 not installed"
fi
./lwm2 grid -f "$log" --interference >"$tmp/i"
is "$(cat "$tmp/i")" "No interference found (2 jobs)." "--interference: none between these jobs"

# nodes
./lwm2 nodes -f "$log" >"$tmp/n"
is "$(cat "$tmp/n")" "No node stands out (2 multi-node jobs)." "nodes: none stands out"
./lwm2 nodes -f "$log" --all >"$tmp/na"
is "$(grep -c '^ok         n[1-4] held the slowest rank in' "$tmp/na")" 4 "nodes --all: every node"

# unreadable lines are reported and skipped
{ echo 'not json'; cat "$log"; } >"$tmp/bad.jsonl"
./lwm2 grid -f "$tmp/bad.jsonl" >"$tmp/b" 2>"$tmp/berr"
is "$?" 0 "an unreadable line: exit 0"
check "it is reported with its line number" grep -q 'line 1: ' "$tmp/berr"
is "$(wc -l <"$tmp/b")" "$(wc -l <"$tmp/all")" "the other lines are read"

# members of the wrong type or range are passed over, never trusted
if command -v python3 >/dev/null; then
	python3 - "$log" >"$tmp/odd.jsonl" <<'PY'
import json, sys
l = json.loads(open(sys.argv[1]).readline())
d = l["digest"]
d["grid"] = [1, "x", {"node": 5, "c": []}, {"node": "n1", "first_slice": 2**62, "n": 3,
             "slice_length_s": 60, "c": {"posix_write_bytes": [1, 2, 3]}},
             {"node": "n1", "first_slice": 28333334, "n": 2, "slice_length_s": 60,
              "c": {"posix_write_bytes": "no", "posix_read_bytes": [{}, 7]}}]
d["ranks"] = {"nodes": [1, None], "cols": [None, 3], "rows": [1, "x", [None], {}]}
print(json.dumps(l))
PY
	./lwm2 grid -f "$tmp/odd.jsonl" >"$tmp/o" 2>"$tmp/oerr"
	is "$?" 0 "odd members: exit 0"
	is "$(tail -n +2 "$tmp/o" | awk '{print $6}' | tr '\n' ' ')" "0 " "only the slice that holds a number is kept"
	./lwm2 nodes -f "$tmp/odd.jsonl" --all >"$tmp/on" 2>&1
	is "$?" 0 "odd members: nodes exit 0"
	./lwm2 grid -f "$tmp/odd.jsonl" --interference >/dev/null 2>&1
	is "$?" 0 "odd members: --interference exit 0"
else
	for _ in 1 2 3 4; do skip "python3 not installed"; done
fi

# usage errors and a missing file
./lwm2 grid >/dev/null 2>"$tmp/e1"
is "$?" 2 "no --file: usage error"
./lwm2 grid -f "$log" --metric nope >/dev/null 2>&1
is "$?" 2 "unknown metric: usage error"
./lwm2 grid -f "$log" -S @1700000100 -E @1700000000 >/dev/null 2>&1
is "$?" 2 "start after end: usage error"
./lwm2 nodes -f "$log" --metric mpi >/dev/null 2>&1
is "$?" 2 "nodes --metric: usage error"
./lwm2 grid -f "$log" -j 101 >/dev/null 2>&1
is "$?" 2 "-j without --interference: usage error"
./lwm2 grid -f "$tmp/none.jsonl" >/dev/null 2>"$tmp/e2"
is "$?" 1 "a missing log: exit 1"
check "and a message" grep -q "lwm2: grid: " "$tmp/e2"
done_testing
