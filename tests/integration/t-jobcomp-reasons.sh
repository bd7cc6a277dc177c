#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 says what happened to a job without node records: a full
# spool (ENOSPC), a read-only spool (EROFS), a slurmstepd killed before it
# wrote the record; not "lwm2 was off".  The reason is in the log line, in
# AdminComment and in `lwm2 digest`.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

jobcomp_setup "VerifyWindow=0"
plan 8

# wait_reason JOB: the job's reason once its line is in the log (60 s).
wait_reason() {
	local i r
	for ((i = 0; i < 300; i++)); do
		r=$(log_line "$1" "l.get('reason', 'none')" 2>/dev/null)
		if [ -n "$r" ] && [ "$r" != NO-LINE ]; then
			echo "$r"
			return 0
		fi
		sleep 0.2
	done
	echo "no log line"
}

job_of() {
	sed -n 's/^job=//p' <<<"$JOB_OUT" | head -n 1
}

# --- slurmstepd killed while the step runs
as_user srun -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID; exec sleep 47' \
	>"$TESTDIR/$TEST_USER/killed.out" 2>&1 &
srun_pid=$!
stepd=
for i in $(seq 1 150); do
	kjob=$(sed -n 's/^job=//p' "$TESTDIR/$TEST_USER/killed.out" 2>/dev/null | head -n 1)
	if [ -n "$kjob" ]; then
		stepd=$(pgrep -f "^slurmstepd: \[$kjob\.0\]" | head -n 1)
		[ -n "$stepd" ] && break
	fi
	sleep 0.2
done
if [ -n "$stepd" ]; then
	tasks=$(pgrep -P "$stepd" | tr '\n' ' ')
	check "slurmstepd of step $kjob.0 killed" kill -KILL "$stepd"
	# the tasks it leaves behind, and the job, go too
	for t in $tasks; do kill -KILL "$t" 2>/dev/null; done
	scancel "$kjob"
	r=$(wait_reason "$kjob")
	case $r in *"step 0 on n"?": step ended without its node record"*) ok "reason: step ended without its node record" ;; *) not_ok "reason: step ended without its node record" && diag "$r" ;; esac
else
	not_ok "slurmstepd of the step found and killed"
	not_ok "reason: step ended without its node record"
	[ -n "$kjob" ] && scancel "$kjob"
fi
kill "$srun_pid" 2>/dev/null
wait "$srun_pid" 2>/dev/null

# --- the spool is full, or read-only: a small file system of its own
mnt_ok=0
if mount -t tmpfs -o size=512k,mode=755 lwm2-spool-test "$SPOOL" 2>/dev/null; then
	mnt_ok=1
	at_exit 'umount "$SPOOL" 2>/dev/null'
fi
if [ "$mnt_ok" -eq 1 ]; then
	dd if=/dev/zero of="$SPOOL/fill" bs=4k 2>/dev/null
	run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
	fjob=$(job_of)
	r=$(wait_reason "$fjob")
	case $r in *"node record could not be written: No space left on device (ENOSPC)"*) ok "full spool: reason ENOSPC" ;; *) not_ok "full spool: reason ENOSPC" && diag "$r" ;; esac
	wait_digest "$fjob" 30
	check "and AdminComment says so" \
		bash -c "sacct -n -X -P -j '$fjob' -o AdminComment%60000 | grep -q 'ENOSPC'"
	err=$(digest_as -j "$fjob" 2>&1 >/dev/null)
	case $err in *"ENOSPC"*) ok "lwm2 digest says why" ;; *) not_ok "lwm2 digest says why" && diag "$err" ;; esac

	rm -f "$SPOOL/fill"
	mount -o remount,ro "$SPOOL"
	run_job -N1 -n1 bash -c 'echo job=$SLURM_JOB_ID'
	rjob=$(job_of)
	r=$(wait_reason "$rjob")
	case $r in *"read-only (EROFS)"*) ok "read-only spool: reason EROFS" ;; *) not_ok "read-only spool: reason EROFS" && diag "$r" ;; esac
	case $r in *"lwm2 was off"*) not_ok "not: lwm2 was off" ;; *) ok "not: lwm2 was off" ;; esac
	umount "$SPOOL"
else
	for i in 1 2 3 4 5; do skip "cannot mount a tmpfs on the spool here"; done
fi

# --- and lwm2 off for a job still says so
run_job -N1 -n1 --lwm2=off bash -c 'echo job=$SLURM_JOB_ID'
ojob=$(job_of)
r=$(wait_reason "$ojob")
case $r in *"lwm2 was off for this job"*) ok "lwm2 off: that reason" ;; *) not_ok "lwm2 off: that reason" && diag "$r" ;; esac

done_testing
