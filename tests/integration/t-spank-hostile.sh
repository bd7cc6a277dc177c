#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# slurmstepd against a hostile job user.  The step directory is the
# user's; whatever is planted there, the end of the step (merge, sign,
# write) stays within a second and slurmstepd within 64 MiB: thousands of
# hard links to one large valid record, more valid records than a step
# merges, 100,000 empty record files, a name with a newline (which must
# not forge a log line), a tree deeper than any fixed limit, and a step
# directory left behind by a killed slurmstepd.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

spank_setup
chmod 711 "$TESTDIR/$TEST_USER"
build=$(spank_builddir)
BIN=$TESTDIR/bin
install -d -m 755 "$BIN"
# mkrecords is a check program: built here if make check has not run.
[ -x "$build/digest/mkrecords" ] || make -s -C "$build/digest" mkrecords >/dev/null 2>&1
install -m 755 "$build/digest/mkrecords" "$BIN/mkrecords" 2>/dev/null ||
	bail_out "digest/mkrecords could not be built"

MAX_MS=1000
MAX_KB=65536

# hostile NAME SCRIPT: run SCRIPT (bash, as the user, in the step, with
# $LWM2_DIR and $BIN) on one node, from a file; meanwhile follow the step's slurmstepd
# and keep its peak RSS.  Sets JOB, HWM_KB (peak RSS, kB), END_MS (step
# end from slurmd's log) and ERR (the task's stderr, srun's included).
hostile() {
	local name=$1 out=$TESTDIR/$TEST_USER/$1.out pid="" hwm=0 v i
	printf 'echo job=$SLURM_JOB_ID\nsleep 1\n%s\n' "$2" >"$BIN/$name.sh"
	chmod 755 "$BIN/$name.sh"
	rm -f "$out"
	as_user bash -c "BIN=$BIN timeout 120 srun -N1 -n1 bash $BIN/$name.sh >'$out' 2>&1" &
	local bg=$!
	for i in $(seq 100); do
		grep -q job= "$out" 2>/dev/null && break
		sleep 0.1
	done
	JOB=$(job_of "$(cat "$out" 2>/dev/null)")
	for i in $(seq 100); do
		pid=$(pgrep -f "slurmstepd: \[${JOB}\.0\]" | head -n 1)
		[ -n "$pid" ] && break
		sleep 0.05
	done
	# The step's VmHWM until slurmstepd exits: the last value read covers
	# the merge at the end of the step.
	while [ -n "$pid" ] && v=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null) &&
		[ -n "$v" ]; do
		hwm=$v
		sleep 0.02
	done
	wait "$bg"
	HWM_KB=$hwm
	END_MS=$(slurmd_logs | sed -n "s/.*lwm2: step end: job $JOB step 0 node record done in \([0-9.]*\) ms/\1/p" | tail -n 1)
	ERR=$(cat "$out")
	diag "$name: job $JOB, step end ${END_MS:-?} ms, slurmstepd peak RSS ${HWM_KB} kB"
}

within() { # within DESCRIPTION: the bounds of the last hostile run
	check "$1: step end within $MAX_MS ms (${END_MS:-no log line})" \
		awk -v m="${END_MS:-99999}" -v x=$MAX_MS 'BEGIN { exit !(m <= x) }'
	check "$1: slurmstepd within $MAX_KB kB (${HWM_KB} kB)" \
		awk -v m="$HWM_KB" -v x=$MAX_KB 'BEGIN { exit !(m > 0 && m <= x) }'
}

# --- 5,000 hard links to one valid 2.6 MB record of the job's own step
hostile links '"$BIN"/mkrecords "$LWM2_DIR" 1 4096 $SLURM_JOB_ID 0 big && for i in $(seq 5000); do ln "$LWM2_DIR/big0.lwm2" "$LWM2_DIR/l$i.lwm2"; done'
within "5000 hard links to a 2.6 MB record"
f=$SPOOL/$JOB/0.n1.lwm2node
[ -f "$f" ] || f=$(ls "$SPOOL/$JOB"/0.*.lwm2node 2>/dev/null | head -n 1)
check "hard links: the node record is still written" test -f "$f"
if [ -f "$f" ]; then
	is "$(node_field "$f" "sum(1 for p in r['procs'] if p['pid'] == 1000)")" 0 \
		"hard links: the linked record is not merged"
else
	not_ok "hard links: the linked record is not merged"
fi
check "hard links: the reason is logged" \
	grep -q "lwm2: merge: couldn't read .*5001 links to the file" <(slurmd_logs)

# --- more valid records than one step merges, each its own file
hostile records '"$BIN"/mkrecords "$LWM2_DIR" 6000 4 $SLURM_JOB_ID 0 r'
within "6000 valid records"
f=$(ls "$SPOOL/$JOB"/0.*.lwm2node 2>/dev/null | head -n 1)
if [ -n "$f" ]; then
	# One entry of procs per merged record; the step's short processes
	# (sleep, and mkrecords when it is quick) come from the summary, as
	# entries flagged 1 << 11, and are not records.
	n=$(node_field "$f" "sum(1 for p in r['procs'] if not p['flags'] & (1 << 11))")
	check "6000 records: at most 4096 merged ($n)" test "${n:-0}" -le 4096
	check "6000 records: flagged skipped_records" \
		test "$(node_field "$f" "'skipped_records' in r['flags']")" = True
