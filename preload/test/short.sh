#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What short processes cost and leave: a shell loop of 10,000 commands is
# counted exactly (processes, bytes) in a bounded step directory; a fork
# child that works before exec, or never execs, is still counted; a
# long-lived process killed by SIGKILL keeps a record at most a slice old.
# The step directory is merged with `lwm2 merge`, as the SPANK plugin does.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}"
APP=$LWM2_BUILDDIR/preload/test/app
DUMP=$LWM2_BUILDDIR/preload/test/recdump
LWM2=$LWM2_BUILDDIR/digest/lwm2
tmp=$(mktemp -d /tmp/lwm2-short-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT
unset LWM2_MODE LWM2_PRINT LWM2_DIR LWM2_SLICE LWM2_SLICE_MS LWM2_DEBUG LWM2_SIGNAL LWM2_ROOT_PPID
unset LWM2_PARENT
# The summary of short processes is on by default (LWM2_SHORT_MS 1000).
unset LWM2_SHORT_MS
export LC_ALL=C
case ${LWM2_SANITIZER:-no} in
*address*|*thread*) skip_all "preloading into uninstrumented programs under -fsanitize" ;;
esac
for p in bash python3 cat; do
	command -v $p >/dev/null || { skip_all "$p not installed"; }
done
[ -x "$LWM2" ] || { skip_all "lwm2 not built"; }

eq() { [ "$1" = "$2" ] || { echo "# got [$1], want [$2]"; return 1; }; }
le() { [ "$1" -le "$2" ] || { echo "# got $1, want at most $2"; return 1; }; }
newcase() { D=$(mktemp -d "$tmp/case.XXXXXX"); }
run() { LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D "$@"; }
nfiles() { find "$D" -type f | wc -l; }
# node EXPR: a Python expression over the node record r of $D
node() {
	"$LWM2" merge "$D" 2>"$D.err" >"$D.json" || { echo "# merge failed: $(cat "$D.err")"; return 1; }
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
c = r["counters"]
def tot(name): return r["totals"]["c"][c.index(name)]
def group(exe): return [p for p in r["procs"] if p["exe"] == exe and p["flags"] & 2048]  # LWM2_F_SUMMARY
def n(exe): return sum(p["n"] for p in group(exe))
print(eval(sys.argv[2]))' "$D.json" "$1"
}
val() { "$DUMP" "$1" | awk -v k="$2" '$1 == k { sub(/^[^ ]* /, ""); print; exit }'; }

data=$tmp/data
head -c 100 /dev/zero >"$data"

# --- 10,000 commands of a shell loop: each counted, few files
# (LWM2_SHORT_MS well above the default second: on a loaded machine a cat
# that took longer would keep a record of its own, rightly, and this case
# counts the summary's)
N=10000
newcase
LWM2_SHORT_MS=30000 run bash -c 'for ((i = 0; i < $1; i++)); do cat "$2"; done >/dev/null' _ $N "$data"
check "loop of $N: the step directory holds at most 3 files ($(nfiles))" le "$(nfiles)" 3
kib=$(du -sk "$D" | cut -f1)
check "loop of $N: the step directory uses at most 1 MiB (${kib} KiB)" le "$kib" 1024
check "loop of $N: $N processes of cat counted" eq "$(node 'n("cat")')" $N
check "loop of $N: $N + 1 processes in the node totals" eq "$(node 'r["totals"]["processes"]')" $((N + 1))
check "loop of $N: bytes read counted exactly" eq "$(node 'tot("posix_read_bytes")')" $((N * 100))
check "loop of $N: the node series has every byte read too (grid, export)" \
	eq "$(node 'sum(r["series"]["c"]["posix_read_bytes"])')" $((N * 100))
check "loop of $N: exit status class of every cat (ok)" \
	eq "$(node 'sum(p["exit_ok"] for p in group("cat"))')" $N
check "loop of $N: cat first among the executables" eq "$(node 'r["exes"][0]["exe"]')" cat
check "loop of $N: their CPU time counted" test "$(node 'sum(p["utime_us"] + p["stime_us"] for p in group("cat"))')" -gt 0

# --- commands run through env, and from a subshell, are children of a
# measured process too: summarized, no record file each
newcase
run bash -c '( for i in 1 2 3; do cat "$1"; done ); for i in 1 2 3; do env X=1 cat "$1"; done' _ "$data" >/dev/null
check "commands through env and from a subshell: the shell's record and the summary ($(nfiles))" \
	eq "$(nfiles)" 2
