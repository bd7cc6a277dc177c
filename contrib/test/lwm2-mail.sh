#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# lwm2-mail as slurmctld runs it (MailProg -s SUBJECT USER, job variables in
# the environment), with the real `lwm2 digest` reading a jobcomp log and a
# sendmail stand-in that records what it was given.  Run from contrib/ in
# the build tree (needs ../digest/lwm2 and ../digest/mkdigestlog).
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"

here=$(cd "$(dirname "$0")/.." && pwd)
build=$(pwd)
lwm2=$build/../digest/lwm2
mk=$build/../digest/mkdigestlog
if [ ! -x "$lwm2" ] || [ ! -x "$mk" ]; then
	echo "1..0 # SKIP ../digest/lwm2 not built"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-mail.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$mk" 30 1000 >"$tmp/full.jsonl"
head -n 20 "$tmp/full.jsonl" >"$tmp/log.jsonl"

# `lwm2 digest` reading the log instead of accounting
cat >"$tmp/lwm2" <<EOF
#!/bin/sh
exec "$lwm2" "\$@" --file "$tmp/log.jsonl"
EOF
# the mailer: records its arguments and the message
cat >"$tmp/sendmail" <<EOF
#!/bin/sh
{ printf 'ARGS:'; printf ' %s' "\$@"; printf '\n'; cat; } >"$tmp/mail.\$\$"
mv "$tmp/mail.\$\$" "$tmp/sent.\$\$"
EOF
cp "$tmp/sendmail" "$tmp/mail"
chmod +x "$tmp/lwm2" "$tmp/sendmail" "$tmp/mail"

export LWM2_CONF=$tmp/lwm2.conf
conf() {
	printf '%s\n' "LwmCommand=$tmp/lwm2" "MailWait=${wait_s:-3}" "$@" >"$LWM2_CONF"
}

# mailprog TYPE JOB SUBJECT: run lwm2-mail as slurmctld does; waits for the
# mail and leaves it in $tmp/got
mailprog() {
	local type=$1 job=$2 subj=$3 i
	rm -f "$tmp"/sent.* "$tmp/got"
	env -i PATH=/usr/bin:/bin LWM2_CONF="$LWM2_CONF" LWM2_COMMAND="$lwm2" SLURM_JOB_ID="$job" \
		SLURM_JOB_MAIL_TYPE="$type" SLURM_CLUSTER_NAME=lwm2 ${extra_env:-} \
		"$here/lwm2-mail" -s "$subj" alice
	mp_rc=$?
	for ((i = 0; i < 100; i++)); do
		if compgen -G "$tmp/sent.*" >/dev/null; then
			cat "$tmp"/sent.* >"$tmp/got"
			return 0
		fi
		sleep 0.1
	done
	: >"$tmp/got"
}

# --- END: the digest in the body, through a sendmail-style mailer
conf "Mailer=$tmp/sendmail"
mailprog Ended 1004 "Slurm Job_id=1004 Name=x Ended, Run time 00:00:10, COMPLETED, ExitCode 0"
check "END mail: MailProg exits 0" test "$mp_rc" -eq 0
check "END mail sent to the user" grep -q "^ARGS: -oi -- alice$" "$tmp/got"
check "headers: To and the subject as slurmctld made it" \
	grep -q "^Subject: Slurm Job_id=1004 Name=x Ended, Run time 00:00:10, COMPLETED, ExitCode 0$" "$tmp/got"
check "body: the rendered digest" grep -q "^Job 1004, user" "$tmp/got"

# --- mail(1) style
conf "Mailer=$tmp/mail"
mailprog Failed 1005 "Slurm Job_id=1005 Failed"
check "mail(1) style: -s SUBJECT -- USER" grep -q "^ARGS: -s Slurm Job_id=1005 Failed -- alice$" "$tmp/got"
check "FAIL mail has the digest too" grep -q "^Job 1005" "$tmp/got"

# --- other mail types pass through, at once, without a body
t0=$(date +%s%N)
mailprog Began 1006 "Slurm Job_id=1006 Began"
check "BEGIN mail passes through" grep -q "^ARGS: -s Slurm Job_id=1006 Began -- alice$" "$tmp/got"
check "and has no body" test "$(wc -l <"$tmp/got")" -eq 1

# --- a job without digest: the reason
mailprog Ended 1009 "Slurm Job_id=1009 Ended"
check "no digest: the body says so" grep -q "^No lwm2 digest for job 1009:" "$tmp/got"
check "and why" grep -q "lwm2 was off for this job" "$tmp/got"

# --- an array task: this task's digest, not the array's
extra_env="SLURM_ARRAY_JOB_ID=1000 SLURM_ARRAY_TASK_ID=7"
mailprog Ended 1001 "Slurm Array Task Job_id=1000_7 Ended"
extra_env=
check "array task: its own digest" grep -q "^Job 1001" "$tmp/got"
check "array task: no other job's" test "$(grep -c '^Job ' "$tmp/got")" -eq 1

# --- MailDigest=no
conf "Mailer=$tmp/mail" "MailDigest=no"
mailprog Ended 1004 "Slurm Job_id=1004 Ended"
check "MailDigest=no: plain mail" test "$(wc -l <"$tmp/got")" -eq 1

# --- the digest arrives after MailProg has returned
wait_s=20 conf "Mailer=$tmp/mail"
rm -f "$tmp"/sent.*
t0=$(date +%s%N)
env -i PATH=/usr/bin:/bin LWM2_CONF="$LWM2_CONF" LWM2_COMMAND="$lwm2" SLURM_JOB_ID=1022 SLURM_JOB_MAIL_TYPE=Ended \
	"$here/lwm2-mail" -s "Slurm Job_id=1022 Ended" alice
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
check "MailProg returns at once (${ms} ms) while the digest is pending" test "$ms" -lt 2000
sed -n 21,23p "$tmp/full.jsonl" >>"$tmp/log.jsonl"
for ((i = 0; i < 150; i++)); do
	compgen -G "$tmp/sent.*" >/dev/null && break
	sleep 0.1
done
cat "$tmp"/sent.* >"$tmp/got" 2>/dev/null
check "the mail comes once the digest is there, with it" grep -q "^Job 1022" "$tmp/got"

done_testing
