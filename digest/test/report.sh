#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 report`: job pages and site pages from logs of known content (built
# by the digest library through ./mkreportlog): the numbers shown are the
# digest's, the outlier rank is named, the page holds no URL and no script,
# a 10,000-process job stays under 2 MB, the compact form says what it
# cannot show, the site directory links site -> user -> job -> node ->
# rank, and bad input is refused clearly.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
need_python3
export TZ=UTC

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# 16 processes on 4 nodes, rank 3 (on n1) 80 % in point-to-point calls
./mkreportlog 101 alice 16 4 1700000000 >"$tmp/job.jsonl" ||
	skip_all "mkreportlog failed"

# --- a job page from the log
./lwm2 report --file "$tmp/job.jsonl" -j 101 -o "$tmp/j.html" 2>"$tmp/err"
is "$?" 0 "job page: exit 0"
want=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline())["digest"]["scope"]["metrics"]["mpi_time"]; print("%g %g %g" % (d["min"], d["avg"], d["max"]))' "$tmp/job.jsonl")
got=$(python3 -c 'import re,sys; m=re.search(r"data-metric=\"mpi_time\" data-min=\"([^\"]*)\" data-avg=\"([^\"]*)\" data-max=\"([^\"]*)\"", open(sys.argv[1]).read()); print("%g %g %g" % tuple(float(x) for x in m.groups()))' "$tmp/j.html")
is "$got" "$want" "digest table: min/avg/max of mpi_time are the digest's ($want)"
# the visible numbers are those of the text digest
./lwm2 render "$tmp/job.jsonl" >"$tmp/j.txt"
avg=$(python3 -c 'import re,sys; m=re.search(r"data-metric=\"mpi_time\".*?<td class=\"n avg\">([^<]*)</td>", open(sys.argv[1]).read()); print(m.group(1))' "$tmp/j.html")
check "the average shown ($avg) is the one lwm2 render prints" grep -q "Time in MPI calls.*$avg" "$tmp/j.txt"
check "the maximum is located at rank 3 on n1" grep -q 'rank 3 on n1</td></tr>' "$tmp/j.html"
check "the outlier rank is named with its node" grep -q '<span class="outlier" data-rank="3" data-node="n1">rank 3 on n1 80.0 %' "$tmp/j.html"
check "guidance fires (mpi-imbalance)" grep -q 'data-rule="mpi-imbalance"' "$tmp/j.html"
n=$(grep -o '<path d="M[^"]' "$tmp/j.html" | wc -l)
check "SVG paths with data ($n)" test "$n" -ge 10
check "box plot of the MPI share: median 15 %, one outlier" \
	grep -q 'data-metric="mpi_time" data-n="16" data-q1="15" data-median="15" data-q3="15" data-outliers="1"' "$tmp/j.html"
check "grid row: four node rows" grep -q 'step 0 n4</text>' "$tmp/j.html"
check "no URL in the page" bash -c "! grep -Eqi 'https?:|//[a-z0-9]' '$tmp/j.html'"
check "no script, no external resource" bash -c "! grep -Eqi '<script|<link|<img|<iframe|src=' '$tmp/j.html'"
check "nothing on stderr" test ! -s "$tmp/err"

# --- stdout
./lwm2 report --file "$tmp/job.jsonl" -j 101 -o - | cmp -s - "$tmp/j.html"
is "$?" 0 "-o - writes the same page to stdout"

# --- the compact form (what accounting holds) says what it cannot show
python3 - "$tmp/job.jsonl" >"$tmp/compact.jsonl" <<'EOF'
import json, sys
l = json.loads(open(sys.argv[1]).readline())
d = l["digest"]
for k in ("grid", "ranks", "incomplete_list"):
    d.pop(k, None)
d["compact"] = True
print(json.dumps(l))
EOF
./lwm2 report --file "$tmp/compact.jsonl" -j 101 -o "$tmp/c.html"
is "$?" 0 "compact digest: exit 0"
check "compact: the per-rank view is said to be unavailable" grep -q 'Not available from the compact digest of AdminComment: it keeps' "$tmp/c.html"
check "compact: the grid is said to be unavailable" grep -q 'the time-slice series are only in jobcomp/lwm2' "$tmp/c.html"
check "compact: the digest table is still there" grep -q 'data-metric="mpi_time" data-min' "$tmp/c.html"

