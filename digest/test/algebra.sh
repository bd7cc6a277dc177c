#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The algebra of digests (lwm2 diff --output, lwm2 mean, lwm2 combine) on
# digests of known content (./mkstatslog), and derived metrics in every
# view of lwm2 digest; runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
need_python3

# q FILE EXPR: EXPR over the log line in FILE (l) and its digest (d), with
# m(scope, id) a metric's [min, avg, max, n] of the job ("job") or a step.
q() {
	python3 -c '
import json, sys
l = json.loads(open(sys.argv[1]).read()); d = l["digest"]
def sc(s): return d["scope"] if s == "job" else [x for x in d["steps"] if x["step_id"] == s][0]
def m(s, i): x = sc(s)["metrics"][i]; return [x["min"], x["avg"], x["max"], x["n"]]
print(eval(sys.argv[2]))' "$@"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-algebra.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export LWM2_CONF="$tmp/lwm2.conf" # none: the site's must not count here
# A: steps 0 and 1 at 10 % MPI, 2 threads; B: steps 0 (30 %) and 2 (50 %), 1 thread.
echo 'job=7 user=u mpi=10 io=2 threads=2 cpt=2 steps=0,1' | ./mkstatslog --digest >"$tmp/A.json" &&
	echo 'job=8 user=u mpi=30 mpi.2=50 io=2 threads=1 cpt=2 steps=0,2' | ./mkstatslog --digest >"$tmp/B.json" || {
	echo "1..0 # SKIP mkstatslog failed"
	exit 0
}

# --- a job with itself: zero, rank by rank; the comparison's text unchanged
./lwm2 diff "$tmp/A.json" "$tmp/B.json" >"$tmp/plain.txt"
./lwm2 diff "$tmp/A.json" "$tmp/A.json" --output "$tmp/zero.jsonl" >/dev/null
is "$?" 0 "diff of a digest with itself: exit 0"
is "$(q "$tmp/zero.jsonl" 'sorted({x["avg"] for x in d["scope"]["metrics"].values()}), sorted({x["max"] for x in d["scope"]["metrics"].values()})')" \
	"([0], [0])" "every metric of A - A is 0, its extremes too"
is "$(q "$tmp/zero.jsonl" 'd["derived"]["operation"], d["derived"]["ranks_aligned"], [o["source"] for o in d["derived"]["operands"]] == [sys.argv[3]] * 2' "$tmp/A.json")" \
	"('diff', True, True)" "marked derived, rank by rank, naming its operands"
is "$(q "$tmp/zero.jsonl" 'd["scope"]["totals"]["posix_write_bytes"], m(0, "mpi_time")')" \
	"(0, [0, 0, 0, 4])" "counters' sums and each step: 0"
./lwm2 diff "$tmp/A.json" "$tmp/B.json" --output "$tmp/d.jsonl" >"$tmp/withoutput.txt"
is "$?" 1 "diff --output: the comparison's exit status"
cmp -s "$tmp/plain.txt" "$tmp/withoutput.txt" && ok "diff --output: the same text on stdout" ||
	not_ok "diff --output: the same text on stdout"

# --- B - A of two runs: per metric; the ranks do not line up (other steps)
is "$(q "$tmp/d.jsonl" 'm("job", "mpi_time"), m(0, "mpi_time")[1], m("job", "avg_threads")[1]')" \
	"([30, 30, 30, 8], 20, -1)" "B - A: MPI share +30 (step 0: +20), threads -1"
is "$(q "$tmp/d.jsonl" 'd["derived"]["ranks_aligned"], [s["step_id"] for s in d["steps"]], l["job_id"]')" \
	"(False, [0], 8)" "steps of both only; B's job id; ranks of other steps: averages only"

# --- the mean of two: the expected values
./lwm2 mean "$tmp/A.json" "$tmp/B.json" -o "$tmp/m.jsonl"
is "$?" 0 "mean: exit 0"
is "$(q "$tmp/m.jsonl" 'm("job", "mpi_time"), m(0, "mpi_time")[1], m("job", "avg_threads")[1], d["derived"]["operation"], l["job_id"]')" \
	"([20, 25, 30, 8], 20, 1.5, 'mean', 7)" "mean: MPI share 25 % (10 and 40), step 0 20 %, 1.5 threads"
./lwm2 mean "$tmp/A.json" "$tmp/A.json" "$tmp/A.json" >"$tmp/m3.jsonl"
is "$(q "$tmp/m3.jsonl" 'm("job", "mpi_time"), d["derived"]["ranks_aligned"], len(d["ranks"]["rows"])')" \
	"([10, 10, 10, 8], True, 8)" "mean of three alike: the same figures, rank by rank"

# --- combine: each metric from the first that has it; every step
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in [d["scope"]] + d["steps"]:
    del s["metrics"]["mpi_time"]; s["missing"]["mpi_time"] = "not measured: no MPI"
for r in d["ranks"]["rows"]: r[d["ranks"]["cols"].index("mpi_time")] = None
json.dump(d, open(sys.argv[2], "w"))' "$tmp/A.json" "$tmp/A-nompi.json"
./lwm2 combine "$tmp/A-nompi.json" "$tmp/B.json" >"$tmp/c.jsonl"
is "$?" 0 "combine: exit 0"
is "$(q "$tmp/c.jsonl" 'm("job", "mpi_time")[1], m("job", "avg_threads")[1], [s["step_id"] for s in d["steps"]], d["derived"]["operation"]')" \
	"(40, 2, [0, 1, 2], 'merge')" "combine: MPI from B, threads from A, the steps of both"
./lwm2 mean "$tmp/A-nompi.json" "$tmp/B.json" >"$tmp/mn.jsonl"
is "$(q "$tmp/mn.jsonl" 'd["scope"]["missing"]["mpi_time"]')" "measured in 1 of 2 operands" \
	"mean: a metric of one operand only is missing, and why"

# --- every reader renders them, marked
./lwm2 digest --file "$tmp/d.jsonl" -j 8 -S 2000-01-01 >"$tmp/d.txt"
is "$?" 0 "digest --file reads the difference"
grep -q '^Derived: the difference B - A of 2 digests, not a run: A = .*A.json, B = .*B.json$' "$tmp/d.txt" &&
	ok "text digest: the derived line" || not_ok "text digest: the derived line"
grep -q 'Guidance\|\* ' "$tmp/d.txt" && not_ok "no guidance on a difference" || ok "no guidance on a difference"
./lwm2 ranks 7 --file "$tmp/m3.jsonl" >"$tmp/r.txt"
is "$?" 0 "ranks reads the mean"
grep -q '^Derived: the mean of 3 digests' "$tmp/r.txt" && ok "ranks: the derived line" || not_ok "ranks: the derived line"
./lwm2 report -j 7 --file "$tmp/m3.jsonl" -o "$tmp/r.html" 2>/dev/null
is "$?" 0 "report reads the mean"
grep -q 'Derived: the mean of 3 digests' "$tmp/r.html" && ok "report: the derived line" || not_ok "report: the derived line"
./lwm2 render "$tmp/c.jsonl" >"$tmp/c.txt"
grep -q '^Derived: the merge' "$tmp/c.txt" && ok "render: the merge" || not_ok "render: the merge"
./lwm2 diff "$tmp/zero.jsonl" "$tmp/zero.jsonl" >/dev/null
is "$?" 0 "a derived digest is an operand too"
# an older reader: the members it does not know are skipped
./lwm2 digest --file "$tmp/d.jsonl" -j 8 -S 2000-01-01 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["digest"]["lwm2_digest_version"])' >"$tmp/v"
is "$(cat "$tmp/v")" 2 "the digest keeps version 2: the new members are skipped by older readers"

