#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Who sees what, with PrivateData=jobs: a job's digest through
# `lwm2 digest` (Slurm accounting) goes to its owner and to a coordinator
# of its account, not to another user of the account; the central
# database beside the log holds every user's jobs, so its file is the
# site administrators' (mode 0640): a user's `lwm2 stats --db` is refused
# with the way to their own jobs, root's reads the job.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v sqlite3 >/dev/null || skip_all "sqlite3 not installed (contrib/install-deps.sh installs it)"
JOBCOMP_SETTINGS=(LWM2_CLUSTER_PRIVATEDATA=jobs)
jobcomp_setup
plan 9

id "$COORD_USER" >/dev/null 2>&1 || bail_out "no user $COORD_USER (tests/cluster/cluster.sh makes it)"
if sacctmgr -i add coordinator account="$LWM2_CLUSTER_ACCOUNT" names="$COORD_USER" >/dev/null 2>&1 ||
	sacctmgr -n -P show user "$COORD_USER" withcoord format=coordinators 2>/dev/null |
	grep -qw "$LWM2_CLUSTER_ACCOUNT"; then
	ok "$COORD_USER coordinates account $LWM2_CLUSTER_ACCOUNT"
else
	not_ok "$COORD_USER coordinates account $LWM2_CLUSTER_ACCOUNT"
fi
at_exit "sacctmgr -i remove coordinator account=$LWM2_CLUSTER_ACCOUNT names=$COORD_USER >/dev/null 2>&1"

run_job -N1 -n1 printenv SLURM_JOB_ID || bail_out "the test user's job did not run"
job=$JOB_OUT
check "job $job has its digest in the log" wait_line "$job"
wait_digest "$job" 60 || diag "job $job: no digest in AdminComment within 60 s"

# sees JOB USER: the JobID column of `lwm2 digest -j JOB` as USER, or
# "none" with its exit status.
sees() {
	local out
	out=$(digest_as -u "$2" -j "$1" -o JobID,Status -n -p 2>/dev/null) || {
		echo "none $?"
		return
	}
	echo "${out%%|*}"
}
is "$(sees "$job" "$TEST_USER")" "$job" "lwm2 digest: the owner sees job $job"
is "$(sees "$job" "$COORD_USER")" "$job" "lwm2 digest: the account's coordinator sees job $job"
is "$(sees "$job" "$OTHER_USER")" "none 1" "lwm2 digest: another user of the account does not (exit 1)"

db=$JCDIR/lwm2.db
for ((i = 0; i < 50; i++)); do
	[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM job WHERE job_id = $job" 2>/dev/null)" = 1 ] && break
	sleep 0.2
done
is "$(stat -c %a "$db" 2>/dev/null)" 640 "the database beside the log: mode 0640"
# The log's directory is root's alone in the test; a site keeps both
# where its administrators reach them: open it up, so that only the
# file's mode decides.
chmod 755 "$JCDIR"
out=$(as_user -u "$OTHER_USER" "$LWM2" stats --db "$db" 2>&1)
rc=$?
is "$rc" 1 "a user's lwm2 stats --db: exit 1"
case $out in
*"Permission denied"*"lwm2 digest"*) ok "and says why and where their own jobs are" ;;
*) not_ok "and says why and where their own jobs are" && diag "$out" ;;
esac
chmod 700 "$JCDIR"
out=$("$LWM2" stats --db "$db" --by user 2>&1)
case $out in
*"$TEST_USER"*) ok "root's lwm2 stats --db reads the test user's jobs" ;;
*) not_ok "root's lwm2 stats --db reads the test user's jobs" && diag "$out" ;;
esac

done_testing
