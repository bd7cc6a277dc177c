#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 history`, `lwm2 stats --by app` and `lwm2 diff --history` on a log
# of known content: selection by application, build, user and time, the
# build change marked, the JSON form, users per application, and one job
# judged against its application's runs.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
export TZ=UTC
command -v python3 >/dev/null || skip_all "python3 not installed: it writes the log (contrib/install-deps.sh)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-history.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/jobs.jsonl
# lmp: 8 runs of alice and bob at 64 ranks (build aaaa...), MPI share 18-22 %,
# then job 109 of a new build (bbbb...) at 41 %; job 110 at 128 ranks; a
# job of another application; a line without digest; an old digest
# without application.
python3 - "$log" <<'PY'
import json, sys
out = open(sys.argv[1], "w")
def line(job, user, exe, build, ranks, end, dur, mpi):
    app = {"exe": exe, "build_id": build, "ranks": ranks, "nodes": ranks // 32 or 1,
           "processes": ranks, "cpu_s": dur * ranks,
           "metrics": {"duration": dur, "mpi_time": mpi, "posix_io_time": 1.5, "avg_threads": 1.0}}
    d = {"lwm2_digest_version": 2,
         "job": {"job_id": job, "user": user, "start": end - int(dur), "end": end},
         "application": app,
         "scope": {"processes": ranks, "mpi_processes": ranks, "nodes": 2, "metrics": {}}}
    out.write(json.dumps({"job_id": job, "user": user, "start": end - int(dur), "end": end,
                          "status": "ok", "digest": d}) + "\n")
for i in range(8):
    line(101 + i, "alice" if i % 2 else "bob", "lmp", "aaaa" + "0" * 36, 64,
         1700000000 + 3600 * i, 600 + i, 18 + i % 5)
line(109, "alice", "lmp", "bbbb" + "0" * 36, 64, 1700100000, 604, 41)
line(110, "alice", "lmp", "aaaa" + "0" * 36, 128, 1700200000, 400, 45)
line(111, "carol", "vasp", "cccc" + "0" * 36, 16, 1700000500, 100, 5)
out.write(json.dumps({"job_id": 112, "user": "carol", "status": "no_records"}) + "\n")
out.write(json.dumps({"job_id": 113, "user": "carol", "status": "ok",
                      "digest": {"lwm2_digest_version": 2, "job": {"job_id": 113},
                                 "scope": {"processes": 1, "metrics": {}}}}) + "\n")
PY

out=$(./lwm2 history --app lmp -f "$log" 2>&1)
is "$?" 0 "history --app lmp: exit 0"
is "$(grep -c ' lmp ' <<<"$out")" 10 "ten runs of lmp listed"
is "$(sed -n 2p <<<"$out" | awk '{print $3}')" 101 "oldest first"
is "$(grep -c '(new build)' <<<"$out")" 2 "the build changes are marked (to bbbb and back)"
like() { if grep -Eq -- "$2" <<<"$1"; then ok "$3"; else not_ok "$3"; diag "$1"; fi; }
like "$out" "2023-11-14 22:13 +101 +lmp +64/2 +600.0 +10.667 +18.0 +1.5 +- +1.00 aaaa00000000" \
	"a row: date, job, app, ranks/nodes, duration, core-hours, MPI, I/O, CPI, threads, build"

out=$(./lwm2 history --build-id bbbb -f "$log" 2>&1)
is "$(grep -c ' lmp ' <<<"$out")" 1 "--build-id selects by prefix"
out=$(./lwm2 history --app lmp -u bob -f "$log" 2>&1)
is "$(grep -c ' lmp ' <<<"$out")" 4 "-u bob: his four runs"
out=$(./lwm2 history --app lmp -S @1700010000 -E @1700100000 -f "$log" 2>&1)
is "$(grep -c ' lmp ' <<<"$out")" 6 "-S/-E select by end time"
out=$(./lwm2 history --app nothing -f "$log" 2>&1)
like "$out" "\\(no runs\\)" "an unknown application: no runs"
out=$(./lwm2 history --app vasp --json -f "$log" 2>&1)
is "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["job_id"], d["build_id"][:4], d["ranks"], d["mpi_time"], "cpi" in d)' "$out")" \
	"111 cccc 16 5 False" "--json: one object per run, a metric not measured left out"
