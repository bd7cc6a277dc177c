#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Running jobs on the private cluster: `lwm2 top --once --json` on a
# running 2-node MPI job shows both nodes with fresh slices; another user
# cannot see the job; `lwm2 watch` (as root) reports a job deadlocked in
# MPI_Recv within WatchStuckTime and mails its owner through lwm2-mail and
# the machine's MTA, and leaves a busy job alone; and the cost of being
# watched, against the same job unwatched.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
jobcomp_setup

bin=$TESTDIR/bin
mpicc.openmpi -std=gnu11 -O2 -o "$bin/live_prog" "$LWM2_TOP/tests/integration/live_prog.c" ||
	bail_out "mpicc.openmpi cannot build live_prog"
chmod -R a+rX "$bin"
STUCK=4
watchdir=$TESTDIR/watch
watch_conf=("BaseDir=$BASEDIR" "WatchStuckTime=$STUCK" "WatchAction=mail"
	"WatchMailProg=$LWM2_TOP/contrib/lwm2-mail" "WatchStateDir=$watchdir"
	"WatchJobInterval=3600" "WatchUserInterval=0" "WatchGatherTimeout=20")
jobcomp_conf "${watch_conf[@]}"
export LWM2_CONF=$LWM2_CLUSTER_DIR/etc/lwm2.conf
mbox=/var/mail/$TEST_USER

# Open MPI across virtual nodes of one machine (SLURM-NOTES.md); slices
# of one second so that records move within the test's waits.
# (set in the batch script: sbatch --export splits values at commas)
ompi_env="export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_pml=ob1"
submit() {
	as_user sbatch --parsable -N2 -n2 --ntasks-per-node=1 --lwm2-slice=1 -t 2 \
		-o /dev/null --wrap "$ompi_env; srun --mpi=pmix --lwm2-slice=1 $bin/live_prog $*" 2>&1
}

# py EXPR JSON: a value of a JSON document (EXPR over j).
py() {
	python3 -c 'import json,sys; j=json.loads(sys.argv[2]); print(eval(sys.argv[1]))' "$1" "$2" 2>/dev/null
}

stuck=$(submit deadlock)
# The busy job outlives every check below however loaded the machine (it
# is cancelled at the end; the limit, -t 2, is 120 s).
busy=$(submit busy 100)
diag "deadlocked job $stuck, busy job $busy"

# ---------------------------------------------------------------- top
frame="" fresh=""
for ((i = 0; i < 40; i++)); do
	frame=$(as_user env LWM2_CONF="$LWM2_CONF" "$LWM2" top --once --json -j "$stuck" 2>&1)
	# both nodes answered and each has an MPI rank updated < 3 s ago
	fresh=$(py 'sum(1 for n in j["nodes"] if n["answered"] and any(r["rank"] >= 0 and r["age_s"] < 3 for r in n["ranks"]))' "$frame")
	[ "$fresh" = 2 ] && break
	sleep 1
done
is "$fresh" 2 "top --once --json: both nodes answer with MPI ranks' slices under 3 s old"
is "$(py 'len(j["missing"])' "$frame")" 0 "top: no node missing"
is "$(py '"digest" in j and j["digest"]["job"]["job_id"]' "$frame")" "$stuck" "top: the digest of the job so far"
diag "$(as_user env LWM2_CONF="$LWM2_CONF" "$LWM2" top --once -j "$stuck" 2>&1 | head -n 14)"

# ---------------------------------------------------------------- privacy
out=$(as_user -u "$OTHER_USER" env LWM2_CONF="$LWM2_CONF" "$LWM2" top --once --json -j "$stuck" 2>&1)
rc=$?
case $rc:$out in
0:* | *'"ranks"'*) not_ok "another user: lwm2 top refuses" && diag "$out" ;;
*) ok "another user: lwm2 top refuses ($out)" ;;
esac
out=$(as_user -u "$OTHER_USER" timeout 30 srun --jobid="$stuck" --overlap -N1 -n1 true 2>&1)
rc=$?
if [ $rc -ne 0 ]; then ok "another user: Slurm refuses srun --jobid ($out)"; else not_ok "another user: Slurm refuses srun --jobid"; fi

