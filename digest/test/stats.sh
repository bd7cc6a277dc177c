#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 stats`: groups, core-hours, weighted quartiles, guidance shares,
# selection, --top, unreadable lines, and 100,000 digests streamed.  Logs
# come from the digest library itself (./mkstatslog, ./mkdigestlog); runs
# in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
export TZ=UTC
need_python3

# py JSONFILE EXPR: evaluates EXPR with d = the parsed file, prints it
py() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g={x["group"]:x for x in d.get("groups",[])}; print(eval(sys.argv[2]))' "$@"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-stats.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/jobs.jsonl
# alice: 4 + 8 + 4 core-hours at 10, 30, 20 % MPI; bob: 8 core-hours at
# 50 % MPI, 20 % I/O, 1 thread on 2 cores, and 1 core-hour at CPI 2;
# carol: a job without digest.
./mkstatslog >"$log" <<'SPEC' || {
job=101 user=alice account=p1 partition=batch end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10
job=102 user=alice account=p1 partition=batch end=1700003600 elapsed=7200 cpus=4 procs=4 mpi=30
job=103 user=bob account=p2 partition=gpu end=1702000000 elapsed=3600 cpus=8 procs=4 cpt=2 threads=1 mpi=50 io=20
job=104 user=bob account=p2 partition=batch state=FAILED end=1702003600 elapsed=1800 cpus=2 procs=2 mpi=0 cpi=2
job=105 user=carol account=p1 partition=batch end=1700000100 elapsed=3600 cpus=4 nodigest=1
job=106 user=alice account=p1 partition=batch end=1700007200 elapsed=3600 cpus=4 procs=4 mpi=20 nodes=n[1-2] nnodes=2
SPEC
	echo "1..0 # SKIP mkstatslog failed"
	exit 0
}

# --- groups by user: counts, core-hours, quartiles, guidance shares
./lwm2 stats -f "$log" --by user --json >"$tmp/u.json" 2>"$tmp/err"
is "$?" 0 "--by user --json: exit 0"
is "$(py "$tmp/u.json" '[(x["group"],x["jobs"],x["no_digest"],x["core_hours"]) for x in d["groups"]]')" \
	"[('alice', 3, 0, 16), ('bob', 2, 0, 9), ('carol', 0, 1, 0)]" "groups by core-hours: jobs, jobs without digest, core-hours"
is "$(py "$tmp/u.json" '[g["alice"]["metrics"]["mpi_time"][k] for k in ("mean","min","q1","median","q3","max")]')" \
	"[22.5, 10, 10, 20, 30, 30]" "alice: MPI share mean and quartiles weighted by core-hours"
is "$(py "$tmp/u.json" '[round(g["bob"]["metrics"]["mpi_time"][k],4) for k in ("mean","q1","median","min")]')" \
	"[44.4444, 50, 50, 0]" "bob: a 1-core-hour job at 0 % moves the mean, not the quartiles"
is "$(py "$tmp/u.json" '{r: {k: round(x, 4) for k, x in v.items()} for r, v in g["alice"]["guidance"].items()}')" \
	"{'mpi-share': {'jobs': 1, 'jobs_pct': 33.3333, 'core_hours': 8, 'core_hours_pct': 50}}" \
	"alice: mpi-share fired on 1 job, 50 % of her core-hours (20 % is not above the threshold)"
is "$(py "$tmp/u.json" 'sorted((k,round(v["core_hours_pct"],4)) for k,v in g["bob"]["guidance"].items())')" \
	"[('cpi-high', 11.1111), ('io-share', 88.8889), ('mpi-share', 88.8889), ('threads-vs-cores', 88.8889)]" \
	"bob: shares of core-hours per rule"
is "$(py "$tmp/u.json" 'g["bob"]["metrics"]["threads_per_core"]["median"], g["bob"]["metrics"]["cpi"]["max"]')" \
	"(0.5, 2)" "threads per allocated core and CPI where measured"
