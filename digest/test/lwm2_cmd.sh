#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The lwm2 command from the build tree: run (exit status, signals, the
# digest, cleanup), dump, merge and render, malformed input included.
set -u
n=0
okay() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
	d=$1
	shift
	if "$@"; then okay "$d"; else fail "$d"; fi
}
echo "1..21"
L=./lwm2
w=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-cmd-XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT
mkdir "$w/tmp"

check "--version" sh -c "$L --version | grep -q '^lwm2 [0-9]'"
$L nosuch >/dev/null 2>&1
check "unknown command: exit 2" test $? -eq 2
TMPDIR="$w/tmp" $L run -- sh -c 'exit 7' 2>/dev/null
check "run: exit status of the command" test $? -eq 7
sh -c "TMPDIR='$w/tmp' $L run -- sh -c 'kill -TERM \$\$' 2>/dev/null; echo \$? >'$w/st'"
check "run: killed by SIGTERM, lwm2 too (143)" test "$(cat "$w/st")" -eq 143
TMPDIR="$w/tmp" $L run -- /nonexistent/cmd 2>"$w/err"
check "run: missing command: exit 127" test $? -eq 127
check "run: record directories removed" test -z "$(ls -A "$w/tmp")"

TMPDIR="$w/tmp" $L run --keep "$w/rec" --json "$w/d.json" -- \
	sh -c 'echo out; dd if=/dev/zero of="$0/f" bs=64k count=16 2>/dev/null' "$w" \
	>"$w/out" 2>"$w/digest"
check "run: the command's stdout untouched" test "$(cat "$w/out")" = out
check "run: digest on stderr with the seed's metrics" \
	grep -q "Time in POSIX file I/O calls" "$w/digest"
check "run: data written counted (1 MB)" grep -q "Data written to files.*1.05 MB" "$w/digest"
check "run --keep: rank records kept" sh -c "ls '$w'/rec/*.lwm2 >/dev/null"
check "run --json: digest renders" sh -c "$L render '$w/d.json' | grep -q 'lwm2 digest: job 0'"

check "dump: rank records as JSON" sh -c "$L dump '$w'/rec/*.lwm2 | grep -q '\"type\":\"lwm2 rank record\"'"
printf 'LWM2RANKgarbage' >"$w/bad.lwm2"
$L dump "$w/bad.lwm2" "$w"/rec/*.lwm2 >"$w/dump.out" 2>"$w/err"
st=$?
check "dump: malformed record: exit 1, clear error" \
	sh -c "test $st -eq 1 && grep -q 'lwm2: dump: couldn.t read .*bad.lwm2' '$w/err'"
check "dump: the good records still printed" test -s "$w/dump.out"
cp "$w/bad.lwm2" "$w/rec/"
$L merge "$w/rec" >"$w/node.json" 2>"$w/err"
check "merge: node record despite a bad record" grep -q '"lwm2_node_version":1' "$w/node.json"
check "merge: the bad record logged" grep -q "couldn't read bad.lwm2" "$w/err"
check "dump: node record validates" sh -c "$L dump '$w/node.json' >/dev/null"
check "render: a node record as its node's digest" \
	sh -c "$L render '$w/node.json' | grep -q 'Time in all MPI calls'"

printf '{"lwm2_digest_version":1,"job":{' >"$w/trunc.json"
$L render "$w/trunc.json" >/dev/null 2>"$w/err"
st=$?
check "render: truncated digest: exit 1, clear error" \
	sh -c "test $st -eq 1 && grep -q 'not valid JSON' '$w/err'"
{
	printf '{"digest":%s}\n' "$(cat "$w/d.json")"
	printf '{"digest":%s}\n' "$(cat "$w/d.json")"
} >"$w/log.jsonl"
check "render: a JSON-lines log renders every line" \
	test "$($L render "$w/log.jsonl" | grep -c '^lwm2 digest:')" -eq 2
check "render: AdminComment with other text" \
	sh -c "printf 'JS1:xyz LWM2:%s' \"\$(cat '$w/d.json')\" | $L render - | grep -q 'lwm2 digest:'"
