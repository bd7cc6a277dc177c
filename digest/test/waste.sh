#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Requested, used and wasted core-hours (digest/cmd/usage.c) in
# `lwm2 stats --by user|account|app` (text, --json, -p) and in the waste
# tables of `lwm2 report --site`, from a log of known content written
# here: cores x elapsed, the CPU time of the digest's executables (or of
# its "fit" block where it has one), memory only where both the request
# and the peak are known.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
export TZ=UTC
need_python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-waste.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/jobs.jsonl

# digest EXE PROCS EXECUTABLES [MORE]: a digest whose application is EXE
digest() {
	printf '{"lwm2_digest_version":2,"job":{"cpus_per_task":1},"application":{"exe":"%s"},"scope":{"processes":%s,"mpi_processes":0,"metrics":{},"executables":%s}%s}' \
		"$1" "$2" "$3" "${4:-}"
}
# alice (p1): 4 cores x 1 h, 1 h CPU; 8 cores x 2 h, 4 h + 1 h CPU (sed
# is in both lists and counts once) -> requested 20, used 6, waste 14.
# bob (p2): 2 cores x 1 h, the fit block's 1.5 h CPU (its executables say
# otherwise), 4096 MB asked, 1024 MB peak -> 2, 1.5, 0.5.
# carol (p2): no digest -> requested 4, used and waste not known.
# dave (p3): 16 cores x 1 h, 16 h CPU, a request but no peak -> 16, 16, 0.
{
	printf '{"job_id":1,"user":"alice","account":"p1","name":"a1","cpus":4,"start":1700000000,"end":1700003600,"digest":%s}\n' \
		"$(digest solver 4 '{"by_count":[{"exe":"solver","processes":4,"cpu_s":3600}],"by_cpu":[{"exe":"solver","processes":4,"cpu_s":3600}],"distinct":1}')"
	printf '{"job_id":2,"user":"alice","account":"p1","name":"a2","cpus":8,"start":1700000000,"end":1700007200,"digest":%s}\n' \
		"$(digest solver 8 '{"by_count":[{"exe":"sed","processes":40,"cpu_s":3600},{"exe":"solver","processes":8,"cpu_s":14400}],"by_cpu":[{"exe":"solver","processes":8,"cpu_s":14400},{"exe":"sed","processes":40,"cpu_s":3600}],"distinct":2}')"
	printf '{"job_id":3,"user":"bob","account":"p2","name":"b1","cpus":2,"start":1700000000,"end":1700003600,"mem_req_mb":4096,"digest":%s}\n' \
		"$(digest lmp 2 '{"by_count":[{"exe":"lmp","processes":2,"cpu_s":100}],"by_cpu":[{"exe":"lmp","processes":2,"cpu_s":100}],"distinct":1}' \
			',"fit":{"memory":{"requested_mb":4096,"peak_mb":1024,"source":"cgroup","verdict":"over"},"cpu":{"allocated_cores":2,"cpu_s":5400,"elapsed_s":3600,"efficiency":75,"verdict":"ok"}}')"
	printf '{"job_id":4,"user":"carol","account":"p2","name":"myjob","cpus":4,"start":1700000000,"end":1700003600}\n'
	printf '{"job_id":5,"user":"dave","account":"p3","name":"d1","cpus":16,"start":1700000000,"end":1700003600,"mem_req_mb":2048,"digest":%s}\n' \
		"$(digest python 16 '{"by_count":[{"exe":"python","processes":16,"cpu_s":57600}],"by_cpu":[{"exe":"python","processes":16,"cpu_s":57600}],"distinct":1}')"
} >"$log"

# py JSONFILE EXPR: EXPR with g = the groups by name, t = the total
py() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g={x["group"]:x["usage"] for x in d["groups"]}; t=d["total"]["usage"]; print(eval(sys.argv[2]))' "$@"
}

