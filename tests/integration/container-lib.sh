# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the tests of containerized jobs share (t-containers.sh, t-pyxis.sh):
# the same step run as the test user with --lwm2=off and with --lwm2, the
# points that hold them identical, and the measured points checked at the
# end against the jobs' digests.  The caller has run jobcomp_setup and
# sets RUN (a name of this run's, in the jobs' names and the processes'
# command lines), U (the test user's directory), BYTES (what the payload
# writes) and NATIVE_PROCS (the least number of processes a case counts).

# same_file A B DESC: one point, the difference as diagnostics.
same_file() {
	if cmp -s "$1" "$2"; then
		ok "$3"
	else
		not_ok "$3"
		diag "--- without lwm2 (--lwm2=off), +++ with lwm2:"
		diag "$(diff -u "$1" "$2" | tail -n +3 | head -n 20)"
	fi
}

# job_named NAME: the id of the test user's job of that name.
job_named() {
	local i id
	for ((i = 0; i < 25; i++)); do
		id=$(sacct -n -X -P -u "$TEST_USER" -S now-1days --name="$1" -o JobID 2>/dev/null | tail -n 1)
		[ -n "$id" ] && break
		sleep 0.2
	done
	echo "$id"
}

# Processes a case leaves behind: the test user's processes of this run
# (their command line has the run's name).  A sandbox's init (pid 1 in its
# namespace, orphaned when the runtime's process ended; SIGKILL alone
# reaches it) would hold the step's I/O for a minute: orphans are killed as
# soon as they are seen, while the case runs, and whatever is still there a
# moment after it ended too.  Their pids go to $U/KEY.MODE.pids, their
# command lines into the TAP diagnostics.
reap() {
	local p pp
	for p in $(pgrep -u "$TEST_USER" -f -- "$RUN"); do
		pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
		[ "$pp" = 1 ] || [ "${2:-}" = all ] || continue
		# a zombie is dead already, its parent's to reap
		case $(ps -o stat= -p "$p" 2>/dev/null) in Z* | "") continue ;; esac
		# podman's container monitor lives on its own by design.
		[ "$(ps -o comm= -p "$p" 2>/dev/null)" = conmon ] && continue
		diag "$1: left running: $(ps -o pid=,ppid=,args= -p "$p" 2>/dev/null | cut -c1-160)"
		kill -9 "$p" 2>/dev/null
		echo "$p" >>"$U/$1.pids"
	done
}

# watched KEY.MODE CMD...: CMD, with orphans reaped while it runs and
# stragglers after it.
watched() {
	local what=$1 bg i
	shift
	: >"$U/$what.pids"
	"$@" &
	bg=$!
	while kill -0 "$bg" 2>/dev/null; do
		reap "$what"
		sleep 0.2
	done
	wait "$bg"
	for ((i = 0; i < 10; i++)); do
		pgrep -u "$TEST_USER" -f -- "$RUN" >/dev/null || break
		sleep 0.2
	done
	reap "$what" all
	sort -u "$U/$what.pids" | wc -l | tr -d ' ' >"$U/$what.left"
}

declare -A JOB=()
# step_pair KEY CMD...: the step twice as the test user on n1, with
# --lwm2=off and with --lwm2; the task's stdout and stderr (srun -o, -e),
# srun's exit status and wall time (ms) in $U/KEY.{off,on}.{out,err,rc,ms};
# the measured job's id in JOB[KEY].  srun's own messages ("task 0:
# Exited with exit code 3") are not compared: its I/O thread orders them
# among the task's lines as it happens.
step_pair() {
	local key=$1 m opt
	shift
	for m in off on; do
		opt=--lwm2=off
		[ "$m" = on ] && opt=--lwm2
		# shellcheck disable=SC2016 # expanded by the user's shell
		watched "$key.$m" as_user bash -c 't0=$(date +%s%N)
			timeout 120 srun -o "$0.out" -e "$0.err" "$@" 2>"$0.srun"; echo $? >"$0.rc"
			echo $((($(date +%s%N) - t0) / 1000000)) >"$0.ms"' \
			"$U/$key.$m" "$opt" -J "ctr.$RUN.$key.$m" -w n1 -N1 -n1 "$@"
	done
	JOB[$key]=$(job_named "ctr.$RUN.$key.on")
}