# --- derived metrics: text, JSON, -o, n/a, errors; lwm2.conf and --metric
printf '%s\n' '# per thread' 'DerivedMetric = per_thread = mpi_time / avg_threads' \
	'DerivedMetric=bpc=posix_write_bytes/posix_write_calls' >"$LWM2_CONF"
./lwm2 mean "$tmp/A.json" "$tmp/A.json" >"$tmp/a.jsonl"
./lwm2 digest --file "$tmp/a.jsonl" -j 7 -S 2000-01-01 -o JobID,mpi_time,per_thread,bpc,x -n \
	--metric 'x=(mpi_time+2)*3' --metric 'z=mpi_time/(avg_threads-2)' >"$tmp/o.txt"
is "$(tr -s ' ' <"$tmp/o.txt")" " 7 10 5 104857.6 36" "-o columns: lwm2.conf's and --metric's, precedence"
./lwm2 digest --file "$tmp/a.jsonl" -j 7 -S 2000-01-01 --metric 'z=mpi_time/(avg_threads-2)' >"$tmp/t.txt"
grep -q '^  z  *n/a  = mpi_time/(avg_threads-2) (division by zero)$' "$tmp/t.txt" &&
	ok "text: n/a for a division by zero" || not_ok "text: n/a for a division by zero"
