#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# With PrivateData=jobs on the private cluster, accounting shows a job to
# its owner and to root but not to another user; without it, to everyone.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"

cluster_up
plan 8

# sacct_as USER JOBID: the job id as that user's sacct reports it.
sacct_as() {
	as_user -u "$1" sacct -n -X -P -j "$2" -o JobID 2>/dev/null | head -n 1
}

if run_job -N1 -n1 printenv SLURM_JOB_ID; then ok "job runs before the change"; else not_ok "job runs before the change"; fi
job=$JOB_OUT
wait_job "$job" 60 >/dev/null
is "$(sacct_as "$OTHER_USER" "$job")" "$job" "without PrivateData another user sees job $job"

if cluster_reconfig LWM2_CLUSTER_PRIVATEDATA=jobs; then
	ok "cluster restarted with PrivateData=jobs"
else
	not_ok "cluster restarted with PrivateData=jobs"
fi
check "slurmdbd.conf has PrivateData=jobs" \
	grep -qx 'PrivateData=jobs' "$LWM2_CLUSTER_DIR/etc/slurmdbd.conf"
if run_job -N1 -n1 printenv SLURM_JOB_ID; then ok "job runs after the change"; else not_ok "job runs after the change"; fi
job=$JOB_OUT
is "$(wait_job "$job" 60)" COMPLETED "job $job COMPLETED"
is "$(sacct_as "$TEST_USER" "$job")" "$job" "the owner sees job $job"
is "$(sacct_as "$OTHER_USER" "$job")" "" "another user does not see job $job"

done_testing