# batch_pair KEY SCRIPT-BODY: the same as a batch job (sbatch --lwm2=off,
# sbatch --lwm2), the exit code as sacct gives it.
batch_pair() {
	local key=$1 body=$2 m opt job t0
	printf '#!/bin/sh\n%s\n' "$body" >"$U/$key.sh"
	chown "$TEST_USER" "$U/$key.sh"
	for m in off on; do
		opt=--lwm2=off
		[ "$m" = on ] && opt=--lwm2
		t0=$(date +%s%N)
		job=$(submit_batch "$U/$key.sh" "$opt" -J "ctr.$RUN.$key.$m" -w n1 -N1 -n1 \
			-o "$U/$key.$m.out" -e "$U/$key.$m.err") || job=""
		if [ -n "$job" ] && watched "$key.$m" wait_job "$job" 120 >/dev/null; then
			sacct_field "$job" ExitCode >"$U/$key.$m.rc"
		else
			echo "no job" >"$U/$key.$m.rc"
		fi
		echo $((($(date +%s%N) - t0) / 1000000)) >"$U/$key.$m.ms"
	done
	JOB[$key]=$(job_named "ctr.$RUN.$key.on")
}

# outside_pair KEY CMD...: CMD as the test user outside Slurm, then
# `lwm2 run --quiet --json $U/KEY.json -- CMD`.
outside_pair() {
	local key=$1 m
	shift
	for m in off on; do
		local pre=()
		[ "$m" = on ] && pre=(env LWM2_LIB="$LIBDIR/liblwm2.so" "$LWM2" run --quiet --json "$U/$key.json" --)
		# shellcheck disable=SC2016 # expanded by the user's shell
		watched "$key.$m" as_user env TMPDIR="$U" bash -c 't0=$(date +%s%N)
			timeout 120 "$@" >"$0.out" 2>"$0.err"; echo $? >"$0.rc"
			echo $((($(date +%s%N) - t0) / 1000000)) >"$0.ms"' \
			"$U/$key.$m" "${pre[@]}" "$@"
	done
}

# identical KEY DESC WANT-STDOUT WANT-RC: six points.  Without lwm2 the
# payload ran as it should; with lwm2 stdout, stderr and exit status are
# the same byte for byte, the case took no longer (SLACK_MS of slack for a
# loaded machine, 10 s unless the test sets it), and it left no more
# processes running.
identical() {
	local key=$1 desc=$2 want=$3 want_rc=$4 got rc_off rc_on ms_off ms_on
	got=$(cat "$U/$key.off.out" 2>/dev/null)
	rc_off=$(cat "$U/$key.off.rc" 2>/dev/null)
	rc_on=$(cat "$U/$key.on.rc" 2>/dev/null)
	if [ "$got" = "$want" ] && [ "$rc_off" = "$want_rc" ]; then
		ok "$desc, lwm2 off: the payload ran (exit $want_rc, its output)"
	else
		not_ok "$desc, lwm2 off: the payload ran (exit $want_rc, its output)"
		diag "exit ${rc_off:-?}, stdout:" "$got" "stderr:" "$(head -n 10 "$U/$key.off.err" 2>/dev/null)" \
			"$(cat "$U/$key.off.srun" 2>/dev/null)"
	fi
	same_file "$U/$key.off.out" "$U/$key.on.out" "$desc, lwm2 on: stdout identical"
	same_file "$U/$key.off.err" "$U/$key.on.err" "$desc, lwm2 on: stderr identical"
	is "$rc_on" "$rc_off" "$desc, lwm2 on: exit status identical"
	ms_off=$(cat "$U/$key.off.ms" 2>/dev/null)
	ms_on=$(cat "$U/$key.on.ms" 2>/dev/null)
	check "$desc, lwm2 on: as quick as lwm2 off (${ms_on:-?} ms, ${ms_off:-?} ms)" \
		test "${ms_on:-999999}" -le $((${ms_off:-0} + ${SLACK_MS:-10000}))
	is "$(cat "$U/$key.on.left" 2>/dev/null)" "$(cat "$U/$key.off.left" 2>/dev/null)" \
		"$desc, lwm2 on: no process left running (as many as lwm2 off)"
}

