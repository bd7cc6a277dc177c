#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 when things go wrong: slurmdbd down when a job ends (the
# digest arrives once it is back); the log unwritable and slurmctld
# restarted while digests are queued (nothing lost); PrivateData=jobs
# (another user cannot read the digest); lwm2-mail puts the digest into the
# END mail (sendmail stand-in that records what it was given).
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

mailbox=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-mailbox.XXXXXX")
chmod 777 "$mailbox"
cat >"$mailbox/sendmail" <<EOF
#!/bin/sh
{ printf 'ARGS:'; printf ' %s' "\$@"; printf '\n'; cat; } >"$mailbox/.m.\$\$"
mv "$mailbox/.m.\$\$" "$mailbox/mail.\$\$"
EOF
chmod 755 "$mailbox/sendmail"
# slurmctld gives MailProg no SLURM_CONF, and this cluster's lwm2.conf is
# not in /etc/slurm: a shim tells lwm2-mail where it is, and which lwm2
# reads it (none is in PATH).
cat >"$mailbox/mailprog" <<EOF
#!/bin/sh
LWM2_CONF=\$(cat "$mailbox/conf-path")
LWM2_COMMAND=\$(cat "$mailbox/command-path")
export LWM2_CONF LWM2_COMMAND
exec "$LWM2_TOP/contrib/lwm2-mail" "\$@"
EOF
chmod 755 "$mailbox/mailprog"
JOBCOMP_MAILPROG=$mailbox/mailprog
jobcomp_setup "Mailer=$mailbox/sendmail" "MailWait=90"
echo "$LWM2_CLUSTER_DIR/etc/lwm2.conf" >"$mailbox/conf-path"
echo "$LWM2" >"$mailbox/command-path"
plan 15

ctld_restart_args() {
	cluster_reconfig \
		"LWM2_PLUGSTACK=optional $LIBDIR/spank_lwm2.so lib=$LIBDIR/liblwm2.so basedir=$BASEDIR spool=$SPOOL" \
		"LWM2_PLUGIN_DIR=$TESTDIR/plugins" \
		"LWM2_CLUSTER_DEBUG=debug" \
		"LWM2_CLUSTER_MAILPROG=$JOBCOMP_MAILPROG" \
		"LWM2_CLUSTER_EXTRA_CONF=JobCompType=jobcomp/lwm2
JobCompLoc=$JCLOG" "$@"
}

# --- mail: END mail with the digest in its body
job=$(as_user sbatch --parsable -N2 -n2 --mail-type=END --mail-user="$TEST_USER" -o /dev/null \
	--wrap "srun true" 2>/dev/null) || job=0
is "$(wait_job "$job" 60)" COMPLETED "job $job with --mail-type=END"
for i in $(seq 1 120); do
	compgen -G "$mailbox/mail.*" >/dev/null && break
	sleep 0.5
done
m=$(cat "$mailbox"/mail.* 2>/dev/null)
case $m in *"ARGS: -oi -- $TEST_USER"*) ok "mail sent to the user" ;; *) not_ok "mail sent to the user" && diag "$m" ;; esac
case $m in *"Subject: "*"Job_id=$job"*"Ended"*) ok "subject as slurmctld made it" ;; *) not_ok "subject as slurmctld made it" ;; esac
case $m in *"Job $job, user $TEST_USER"*) ok "body: the job's digest" ;; *) not_ok "body: the job's digest" && diag "$m" ;; esac

# --- slurmdbd down when the job ends
D=$LWM2_CLUSTER_DIR
dbd_pid=$(cat "$D/run/slurmdbd.pid" 2>/dev/null)
kill -TERM "$dbd_pid" 2>/dev/null
for i in $(seq 1 100); do [ -d "/proc/$dbd_pid" ] || break; sleep 0.1; done
run_job -N2 -n2 bash -c 'echo job=$SLURM_JOB_ID'
dbjob=$(sed -n 's/^job=//p' <<<"$JOB_OUT" | head -n 1)
for i in $(seq 1 150); do
	[ "$(log_line "$dbjob" "l['status']")" = ok ] && break
	sleep 0.2
done
is "$(log_line "$dbjob" "l['status']")" ok "slurmdbd down: the log gets the digest of job $dbjob"
check "slurmdbd down: the job is kept in the state dir until accounting has it" \
	in_state "$dbjob"
# The cluster's own slurmdbd: that of LWM2_SLURM_PREFIX where one is set.
sbin=/usr/sbin
[ -n "${LWM2_SLURM_PREFIX:-}" ] && sbin=$LWM2_SLURM_PREFIX/sbin
setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root SLURM_CONF="$D/etc/slurm.conf" \
	LWM2_CLUSTER_DAEMON="$D" "$sbin/slurmdbd" </dev/null >>"$D/log/slurmdbd.out" 2>&1
check "slurmdbd back: the digest reaches AdminComment" wait_digest "$dbjob" 240
for i in $(seq 1 150); do
	in_state "$dbjob" || break
	sleep 0.5
done
check "and the job leaves the state dir" bash -c "! compgen -G '$STATEDIR/$dbjob.*.job' >/dev/null"

# --- the log cannot be written, slurmctld restarts with the digest queued
mv "$JCLOG" "$JCLOG.saved"
mkdir "$JCLOG"
run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
qjob=$(sed -n 's/^job=//p' <<<"$JOB_OUT" | head -n 1)
for i in $(seq 1 150); do
	grep -q "couldn't append the digest of job $qjob" "$CTLD_LOG" && break
	sleep 0.2
done
check "log unwritable: slurmctld says so" grep -q "lwm2: log: couldn't append the digest of job $qjob" "$CTLD_LOG"
check "job $qjob waits in the state dir" in_state "$qjob"
ctld_restart_args || bail_out "slurmctld restart failed"
check "after the restart: pending jobs resumed" grep -q "lwm2: init: resuming pending jobs" "$CTLD_LOG"
rmdir "$JCLOG"
mv "$JCLOG.saved" "$JCLOG"
check "the queued digest reaches AdminComment" wait_digest "$qjob" 120
for i in $(seq 1 100); do
	[ "$(log_line "$qjob" "l['status']")" = ok ] && break
	sleep 0.2
done
is "$(log_line "$qjob" "l['status']")" ok "and the log"

# --- PrivateData=jobs: the owner reads the digest, another user does not
ctld_restart_args LWM2_CLUSTER_PRIVATEDATA=jobs || bail_out "reconfig with PrivateData failed"
is "$(digest_as -j "$qjob" -p -n -o JobID,Status)" "$qjob|ok" "PrivateData=jobs: the owner reads it"
err=$(digest_as -u "$OTHER_USER" -j "$qjob" 2>&1 >/dev/null)
case $err in *"couldn't find job $qjob: no such job in accounting, or PrivateData hides it from you"*)
	ok "PrivateData=jobs: another user cannot" ;;
*) not_ok "PrivateData=jobs: another user cannot" && diag "$err" ;; esac

rm -rf "$mailbox"
done_testing
