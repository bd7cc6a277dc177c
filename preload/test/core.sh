#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The core of liblwm2.so with real programs: test/app under LD_PRELOAD, its
# records read back with test/recdump.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}"
APP=$LWM2_BUILDDIR/preload/test/app
DUMP=$LWM2_BUILDDIR/preload/test/recdump
tmp=$(mktemp -d /tmp/lwm2-core-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset LWM2_MODE LWM2_PRINT LWM2_DIR LWM2_SLICE LWM2_SLICE_MS LWM2_DEBUG LWM2_SIGNAL
# Every image keeps a record here, however short (the step summary of
# short processes is test/short.sh's).
export LWM2_SHORT_MS=0
case ${LWM2_SANITIZER:-no} in
*address*|*thread*) skip_all "preloading into uninstrumented programs under -fsanitize" ;;
esac

newcase() { D=$(mktemp -d "$tmp/case.XXXXXX"); }
run() { LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D "$@"; }
nrec() { set -- "$D"/*.lwm2; [ -e "$1" ] && echo $# || echo 0; }
# val FILE KEY
val() { "$DUMP" "$1" | awk -v k="$2" '$1 == k { sub(/^[^ ]* /, ""); print; exit }'; }
# the record of pid P in $D
recof() { set -- "$D"/"$1".*.lwm2; [ -e "$1" ] && echo "$1"; }
one() { set -- "$D"/*.lwm2; echo "$1"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= t * b) }'; }
eq() { [ "$1" = "$2" ] || { echo "# got [$1], want [$2]"; return 1; }; }

# --- average threads: samples are CPU-time based, so N busy threads give N
# times the main thread's samples however few cores there are, and every
# period of CPU time is one sample, also when other processes compete for
# the cores (the kernel then delivers the timers' signals late and merges
# them; each thread counts its periods on its own clock).
# in_periods TOTAL CPU_US PERIOD_US N: TOTAL is the CPU time in whole
# periods, less at most one part-period for each of the N threads.
in_periods() {
	awk -v t="$1" -v c="$2" -v p="$3" -v n="$4" 'BEGIN {
		w = int(c / p); if (t <= w && t >= w - n) exit 0
		printf "# %d samples for %d whole periods\n", t, w; exit 1 }'
}
busy_case() { # busy_case N LABEL [COMMAND...]: one run of `app busy N 400`
	local N=$1 label=$2
	shift 2
	newcase
	"$@" run "$APP" busy "$N" 400
	f=$(one)
	tot=$(val "$f" samples_total); main=$(val "$f" samples_main)
	cpu=$(val "$f" cpu_us); per=$(val "$f" sample_period_us)
	echo "# $label: samples $tot, main $main, cpu ${cpu}us, period ${per}us"
	check "$label: average threads (samples / main samples) within 10% of $N" \
		near "$(awk -v t="$tot" -v m="$main" 'BEGIN { if (m) print t / m; else print 0 }')" "$N" 0.10
	check "$label: every period of CPU time is one sample" in_periods "$tot" "$cpu" "$per" "$N"
	check "$label: threads_total $N" eq "$(val "$f" threads_total)" "$N"
}
# beside LOAD COMMAND...: COMMAND while LOAD processes spin on the cores
beside() {
	local n=$1 pids=() rc i
	shift
	for ((i = 0; i < n; i++)); do
		(while :; do :; done) &
		pids+=($!)
	done
	"$@"
	rc=$?
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	return $rc
}
for N in 1 2 4; do
	busy_case $N "busy $N"
done
busy_case 2 "busy 2 beside 6 spinning processes" beside 6

newcase
out=$(run "$APP" threads 1000)
f=$(one)
check "1000 threads created and joined" eq "$out" "threads 1000"
check "1000 threads: threads_total 1001" eq "$(val "$f" threads_total)" 1001
check "1000 threads: record complete" eq "$(val "$f" incomplete)" 0

# The core's memory budget: at most 4 MiB more resident memory, also with
# 2 ms slices written all the time and coarsened (hardware counters off:
# libpapi's own footprint is the PAPI module's to account for)
off=$("$APP" rss 0 200)
newcase
on=$(LWM2_EVENTS=none LWM2_SLICE_MS=2 LWM2_MAX_SLICES=16 run "$APP" rss 0 200)
f=$(one)
echo "# peak RSS: $off KiB without, $on KiB with the library"
check "the core adds at most 4 MiB resident memory" test $((on - off)) -le 4096
check "the slice series coarsened to the budget" \
	eq "$(val "$f" coarsened) $(test "$(val "$f" nslices)" -le 16 && echo fits)" "1 fits"

newcase
out=$(run "$APP" detached 200)
check "200 detached threads" eq "$out" "detached 200"
check "detached threads counted" eq "$(val "$(one)" threads_total)" 201

newcase
out=$(run "$APP" neverexit)
f=$(one)
check "threads that never exit: the program ends" eq "$out" "leaving threads behind"
check "threads that never exit: record complete, 3 threads" \
	eq "$(val "$f" incomplete) $(val "$f" threads_total)" "0 3"

newcase
out=$(run "$APP" sigprof)
check "its own SIGPROF profiler gets its signals" eq "$out" "sigprof 1"
check "sampling still on beside SIGPROF" test "$(val "$(one)" samples_total)" -ge 20
check "sampling not backed off beside SIGPROF" eq "$(val "$(one)" sampling_off)" 0

newcase
out=$(run "$APP" ownsig); rc=$?
f=$(one)
check "a handler for the sampling signal: only its own signal arrives" eq "$rc $out" "0 own 1"
check "sampling backs off with the reason" eq "$(val "$f" sampling_off)" 1
check "the reason is recorded" test -n "$(val "$f" missing_sampling)"

newcase
out=$(run "$APP" resetsigs 0 200)
f=$(one)
check "a program resetting every signal to SIG_DFL sees SIG_DFL" eq "$out" "reset SIG_DFL"
check "resetting to SIG_DFL does not stop sampling" \
	eq "$(val "$f" sampling_off) $(test "$(val "$f" samples_total)" -ge 15 && echo many)" "0 many"

# A program that blocks every signal and reads them (sigtimedwait,
# signalfd) never finds a sample among them, threads included
for mode in sigwait sigfd; do
	newcase
	out=$(LWM2_SAMPLE_HZ=1000 run "$APP" $mode 3 300); rc=$?
	check "$mode: all signals blocked, 3 threads: no sample among its signals" \
		eq "$rc $(echo "$out" | tail -n 1)" "0 signals 0"
	[ "$rc" -eq 0 ] || echo "$out" | head -n 5 | sed 's/^/# /'
done
# ... and kill with the sampling signal still ends a program that leaves
# it at SIG_DFL, by that signal
newcase
LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D "$APP" sleep 0 50 >"$D/out" &
pid=$!
i=0; while [ ! -s "$D/out" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -s 41 $pid 2>/dev/null
i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
if kill -0 $pid 2>/dev/null; then
	kill -KILL $pid
	wait $pid 2>/dev/null
	check "kill -41 at SIG_DFL ends the program" false
else
	wait $pid 2>/dev/null; rc=$?
	check "kill -41 at SIG_DFL ends the program by signal 41 (status $rc)" eq "$rc" 169
fi

newcase
run "$APP" fork 0 200
check "fork: two records" eq "$(nrec)" 2
for f in "$D"/*.lwm2; do
	if [ "$(val "$f" fork_child)" = 1 ]; then child=$f; else parent=$f; fi
done
cs=$(val "$child" samples_total); ps=$(val "$parent" samples_total)
echo "# fork: parent samples $ps, child samples $cs"
check "fork: the child measures only itself (about 20 samples, not 40)" \
	near "$cs" 20 0.3
check "fork: child's ppid is the parent" eq "$(val "$child" ppid)" "$(val "$parent" pid)"

newcase
run "$APP" mtfork 0 50; rc=$?
check "fork with busy threads: both ends finish" eq "$rc $(nrec)" "0 2"
for f in "$D"/*.lwm2; do
	if [ "$(val "$f" fork_child)" = 1 ]; then child=$f; else parent=$f; fi
done
check "fork with busy threads: the child has one thread, the parent four" \
	eq "$(val "$child" threads_total) $(val "$parent" threads_total)" "1 4"
check "fork with busy threads: the child's samples are its own (about 5)" \
	test "$(val "$child" samples_total)" -le 10

newcase
run "$APP" mtexec 0 50; rc=$?
check "exec with busy threads: the new image runs" eq "$rc $(nrec)" "0 2"

newcase
run "$APP" exec 0 100
check "exec: two records" eq "$(nrec)" 2
ex=0; new=0
for f in "$D"/*.lwm2; do
	if [ "$(val "$f" exec)" = 1 ]; then ex=$f; else new=$f; fi
done
check "exec: the old image's record is saved with the EXEC flag" test "$ex" != 0
check "exec: same pid, the new image writes its own" eq "$(val "$ex" pid)" "$(val "$new" pid)"
check "exec: the new image's record is complete" eq "$(val "$new" incomplete)" 0

newcase
out=$(run "$APP" execfail 0 50)
f=$(one)
check "a failed exec: the program goes on" eq "$out" "exec failed: 1"
check "a failed exec: one complete record without EXEC" \
	eq "$(nrec) $(val "$f" exec) $(val "$f" incomplete)" "1 0 0"

newcase
run "$APP" spawn 0 50
check "posix_spawn: parent and child records" eq "$(nrec)" 2

newcase
run "$APP" vfork 0 50; rc=$?
check "vfork: exec and _exit in the child work" eq "$rc" 0
check "vfork: two records (parent, /bin/true)" eq "$(nrec)" 2
for f in "$D"/*.lwm2; do
	case $(val "$f" executable) in */app) parent=$f ;; esac
