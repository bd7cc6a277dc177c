#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the libFuzzer targets for a bounded time on a seed corpus made from
# real records (lwm2 run with the build tree's liblwm2.so) plus the test
# suite's hand-built ones.  LWM2_FUZZ_TIME sets the seconds per target,
# LWM2_FUZZ_RUNS a number of executions instead.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
t=${LWM2_FUZZ_TIME:-10}
# LWM2_FUZZ_RUNS: a number of executions per target instead of a time.
bound="-max_total_time=$t"
if [ -n "${LWM2_FUZZ_RUNS:-}" ]; then
	bound="-runs=$LWM2_FUZZ_RUNS"
	t="-runs=$LWM2_FUZZ_RUNS, 0"
fi

for f in fuzz_record fuzz_json fuzz_logscan fuzz_agree; do
	if [ ! -x ./$f ] || [ "$(head -c 2 ./$f)" = "#!" ]; then
		skip_all "clang with -fsanitize=fuzzer is not available"
	fi
done
plan 7
work=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-fuzz-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rec" "$work/json" "$work/keep" "$work/log" "$work/agree"
# Real records: a process tree with file I/O, forks and an exec, in a
# container as far as the library can tell (record version 3's fields).
if LWM2_CONTAINER='podman:docker.io/library/debian:11' \
	./lwm2 run --quiet --keep "$work/keep" --json "$work/digest.json" -- \
	sh -c 'cat /etc/passwd >/dev/null; (echo x >"$0/io.txt"); exec true' "$work" \
	>/dev/null 2>&1; then
	:
fi
cp "$work"/keep/*.lwm2 "$work/rec/" 2>/dev/null
nrec=$(find "$work/rec" -name '*.lwm2' | wc -l)
# Real records are expected wherever lwm2 run can preload the build tree's
# library: it is built, and without sanitizers (whose runtime would have
# to be loaded first into sh).
lib=${LWM2_LIB:-../preload/.libs/liblwm2.so}
why_norec=
if [ ! -r "$lib" ]; then
	why_norec="no liblwm2.so built (preload/)"
elif ldd "$lib" 2>/dev/null | grep -q 'lib[at]san\|libubsan'; then
	why_norec="liblwm2.so is built with sanitizers"
fi
if [ -n "$why_norec" ]; then
	skip_because "seed corpus: real rank records from lwm2 run" "$why_norec"
else
	check "seed corpus: real rank records from lwm2 run ($nrec)" test "$nrec" -gt 0
fi
# Hand-built records with MPI and I/O counters and slices, in any case;
# in a container, so that node records and digests of the corpus list one.
mkdir "$work/made" && MKRECORDS_CONTAINER='charliecloud:/img/x' ./mkrecords "$work/made" 3 &&
	cp "$work"/made/*.lwm2 "$work/rec/"
check "seed corpus: 3 hand-built rank records" \
	test "$(find "$work/made" -name '*.lwm2' | wc -l)" -eq 3
if [ ! -s "$work/digest.json" ]; then
	./lwm2 merge --digest "$work/made" >"$work/digest.json" 2>/dev/null
fi
# JSON seeds: byte 0 odd = digest, even = node record.
if [ -s "$work/digest.json" ]; then
	{ printf '\001'; cat "$work/digest.json"; } >"$work/json/digest"
	{ printf '\001LWM2:'; cat "$work/digest.json"; } >"$work/json/prefixed"
fi
if [ "$nrec" -gt 0 ]; then
	{ printf '\000'; ./lwm2 merge "$work/keep" 2>/dev/null; } >"$work/json/node"
fi
{ printf '\000'; ./lwm2 merge "$work/made" 2>/dev/null; } >"$work/json/node-made"
printf '\001{"lwm2_digest_version":1,"job":{},"scope":{"processes":0,"metrics":{}}}' >"$work/json/min"
# Log seeds: lines of jobcomp/lwm2's log around the digests made above.
if [ -s "$work/digest.json" ]; then
	{
		printf '{"job_id":7,"user":"u","state":"COMPLETED","start":1,"end":9,"digest":'
		tr -d '\n' <"$work/digest.json"
		printf '}\n{"job_id":8}\n'
	} >"$work/log/line"
fi
# Agreement seeds: a whole digest (its scope is compared too) and a scope.
if [ -s "$work/digest.json" ]; then
	cp "$work/digest.json" "$work/agree/digest"
fi
printf '{"processes":2,"nodes":1,"partial":true,"metrics":{"duration":{"n":2,"min":1,"avg":1.5,"max":2}}}' \
	>"$work/agree/scope"
# Inputs that once found a fault, each target's, run first in every run.
cases="$(dirname "$0")/fuzz_cases"
for d in json agree; do
	cp "$cases/$d"/* "$work/$d/"
done
printf '@1700000000' >"$work/log/time"
printf 'now-3d' >"$work/log/rel"
# fuzz TARGET CORPUS FINDING: one test point, TARGET run on CORPUS; a
# failure says FINDING and keeps the artifacts here.
fuzz() {
	local rc=0
	"./$1" "$bound" -rss_limit_mb=2048 -artifact_prefix="$work/" "$work/$2" \
		>"$work/$1.log" 2>&1 || rc=$?
	if [ $rc -eq 0 ]; then
		ok "$1: $(grep -o 'Done [0-9]* runs' "$work/$1.log" | head -1) (${t}s)"
	else
		not_ok "$1 found $3"
		sed 's/^/# /' "$work/$1.log" | tail -40
		# the input itself, so that a run elsewhere (CI) can be
		# replayed: base64 -d >IN, then ./TARGET IN
		for a in "$work"/crash-*; do
			[ -f "$a" ] || continue
			if [ "$(wc -c <"$a")" -le 8192 ]; then
				printf '# artifact %s, base64:\n' "${a##*/}"
				base64 -w 76 "$a" | sed 's/^/#   /'
			else
				printf '# artifact %s: %s bytes, kept in the build directory\n' \
					"${a##*/}" "$(wc -c <"$a")"
			fi
		done
		cp "$work"/crash-* . 2>/dev/null
	fi
}
fuzz fuzz_record rec "a crash"
fuzz fuzz_json json "a crash"
fuzz fuzz_logscan log "a crash"
fuzz fuzz_agree agree "inputs the two scope readers read differently"
# The seeds must be accepted, not just survived: a fuzzer on a corpus it
# rejects entirely explores little.
if [ "$nrec" -gt 0 ]; then
	if ./lwm2 dump "$work"/keep/*.lwm2 >/dev/null 2>&1; then
		ok "seed records are valid"
	else
		not_ok "seed records are rejected by lwm2 dump"
	fi
elif [ -n "$why_norec" ]; then
	skip_because "seed records are valid" "$why_norec"
else
	not_ok "seed records are valid: there are none"
fi
done_testing
