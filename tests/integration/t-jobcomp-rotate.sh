#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The JSON-lines log under logrotate, as the Debian package ships it
# (debian/lwm2.logrotate, its path set to this cluster's
# log): a job, a rotation, a job, a rotation (the first rotated file now
# compressed), a job.  The writer (jobcomp/lwm2 in slurmctld) makes a new
# log after each rotation, owned as the old one; the rotated set holds
# each job exactly once, in time order, and every command reads it as one
# log.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v logrotate >/dev/null || PATH=$PATH:/usr/sbin
command -v logrotate >/dev/null || skip_all "logrotate not installed (contrib/install-deps.sh)"
shipped=$LWM2_TOP/debian/lwm2.logrotate
[ -f "$shipped" ] || skip_all "no $shipped"

jobcomp_setup
plan 13

# The shipped file with this cluster's log in place of the default path;
# a state file of its own, so the machine's logrotate state is untouched.
conf=$TESTDIR/logrotate.conf
sed "s|^/var/log/slurm/lwm2-digests.jsonl |$JCLOG |" "$shipped" >"$conf"
grep -q "^$JCLOG {" "$conf" || bail_out "the shipped configuration names no log path to replace"
rotate() {
	logrotate -f -s "$TESTDIR/logrotate.state" "$conf" 2>&1
}

# logged JOB: the job's line is somewhere in the rotated set (60 s).
logged() {
	local i
	for ((i = 0; i < 120; i++)); do
		[ "$("$LWM2" digest --file "$JCLOG*" -j "$1" -p -n -o JobIDRaw 2>/dev/null)" = "$1" ] &&
			return 0
		sleep 0.5
	done
	return 1
}

one_job() {
	local id
	# shellcheck disable=SC2016 # the job's own variable
	run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID' || return 1
	id=$(sed -n 's/^job=//p' <<<"$JOB_OUT")
	[ -n "$id" ] || return 1
	wait_job "$id" 60 >/dev/null || return 1
	logged "$id" || return 1
	echo "$id"
}

a=$(one_job) || a=0
check "job $a: its line in the log" test "$a" -gt 0
owner=$(stat -c %U:%G "$JCLOG" 2>/dev/null)

out=$(rotate)
is "$?" 0 "first rotation: logrotate exits 0" || diag "$out"
check "first rotation: the log moved to .1, not yet compressed (delaycompress)" \
	bash -c "test -f '$JCLOG.1' && test ! -e '$JCLOG' && ! gzip -t '$JCLOG.1' 2>/dev/null"

b=$(one_job) || b=0
check "job $b after the rotation: a new log holds its line" \
	bash -c "test -f '$JCLOG' && grep -q '\"job_id\":${b}[,}]' '$JCLOG'"
is "$(stat -c %U:%G "$JCLOG" 2>/dev/null)" "$owner" "the new log has the old one's owner ($owner)"

out=$(rotate)
is "$?" 0 "second rotation: logrotate exits 0" || diag "$out"
check "second rotation: the first rotated file is now gzip" gzip -t "$JCLOG.2.gz"

c=$(one_job) || c=0
check "job $c: its line in the new log" grep -q "\"job_id\":${c}[,}]" "$JCLOG"

# The set: three files, each job exactly once, oldest first.
is "$(compgen -G "$JCLOG*" | wc -l | tr -d ' ')" 3 "three files: .2.gz, .1 and the log"
out=$("$LWM2" digest --file "$JCLOG*" -a -S @1 -p -n -o JobIDRaw 2>&1)
is "$(echo "$out" | tr '\n' ' ')" "$a $b $c " "lwm2 digest over the set: each job once, in time order"
n=0
for f in "$JCLOG.2.gz" "$JCLOG.1" "$JCLOG"; do
	n=$((n + $(gzip -cdf "$f" | grep -c '"job_id"')))
done
is "$n" 3 "three lines in all: none lost, none doubled"
out=$("$LWM2" stats --file "$JCLOG*" --json 2>&1)
check "lwm2 stats over the set: 3 lines, none skipped" grep -q '"lines":3,"skipped_lines":0}' <<<"$out" ||
	diag "$out"
is "$("$LWM2" digest --file "$JCLOG*" -j "$a" -p -n -o JobIDRaw,Status 2>&1)" "$a|ok" \
	"the first job's digest read from the compressed file"

done_testing
