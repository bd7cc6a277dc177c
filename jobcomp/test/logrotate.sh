#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The logrotate configuration the Debian package ships
# (debian/lwm2.logrotate), run by the real logrotate on a
# log that jobcomp/lwm2's own writer appends to (./logappend: the
# worker's step, lwm2_jc_process), between appends and while they go on:
# no line lost, none doubled, and lwm2 reads the rotated set (plain,
# gzip) back in the order it was written.  Runs in the build directory.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/tap.sh
. "$here/../../tests/tap.sh"

shipped="$here/../../debian/lwm2.logrotate"
lwm2=../digest/lwm2
logrotate=$(command -v logrotate || echo /usr/sbin/logrotate)
[ -x "$logrotate" ] ||
	skip_all "logrotate not installed: the test runs the real one (contrib/install-deps.sh installs it)"
[ -x ./logappend ] && [ -x "$lwm2" ] || bail_out "./logappend or $lwm2 not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-logrotate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/log" "$tmp/state"
log=$tmp/log/lwm2-digests.jsonl

# The shipped file with the test's log in place of the default JobCompLoc;
# its own state file, so the system's is neither read nor written.
sed "s|^/var/log/slurm/lwm2-digests.jsonl |$log |" "$shipped" >"$tmp/lr.conf"
grep -q "^$log {" "$tmp/lr.conf" ||
	bail_out "the shipped configuration does not name /var/log/slurm/lwm2-digests.jsonl"
rotate() {
	"$logrotate" -f -s "$tmp/lr.state" "$tmp/lr.conf" 2>>"$tmp/lr.err"
}

# append FIRST COUNT: jobs FIRST.. through the writer
append() {
	./logappend "$log" "$tmp/state" "$1" "$2" 2>>"$tmp/append.err"
}

# ids: the job ids lwm2 reads from the rotated set, in the order read
# (its exit status is 1: these jobs never ran, so they have no digest;
# what it could not read it says on stderr, kept in read.err)
ids() {
	"$lwm2" digest --file "$log*" -a -S @1 -o JobIDRaw --noheader 2>"$tmp/read.err" |
		awk '{ print $1 }'
}

# stats_ok N: lwm2 stats reads the set with exit status 0, N lines, none
# skipped
stats_ok() {
	"$lwm2" stats --file "$log*" --json >"$tmp/stats.json" 2>"$tmp/stats.err" &&
		grep -q "\"lines\":$1,\"skipped_lines\":0}" "$tmp/stats.json" ||
		{ diag "$(cat "$tmp/stats.err" "$tmp/stats.json")"; false; }
}

# ids_are GOT FIRST LAST DESC: GOT is FIRST..LAST, one per line; else
# the first differences are shown
ids_are() {
	local d
	d=$(diff <(echo "$1") <(seq "$2" "$3") | head -8)
	if [ -z "$d" ]; then ok "$4"; else
		not_ok "$4"
		diag "read (<) against written (>):" "$d"
	fi
}

# --- between appends
append 1 100
is "$(wc -l <"$log")" 100 "the writer appended 100 lines"
rotate
is "$?" 0 "logrotate: first rotation"
check "moved aside, no new file until the next line (nocreate)" \
	test -s "$log.1" -a ! -e "$log"
append 101 100
is "$(wc -l <"$log")" 100 "the writer made the log again with the next line"
rotate
is "$?" 0 "logrotate: second rotation"
check "the older file compressed one rotation later (delaycompress)" \
	gzip -t "$log.2.gz"
check "the newer one left plain" test -s "$log.1" -a ! -e "$log.1.gz"
append 201 100
got=$(ids)
ids_are "$got" 1 300 \
	"lwm2 digest --file 'lwm2-digests.jsonl*': 300 jobs, each once, oldest first across .2.gz, .1 and the log"
is "$(grep -c "couldn't read" "$tmp/read.err")" 0 "every file read"
check "lwm2 stats over the set: exit 0, 300 lines" stats_ok 300

# --- while the writer appends: four rotations in the middle of 1500 lines
# (a millisecond between two jobs: without it a file system whose sync is
# cheap took the 1500 lines before the second rotation, seen in distcheck)
./logappend "$log" "$tmp/state" 301 1500 1000 2>>"$tmp/append.err" &
writer=$!
during=0
for _ in 1 2 3 4; do
	sleep 0.2
	kill -0 "$writer" 2>/dev/null && during=$((during + 1))
	rotate || not_ok "logrotate during the appends: $(cat "$tmp/lr.err")"
done
wait "$writer"
is "$?" 0 "the writer logged every job"
check "rotations while the writer appended: $during of 4" test "$during" -ge 2
got=$(ids)
is "$(grep -c "couldn't read" "$tmp/read.err")" 0 "the rotated set reads back, every file"
is "$(echo "$got" | sort -n | uniq -d | head -3 | tr '\n' ' ')" "" "no line doubled"
is "$(echo "$got" | sort -n | uniq | wc -l)" 1800 "no line lost: 1800 jobs"
ids_are "$got" 1 1800 "read in the order written"
diag "$(cd "$tmp/log" && ls -l)"

check "lwm2 stats over the set: exit 0, 1800 lines" stats_ok 1800

# --- zstd instead of gzip, as jobcomp_lwm2(8) says to set it
zstd=$(command -v zstd)
if [ -n "$zstd" ]; then
	zlog=$tmp/log/z.jsonl
	sed -e "s|^$log {|$zlog {|" \
		-e "s|^}|\tcompresscmd $zstd\n\tcompressext .zst\n}|" \
		"$tmp/lr.conf" >"$tmp/lrz.conf"
	./logappend "$zlog" "$tmp/state" 5001 50 2>>"$tmp/append.err"
	"$logrotate" -f -s "$tmp/lrz.state" "$tmp/lrz.conf" 2>>"$tmp/lr.err"
	./logappend "$zlog" "$tmp/state" 5051 50 2>>"$tmp/append.err"
	"$logrotate" -f -s "$tmp/lrz.state" "$tmp/lrz.conf" 2>>"$tmp/lr.err"
	./logappend "$zlog" "$tmp/state" 5101 50 2>>"$tmp/append.err"
	check "compresscmd zstd: the older file is zstd data" "$zstd" -q -t "$zlog.2.zst"
	got=$("$lwm2" digest --file "$zlog*" -a -S @1 -o JobIDRaw --noheader 2>"$tmp/read.err" |
		awk '{ print $1 }')
	ids_are "$got" 5001 5150 \
		"zstd-rotated set: 150 jobs, each once, oldest first"
	is "$(grep -c "couldn't read" "$tmp/read.err")" 0 "every file read"
else
	skip_because "compresscmd zstd" "zstd not installed (contrib/install-deps.sh)"
fi

[ -s "$tmp/append.err" ] && diag "writer: $(cat "$tmp/append.err")"
[ -s "$tmp/lr.err" ] && diag "logrotate: $(cat "$tmp/lr.err")"
done_testing