else
	not_ok "6000 records: at most 4096 merged"
	not_ok "6000 records: flagged skipped_records"
fi

# --- 100,000 empty record files and a name with a newline
cat >"$BIN/flood.py" <<'PY'
import os
d = os.environ["LWM2_DIR"]
for i in range(100000):
    open("%s/e%06d.lwm2" % (d, i), "w").close()
open(d + "/x\nFORGED lwm2: injected.lwm2", "w").close()
PY
hostile flood 'python3 "$BIN/flood.py"'
within "100,000 empty files"
nlog=$(slurmd_logs | grep -c "lwm2: merge:.*step directory .*/$JOB\.0\.")
check "flood: at most a dozen log lines for the step ($nlog)" test "$nlog" -le 12
check "flood: the count of skipped records logged once" \
	grep -q "lwm2: merge: skipped .* records in all, the first 10 of them named above.*/$JOB\.0\." <(slurmd_logs)
# In a file: the logs of a whole suite run exceed an argument's size.
slurmd_logs >"$TESTDIR/slurmd-logs.txt"
check "flood: no forged line in slurmd's log" bash -c "! grep -q '^FORGED' \"\$1\"" _ "$TESTDIR/slurmd-logs.txt"
check "flood: no forged line on the user's stderr" bash -c "! grep -q '^FORGED' <<<\"\$1\"" _ "$ERR"
nerr=$(grep -c "lwm2: merge" <<<"$ERR")
check "flood: at most a dozen lines on the user's stderr ($nerr)" test "$nerr" -le 12

# --- a tree deeper than any fixed limit in the step directory
hostile deep 'cd "$LWM2_DIR" && for i in $(seq 60); do mkdir d && cd d && : >f.lwm2; done'
within "a tree 60 levels deep"
sleep 1
check "deep tree: nothing of the step left in the base directory" \
	bash -c "! ls -d '$BASEDIR'/$JOB.* >/dev/null 2>&1"

# --- a step directory left by a killed slurmstepd goes at the next step
as_user bash -c "timeout 60 srun -N1 -n1 -w n1 bash -c 'echo job=\$SLURM_JOB_ID; sleep 30' >killed.out 2>&1 &"
for _ in $(seq 100); do
	grep -q job= "$TESTDIR/$TEST_USER/killed.out" 2>/dev/null && break
	sleep 0.1
done
job=$(job_of "$(cat "$TESTDIR/$TEST_USER/killed.out")")
pid=""
for _ in $(seq 100); do
	pid=$(pgrep -f "slurmstepd: \[${job}\.0\]" | head -n 1)
	[ -n "$pid" ] && break
	sleep 0.05
done
kill -KILL "$pid" 2>/dev/null
pkill -KILL -u "$TEST_USER" -f "sleep 30" 2>/dev/null
sleep 1
check "killed slurmstepd: its step directory is left behind" \
	bash -c "ls -d '$BASEDIR'/$job.0.* >/dev/null 2>&1"
as_user scancel "$job" 2>/dev/null
run_job -N1 -n1 -w n1 true
check "killed slurmstepd: the next step on the node removes it" \
	bash -c "! ls -d '$BASEDIR'/$job.0.* >/dev/null 2>&1"
check "killed slurmstepd: the removal is logged" \
	grep -q "lwm2: step start: removing .*/$job\.0\..*left by a step that ended" <(slurmd_logs)

# --- the user's own sanitizer builds run under lwm2 as without it
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(8); p[0] = 7; printf("asan %%d\\n", p[0]); free(p); return 0; }\n' >"$BIN/asan.c"
if gcc -fsanitize=address -o "$BIN/asan" "$BIN/asan.c" 2>/dev/null; then
	chmod 755 "$BIN/asan"
	run_job_unchecked -N1 -n1 "$BIN/asan"
	rc=$?
	is "$rc $JOB_OUT" "0 asan 7" "a program built with AddressSanitizer runs under lwm2"
	[ "$rc" -eq 0 ] || diag "$JOB_OUT"
	# lwm2 stepped aside for it: its node record counts the process and
	# says why it has no figures
	job=$(find "$SPOOL" -mindepth 1 -maxdepth 1 -name '[0-9]*' -printf '%f\n' | sort -n | tail -n 1)
	f=$(find "$SPOOL/$job" -name '0.*.lwm2node' 2>/dev/null | head -n 1)
	if [ -n "$f" ]; then
		is "$(node_field "$f" "sum(1 for p in r['procs'] if 'built with AddressSanitizer' in json.dumps(p.get('reasons', {})))")" 1 \
			"its node record (job $job) counts it and says why it has no figures"
	else
		not_ok "its node record counts it and says why it has no figures (no node record of job $job)"
	fi
else
	skip "no AddressSanitizer runtime to build with"
	skip "no AddressSanitizer runtime to build with"
fi

done_testing