is "$(py "$tmp/u.json" 'd["total"]["jobs"], d["total"]["no_digest"], d["total"]["core_hours"]')" \
	"(5, 1, 25)" "total over all groups"

# --- other keys
is "$(./lwm2 stats -f "$log" --by month -p -n | cut -d'|' -f1-4 | tr '\n' ' ')" \
	"2023-11|3|1|16 2023-12|2|0|9 (all)|5|1|25 " "--by month, in calendar order"
is "$(./lwm2 stats -f "$log" --by node -p -n | cut -d'|' -f1-4 | tr '\n' ' ')" \
	"n1|5|1|23 n2|1|0|2 (all)|5|1|25 " "--by node: a 2-node job's core-hours split between its nodes"
is "$(./lwm2 stats -f "$log" --by account --csv | head -n 2 | cut -d, -f1-4 | tr '\n' ' ')" \
	"account,jobs,no_digest,core_hours p1,3,1,16 " "--csv with a header"
is "$(./lwm2 stats -f "$log" --by partition -p -n | cut -d'|' -f1,2 | tr '\n' ' ')" \
	"batch|4 gpu|1 (all)|5 " "--by partition"

# --- TOPAS's breakdown: language, MPI library, batch or interactive,
# cluster, QOS, keys combined; each group's share of the jobs (Num%) and
# of the core-hours (Time%), and of its jobs that passed no MPI message
./mkstatslog >"$tmp/lang.jsonl" <<'SPEC' || bail_out "mkstatslog failed"
job=301 user=ann end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10 lang=3 mpilib=Open_MPI_v4.1.4 steps=4294967291,0
job=302 user=ann end=1700000000 elapsed=3600 cpus=2 procs=2 lang=2 steps=4294967291
job=303 user=ben end=1700000000 elapsed=7200 cpus=1 procs=1 lang=1
job=304 user=ben end=1700000000 elapsed=3600 cpus=1 nodigest=1
SPEC
is "$(./lwm2 stats -f "$tmp/lang.jsonl" --by language -p -n | awk -F'|' '{ printf "%s|%s|%s|%s|%s|%s|%s ", $1, $2, $3, $4, $(NF-2), $(NF-1), $NF }')" \
	"fortran|1|0|4|33.3333|50|0 c|1|0|2|33.3333|25|100 c++|1|0|2|33.3333|25|100 (none)|0|1|0|0|0| (all)|3|1|8|100|100|66.6667 " \
	"--by language: jobs, core-hours, Num%, Time%, share of jobs without MPI messages"
is "$(./lwm2 stats -f "$tmp/lang.jsonl" --by mpi -p -n | cut -d'|' -f1,2 | tr '\n' ' ')" \
	"(none)|2 Open_MPI_v4.1.4|1 (all)|3 " "--by mpi: the application's MPI library"
is "$(./lwm2 stats -f "$tmp/lang.jsonl" --by mode -p -n | cut -d'|' -f1,2 | tr '\n' ' ')" \
	"batch|2 interactive|1 (none)|0 (all)|3 " "--by mode: a batch script's step makes a batch job"
is "$(./lwm2 stats -f "$tmp/lang.jsonl" --by cluster,qos -p -n | cut -d'|' -f1,2 | tr '\n' ' ')" \
	"c1,(none)|3 (all)|3 " "--by cluster,qos: the log line's fields (no QOS in it: (none))"
is "$(./lwm2 stats -f "$tmp/lang.jsonl" --by user,mode --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["by"], [(g["group"], g["jobs"], round(g["jobs_pct"],1), round(g["core_hours_pct"],1), g["no_mpi_msgs_pct"]) for g in d["groups"]])')" \
	"user,mode [('ann,batch', 2, 66.7, 75, 50), ('ben,interactive', 1, 33.3, 25, 100), ('ben,(none)', 0, 0, 0, None)]" \
	"--by user,mode --json: a group per combination, its shares"
