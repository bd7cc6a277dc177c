#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The job shapes users write, each run twice side by side: without lwm2
# (the site's default here is off) and with the bare --lwm2 on the
# allocation.  For each: the application ran with the same output and
# exit status both times; every step was measured with --lwm2 and none
# without; the job's digest holds every step accounting has.  Shapes: srun
# in a loop of many steps, steps in the background, srun --overlap, steps
# that fail and are killed (a task that kills itself says nothing: Slurm
# may drop a dying task's last output, with or without lwm2), a job array, a dependency chain, mpirun
# inside a batch job, --multi-prog, a heterogeneous job, an interactive
# salloc with steps, sbatch --wrap, and a step that starts processes lwm2
# cannot measure (a command run without LD_PRELOAD, a static executable),
# which the digest counts among the processes, with why.
set -uo pipefail

# shellcheck source=tests/integration/forms-lib.sh
. "$(dirname "$0")/forms-lib.sh"

# The backfill scheduler alone starts a heterogeneous job: every second
# here (a site's default is every 30 s), so that the het shape does not
# wait for it twice.
JOBCOMP_EXTRA_CONF="SchedulerParameters=bf_interval=1"
forms_setup
LOOP_STEPS=${LWM2_SHAPES_LOOP_STEPS:-20}

# An MPI program for mpirun, where Open MPI is installed.
have_mpi=0
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
	cat >"$U/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, sum = 0, one = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d sum %d\n", rank, size, sum);
	MPI_Finalize();
	return 0;
}
C
	mpicc.openmpi -o "$U/hello" "$U/hello.c" 2>"$U/hello.err" && have_mpi=1
fi

# A static executable, where the host can link one: the loader never runs
# for it, so no LD_PRELOAD reaches it.
have_static=0
cc -static -o "$U/static-echo" "$LWM2_TOP/tests/containers/static-echo.c" 2>"$U/static.err" &&
	have_static=1

# The shapes' batch scripts; each prints what the application does.
script() {
	{
		echo '#!/bin/bash'
		cat
	} >"$U/$1.sh"
}
script loop <<EOF
#SBATCH -N1 -n1
for i in \$(seq 1 $LOOP_STEPS); do srun -n1 bash -c 'echo loop \$0' "\$i"; done
EOF
script background <<'EOF'
#SBATCH -N1 -n2
srun -n1 --exact bash -c 'echo one' &
srun -n1 --exact bash -c 'echo two' &
wait
echo "both done"
EOF
# (a step takes all of the job's memory unless it says otherwise)
script overlap <<'EOF'
#SBATCH -N1 -n1
srun -n1 --mem=100M bash -c 'sleep 2; echo holding' &
sleep 0.5
srun --overlap -n1 --mem=100M bash -c 'echo overlapping'
wait
EOF
script exits <<'EOF'
#SBATCH -N1 -n1
srun -n1 bash -c 'echo failing; exit 3'
echo "srun rc=$?"
srun -n1 bash -c 'kill -TERM $$'
echo "srun rc=$?"
exit 5
EOF
script array <<'EOF'
#SBATCH -N1 -n1
srun bash -c 'echo task $SLURM_ARRAY_TASK_ID'
EOF
script first <<'EOF'
#SBATCH -N1 -n1
srun bash -c 'echo first'
EOF
script second <<'EOF'
#SBATCH -N1 -n1
srun bash -c 'echo second'
EOF
script mpirun <<EOF
#SBATCH -N2 -n2
mpirun.openmpi -np 2 $U/hello
EOF
script multiprog <<'EOF'
#SBATCH -N1 -n2
printf '0 bash -c "echo zero"\n1 bash -c "echo one"\n' >multi-$SLURM_JOB_ID.conf
srun -n2 --multi-prog multi-$SLURM_JOB_ID.conf
EOF
script unmeasured <<EOF
#SBATCH -N1 -n1
srun -n1 bash -c 'env -u LD_PRELOAD dd if=/dev/zero of=/dev/null bs=1k count=4 2>/dev/null &&
	echo dd done; [ ! -x $U/static-echo ] || $U/static-echo /dev/null 100'
EOF
script het <<'EOF'
#SBATCH -n1
#SBATCH hetjob
#SBATCH -n1
srun --het-group=0,1 bash -c 'echo both'
srun --het-group=1 bash -c 'echo second component'
EOF
chown -R "$TEST_USER" "$U"

