#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 ranks`: a job's processes metric by metric, from a log of known
# content (./mkreportlog: 16 processes on 4 nodes, 15 % of their time in
# MPI calls, rank 3 on n1 85 %): quartiles, mean, standard deviation, the
# extremes' rank@node, the ranks banded by value (--groups), the same as
# JSON, and what it cannot show.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
need_python3
export TZ=UTC

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-ranks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
./mkreportlog 101 alice 16 4 1700000000 >"$tmp/job.jsonl" || skip_all "mkreportlog failed"

# jq-less: py FILE EXPR with d the parsed JSON, m its metrics
py() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=d["metrics"]; print(eval(sys.argv[2]))' "$@"
}

# --- the text table
out=$(./lwm2 ranks -f "$tmp/job.jsonl" 101 2>"$tmp/err")
is "$?" 0 "ranks JOB: exit 0"
like() { if [[ $1 =~ $2 ]]; then ok "$3"; else not_ok "$3"; diag "got: '$1'" "want: /$2/"; fi; }
like "$out" "^Job 101: 16 processes on 4 nodes" "a head line: the processes and nodes"
like "$out" $'\n'"mpi_time +16 +15 +15 +15 +15 +85 +19.38 +16.94 +% +0@n1 +3@n1" \
	"mpi_time: min, quartiles, max, mean, standard deviation, rank@node of the extremes"

# --- the JSON: the figures as the digest's own
./lwm2 ranks -f "$tmp/job.jsonl" --json 101 >"$tmp/r.json"
is "$?" 0 "--json: exit 0"
is "$(py "$tmp/r.json" '(d["processes"], d["nodes"], m["mpi_time"]["n"], m["mpi_time"]["max_at"])')" \
	"(16, 4, 16, {'rank': 3, 'node': 'n1', 'step': 0})" "--json: processes, nodes, the maximum's rank, node and step"
want=$(python3 -c 'import json,sys; s=json.loads(open(sys.argv[1]).readline())["digest"]["scope"]["metrics"]["mpi_time"]; print("%.6g %.6g %.6g" % (s["min"], s["avg"], s["max"]))' "$tmp/job.jsonl")
is "$(py "$tmp/r.json" '"%.6g %.6g %.6g" % (m["mpi_time"]["min"], m["mpi_time"]["mean"], m["mpi_time"]["max"])')" "$want" \
	"min, mean and max are the digest's job-wide figures ($want)"
is "$(py "$tmp/r.json" 'round(m["mpi_time"]["stddev"], 4)')" \
	"$(python3 -c 'import statistics; print(round(statistics.pstdev([15]*15+[85]), 4))')" \
	"the standard deviation over the processes (the population's)"

# --- --groups: the ranks by band of value, TOPAS's grouping
out=$(./lwm2 ranks -f "$tmp/job.jsonl" --groups --metric mpi_time 101)
like "$out" $'\n'" +15 +\\.\\. 32\\.5 +15  0-2@n1 4-7@n2 8-11@n3 12-15@n4"$'\n'" +67\\.5 +\\.\\. 85 +1  3@n1" \
	"--groups: the 15 ranks of the low band by node as ranges, rank 3 alone in the top band"
./lwm2 ranks -f "$tmp/job.jsonl" --groups --bands 2 --metric mpi_time,posix_io_time --json 101 >"$tmp/g.json"
is "$(py "$tmp/g.json" '(sorted(m), [(g["n"], g["from"], g["to"]) for g in m["mpi_time"]["groups"]], m["mpi_time"]["groups"][1]["ranks"])')" \
	"(['mpi_time', 'posix_io_time'], [(15, 15, 50), (1, 50, 85)], [{'rank': 3, 'node': 'n1', 'step': 0}])" \
	"--groups --bands 2 --metric --json: the bands, their ranks"

# --- from the central database: the same
if command -v sqlite3 >/dev/null; then
	./lwm2 db import --db "$tmp/j.db" "$tmp/job.jsonl" >/dev/null 2>&1
	is "$(./lwm2 ranks --db "$tmp/j.db" --groups 101)" "$(./lwm2 ranks -f "$tmp/job.jsonl" --groups 101)" \
		"--db: the same as from the log"
else
	skip "--db: the same as from the log" "sqlite3 not installed"
fi

# --- what it cannot show, and usage errors
python3 -c 'import json,sys; l=json.loads(open(sys.argv[1]).readline()); del l["digest"]["ranks"]; print(json.dumps(l))' \
	"$tmp/job.jsonl" >"$tmp/old.jsonl"
err=$(./lwm2 ranks -f "$tmp/old.jsonl" 101 2>&1 >/dev/null)
is "$?" 1 "a digest without per-process table: exit 1"
like "$err" "job 101: the digest has no per-process table" "  and why"
err=$(./lwm2 ranks -f "$tmp/job.jsonl" 999 2>&1 >/dev/null)
is "$?" 1 "a job not in the log: exit 1"
like "$err" "ranks: job 999: not in the log" "  and why"
./lwm2 ranks -f "$tmp/job.jsonl" >/dev/null 2>&1
is "$?" 2 "no job: usage error"
./lwm2 ranks -f "$tmp/job.jsonl" --metric nothing 101 >/dev/null 2>&1
is "$?" 2 "an unknown metric: usage error"
./lwm2 ranks -f "$tmp/job.jsonl" --bands 3 101 >/dev/null 2>&1
is "$?" 2 "--bands without --groups: usage error"
./lwm2 ranks -f "$tmp/job.jsonl" --groups --bands 0 101 >/dev/null 2>&1
is "$?" 2 "--bands 0: usage error"

done_testing
