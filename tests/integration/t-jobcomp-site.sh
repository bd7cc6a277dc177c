#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The site keeps its own job completion plugin: lwm2-jobend runs from
# EpilogSlurmctld while jobcomp/filetxt, then jobcomp/script, holds the
# JobCompType slot.  The same small jobs run without and with lwm2, and the
# site's records agree field by field (but for job ids, times and node
# names); the digests reach AdminComment and lwm2's own JSON-lines log
# (LogFile=); the epilog returns within milliseconds (slurmctld's log
# says so too); six jobs ending at once each get their digest and one whole
# line in the log; lwm2 failing (broken
# lwm2.conf, a StateDir that cannot be made) costs the site nothing, and
# the site's plugin failing costs lwm2 nothing.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

need_python3
jobend_setup

SITE=$TESTDIR/site
install -d -m 755 "$SITE" "$SITE/script"
FILETXT=$SITE/filetxt.log
SCRIPT=$SITE/jobcomp.sh
# the site's jobcomp/script program: its environment, one file per job;
# exits with what $SITE/script-exit says (default 0)
cat >"$SCRIPT" <<SH
#!/bin/sh
rc=\$(cat $SITE/script-exit 2>/dev/null || echo 0)
[ "\$rc" = 0 ] || exit "\$rc"
env | LC_ALL=C sort >$SITE/script/\$JOBID.env
SH
chmod 755 "$SCRIPT"

# The same small jobs each time, as the test user: prints their ids.
run_jobs() {
	local ids=() j
	# shellcheck disable=SC2016
	run_job_unchecked -N2 -n2 bash -c 'echo "JOB=$SLURM_JOB_ID"'
	j=$(sed -n 's/^JOB=//p' <<<"$JOB_OUT" | head -n 1)
	ids+=("${j:-0}")
	# failing, a batch job without steps: an srun step's exit code reaches
	# the record only when the step's end comes before the job's
	j=$(submit_batch "$TESTDIR/$TEST_USER/fail.sh") || j=0
	ids+=("$j")
	j=$(submit_batch "$TESTDIR/$TEST_USER/batch.sh") || j=0
	ids+=("$j")
	for j in "${ids[@]}"; do
		wait_job "$j" 60 >/dev/null
	done
	echo "${ids[@]}"
}
cat >"$TESTDIR/$TEST_USER/batch.sh" <<'SH'
#!/bin/bash
#SBATCH -N1 -n1 -o /dev/null -J site-batch
echo hello
sleep 1
SH
cat >"$TESTDIR/$TEST_USER/fail.sh" <<'SH'
#!/bin/bash
#SBATCH -N1 -n1 -o /dev/null -J site-fail
exit 3
SH
chown "$TEST_USER" "$TESTDIR/$TEST_USER/batch.sh" "$TESTDIR/$TEST_USER/fail.sh"

# The site's record of a job, one "key=value" a line, without what differs
# by nature between two runs of the same job.  A job that asked for no
# time limit has none, or one year (525600 min, 365-00:00:00) where the
# backfill scheduler started it: the same.
filetxt_record() {
	python3 - "$FILETXT" "$1" <<'PY'
import re, sys
skip = {"JobId", "StartTime", "EndTime", "SubmitTime", "EligibleTime", "NodeList"}
for line in open(sys.argv[1]):
    if not line.startswith("JobId=%s " % sys.argv[2]):
        continue
    for kv in re.findall(r"(\w+)=(\S*)", line):
        if kv == ("TimeLimit", "525600"):
            kv = ("TimeLimit", "UNLIMITED")
        if kv[0] not in skip:
            print("%s=%s" % kv)
PY
}
script_record() {
	[ -f "$SITE/script/$1.env" ] || return 0
	grep -Ev '^(JOBID|START|END|SUBMIT|ELIGIBLE|NODES)=' "$SITE/script/$1.env" |
		sed "s/^LIMIT=365-00:00:00\$/LIMIT=UNLIMITED/"
}

