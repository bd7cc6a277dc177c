#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 digest --file`: selection, output forms, errors, and every one of
# 100,000 digests read right (their speed is measured by bench/run.sh, not
# here).  Runs in the build directory (./lwm2, ./mkdigestlog).
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-cmd-digest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/digests.jsonl
./mkdigestlog 30 1000 >"$log" || {
	echo "1..0 # SKIP mkdigestlog failed"
	exit 0
}

# --- text digest of one job
out=$(./lwm2 digest --file "$log" -j 1004 2>"$tmp/err")
rc=$?
is "$rc" 0 "-j with a digest: exit 0"
case $out in *"Job 1004"*) ok "text digest names the job" ;; *) not_ok "text digest names the job" ;; esac

# --- parsable fields, exact totals
out=$(./lwm2 digest --file "$log" -j 1004 -p -n -o JobID,User,Account,State,Processes,MPIProcesses,mpi_p2p_calls,mpi_p2p_bytes_sent,Status)
is "$out" "1004|u1|a0|COMPLETED|4|4|400|25600|ok" "-p fields: ids, user, exact call and byte totals"

out=$(./lwm2 digest --file "$log" -j 1004 -p -o JobID,mpi_time.min,mpi_time.max | head -n 1)
is "$out" "JobID|mpi_time.min|mpi_time.max" "-p header"

# --- array task and het component ids
is "$(./lwm2 digest --file "$log" -j 1000_7 -p -n -o JobID,JobIDRaw)" "1000_7|1001" "ID_TASK selects the array task"
is "$(./lwm2 digest --file "$log" -j 1001+1 -p -n -o JobID,JobIDRaw)" "1001+1|1002" "ID+OFFSET selects the het component"

# --- user, account, window
is "$(./lwm2 digest --file "$log" -u u2 -A a1 -S @1 -p -n -o JobIDRaw | tr '\n' ' ')" \
	"1005 1011 1017 1023 1029 " "-u and -A together"
is "$(./lwm2 digest --file "$log" -a -S @1700000025 -p -n -o JobIDRaw | tr '\n' ' ')" \
	"1025 1026 1027 1028 1029 " "-S: jobs that ended after it"
is "$(./lwm2 digest --file "$log" -a -S @1 -E @1699999002 -p -n -o JobIDRaw | tr '\n' ' ')" \
	"1000 1001 1002 " "-E: jobs that started before it"

# --- csv and json
out=$(./lwm2 digest --file "$log" -j 1003 --csv -o JobID,State,Reason)
is "$(sed -n 2p <<<"$out")" "1003,COMPLETED," "--csv row"
./lwm2 digest --file "$log" -j 1003,1004 --json >"$tmp/j.json"
if ! command -v python3 >/dev/null; then
	skip_because "--json: an array with job fields and the digest" "python3 not installed"
elif python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x["job_id"] for x in d]==[1003,1004]; assert d[0]["digest"]["scope"]["processes"]==4' "$tmp/j.json" 2>"$tmp/err"; then
	ok "--json: an array with job fields and the digest"
else
	not_ok "--json: an array with job fields and the digest"
	sed 's/^/# /' "$tmp/err"
fi

# --- a job without digest, an unknown job
./lwm2 digest --file "$log" -j 1009 >/dev/null 2>"$tmp/err"
rc=$?
is "$rc" 1 "job without digest: exit 1"
grep -q "job 1009: no digest: no node records: lwm2 was off" "$tmp/err" && ok "and the reason is said" || not_ok "and the reason is said"
./lwm2 digest --file "$log" -j 999999 >/dev/null 2>"$tmp/err"
is "$?" 1 "unknown job: exit 1"
grep -q "couldn't find job 999999: no such job in the log" "$tmp/err" && ok "unknown job is named" || not_ok "unknown job is named"
./lwm2 digest --file "$log" -j 1004 -o NoSuchField >/dev/null 2>"$tmp/err"
is "$?" 2 "unknown field: usage error"
./lwm2 digest --file "$log" -j x1 >/dev/null 2>&1
is "$?" 2 "bad job id: usage error"
./lwm2 digest --file "$log" -j "" >"$tmp/out" 2>&1
is "$?" 2 "empty job list: usage error, not every job"
./lwm2 digest --file "$tmp/none" -j 1 >/dev/null 2>"$tmp/err"
is "$?" 1 "missing log: exit 1"