SHAPES=(loop background overlap exits array dependency mpirun multiprog het salloc wrap unmeasured)
declare -A jobs=() # SHAPE/VARIANT: the job ids
run_shape() {
	local shape=$1 variant=$2 opt=() a
	[ "$variant" = with ] && opt=(--lwm2)
	case $shape in
	array)
		a=$(sbatch_as "${opt[@]}" --array=1-3 -o "$shape-$variant-%A_%a.out" "$shape.sh") &&
			jobs[$shape/$variant]="${a}_1 ${a}_2 ${a}_3"
		;;
	dependency)
		a=$(sbatch_as "${opt[@]}" -o "$shape-$variant-%j.out" first.sh) &&
			jobs[$shape/$variant]="$a $(sbatch_as "${opt[@]}" --dependency=afterok:"$a" \
				-o "$shape-$variant-%j.out" second.sh)"
		;;
	mpirun)
		[ "$have_mpi" = 1 ] && jobs[$shape/$variant]=$(sbatch_as "${opt[@]}" -o "$shape-$variant-%j.out" "$shape.sh")
		;;
	wrap)
		jobs[$shape/$variant]=$(sbatch_as "${opt[@]}" -N1 -n1 -o "$shape-$variant-%j.out" \
			--wrap "srun bash -c 'echo wrapped'")
		;;
	salloc) ;; # started before them, below
	*)
		jobs[$shape/$variant]=$(sbatch_as "${opt[@]}" -o "$shape-$variant-%j.out" "$shape.sh")
		;;
	esac
}
# An interactive salloc: the user's shell reads the steps typed into it
# (each srun's input from /dev/null, as a terminal's user would not type
# ahead: srun would take the rest of the shell's input for its task),
# started before the batch jobs so that it does not queue behind them.
salloc_pids=()
for variant in without with; do
	opt=()
	[ "$variant" = with ] && opt=(--lwm2)
	printf 'srun -n1 bash -c "echo typed one" </dev/null\nsrun -n1 bash -c "echo typed two" </dev/null\nexit 4\n' |
		as_user timeout 60 salloc -N1 -n1 "${opt[@]}" /bin/bash >"$U/salloc-$variant.out" 2>&1 &
	salloc_pids+=($!)
done
for shape in "${SHAPES[@]}"; do
	for variant in without with; do
		run_shape "$shape" "$variant"
	done
