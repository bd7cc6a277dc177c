#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every command that reads jobcomp/lwm2's log, on a rotated set (a gzip
# file and the current plain one, by a pattern) and on the same set with
# the gzip file cut short: the set reads as the one plain log does; the
# cut file is an error naming it, with a non-zero exit status, the other
# file still read by the commands that sum up many jobs, and no page or
# comparison of one job.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
export TZ=UTC
command -v gzip >/dev/null || skip_all "gzip not installed: it makes the rotated file"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-rotated.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
./mkstatslog >"$tmp/old" <<'SPEC' || bail_out "mkstatslog failed"
job=101 user=alice account=p1 partition=batch end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10
job=102 user=alice account=p1 partition=batch end=1700003600 elapsed=7200 cpus=4 procs=4 mpi=30
SPEC
./mkstatslog >"$tmp/new" <<'SPEC' || bail_out "mkstatslog failed"
job=103 user=bob account=p2 partition=gpu end=1702000000 elapsed=3600 cpus=8 procs=4 cpt=2 threads=1 mpi=50 io=20
job=106 user=alice account=p1 partition=batch end=1702007200 elapsed=3600 cpus=4 procs=4 mpi=20
SPEC
cat "$tmp/old" "$tmp/new" >"$tmp/plain.jsonl"
mkdir "$tmp/set" "$tmp/bad"
gzip -c "$tmp/old" >"$tmp/set/l.jsonl.1.gz"
cp "$tmp/new" "$tmp/set/l.jsonl"
head -c 300 "$tmp/set/l.jsonl.1.gz" >"$tmp/bad/l.jsonl.1.gz"
cp "$tmp/new" "$tmp/bad/l.jsonl"

# the commands that sum up many jobs: output, exit status
many=("stats --json" "digest -a -S @1 -o JobIDRaw -n" "history --json" "grid -S @1"
	"nodes -S @1 --json" "export --dry-run")
for c in "${many[@]}"; do
	# shellcheck disable=SC2086 # the command's words
	./lwm2 $c --file "$tmp/plain.jsonl" >"$tmp/want" 2>/dev/null
	want_rc=$?
	# shellcheck disable=SC2086
	./lwm2 $c --file "$tmp/set/l.jsonl*" >"$tmp/got" 2>"$tmp/err"
	is "$?" "$want_rc" "lwm2 $c: the rotated set, exit status as for the plain log"
	# export says its elapsed time on stderr only; the points are the same
	check "lwm2 $c: the same output as the plain log" cmp -s "$tmp/want" "$tmp/got"
	# shellcheck disable=SC2086
	./lwm2 $c --file "$tmp/bad/l.jsonl*" >"$tmp/got" 2>"$tmp/err"
	is "$?" 1 "lwm2 $c: the cut .gz: exit status 1"
	check "lwm2 $c: the message names the file and the reason" \
		grep -q "couldn't read $tmp/bad/l.jsonl.1.gz: gzip data cut short" "$tmp/err"
	check "lwm2 $c: and says the other file was read" \
		grep -q "1 of 2 files couldn't be read (see above); read the other 1" "$tmp/err"
	check "lwm2 $c: output from the other file" test -s "$tmp/got"
done

# one job: no page, no comparison
./lwm2 report -j 106 --file "$tmp/set/l.jsonl*" -o "$tmp/j.html" 2>/dev/null
is "$?" 0 "report -j: the rotated set"
./lwm2 report -j 106 --file "$tmp/bad/l.jsonl*" -o "$tmp/j2.html" 2>"$tmp/err"
is "$?" 1 "report -j: the cut .gz: exit status 1"
check "report -j: no page" test ! -e "$tmp/j2.html"
./lwm2 diff 101 106 --file "$tmp/set/l.jsonl*" >/dev/null 2>&1
is "$?" 1 "diff 101 106 over the set: they differ (1)"
./lwm2 diff 101 106 --file "$tmp/bad/l.jsonl*" >/dev/null 2>"$tmp/err"
is "$?" 2 "diff over the cut .gz: exit status 2"
check "diff: the message names the file" grep -q "l.jsonl.1.gz: gzip data cut short" "$tmp/err"
./lwm2 report --site --file "$tmp/bad/l.jsonl*" -o "$tmp/site" >/dev/null 2>&1
is "$?" 1 "report --site over the cut .gz: exit status 1"

# the case of the issue: one compressed file, and standard input
./lwm2 stats --file "$tmp/set/l.jsonl.1.gz" --json >"$tmp/got" 2>"$tmp/err"
is "$?" 0 "stats --file lwm2.jsonl.1.gz: exit 0"
check "stats --file lwm2.jsonl.1.gz: its 2 jobs, no line skipped" \
	grep -q '"lines":2,"skipped_lines":0}' "$tmp/got"
is "$(cat "$tmp/err")" "" "stats --file lwm2.jsonl.1.gz: nothing on stderr"
gzip -c "$tmp/plain.jsonl" | ./lwm2 stats --file - --json >"$tmp/got" 2>/dev/null
check "stats --file - with gzip data on standard input: 4 lines" \
	grep -q '"lines":4,"skipped_lines":0}' "$tmp/got"
./lwm2 stats --file "$tmp/bad/l.jsonl.1.gz" >/dev/null 2>&1
is "$?" 1 "stats --file on the cut .gz alone: exit 1, not an empty table with 0"

# permission denied: root reads any file, so as nobody where root can
# change to it
if [ "$(id -u)" -ne 0 ]; then
	chmod 000 "$tmp/set/l.jsonl.1.gz"
	./lwm2 stats --file "$tmp/set/l.jsonl*" >/dev/null 2>"$tmp/err"
	is "$?" 1 "stats: a file not readable: exit 1"
	chmod 644 "$tmp/set/l.jsonl.1.gz"
elif command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -x ./lwm2; then
	chmod 755 "$tmp" "$tmp/set"
	chmod 600 "$tmp/set/l.jsonl.1.gz"
	chmod 644 "$tmp/set/l.jsonl"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		./lwm2 stats --file "$tmp/set/l.jsonl*" --json >"$tmp/got" 2>"$tmp/err"
	is "$?" 1 "stats as nobody: a file it may not read: exit 1"
	check "the message names the file: Permission denied" \
		grep -q "couldn't open $tmp/set/l.jsonl.1.gz: Permission denied" "$tmp/err"
	check "the other file read: 2 lines" grep -q '"lines":2,"skipped_lines":0}' "$tmp/got"
else
	skip_because "permission denied" "running as root without setpriv or a nobody user to drop to"
fi
done_testing