# --- stats --json: exact figures per user, account and app
./lwm2 stats -f "$log" --by user --json >"$tmp/u.json" 2>"$tmp/err"
is "$?" 0 "--by user --json: exit 0"
is "$(cat "$tmp/err")" "" "--by user: no line skipped"
is "$(py "$tmp/u.json" '[(k, g[k]["requested_core_hours"], g[k]["used_core_hours"], g[k]["wasted_core_hours"]) for k in sorted(g)]')" \
	"[('alice', 20, 6, 14), ('bob', 2, 1.5, 0.5), ('carol', 4, None, None), ('dave', 16, 16, 0)]" \
	"--by user: requested, used, wasted core-hours"
is "$(py "$tmp/u.json" '(g["alice"]["efficiency_pct"], g["bob"]["efficiency_pct"], g["carol"]["efficiency_pct"], g["dave"]["efficiency_pct"])')" \
	"(30, 75, None, 100)" "--by user: efficiency"
is "$(py "$tmp/u.json" '(t["requested_core_hours"], t["used_core_hours"], t["wasted_core_hours"], t["measured_jobs"])')" \
	"(42, 23.5, 14.5, 4)" "--by user: the total, waste over the jobs with a digest"
is "$(py "$tmp/u.json" '(g["bob"]["mem_req_mb"], g["bob"]["mem_peak_mb"], g["bob"]["memory"])')" \
	"(4096, 1024, 'measured')" "memory: a job with request and peak shows them"
is "$(py "$tmp/u.json" '[(k, g[k]["mem_req_mb"], g[k]["mem_peak_mb"], g[k]["memory"]) for k in ("alice", "carol", "dave")]')" \
	"[('alice', None, None, 'not measured'), ('carol', None, None, 'not measured'), ('dave', None, None, 'not measured')]" \
	"memory: without the fields (or without a peak) not measured, never 0"

./lwm2 stats -f "$log" --by account --json >"$tmp/a.json"
is "$(py "$tmp/a.json" '[(k, g[k]["requested_core_hours"], g[k]["used_core_hours"], g[k]["wasted_core_hours"]) for k in sorted(g)]')" \
	"[('p1', 20, 6, 14), ('p2', 6, 1.5, 0.5), ('p3', 16, 16, 0)]" \
	"--by account: requested of all jobs, waste of the measured ones"
./lwm2 stats -f "$log" --by app --json >"$tmp/p.json"
is "$(py "$tmp/p.json" '[(k, g[k]["requested_core_hours"], g[k]["used_core_hours"], g[k]["wasted_core_hours"]) for k in sorted(g)]')" \
	"[('lmp', 2, 1.5, 0.5), ('myjob', 4, None, None), ('python', 16, 16, 0), ('solver', 20, 6, 14)]" \
	"--by app: the digest's application, else the job's name"

# --- digests the library builds (./mkstatslog): the executables' CPU
# time, and the fit block with the job's memory request and peak
./mkstatslog >"$tmp/lib.jsonl" <<'SPEC'
job=11 user=eve account=e partition=b end=1700003600 elapsed=3600 cpus=4 procs=4 cpu=900
job=12 user=eve account=e partition=b end=1700007200 elapsed=3600 cpus=4 procs=4 cpu=1800 memreq=8192 rss=512
SPEC
./lwm2 stats -f "$tmp/lib.jsonl" --by user --json >"$tmp/lib.json"
is "$(py "$tmp/lib.json" '[g["eve"][k] for k in ("requested_core_hours", "used_core_hours", "wasted_core_hours", "efficiency_pct", "mem_jobs", "mem_req_mb", "mem_peak_mb")]')" \
	"[8, 3, 5, 37.5, 1, 8192, 2048]" \
	"library digests: 4 x 1 h asked, 4 x 900 s and 4 x 1800 s used; memory of the job with the fit block only"

