#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lwm2-mail through a real mail transfer agent: a job with
# --mail-type=END, slurmctld runs lwm2-mail as MailProg, which hands the
# mail with the job's digest to mail(1) (Debian's bsd-mailx) or to
# sendmail directly, and exim4 delivers it into the user's mailbox in
# /var/mail.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

[ -x /usr/sbin/exim4 ] || skip_all "exim4 not installed (contrib/install-deps.sh)"
[ -x /usr/bin/mail ] || skip_all "mail(1) not installed (contrib/install-deps.sh)"
mbox=/var/mail/$TEST_USER

shim=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-mta.XXXXXX")
chmod 755 "$shim"
# slurmctld gives MailProg no SLURM_CONF, and this cluster's lwm2.conf is
# not in /etc/slurm: a shim tells lwm2-mail where it is, and which lwm2
# reads it (none is in PATH).
cat >"$shim/mailprog" <<EOF
#!/bin/sh
LWM2_CONF=\$(cat "$shim/conf-path")
LWM2_COMMAND=\$(cat "$shim/command-path")
export LWM2_CONF LWM2_COMMAND
exec "$LWM2_TOP/contrib/lwm2-mail" "\$@"
EOF
chmod 755 "$shim/mailprog"
JOBCOMP_MAILPROG=$shim/mailprog
jobcomp_setup "MailWait=90" "VerifyWindow=0"
echo "$LWM2_CLUSTER_DIR/etc/lwm2.conf" >"$shim/conf-path"
echo "$LWM2" >"$shim/command-path"
plan 12

# message NAME: the message in the mailbox whose subject names the job
# (the mailbox is shared with everything else on this machine).
message() {
	python3 - "$mbox" "$1" <<'PY'
import mailbox, sys
try:
    box = mailbox.mbox(sys.argv[1], create=False)
    msgs = list(box)
except Exception:
    sys.exit(0)
for m in msgs:
    if sys.argv[2] in (m.get("Subject") or ""):
        body = m.get_payload(decode=True) or b""
        print("To: " + (m.get("To") or ""))
        print("Subject: " + (m.get("Subject") or ""))
        print(body.decode("utf-8", "replace"))
        break
PY
}

# mail_case MAILER: one job, its END mail through MAILER (empty: the default)
mail_case() {
	local what=$1 name job m i
	jobcomp_conf "MailWait=90" "VerifyWindow=0" ${2:+"Mailer=$2"}
	name=mta-$$-$RANDOM
	job=$(as_user sbatch --parsable -N1 -n1 -J "$name" --mail-type=END \
		--mail-user="$TEST_USER" -o /dev/null --wrap "srun true" 2>/dev/null) || job=0
	is "$(wait_job "$job" 60)" COMPLETED "$what: job $job ran"
	for ((i = 0; i < 300; i++)); do
		m=$(message "$name")
		[ -n "$m" ] && break
		sleep 0.2
	done
	case $m in *"Subject: "*"Job_id=$job Name=$name Ended"*) ok "$what: delivered into $mbox" ;; *) not_ok "$what: delivered into $mbox" && diag "$(tail -n 5 /var/log/exim4/mainlog 2>/dev/null)" ;; esac
	case $m in *"To: $TEST_USER"*) ok "$what: to the user" ;; *) not_ok "$what: to the user" && diag "$m" ;; esac
	case $m in *"Job $job, user $TEST_USER"*) ok "$what: the body is the job's digest" ;; *) not_ok "$what: the body is the job's digest" && diag "$m" ;; esac
	case $m in *"Fit (asked for against used)"*"Memory: "*) ok "$what: the digest's fit block" ;; *) not_ok "$what: the digest's fit block" && diag "$m" ;; esac
	case $m in *"lwm2 used "*" s (estimated: "*) ok "$what: lwm2's own cost" ;; *) not_ok "$what: lwm2's own cost" && diag "$m" ;; esac
}

# lwm2.conf is read by lwm2-mail each time: no restart between the cases
mail_case "mail(1), the default Mailer"
mail_case "sendmail" /usr/sbin/sendmail

rm -rf "$shim"
done_testing