./lwm2 history --app lmp >/dev/null 2>"$tmp/err"
is "$?" 1 "no --file: exit 1"
like "$(cat "$tmp/err")" "no --file LOG" "with the reason"

out=$(./lwm2 stats --by app -f "$log" --json 2>&1)
is "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); g={x["group"]:x for x in d["groups"]}; print(g["lmp"]["jobs"], g["lmp"]["users"], g["vasp"]["jobs"], g["vasp"]["users"])' "$out")" \
	"10 2 1 1" "stats --by app: jobs and users per application"
out=$(./lwm2 stats --by app -f "$log" 2>&1)
like "$out" "^app +JOBS +NO-DIGEST +CORE-H +USERS" "the table has a USERS column"

out=$(./lwm2 diff --history 109 -f "$log" 2>&1)
is "$?" 1 "diff --history of the regressed job: exit 1"
like "$out" "against the last 8 runs of lmp" "compared with the 8 runs at 64 ranks"
like "$out" "! MPI share 41.0 %: the last 8 runs of lmp at 64 ranks had 18.0-22.0 %" \
	"the finding"
out=$(./lwm2 diff --history 107 -f "$log" 2>&1)
is "$?" 0 "a run like the others: exit 0"
like "$out" "No metric outside its history" "and says so"
out=$(./lwm2 diff --history 110 -f "$log" 2>&1)
like "$out" "Too few comparable runs to judge \\(0" "128 ranks: no comparable run, no finding"
out=$(./lwm2 diff --history 113 -f "$log" 2>&1)
is "$?" 2 "a digest without an application: exit 2"
like "$out" "names no application" "with the reason"
out=$(./lwm2 diff --history 109 --json -f "$log" 2>&1)
is "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(len(d["compared_runs"]), [f["rule"] for f in d["history"]["findings"]])' "$out")" \
	"8 ['history-mpi-share']" "--json: the compared runs and the findings"

# --- the algebra over a history selection: the runs lwm2 history lists
./lwm2 mean --app lmp -u bob -f "$log" -o "$tmp/hist-mean.jsonl" 2>"$tmp/err"
is "$?" 0 "mean --app lmp -u bob: exit 0"
is "$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read())["digest"]; print(d["derived"]["operation"], [o["job_id"] for o in d["derived"]["operands"]])' "$tmp/hist-mean.jsonl" 2>&1)" \
	"mean [101, 103, 105, 107]" "  its operands: bob's four runs of lmp, oldest first"
./lwm2 mean -f "$log" 101 103 105 107 -o "$tmp/ids-mean.jsonl" 2>/dev/null
cmp -s "$tmp/hist-mean.jsonl" "$tmp/ids-mean.jsonl" && ok "  the same digest as of those job ids" ||
	not_ok "  the same digest as of those job ids"
./lwm2 combine --app lmp -S @1700000000 -E @1700010000 -f "$log" -o "$tmp/hist-comb.jsonl" 2>/dev/null
is "$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read())["digest"]; print([o["job_id"] for o in d["derived"]["operands"]])' "$tmp/hist-comb.jsonl" 2>&1)" \
	"[101, 102, 103]" "combine --app with -S and -E: the runs that ended in the period"
out=$(./lwm2 mean --app lmp -b bbbb -f "$log" 2>&1)
is "$?" 1 "mean --app of one run: exit 1"
like "$out" "1 run\(s\) of lmp in the selection; want at least 2" "  and why"
out=$(./lwm2 mean --app lmp 101 102 -f "$log" 2>&1)
is "$?" 2 "operands and --app together: a usage error"
out=$(./lwm2 mean -u bob 101 102 -f "$log" 2>&1)
is "$?" 2 "--user without --app: a usage error"
like "$out" "select runs of --app" "  and why"
done_testing