# --- text and -p
./lwm2 stats -f "$log" --by user >"$tmp/u.txt"
check "text: the requested-against-used table" grep -q '^user .*REQ-CORE-H .*USED-CORE-H .*EFF% .*WASTE-CORE-H .*MEM-REQ-GB .*MEM-PEAK-GB' "$tmp/u.txt"
is "$(awk '/^Requested against used/ {on = 1; next} on && /^(alice|bob|carol|dave|\(all\)) / {print $1, $2, $3, $4, $5, $6, $7}' "$tmp/u.txt" | tr '\n' ';')" \
	"alice 20.0 6.0 30.0 14.0 - -;dave 16.0 16.0 100.0 0.0 - -;bob 2.0 1.5 75.0 0.5 4.0 1.0;carol 4.0 - - - - -;(all) 42.0 23.5 61.8 14.5 4.0 1.0;" \
	"text: figures per user in the groups' order, '-' where not known"
is "$(./lwm2 stats -f "$log" --by user -p | awk -F'|' 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next} {print $1, $c["requested_core_hours"], $c["used_core_hours"], $c["wasted_core_hours"], $c["mem_peak_mb"]}' | tr '\n' ';')" \
	"alice 20 6 14 ;dave 16 16 0 ;bob 2 1.5 0.5 1024;carol 4   ;(all) 42 23.5 14.5 1024;" \
	"-p: the usage columns, empty where not known"

# --- report --site: ranked by wasted core-hours
./lwm2 report --site --file "$log" -o "$tmp/site" 2>"$tmp/err"
is "$?" 0 "report --site: exit 0"
# rank kind: the names of one waste table in order
rank() {
	python3 - "$tmp/site/index.html" "$1" <<'PY'
import re, sys
html = open(sys.argv[1]).read()
m = re.search(r'<table class="waste" data-kind="%s">(.*?)</table>' % sys.argv[2], html, re.S)
rows = re.findall(r'<tr><td class="n">\d+</td><td>([^<]*)</td>(.*?)</tr>', m.group(1)) if m else []
print(";".join(n + ":" + ",".join(re.findall(r'<td class="n">([^<]*)</td>', r)) for n, r in rows))
PY
}
is "$(rank user)" \
	"alice:2,20.0,6.0,30.0,14.0,-,-;bob:1,2.0,1.5,75.0,0.5,4.0,1.0;dave:1,16.0,16.0,100.0,0.0,-,-;carol:1,4.0,-,-,-,-,-" \
	"site: users ranked by wasted core-hours, unmeasured last"
is "$(rank account)" "p1:2,20.0,6.0,30.0,14.0,-,-;p2:2,6.0,1.5,75.0,0.5,4.0,1.0;p3:1,16.0,16.0,100.0,0.0,-,-" \
	"site: accounts ranked by wasted core-hours"
is "$(rank app)" \
	"solver:2,20.0,6.0,30.0,14.0,-,-;lmp:1,2.0,1.5,75.0,0.5,4.0,1.0;python:1,16.0,16.0,100.0,0.0,-,-;myjob:1,4.0,-,-,-,-,-" \
	"site: applications ranked by wasted core-hours"

# --- top 20: a 21st user is left out, and said to be
for i in $(seq 1 25); do
	printf '{"job_id":%d,"user":"u%02d","account":"x","name":"n","cpus":1,"start":1700000000,"end":%d,"digest":%s}\n' \
		"$((100 + i))" "$i" "$((1700000000 + 3600 * i))" \
		"$(digest x 1 '{"by_count":[],"by_cpu":[{"exe":"x","processes":1,"cpu_s":0}],"distinct":1}')"
done >"$tmp/many.jsonl"
./lwm2 report --site --file "$tmp/many.jsonl" -o "$tmp/many" 2>/dev/null
cp "$tmp/many/index.html" "$tmp/site/index.html"
is "$(rank user | tr ';' '\n' | cut -d: -f1 | tr '\n' ' ')" \
	"u25 u24 u23 u22 u21 u20 u19 u18 u17 u16 u15 u14 u13 u12 u11 u10 u09 u08 u07 u06 " \
	"site: the top 20 by waste"
check "site: the rest counted" grep -q '5 more not shown' "$tmp/site/index.html"

done_testing