# --- missing nodes: the page says so
python3 - "$tmp/job.jsonl" >"$tmp/miss.jsonl" <<'EOF'
import json, sys
l = json.loads(open(sys.argv[1]).readline())
d = l["digest"]
d["job"]["node_count"] = 6
d["flags"] = ["partial", "missing_nodes"]
d["scope"]["incomplete"] = 1
d["incomplete_list"] = [{"step": 0, "node": "n2", "rank": 5, "pid": 4711}]
print(json.dumps(l))
EOF
./lwm2 report --file "$tmp/miss.jsonl" -j 101 -o "$tmp/m.html"
check "missing nodes are noted (4 of 6)" grep -q 'Node records are missing: 4 of 6 allocated nodes reported' "$tmp/m.html"
check "incomplete processes are listed" grep -q 'rank 5 on n2 (step 0)' "$tmp/m.html"
check "the grid notes the missing rows" grep -q 'Nodes without a node record have no row here' "$tmp/m.html"

# --- 10,000 processes on 313 nodes: size and time
./mkreportlog 200 big 10000 313 1700001000 >"$tmp/big.jsonl"
t0=$(date +%s%N)
./lwm2 report --file "$tmp/big.jsonl" -j 200 -o "$tmp/big.html"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
size=$(stat -c %s "$tmp/big.html")
diag "10,000 processes: log line $(stat -c %s "$tmp/big.jsonl") bytes, page $size bytes in $ms ms"
is "$rc" 0 "10,000 processes: exit 0"
check "10,000 processes: page under 2 MB ($size bytes)" test "$size" -lt 2000000
check "10,000 processes: bars aggregated and said so" grep -q '10000 processes in 800 bars' "$tmp/big.html"
check "10,000 processes: rank 3 named" grep -q 'data-rank="3" data-node="n1">rank 3 on n1' "$tmp/big.html"

# --- the site: four jobs of three users on 8 nodes
{
	./mkreportlog 101 alice 16 4 1700000000
	./mkreportlog 102 bob 8 2 1700000050 5
	./mkreportlog 103 alice 4 1 1700000200 2
	./mkreportlog 104 carol 32 8 1700000300 1
	echo 'not json'
	echo '{"job_id":105,"user":"dave","start":1700000000,"end":1700000100,"status":"no_records","reason":"no node records"}'
} >"$tmp/site.jsonl"
./lwm2 report --site --file "$tmp/site.jsonl" -o "$tmp/site" 2>"$tmp/err"
is "$?" 0 "site: exit 0"
check "site: the unreadable line is reported with its number" grep -q 'line 5' "$tmp/err"
for f in index.html grid-mpi.html grid-io.html grid-cpu.html users/alice.html users/bob.html \
	users/carol.html users/dave.html jobs/101.html jobs/104.html jobs/101/node-n1.html; do
	check "site: $f" test -s "$tmp/site/$f"
done
check "site grid: 8 node rows, one node each" grep -q 'data-metric="mpi" data-rows="8" data-cols="[0-9]*" data-per-row="1"' "$tmp/site/index.html"
check "site grid: job 104 outlined with a link to its page" grep -q '<a href="jobs/104.html"><rect class="job"' "$tmp/site/index.html"
check "site: user link" grep -q '<a href="users/alice.html">' "$tmp/site/index.html"
check "user page: links to the job" grep -q '<a href="../jobs/103.html">103</a>' "$tmp/site/users/alice.html"
check "user page: a job without digest is listed" grep -q '105 (no digest)' "$tmp/site/users/dave.html"
check "job page: node link" grep -q '<a href="101/node-n1.html">n1</a>' "$tmp/site/jobs/101.html"
check "job page: outlier links to its rank" grep -q '<a href="101/node-n1.html#rank-3">rank 3 on n1</a>' "$tmp/site/jobs/101.html"
check "node page: rank anchor" grep -q '<tr id="rank-3"><td>3</td>' "$tmp/site/jobs/101/node-n1.html"
check "site: distribution of the MPI share weighted by core-hours" grep -q 'data-dist="mpi_time"' "$tmp/site/index.html"
check "site: no URL in any page" bash -c "! grep -rEqi 'https?:' '$tmp/site'"
./lwm2 report --site --file "$tmp/site.jsonl" -S @1700000250 -o "$tmp/site2" 2>/dev/null
check "site -S: only jobs that ended after it (101 left out)" bash -c "test -e '$tmp/site2/jobs/104.html' && test ! -e '$tmp/site2/jobs/101.html'"

# --- a week of a 1,000-node cluster: the grid is aggregated to its size
for i in $(seq 0 99); do
	./mkreportlog $((1000 + i)) "u$((i % 7))" 100 50 $((1700000000 + i * 6040)) $((1 + (i * 50) % 1000))