# ---------------------------------------------------------------- watch
first="" flagged="" busy_flagged="" summary=""
t0=$(date +%s)
for ((i = 0; i < 40; i++)); do
	w=$("$LWM2" watch --json 2>&1)
	now=$(date +%s)
	# the first look that found the job's ranks on both nodes
	if [ -z "$first" ] && [ "$(py '[x["nodes_answered"] for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$w")" = 2 ]; then
		first=$now
	fi
	[ "$(py 'any(x.get("flagged") for x in j["jobs"] if x["job_id"] == '"$busy"')' "$w")" = True ] && busy_flagged=1
	if [ "$(py '[x.get("flagged", False) for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$w")" = True ]; then
		flagged=$now
		summary=$w
		break
	fi
	sleep 1
done
# at least WatchStuckTime after the first look, and a few seconds after
# it at most (a look takes a second or two here, records move every second)
for_s=$(py '[x["for_s"] for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$summary")
if [ -n "$flagged" ] && [ -n "$first" ] && [ $((flagged - first)) -le $((STUCK + 8)) ] &&
	[ "${for_s:-0}" -ge "$STUCK" ]; then
	ok "watch: the deadlocked job is reported $((flagged - first)) s after the first look, stuck for $for_s s (WatchStuckTime=$STUCK)"
else
	not_ok "watch: the deadlocked job is reported within WatchStuckTime" && diag "first=$first flagged=$flagged t0=$t0" "$w"
fi
is "$(py '[x["verdict"] for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$summary")" stuck-in-mpi "watch: its verdict is stuck in MPI"
is "$(py '[x["notice"] for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$summary")" mail "watch: the owner is mailed"
if [ -z "$busy_flagged" ] && [ "$(py '[x["judged"] for x in j["jobs"] if x["job_id"] == '"$busy"'][0]' "$summary")" = True ]; then
	ok "watch: the busy job is judged and not reported"
else
	not_ok "watch: the busy job is judged and not reported" && diag "$summary"
fi
diag "$("$LWM2" watch 2>&1)"
w=$("$LWM2" watch --json 2>&1)
is "$(py '[x["notice"] for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$w")" "held (job interval)" \
	"watch: the next run does not notify again (WatchJobInterval)"

# the mail, delivered by the MTA into the owner's mailbox
if [ -x /usr/sbin/exim4 ] && [ -x /usr/bin/mail ]; then
	m=
	for ((i = 0; i < 100; i++)); do
		m=$(python3 - "$mbox" "lwm2: job $stuck looks stuck" <<'PY'
import mailbox, sys
try:
    msgs = list(mailbox.mbox(sys.argv[1], create=False))
except Exception:
    sys.exit(0)
for m in msgs:
    if sys.argv[2] in (m.get("Subject") or ""):
        print("To: " + (m.get("To") or ""))
        print("Subject: " + (m.get("Subject") or ""))
        print((m.get_payload(decode=True) or b"").decode("utf-8", "replace"))
        break
PY
		)
		[ -n "$m" ] && break
		sleep 0.3
	done
	case $m in *"To: $TEST_USER"*"stuck-in-mpi"*) ok "mail: the notice is in $mbox" && diag "$m" ;; *) not_ok "mail: the notice is in $mbox" && diag "$m" ;; esac
else
	skip "exim4 or mail(1) not installed (contrib/install-deps.sh)"
fi
# cancelling, where the site enables it: only WatchCancelAfter after the
# owner's mail
jobcomp_conf "${watch_conf[@]}" "WatchCancel=yes" "WatchCancelAfter=2"
sleep 2
w=$("$LWM2" watch --json 2>&1)
is "$(py '[x.get("cancel") for x in j["jobs"] if x["job_id"] == '"$stuck"'][0]' "$w")" "done" \
	"watch: WatchCancel=yes cancels the stuck job after its notice"