# skip_identical DESC REASON, skip_measured DESC REASON: the same points,
# skipped.
skip_identical() {
	skip_because "$1, lwm2 off: the payload ran" "$2"
	skip_because "$1, lwm2 on: stdout identical" "$2"
	skip_because "$1, lwm2 on: stderr identical" "$2"
	skip_because "$1, lwm2 on: exit status identical" "$2"
	skip_because "$1, lwm2 on: as quick as lwm2 off" "$2"
	skip_because "$1, lwm2 on: no process left running" "$2"
}
skip_measured() {
	skip_because "$1, lwm2 on: the digest has the bytes written inside" "$2"
	skip_because "$1, lwm2 on: the digest counts the processes" "$2"
	skip_because "$1, lwm2 on: the digest names the container" "$2"
}

# The measured points wait for digests: they are checked at the end, all
# jobs' digests being made meanwhile.  MEASURE: KEY|DESC|KIND|CONTAINER;
# CONTAINER is the runtime and image the digest must name (its main
# container; none on the host); KIND is
# exact (the job wrote the payload's bytes to files and nothing else: srun
# passes the task's output on through pipes), kids:EXE:N:BYTES (a case of
# kids_cases: exactly BYTES, and N processes of EXE), dd (dd wrote the most, all
# of its bytes, and others wrote files too: the batch job's output files,
# the runtime's own on the host), run (lwm2 run's JSON, not a job, its
# output files too: as dd).
MEASURE=()
measure() { MEASURE+=("$1|$2|$3|$4"); }

# digest_values FILE [EXE]: "processes|total_written|max_written|exe_of_max|
# runtime image|EXE's processes" of a digest (lwm2 digest --json, or lwm2
# run --json); the runtime and image of its main container, "none"
# outside containers; EXE (dd unless given) counts its versioned names too
# (python3: python3.11).
digest_values() {
	python3 - "$1" "${2:-dd}" <<'PY' 2>/dev/null || echo "0|0|0|-|none|0"
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2]
if isinstance(d, list):
    d = d[0]["digest"]
s = d.get("scope", {})
m = s.get("metrics", {}).get("bytes_written", {})
at = m.get("max_at") or [0, 0, 0, "-"]
c = d.get("containers") or []
ctr = "%s %s" % (c[0].get("runtime"), c[0].get("image")) if c else "none"
dd = sum(e.get("processes", 0) for e in s.get("executables", {}).get("by_count", [])
         if e.get("exe") == want or str(e.get("exe")).startswith(want + "."))
print("|".join(str(v) for v in (s.get("processes", 0), s.get("totals", {}).get("posix_write_bytes", 0),
      int(m.get("max", 0)), at[3] if len(at) > 3 else "-", ctr, dd)))
PY
}