# the share of jobs that passed no MPI message from the database: from
# the rows (--by language), and from the daily summaries, made by the
# first read and taken by the second (--by user, all jobs)
if ./lwm2 db import --db "$tmp/lang.db" "$tmp/lang.jsonl" >/dev/null 2>&1; then
	for a in "--by language" "--by user" "--by user" "-b user --json" ""; do
		# shellcheck disable=SC2086
		diff <(./lwm2 stats -f "$tmp/lang.jsonl" $a) <(./lwm2 stats --db "$tmp/lang.db" $a) >/dev/null
		ok $? "stats $a: NOMSG% and the rest from the database as from the log"
	done
	is "$(./lwm2 stats --db "$tmp/lang.db" --by user -p -n | awk -F'|' '{ printf "%s|%s ", $1, $NF }')" \
		"ann|50 ben|100 (all)|66.6667 " "database: no_mpi_msgs_pct per user and in all"
else
	skip "lwm2 db import failed"
fi
out=$(./lwm2 stats -f "$tmp/lang.jsonl" --by language)
like_table() { [[ $out =~ $1 ]] && ok "$2" || not_ok "$2"; }
like_table "language +JOBS +NO-DIGEST +CORE-H +NUM% +TIME% +NOMSG%" "table: NUM%, TIME% and NOMSG% columns"
like_table "fortran +1 +0 +4.0 +33.3 +50.0 +0.0" "  with each group's shares"
./lwm2 stats -f "$log" --by user,node >/dev/null 2>&1
is "$?" 2 "--by node in a combination: usage error"
./lwm2 stats -f "$log" --by user,app,mode,qos >/dev/null 2>&1
is "$?" 2 "--by four keys: usage error"

# --- --by image: the main container of each job (most CPU time, then most
# processes), "(none)" for a job that ran in none or has no digest
./mkstatslog >"$tmp/img.jsonl" <<'SPEC'
job=201 user=dave end=1700000000 elapsed=3600 cpus=4 procs=4 container=charliecloud:/img/x
job=202 user=dave end=1700000000 elapsed=3600 cpus=8 procs=4 container=podman:docker.io/library/debian:11 container0=charliecloud:/img/x
job=203 user=erin end=1700000000 elapsed=3600 cpus=2 procs=2
job=204 user=erin end=1700000000 elapsed=3600 cpus=4 procs=4 container=charliecloud:/img/x
job=205 user=erin end=1700000000 elapsed=3600 cpus=1 nodigest=1
job=206 user=erin end=1700000000 elapsed=3600 cpus=1 procs=1 container=enroot
SPEC
is "$(./lwm2 stats -f "$tmp/img.jsonl" --by image -p -n | cut -d'|' -f1-4 | tr '\n' ' ')" \
	"/img/x|2|0|8 docker.io/library/debian:11|1|0|8 (none)|1|1|2 (enroot)|1|0|1 (all)|5|1|19 " \
	"--by image: jobs and core-hours per main container image"
./lwm2 stats -f "$tmp/img.jsonl" --by image --json >"$tmp/img.json"
is "$(py "$tmp/img.json" 'd["by"], g["/img/x"]["users"], g["(none)"]["users"]')" "('image', 2, 1)" \
	"--by image --json: users per image"
case $(./lwm2 stats -f "$tmp/img.jsonl" --by image) in
*"image "*"USERS"*"/img/x "*) ok "--by image table: the USERS column" ;;
*) not_ok "--by image table: the USERS column" ;;
esac
# an image name with a newline and an escape: one line, one group (json-c
# writes "/" as "\/")
sed 's#"\\/img\\/x"#"\\/img\\/\\n\\u001bx"#g' "$tmp/img.jsonl" >"$tmp/img2.jsonl"
is "$(./lwm2 stats -f "$tmp/img2.jsonl" --by image -p -n | cut -d'|' -f1,2 | head -n 1)" \
	'/img/\x0a\x1bx|2' "--by image: control bytes of a name escaped"