done
i=0
for variant in without with; do
	wait "${salloc_pids[$i]}"
	echo "exit $?" >>"$U/salloc-$variant.out"
	jobs[salloc/$variant]=$(sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p' "$U/salloc-$variant.out" | head -n 1)
	i=$((i + 1))
done

# outcome SHAPE VARIANT: what the application did, whatever the job ids
# (in Slurm's messages) and nodes: its output lines (sorted: steps side by
# side print in any order) and each job's state and exit code.  srun's
# notes that a step waited for the one before to release its CPUs come
# and go with timing.
outcome() {
	local j
	for j in ${jobs[$1/$2]:-}; do
		if [ "$1" = salloc ]; then
			grep -v '^salloc: ' "$U/salloc-$2.out"
			continue
		fi
		wait_job "$j" 60 >/dev/null
		cat "$U/$1-$2-$j.out" 2>/dev/null
		echo "state $(sacct_field "$j" State) exit $(sacct_field "$j" ExitCode)"
	done | grep -vE '^srun: (Job [0-9]+ step creation temporarily disabled|Step created for)' |
		sed -E 's/\bn[0-9]+\b/NODE/g; s/StepId=[0-9]+/StepId=JOB/g' | sort
}

# job_ids SHAPE VARIANT: the jobs whose steps the shape ran (an array's
# tasks and a heterogeneous job's components each are a job of their own).
job_ids() {
	local j
	for j in ${jobs[$1/$2]:-}; do
		sacct -n -P -X -j "$j" -o JobIDRaw 2>/dev/null
	done | sort -un
}

declare -A outcomes=() # SHAPE/VARIANT: outcome's text, read once
for shape in "${SHAPES[@]}"; do
	if [ "$shape" = mpirun ] && [ "$have_mpi" != 1 ]; then
		skip_because "mpirun inside a batch job" "Open MPI's mpicc and mpirun are not installed"
		continue
	fi
	outcomes[$shape/without]=$(outcome "$shape" without)
	outcomes[$shape/with]=$(outcome "$shape" with)
	without=${outcomes[$shape/without]} with=${outcomes[$shape/with]}
	if [ -n "$with" ] && [ "$with" = "$without" ]; then
		ok "$shape: the same output and exit status with --lwm2 as without"
	else
		not_ok "$shape: the same output and exit status with --lwm2 as without"
		diag "without:" "$without" "with --lwm2:" "$with"
	fi
	# Every step of every job measured with --lwm2, none without.
	unmeasured="" measured="" counted=1 nsteps=0
	for j in $(job_ids "$shape" with); do
		steps=$(sacct_steps "$j")
		for s in $steps; do
			nsteps=$((nsteps + 1))
			[ "$(node_records "$j" "$s")" -ge 1 ] || unmeasured="$unmeasured $j.$s"
		done
		got=$(digest_steps "$j" "$steps")
		[ "$got" = "$steps" ] || {
			counted=0
			diag "job $j: accounting has steps '$steps', its digest '$got'"
		}
	done
	for j in $(job_ids "$shape" without); do
		[ -e "$SPOOL/$j" ] && measured="$measured $j"
	done
	if [ -z "$unmeasured" ] && [ -z "$measured" ] && [ "$nsteps" -gt 0 ]; then
		ok "$shape: all $nsteps steps measured with --lwm2, none without"
	else
		not_ok "$shape: all $nsteps steps measured with --lwm2, none without"
		diag "not measured with --lwm2:${unmeasured:- none}; measured without:${measured:- none}"
	fi
	check "$shape: the digest counts every step ($nsteps)" test "$counted" = 1 -a "$nsteps" -gt 0
done

# The shapes that promise more than the same output.
is "$(grep -c '^loop ' <<<"${outcomes[loop/with]}")" "$LOOP_STEPS" "loop: all $LOOP_STEPS steps ran"
is "$(grep -c '^srun rc=' <<<"${outcomes[exits/with]}")" 2 "exits: srun's exit status reached the script"
is "$(sed -n 's/^srun rc=//p' <<<"${outcomes[exits/with]}" | tr '\n' ' ')" "143 3 " \
	"exits: srun returned the task's exit code (3) and signal (128+15) under --lwm2"
is "$(tr '\n' ' ' <<<"${outcomes[salloc/with]}")" "exit 4 typed one typed two " \
	"salloc: both typed steps ran under --lwm2 and the shell's exit status came back"
read -r a b <<<"${jobs[dependency/with]:-}"
if [ -n "${b:-}" ]; then
	check "dependency: the second job started after the first ended" test \
		"$(date -d "$(sacct_field "$b" Start)" +%s)" -ge "$(date -d "$(sacct_field "$a" End)" +%s)"
else
	not_ok "dependency: the second job started after the first ended"
fi
if [ "$have_mpi" = 1 ]; then
	is "$(grep -c '^rank [01] of 2 sum 2$' <<<"${outcomes[mpirun/with]}")" 2 \
		"mpirun: both ranks ran under --lwm2 and reduced"
fi
is "$(job_ids het with | grep -c .)" 2 "het: two components, each a job with a digest of its own"

# The processes lwm2 could not measure: counted by the shell (and env)
# that started them, in the digest's process total and by reason, in the
# JSON log, the text digest and the compact form in AdminComment.
j=${jobs[unmeasured/with]:-0}
if [ "$have_static" = 1 ]; then
	want="{'no_preload': 1, 'static': 1}" want_text="2 process(es) started unmeasured (no_preload 1, static 1)"
else
	want="{'no_preload': 1}" want_text="1 process(es) started unmeasured (no_preload 1)"
	diag "no static executable: cc -static failed: $(head -n 3 "$U/static.err")"
fi
digest_steps "$j" "$(sacct_steps "$j")" >/dev/null
is "$(log_line "$j" "l['digest']['scope'].get('unmeasured')")" "$want" \
	"unmeasured: the digest says how many processes started unmeasured, and why"
is "$(log_line "$j" "l['digest']['scope']['processes'] > l['digest']['scope']['unmeasured_processes'] == $((1 + have_static))")" \
	True "unmeasured: they are in the digest's process total"
text=$(digest_as -j "$j")
check "unmeasured: the text digest says how many and why" grep -qF "$want_text" <<<"$text"
wait_digest "$j" 60
ac=$(sacct -n -X -P -j "$j" -o AdminComment%65000)
is "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1].split("LWM2:", 1)[1])["scope"].get("unmeasured"))' "$ac" 2>&1)" \
	"$want" "unmeasured: and so does the compact form in AdminComment"

done_testing