done >"$tmp/week.jsonl"
t0=$(date +%s%N)
./lwm2 report --site --file "$tmp/week.jsonl" -o "$tmp/week" --metric io
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 0 "week: exit 0"
diag "week, 100 jobs on 1000 nodes: $ms ms, index.html $(stat -c %s "$tmp/week/index.html") bytes"
check "week: 1000 nodes in 500 rows of 2, at most 1000 columns" \
	grep -Eq 'data-metric="io" data-rows="500" data-cols="([1-9][0-9]{0,2}|1000)" data-per-row="2"' "$tmp/week/index.html"

# --- no share above 100 %: a slice that ends a long MPI wait is credited
# the whole wait (here 20 times the slice's MPI time, 260 s in 10 s slices
# of 4 processes); no view may show more than all of the slice
python3 -c 'import json,sys
for line in open(sys.argv[1]):
	l = json.loads(line)
	for g in l["digest"].get("grid", []):
		g["c"]["mpi_p2p_ns"] = [v * 20 for v in g["c"]["mpi_p2p_ns"]]
	print(json.dumps(l))' "$tmp/job.jsonl" >"$tmp/wait.jsonl"
# shares NAME FILE...: every "NN.N %" (or "NN %") of the files is at most 100
shares() {
	local name=$1 over
	shift
	over=$(grep -ohE '[0-9]+(\.[0-9]+)? ?%' "$@" | tr -d ' %' | awk '$1 > 100' | sort -u | head -3)
	if [ -z "$over" ]; then ok "$name: no share above 100 %"; else not_ok "$name: shares above 100 %: $over"; fi
}
./lwm2 report --site --file "$tmp/wait.jsonl" -o "$tmp/wait" 2>/dev/null
shares "site pages of a job with long waits" "$tmp"/wait/*.html
check "site grid: the MPI scale ends at 100 %" grep -q 'colour from 0 (light) to 100.0 %' "$tmp/wait/grid-mpi.html"
./lwm2 report --file "$tmp/wait.jsonl" -j 101 -o "$tmp/wait.html" 2>/dev/null
shares "job page of a job with long waits" "$tmp/wait.html"
./lwm2 grid --file "$tmp/wait.jsonl" --metric mpi_share --json >"$tmp/wait-grid.json" 2>/dev/null
check "grid --json: every MPI share is at most 100" python3 -c 'import json,sys
c = json.load(open(sys.argv[1]))["cells"]
sys.exit(not c or any(x["mpi_share"] > 100 for x in c))' "$tmp/wait-grid.json"

# --- the text digest's notes on the job page: on their flags, and only there
check "job page without flags: no mapped-file or io_uring note" \
	bash -c "! grep -Eq 'mapped files|io_uring' '$tmp/j.html'"
python3 -c 'import json,sys
l = json.loads(open(sys.argv[1]).readline())
l["digest"]["scope"]["mmap_write_processes"] = 2
l["digest"]["scope"]["io_uring_processes"] = 1
print(json.dumps(l))' "$tmp/job.jsonl" >"$tmp/flags.jsonl"
./lwm2 report --file "$tmp/flags.jsonl" -j 101 -o "$tmp/flags.html" 2>/dev/null
check "job page: the mapped-file note on its flag" grep -q '2 process(es) mapped files shared and writable' "$tmp/flags.html"
check "job page: the io_uring note on its flag" grep -q '1 process(es) set up an io_uring' "$tmp/flags.html"

# --- bad input
./lwm2 report --file "$tmp/job.jsonl" -j 999 -o "$tmp/x.html" 2>"$tmp/err"
is "$?" 1 "unknown job: exit 1"
check "unknown job: said so" grep -q 'job 999: not in the log' "$tmp/err"
check "unknown job: no file written" test ! -e "$tmp/x.html"
./lwm2 report --file "$tmp/site.jsonl" -j 105 -o "$tmp/x.html" 2>"$tmp/err"
is "$?" 1 "job without digest: exit 1"
check "job without digest: the log's reason" grep -q 'job 105: no node records' "$tmp/err"
./lwm2 report --file "$tmp/job.jsonl" 2>/dev/null
is "$?" 2 "no -j: usage error"
./lwm2 report --site --file "$tmp/job.jsonl" 2>/dev/null
is "$?" 2 "--site without -o: usage error"
./lwm2 report --site --file "$tmp/job.jsonl" --metric foo -o "$tmp/y" 2>/dev/null
is "$?" 2 "--metric foo: usage error"
./lwm2 report --file "$tmp/job.jsonl" -j 101 -o /nonexistent/dir/x.html 2>"$tmp/err"
is "$?" 1 "unwritable output: exit 1"
check "unwritable output: said so" grep -q "couldn't write /nonexistent/dir/x.html" "$tmp/err"

# The labels follow the events the counter roles were counted with: the
# task clock in the floating-point role is named, never called floating
# point, in the digest's table and the per-process box plots.
python3 - "$tmp/job.jsonl" >"$tmp/events.jsonl" <<'EOF'
import json, sys
l = json.loads(open(sys.argv[1]).readline())
d = l["digest"]
d["counter_events"] = {"fp_ops": "perf::TASK-CLOCK"}
d["scope"]["metrics"]["fp_rate"] = {"min": 1e8, "avg": 2e8, "max": 4e8, "n": 16,
                                    "min_at": [0, "n1"], "max_at": [3, "n1"]}
d["scope"].get("missing", {}).pop("fp_rate", None)
r = d["ranks"]
k = r["cols"].index("fp_rate")
for i, row in enumerate(r["rows"]):
    row[k] = 1e8 * (1 + i % 4)
print(json.dumps(l))
EOF
./lwm2 report --file "$tmp/events.jsonl" -j 101 -o "$tmp/e.html" 2>"$tmp/err"
is "$?" 0 "a digest with counter events: exit 0"
check "the digest table names the event counted" \
	grep -q '<tr data-metric="fp_rate"[^>]*><td>perf::TASK-CLOCK per second</td>' "$tmp/e.html"
check "the box plot's label too" grep -q '>perf::TASK-CLOCK per second</text>' "$tmp/e.html"
check "the job's table says what was counted" \
	grep -q '<tr><th>Counted with</th><td>fp_ops perf::TASK-CLOCK</td></tr>' "$tmp/e.html"
check "no label says floating-point rate" bash -c "! grep -q 'Floating-point rate' '$tmp/e.html'"

# --- the program's named regions: a table where the digest has "regions"
# (8 processes on 2 nodes: "solver" on all, 10 + rank s; "halo <exchange>"
# on ranks 0 to 3; rank 0 folded 3 more names), none where it has not
check "no regions table without regions" bash -c "! grep -q 'id=\"regions\"' '$tmp/j.html'"
./mkreportlog 301 alice 8 2 1700000000 1 regions >"$tmp/regions.jsonl" ||
	diag "mkreportlog with regions failed"
./lwm2 report --file "$tmp/regions.jsonl" -j 301 -o "$tmp/r.html" 2>"$tmp/err"
is "$?" 0 "a digest with regions: exit 0"
check "the page has the regions table and links to it" \
	bash -c "grep -q '<h2 id=\"regions\">Named regions</h2>' '$tmp/r.html' && grep -q 'href=\"#regions\"' '$tmp/r.html'"
# the figures the page shows are the digest's
want=$(python3 -c '
import json, sys
for e in json.loads(open(sys.argv[1]).readline())["digest"]["regions"]["names"]:
    t, s = e["seconds"], e["share"]
    print("%s %d %d %g %g %g %g" % (e["name"].split()[0], e["calls"], e["ranks"], t["min"], t["avg"], t["max"], s["avg"]))
' "$tmp/regions.jsonl")
got=$(python3 -c '
import re, sys
for m in re.finditer(r"<tr data-region=\"([^\"]*)\" data-calls=\"(\d+)\" data-ranks=\"(\d+)\" data-min=\"([^\"]*)\" data-avg=\"([^\"]*)\" data-max=\"([^\"]*)\" data-share=\"([^\"]*)\"", open(sys.argv[1]).read()):
    g = m.groups()
    print("%s %s %s %g %g %g %g" % ((g[0].split()[0],) + g[1:3] + tuple(float(x) for x in g[3:])))
' "$tmp/r.html")
is "$got" "$want" "regions table: calls, processes, min/avg/max time and share are the digest's"
check "solver: 80 calls by 8 processes, busiest first" \
	bash -c "grep -o 'data-region=\"[^\"]*\" data-calls=\"[0-9]*\" data-ranks=\"[0-9]*\"' '$tmp/r.html' | head -n 1 | grep -qx 'data-region=\"solver\" data-calls=\"80\" data-ranks=\"8\"'"
check "solver's shortest at rank 0 on n1, longest at rank 7 on n2" \
	grep -q '<tr data-region="solver".*<td>rank 0 on n1</td><td class="n">17.0 s</td><td>rank 7 on n2</td>' "$tmp/r.html"
check "a region's name is escaped" \
	bash -c "grep -q '<tr data-region=\"halo &lt;exchange&gt;\" data-calls=\"4000\" data-ranks=\"4\"' '$tmp/r.html' && ! grep -q '<exchange>' '$tmp/r.html'"
check "the folded names are counted" \
	grep -q '<tr class="folded" data-folded="3"><td colspan="9">3 more names folded: 7 calls, 0.50 s over the job</td></tr>' "$tmp/r.html"
check "the text digest names the same regions" \
	bash -c "./lwm2 render '$tmp/regions.jsonl' | grep -q '^  solver: 80 calls by 8 processes'"

# --- threads as a scope: the table of the threads of the processes that
# had several (mkreportlog's "threads": the even ranks ran a main thread,
# an I/O helper that ended and an idle one), none where the digest has none
check "no threads table without threads" bash -c "! grep -q 'id=\"threads\"' '$tmp/j.html'"
./mkreportlog 302 alice 8 2 1700000000 1 threads >"$tmp/threads.jsonl" ||
	diag "mkreportlog with threads failed"
./lwm2 report --file "$tmp/threads.jsonl" -j 302 -o "$tmp/t.html" 2>"$tmp/err"
is "$?" 0 "a digest with threads: exit 0"
check "the page has the threads table, linked from the top and from the per-rank view" \
	bash -c "grep -q '<h2 id=\"threads\">Threads</h2>' '$tmp/t.html' && [ \"\$(grep -o 'href=\"#threads\"' '$tmp/t.html' | wc -l)\" -eq 2 ]"
# the figures the page shows are the digest's rows
want=$(python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())["digest"]["ranks"]
t = r["threads"]; c = t["cols"]
for row in sorted(t["rows"]):
    x = dict(zip(c, row)); p = dict(zip(r["cols"], r["rows"][x["process"]]))
    print(p["rank"], x["tid"], x["cpu_ns"], ",".join(str(x["samples_" + e]) for e in ("compute", "mpi", "io", "cuda")), x["io_bytes"])
' "$tmp/threads.jsonl")
got=$(python3 -c '
import re, sys
rows = re.findall(r"<tr data-rank=\"(\d+)\" data-tid=\"(\d+)\" data-cpu-ns=\"(\d+)\" data-samples=\"([0-9,]+)\" data-io-bytes=\"(\d+)\"", open(sys.argv[1]).read())
for g in sorted(rows, key=lambda g: (int(g[0]), int(g[1]))):
    print(" ".join(g))
' "$tmp/t.html")
is "$got" "$want" "threads table: each thread's process, tid, CPU time, samples and I/O bytes are the digest's"
check "a process's main thread first, its samples' shares as a bar" \
	grep -q '<tr data-rank="0" data-tid="10000" [^>]*><td>0@n1</td><td class="n">10000</td><td>main</td><td class="n">90.0 s</td><td><svg [^>]*aria-label="compute 80.0 %, MPI 20.0 %, I/O 0.00 %, CUDA 0.00 %"><title>[^<]*</title><rect x="0.0" y="0" width="96.0" [^>]*/><rect x="96.0" y="0" width="24.0" ' "$tmp/t.html"