# a log of jobs that ran in no container: one group, as before
is "$(./lwm2 stats -f "$log" --by image -p -n | cut -d'|' -f1-4 | tr '\n' ' ')" \
	"(none)|5|1|25 (all)|5|1|25 " "--by image: jobs outside containers are (none)"

# --- selection
is "$(./lwm2 stats -f "$log" -u bob -p -n | cut -d'|' -f1-4)" "all|2|0|9" "-u"
is "$(./lwm2 stats -f "$log" -A p1 -r batch -p -n | cut -d'|' -f1-4)" "all|3|1|16" "-A and -r"
is "$(./lwm2 stats -f "$log" -s failed -p -n | cut -d'|' -f1-4)" "all|1|0|1" "-s, any case"
is "$(./lwm2 stats -f "$log" -S 2023-12-01 -p -n | cut -d'|' -f1-4)" "all|2|0|9" "-S on the end time"
is "$(./lwm2 stats -f "$log" -E @1700003600 -p -n | cut -d'|' -f1-4)" "all|2|1|12" "-E on the end time, inclusive"
# sacct's time syntax through libslurm: MM/DD/YY is 2023-12-01 above
is "$(./lwm2 stats -f "$log" -S 12/01/23 -p -n | cut -d'|' -f1-4)" "all|2|0|9" "-S in sacct's MM/DD/YY"
./lwm2 stats -f "$log" -S yesterday-ish -p -n >/dev/null 2>&1
is "$?" 2 "-S that neither lwm2 nor sacct reads: usage error"

# --- table
out=$(./lwm2 stats -f "$log" --by user)
case $out in *"alice"*"22.5 (10.0/20.0/30.0)"*"mpi-share"*) ok "table: mean (quartiles) and guidance" ;; *) not_ok "table: mean (quartiles) and guidance" ;; esac

# --- --top
is "$(./lwm2 stats -f "$log" --top 2 -p -n | cut -d'|' -f1,7,8 | tr '\n' ' ')" \
	"103|4|mpi-share,io-share,threads-vs-cores 102|2.4|mpi-share " "--top 2: most core-hours in MPI"
is "$(./lwm2 stats -f "$log" --top 3 --sort core_hours -p -n | cut -d'|' -f1 | tr '\n' ' ')" \
	"102 103 101 " "--sort core_hours: ties by job id"
is "$(./lwm2 stats -f "$log" --top 5 --sort idle -p -n | cut -d'|' -f1,7)" "103|4" "--sort idle: only jobs with sampled threads"
./lwm2 stats -f "$log" --top 2 --sort mpi_time --json >"$tmp/t.json"
is "$(py "$tmp/t.json" '[x["job_id"] for x in d["top"]], d["sort"]')" "([103, 102], 'mpi_time')" "--sort METRIC, --json"

# --- --top by lwm2's own cost (the digest's lwm2_cost): its seconds grow
# with the processes started (8 > 4 > 2), its share of the CPU time is
# largest where the job used the least CPU; a job without digest has none
./mkstatslog >"$tmp/own.jsonl" <<'SPEC'
job=201 user=alice account=p1 partition=batch end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10 cpu=100
job=202 user=bob account=p1 partition=batch end=1700003600 elapsed=60 cpus=2 procs=2 mpi=10 cpu=0.01
job=203 user=carol account=p2 partition=batch end=1700007200 elapsed=3600 cpus=8 procs=8 mpi=10 cpu=10
job=204 user=dave account=p2 partition=batch end=1700010800 elapsed=3600 cpus=4 nodigest=1
SPEC
is "$(./lwm2 stats -f "$tmp/own.jsonl" --top 5 --sort lwm2_cost -p -n | cut -d'|' -f1 | tr '\n' ' ')" \
	"203 201 202 " "--sort lwm2_cost: the most processes started first, no job without digest"
