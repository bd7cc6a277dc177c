#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 and another tool that writes the whole AdminComment (as
# jobstats does from EpilogSlurmctld with `sacctmgr modify job ... set
# AdminComment=JS1:...`), 0, 2 and 12 s after the job ended: whatever the
# order, the field ends up with both the other tool's text and lwm2's part.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

jobcomp_setup "VerifyWindow=25"
plan 10

delays=(0 2 12)
declare -A job
for d in "${delays[@]}"; do
	run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
	j=$(sed -n 's/^job=//p' <<<"$JOB_OUT" | head -n 1)
	job[$d]=$j
	# sacctmgr keeps the text in lower case
	(
		sleep "$d"
		sacctmgr -i modify job where jobid="$j" set AdminComment="JS1:delay$d" >/dev/null 2>&1
	) &
done
wait

# both JOB DELAY: the field holds the other tool's text and lwm2's part.
both() {
	local c
	c=$(sacct -n -X -P -j "$1" -o AdminComment%60000 2>/dev/null)
	grep -q "js1:delay$2" <<<"$c" && grep -q 'LWM2:{' <<<"$c"
}

for d in "${delays[@]}"; do
	for i in $(seq 1 200); do
		both "${job[$d]}" "$d" && break
		sleep 0.25
	done
	check "written $d s after the end: both parts in AdminComment of job ${job[$d]}" \
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