is "$(wait_job "$stuck" 30)" "CANCELLED by 0" "watch: the stuck job ends cancelled"
is "$(squeue -h -j "$busy" -o %T 2>/dev/null)" RUNNING "watch: the busy job runs on"
jobcomp_conf "${watch_conf[@]}"

# the waste mail (WatchWasteMail, off by default): a job that holds a
# core and sleeps gets one mail through WatchMailProg, here a script that
# records its arguments and the mail's body, and never a second; the busy
# job gets none
fakemail=$TESTDIR/fake-mail
cat >"$fakemail" <<'SH'
#!/bin/sh
{
	printf 'ARGS:'
	printf ' %s' "$@"
	printf '\n'
	cat "$LWM2_MAIL_BODY"
	printf '.\n'
} >>"$0.log"
SH
chmod 755 "$fakemail"
# (its own limit, -t 5, outlasts the waits below, 60 s each, on a loaded
# machine; it is cancelled at the end)
sleeper=$(as_user sbatch --parsable -N1 -n1 -t 5 -o /dev/null --wrap "srun sleep 290" 2>&1)
# sleeper_look: a run of `lwm2 watch --json` (w) and the sleeping job's
# line in it (line; None where it is not listed)
sleeper_look() {
	w=$("$LWM2" watch --json 2>&1)
	line=$(py '([x for x in j["jobs"] if x["job_id"] == '"$sleeper"'] + [None])[0]' "$w")
}
# watch lists the job once it runs and its nodes answer: wait for that, so
# that "off" is judged on the job and not on its absence
t0=$SECONDS
while sleeper_look && [ "$line" = None ] && ((SECONDS - t0 < 60)); do
	sleep 0.5
done
[ "$line" != None ] ||
	diag "watch did not list job $sleeper in 60 s: $(squeue -h -j "$sleeper" -o '%T %R' 2>&1)" "$w"
is "$(py '[x.get("waste_mail") for x in j["jobs"] if x["job_id"] == '"$sleeper"'][0]' "$w")" None \
	"waste mail: off by default"
jobcomp_conf "${watch_conf[@]}" "WatchMailProg=$fakemail" "WatchWasteMail=yes" \
	"WatchWasteAfter=0" "WatchWasteEfficiency=10"
# the mail needs a look at every node's processes: on a loaded machine a
# run's gather may miss one, and the next run tries again
wm="" t0=$SECONDS
while ((SECONDS - t0 < 60)); do
	sleeper_look
	wm=$(py '[x.get("waste_mail") for x in j["jobs"] if x["job_id"] == '"$sleeper"'][0]' "$w")
	[ "$wm" = mail ] && break
	sleep 1
done
is "$wm" mail "waste mail: the sleeping job's owner is mailed" ||
	diag "the job's line: $line" "its state: $(squeue -h -j "$sleeper" -o '%T %R %M' 2>&1)"
is "$(grep -c "^ARGS: -s lwm2: job $sleeper uses [0-9.]* % of its cores $TEST_USER\$" "$fakemail.log")" 1 \
	"waste mail: the mail command got the subject and the owner"
check "waste mail: the body gives the efficiency and the threshold" \
	grep -q "of what it holds (the site asks for at least 10 %)" "$fakemail.log"
w=$("$LWM2" watch --json 2>&1)
is "$(py '[x.get("waste_mail") for x in j["jobs"] if x["job_id"] == '"$sleeper"'][0]' "$w")" None \
	"waste mail: the next run sends no second mail"
# (the idle notice of WatchAction=mail may go the same way: not counted)
is "$(grep -c "^ARGS: -s lwm2: job [0-9]* uses " "$fakemail.log")" 1 \
	"waste mail: one in all, none for the busy job"