check "an ended thread says so, its time in file I/O and bytes" \
	grep -q '<tr data-rank="2" data-tid="10021" [^>]*><td>2@n1</td><td class="n">10021</td><td>ended</td>.*<td class="n">4.00 s</td><td class="n">1.00 MB</td></tr>' "$tmp/t.html"
check "a thread without samples has no bar" \
	grep -q '<tr data-rank="6" data-tid="10062" [^>]*><td>6@n2</td><td class="n">10062</td><td></td><td class="n">0.01 s</td><td>-</td>' "$tmp/t.html"
check "processes of one thread have no rows" bash -c "! grep -q '<tr data-rank=\"[1357]\" data-tid=' '$tmp/t.html'"
python3 -c 'import json,sys; l=json.loads(open(sys.argv[1]).readline()); l["digest"]["ranks"]["threads"]["omitted"]=5; print(json.dumps(l))' \
	"$tmp/threads.jsonl" >"$tmp/omitted.jsonl"
./lwm2 report --file "$tmp/omitted.jsonl" -j 302 -o "$tmp/o.html" 2>"$tmp/err"
check "the threads the digest omitted are counted" \
	grep -q '<tr class="folded" data-omitted="5"><td colspan="8">5 more threads not kept by the digest</td></tr>' "$tmp/o.html"

done_testing