# compare KIND "BASE-IDS" "LWM2-IDS": the site's records, job by job.
compare() {
	local kind=$1 i a b
	read -ra a <<<"$2"
	read -ra b <<<"$3"
	for i in 0 1 2; do
		local ra rb
		ra=$("${kind}_record" "${a[$i]:-0}")
		rb=$("${kind}_record" "${b[$i]:-0}")
		if [ -n "$ra" ] && [ "$ra" = "$rb" ]; then
			ok "$kind: the site's record of job ${b[$i]:-?} equals that of ${a[$i]:-?} without lwm2 ($(wc -l <<<"$ra") fields)"
		else
			not_ok "$kind: the site's record of job ${b[$i]:-?} equals that of ${a[$i]:-?} without lwm2"
			diag "$(diff <(echo "$ra") <(echo "$rb") | head -n 20)"
		fi
	done
}

# digests JOB...: every job's digest in AdminComment and in the log.
digests() {
	local j
	for j in "$@"; do
		check "job $j: the digest reaches AdminComment" wait_digest "$j" 60
		is "$(log_line "$j" "l['job_id'], l['status'] in ('ok', 'no_records', 'partial')")" "($j, True)" \
			"job $j: its line in lwm2's log (LogFile=)"
	done
}

# epilog_times JOB...: the program's wall time in the epilog, per job (us).
epilog_max_us() {
	local max=0 j us
	for j in "$@"; do
		us=$(awk -v j="$j" '$1 == j { print $2 }' "$JOBEND_US" 2>/dev/null | tail -n 1)
		[ -n "$us" ] || return 1
		[ "$us" -gt "$max" ] && max=$us
	done
	echo "$max"
}

# ---------------------------------------------------------------- filetxt

jobend_reconfig "JobCompType=jobcomp/filetxt
JobCompLoc=$FILETXT" "" || bail_out "cluster reconfig with jobcomp/filetxt failed"
base=$(run_jobs)
diag "jobcomp/filetxt without lwm2: jobs $base"
jobend_reconfig "JobCompType=jobcomp/filetxt
JobCompLoc=$FILETXT" "$EPILOG" || bail_out "cluster reconfig with EpilogSlurmctld failed"
ctld_from=$(wc -l <"$CTLD_LOG")
with=$(run_jobs)
diag "jobcomp/filetxt with lwm2-jobend: jobs $with"
# shellcheck disable=SC2086
digests $with
compare filetxt "$base" "$with"

# shellcheck disable=SC2086
if max=$(epilog_max_us $with); then
	diag "lwm2-jobend's wall time in EpilogSlurmctld: $(tr '\n' ' ' <"$JOBEND_US")(job us)"
	# The figure is the diagnostic (tens of ms here); the bound is loose
	# because a loaded machine stretches any wall time, and slurmctld
	# runs the epilog in a thread of its own, holding no lock meanwhile.
	check "the epilog returns fast: lwm2-jobend took at most $((max / 1000)).$(((max % 1000) / 100)) ms (< 1 s)" \
		test "$max" -lt 1000000
else
	not_ok "the epilog returns fast: lwm2-jobend ran for every job"
fi
# slurmctld's own view: the epilog returned at once, no complaint, and the
# jobs left COMPLETING
spans=""
slow=0
for j in $with; do
	ms=$(jobend_epilog_ms "$j")
	spans="$spans $j:$ms"
	case $ms in NONE) slow=1 ;; *) [ "$ms" -lt 1000 ] || slow=1 ;; esac
done
diag "slurmctld's log, epilog start to its return (job:ms):$spans"
check "slurmctld's log: each epilog returned within a second" test "$slow" = 0
check "slurmctld logs no epilog error" \
	bash -c "! tail -n +$ctld_from '$CTLD_LOG' | grep -i epilog | grep -iE 'error|fail|timed out|killed|exit status'"
is "$(squeue -h -t CG -o %i | wc -l)" 0 "no job stays COMPLETING"
# The children read AdminComment back (VerifyDelay) before a job is done.
for _ in $(seq 150); do
	compgen -G "$STATEDIR/*.job" >/dev/null || break
	sleep 0.2
done
check "state dir: nothing left pending" bash -c "! compgen -G '$STATEDIR/*.job' >/dev/null"
check "messages of lwm2-jobend in JobEndLog" grep -q "kept in" "$JOBEND_MSGS"

