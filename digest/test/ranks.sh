#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 ranks`: a job's processes metric by metric, from a log of known
# content (./mkreportlog: 16 processes on 4 nodes, 15 % of their time in
# MPI calls, rank 3 on n1 85 %): quartiles, mean, standard deviation, the
# extremes' rank@node, the ranks banded by value (--groups), the same as
# JSON, the threads of the processes that had several (--threads), and
# what it cannot show.  Runs in the build directory.
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

# --- --threads: rank -> thread (mkreportlog's "threads": the even ranks
# ran a main thread, an I/O helper that ended and an idle one)
./mkreportlog 102 alice 16 4 1700000000 1 threads >"$tmp/threads.jsonl" ||
	diag "mkreportlog with threads failed"
out=$(./lwm2 ranks -f "$tmp/threads.jsonl" --threads 102 2>"$tmp/err")
is "$?" 0 "--threads: exit 0"
like "$out" "^Job 102: 24 threads of 8 processes that had several" \
	"--threads: a head line: the threads and their processes"
like "$out" $'\n'"0@n1"$'\n'"  TID [^"$'\n'"]*"$'\n'"  10000 +main +90\\.000 +80\\.0 +20\\.0 +0\\.0 +0\\.0 +20\\.000 +1\\.000 +10000000 +200000000000 +100000000000 +2\\.00"$'\n' \
	"the main thread: CPU time, earmark shares, MPI and I/O time, bytes, cycles, instructions, CPI"
like "$out" $'\n'"  10001 +ended +5\\.000 +50\\.0 +0\\.0 +50\\.0 +0\\.0 +0\\.000 +4\\.000 +1000000"$'\n' \
	"an ended thread without hardware counters: no cycles, instructions or CPI"
like "$out" $'\n'"  10002 +- +0\\.010 +- +- +- +- +0\\.000 +0\\.000 +0"$'\n' \
	"a thread without samples: its shares \"-\""
like "$out" $'\n'"14@n4"$'\n' "an even rank of the last node has its threads"
if [[ $out == *$'\n'"1@n1"$'\n'* ]]; then not_ok "a process of one thread has none"; else ok "a process of one thread has none"; fi
# the JSON against the digest's own rows
./lwm2 ranks -f "$tmp/threads.jsonl" --threads --json 102 >"$tmp/t.json"
is "$?" 0 "--threads --json: exit 0"
want=$(python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())["digest"]["ranks"]
t = r["threads"]; c = t["cols"]
out = []
for row in t["rows"]:
    x = dict(zip(c, row)); p = dict(zip(r["cols"], r["rows"][x["process"]]))
    s = sum(x["samples_" + e] for e in ("compute", "mpi", "io", "cuda"))
    out.append((p["rank"], r["nodes"][p["node"]], x["tid"], x["flags"] & 1 == 1, x["cpu_ns"] / 1e9,
                round(100.0 * x["samples_mpi"] / s, 6) if s else None, x["io_ns"] / 1e9, x["io_bytes"]))
print(sorted(out))' "$tmp/threads.jsonl")
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for p in d["ranks"]:
    for x in p["threads"]:
        m = x["share"]["mpi"]
        out.append((p["rank"], p["node"], x["tid"], x["main"], float(x["cpu_s"]),
                    round(float(m), 6) if m is not None else None, float(x["io_s"]), x["io_bytes"]))
print(sorted(out))' "$tmp/t.json")
is "$got" "$want" "--threads --json: every thread row of the digest with its process, CPU, MPI share, I/O"
is "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=d["ranks"][0]["threads"]; print((d["processes"], d["threads"], d["omitted"], float(t[0]["cpi"]), "cycles" in t[1]))' "$tmp/t.json")" \
	"(8, 24, 0, 2.0, False)" "--threads --json: counts, CPI where both counters ran, none where not"
# threads the digest did not keep are said
python3 -c 'import json,sys; l=json.loads(open(sys.argv[1]).readline()); l["digest"]["ranks"]["threads"]["omitted"]=5; print(json.dumps(l))' \
	"$tmp/threads.jsonl" >"$tmp/omitted.jsonl"
like "$(./lwm2 ranks -f "$tmp/omitted.jsonl" --threads 102)" $'\n'"5 more threads not kept by the digest" \
	"--threads: the threads the digest omitted, counted"
err=$(./lwm2 ranks -f "$tmp/job.jsonl" --threads 101 2>&1 >/dev/null)
is "$?" 1 "--threads of a digest without thread rows: exit 1"
like "$err" "job 101: the digest has no thread rows" "  and why"
if command -v sqlite3 >/dev/null; then
	./lwm2 db import --db "$tmp/t.db" "$tmp/threads.jsonl" >/dev/null 2>&1
	is "$(./lwm2 ranks --db "$tmp/t.db" --threads 102)" "$(./lwm2 ranks -f "$tmp/threads.jsonl" --threads 102)" \
		"--db --threads: the same as from the log"
else
	skip "--db --threads: the same as from the log" "sqlite3 not installed"
fi
./lwm2 ranks -f "$tmp/threads.jsonl" --threads --groups 102 >/dev/null 2>&1
is "$?" 2 "--threads with --groups: usage error"

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
