#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every digest number means what its label says, on programs that show it:
# an fsync-bound writer, a process tree without MPI, a barrier-only MPI
# program, a nonblocking-heavy one, a busy-polling rank, fio's asynchronous
# engines and a program that maps a file for writing, each run under
# `lwm2 run` and its digest (JSON and text) checked.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
L=./lwm2
src=${srcdir:-.}
lib=${LWM2_LIB:-../preload/.libs/liblwm2.so}
[ -r "$lib" ] || skip_all "needs liblwm2.so (preload/)"
need_python3
# A sanitized library needs its runtime loaded first in every program it
# is preloaded into (fio, mpirun, sh): not what these programs are for.
if ldd "$lib" 2>/dev/null | grep -q 'lib[at]san\|libubsan'; then
	skip_all "liblwm2.so is built with sanitizers"
fi
export LWM2_LIB="$lib"
w=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-truth-XXXXXX") || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$w"' EXIT
mkdir "$w/tmp"
# j FILE EXPR: a Python expression over the digest d and its scope s
j() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); s = d["scope"]; m = s["metrics"]; t = s.get("totals", {})
print(eval(sys.argv[2]))' "$@"
}
# run NAME CMD...: digest text in $w/NAME.txt, JSON in $w/NAME.json
run() {
	name=$1
	shift
	TMPDIR="$w/tmp" $L run --json "$w/$name.json" -- "$@" >"$w/$name.out" 2>"$w/$name.txt"
}
${CC:-cc} -std=gnu11 -O1 -o "$w/truth_io" "$src/test/truth_io.c" || exit 1

# -- fsync-bound writer: sync time is a row and in the write bandwidth --------
run fsync "$w/truth_io" fsync "$w/f"
check "fsync writer: 4 MiB written" test "$(j "$w/fsync.json" 't["posix_write_bytes"]')" = 4194304
check "fsync writer: sync time has its own row" grep -q "Time in fsync and fdatasync \[%\]" "$w/fsync.txt"
check "fsync writer: write bandwidth = bytes / (write + sync time)" test "$(j "$w/fsync.json" \
	'abs(m["write_bw"]["max"] - t["posix_write_bytes"] / ((t["posix_write_ns"] + t["posix_sync_ns"]) / 1e9)) < 1e-3 * m["write_bw"]["max"]')" = True
check "fsync writer: 64 syncs counted" test "$(j "$w/fsync.json" 't["posix_sync_calls"]')" = 64
echo "# $(grep -E 'Write bandwidth|Time in fsync' "$w/fsync.txt" | tr -s ' ')"

# -- a process tree without MPI: no MPI advice, processes located by pid ------
# Each process with a record of its own (the default), then with the step's
# summary on (LWM2_SHORT_MS): short processes kept together per executable.
tree="dd if=/dev/zero of='$w/t' bs=64k count=64 2>/dev/null; sh -c 'true'; cat '$w/t' >/dev/null"
LWM2_SHORT_MS=0 run tree sh -c "$tree"
check "process tree: I/O-concentration rule silent without MPI" sh -c "! grep -q 'io-imbalance\|collective MPI-IO' '$w/tree.txt'"
check "process tree: the writer located by executable and pid" test "$(j "$w/tree.json" \
	'(lambda a: a[0] == -1 and a[2] > 0 and a[3] == "dd")(m["bytes_written"]["max_at"])')" = True
check "process tree: rendered as exe[pid]@host" grep -Eq "max [a-z]+\[[0-9]+\]@" "$w/tree.txt"
LWM2_SHORT_MS=1000 run treesum sh -c "$tree"
check "process tree, short processes summarized: the writer located by executable" test "$(j "$w/treesum.json" \
	'(lambda a: a[0] == -1 and a[3] == "dd")(m["bytes_written"]["max_at"])')" = True
check "process tree, short processes summarized: rendered as exe[short]@host" grep -Eq "max dd\[short\]@" "$w/treesum.txt"
echo "# $(grep -E 'Data written' "$w/tree.txt" | tr -s ' ')"

# -- mmap for writing: flagged ---------------------------------------------------
run mmap "$w/truth_io" mmap "$w/m"
check "mmap writer: counted as a process that mapped files for writing" test "$(j "$w/mmap.json" 's["mmap_write_processes"]')" = 1
check "mmap writer: the digest says so" grep -q "mapped files shared and writable" "$w/mmap.txt"

