#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# spank_lwm2.so when things go wrong, and printing: a rank killed with
# SIGKILL and a cancelled job still give node records with those processes
# marked incomplete; a corrupt rank record planted by the user is skipped
# with a line in slurmd's log and the others kept; another user cannot
# write into a job's step directory; --lwm2=print prints the step digest on
# srun's stderr and the job digest at the end of a batch job's output.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

spank_setup
chmod 711 "$TESTDIR/$TEST_USER"

# --- one of two ranks killed with SIGKILL
# 1 s slices: the library rewrites its record every slice, so a process
# killed after 2 s has left one behind.
run_job_unchecked --lwm2-slice=1 -N1 -n2 bash -c 'echo job=$SLURM_JOB_ID; sleep 2.5; if [ "$SLURM_PROCID" = 1 ]; then kill -9 $$; fi'
job=$(job_of "$JOB_OUT")
first_job=${job:-0}
f=$SPOOL/$job/0.n1.lwm2node
check "kill -9 of one rank: node record written" test -f "$f"
if [ -f "$f" ]; then
	n=$(node_field "$f" "sum(1 for p in r['procs'] if p['flags'] & 1)")
	check "kill -9 of one rank: that process is marked incomplete ($n)" test "${n:-0}" -ge 1
	n=$(node_field "$f" "sum(1 for p in r['procs'] if not p['flags'] & 1)")
	check "kill -9 of one rank: the other rank's processes are complete ($n)" test "${n:-0}" -ge 1
else
	not_ok "kill -9 of one rank: that process is marked incomplete"
	not_ok "kill -9 of one rank: the other rank's processes are complete"
fi

# --- a corrupt rank record planted by the user, and a FIFO
run_job -N1 -n2 bash -c 'echo job=$SLURM_JOB_ID; if [ "$SLURM_PROCID" = 0 ]; then head -c 5000 /dev/urandom >"$LWM2_DIR/1.2.lwm2"; mkfifo "$LWM2_DIR/3.4.lwm2"; ln -s /etc/shadow "$LWM2_DIR/5.6.lwm2"; fi; sleep 1'
job=$(job_of "$JOB_OUT")
f=$SPOOL/$job/0.n1.lwm2node
check "planted records: node record still written" test -f "$f"
if [ -f "$f" ]; then
	is "$(node_field "$f" "r['skipped']")" 3 "planted records: all three skipped"
	n=$(node_field "$f" "len(r['procs'])")
	check "planted records: the tasks' own records kept ($n)" test "${n:-0}" -ge 2
else
	not_ok "planted records: all three skipped"
	not_ok "planted records: the tasks' own records kept"
fi
check "planted records: slurmd logged the corrupt one" \
	grep -q "lwm2: merge: couldn't read 1.2.lwm2.*$job" <(slurmd_logs)

# --- another user cannot write into a running job's step directory
as_user bash -c "srun -N1 -n1 bash -c 'echo job=\$SLURM_JOB_ID dir=\$LWM2_DIR; sleep 8' >sleeper.out 2>&1 &"
for _ in $(seq 50); do
	grep -q dir= "$TESTDIR/$TEST_USER/sleeper.out" 2>/dev/null && break
	sleep 0.2
done
dir=$(sed -n 's/.*dir=\([^ ]*\).*/\1/p' "$TESTDIR/$TEST_USER/sleeper.out")
job=$(job_of "$(cat "$TESTDIR/$TEST_USER/sleeper.out")")
is "$(stat -c '%U %a' "$dir" 2>&1)" "$TEST_USER 700" "step directory is the job user's, mode 700"
check "$OTHER_USER cannot create a file in it" \
	bash -c "! runuser -u $OTHER_USER -- touch '$dir/x.lwm2' 2>/dev/null"
check "$OTHER_USER cannot list it" \
	bash -c "! runuser -u $OTHER_USER -- ls '$dir' >/dev/null 2>&1"

# --- scancel of a running job: node record still there, marked incomplete
as_user scancel "$job"
wait_job "$job" 60 >/dev/null
sleep 1
f=$SPOOL/$job/0.n1.lwm2node
check "scancel: node record written" test -f "$f"
if [ -f "$f" ]; then
	# SIGTERM lets the library write a last record marked signaled; SIGKILL
	# leaves the previous one, marked incomplete.
	n=$(node_field "$f" "sum(1 for p in r['procs'] if p['flags'] & (1 | 16))")
	check "scancel: the killed processes are marked incomplete or signaled ($n)" test "${n:-0}" -ge 1
