#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 diff`: two digests of known content (built by the digest library
# through ./mkstatslog), as files and as job ids in a log; runs in the
# build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
need_python3

py() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s={x["scope"]:x for x in d["scopes"]}; m=lambda sc,i: [x for x in s[sc]["metrics"] if x["id"]==i][0]; print(eval(sys.argv[2]))' "$@"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-diff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# A: steps 0 and 1 at 10 % MPI, 2 threads on 2 cores; B: steps 0 (30 %)
# and 2 (50 %), 1 thread on 2 cores.
specA='job=7 user=u mpi=10 io=2 threads=2 cpt=2 steps=0,1'
specB='job=8 user=u mpi=30 mpi.2=50 io=2 threads=1 cpt=2 steps=0,2'
echo "$specA" | ./mkstatslog --digest >"$tmp/A.json" &&
	echo "$specB" | ./mkstatslog --digest >"$tmp/B.json" || {
	echo "1..0 # SKIP mkstatslog failed"
	exit 0
}

./lwm2 diff --json "$tmp/A.json" "$tmp/B.json" >"$tmp/d.json"
is "$?" 1 "changes: exit 1"
is "$(py "$tmp/d.json" '[(k, m("job","mpi_time")[k]) for k in ("a","b","change","relative_pct","beyond_threshold")]')" \
	"[('a', 10), ('b', 40), ('change', 30), ('relative_pct', 300), ('beyond_threshold', True)]" \
	"job: MPI share 10 -> 40 %, +300 %"
is "$(py "$tmp/d.json" '[(k, m("step 0","mpi_time")[k]) for k in ("a","b","relative_pct")], m("step 0","mpi_time")["b_min_max"]')" \
	"([('a', 10), ('b', 30), ('relative_pct', 200)], [30, 30])" "step 0 matched by id"
is "$(py "$tmp/d.json" 'm("job","posix_io_time")["relative_pct"], m("job","posix_io_time")["beyond_threshold"]')" \
	"(0, False)" "an unchanged metric is not marked"
is "$(py "$tmp/d.json" 'm("job","avg_threads")["relative_pct"], m("job","avg_threads")["beyond_threshold"]')" \
	"(-50, True)" "threads halved"
is "$(py "$tmp/d.json" 'd["steps_only_in_a"], d["steps_only_in_b"], sorted(s)')" \
	"([1], [2], ['job', 'step 0'])" "steps of one run only"
is "$(py "$tmp/d.json" 's["job"]["guidance"]')" \
	"{'a_only': [], 'b_only': ['mpi-share', 'threads-vs-cores'], 'both': []}" "guidance fired in B only"
is "$(py "$tmp/d.json" 'd["a"]["job_id"], d["b"]["job_id"], d["threshold_pct"]')" "(7, 8, 10)" "sources and threshold"

# --- the text form marks what changed
./lwm2 diff "$tmp/A.json" "$tmp/B.json" >"$tmp/d.txt"
grep -q '^! mpi_time .*10.0 %.*40.0 %.*+30.0 %.*+300.0 %' "$tmp/d.txt" && ok "text: mpi_time marked" || not_ok "text: mpi_time marked"
grep -q '^  posix_io_time' "$tmp/d.txt" && ok "text: posix_io_time not marked" || not_ok "text: posix_io_time not marked"
grep -q '^! guidance fired in B only: mpi-share, threads-vs-cores' "$tmp/d.txt" && ok "text: guidance" || not_ok "text: guidance"
grep -q '^! step 1 only in A' "$tmp/d.txt" && ok "text: step only in A" || not_ok "text: step only in A"

# --- threshold; the same digest twice
./lwm2 diff --json -t 400 "$tmp/A.json" "$tmp/B.json" >"$tmp/t.json"
is "$(py "$tmp/t.json" 'm("job","mpi_time")["beyond_threshold"], m("job","avg_threads")["beyond_threshold"]')" \
	"(False, False)" "--threshold 400: +300 % and -50 % are within"
./lwm2 diff "$tmp/A.json" "$tmp/A.json" >"$tmp/same.txt"
is "$?" 0 "the same digest: exit 0"
grep -q '^0 changes' "$tmp/same.txt" && ok "the same digest: 0 changes" || not_ok "the same digest: 0 changes"

# --- job ids looked up in a log, a bad line in it
log=$tmp/log.jsonl
{
	echo "$specA" | ./mkstatslog
	echo 'garbage'
	echo "$specB" | ./mkstatslog
} >"$log"
./lwm2 diff --json -f "$log" 7 8 >"$tmp/l.json" 2>"$tmp/err"
is "$?" 1 "job ids from --file: exit 1"
is "$(py "$tmp/l.json" 'm("job","mpi_time")["a"], m("job","mpi_time")["b"], d["a"]["source"].endswith("line 1)")')" \
	"(10, 40, True)" "job ids from --file: the same comparison"
grep -q "line 2: not a JSON object" "$tmp/err" && ok "bad log line reported" || not_ok "bad log line reported"
./lwm2 diff -f "$log" 7 999 >/dev/null 2>"$tmp/err"
is "$?" 2 "unknown job: exit 2"
grep -q "couldn't find a digest of job 999 in the log" "$tmp/err" && ok "unknown job named" || not_ok "unknown job named"
echo '{"lwm2_digest_version":1' >"$tmp/cut.json"
./lwm2 diff "$tmp/A.json" "$tmp/cut.json" >/dev/null 2>"$tmp/err"
is "$?" 2 "a cut digest file: exit 2"
grep -q "couldn't read a digest from $tmp/cut.json" "$tmp/err" && ok "and said so" || not_ok "and said so"
./lwm2 diff "$tmp/A.json" >/dev/null 2>&1
is "$?" 2 "one argument: usage error"

done_testing