# -- the main program's language, from the executable; runtimes apart ------------
# lang NAME: "language runtime,names" of the first record of a kept run
lang() {
	TMPDIR="$w/tmp" $L run --quiet --keep "$w/k_$1" -- "$w/$1" >/dev/null 2>&1
	$L dump "$w/k_$1"/*.lwm2 | python3 -c 'import json,sys
d = json.loads(sys.stdin.readline()); print(d["language"], ",".join(d["runtime_names"]))'
}
printf 'int main(void) { return 0; }\n' >"$w/c.c"
printf '#include <iostream>\nint main() { std::cout << 1 << std::endl; }\n' >"$w/cxx.cc"
printf 'program p\nprint *, 1\nend program p\n' >"$w/fort.f90"
if command -v g++ >/dev/null && command -v gfortran >/dev/null &&
	g++ -o "$w/cxx" "$w/cxx.cc" && gfortran -o "$w/fort" "$w/fort.f90" &&
	${CC:-cc} -o "$w/cgf" "$w/c.c" -Wl,--no-as-needed -lgfortran; then
	check "language: a C++ program is C++" test "$(lang cxx)" = "c++ c++"
	check "language: a Fortran program is Fortran" test "$(lang fort)" = "fortran fortran"
	check "language: a C program that loads libgfortran is C, Fortran a runtime" test "$(lang cgf)" = "c fortran"
else
	for _ in 1 2 3; do skip "no g++ or gfortran"; done
fi

# -- MPI ----------------------------------------------------------------------
mpicc=$(command -v mpicc.openmpi || true)
if [ -n "$mpicc" ] && command -v mpirun.openmpi >/dev/null &&
	$mpicc -std=gnu11 -O1 -o "$w/truth_mpi" "$src/test/truth_mpi.c" 2>"$w/cc.err"; then
	# lwm2 run starts a program, not a shell function
	cat >"$w/mpirun" <<-'EOS'
	#!/bin/sh
	OMPI_MCA_btl=self,vader exec timeout 60 mpirun.openmpi --allow-run-as-root --oversubscribe \
		-x OMPI_MCA_btl "$@"
	EOS
	chmod +x "$w/mpirun"
	run barrier "$w/mpirun" -np 2 "$w/truth_mpi" barrier
	check "barrier-only: MPI_Init/Finalize in their own row" grep -q "Time in MPI_Init and MPI_Finalize \[%\]" "$w/barrier.txt"
	check "barrier-only: start-up outweighs the barriers, and is not in MPI time" test "$(j "$w/barrier.json" \
		'm["mpi_init_time"]["avg"] > m["mpi_time"]["avg"] and m["mpi_time"]["max"] < 50')" = True
	check "barrier-only: no scalability advice" sh -c "! grep -q '\[mpi-share\]' '$w/barrier.txt'"
	# Open MPI maps its transport's and PMIx's segments shared and writable
	# (/dev/shm, its session directory): memory, no file written
	check "2 ranks writing nothing: no process counted as mapping files for writing" test "$(j "$w/barrier.json" 's["mmap_write_processes"]')" = 0
	check "2 ranks writing nothing: no mapped-file note" sh -c "! grep -q 'mapped files' '$w/barrier.txt'"
	echo "# $(grep -E 'Time in MPI' "$w/barrier.txt" | tr -s ' ' | tr '\n' ';')"

	run nb "$w/mpirun" -np 2 "$w/truth_mpi" nonblocking
	check "nonblocking: average message size is 32 KiB, not bytes per call" test "$(j "$w/nb.json" \
		'(m["mpi_p2p_msg_size"]["min"], m["mpi_p2p_msg_size"]["max"])')" = "(32768, 32768)"
	check "nonblocking: calls outnumber messages" test "$(j "$w/nb.json" \
		't["mpi_p2p_calls"] > t["mpi_p2p_msgs_sent"] + t["mpi_p2p_msgs_recv"] == 800')" = True
	echo "# $(grep -E 'point-to-point messages' "$w/nb.txt" | tr -s ' ')"

	# both ranks on one core: rank 0 busy-polls while rank 1 computes
	if command -v taskset >/dev/null; then
		SLURM_CPUS_PER_TASK=1 run poll taskset -c 0 "$w/mpirun" -np 2 --bind-to none "$w/truth_mpi" poll 2
		check "busy-polling rank: the seed's thread ratio and busy threads, both labelled" \
			sh -c "grep -q 'Average number of threads (all/main samples)' '$w/poll.txt' &&
			       grep -q 'Threads busy on a CPU (average)' '$w/poll.txt'"
		check "busy-polling ranks sharing a core: under one thread busy, ratio at least one" test "$(j "$w/poll.json" \
			'm["avg_threads"]["avg"] < 0.75 and m["thread_ratio"]["min"] >= 1')" = True
		echo "# $(grep -E 'threads|Threads' "$w/poll.txt" | tr -s ' ' | tr '\n' ';')"
	else
		skip "no taskset"
		skip "no taskset"
	fi
else
	for _ in 1 2 3 4 5 6 7 8 9; do skip "no Open MPI compiler and launcher"; done
fi

# -- fio's asynchronous engines --------------------------------------------------
if command -v fio >/dev/null; then
	for e in posixaio libaio io_uring; do
		run "fio_$e" fio --name=t --filename="$w/fio_$e" --ioengine=$e --rw=write --bs=64k \
			--size=32m --iodepth=4 --output="$w/fio_$e.report"
		echo "# $e: $(grep -E 'Data written|I/O partial' "$w/fio_$e.txt" | tr -s ' ' | tr '\n' ';')"
	done
	for e in posixaio libaio; do
		if grep -q "fio: engine $e not loadable\|failed to" "$w/fio_$e.out"; then
			skip "fio has no $e engine here"
			continue
		fi
		check "fio $e: the 32 MiB written are counted" test "$(j "$w/fio_$e.json" \
			't.get("posix_aio_write_bytes", 0) == 33554432 and m["bytes_written"]["max"] >= 3.355e7')" = True
	done
	if grep -q "io_uring" "$w/fio_io_uring.out" && ! grep -q "bytes" "$w/fio_io_uring.out"; then
		skip "io_uring unavailable here"
	else
		check "fio io_uring: the process's I/O is flagged partial" test "$(j "$w/fio_io_uring.json" \
			'"io_partial" in d["flags"] and s["io_uring_processes"] >= 1')" = True
		check "fio io_uring: the digest says the figures are partial" grep -q "I/O partial" "$w/fio_io_uring.txt"
	fi
else
	for _ in 1 2 3 4; do skip "no fio"; done
fi
done_testing
