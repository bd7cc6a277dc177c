#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 and another tool that writes the whole AdminComment (as
# jobstats does from EpilogSlurmctld with `sacctmgr modify job ... set
# AdminComment=JS1:...`): right at the job's end, before lwm2 reads the
# field (lwm2 merges its part into it), 2 and 12 s after lwm2's part is in
# (the other tool wipes it, lwm2 puts it back), and between lwm2's read
# and its write (the worker waits there for LWM2_JC_TEST_WRITE_DELAY
# seconds; lwm2 reads the field again before it writes): the field ends up
# with both.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

# the worker waits 4 s between its read and its write (slurmctld gets the
# variable from cluster.sh; not kept for the tests that follow)
export LWM2_JC_TEST_WRITE_DELAY=4
jobcomp_setup "VerifyWindow=40"
unset LWM2_JC_TEST_WRITE_DELAY
plan 13

# w: in the window between lwm2's read and its write
delays=(0 2 12 w)
declare -A job
for d in "${delays[@]}"; do
	run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
	j=$(sed -n 's/^job=//p' <<<"$JOB_OUT" | head -n 1)
	job[$d]=$j
	# sacctmgr of 22.05 keeps the text in lower case, 24.11 as given
	(
		if [ "$d" = w ]; then
			for _ in $(seq 1 240); do
				grep -q "job $j waits [0-9]* s between reading and writing" "$CTLD_LOG" && break
				sleep 0.25
			done
		elif [ "$d" -gt 0 ]; then
			for _ in $(seq 1 240); do
				sacct -n -X -P -j "$j" -o AdminComment%60000 2>/dev/null | grep -q 'LWM2:{' && break
				sleep 0.25
			done
			sleep "$d"
		fi
		sacctmgr -i modify job where jobid="$j" set AdminComment="JS1:delay$d" >/dev/null 2>&1
	) &
done
wait

# both JOB DELAY: the field holds the other tool's text and lwm2's part.
both() {
	local c
	c=$(sacct -n -X -P -j "$1" -o AdminComment%60000 2>/dev/null)
	grep -qi "js1:delay$2" <<<"$c" && grep -q 'LWM2:{' <<<"$c"
}

for d in "${delays[@]}"; do
	for i in $(seq 1 200); do
		both "${job[$d]}" "$d" && break
		sleep 0.25
	done
	check "written $d s after lwm2's part (0: at the end, w: between its read and write): both parts in AdminComment of job ${job[$d]}" \
		both "${job[$d]}" "$d"
done

# They stay so: lwm2 is done with the jobs only after VerifyWindow.
for i in $(seq 1 200); do
	compgen -G "$STATEDIR/*.job" >/dev/null || break
	sleep 0.25
done
check "lwm2 is done with the jobs" bash -c "! compgen -G '$STATEDIR/*.job' >/dev/null"
for d in "${delays[@]}"; do
	check "and job ${job[$d]} keeps both parts" both "${job[$d]}" "$d"
done
for d in "${delays[@]}"; do
	is "$(sacct -n -X -P -j "${job[$d]}" -o AdminComment%60000 | grep -o 'LWM2:{' | wc -l)" 1 \
		"job ${job[$d]}: one LWM2 part"
done

done_testing