else
	not_ok "scancel: the killed processes are marked incomplete or signaled"
fi

# --- printing: srun on stderr
out=$(as_user srun --lwm2=print -N2 -n2 bash -c 'echo job=$SLURM_JOB_ID; dd if=/dev/zero of=/dev/null bs=1k count=10 2>/dev/null' 2>"$TESTDIR/$TEST_USER/print.err")
err=$(cat "$TESTDIR/$TEST_USER/print.err")
check "srun --lwm2=print: the digest on stderr" grep -qi "duration" <<<"$err"
check "srun --lwm2=print: nothing on stdout but the tasks' output" \
	test "$(grep -vc '^job=' <<<"$out")" -eq 0
job=$(job_of "$out")
copy=$(find "$SPOOL/print/$job" -type f -name '*.json' 2>/dev/null | head -n 1)
is "$(stat -c '%U %a' "$SPOOL/print/$job" 2>&1)" "root 755" "srun --lwm2=print: the print directory is root's"
is "$(stat -c '%U' "$copy" 2>&1)" root "srun --lwm2=print: the copies are root's"
check "srun --lwm2=print: the user can read its copy" runuser -u "$TEST_USER" -- test -r "$copy"
check "srun --lwm2=print: the user cannot write its copy" \
	bash -c "! runuser -u $TEST_USER -- bash -c 'echo x >>\"\$1\"' _ '$copy' 2>/dev/null"
check "srun --lwm2=print: the user cannot put a file into the spool" \
	bash -c "! runuser -u $TEST_USER -- bash -c 'head -c 1000000 /dev/zero >\"\$1/fill\"' _ '$SPOOL/print/$job' 2>/dev/null"
check "srun --lwm2=print: $OTHER_USER cannot read the copy" \
	bash -c "! runuser -u $OTHER_USER -- cat '$copy' >/dev/null 2>&1"
[ -n "$err" ] && diag "$(head -n 12 <<<"$err")"

# --- printing: the job digest at the end of a batch job's output
cat >"$TESTDIR/$TEST_USER/print.sh" <<'SH'
#!/bin/bash
#SBATCH -N2 -n2 -o print-%j.out
echo "script ran"
srun bash -c 'echo task $SLURM_PROCID'
SH
chown "$TEST_USER" "$TESTDIR/$TEST_USER/print.sh"
job=$(submit_batch "$TESTDIR/$TEST_USER/print.sh" --lwm2=print)
is "$(wait_job "$job" 60)" COMPLETED "sbatch --lwm2=print: job $job COMPLETED"
out=$(cat "$TESTDIR/$TEST_USER/print-$job.out" 2>&1)
check "sbatch --lwm2=print: the script's output comes first" grep -q "script ran" <<<"$out"
check "sbatch --lwm2=print: the job digest at the end of the output file" \
	grep -qi "duration" <<<"$(sed -n '/script ran/,$p' <<<"$out")"
is "$(stat -c %U "$TESTDIR/$TEST_USER/print-$job.out")" "$TEST_USER" \
	"sbatch --lwm2=print: the output file is still the user's"

# --- time added at step end, from slurmd's log
# (this test's jobs only: other tests on the cluster plant hostile cases)
ms=$(slurmd_logs | sed -n 's/.*lwm2: step end: job \([0-9]*\) step [0-9]* node record done in \([0-9.]*\) ms/\1 \2/p' |
	awk -v f="$first_job" '$1 >= f { print $2 }' | sort -n | tail -n 1)
diag "longest step end (merge, sign, write) seen in this test: ${ms:-?} ms"
# The speed target (50 ms) is the bench's (make bench, "step end" row);
# here only what must hold on any machine under any load: step end is
# bounded, never waiting on anything (the merge's own limit is 500 ms).
check "step end bounded: at most 1 s (${ms:-?} ms)" awk -v m="${ms:-9999}" 'BEGIN { exit !(m <= 1000) }'

done_testing