# check_measured: the points of every measured case (measure), within one
# wait for all of their digests.
check_measured() {
	local deadline m key desc kind ctr pb pp pc src job left procs total max exe got_ctr ddp
	local kexe kn kbytes
	deadline=$((SECONDS + 120))
	for m in "${MEASURE[@]}"; do
		IFS='|' read -r key desc kind ctr <<<"$m"
		kexe="dd"
		[[ $kind == kids:* ]] && IFS=: read -r kind kexe kn kbytes <<<"$kind"
		pb="$desc, lwm2 on: the digest has the $BYTES bytes written inside"
		[ "$kind" = kids ] && pb="$desc, lwm2 on: the digest has the $kbytes bytes written inside"
		pp="$desc, lwm2 on: the digest counts the processes (at least $NATIVE_PROCS)"
		pc="$desc, lwm2 on: the digest names the container"
		[ "$ctr" = none ] && pc="$desc, lwm2 on: the digest names no container"
		src=$U/$key.json
		if [ "$kind" != run ]; then
			job=${JOB[$key]:-}
			left=$((deadline - SECONDS))
			[ "$left" -gt 0 ] || left=1
			if [ -z "$job" ] || ! wait_digest "$job" "$left"; then
				not_ok "$pb"
				not_ok "$pp"
				not_ok "$pc"
				diag "no digest of job ${job:-(none)}"
				continue
			fi
			digest_as --json -j "$job" >"$src" 2>&1
		fi
		IFS='|' read -r procs total max exe got_ctr ddp <<<"$(digest_values "$src" "$kexe")"
		if [ "$kind" = exact ]; then
			is "$total" "$BYTES" "$pb"
		elif [ "$kind" = kids ]; then
			is "$total" "$kbytes" "$pb"
			is "$ddp" "$kn" "$desc, lwm2 on: the digest counts the $kn processes of $kexe"
		else
			if [ "$max" = "$BYTES" ] && [ "$exe" = dd ] && [ "$total" -ge "$BYTES" ]; then
				ok "$pb (dd's $max of $total bytes)"
			else
				not_ok "$pb"
				diag "total $total bytes, at most $max by one process ($exe)"
			fi
		fi
		check "$pp ($procs)" test "${procs:-0}" -ge "$NATIVE_PROCS"
		is "$got_ctr" "$ctr" "$pc"
	done
}

# ---------------------------------------------------------------- children

# Jobs whose children lwm2 must measure in the container, each run KIDS_REPS
# times in one step (a loss that comes now and then shows): each run's
# four children write 1 MiB each.  A case: NAME|DESC|EXE|N|NEEDS, N the
# processes of EXE one run makes; NEEDS is closekids (lwm2-closekids,
# tests/containers/closekids.c, built here for the host's glibc: run in
# KIDS_RELEASE, whose glibc it is, 2.34 or later) or python3 (lwm2-kids.py,
# tests/containers/kids.py, run by the image's python3).  A pool of 4 is 4
# workers, the program and its reaper (fork); spawn adds the resource
# tracker, forkserver its server too.  subprocess.run's dd are counted, as
# are lwm2-closekids's.
KIDS_REPS=3
KIDS_RELEASE=bookworm
KIDS_CASES=(
	"closekids|children that close inherited descriptors|dd|4|closekids"
	"spawn|children started by posix_spawn|dd|4|closekids"
	"pool-fork|a Python multiprocessing Pool (fork)|python3|6|python3"
	"pool-spawn|a Python multiprocessing Pool (spawn)|python3|7|python3"
	"pool-forkserver|a Python multiprocessing Pool (forkserver)|python3|8|python3"
	"subprocess|Python's subprocess.run of dd|dd|4|python3"
)
KIDS_TIME=0

# kids_setup FILE: the programs, beside FILE (a path of this run's under
# /tmp, which ch-run shares with the host; the other runtimes bind the
# programs in), FILE.REP.N their output; KIDS_WHY says why lwm2-closekids
# cannot run.
kids_setup() {
	local out
	KIDS_FILE=$1
	KIDS=$1.closekids
	KIDS_PY=$1.kids.py
	KIDS_WHY=""
	if ! command -v gcc >/dev/null; then
		KIDS_WHY="gcc not installed: it builds lwm2-closekids"
	elif ! out=$(gcc -O2 -o "$KIDS" "$LWM2_TOP/tests/containers/closekids.c" 2>&1); then
		KIDS_WHY="lwm2-closekids does not build here: $(tail -n 1 <<<"$out")"
	fi
	install -m 644 "$LWM2_TOP/tests/containers/kids.py" "$KIDS_PY"
	chmod 755 "$KIDS" 2>/dev/null
}

