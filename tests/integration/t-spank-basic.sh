#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# spank_lwm2.so on the private cluster, jobs of the unprivileged test user:
# injection into srun, sbatch (batch step and the steps inside) and salloc
# steps; the user's LD_PRELOAD kept and ours listed once; one node record
# per node per step in the spool; step directories gone afterwards;
# --lwm2=off leaves no trace; invalid values refused before submission;
# srun --help lists the options.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

spank_setup
LIB=$LIBDIR/liblwm2.so
USERLIB=/lib/x86_64-linux-gnu/libm.so.6
[ -f "$USERLIB" ] || USERLIB=$(find /lib /usr/lib -name 'libm.so.6' | head -n 1)

# A task prints its environment as key=value lines, one per variable we set.
probe='echo "job=$SLURM_JOB_ID step=$SLURM_STEP_ID node=$SLURMD_NODENAME LD_PRELOAD=${LD_PRELOAD:-} LWM2_DIR=${LWM2_DIR:-} LWM2_MODE=${LWM2_MODE:-} LWM2_JOB_ID=${LWM2_JOB_ID:-} LWM2_STEP_ID=${LWM2_STEP_ID:-} LWM2_SLICE=${LWM2_SLICE:-} nlwm2=$(env | grep -cE "^(LWM2_(MODE|DIR|SLICE|EVENTS|SAMPLE_HZ|JOB_ID|STEP_ID)|CUDA_INJECTION64_PATH)=")"; echo data 2>/dev/null >"$LWM2_DIR/../probe.$$" || true'

# --- srun, two nodes
run_job -N2 -n4 bash -c "$probe"
out=$JOB_OUT
job=$(job_of "$out")
is "$(grep -c "LD_PRELOAD=$LIB " <<<"$out")" 4 "srun: all 4 tasks have liblwm2.so in LD_PRELOAD"
is "$(grep -c "LWM2_MODE=on " <<<"$out")" 4 "srun: LWM2_MODE=on in every task"
is "$(grep -c "LWM2_DIR=$BASEDIR/$job.0.n[12] " <<<"$out")" 4 \
	"srun: LWM2_DIR is the per-step, per-node directory"
is "$(grep -c "LWM2_JOB_ID=$job LWM2_STEP_ID=0 LWM2_SLICE=60 " <<<"$out")" 4 \
	"srun: LWM2_JOB_ID, LWM2_STEP_ID and LWM2_SLICE set"
is "$(find "$SPOOL/$job" -name '*.lwm2node' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')" \
	"0.n1.lwm2node 0.n2.lwm2node " "srun: one node record per node in the spool"
f=$SPOOL/$job/0.n1.lwm2node
if [ -f "$f" ]; then
	is "$(node_field "$f" "r['job_id'], r['step_id'], r['node'], r['expected_tasks']")" \
		"($job, 0, 'n1', 2)" "srun: node record of n1 names job, step, node and 2 tasks"
	n=$(node_field "$f" "len(r['procs'])")
	check "srun: node record of n1 holds the processes of its tasks ($n)" test "${n:-0}" -ge 2
	is "$(stat -c '%U %a' "$f")" "root 600" "srun: node record is root's, mode 600"
else
	not_ok "srun: node record of n1 names job, step, node and 2 tasks"
	not_ok "srun: node record of n1 holds the processes of its tasks"
	not_ok "srun: node record is root's, mode 600"
fi
is "$(find "$BASEDIR" -mindepth 1 -maxdepth 1 -name "$job.*" -type d | wc -l)" 0 \
	"srun: step directories removed after the step"
is "$(stat -c '%U %a' "$BASEDIR")" "root 711" "basedir is root's, mode 711"
check "srun: the user could not write into the root-owned basedir" \
	test -z "$(find "$BASEDIR" -maxdepth 1 -name 'probe.*')"

# --- the user's own LD_PRELOAD is kept and ours is listed once
run_job --export=ALL,LD_PRELOAD="$USERLIB" -N1 -n1 bash -c "$probe"
is "$(grep -c "LD_PRELOAD=$LIB:$USERLIB " <<<"$JOB_OUT")" 1 \
	"srun: the user's LD_PRELOAD kept after ours"
run_job --export=ALL,LD_PRELOAD="$LIB:$USERLIB:$LIB" -N1 -n1 bash -c "$probe"
is "$(grep -c "LD_PRELOAD=$LIB:$USERLIB " <<<"$JOB_OUT")" 1 \
	"srun: liblwm2.so already listed (twice) ends up listed once"

# --- --lwm2=off: no trace
run_job --lwm2=off -N2 -n2 bash -c "$probe"
job=$(job_of "$JOB_OUT")
is "$(grep -c "LD_PRELOAD= LWM2_DIR= LWM2_MODE= " <<<"$JOB_OUT")" 2 \
	"--lwm2=off: no LD_PRELOAD, no LWM2_* in the tasks"
is "$(grep -c "nlwm2=0" <<<"$JOB_OUT")" 2 "--lwm2=off: no LWM2_ variable at all"
check "--lwm2=off: nothing in the spool" test ! -e "$SPOOL/$job"
is "$(find "$BASEDIR" -mindepth 1 -maxdepth 1 -name "$job.*" | wc -l)" 0 \
	"--lwm2=off: no step directory"