done
check "vfork: the parent's record is not marked EXEC and is complete" \
	eq "$(val "$parent" exec) $(val "$parent" incomplete)" "0 0"

# Copies made by the clone system call (bubblewrap's sandbox starts so)
# have no fork handlers run: the library's locks come as the copy found
# them, maybe held by a thread the copy does not have, and the copy's own
# fork must not wait for it (it did, within the first 100 copies)
newcase
out=$(run "$APP" rawclone 2000); rc=$?
check "raw clone: each copy's fork returns while another thread takes the library's lock" \
	eq "$out, exit $rc" "rawclone 2000 hung 0 failed 0, exit 0"
for f in "$D"/*.lwm2; do
	[ "$(val "$f" fork_child)" = 1 ] || parent=$f
done
check "raw clone: the program's record is complete" eq "$(val "$parent" incomplete)" 0

newcase
run "$APP" _exit 7 50; rc=$?
f=$(one)
check "_exit(7): status kept" eq "$rc" 7
check "_exit(7): recorded" eq "$(val "$f" exit_status) $(val "$f" incomplete)" "7 0"

newcase
out=$(run "$APP" quick_exit 6 50); rc=$?
f=$(one)
check "quick_exit(6): status and its handler kept" eq "$rc $out" "6 app: at_quick_exit handler ran"
check "quick_exit(6): recorded" eq "$(val "$f" exit_status) $(val "$f" incomplete)" "6 0"

newcase
run "$APP" abort 0 50 2>/dev/null; rc=$?
f=$(one)
check "abort: dies by SIGABRT" eq "$rc" 134
check "abort: recorded as signal 6" eq "$(val "$f" signaled) $(val "$f" term_signal) $(val "$f" incomplete)" "1 6 0"

newcase
run "$APP" segv 0 50 2>/dev/null; rc=$?
check "SIGSEGV: dies by it" eq "$rc" 139
check "SIGSEGV: recorded" eq "$(val "$(one)" term_signal)" 11
newcase
run "$APP" segv 1 50; rc=$?
check "SIGSEGV with its own handler: the handler runs" eq "$rc" 9
check "SIGSEGV with its own handler: recorded exit 9" eq "$(val "$(one)" exit_status)" 9

# SIGTERM: without a handler the process dies by it, with the record saved;
# with one, the handler runs
for h in 0 1; do
	newcase
	env LD_PRELOAD="$LWM2_LIB" LWM2_DIR="$D" "$APP" term $h >"$D/out" &
	pid=$!
	i=0; while [ ! -s "$D/out" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	kill -TERM $pid; wait $pid 2>/dev/null; rc=$?
	f=$(one)
	if [ $h = 0 ]; then
		check "SIGTERM, no handler: dies by SIGTERM" eq "$rc" 143
		check "SIGTERM, no handler: recorded" eq "$(val "$f" signaled) $(val "$f" term_signal) $(val "$f" incomplete)" "1 15 0"
	else
		check "SIGTERM, own handler: it runs and exits 3" eq "$rc $(tail -1 "$D/out")" "3 app: got TERM"
		check "SIGTERM, own handler: recorded exit 3" eq "$(val "$f" exit_status) $(val "$f" incomplete)" "3 0"
	fi
done

# SIGKILL: the heartbeat's record is readable, INCOMPLETE, at most one
# slice (1 s here) behind the kill
newcase
env LD_PRELOAD="$LWM2_LIB" LWM2_DIR="$D" LWM2_SLICE=1 "$APP" sleep 0 2500 >"$D/out" &
pid=$!
sleep 3.3
killns=$(date +%s%N)
kill -KILL $pid; wait $pid 2>/dev/null
f=$(one)
valid() { "$DUMP" "$1" >/dev/null; }
check "SIGKILL: a valid record is left" valid "$f"
endns=$(val "$f" end_ns)
echo "# SIGKILL: record end $(( (killns - endns) / 1000000 )) ms before the kill"
check "SIGKILL: marked incomplete" eq "$(val "$f" incomplete)" 1
check "SIGKILL: at most one slice behind" test $(( (killns - endns) / 1000000 )) -le 1100
check "SIGKILL: the samples up to the last slice are in it" \
	near "$(val "$f" samples_total)" "$(awk -v c="$(val "$f" cpu_us)" -v p="$(val "$f" sample_period_us)" 'BEGIN { print c / p }')" 0.15

# Output and exit status identical with and without the library
"$APP" output >"$tmp/o1" 2>"$tmp/e1"; rc1=$?
newcase
run "$APP" output >"$tmp/o2" 2>"$tmp/e2"; rc2=$?
check "same stdout" cmp -s "$tmp/o1" "$tmp/o2"
check "same stderr" cmp -s "$tmp/e1" "$tmp/e2"
check "same exit status" eq "$rc2" "$rc1"
check "the atexit handler's output is there" grep -q "atexit handler ran" "$tmp/o2"

# LWM2_MODE=off: fully inert
newcase
LWM2_MODE=off run "$APP" busy 1 20; rc=$?
check "LWM2_MODE=off: runs, no record" eq "$rc $(nrec)" "0 0"

# Printing without LWM2_DIR: a digest on stderr, nothing left on disk
newcase
export TMPDIR=$D
LD_PRELOAD=$LWM2_LIB LWM2_PRINT=1 "$APP" busy 1 20 2>"$tmp/print"
unset TMPDIR
check "LWM2_PRINT=1 prints a digest" grep -q "lwm2" "$tmp/print"
check "LWM2_PRINT=1 without LWM2_DIR leaves nothing behind" eq "$(find "$D" -type f | wc -l)" 0

# unshare(CLONE_NEWUSER) needs a single-threaded process: the heartbeat
# steps aside for it and comes back
out1=$("$APP" unshare 0 30)
newcase
out2=$(LWM2_SLICE_MS=10 run "$APP" unshare 0 60)
f=$(one)
echo "# unshare without the library: $out1"
check "unshare(CLONE_NEWUSER) gives the same result with the library" eq "$out2" "$out1"
check "unshare: slices still closed after it" test "$(val "$f" generation)" -ge 4

# Children that the program starts without the library are not measured
newcase
out=$(run "$APP" setpreload)
check "LD_PRELOAD changed for the children: they run" eq "$out" "child LD_PRELOAD=[]"
check "LD_PRELOAD changed for the children: only the program's record" eq "$(nrec)" 1

# A statically linked program: LD_PRELOAD has no effect, and it runs
if printf '#include <stdio.h>\nint main(void){puts("static ok");return 4;}\n' >"$tmp/s.c" &&
   ${CC:-cc} -static -o "$tmp/static" "$tmp/s.c" 2>/dev/null; then
	newcase
	out=$(run "$tmp/static"); rc=$?
	check "a static program runs unaffected" eq "$rc $out" "4 static ok"
	check "a static program leaves no record" eq "$(nrec)" 0
else
	skip "no static libc to link a static program"
fi

# A program built with AddressSanitizer (gcc's runtime wants to be first
# in the library list; the SPANK plugin turns that check off): it runs as
# without lwm2, and lwm2 steps aside: nothing counted, one record at its
# end that says why (the digest counts the process and gives the reason)
newcase
# (it reads a file, which lwm2 would count)
printf '#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char **v) { FILE *f = fopen(v[0], "r"); char *p = malloc(8); (void)c; p[0] = 7; if (f) { p[1] = (char)fgetc(f); fclose(f); } printf("asan %%d\\n", p[0]); free(p); return 0; }\n' >"$D/asan.c"
cp "$D/asan.c" "$tmp/asan.c"
if gcc -fsanitize=address -o "$D/asan" "$D/asan.c" 2>/dev/null && "$D/asan" >/dev/null 2>&1; then
	out=$(ASAN_OPTIONS=verify_asan_link_order=0 run "$D/asan" 2>&1); rc=$?
	check "a program built with ASan runs unchanged" eq "$rc $out" "0 asan 7"
	check "... and lwm2 steps aside: one record" eq "$(nrec)" 1
	f=$(set -- "$D"/*.lwm2; echo "$1")
	check "... that says why, for every group" \
		eq "$("$DUMP" "$f" 2>/dev/null | grep -c '^missing_.* built with AddressSanitizer: lwm2 stepped aside')" 5
	check "... with the exit status and nothing counted" eq "$(val "$f" exit_status) $(val "$f" incomplete) $(val "$f" posix_read_calls)" "0 0 0"
else
	for i in 1 2 3 4; do skip "no AddressSanitizer runtime to build with"; done
fi

# The real functions are found in the libraries' own hash tables: under
# LWM2_DEBUG each is checked against dlsym(RTLD_NEXT), and a difference said.
newcase
out=$(LWM2_DEBUG=1 run sh -c 'cat /dev/null; ls /dev/null; echo x | sort | wc -c' 2>&1)
check "the fast lookup of the real functions agrees with dlsym" \
	eq "$(printf '%s\n' "$out" | grep -c 'fast lookup')" 0

# The same with clang's runtime, linked into the program itself (no
# libasan.so among its libraries): found in the program's own symbols.
newcase
if command -v clang >/dev/null && clang -fsanitize=address -o "$tmp/asan-clang" "$tmp/asan.c" 2>/dev/null &&
	"$tmp/asan-clang" >/dev/null 2>&1; then
	out=$(run "$tmp/asan-clang" 2>&1); rc=$?
	check "a program built with clang's ASan runs unchanged" eq "$rc $out" "0 asan 7"
	check "... and lwm2 steps aside: one record, no summary" eq "$(find "$D" -type f | wc -l) $(nrec)" "1 1"
else
	n=$((n + 1)); echo "ok $n # SKIP clang cannot build AddressSanitizer programs here"
	n=$((n + 1)); echo "ok $n # SKIP clang cannot build AddressSanitizer programs here"
fi

# A leak checker on a clean program finds nothing of ours: no "possibly
# lost" from the heartbeat thread, with threads of the application too
# (with the library loaded but off first: Debian 12's valgrind cannot read
# the DWARF 5 debug information of clang 14's builds)
vg_skip=
if ! command -v valgrind >/dev/null 2>&1; then
	vg_skip="valgrind not installed"
elif ! LD_PRELOAD=$LWM2_LIB LWM2_MODE=off valgrind -q --error-exitcode=9 "$APP" busy 1 10 \
	>/dev/null 2>&1; then
	vg_skip="valgrind cannot read this build's binaries (lwm2 off, still failing)"
fi
if [ -z "$vg_skip" ]; then
	for args in "busy 2 100" "threads 20"; do
		newcase
		# shellcheck disable=SC2086
		run valgrind -q --leak-check=full --errors-for-leak-kinds=definite,possible \
			--error-exitcode=9 "$APP" $args >"$D/vg.out" 2>&1; rc=$?
		check "valgrind memcheck, $args: no leak, exit 0 (got $rc)" eq "$rc" 0
		[ "$rc" -eq 0 ] || grep -m 5 "lost" "$D/vg.out" | sed 's/^/# /'
	done
else
	skip "$vg_skip"
	skip "$vg_skip"
fi

# The container a process runs in: LWM2_CONTAINER as the process found it
# at its start (record version 3), split at the first ':'; nothing without
newcase
LWM2_CONTAINER='podman:docker.io/library/debian:11' run "$APP" busy 1 10
f=$(one)
if grep -q 'lwm2_identity_container(' "$LWM2_SRCDIR/preload/env.c"; then
	check "LWM2_CONTAINER: the record names the runtime and the image" \
		eq "$(val "$f" container_runtime)|$(val "$f" container_image)" \
		"podman|docker.io/library/debian:11"
else
	skip_because "LWM2_CONTAINER: the record names the runtime and the image" \
		"preload/env.c does not call lwm2_identity_container at start-up"
fi
newcase
run "$APP" busy 1 10
check "no LWM2_CONTAINER: no container in the record" \
	eq "$(val "$(one)" container_runtime)|$(val "$(one)" container_image)" "|"

# Slurm's client commands that inherit LD_PRELOAD are not measured
newcase
cp "$APP" "$D/squeue"; mkdir "$D/rec"
LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D/rec "$D/squeue" busy 1 10; rc=$?
check "a Slurm client command runs and is not measured" eq "$rc $(ls "$D/rec" 2>/dev/null | wc -l)" "0 0"

done_testing