# several job ends at once: an array's tasks end together, each with its
# own lwm2-jobend child appending to the same log and writing its own
# state file
cat >"$TESTDIR/$TEST_USER/array.sh" <<'SH'
#!/bin/bash
#SBATCH -N1 -n1 -o /dev/null -J site-array --array=1-6
sleep 2
SH
chown "$TEST_USER" "$TESTDIR/$TEST_USER/array.sh"
arr=$(submit_batch "$TESTDIR/$TEST_USER/array.sh") || arr=0
tasks=""
for ((i = 0; i < 150; i++)); do
	tasks=$(sacct -n -X -P -j "$arr" -o JobIDRaw,State 2>/dev/null | awk -F'|' '$2 == "COMPLETED" { print $1 }' | sort -n | tr '\n' ' ')
	[ "$(wc -w <<<"$tasks")" -ge 6 ] && break
	sleep 0.4
done
is "$(wc -w <<<"$tasks")" 6 "array $arr: six tasks ended together"
all=1
for t in $tasks; do
	wait_digest "$t" 60 || all=0
done
check "array $arr: every task's digest reaches AdminComment" test "$all" = 1
is "$(python3 - "$JCLOG" "$tasks" <<'PY'
import json, sys
want = set(sys.argv[2].split())
seen, bad = [], 0
for s in open(sys.argv[1]):
    try:
        l = json.loads(s)
    except ValueError:
        bad += 1
        continue
    if str(l.get("job_id")) in want:
        seen.append(str(l["job_id"]))
print(bad, len(seen), len(set(seen)) == len(want))
PY
)" "0 6 True" "the log: every line whole JSON, each task once"
# six at once on a small machine: told, and held to slurmctld's second
spans=""
slow=0
for t in $tasks; do
	ms=$(jobend_epilog_ms "$t")
	us=$(awk -v j="$t" '$1 == j { print $2 }' "$JOBEND_US" 2>/dev/null | tail -n 1)
	spans="$spans $t:${us:-?}us/${ms}ms"
	case $ms in NONE) slow=1 ;; *) [ "$ms" -lt 1000 ] || slow=1 ;; esac
done
diag "six at once, lwm2-jobend's wall time / slurmctld's epilog span (job:us/ms):$spans"
check "slurmctld's log: each of the six epilogs returned within a second" test "$slow" = 0

# lwm2 failing costs the site nothing: a broken lwm2.conf, then a
# StateDir that cannot be made
cp "$LWM2_CLUSTER_DIR/etc/lwm2.conf" "$JCDIR/lwm2.conf.good"
echo "NoSuchSetting=1" >>"$LWM2_CLUSTER_DIR/etc/lwm2.conf"
broken=$(run_jobs)
compare filetxt "$base" "$broken"
: >"$SITE/not-a-dir"
jobcomp_conf "LogFile=$JCLOG" "JobEndLog=$JOBEND_MSGS" "StateDir=$SITE/not-a-dir/state"
nostate=$(run_jobs)
compare filetxt "$base" "$nostate"
# shellcheck disable=SC2086
check "lwm2-jobend exited (the epilog went on) for every job with the broken setup" \
	eval "epilog_max_us $broken $nostate >/dev/null"
# shellcheck disable=SC2086
set -- $nostate
check "without a StateDir the job is digested from memory" wait_digest "$1" 60
cp "$JCDIR/lwm2.conf.good" "$LWM2_CLUSTER_DIR/etc/lwm2.conf"

# ---------------------------------------------------------------- script

jobend_reconfig "JobCompType=jobcomp/script
JobCompLoc=$SCRIPT" "$EPILOG" || bail_out "cluster reconfig with jobcomp/script failed"
with=$(run_jobs)
diag "jobcomp/script with lwm2-jobend: jobs $with"
# shellcheck disable=SC2086
digests $with
# the site's plugin failing costs lwm2 nothing
echo 1 >"$SITE/script-exit"
failing=$(run_jobs)
rm -f "$SITE/script-exit"
# shellcheck disable=SC2086
set -- $failing
check "the site's script failed (no record of job $1)" test ! -e "$SITE/script/$1.env"
check "job $1: the digest reaches AdminComment all the same" wait_digest "$1" 60
is "$(log_line "$1" "l['job_id']")" "$1" "job $1: its line in lwm2's log all the same"

jobend_reconfig "JobCompType=jobcomp/script
JobCompLoc=$SCRIPT" "" || bail_out "cluster reconfig without EpilogSlurmctld failed"
base=$(run_jobs)
diag "jobcomp/script without lwm2: jobs $base"
compare script "$base" "$with"

done_testing