# kids_cleanup: the programs and what they wrote.
kids_cleanup() {
	rm -f "$KIDS" "$KIDS_PY" "$KIDS_FILE".[0-9]*.[0-9]*
}

# kids_skip_one DESC EXE REASON: one case's points, skipped.
kids_skip_one() {
	skip_identical "$1" "$3"
	skip_because "$1, lwm2 on: the digest has the bytes written inside" "$3"
	skip_because "$1, lwm2 on: the digest counts the processes of $2" "$3"
	skip_because "$1, lwm2 on: the digest counts the processes" "$3"
	skip_because "$1, lwm2 on: the digest names the container" "$3"
}

# kids_skip D REL REASON: the points of REL's cases, skipped.
kids_skip() {
	local c name desc exe n needs
	for c in "${KIDS_CASES[@]}"; do
		IFS='|' read -r name desc exe n needs <<<"$c"
		[ -z "${KIDS_ONLY:-}" ] || [[ " $KIDS_ONLY " == *" $name "* ]] || continue
		[ "$needs" = closekids ] && [ "$2" != "$KIDS_RELEASE" ] && continue
		kids_skip_one "$1, $desc" "$exe" "$3"
	done
}

# kids_cases KEY D REL ROOT CONTAINER RUNTIME...: every case of the image
# (ROOT, REL's; those named in KIDS_ONLY where the test sets it) under the
# runtime's command (RUNTIME ends where the program's name goes),
# identical with and without lwm2 and measured exactly; CONTAINER is what
# the digest must name.
kids_cases() {
	local key=$1 d=$2 rel=$3 root=$4 ctr=$5 c name desc exe n needs prog want i t0=$SECONDS
	shift 5
	for c in "${KIDS_CASES[@]}"; do
		IFS='|' read -r name desc exe n needs <<<"$c"
		[ -z "${KIDS_ONLY:-}" ] || [[ " $KIDS_ONLY " == *" $name "* ]] || continue
		if [ "$needs" = closekids ]; then
			[ "$rel" = "$KIDS_RELEASE" ] || continue
			if [ -n "$KIDS_WHY" ]; then
				kids_skip_one "$d, $desc" "$exe" "$KIDS_WHY"
				continue
			fi
			prog=("$KIDS")
			[ "$name" = spawn ] && prog+=(--spawn)
		elif [ ! -x "$root/usr/bin/python3" ]; then
			kids_skip_one "$d, $desc" "$exe" "the $rel image has no python3 (tests/containers/image.sh)"
			continue
		else
			prog=(python3 "$KIDS_PY" "$name")
		fi
		want=""
		for ((i = 1; i <= KIDS_REPS; i++)); do
			case $needs in
			closekids) want+="lwm2-closekids: 4 children wrote 1048576 bytes each" ;;
			*) want+="lwm2-kids.py $name: 4 children wrote 1048576 bytes each" ;;
			esac
			[ "$i" -lt "$KIDS_REPS" ] && want+=$'\n'
		done
		# shellcheck disable=SC2016 # expanded in the container
		step_pair "$key-$name" "$@" sh -c 'i=1; while [ $i -le '"$KIDS_REPS"' ]; do
			"$@" "$0.$i" || exit; i=$((i + 1)); done' "$KIDS_FILE" "${prog[@]}"
		identical "$key-$name" "$d, $desc" "$want" 0
		measure "$key-$name" "$d, $desc" "kids:$exe:$((n * KIDS_REPS)):$((4 * 1048576 * KIDS_REPS))" "$ctr"
	done
	KIDS_TIME=$((KIDS_TIME + SECONDS - t0))
}