is "$(./lwm2 stats -f "$tmp/own.jsonl" --top 5 --sort lwm2_share -p -n | cut -d'|' -f1 | tr '\n' ' ')" \
	"202 203 201 " "--sort lwm2_share: the least CPU time for the same work first"
case $(./lwm2 stats -f "$tmp/own.jsonl" --top 1 --sort lwm2_share) in
*"LWM2 %CPU"*) ok "--sort lwm2_share: its column is named" ;;
*) not_ok "--sort lwm2_share: its column is named" ;;
esac

# --- several files, stdin
head -n 3 "$log" >"$tmp/p1"
tail -n +4 "$log" >"$tmp/p2"
is "$(./lwm2 stats -f "$tmp/p1" -f - -p -n <"$tmp/p2" | cut -d'|' -f1-4)" "all|5|1|25" "two logs, one of them stdin"

# --- unreadable lines: reported with their number, the others kept
{
	head -n 2 "$log"
	echo 'not json at all'
	echo '{"job_id":900,"user":"x","digest":{"lwm2_digest_version":1,"job":{}}}'
	echo '{"job_id":901,"user":"x","digest":{"lwm2_digest_version":99,"scope":{}}}'
	tail -n +3 "$log"
	head -n 1 "$log" | head -c 700
	echo
} >"$tmp/bad.jsonl"
./lwm2 stats -f "$tmp/bad.jsonl" --json >"$tmp/b.json" 2>"$tmp/err"
is "$?" 0 "unreadable lines: exit 0"
is "$(py "$tmp/b.json" 'd["total"]["jobs"], d["total"]["core_hours"], d["skipped_lines"]')" "(5, 25, 4)" "the readable lines all counted, 4 skipped"
grep -q "couldn't read $tmp/bad.jsonl line 3: not a JSON object" "$tmp/err" && ok "line 3 named" || not_ok "line 3 named"
grep -q "line 4: the digest's scope is unreadable" "$tmp/err" && ok "line 4: why" || not_ok "line 4: why"
grep -q "line 5: digest version 99: written by a newer lwm2, this lwm2 reads versions 1 to" "$tmp/err" && ok "line 5: the version" || not_ok "line 5: the version"
grep -q "line 10: " "$tmp/err" && ok "a cut last line named" || not_ok "a cut last line named"

# --- usage errors
./lwm2 stats --by user >/dev/null 2>&1
is "$?" 2 "no --file: usage error"
./lwm2 stats -f "$log" --by colour >/dev/null 2>&1
is "$?" 2 "unknown --by: usage error"
./lwm2 stats -f "$log" --top 3 --sort nothing >/dev/null 2>&1
is "$?" 2 "unknown --sort: usage error"
./lwm2 stats -f "$tmp/none" >/dev/null 2>"$tmp/err"
is "$?" 1 "missing log: exit 1"

# --- 100,000 digests: streamed, exact counts (speed is for bench/, not here)
big=$tmp/big.jsonl
if ./mkdigestlog 100000 200000 >"$big"; then
	./lwm2 stats -f "$big" --by user -p -n >"$tmp/big.out"
	is "$(cut -d'|' -f1-5 "$tmp/big.out" | tr '\n' ' ')" \
		"u0|30000|3334|33333.3|10 u1|30000|3333|33333.3|10 u2|30000|3333|33333.3|10 (all)|90000|10000|100000|10 " \
		"100,000 digests: exact counts and core-hours"
	rm -f "$big"
fi

# --- --histogram: buckets of a metric over the jobs, from the log and the
# database alike
./lwm2 stats -f "$log" --histogram mpi_time --json >"$tmp/h.json" 2>"$tmp/err"
is "$?" 0 "--histogram mpi_time --json: exit 0"
is "$(py "$tmp/h.json" 'd["bucket"], d["total"]["jobs"], d["total"]["no_value"]')" \
	"(10, 5, 1)" "width 10 chosen over 0 to 50; the job without a digest counted apart"