check "commands through env and from a subshell: 6 processes of cat counted" eq "$(node 'n("cat")')" 6

# --- children of a shell that exec at once leave nothing of their own,
# also when every image keeps a record (LWM2_SHORT_MS=0)
newcase
LWM2_SHORT_MS=0 run bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do cat "$1"; done >/dev/null' _ "$data"
check "10 commands, a record per image: 11 files, none for the forked shells ($(nfiles))" \
	eq "$(nfiles)" 11
check "10 commands, a record per image: 11 processes" eq "$(node 'r["totals"]["processes"]')" 11

# --- a fork child that reads before it execs, and one that never execs:
# the same totals as with a record for every image
forkcase() { # forkcase SHORT_MS: the node totals "bytes processes images"
	newcase
	LWM2_SHORT_MS=$1 run "$APP" workexec "$data" >/dev/null
	LWM2_SHORT_MS=$1 run "$APP" fork 1 20 >/dev/null
	node '"%d %d %d" % (tot("posix_read_bytes"), r["totals"]["processes"], r["totals"]["images"])'
}
read -r bytes_summary procs_summary images_summary <<EOF2
$(forkcase 1000)
EOF2
read -r bytes_records procs_records images_records <<EOF2
$(forkcase 0)
EOF2
check "fork child reading before exec: its bytes and the exec'd cat's counted (200)" \
	eq "$bytes_summary" 200
check "fork children: the same bytes as with a record per image" eq "$bytes_summary" "$bytes_records"
check "fork children: 4 processes (2 parents, 2 children)" eq "$procs_summary" 4
check "fork children: the same processes as with a record per image" eq "$procs_summary" "$procs_records"
check "fork children: the image replaced by exec still counted as an image (5)" \
	eq "$images_summary" "$images_records"

# --- processes started unmeasured: counted by the image that started
# them, by reason, and in the node's process total; with the summary and
# with a record per image alike
static_echo=$tmp/static-echo
${CC:-cc} -static -o "$static_echo" "$(dirname "$0")/../../tests/containers/static-echo.c" \
	2>/dev/null || static_echo=
for short in 1000 0; do
	newcase
	# env's own image is measured and execs cat without the library;
	# env -i starts true with no environment at all; python's
	# posix_spawn and subprocess (vfork) start them without it; a
	# command that cannot run starts nothing
	LWM2_SHORT_MS=$short run bash -c '
		env -u LD_PRELOAD cat "$1" >/dev/null
		env -i /bin/true
		env -u LD_PRELOAD /nonexistent 2>/dev/null
		python3 -c "import os, subprocess