scancel "$sleeper" 2>/dev/null
jobcomp_conf "${watch_conf[@]}"
scancel "$stuck" "$busy" 2>/dev/null
wait_job "$busy" 30 >/dev/null

# ---------------------------------------------------------------- cost
# The same fixed work unwatched and watched (lwm2 top refreshing every
# 2 s, what a user keeps open): the job's own clock says how long its
# work took.
elapsed() {
	local job i e
	job=$(as_user sbatch --parsable -N2 -n2 --ntasks-per-node=1 -t 2 \
		-o "$TESTDIR/$TEST_USER/cost-$1.out" \
		--lwm2-slice=2 --wrap "$ompi_env; srun --mpi=pmix --lwm2-slice=2 $bin/live_prog work $WORK") || return 1
	if [ "$1" = watched ]; then
		# lwm2 top ends by itself with the job
		(
			for ((i = 0; i < 100; i++)); do
				squeue -h -j "$job" -t R 2>/dev/null | grep -q . && break
				sleep 0.2
			done
			as_user env LWM2_CONF="$LWM2_CONF" timeout 60 "$LWM2" top --json -d 2 -j "$job" \
				>>"$TESTDIR/top-frames.json" 2>&1
		) &
	fi
	wait_job "$job" 60 >/dev/null
	wait
	e=$(sed -n 's/^elapsed=//p' "$TESTDIR/$TEST_USER/cost-$1.out")
	echo "${e:-0}"
}
# Runs of the same job differ by several per cent on a loaded machine:
# two of each, in the order U W W U, and the faster of each kind.  The
# work takes about 8 s on this project's 2-core machines: long enough for
# several of lwm2 top's frames (a step to start on both nodes, then one
# every 2 s) even where it runs twice as fast.
WORK=${LWM2_LIVE_WORK:-7000}
: >"$TESTDIR/top-frames.json" # the frames of both watched runs
u1=$(elapsed unwatched)
w1=$(elapsed watched)
w2=$(elapsed watched)
u2=$(elapsed unwatched)
t_unw=$(python3 -c 'import sys; print(min(float(x) for x in sys.argv[1:]))' "$u1" "$u2")
t_w=$(python3 -c 'import sys; print(min(float(x) for x in sys.argv[1:]))' "$w1" "$w2")
diag "fixed work ($WORK rounds): unwatched $u1 s, $u2 s; watched $w1 s, $w2 s"
ratio=$(python3 -c 'import sys; u, w = map(float, sys.argv[1:]); print("%.3f" % (w / u) if u > 0 and w > 0 else "none")' "$t_unw" "$t_w")
diag "watched / unwatched: $ratio"
# the watched runs were watched: frames with the ranks of both nodes (of
# both runs together: a fast machine does the work in a few frames)
frames=$(python3 - "$TESTDIR/top-frames.json" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        f = json.loads(line)
    except ValueError:
        continue
    if sum(1 for x in f["nodes"] if any(r["rank"] >= 0 for r in x.get("ranks", []))) == 2:
        n += 1
print(n)
PY
)
if [ "${frames:-0}" -ge 2 ]; then
	ok "cost: lwm2 top showed $frames frames with the ranks of both nodes meanwhile"
else
	not_ok "cost: lwm2 top showed frames with the ranks of both nodes meanwhile" && diag "$(tail -c 2000 "$TESTDIR/top-frames.json")"
fi
# How much longer the watched job took is a benchmark's figure
# (bench/run.sh, row lammps_watched: same work, same run, quiet machine),
# not a timed test's: the machine running the suite is shared.  Here: both
# kinds of run finished their work, and the ratio is left in the log.
if [ "$ratio" = none ]; then
	not_ok "cost: both runs finished their work" && diag "elapsed: $u1 $w1 $w2 $u2"
else
	ok "cost: both runs finished their work (watched / unwatched $ratio)"
fi

done_testing