is "$(py "$tmp/h.json" '[(b["from"], b["jobs"]) for b in d["total"]["buckets"]]')" \
	"[(0, 1), (10, 1), (20, 1), (30, 1), (40, 0), (50, 1)]" "one job a bucket, 50 opens [50, 60), the empty bucket shown"
./lwm2 stats -f "$log" --histogram MPI_TIME --by user --weight core-hours --bucket 25 -p -n >"$tmp/h.p"
is "$(tr '\n' ' ' <"$tmp/h.p")" \
	"alice|0|25|2|8|50 alice|25|50|1|8|50 bob|0|25|1|1|11.1111 bob|25|50|0|0|0 bob|50|75|1|8|88.8889 (all)|0|25|3|9|36 (all)|25|50|1|8|32 (all)|50|75|1|8|32 " \
	"--by user --weight core-hours --bucket 25: one histogram a group, buckets aligned, shares of core-hours"
./lwm2 stats -f "$log" --histogram mpi_time >"$tmp/h.txt"
grep -q '^\[50, 60) *1 *20.0  #\{40\}$' "$tmp/h.txt"
ok $? "the table: range, jobs, share and a bar"
./lwm2 stats -f "$log" --histogram nosuch >/dev/null 2>"$tmp/err"
is "$?" 2 "--histogram of an unknown metric: usage error"
grep -q 'not a metric of the digests (lwm2 digest --helpformat lists them' "$tmp/err"
ok $? "which says where the names are"
./lwm2 stats -f "$log" --histogram mpi_time --top 3 >/dev/null 2>&1
is "$?" 2 "--histogram with --top: usage error"
./lwm2 stats -f "$log" --bucket 5 >/dev/null 2>&1
is "$?" 2 "--bucket without --histogram: usage error"
./lwm2 stats -f "$log" --histogram mpi_time --bucket 0 >/dev/null 2>&1
is "$?" 2 "--bucket 0: usage error"
./lwm2 stats -f "$log" --histogram mpi_time --bucket 0.001 >/dev/null 2>"$tmp/err"
is "$?" 1 "--bucket that gives 50,001 buckets: exit 1"
grep -q 'more than 1000; give a wider --bucket' "$tmp/err"
ok $? "and says so"
./lwm2 report --site -f "$log" --histogram mpi_time -o "$tmp/site" 2>"$tmp/err"
is "$?" 0 "report --site --histogram mpi_time"
grep -q 'data-histogram="mpi_time" data-bucket="10">5 jobs; 1 without a value' "$tmp/site/index.html"
ok $? "the site page: the histogram's metric, width and jobs"
is "$(grep -o '>\[[0-9, ]*)</text><text[^>]*>[0-9]* jobs' "$tmp/site/index.html" | sed 's/<.*>//' | tr '\n' ' ')" \
	">[0, 10)1 jobs >[10, 20)1 jobs >[20, 30)1 jobs >[30, 40)1 jobs >[40, 50)0 jobs >[50, 60)1 jobs " \
	"the site page: a bar a bucket, as stats --histogram has them"
./lwm2 report --site -f "$log" --histogram nosuch -o "$tmp/site2" 2>"$tmp/err"
is "$?" 2 "report --site --histogram of an unknown metric: usage error"
ok "$(test ! -e "$tmp/site2"; echo $?)" "and no pages"
if ./lwm2 db import --db "$tmp/h.db" "$log" >/dev/null 2>&1; then
	for a in "--histogram mpi_time" "--histogram mpi_time --by user --weight core-hours --json" \
		"--histogram duration.max --by node -p" "--histogram cpi --by account --bucket 0.5"; do
		# shellcheck disable=SC2086
		diff <(./lwm2 stats -f "$log" $a) <(./lwm2 stats --db "$tmp/h.db" $a) >/dev/null
		ok $? "stats $a: the database's output is the log's"
	done
else
	skip "lwm2 db import failed"
fi

done_testing