e = {k: v for k, v in os.environ.items() if k != \"LD_PRELOAD\"}
os.waitpid(os.posix_spawn(\"/bin/true\", [\"true\"], e), 0)
subprocess.run([\"/bin/true\"], env=e)"
		[ -z "$2" ] || "$2" "$0" 100 >/dev/null' "$tmp/static.out" "$data" "$static_echo"
	want_static=$([ -n "$static_echo" ] && echo 1 || echo 0)
	check "started unmeasured (LWM2_SHORT_MS=$short): 4 without LD_PRELOAD, $want_static static" \
		eq "$(node 'r["totals"].get("unmeasured")')" \
		"$(python3 -c "print({'no_preload': 4, **({'static': 1} if $want_static else {})})")"
	# bash, python3's processes (its own measured start), and the
	# unmeasured ones; env's images and the missing command are none
	check "started unmeasured (LWM2_SHORT_MS=$short): counted in the node's processes" \
		eq "$(node 'r["totals"]["processes"] - r["totals"]["unmeasured_processes"] == sum(e["processes"] for e in r["exes"])')" True
	check "started unmeasured (LWM2_SHORT_MS=$short): the counters in the totals" \
		eq "$(node 'tot("unmeasured_no_preload") + tot("unmeasured_static")')" $((4 + want_static))
done
[ -n "$static_echo" ] || skip "a static executable: cc -static does not link here"
# another build of the library at another path (a node upgraded while the
# step runs) measures the command, and so does the dynamic loader run as a
# program (no PT_INTERP of its own): nothing is counted
newcase
cp "$LWM2_LIB" "$tmp/liblwm2-next.so"
loader=
for f in /lib64/ld-linux*.so.* /lib/*/ld-linux*.so.*; do
	[ -x "$f" ] && loader=$f && break
done
run bash -c 'LD_PRELOAD=$0 cat "$1" >/dev/null; [ -z "$2" ] || "$2" /bin/true' \
	"$tmp/liblwm2-next.so" "$data" "$loader"
check "a command that preloads another build of lwm2, the loader run as a program (${loader:-none here}): measured, not counted as unmeasured" \
	eq "$(node '(r["totals"].get("unmeasured"), [e["processes"] for e in r["exes"] if e["exe"] == "cat"])')" "(None, [1])"

# --- SIGKILL of a long-lived process: a record at most one slice old
# A single-threaded program that computes, started by a measured parent
# (LWM2_PARENT: no heartbeat thread; the sampling handler writes the
# record at slice boundaries).
newcase
LWM2_PARENT=$$ LWM2_SLICE_MS=200 LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D "$APP" busy 1 5000 &
pid=$!
sleep 1.5
# Its checkpoints come from its CPU-time sampling timer: on a loaded
# machine (make -j2 check beside other tests) it runs less than its wall
# time, and so does the work a record can miss.  What the record may lack
# is its CPU time since the last slice end: at most a slice (200 ms) and a
# sample, however much the machine is loaded.
clk_tck=$(getconf CLK_TCK)
cpu_at_kill=$(awk -v t="$clk_tck" '{ printf "%d", ($14 + $15) * 1000000 / t }' "/proc/$pid/stat")
t_kill=$(date +%s%N)
kill -9 $pid
wait $pid 2>/dev/null
f=$(find "$D" -name "$pid.*.lwm2" | head -n 1)
check "SIGKILL of a computing process: its record is there" test -n "$f"
if [ -n "$f" ]; then
	check "SIGKILL of a computing process: marked incomplete" eq "$(val "$f" incomplete)" 1
	age=$(( (t_kill - $(val "$f" end_ns)) / 1000000 ))
	lost=$(( (cpu_at_kill - $(val "$f" cpu_us)) / 1000 ))
	check "SIGKILL of a computing process: the record lacks at most 2 slices of its CPU time (${lost} ms; ${age} ms of wall time)" \
		le "$lost" 400
else
	check "SIGKILL of a computing process: marked incomplete" false
	check "SIGKILL of a computing process: the record lacks at most 2 slices of its CPU time" false
fi

# A shell waiting for a child without using CPU time.
newcase
LWM2_PARENT=$$ LWM2_SLICE_MS=200 LD_PRELOAD=$LWM2_LIB LWM2_DIR=$D \
	bash -c 'sleep 30 & echo $! >"$1"; wait; true' _ "$tmp/child" &
pid=$!
sleep 1.5
t_kill=$(date +%s%N)
kill -9 $pid
wait $pid 2>/dev/null
[ -s "$tmp/child" ] && kill -TERM "$(cat "$tmp/child")" 2>/dev/null
f=$(find "$D" -name "$pid.*.lwm2" | head -n 1)
check "SIGKILL of a waiting shell: its record is there" test -n "$f"
if [ -n "$f" ]; then
	check "SIGKILL of a waiting shell: marked incomplete" eq "$(val "$f" incomplete)" 1
	age=$(( (t_kill - $(val "$f" end_ns)) / 1000000 ))
	check "SIGKILL of a waiting shell: the record is at most 2 slices old (${age} ms)" \
		le "$age" 400
else
	check "SIGKILL of a waiting shell: marked incomplete" false
	check "SIGKILL of a waiting shell: the record is at most 2 slices old" false
fi

# --- a task of the step (its parent is LWM2_ROOT_PPID) keeps its record
newcase
LWM2_ROOT_PPID=$$ run "$APP" busy 1 1 >/dev/null
check "a task keeps a record of its own however short" eq "$(find "$D" -name '*.lwm2' | wc -l)" 1

# --- a short command the summary refuses (here its file is a directory)
# keeps a record of its own, with everything a record has: the language,
# runtimes and identity a summarized command goes without.
newcase
mkdir "$D/procs.lwm2sum"
run bash -c 'cat "$1" >"$2"' _ "$data" "$D/out"
own=
for f in "$D"/*.lwm2; do
	case $(val "$f" executable) in */cat | cat) own=$f ;; esac
done
check "a short command the summary refuses keeps a record" test -n "$own"
if [ -n "$own" ]; then
	check "that record has the command's language (C)" eq "$(val "$own" language)" 1
	check "that record has the command's identity" eq "$(( $(val "$own" identity_flags) & 1 ))" 1
	check "that record has the command's bytes" eq "$(val "$own" posix_read_bytes)" 100
else
	for w in language identity bytes; do check "that record has the command's $w" false; done
fi

done_testing