# --- a truncated last line (the disk filled up) is skipped, not fatal
head -c -100 "$log" >"$tmp/cut.jsonl"
out=$(./lwm2 digest --file "$tmp/cut.jsonl" -a -S @1 -p -n -o JobIDRaw 2>"$tmp/err" | wc -l)
is "$out" 29 "truncated line skipped, the others read"

# --- the same log rewritten by other JSON tools: members in another order
# (the digest first, keys sorted at every depth), spaces after ':' and ','
fields=JobID,User,Account,State,Processes,MPIProcesses,mpi_p2p_calls,mpi_p2p_bytes_sent,mpi_time.min,mpi_time,Status
./lwm2 digest --file "$log" -a -S @1 -p -n -o "$fields" >"$tmp/plain.out" 2>/dev/null
./lwm2 digest --file "$log" -j 1004 >"$tmp/plain.txt" 2>/dev/null
reformatted() { # NAME: compare the rewritten log $tmp/NAME.jsonl with the log
	./lwm2 digest --file "$tmp/$1.jsonl" -a -S @1 -p -n -o "$fields" >"$tmp/$1.out" 2>"$tmp/$1.err"
	if [ -s "$tmp/plain.out" ] && cmp -s "$tmp/plain.out" "$tmp/$1.out"; then
		ok "$1: every field of every job as in the log"
	else
		not_ok "$1: every field of every job as in the log"
		diff "$tmp/plain.out" "$tmp/$1.out" | head -n 5 | sed 's/^/# /'
		sed 's/^/# /' "$tmp/$1.err" | head -n 5
	fi
	./lwm2 digest --file "$tmp/$1.jsonl" -j 1004 >"$tmp/$1.txt" 2>&1
	if grep -q "Job 1004" "$tmp/$1.txt" && cmp -s "$tmp/plain.txt" "$tmp/$1.txt"; then
		ok "$1: the text digest as in the log"
	else
		not_ok "$1: the text digest as in the log"
	fi
}
if ! command -v python3 >/dev/null; then
	skip_because "reordered and spaced members" "python3 not installed"
	skip_because "reordered and spaced members: text" "python3 not installed"
else
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(json.dumps(dict(reversed(list(d.items())))))' "$log" >"$tmp/spaced.jsonl"
	reformatted spaced
fi
if ! command -v jq >/dev/null; then
	skip_because "jq -c -S: every field of every job as in the log" "jq not installed"
	skip_because "jq -c -S: the text digest as in the log" "jq not installed"
else
	jq -c -S . "$log" >"$tmp/jq.jsonl"
	reformatted jq
fi

# --- --wait for a digest that arrives later, its line in two writes (as
# a long line being written is read): the passes that look meet it cut
# short and say nothing; the digest is printed once it is whole
head -n 20 "$log" >"$tmp/late.jsonl"
line21=$(sed -n 21p "$log")
(sleep 0.5 && printf '%s' "${line21:0:200}" >>"$tmp/late.jsonl" &&
	sleep 2 && printf '%s\n' "${line21:200}" >>"$tmp/late.jsonl") &
out=$(./lwm2 digest --file "$tmp/late.jsonl" -j 1020 --wait 10 -p -n -o JobIDRaw,Status 2>&1)
wait
is "$out" "1020|ok" "--wait: a digest that arrives later is printed, nothing said of it before"

# --- 100,000 digests: streamed, every row right
big=$tmp/big.jsonl
./mkdigestlog 100000 200000 >"$big"
lines=$(wc -l <"$big")
size=$(du -m "$big" | cut -f1)
out=$(./lwm2 digest --file "$big" -j 299999 -p -n -o JobIDRaw,Status)
is "$out" "299999|no_records" "-j over $lines lines ($size MiB): the last job found"
./lwm2 digest --file "$big" -a -S @1 -p -n -o JobIDRaw,State,mpi_time,mpi_p2p_calls >"$tmp/all.out"
is "$(wc -l <"$tmp/all.out")" 100000 "all 100,000 listed"
is "$(sed -n 5p "$tmp/all.out")" "200004|COMPLETED|10|400" "values read without a full parse"
# what mkdigestlog wrote, in log order: every 10th job without a digest
awk 'BEGIN { for (i = 0; i < 100000; i++)
	print 200000 + i "|COMPLETED|" (i % 10 == 9 ? "|" : "10|400") }' >"$tmp/all.want"
if cmp -s "$tmp/all.out" "$tmp/all.want"; then
	ok "every one of the 100,000 rows: job id, state and values"
else
	not_ok "every one of the 100,000 rows: job id, state and values"
	diff "$tmp/all.want" "$tmp/all.out" | head -n 5 | sed 's/^/# /'
fi

done_testing