# --- sbatch: the batch step and the steps inside; an opted-out inner step
cat >"$TESTDIR/$TEST_USER/batch.sh" <<EOF
#!/bin/bash
#SBATCH -N2 -n2 -o batch-%j.out
$probe
echo "batch LD_PRELOAD=\$LD_PRELOAD"
srun -N2 -n2 bash -c '$probe'
srun --lwm2=off -N1 -n1 bash -c '$probe'
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/batch.sh"
job=$(as_user env LD_PRELOAD="$USERLIB" sbatch --parsable "$TESTDIR/$TEST_USER/batch.sh" 2>&1) ||
	diag "sbatch: $job"
job=${job%%;*}
is "$(wait_job "$job" 60)" COMPLETED "sbatch: job $job COMPLETED"
out=$(cat "$TESTDIR/$TEST_USER/batch-$job.out" 2>&1)
is "$(grep -c "LD_PRELOAD=$LIB:$USERLIB LWM2_DIR=$BASEDIR/$job.batch.n1 " <<<"$out")" 1 \
	"sbatch: the batch script is measured, the user's LD_PRELOAD kept"
is "$(grep -c "step=0 .*LD_PRELOAD=$LIB:$USERLIB LWM2_DIR=$BASEDIR/$job.0.n[12] " <<<"$out")" 2 \
	"sbatch: srun inside: ours once, then the user's, the step's own LWM2_DIR"
is "$(grep -c "step=1 .*LD_PRELOAD=$USERLIB LWM2_DIR= LWM2_MODE= .*nlwm2=0" <<<"$out")" 1 \
	"sbatch: srun --lwm2=off inside a measured job: no trace, the user's LD_PRELOAD kept"
is "$(find "$SPOOL/$job" -name '*.lwm2node' -printf '%f\n' 2>/dev/null | sort | tr '\n' ' ')" \
	"0.n1.lwm2node 0.n2.lwm2node 4294967291.n1.lwm2node " \
	"sbatch: node records of the batch step and of step 0 on both nodes, none of step 1"

# --- sbatch --lwm2=off reaches the steps inside
cat >"$TESTDIR/$TEST_USER/off.sh" <<EOF
#!/bin/bash
#SBATCH -N1 -n1 -o off-%j.out
$probe
srun bash -c '$probe'
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/off.sh"
job=$(submit_batch "$TESTDIR/$TEST_USER/off.sh" --lwm2=off)
is "$(wait_job "$job" 60)" COMPLETED "sbatch --lwm2=off: job $job COMPLETED"
out=$(cat "$TESTDIR/$TEST_USER/off-$job.out" 2>&1)
is "$(grep -c "LD_PRELOAD= LWM2_DIR= .*nlwm2=0" <<<"$out")" 2 \
	"sbatch --lwm2=off: neither the batch step nor the srun inside is measured"
check "sbatch --lwm2=off: nothing in the spool" test ! -e "$SPOOL/$job"

# --- salloc: the steps inside are measured
out=$(as_user timeout 60 salloc -N1 -n1 --lwm2-slice=5 srun bash -c "$probe" 2>&1)
is "$(grep -c "LD_PRELOAD=$LIB .*LWM2_SLICE=5 " <<<"$out")" 1 \
	"salloc --lwm2-slice=5: the step inside is measured with 5 s slices"
job=$(job_of "$out")
check "salloc: node record of step 0" test -f "$SPOOL/$job/0.n1.lwm2node"

# --- invalid values are refused before anything is submitted
before=$(sacct -n -X -a -o JobID 2>/dev/null | wc -l)
out=$(as_user srun --lwm2=bogus true 2>&1)
rc=$?
check "srun --lwm2=bogus is refused" test "$rc" -ne 0
check "with a message naming the option" grep -q "lwm2.*--lwm2=bogus.*not one of on, off, light, print" <<<"$out"
out=$(as_user sbatch --lwm2-slice=0 --wrap=true 2>&1)
check "sbatch --lwm2-slice=0 is refused" grep -q "lwm2-slice=0.*out of range" <<<"$out"
out=$(as_user salloc --lwm2-events='a;b' true 2>&1)
check "salloc --lwm2-events='a;b' is refused" grep -q "lwm2-events" <<<"$out"
is "$(sacct -n -X -a -o JobID 2>/dev/null | wc -l)" "$before" "no job was submitted for them"

# --- --help
out=$(as_user srun --help 2>&1)
is "$(grep -cE -- '^ +--lwm2(=MODE|-slice=SECONDS|-events=LIST|-ranks=LIST) +lwm2: .*[a-z)]$' <<<"$out")" 4 \
	"srun --help lists --lwm2, --lwm2-slice, --lwm2-events and --lwm2-ranks, one line each"
is "$(grep -A1 -E -- "^ +--lwm2" <<<"$out" | grep -cE "^ {25,}")" 0 "srun --help: no usage text wraps"
out=$(as_user sbatch --help 2>&1)
is "$(grep -cE -- '--lwm2' <<<"$out")" 4 "sbatch --help lists them too"

done_testing