grep -q '^  per_thread  *5  = mpi_time / avg_threads$' "$tmp/t.txt" &&
	ok "text: lwm2.conf's derived metric" || not_ok "text: lwm2.conf's derived metric"
is "$(./lwm2 digest --file "$tmp/a.jsonl" -j 7 -S 2000-01-01 --json | python3 -c 'import json,sys; s=json.load(sys.stdin)[0]["digest"]["scope"]["derived_metrics"]; print(s["per_thread"]["value"], s["bpc"]["expr"])')" \
	"5 posix_write_bytes/posix_write_calls" "JSON: derived_metrics"
./lwm2 digest --file "$tmp/a.jsonl" -j 7 --metric 'bad=nosuch/2' 2>"$tmp/err" >/dev/null
is "$?" 2 "an unknown name: usage error"
grep -q 'bad derived metric "bad=nosuch/2": unknown name "nosuch"' "$tmp/err" &&
	ok "an unknown name is named" || not_ok "an unknown name is named"
./lwm2 digest --file "$tmp/a.jsonl" -j 7 --metric 'mpi_time=1' 2>"$tmp/err" >/dev/null
grep -q 'mpi_time is a metric or counter already' "$tmp/err" && ok "a metric's name is refused" ||
	not_ok "a metric's name is refused"
./lwm2 mean "$tmp/A.json" "$tmp/A.json" --metric 'r=mpi_time*2' >"$tmp/w.jsonl"
is "$(q "$tmp/w.jsonl" 'd["scope"]["derived_metrics"]["r"]["value"], "r" in d["ranks"]["cols"]')" \
	"(20, True)" "mean --metric: written into the digest and its per-process table"
./lwm2 ranks 7 --file "$tmp/w.jsonl" >"$tmp/wr.txt"
grep -q '^  r  *20  = mpi_time\*2$' "$tmp/wr.txt" &&
	ok "ranks: the derived metric" || not_ok "ranks: the derived metric"
echo 'DerivedMetric = broken=(' >"$LWM2_CONF"
./lwm2 mean "$tmp/A.json" "$tmp/A.json" >/dev/null 2>"$tmp/err"
is "$?" 1 "a bad DerivedMetric line: exit 1"
grep -q 'DerivedMetric: bad derived metric "broken=("' "$tmp/err" && ok "and it is named" ||
	not_ok "and it is named"

# --- operands: counts and files
: >"$LWM2_CONF"
./lwm2 mean "$tmp/A.json" 2>/dev/null
is "$?" 2 "mean of one: usage"
./lwm2 combine "$tmp/A.json" "$tmp/nosuch.json" 2>"$tmp/err"
is "$?" 1 "an unreadable operand: exit 1"
grep -q "combine: couldn't read $tmp/nosuch.json" "$tmp/err" && ok "and it is named" || not_ok "and it is named"
done_testing
