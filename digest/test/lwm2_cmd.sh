#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The lwm2 command from the build tree: dump, merge and render on
# hand-built records (malformed input included), config on lwm2.conf
# files, then run (exit status, signals, the digest, cleanup) when
# liblwm2.so is built.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
plan 34
L=./lwm2
w=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-cmd-XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT
mkdir "$w/tmp" "$w/rec"

check "--version" sh -c "$L --version | grep -q '^lwm2 [0-9]'"
$L nosuch >/dev/null 2>&1
check "unknown command: exit 2" test $? -eq 2

./mkrecords "$w/rec" 4
check "dump: rank records as JSON" \
	test "$($L dump "$w"/rec/*.lwm2 | grep -c '"type":"lwm2 rank record"')" -eq 4
printf 'LWM2RANKgarbage' >"$w/bad.lwm2"
$L dump "$w/bad.lwm2" "$w"/rec/*.lwm2 >"$w/dump.out" 2>"$w/err"
st=$?
check "dump: malformed record: exit 1, clear error" \
	sh -c "test $st -eq 1 && grep -q 'lwm2: dump: couldn.t read .*bad.lwm2' '$w/err'"
check "dump: the good records still printed" test "$(wc -l <"$w/dump.out")" -eq 4
ln -s "$w/rec/rank0.lwm2" "$w/link.lwm2"
check "dump: a symlink is refused" sh -c "! $L dump '$w/link.lwm2' 2>/dev/null"
cp "$w/bad.lwm2" "$w/rec/"

# config: lwm2.conf as lwm2 reads it, lwm2-mail's way in
printf 'MailWait = 60 # s\nmailer=/usr/sbin/sendmail\nWatchStuckTime=soon\n' >"$w/lwm2.conf"
is "$(LWM2_CONF="$w/lwm2.conf" $L config --get MailWait)" 60 "config --get: the file's value"
is "$(LWM2_CONF=/nonexistent $L config --get maildigest)" yes "config --get: the default, any case"
is "$($L config --file "$w/lwm2.conf" --get Mailer)" /usr/sbin/sendmail "config --file"
out=$(SLURM_CONF="$w/slurm.conf" LWM2_CONF='' $L config --get WatchStuckTime 2>&1)
is "$?:$out" "1:lwm2: config: $w/lwm2.conf:3: bad value \"soon\" for WatchStuckTime" \
	"config: lwm2.conf beside SLURM_CONF, a bad value of the key asked: exit 1"
check "config --get: other keys' values are their parts'" \
	test "$($L config --file "$w/lwm2.conf" --get MailWait)" = 60
printf 'MailWait=60\nMailWiat=5\n' >"$w/typo.conf"
out=$($L config --file "$w/typo.conf" 2>&1)
is "$?:$out" "1:lwm2: config: $w/typo.conf:2: unknown key MailWiat" "config: an unknown key: exit 1"
out=$($L config --file "$w/typo.conf" --get MailWait 2>&1)
is "$?:$out" "0:60" "config --get: a key this lwm2 does not know is passed over"
$L config --get NoSuchKey >/dev/null 2>&1
check "config --get of no key: exit 2" test $? -eq 2
is "$($L config --file /nonexistent | wc -l)" "$($L config --keys | wc -l)" \
	"config: a line for every key of the table"
$L merge "$w/rec" >"$w/node.json" 2>"$w/err"
check "merge: node record despite a bad record" grep -q '"lwm2_node_version":1' "$w/node.json"
check "merge: the bad record logged" grep -q "couldn't read bad.lwm2" "$w/err"
check "dump: node record validates" sh -c "$L dump '$w/node.json' >/dev/null"
check "render: a node record as its node's digest" \
	sh -c "$L render '$w/node.json' | grep -q 'Time in MPI calls, without Init/Finalize'"
$L merge --digest "$w/rec" >"$w/d.json" 2>/dev/null
check "merge --digest: 4 processes, MPI share 10-40 %, guidance" \
	sh -c "$L render '$w/d.json' | grep -q 'Time in MPI calls, without Init/Finalize \[%\] *10.0 % *25.0 % *40.0 %' &&
	       $L render '$w/d.json' | grep -q '\[mpi-share\]'"
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

# lwm2 run needs the preload library.
lib=${LWM2_LIB:-../preload/.libs/liblwm2.so}
if [ ! -r "$lib" ]; then
	for i in 1 2 3 4 5 6 7 8 9 10 11; do
		skip_because "lwm2 run test $i" "no liblwm2.so built (preload/)"
	done
	done_testing
	exit
fi
export LWM2_LIB="$lib"
TMPDIR="$w/tmp" $L run -- sh -c 'exit 7' 2>/dev/null
check "run: exit status of the command" test $? -eq 7
sh -c "TMPDIR='$w/tmp' $L run -- sh -c 'kill -TERM \$\$' 2>/dev/null; echo \$? >'$w/st'"
check "run: killed by SIGTERM, lwm2 too (143)" test "$(cat "$w/st")" -eq 143
TMPDIR="$w/tmp" $L run -- /nonexistent/cmd 2>"$w/err"
check "run: missing command: exit 127" test $? -eq 127
check "run: record directories removed" test -z "$(ls -A "$w/tmp")"
TMPDIR="$w/tmp" $L run --keep "$w/kept" --json "$w/run.json" -- \
	sh -c 'echo out; dd if=/dev/zero of="$0/f" bs=64k count=16 2>/dev/null' "$w" \
	>"$w/out" 2>"$w/digest"
check "run: the command's stdout untouched" test "$(cat "$w/out")" = out
check "run: digest on stderr with the seed's metrics" \
	grep -q "Time in POSIX file I/O calls" "$w/digest"
check "run: data written counted (1 MB)" grep -q "Data written to files.*1.05 MB" "$w/digest"
check "run: not an MPI program" grep -q "Time in MPI calls, without Init/Finalize.*n/a (not an MPI process)" "$w/digest"
check "run --keep: rank records kept" sh -c "ls '$w'/kept/*.lwm2 >/dev/null"
check "run --json: digest renders" sh -c "$L render '$w/run.json' | grep -q 'lwm2 digest: job 0'"
check "run: kept records are valid" sh -c "$L dump '$w'/kept/*.lwm2 >/dev/null"
done_testing
