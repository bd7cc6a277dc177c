#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The lwm2 command on values out of range and on input that is not what
# it expects: every one refused with a clear error and a non-zero exit
# status, never taken for something else (a wrapped number, the whole
# job, gigabytes of padding), and memory bounded on endless lines.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
plan 21
L=./lwm2
w=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-lim-XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT

# refused ST PATTERN DESCRIPTION -- COMMAND...: exit status ST and a
# message matching PATTERN on stderr, nothing on stdout.
refused() {
	want=$1 pat=$2 d=$3
	shift 4
	"$@" >"$w/out" 2>"$w/err"
	st=$?
	if [ "$st" -eq "$want" ] && grep -q "$pat" "$w/err" && [ ! -s "$w/out" ]; then
		ok "$d"
	else
		not_ok "$d (exit $st, stderr: $(head -c 300 "$w/err"), stdout $(wc -c <"$w/out") bytes)"
	fi
}

printf '{"job_id":5,"user":"u","state":"COMPLETED"}\n' >"$w/log"
refused 1 "is a directory" "digest --file DIR: error, exit 1" -- $L digest --file "$w" -a
refused 1 "no digest in it" "render of an empty file: error, exit 1" -- \
	sh -c ": >'$w/empty'; exec $L render '$w/empty'"
refused 1 "no digest in it" "render of /dev/null: error, exit 1" -- $L render /dev/null
mkfifo "$w/fifo"
refused 1 "no digest in it" "render of a FIFO nobody writes: error, exit 1" -- \
	$L render "$w/fifo"
refused 2 "not 1 to 1024" "-o JobID%99999999999: refused" -- \
	$L digest -f "$w/log" -a -o JobID%99999999999
refused 2 "not 1 to 1024" "-o JobID%+5 (a sign, as strtol took it): refused" -- \
	$L digest -f "$w/log" -a -o JobID%+5
refused 2 "couldn't parse job" "-j 1.99999999999999999999: refused" -- \
	$L digest -f "$w/log" -j 1.99999999999999999999
refused 2 "couldn't parse job" "-j 1.-1: refused" -- $L digest -f "$w/log" -j 1.-1
refused 2 "couldn't parse job" "-j 1_99999999999999999999: refused" -- \
	$L digest -f "$w/log" -j 1_99999999999999999999
refused 2 "couldn't parse time" "-S @99999999999999999999: refused" -- \
	$L digest -f "$w/log" -a -S @99999999999999999999
refused 2 "couldn't parse time" "-S now-99999999999999999d: refused" -- \
	$L digest -f "$w/log" -a -S now-99999999999999999d
refused 2 "couldn't parse time" "stats -E @-5: refused" -- $L stats -f "$w/log" -E @-5
refused 2 "not a uid" "-u 99999999999999999999: refused" -- \
	$L digest -f "$w/log" -u 99999999999999999999
mkdir "$w/rec" && ./mkrecords "$w/rec" 2
refused 2 "couldn't parse --job" "merge -j 99999999999999999999: refused" -- \
	$L merge -j 99999999999999999999 "$w/rec"
refused 2 "couldn't parse --step" "merge -s -1: refused" -- $L merge -j 1 -s -1 "$w/rec"

# Widths within the range still work.
if $L digest -f "$w/log" -a -o JobID%7,State%3 2>/dev/null | grep -q '^      5 CO+$'; then
	ok "-o JobID%7,State%3 still formats"
else
	not_ok "-o JobID%7,State%3 still formats"
fi

# A line without an end: skipped with a message, the next line read, and
# memory bounded by the line cap (64 MiB), not by the input.
big() { head -c 300000000 /dev/zero | tr '\0' 'x'; printf '\n{"job_id":9}\n'; }
# Address space is what ASan reserves in bulk: no limit there.
lim="ulimit -v 600000;"
if grep -q __asan_init "$L" 2>/dev/null || grep -q __asan_init .libs/lwm2 2>/dev/null; then
	lim=
fi
big | sh -c "$lim exec $L digest -f - -a -o JobID" >"$w/out" 2>"$w/err"
if grep -q "longer than 67108864 bytes" "$w/err" && grep -q '^ *9$' "$w/out"; then
	ok "digest --file: a 300 MB line skipped with a message, the next read"
else
	not_ok "digest --file: a 300 MB line skipped ($(head -c 300 "$w/err"))"
fi
big | sh -c "$lim exec $L stats -f -" >"$w/out" 2>"$w/err"
if grep -q "line 1: longer than 67108864 bytes; skipped" "$w/err"; then
	ok "stats --file: a 300 MB line skipped with a message"
else
	not_ok "stats --file: a 300 MB line skipped ($(head -c 300 "$w/err"))"
fi

# Times apart by more than INT64_MAX in a node record (it reaches
# slurmctld through the spool): no signed overflow (UBSan builds report
# one as a runtime error), the digest still renders.
$L merge "$w/rec" 2>/dev/null |
	sed -e 's/"start_ns":[-0-9]*/"start_ns":-9223372036854775807/g' \
		-e 's/"end_ns":[-0-9]*/"end_ns":9223372036854775807/g' >"$w/node.json"
$L render "$w/node.json" >"$w/out" 2>"$w/err"
st=$?
if [ $st -eq 0 ] && ! grep -q "runtime error" "$w/err" && grep -q "lwm2 digest" "$w/out"; then
	ok "render: node record with extreme start and end times"
else
	not_ok "render: node record with extreme start and end times (exit $st: $(head -c 300 "$w/err"))"
fi

# Numbers past what an integer holds in a log's digest (found by the
# fuzzer): no undefined conversion (UBSan builds report one as a runtime
# error), the line still counted.
printf '{"job_id":3,"state":"COMPLETED","start":1,"end":9,"digest":{"lwm2_digest_version":1,"job":{"job_id":3},"scope":{"processes":1,"metrics":{"duration":{"min":1e300,"avg":1e300,"max":1e300,"n":3.7e27}}}}}\n' >"$w/huge.log"
$L stats -f "$w/huge.log" >"$w/out" 2>"$w/err"
st=$?
if [ $st -eq 0 ] && ! grep -q "runtime error" "$w/err"; then
	ok "stats: a digest with numbers past 2^64"
else
	not_ok "stats: a digest with numbers past 2^64 (exit $st: $(head -c 300 "$w/err"))"
fi
printf '{"lwm2_digest_version":1,"job":{"job_id":3},"scope":{"processes":1,"metrics":{"duration":{"min":1,"avg":1e300,"max":2.9e28,"n":1},"bytes_written":{"min":1,"avg":3e25,"max":-1e30,"n":1}}}}\n' >"$w/huge.json"
$L render "$w/huge.json" >"$w/out" 2>"$w/err"
st=$?
if [ $st -eq 0 ] && ! grep -q "runtime error" "$w/err" && grep -q "lwm2 digest" "$w/out"; then
	ok "render: a digest with values past 2^64"
else
	not_ok "render: a digest with values past 2^64 (exit $st: $(head -c 300 "$w/err"))"
fi
done_testing
