#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# An application's history and regression detection on the private
# cluster.  One program, "spin", runs five times at 2 ranks (0.5 s of wall
# time each); then a rebuild of it that spins 2 s (another build-id) at
# 2 ranks: its digest flags the regression against the earlier runs and
# names both builds.  Then the first build at 4 ranks, told (by its
# argument, which lwm2 does not record) to spin 2 s: another rank count,
# not compared, no finding.  Then a program with no history: no
# finding.  `lwm2 history`, `lwm2 stats --by app` and `lwm2 diff
# --history` read the same runs back from jobcomp/lwm2's log.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v python3 >/dev/null || skip_all "python3 not installed: it reads the JSON log"
command -v readelf >/dev/null || skip_all "readelf not installed (binutils): it tells the build-ids"
jobcomp_setup
plan 24

# like GOT ERE DESC
like() {
	if grep -Eq -- "$2" <<<"$1"; then
		ok "$3"
	else
		not_ok "$3"
		diag "got:" "$1"
	fi
}

bin=$TESTDIR/bin
# Spins for WORK seconds of wall time, whatever else runs on the host, so
# that run times are steady on a loaded machine.
cat >"$bin/spin.c" <<'C'
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	volatile double x = 0;
	double work = argc > 1 ? atof(argv[1]) : WORK;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < work);
	return 0;
}
C
install -d -m 755 "$bin/v1" "$bin/v2" "$bin/new"
ok_build=1
cc -O1 -Wl,--build-id -DWORK=0.5 -o "$bin/v1/spin" "$bin/spin.c" || ok_build=0
cc -O1 -Wl,--build-id -DWORK=2.0 -o "$bin/v2/spin" "$bin/spin.c" || ok_build=0
cc -O1 -Wl,--build-id -DWORK=1.0 -o "$bin/new/fresh" "$bin/spin.c" || ok_build=0
chmod 755 "$bin"/v1/spin "$bin"/v2/spin "$bin"/new/fresh 2>/dev/null
is "$ok_build" 1 "three programs built"
bid() { readelf -n "$1" | sed -n 's/.*Build ID: *//p'; }
b1=$(bid "$bin/v1/spin")
b2=$(bid "$bin/v2/spin")
builds_differ() { [ -n "$b1" ] && [ -n "$b2" ] && [ "$b1" != "$b2" ]; }
check "the two builds of spin have different build-ids" builds_differ

# srun_job "PROG [ARG]" SRUN-ARGS...: one job by srun; prints its id (from
# the job's output).  bash runs first in each task and execs PROG, so
# PROG's image is the task's process.
srun_job() {
	local prog=$1
	shift
	run_job --lwm2-slice=1 "$@" bash -c '[ "$SLURM_PROCID" = 0 ] && echo "JOB=$SLURM_JOB_ID"; exec $0' "$prog" || return 1
	sed -n 's/^JOB=//p' <<<"$JOB_OUT" | head -n 1
}

# judged JOB: the job's line in the log carries the history judgement.
judged() {
	local end=$((SECONDS + 60))
	[ -n "$1" ] || return 1
	while ((SECONDS < end)); do
		[ "$(log_line "$1" "'history' in l.get('digest', {})")" = True ] && return 0
		sleep 0.5
	done
	return 1
}

base=()
for i in 1 2 3 4 5; do
	j=$(srun_job "$bin/v1/spin" -n 2 -N 1) || j=0
	base+=("$j")
	# A run's history is read from the log, where the worker writes the
	# line a moment after the job ends: the next run starts once it is
	# there, so that it is compared with every run before it.
	wait_line "$j" || diag "job $j: no line in the log after 60 s"
done
is "$(tr ' ' '\n' <<<"${base[*]}" | grep -c '^[1-9][0-9]*$')" 5 "five runs of spin at 2 ranks: ${base[*]}"
check "the fifth is judged in the log" judged "${base[4]}"
is "$(log_line "${base[0]}" "l['digest']['application']['exe']")" spin \
	"the digest names its application"
is "$(log_line "${base[0]}" "l['digest']['application'].get('build_id')")" "$b1" \
	"with the executable's build-id, as readelf tells it"
is "$(log_line "${base[0]}" "l['digest']['application']['ranks']")" 2 "and its rank count"
is "$(log_line "${base[4]}" "l['digest']['history']['compared'], len(l['digest']['history']['findings'])")" \
	"(4, 0)" "the fifth run: compared with four, too few to judge, no finding"

slow=$(srun_job "$bin/v2/spin" -n 2 -N 1) || slow=0
check "the slower build's job $slow is judged" judged "$slow"
is "$(log_line "$slow" "[f['rule'] for f in l['digest']['history']['findings']]")" \
	"['history-slower']" "the slower build is flagged, and only that"
text=$(log_line "$slow" "l['digest']['history']['findings'][0]['text']")
like "$text" "This build \\(${b2:0:12}\\) is [0-9]+ % slower than the previous build \\(${b1:0:12}\\)" \
	"the finding names both builds"
like "$text" "the last 5 runs of spin at 2 ranks" "and the runs it was compared with"

check "the slower build's digest reaches AdminComment" wait_digest "$slow" 60
shown=$(digest_as -j "$slow" 2>&1)
like "$shown" "History" "lwm2 digest shows a History section"
like "$shown" "\\[history-slower\\]" "with the rule that fired"
diag "lwm2 digest -j $slow:" "$shown"

other=$(srun_job "$bin/v1/spin 2.0" -n 4 -N 2) || other=0
check "the run at 4 ranks is judged" judged "$other"
is "$(log_line "$other" "l['digest']['history']['compared'], l['digest']['history']['earlier_runs'], len(l['digest']['history']['findings'])")" \
	"(0, 6, 0)" "4 ranks after runs at 2: the six earlier runs are not compared, no finding"
like "$(log_line "$other" "l['digest']['application']['metrics']['duration']")" "^(1\\.9|2\\.)" \
	"though it ran 2 s, four times as long as the same build at 2 ranks"

new=$(srun_job "$bin/new/fresh" -n 2 -N 1) || new=0
check "the new application's job is judged" judged "$new"
is "$(log_line "$new" "l['digest']['history']['earlier_runs'], len(l['digest']['history']['findings'])")" \
	"(0, 0)" "a new application: no history, no false alarm"

hist=$("$LWM2" history --app spin -f "$JCLOG" 2>&1)
is "$(grep -c ' spin ' <<<"$hist")" 7 "lwm2 history --app spin lists its seven runs"
like "$hist" "\\(new build\\)" "and marks where the build changed"
diag "lwm2 history --app spin:" "$hist"

byapp=$("$LWM2" stats --by app -f "$JCLOG" --json 2>&1)
is "$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); g={x["group"]:x for x in d["groups"]}; print(g["spin"]["jobs"], g["spin"]["users"], g["fresh"]["jobs"])' "$byapp" 2>&1)" \
	"7 1 1" "lwm2 stats --by app: spin 7 jobs of one user, fresh 1"

dh=$("$LWM2" diff --history "$slow" -f "$JCLOG" 2>&1)
like "$dh" "history-slower" "lwm2 diff --history shows the finding"
diag "lwm2 diff --history $slow:" "$dh"
