#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The overhead benchmarks of lwm2 (`make bench` runs this):
#
#   bash bench/run.sh [RESULTS.json]
#
# Every figure is the same work with and without lwm2 in the same run:
# with/without blocks alternate and each side is the median of several
# repetitions, so drift of a shared, noisy machine cancels as far as it can.
# Prints a table (figure | lwm2 | baseline | added/ratio | target |
# verdict) and writes it as JSON (default bench/results.json) with each
# figure marked within or beyond its target (README.md).  A figure that
# cannot be measured here gets the row "not measured: <reason>".
#
# Environment: LWM2_BUILDDIR, LWM2_SRCDIR (default: the tree around this
# script), BENCH_DIR (the built bench programs; default LWM2_BUILDDIR/bench),
# MPICC, BENCH_QUICK=1 (few repetitions: a smoke test, not a measurement),
# BENCH_IMAGE (the container section's root file system),
# BENCH_ONLY="posix mpi view region ..." (run only these sections), BENCH_LAMMPS_STEPS.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=${LWM2_SRCDIR:-$(cd "$here/.." && pwd)}
build=${LWM2_BUILDDIR:-$src}
bdir=${BENCH_DIR:-$build/bench}
out=${1:-$bdir/results.json}
lib=$build/preload/.libs/liblwm2.so
lwm2=$build/digest/lwm2
mpicc=${MPICC:-mpicc}
quick=${BENCH_QUICK:-0}
only=${BENCH_ONLY:-}

work=$(mktemp -d /tmp/lwm2-bench.XXXXXX)
# the database section's MariaDB server (mariadb_stop) stopped too
trap '[ -z "${my_server:-}" ] || mariadb_stop; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rows=$work/rows.tsv
: >"$rows"
# Rank records of measured runs go here, one fresh directory per figure.
export LWM2_DIR=$work/rec
mkdir -p "$LWM2_DIR"
# lwm2 in the benchmark programs only when LD_PRELOAD says so.
unset LD_PRELOAD LWM2_MODE LWM2_PRINT LWM2_SAMPLE_HZ

log() { printf 'bench: %s\n' "$*" >&2; }
want() { [ -z "$only" ] || [[ " $only " == *" $1 "* ]]; }
# Repetitions: the full count, or a small one for a smoke test.
reps() { if [ "$quick" = 1 ]; then echo "$2"; else echo "$1"; fi; }

# row ID FIGURE LWM2 BASELINE ADDED UNIT TARGET [NOTE]
#   ADDED is a number in UNIT ("ns", "ms", "%", "KiB", ...); TARGET is the
#   largest acceptable ADDED in the same unit, or "-" for figures that are
#   reported without a target.  LWM2 and BASELINE are display strings.
row() {
	local id=$1 fig=$2 a=$3 b=$4 added=$5 unit=$6 target=$7 note=${8:-} verdict
	if [ "$target" = - ]; then
		verdict=info
	elif awk -v x="$added" -v t="$target" 'BEGIN { exit !(x + 0 <= t + 0) }'; then
		verdict=within
	else
		verdict=beyond
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$fig" "$a" "$b" "$added" "$unit" \
		"$target" "$verdict" "$note" >>"$rows"
}

# notrow ID FIGURE UNIT TARGET REASON
notrow() {
	printf '%s\t%s\t-\t-\t-\t%s\t%s\tnot measured: %s\t\n' "$1" "$2" "$3" "$4" "$5" >>"$rows"
	log "$1: not measured: $5"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Spread: smallest and largest value, "lo..hi".
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
calc() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
# The value after KEY in a line of "key value key value ...".
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); break } }'; }

# The note for a per-call figure: its spread, flagged when the spread is
# larger than the target (the figure is then not resolved on this machine).
spread_note() {
	if awk -v s="$1" -v t="$2" 'BEGIN { exit !(s + 0 > t + 0) }'; then
		echo "IQR $1 ns > target: not resolved under this load"
	else
		echo "IQR $1 ns"
	fi
}

fresh_dir() {
	rm -rf "$LWM2_DIR"
	mkdir -p "$LWM2_DIR"
}

if [ ! -r "$lib" ]; then
	log "no $lib: build the tree first (make)"
	exit 1
fi

# ---------------------------------------------------------------- POSIX I/O
# The targets of the per-process cost issue: stdio is a call into a
# buffer (a few instructions to count), the file calls are syscalls.
posix_targets() {
	case $1 in
	fwrite_* | fread_*) echo 5 ;;
	*) echo 25 ;;
	esac
}
posix_label() {
	case $1 in
	write_devnull) echo "write 1 B to /dev/null" ;;
	read_devzero) echo "read 1 B from /dev/zero" ;;
	write_file) echo "write 1 B to a file" ;;
	read_file) echo "read 1 B from a file" ;;
	pwrite_file) echo "pwrite 1 B to a file" ;;
	pread_file) echo "pread 1 B from a file" ;;
	fwrite_file) echo "fwrite 1 B to a file" ;;
	fread_file) echo "fread 1 B from a file" ;;
	esac
}
posix_cases="write_devnull read_devzero write_file read_file pwrite_file pread_file fwrite_file fread_file"

# posix_inproc MODE N ROUNDS: the wrappers against libc's own functions in
# one process, lwm2 in MODE (LWM2_MODE): rows posix_CASE for on,
# posix_MODE_CASE otherwise.  Light mode passes every call through
# untimed: its target is that of a call passed through, whatever the case.
posix_inproc() {
	local mode=$1 n=$2 r=$3 id=posix label='' c w l a iqr interposed t
	if [ "$mode" != on ]; then
		id=posix_$mode label=", --lwm2=$mode"
	fi
	log "POSIX: wrapper against libc's own function, one process, $r rounds of $n calls$label"
	fresh_dir
	if ! LD_PRELOAD=$lib LWM2_MODE=$mode "$bdir/posix_call" inproc "$n" "$r" >"$work/$id.in" 2>&1; then
		notrow "$id" "POSIX wrappers$label" ns 20 "posix_call failed: $(tail -n 1 "$work/$id.in")"
		return 1
	fi
	while read -r c _ w _ l _ a _ iqr _ interposed; do
		if [ "$mode" = on ]; then t=$(posix_targets "$c"); else t=5; fi
		if [ "$interposed" != 1 ]; then
			notrow "${id}_$c" "$(posix_label "$c"), in-process$label" ns "$t" "liblwm2.so does not wrap it"
			continue
		fi
		row "${id}_$c" "$(posix_label "$c"), in-process$label" "$w ns" "$l ns" "$a" ns "$t" "$(spread_note "$iqr" "$t")"
	done <"$work/$id.in"
}

bench_posix() {
	local n r k c line t
	# Many short blocks: on a shared machine the median of many paired
	# differences is steadier than a few long ones.
	n=$(reps 50000 20000)
	r=$(reps 41 3)
	posix_inproc on "$n" "$r" || return
	posix_inproc light "$n" "$r"

	# The plain program with and without LD_PRELOAD, alternating runs.
	k=$(reps 7 2)
	log "POSIX: the same program with and without LD_PRELOAD, $k runs each"
	for ((i = 0; i < k; i++)); do
		fresh_dir
		LD_PRELOAD=$lib "$bdir/posix_call" loop "$((2 * n))" 3 >>"$work/posix_with" || return
		"$bdir/posix_call" loop "$((2 * n))" 3 >>"$work/posix_without" || return
	done
	for c in $posix_cases; do
		w=$(awk -v c="$c" '$1 == c { print $3 }' "$work/posix_with" | median)
		l=$(awk -v c="$c" '$1 == c { print $3 }' "$work/posix_without" | median)
		row "posix_${c}_x" "$(posix_label "$c"), separate runs" "$w ns" "$l ns" \
			"$(calc "$w - $l")" ns "$(posix_targets "$c")" \
			"with $(awk -v c="$c" '$1 == c { print $3 }' "$work/posix_with" | range)"
	done

	# Instructions per call (callgrind): exact, whatever the load.
	if ! command -v valgrind >/dev/null; then
		notrow posix_ir "POSIX wrappers, instructions per call" Ir - "valgrind is not installed"
		return
	fi
	log "POSIX: instructions per call under callgrind"
	local ni=20000 iw il ilight
	for c in $posix_cases; do
		fresh_dir
		iw=$(LD_PRELOAD=$lib valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			--collect-atstart=no --toggle-collect=run_loop \
			"$bdir/posix_call" icount "$c" $ni wrapped 2>&1 | awk '/Collected :/ { print $NF }')
		il=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			--collect-atstart=no --toggle-collect=run_loop \
			"$bdir/posix_call" icount "$c" $ni libc 2>&1 | awk '/Collected :/ { print $NF }')
		if [ -z "$iw" ] || [ -z "$il" ]; then
			notrow "posix_ir_$c" "$(posix_label "$c"), instructions" Ir - "callgrind gave no count"
			continue
		fi
		row "posix_ir_$c" "$(posix_label "$c"), instructions/call" \
			"$(calc "$iw / $ni" 1) Ir" "$(calc "$il / $ni" 1) Ir" \
			"$(calc "($iw - $il) / $ni" 1)" Ir -
		# the same in light mode: the wrapper passes the call through
		ilight=$(LD_PRELOAD=$lib LWM2_MODE=light valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			--collect-atstart=no --toggle-collect=run_loop \
			"$bdir/posix_call" icount "$c" $ni wrapped 2>&1 | awk '/Collected :/ { print $NF }')
		# libc's function in the same preloaded process: the wrapper's
		# own instructions, apart from what libc's function itself runs
		# more in a process with a second thread (the heartbeat's: each
		# cancellation point then enables and disables cancellation).
		il=$(LD_PRELOAD=$lib valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			--collect-atstart=no --toggle-collect=run_loop \
			"$bdir/posix_call" icount "$c" $ni libc 2>&1 | awk '/Collected :/ { print $NF }')
		if [ -n "$il" ]; then
			row "posix_ir_own_$c" \
				"$(posix_label "$c"), instructions/call, against libc's in the same process" \
				"$(calc "$iw / $ni" 1) Ir" "$(calc "$il / $ni" 1) Ir" \
				"$(calc "($iw - $il) / $ni" 1)" Ir - "the wrapper's own; libc's multi-threaded path in both"
			[ -z "$ilight" ] ||
				row "posix_ir_own_light_$c" \
					"$(posix_label "$c"), instructions/call, against libc's in the same process, --lwm2=light" \
					"$(calc "$ilight / $ni" 1) Ir" "$(calc "$il / $ni" 1) Ir" \
					"$(calc "($ilight - $il) / $ni" 1)" Ir - "the wrapper passing the call through"
		fi
	done
}

# ---------------------------------------------------------------- MPI
mpirun_() {
	# Both ranks on this machine; vader (shared memory) as the transport.
	OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader} \
		OMPI_MCA_btl_vader_single_copy_mechanism=none \
		OMPI_MCA_mpi_yield_when_idle=1 \
		timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$@"
}

# mpi_inproc_row ID FIGURE FILE CASE TARGET: MPI_ (the wrapper) against the
# library's PMPI_ in one run, medians over the runs in FILE.
mpi_inproc_row() {
	local w p a iqr
	w=$(awk -v c="$4" '$1 == c { print $3 }' "$3" | median)
	p=$(awk -v c="$4" '$1 == c { print $5 }' "$3" | median)
	a=$(awk -v c="$4" '$1 == c { print $7 }' "$3" | median)
	iqr=$(awk -v c="$4" '$1 == c { print $9 }' "$3" | median)
	row "$1" "$2" "$w ns" "$p ns" "$a" ns "$5" "$(spread_note "$iqr" "$5")"
}

bench_mpi() {
	local n r k c w p
	if ! command -v mpirun >/dev/null || ! command -v "$mpicc" >/dev/null; then
		notrow mpi "MPI" ns 20 "no mpirun or mpicc"
		return
	fi
	if ! "$mpicc" -std=gnu11 -O2 -Wall -Wextra -I"$src/bench" -o "$work/mpi_call" "$src/bench/mpi_call.c" ||
		! "$mpicc" -std=gnu11 -O2 -Wall -Wextra -I"$src/bench" -o "$work/mpi_init" "$src/bench/mpi_init.c"; then
		notrow mpi "MPI" ns 20 "couldn't compile the MPI programs"
		return
	fi
	n=$(reps 50000 5000)
	r=$(reps 9 3)
	k=$(reps 3 1)
	log "MPI: MPI_ (wrapper) against the library's PMPI_ in one run, and runs with and without LD_PRELOAD, $k each"
	for ((i = 0; i < k; i++)); do
		fresh_dir
		mpirun_ -x LWM2_DIR -x LD_PRELOAD="$lib" "$work/mpi_call" "$n" "$r" >>"$work/mpi_with" 2>>"$work/mpi_err"
		mpirun_ "$work/mpi_call" "$n" "$r" >>"$work/mpi_without" 2>>"$work/mpi_err"
		mpirun_ -x LWM2_DIR -x LD_PRELOAD="$lib" -x LWM2_MODE=light "$work/mpi_call" "$n" "$r" \
			>>"$work/mpi_light" 2>>"$work/mpi_err"
	done
	for c in pingpong0 allreduce8; do
		local label t
		case $c in
		pingpong0) label="MPI 0-byte ping-pong (Send/Recv), per call" t=20 ;;
		allreduce8) label="MPI_Allreduce 8 B, per call" t=10 ;;
		esac
		if ! grep -q "^$c " "$work/mpi_with" || ! grep -q "^$c " "$work/mpi_without"; then
			notrow "mpi_$c" "$label" ns $t "mpirun failed: $(tail -n 1 "$work/mpi_err")"
			continue
		fi
		mpi_inproc_row "mpi_$c" "$label, MPI_ vs library's PMPI_, in-process" "$work/mpi_with" "$c" $t
		# light mode passes the call through: the target of a call passed through
		if grep -q "^$c " "$work/mpi_light" 2>/dev/null; then
			mpi_inproc_row "mpi_light_$c" "$label, MPI_ vs library's PMPI_, in-process, --lwm2=light" \
				"$work/mpi_light" "$c" 5
		else
			notrow "mpi_light_$c" "$label, --lwm2=light" ns 5 "mpirun failed: $(tail -n 1 "$work/mpi_err")"
		fi
		w=$(awk -v c="$c" '$1 == c { print $3 }' "$work/mpi_with" | median)
		p=$(awk -v c="$c" '$1 == c { print $3 }' "$work/mpi_without" | median)
		row "mpi_${c}_x" "$label, separate runs" "$w ns" "$p ns" "$(calc "$w - $p" 1)" ns $t \
			"with $(awk -v c="$c" '$1 == c { print $3 }' "$work/mpi_with" | range)"
	done

	bench_mpi_icount on
	bench_mpi_icount light

	k=$(reps 7 2)
	log "MPI: MPI_Init + MPI_Finalize, $k runs each"
	for ((i = 0; i < k; i++)); do
		fresh_dir
		mpirun_ -x LWM2_DIR -x LD_PRELOAD="$lib" "$work/mpi_init" 2>>"$work/mpi_err" |
			awk '{ print $4 }' | sort -g | tail -n 1 >>"$work/init_with"
		mpirun_ "$work/mpi_init" 2>>"$work/mpi_err" |
			awk '{ print $4 }' | sort -g | tail -n 1 >>"$work/init_without"
	done
	if [ ! -s "$work/init_with" ] || [ ! -s "$work/init_without" ]; then
		notrow mpi_init "MPI_Init + MPI_Finalize" ms 2 "mpirun failed"
		return
	fi
	w=$(median <"$work/init_with")
	p=$(median <"$work/init_without")
	row mpi_init "MPI_Init + MPI_Finalize (slowest rank)" "$(calc "$w / 1000" 2) ms" \
		"$(calc "$p / 1000" 2) ms" "$(calc "($w - $p) / 1000" 3)" ms 2 \
		"with $(range <"$work/init_with") us, without $(range <"$work/init_without") us"
}

# Instructions of the MPI wrappers themselves under callgrind: inclusive
# count of liblwm2's MPI_x (summed over the source files its inlined parts
# come from) less that of the MPI library's function it calls
# (so the library's polling while it waits for the peer drops out).
# bench_mpi_icount MODE: lwm2 in MODE (LWM2_MODE); rows mpi_ir_x for on,
# mpi_ir_MODE_x otherwise.
bench_mpi_icount() {
	local mode=$1 ni=5000 f c w l id=mpi_ir label=''
	if [ "$mode" != on ]; then
		id=mpi_ir_$mode label=", --lwm2=$mode"
	fi
	if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
		notrow "$id" "MPI wrappers, instructions per call$label" Ir - "valgrind is not installed"
		return
	fi
	log "MPI: instructions per call of the wrappers under callgrind$label"
	fresh_dir
	rm -f "$work"/cg.*
	mpirun_ -x LWM2_DIR -x LD_PRELOAD="$lib" -x LWM2_MODE="$mode" valgrind --tool=callgrind \
		--collect-atstart=no --toggle-collect=loop_icount --callgrind-out-file="$work/cg.%p" \
		"$work/mpi_call" icount $ni >/dev/null 2>>"$work/mpi_err"
	f=$(find "$work" -maxdepth 1 -name 'cg.*' | head -n 1)
	if [ -z "$f" ]; then
		notrow "$id" "MPI wrappers, instructions per call$label" Ir - "callgrind under mpirun failed"
		return
	fi
	callgrind_annotate --inclusive=yes "$f" >"$work/cg.txt" 2>/dev/null
	for c in Send Recv Allreduce; do
		# Inlined helpers show up as entries of their own header file with
		# the same function name: sum every liblwm2 entry of MPI_x.
		w=$(awk -v c=":MPI_$c" 'index($0, c " [") && /liblwm2/ { gsub(",", "", $1); s += $1; n++ } END { if (n) print s }' "$work/cg.txt")
		l=$(awk -v c=":PMPI_$c" 'index($0, c " [") && !/liblwm2/ { gsub(",", "", $1); print $1; exit }' "$work/cg.txt")
		if [ -z "$w" ] || [ -z "$l" ]; then
			notrow "${id}_$c" "MPI_$c wrapper, instructions/call$label" Ir - "no count for MPI_$c in callgrind's output"
			continue
		fi
		row "${id}_$c" "MPI_$c wrapper's own instructions/call (rank 0)$label" \
			"$(calc "$w / $ni" 1) Ir" "$(calc "$l / $ni" 1) Ir" "$(calc "($w - $l) / $ni" 1)" Ir - \
			"lwm2: MPI_$c inclusive; baseline: the library's PMPI_$c inclusive"
	done
}

# ---------------------------------------------------------------- processes
# process_env KIND: the environment of each kind of process start in env:
# the first measured one of a tree (a task: heartbeat and a record of its
# own at once), a command of a measured script (LWM2_PARENT names a
# measured parent: lazy start, the step summary), and the library loaded
# but off (what loading it costs).
process_env() {
	case $1 in
	task) env=() ;;
	command) env=(LWM2_PARENT=1.1) ;;
	load) env=(LWM2_MODE=off) ;;
	esac
}

# Instructions of one run of the trivial program, start to exit.
process_ir() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bdir/trivial" 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

bench_process() {
	local n r line
	n=$(reps 200 20)
	r=$(reps 11 3)
	log "process: start + exit of a trivial program, $r rounds of $n each way"
	fresh_dir
	# Three kinds of process (process_env)
	local kind env label
	for kind in task command load; do
		process_env $kind
		case $kind in
		task) label="process start + exit (trivial program, a task)" ;;
		command) label="process start + exit (trivial program, a command of a measured script)" ;;
		load) label="process start + exit (trivial program, library loaded, lwm2 off)" ;;
		esac
		if ! line=$(env "${env[@]}" "$bdir/spawn" "$n" "$r" "$lib" "$bdir/trivial"); then
			notrow "proc_start_$kind" "$label" ms 0.1 "spawn failed"
			continue
		fi
		row "proc_start_$kind" "$label" \
			"$(calc "$(field lwm2_us <<<"$line") / 1000" 3) ms" \
			"$(calc "$(field base_us <<<"$line") / 1000" 3) ms" \
			"$(calc "$(field added_us <<<"$line") / 1000" 3)" ms "$([ $kind = load ] && echo - || echo 0.1)" \
			"IQR $(calc "$(field iqr_us <<<"$line") / 1000" 3) ms; page faults $(field lwm2_faults <<<"$line") vs $(field base_faults <<<"$line")"
		if [ $kind = task ]; then
			local rw rb
			rw=$(field lwm2_rss_kib <<<"$line")
			rb=$(field base_rss_kib <<<"$line")
			row rss "peak RSS per process (trivial program)" "$rw KiB" "$rb KiB" \
				"$((rw - rb))" KiB 4096 "ru_maxrss from wait4"
		fi
	done
	# The floor: a library that does nothing, preloaded the same way.
	local empty=$work/empty_preload.so
	if ! ${CC:-cc} -shared -fPIC -O2 -o "$empty" "$here/empty_preload.c" 2>/dev/null; then
		notrow proc_start_empty "process start + exit (trivial program, an empty library preloaded)" \
			ms - "couldn't build bench/empty_preload.c with ${CC:-cc}"
		empty=
	elif line=$("$bdir/spawn" "$n" "$r" "$empty" "$bdir/trivial"); then
		row proc_start_empty "process start + exit (trivial program, an empty library preloaded)" \
			"$(calc "$(field lwm2_us <<<"$line") / 1000" 3) ms" \
			"$(calc "$(field base_us <<<"$line") / 1000" 3) ms" \
			"$(calc "$(field added_us <<<"$line") / 1000" 3)" ms - \
			"the floor of any preloaded tool; IQR $(calc "$(field iqr_us <<<"$line") / 1000" 3) ms; page faults $(field lwm2_faults <<<"$line") vs $(field base_faults <<<"$line")"
	fi
	# Why a start costs what it does, whatever the load: the instructions
	# of the whole process (the dynamic loader's included) under callgrind.
	if command -v valgrind >/dev/null; then
		local base_ir ir
		base_ir=$(process_ir)
		for kind in task command load; do
			process_env $kind
			ir=$(export LD_PRELOAD="$lib" "${env[@]}" && process_ir)
			if [ -n "$ir" ] && [ -n "$base_ir" ]; then
				row "proc_ir_$kind" "process start + exit, instructions ($kind)" "$ir Ir" "$base_ir Ir" \
					"$((ir - base_ir))" Ir - "callgrind, the dynamic loader included"
			fi
		done
	fi

	# The batch-script case: a shell that runs 1,000 short processes, the
	# shell itself preloaded too (as in a job's batch step).
	local k np t0 t1
	k=$(reps 5 1)
	np=$(reps 1000 100)
	log "process: a shell script running $np processes, $k runs each way"
	for ((i = 0; i < k; i++)); do
		for side in with without ${empty:+empty}; do
			fresh_dir
			t0=$(date +%s%N)
			case $side in
			with)
				LD_PRELOAD=$lib bash -c 'for ((j = 0; j < $1; j++)); do "$2"; done' _ "$np" "$bdir/trivial"
				find "$LWM2_DIR" -type f | wc -l >>"$work/script_files"
				;;
			empty)
				LD_PRELOAD=$empty bash -c 'for ((j = 0; j < $1; j++)); do "$2"; done' _ "$np" "$bdir/trivial"
				;;
			*)
				bash -c 'for ((j = 0; j < $1; j++)); do "$2"; done' _ "$np" "$bdir/trivial"
				;;
			esac
			t1=$(date +%s%N)
			echo $(((t1 - t0) / 1000)) >>"$work/script_$side"
		done
	done
	local w b e floor=
	w=$(median <"$work/script_with")
	b=$(median <"$work/script_without")
	if [ -n "$empty" ]; then
		e=$(median <"$work/script_empty")
		floor="; an empty library preloaded: ratio $(calc "$e / $b" 3)"
		row script_empty "shell script running $np short processes, an empty library preloaded" \
			"$(calc "$e / 1e6" 3) s" "$(calc "$b / 1e6" 3) s" "$(calc "($e - $b) / 1000" 1)" ms - \
			"the floor of any preloaded tool; ratio $(calc "$e / $b" 3); with $(range <"$work/script_empty") us"
	fi
	# Within 10 % of the same script without lwm2.
	row script "shell script running $np short processes" "$(calc "$w / 1e6" 3) s" \
		"$(calc "$b / 1e6" 3) s" "$(calc "($w - $b) / 1000" 1)" ms "$(calc "$b * 0.10 / 1000" 1)" \
		"ratio $(calc "$w / $b" 3); with $(range <"$work/script_with") us$floor"
	local nf
	nf=$(median <"$work/script_files")
	row script_files "files left in the step directory by $np short processes" "$nf" - \
		"$nf" files 4 "the shell's record and the summary of the short ones"
	own_cost_row "$np" "$(calc "($w - $b) / 1e6" 6)"
}

# The digest's own-cost estimate (lwm2(1), LWM2'S OWN COST) of the same
# script, from lwm2 run's digest, against the time lwm2 added to it in
# the runs above (the script runs one process at a time: its added wall
# time is lwm2's).
own_cost_row() {
	local np=$1 measured=$2 est
	if [ ! -x "$lwm2" ]; then
		notrow own_cost "own-cost estimate of the script" s - "no lwm2 command built"
		return
	fi
	fresh_dir
	LWM2_LIB=$lib "$lwm2" run --quiet --json "$work/own_cost.json" -- \
		bash -c 'for ((j = 0; j < $1; j++)); do "$2"; done' _ "$np" "$bdir/trivial"
	est=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["lwm2_cost"]["seconds"])' \
		"$work/own_cost.json" 2>/dev/null)
	if [ -z "$est" ]; then
		notrow own_cost "own-cost estimate of the script" s - "no lwm2_cost in lwm2 run's digest"
		return
	fi
	row own_cost "digest's own-cost estimate for the $np-process script, against the time lwm2 added" \
		"$est s" "$measured s" "$(calc "$est / ($measured > 0 ? $measured : 1e-9)" 2)" ratio - \
		"estimate over measured; the estimate's counts are exact, its unit costs the table in lwm2(1)"
}

# ---------------------------------------------------------------- containers
# The batch-script case inside a container: the same 1,000 short processes
# run by a shell inside Charliecloud's ch-run, with lwm2 reaching the
# container as a step makes it (the library and the step directory as
# inherited descriptors, LWM2_ROOT), and without; the image is the
# suite's Debian 12 image (tests/containers/image.sh bookworm), or
# BENCH_IMAGE.
bench_container() {
	local img=${BENCH_IMAGE:-/var/cache/lwm2-suite/images/bookworm} k np t0 t1 side w b root libid prog
	if ! command -v ch-run >/dev/null; then
		notrow container_script "shell script inside ch-run" s - "Charliecloud's ch-run is not installed"
		return 0
	fi
	if [ ! -x "$img/bin/bash" ]; then
		notrow container_script "shell script inside ch-run" s - "no image at $img (tests/containers/image.sh bookworm)"
		return 0
	fi
	k=$(reps 5 1)
	np=$(reps 1000 100)
	# The same trivial program as the row outside, where ch-run shows it:
	# the host's /tmp is bound inside, and so is $work.
	prog=/bin/true
	if cp "$bdir/trivial" "$work/trivial" &&
		USER=${USER:-$(id -un)} ch-run "$img" -- "$work/trivial" 2>/dev/null; then
		prog=$work/trivial
	fi
	root=$(stat -c '%d:%i' /)
	libid=$(stat -L -c '%d:%i' "$lib")
	log "container: a shell script running $np processes inside ch-run, $k runs each way"
	for ((i = 0; i < k; i++)); do
		for side in with without; do
			fresh_dir
			t0=$(date +%s%N)
			if [ $side = with ]; then
				LD_PRELOAD=$lib LWM2_ROOT=$root LWM2_LIB_FD=900:$libid \
					LWM2_DIR_FD=901:$(stat -c '%d:%i' "$LWM2_DIR") USER=${USER:-$(id -un)} \
					ch-run "$img" -- bash -c 'for ((j = 0; j < $1; j++)); do "$2"; done' _ "$np" "$prog" \
					900<"$lib" 901<"$LWM2_DIR"
			else
				USER=${USER:-$(id -un)} ch-run "$img" -- \
					bash -c 'for ((j = 0; j < $1; j++)); do "$2"; done' _ "$np" "$prog"
			fi
			t1=$(date +%s%N)
			echo $(((t1 - t0) / 1000)) >>"$work/container_$side"
		done
	done
	w=$(median <"$work/container_with")
	b=$(median <"$work/container_without")
	row container_script "shell script running $np short processes inside ch-run" \
		"$(calc "$w / 1e6" 3) s" "$(calc "$b / 1e6" 3) s" "$(calc "($w - $b) / 1000" 1)" ms \
		"$(calc "$b * 0.10 / 1000" 1)" \
		"ratio $(calc "$w / $b" 3) (the same script outside: the row above); $prog; with $(range <"$work/container_with") us"
}

# ---------------------------------------------------------------- sampling
bench_sampling() {
	local it k w b h hz10
	it=$(reps 300000000 30000000)
	k=$(reps 7 2)
	hz10=1000
	log "sampling: 2-thread compute loop, default rate and LWM2_SAMPLE_HZ=$hz10, $k runs each"
	for ((i = 0; i < k; i++)); do
		fresh_dir
		"$bdir/compute" "$it" >>"$work/samp_base"
		LD_PRELOAD=$lib "$bdir/compute" "$it" >>"$work/samp_def"
		LD_PRELOAD=$lib LWM2_SAMPLE_HZ=$hz10 "$bdir/compute" "$it" >>"$work/samp_10"
	done
	# CPU time (user + system of the process) is what the sampling handler
	# costs; wall time of 2 threads on 2 shared cores also carries the
	# other load of the machine.
	local f
	for f in cpu_s wall_s; do
		b=$(field $f <"$work/samp_base" | median)
		w=$(field $f <"$work/samp_def" | median)
		h=$(field $f <"$work/samp_10" | median)
		local what=${f%_s}
		row "samp_default_$what" "sampling, 2-thread compute, default rate (100 Hz), $what time" \
			"$w s" "$b s" "$(calc "($w / $b - 1) * 100" 2)" % "$([ $f = cpu_s ] && echo 0.5 || echo -)" \
			"with $(field $f <"$work/samp_def" | range) s, without $(field $f <"$work/samp_base" | range) s"
		row "samp_10x_$what" "sampling, 2-thread compute, 10x rate ($hz10 Hz), $what time" \
			"$h s" "$b s" "$(calc "($h / $b - 1) * 100" 2)" % - \
			"with $(field $f <"$work/samp_10" | range) s"
	done
}

# The fit block's memory figure costs no process anything: slurmstepd
# reads the step's and the job's cgroup peaks once a step and node, at
# step end (spank/cgroup.c), timed here on this machine's mount table.
bench_cgroup_peak() {
	local line
	if [ ! -x "$bdir/cgroup_peak" ]; then
		notrow cgroup_peak "step end: cgroup memory peaks read" us - "bench/cgroup_peak not built"
		return
	fi
	mkdir -p "$work/cgroup_peak"
	if ! line=$("$bdir/cgroup_peak" "$work/cgroup_peak" "$(reps 20000 2000)"); then
		notrow cgroup_peak "step end: cgroup memory peaks read" us - "cgroup_peak failed"
		return
	fi
	row cgroup_peak "step end: the step's and the job's cgroup memory peaks read (slurmstepd, once a step)" \
		"$(calc "$(field ns_per_call <<<"$line") / 1000" 1) us" - \
		"$(calc "$(field ns_per_call <<<"$line") / 1000" 1)" us - \
		"per node and step; nothing per process or per slice"
}

# ---------------------------------------------------------------- sizes
bench_sizes() {
	local line f sz
	log "sizes: rank records and job digests"
	fresh_dir
	LD_PRELOAD=$lib "$bdir/trivial"
	f=$(find "$LWM2_DIR" -type f -name '*.lwm2' | head -n 1)
	line=$("$bdir/merge" sizes)
	if [ -n "$f" ]; then
		sz=$(stat -c %s "$f")
		row rec_file "rank record file on disk, per process" "$sz B" - "$sz" B - \
			"$(du -k "$f" | cut -f1) KiB allocated; header $(field header_bytes <<<"$line") B + 2 slots of $(field slot_default_bytes <<<"$line") B"
	else
		notrow rec_file "rank record file per process" B - "the trivial program left no record"
	fi
	row rec_slice "record per time slice (sizeof struct lwm2_slice)" \
		"$(field slice_bytes <<<"$line") B" - "$(field slice_bytes <<<"$line")" B - \
		"fixed part $(field record_bytes <<<"$line") B"
	local procs nodes ppn=8
	for procs in 16 1000 10000; do
		nodes=$(((procs + ppn - 1) / ppn))
		if ! line=$("$bdir/merge" job "$nodes" "$ppn" 1); then
			notrow "digest_$procs" "job digest, $procs processes" B 16384 "merge job failed"
			continue
		fi
		local target=65534
		[ "$procs" = 10000 ] && target=16384
		row "digest_compact_$procs" "job digest, compact (AdminComment), $((nodes * ppn)) processes" \
			"$(field compact_bytes <<<"$line") B" - "$(field compact_bytes <<<"$line")" B "$target" \
			"$nodes nodes; uncut $(field compact_uncut_bytes <<<"$line") B"
		row "digest_full_$procs" "job digest, full form, $((nodes * ppn)) processes" \
			"$(field full_bytes <<<"$line") B" - "$(field full_bytes <<<"$line")" B - "with the slice grid"
	done
}

# ---------------------------------------------------------------- merges
bench_merges() {
	local line r nn
	r=$(reps 15 3)
	log "merges: node record from 256 rank records, job digests"
	rm -rf "$work/ranks"
	if line=$("$bdir/merge" ranks "$work/ranks" 256 10) &&
		line=$("$bdir/merge" node "$work/ranks" "$r"); then
		row node_merge "node record from 256 rank records (files, 10 slices)" \
			"$(field node_merge_ms <<<"$line") ms" - "$(field node_merge_ms <<<"$line")" ms 20 \
			"IQR $(field iqr_ms <<<"$line") ms; node record $(field node_json_bytes <<<"$line") B"
	else
		notrow node_merge "node record from 256 rank records" ms 20 "merge failed"
	fi
	for nn in 16 256 10000; do
		local rr=$r
		[ "$nn" = 10000 ] && rr=$(reps 5 1)
		if line=$("$bdir/merge" job "$nn" 1 "$rr"); then
			row "job_digest_$nn" "job digest from $nn node records (1 process each)" \
				"$(field build_ms <<<"$line") ms" - "$(field build_ms <<<"$line")" ms 1000 \
				"IQR $(field iqr_ms <<<"$line") ms; compact form +$(field compact_ms <<<"$line") ms"
		else
			notrow "job_digest_$nn" "job digest from $nn node records" ms 1000 "merge job failed"
		fi
	done
	bench_jobcomp
	bench_digest_file
	bench_spank_merge
}

bench_jobcomp() {
	local line
	line=$("$bdir/jc_enqueue" "$(reps 2000 200)" 5) || {
		notrow jobcomp "jobcomp_p_log_record" us 100 "jc_enqueue failed"
		return
	}
	# The glue logs its own time at debug level; a slurmctld log with
	# jobcomp/lwm2 loaded (BENCH_SLURMCTLD_LOG) gives the figure in place.
	local ctld=${BENCH_SLURMCTLD_LOG:-} m
	if [ -n "$ctld" ] && [ -r "$ctld" ] &&
		grep -q 'lwm2: log_record: job [0-9]* queued in [0-9]* ns' "$ctld"; then
		grep -o 'queued in [0-9]* ns' "$ctld" | awk '{ print $3 / 1000 }' >"$work/ctld_us"
		m=$(median <"$work/ctld_us")
		row jobcomp_ctld "jobcomp_p_log_record inside slurmctld ($(wc -l <"$work/ctld_us") jobs)" \
			"$m us" - "$m" us 100 "range $(range <"$work/ctld_us") us"
	else
		notrow jobcomp_ctld "jobcomp_p_log_record inside slurmctld" us 100 \
			"needs a slurmctld log with jobcomp/lwm2 at debug level (BENCH_SLURMCTLD_LOG); jobcomp_lwm2.so needs --with-slurm-source"
	fi
	row jobcomp "jobcomp_p_log_record: copy + enqueue (no Slurm)" \
		"$(calc "$(field log_record_ns <<<"$line") / 1000" 2) us" - \
		"$(calc "$(field log_record_ns <<<"$line") / 1000" 2)" us 100 \
		"p99 $(calc "$(field p99_ns <<<"$line") / 1000" 2) us, max $(calc "$(field max_ns <<<"$line") / 1000" 1) us"
}

bench_digest_file() {
	local n t0 t1 ms
	n=$(reps 100000 10000)
	if [ ! -x "$lwm2" ] || ! "$lwm2" digest --help 2>&1 | grep -q -- --file; then
		notrow digest_file "lwm2 digest --file" s 5 "the lwm2 command has no digest --file"
		return
	fi
	"$bdir/merge" log "$n" >"$work/digests.jsonl" || {
		notrow digest_file "lwm2 digest --file" s 5 "couldn't write the log"
		return
	}
	local size
	size=$(($(stat -c %s "$work/digests.jsonl") >> 20))
	# The site-statistics case: a table over every job of the log.
	for ((i = 0; i < $(reps 3 1); i++)); do
		t0=$(date +%s%N)
		"$lwm2" digest -f "$work/digests.jsonl" -a -S 2000-01-01 -E now --csv \
			-o JobID,User,mpi_time,posix_io_time,avg_threads >"$work/dfile_out"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$work/dfile_table"
	done
	ms=$(median <"$work/dfile_table")
	row digest_file "lwm2 digest --file, $n digests ($size MiB), 5-field table" \
		"$(calc "$ms / 1000" 2) s" - "$(calc "$ms / 1000" 2)" s 5 \
		"runs $(range <"$work/dfile_table") ms; $(($(wc -l <"$work/dfile_out") - 1)) rows"
	# The text digest with guidance, per job (1,000 of them).
	head -n 1000 "$work/digests.jsonl" >"$work/digests1k.jsonl"
	t0=$(date +%s%N)
	"$lwm2" digest -f "$work/digests1k.jsonl" -a -S 2000-01-01 -E now >/dev/null
	t1=$(date +%s%N)
	row digest_file_text "lwm2 digest --file, text digest, per job (1,000 jobs)" \
		"$(calc "($t1 - $t0) / 1e9" 2) ms" - "$(calc "($t1 - $t0) / 1e9" 2)" ms -
	# Site-wide statistics over the whole log: the same 5 s budget.
	for ((i = 0; i < $(reps 3 1); i++)); do
		t0=$(date +%s%N)
		"$lwm2" stats -f "$work/digests.jsonl" --by user >"$work/stats_out"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$work/stats_table"
	done
	ms=$(median <"$work/stats_table")
	row stats_file "lwm2 stats --file --by user, $n digests" \
		"$(calc "$ms / 1000" 2) s" - "$(calc "$ms / 1000" 2)" s 5 \
		"runs $(range <"$work/stats_table") ms"
	rm -f "$work/digests.jsonl"
}

bench_spank_merge() {
	# What slurmstepd adds at step end: merge the node's rank records and
	# write the node record munge-signed to the spool.
	# Signed by the machine's munged where it answers, else by a private
	# one in a scratch directory (as the unit tests sign: tests/munged.h).
	local line m='' sock=''
	if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && command -v munged >/dev/null &&
		m=$(mktemp -d /tmp/lwm2-bench-munged-XXXXXX); then
		# munged wants its socket's directory searchable by all
		chmod 755 "$m" &&
			dd if=/dev/urandom bs=1 count=1024 of="$m/key" 2>/dev/null && chmod 400 "$m/key" &&
			munged --key-file="$m/key" --socket="$m/socket" --pid-file="$m/pid" \
				--log-file="$m/log" --seed-file="$m/seed" 2>>"$work/stepend_err" &&
			sock=$m/socket
	fi
	if line=$(LWM2_BENCH_MUNGE_SOCKET=$sock "$bdir/merge" stepend "$work/ranks" "$work/spool" \
		"$(reps 9 3)" 2>>"$work/stepend_err"); then
		row spank_merge "step end: node merge + signed write, 256 rank records" \
			"$(field stepend_ms <<<"$line") ms" - "$(field stepend_ms <<<"$line")" ms 50 \
			"IQR $(field iqr_ms <<<"$line") ms; signing $(field sign_ms <<<"$line") ms"
	else
		notrow spank_merge "step end: node merge + signed write" ms 50 \
			"$(tail -n 1 "$work/stepend_err")"
	fi
	if [ -n "$m" ]; then
		[ -s "$m/pid" ] && kill "$(cat "$m/pid")" 2>/dev/null
		rm -rf "$m"
	fi
	return 0
}

# ---------------------------------------------------------------- burst
# Jobs ending together on the private cluster with jobcomp/lwm2
# (burst.sh): the log alone (Database=none) against the default SQLite
# file and a MariaDB database on the cluster's server.  Per side: the time
# from the last end until every digest is in the database, what arrived
# (none lost, none twice), and slurmctld's RPC statistics (sdiag, reset
# before each side) against the log alone's, as ratios.
burst_side_label() {
	case $1 in
	none) echo "log alone" ;;
	sqlite) echo "SQLite" ;;
	mariadb) echo "MariaDB" ;;
	esac
}

bench_burst() {
	local n side f b lost twice x y k
	n=$(reps 1000 100)
	log "burst: $n jobs, once for each database (the private cluster)"
	bash "$src/bench/burst.sh" "$build" "$work/burst" "$n" >"$work/burst.log" 2>&1
	b=$work/burst/none
	if [ ! -s "$b" ]; then
		notrow burst "burst of $n jobs" s 60 "$(tail -n 1 "$work/burst.log")"
		return
	fi
	for side in none sqlite mariadb; do
		f=$work/burst/$side
		if [ ! -s "$f" ]; then
			notrow "burst_$side" "burst of $n jobs, $(burst_side_label "$side")" s 60 \
				"$(cat "$work/burst/$side.why" 2>/dev/null || tail -n 1 "$work/burst.log")"
			continue
		fi
		lost=$(($(field jobs <"$f") - $(field log_tasks <"$f")))
		twice=$(($(field log_lines <"$f") - $(field log_tasks <"$f")))
		if [ "$side" != none ]; then
			lost=$((lost + $(field jobs <"$f") - $(field row_tasks <"$f")))
			twice=$((twice + $(field rows <"$f") - $(field row_tasks <"$f")))
			row "burst_${side}_catchup" "burst of $n jobs, $(burst_side_label "$side"): last end to every row" \
				"$(field db_s <"$f") s" "$(field log_s <"$f") s" \
				"$(calc "$(field db_s <"$f") - $(field log_s <"$f")" 1)" s 60 \
				"baseline: every line in its log; ends over $(field span_s <"$f") s, $(field waited_out <"$f") jobs still COMPLETING after LateRecordWait; the log alone: $(field log_s <"$b") s over $(field span_s <"$b") s; the worker's transactions: $(field db_groups <"$f") for $(field db_group_jobs <"$f") jobs"
		else
			row burst_none_log "burst of $n jobs, log alone: last end to every line" \
				"$(field log_s <"$f") s" - "$(field log_s <"$f")" s - \
				"ends over $(field span_s <"$f") s; $(field waited_out <"$f") jobs still COMPLETING after LateRecordWait"
		fi
		row "burst_${side}_arrived" "burst of $n jobs, $(burst_side_label "$side"): lost + twice" \
			"$(field log_lines <"$f") lines" "$(field jobs <"$f") jobs" "$((lost + twice))" jobs 0 \
			"rows $(field rows <"$f") ($(field row_tasks <"$f") tasks), log $(field log_lines <"$f") ($(field log_tasks <"$f") tasks); lost $lost, twice $twice; $(field db_messages <"$f") database lines in slurmctld's log"
		[ "$side" = none ] && continue
		# slurmctld's side of the same ends, against the log alone's
		for k in $(awk '$1 ~ /^rpc_.*_us$/ { print substr($1, 5, length($1) - 7) }' "$f"); do
			x=$(field "rpc_${k}_us" <"$f")
			y=$(field "rpc_${k}_us" <"$b")
			[ -n "$y" ] || continue
			row "burst_${side}_rpc_$k" "  $k, average time ($(burst_side_label "$side") / log alone)" \
				"$x us" "$y us" "$(calc "$x / ($y > 0 ? $y : 1)" 2)" ratio - \
				"count $(field "rpc_${k}_count" <"$f") / $(field "rpc_${k}_count" <"$b")"
		done
		for k in threads agent_queue dbd_queue; do
			x=$(field "${k}_max" <"$f")
			y=$(field "${k}_max" <"$b")
			row "burst_${side}_$k" "  slurmctld $(tr _ ' ' <<<"$k") (max of sdiag each 0.5 s)" \
				"$x" "$y" "$(calc "$x / ($y > 0 ? $y : 1)" 2)" ratio - \
				"$([ "$y" -gt 0 ] || echo "the log alone's 0 taken as 1")"
		done
	done
}

# ---------------------------------------------------------------- LAMMPS
# The classic Lennard-Jones melt, sized by -var x (16: 16,384 atoms).
lammps_input() {
	cat <<'EOF'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 ${x} 0 ${x} 0 ${x}
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 3.0 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 20 delay 0 check no
fix             1 all nve
thermo          500
run             ${steps}
EOF
}

bench_lammps() {
	local steps k t0 t1 how
	steps=${BENCH_LAMMPS_STEPS:-$(reps 800 100)}
	k=$(reps 3 1)
	if ! command -v lmp >/dev/null; then
		notrow lammps "LAMMPS, 2 ranks" % 0.5 "lmp is not installed (apt-get install lammps)"
		return
	fi
	if ! command -v mpirun >/dev/null || [ ! -x "$lwm2" ]; then
		notrow lammps "LAMMPS, 2 ranks" % 0.5 "no mpirun or no lwm2 command"
		return
	fi
	lammps_input >"$work/in.melt"
	local w b mpi procs calls=
	# The private cluster first (srun --lwm2 against --lwm2=off, plugins
	# from the build tree); mpirun with and without the library where the
	# cluster cannot be had.
	mkdir -p "$work/lc"
	log "LAMMPS: LJ melt, 16,384 atoms, $steps steps, 2 ranks, $k runs each way"
	if bash "$src/bench/lammps-cluster.sh" "$build" "$work/in.melt" "$steps" "$k" "$work/lc" \
		>"$work/lc.log" 2>&1 && [ -s "$work/lc/with" ]; then
		how="srun --lwm2=print vs --lwm2=off, private cluster"
		cp "$work/lc/with" "$work/lammps_with"
		cp "$work/lc/without" "$work/lammps_without"
		cp "$work/lc/digest.txt" "$work/lammps.txt"
		cp "$work/lc/watched" "$work/lammps_watched" 2>/dev/null || true
		cp "$work/lc/top.json" "$work/lammps_top.json" 2>/dev/null || true
		if [ -s "$work/lc/node.lwm2node" ] && command -v python3 >/dev/null; then
			# "lwm2-node 1 CRED_LEN RECORD_LEN", the credential, the record.
			calls=$(python3 -c '
import json, sys
b = open(sys.argv[1], "rb").read(); nl = b.index(b"\n"); h = b[:nl].split()
s = nl + 1 + int(h[2]) + 1; r = json.loads(b[s:s + int(h[3])])
c = dict(zip(r["counters"], r["totals"]["c"]))
print(c["mpi_p2p_calls"] + c["mpi_coll_calls"], c["mpi_p2p_bytes_sent"] + c["mpi_coll_bytes_sent"])' \
				"$work/lc/node.lwm2node" 2>/dev/null)
		fi
	else
		log "LAMMPS: no cluster run ($(tail -n 1 "$work/lc.log")): mpirun with and without lwm2"
		how="mpirun: lwm2 run + LD_PRELOAD vs plain"
		local mpienv=(env OMPI_MCA_btl="${OMPI_MCA_btl:-self,vader}"
			OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=1
			timeout 600 mpirun --allow-run-as-root --oversubscribe -np 2)
		local lmp=(lmp -in in.melt -var x 16 -var steps "$steps" -log none -screen none)
		for ((i = 0; i < k; i++)); do
			for side in with without; do
				fresh_dir
				t0=$(date +%s%N)
				if [ $side = with ]; then
					(cd "$work" && LWM2_LIB=$lib "$lwm2" run --quiet --json "$work/lammps.json" -- \
						"${mpienv[@]}" -x LD_PRELOAD -x LWM2_DIR "${lmp[@]}") 2>>"$work/lammps_err"
				else
					(cd "$work" && "${mpienv[@]}" "${lmp[@]}") 2>>"$work/lammps_err"
				fi
				t1=$(date +%s%N)
				echo $(((t1 - t0) / 1000000)) >>"$work/lammps_$side"
			done
		done
		if [ ! -s "$work/lammps.json" ]; then
			notrow lammps "LAMMPS, 2 ranks" % 0.5 "the measured run left no digest: $(tail -n 1 "$work/lammps_err")"
			return
		fi
		"$lwm2" render "$work/lammps.json" >"$work/lammps.txt" 2>&1
		calls="$(grep -oE '"mpi_(p2p|coll)_calls": ?[0-9]+' "$work/lammps.json" | awk -F: '{ s += $2 } END { print s + 0 }') $(grep -oE '"mpi_(p2p|coll)_bytes_sent": ?[0-9]+' "$work/lammps.json" | awk -F: '{ s += $2 } END { print s + 0 }')"
	fi
	w=$(median <"$work/lammps_with")
	b=$(median <"$work/lammps_without")
	mpi=$(awk -F'  +' '/Time in MPI calls, without/ { print $4; exit }' "$work/lammps.txt")
	procs=$(awk -F'  +' '/Number of processes/ { print $3; exit }' "$work/lammps.txt")
	local callnote=
	[ -n "$calls" ] && callnote=", ${calls% *} MPI calls, $(calc "${calls#* } / 1048576" 1) MiB sent"
	row lammps "LAMMPS LJ melt, 2 ranks, wall time ($how)" \
		"$(calc "$w / 1000" 2) s" "$(calc "$b / 1000" 2) s" "$(calc "($w / $b - 1) * 100" 2)" % 0.5 \
		"with $(range <"$work/lammps_with") ms, without $(range <"$work/lammps_without") ms; digest: processes $procs, MPI time avg $mpi$callnote"
	cp "$work/lammps.txt" "${out%.json}.lammps-digest.txt" 2>/dev/null || true
	# The same job again while its owner keeps `lwm2 top -d 2` open: each
	# frame asks every node's slurmd for the records so far (issue goal:
	# at most 1 % more wall time while watched).
	if [ -s "$work/lammps_watched" ]; then
		local v frames
		v=$(median <"$work/lammps_watched")
		frames=$(grep -c '"job_id"' "$work/lammps_top.json" 2>/dev/null || true)
		row lammps_watched "LAMMPS LJ melt, 2 ranks, watched by lwm2 top -d 2 vs unwatched" \
			"$(calc "$v / 1000" 2) s" "$(calc "$w / 1000" 2) s" "$(calc "($v / $w - 1) * 100" 2)" % 1 \
			"watched $(range <"$work/lammps_watched") ms, unwatched (--lwm2=print) $(range <"$work/lammps_with") ms; ${frames:-0} frames in the last watched run"
	elif [ "$how" != "${how#srun}" ]; then
		notrow lammps_watched "LAMMPS, 2 ranks, watched by lwm2 top" % 1 "no watched run ($(tail -n 1 "$work/lc.log"))"
	fi
}

# ---------------------------------------------------------------- output
print_table() {
	awk -F'\t' '
	function shown(v, u) { return v == "-" ? "-" : v " " u }
	function sgn(v) { return (v ~ /^-/ || v == "-") ? v : "+" v }
	BEGIN {
		printf "%-66s | %-14s | %-14s | %-12s | %-10s | %s\n", "figure", "lwm2", "baseline",
			"added/ratio", "target", "verdict"
		s = ""; for (i = 0; i < 140; i++) s = s "-"; print s
	}
	{
		tgt = $7 == "-" ? "-" : "<= " $7 " " $6
		added = $5 == "-" ? "-" : ($3 == $5 " " $6 && $4 == "-" ? $5 " " $6 : sgn($5) " " $6)
		printf "%-66s | %-14s | %-14s | %-12s | %-10s | %s%s\n", $2, $3, $4, added, tgt, $8,
			$9 == "" ? "" : "  (" $9 ")"
	}' "$rows"
}

write_json() {
	awk -F'\t' -v host="$(hostname)" -v date="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		-v cpus="$(nproc)" -v quick="$quick" '
	function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
	function num(s) { return s ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/ ? s : "null" }
	BEGIN { printf "{\"host\":%s,\"date\":%s,\"cpus\":%d,\"quick\":%s,\"figures\":[", q(host), q(date), cpus, quick == 1 ? "true" : "false" }
	{
		printf "%s\n{\"id\":%s,\"figure\":%s,\"lwm2\":%s,\"baseline\":%s,\"added\":%s,\"unit\":%s,\"target\":%s,\"verdict\":%s,\"note\":%s}",
			(NR > 1 ? "," : ""), q($1), q($2), q($3), q($4), num($5), q($6), num($7), q($8), q($9)
	}
	END { print "\n]}" }' "$rows" >"$out"
}

# ---------------------------------------------------------------- export
# A 1,000-node job of 60 slices (60,001 points) exported as the jobcomp
# export thread does it: the log line read, line protocol formatted in
# batches of 5,000, gzip-compressed, POSTed to a private InfluxDB 1.x
# (tests/integration/influx-lib.sh) where influxd is installed.  The
# target is the thread's CPU time; the wall time includes the engine's.
bench_export() {
	local line reps
	reps=$(reps 5 2)
	if [ ! -x "$bdir/export" ]; then
		notrow export_format "export of a 1,000-node x 60-slice job" ms 1000 "bench/export not built"
		return
	fi
	if line=$("$bdir/export" format 1000 60 "$reps"); then
		row export_format "export, 1,000 nodes x 60 slices: read + format (CPU)" \
			"$(field format_cpu_ms <<<"$line") ms" - "$(field format_cpu_ms <<<"$line")" ms 1000 \
			"$(field lines <<<"$line") lines, $(($(field text_bytes <<<"$line") >> 20)) MiB; wall $(field format_ms <<<"$line") ms"
	else
		notrow export_format "export, 1,000 nodes x 60 slices: read + format" ms 1000 "export format failed"
	fi
	# shellcheck source=tests/integration/influx-lib.sh
	. "$src/tests/integration/influx-lib.sh"
	if ! influx_have; then
		notrow export_send "export to InfluxDB, 1,000 nodes x 60 slices" ms 1000 \
			"influxd, influx or curl not installed (contrib/install-deps.sh)"
		return
	fi
	if ! influx_start "$work/influx"; then
		notrow export_send "export to InfluxDB, 1,000 nodes x 60 slices" ms 1000 "influxd did not start"
		return
	fi
	printf 'user=%s\npassword=%s\n' "$INFLUX_USER" "$INFLUX_PASSWORD" >"$work/influx.cred"
	chmod 600 "$work/influx.cred"
	if line=$("$bdir/export" send 1000 60 "$INFLUX_URL" "$work/influx.cred"); then
		row export_send "export to InfluxDB, 1,000 nodes x 60 slices: thread CPU" \
			"$(field cpu_ms <<<"$line") ms" - "$(field cpu_ms <<<"$line")" ms 1000 \
			"format + gzip + HTTP; $(field batches <<<"$line") batches, $(($(field wire_bytes <<<"$line") >> 10)) KiB on the wire"
		row export_rate "export to InfluxDB: lines/s (wall, the engine included)" \
			"$(field lines_per_s <<<"$line") lines/s" - "$(field lines_per_s <<<"$line")" lines/s - \
			"wall $(field wall_ms <<<"$line") ms for $(field lines <<<"$line") lines; local influxd $(influxd version 2>/dev/null | awk '{ print $2 }')"
	else
		notrow export_send "export to InfluxDB, 1,000 nodes x 60 slices" ms 1000 "export send failed"
	fi
	influx_stop
}

# ---------------------------------------------------------------- view
# One query of the view API (lwm2_view(3): lwm2_view_get, 2 metrics,
# gathered to all) against the bare MPI_Allgather of 2 doubles it makes,
# in the same run under liblwm2.so; the rank's read alone; and the query
# without lwm2 (it says "not measured" and returns).
bench_view() {
	local np n r line
	if ! command -v mpirun >/dev/null || ! command -v "$mpicc" >/dev/null; then
		notrow view "view query" ns - "no mpirun or mpicc"
		return
	fi
	if ! "$mpicc" -std=gnu11 -O2 -Wall -Wextra -I"$src/bench" -I"$src/preload/include" \
		-o "$work/view" "$src/bench/view.c" -lm; then
		notrow view "view query" ns - "couldn't compile bench/view.c"
		return
	fi
	n=$(reps 20000 2000)
	r=$(reps 7 3)
	for np in 2 4 16; do
		# 16 ranks share the machine's cores: each collective waits for
		# ranks that are not running, so fewer queries keep the row short.
		[ "$np" = 16 ] && n=$((n / 20))
		log "view: $n queries and $n bare collectives x $r rounds, $np ranks"
		fresh_dir
		line=$(OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader} OMPI_MCA_btl_vader_single_copy_mechanism=none \
			OMPI_MCA_mpi_yield_when_idle=1 timeout 300 mpirun --allow-run-as-root --oversubscribe \
			-np $np -x LWM2_DIR -x LD_PRELOAD="$lib" "$work/view" "$n" "$r" 2>>"$work/view_err" |
			grep '^view ')
		if [ "$(field measured <<<"$line")" != 1 ]; then
			notrow "view_query_$np" "view query, $np ranks" ns - "mpirun failed: $(tail -n 1 "$work/view_err")"
			continue
		fi
		row "view_query_$np" "view query (lwm2_view_get, 2 values to all), $np ranks" \
			"$(field query_ns <<<"$line") ns" "$(field bare_ns <<<"$line") ns" \
			"$(calc "$(field query_ns <<<"$line") - $(field bare_ns <<<"$line")" 1)" ns - \
			"$np ranks on $(nproc) cores"
		[ "$np" = 2 ] && row view_read "view read (lwm2_view_self, no MPI)" \
			"$(field read_ns <<<"$line") ns" "-" "$(field read_ns <<<"$line")" ns -
	done
	n=$(reps 20000 2000)
	line=$(OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader} OMPI_MCA_btl_vader_single_copy_mechanism=none \
		timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$work/view" "$n" "$r" \
		2>>"$work/view_err" | grep '^view ')
	if [ "$(field measured <<<"$line")" = 0 ]; then
		row view_query_off "view query without lwm2, 2 ranks" \
			"$(field query_ns <<<"$line") ns" "$(field bare_ns <<<"$line") ns" \
			"$(calc "$(field query_ns <<<"$line") - $(field bare_ns <<<"$line")" 1)" ns - \
			"baseline: the bare MPI_Allgather"
	fi
}

# ---------------------------------------------------------------- region
# A named region's begin/end pair (lwm2_region_begin/end of lwm2.h) under
# liblwm2.so against the same program without it, where the header's
# calls return at once (the baseline): one name, and a name snprintf'd
# into a buffer at another address each call (found by its hash, not its
# address).  Runs with and without alternate, swapping order each round;
# the added cost is the median of the per-round differences.  Then the
# instructions per pair under callgrind, exact whatever the load.
region_label() {
	case $1 in
	fixed) echo "region begin/end pair, one name" ;;
	moving) echo "region begin/end pair, a name at another address each call (snprintf)" ;;
	esac
}

bench_region() {
	local n r k c first w b d m iw ib spread note
	n=$(reps 200000 50000)
	r=$(reps 7 3)
	: >"$work/region_runs"
	log "region: $r runs each way of 5 x $n pairs per case"
	for k in $(seq "$r"); do
		for first in with without; do
			fresh_dir
			# order swaps every round: (with, without), then (without, with)
			if { [ "$first" = with ] && [ $((k % 2)) = 1 ]; } ||
				{ [ "$first" = without ] && [ $((k % 2)) = 0 ]; }; then
				LD_PRELOAD=$lib "$bdir/region" time "$n" 5 | sed "s/^/$k with /"
			else
				"$bdir/region" time "$n" 5 | sed "s/^/$k without /"
			fi
		done >>"$work/region_runs" || {
			notrow region "region begin/end pair" ns 50 "bench/region failed"
			return
		}
	done
	for c in fixed moving; do
		# lines: ROUND SIDE region CASE ns X measured M
		m=$(awk -v c="$c" '$2 == "with" && $4 == c && $8 != 1' "$work/region_runs" | wc -l)
		if [ "$m" != 0 ]; then
			notrow "region_$c" "$(region_label "$c")" ns 50 "liblwm2.so did not count the calls"
			continue
		fi
		w=$(awk -v c="$c" '$2 == "with" && $4 == c { print $6 }' "$work/region_runs" | median)
		b=$(awk -v c="$c" '$2 == "without" && $4 == c { print $6 }' "$work/region_runs" | median)
		# the per-round differences, their median and their spread
		awk -v c="$c" '$4 == c { v[$1, $2] = $6; k[$1] = 1 }
			END { for (i in k) print v[i, "with"] - v[i, "without"] }' "$work/region_runs" >"$work/region_d"
		d=$(median <"$work/region_d")
		spread=$(sort -g "$work/region_d" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f", hi - lo }')
		note="baseline: the header's calls without liblwm2.so (they return at once); differences $(range <"$work/region_d") ns"
		if awk -v s="$spread" 'BEGIN { exit !(s > 50) }'; then
			note="$note: not resolved under this load"
		fi
		row "region_$c" "$(region_label "$c")" "$w ns" "$b ns" "$(calc "$d")" ns 50 "$note"
	done
	if ! command -v valgrind >/dev/null; then
		notrow region_ir "region begin/end pair, instructions" Ir - "valgrind is not installed"
		return
	fi
	log "region: instructions per pair under callgrind"
	n=20000
	for c in fixed moving; do
		fresh_dir
		iw=$(LD_PRELOAD=$lib valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			--collect-atstart=no --toggle-collect=run_pairs \
			"$bdir/region" icount $n "$c" 2>&1 | awk '/Collected :/ { print $NF }')
		ib=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			--collect-atstart=no --toggle-collect=run_pairs \
			"$bdir/region" icount $n "$c" 2>&1 | awk '/Collected :/ { print $NF }')
		if [ -z "$iw" ] || [ -z "$ib" ]; then
			notrow "region_ir_$c" "$(region_label "$c"), instructions" Ir - "callgrind gave no count"
			continue
		fi
		row "region_ir_$c" "$(region_label "$c"), instructions/pair" \
			"$(calc "$iw / $n" 1) Ir" "$(calc "$ib / $n" 1) Ir" "$(calc "($iw - $ib) / $n" 1)" Ir - \
			"callgrind; baseline: the header's calls without liblwm2.so"
	done
}

# The central database (lwm2 db, lwm2 stats --db), on SQLite and on
# MariaDB: a log of N digests imported; its size per job; the worker's
# follow, in a burst's groups and one job per transaction; a forget of
# the log's jobs imported again; then a synthetic year made in SQL from
# the imported rows (users, accounts and applications spread, end times
# over 12 months) and the site's questions over it.
bench_db() {
	local n y big t0 t1
	n=$(reps 100000 10000)
	y=$(reps 1000000 100000)
	if [ ! -x "$lwm2" ] || ! "$lwm2" db --help >/dev/null 2>&1; then
		notrow db_import "lwm2 db import" s 50 "the lwm2 command has no db"
		return
	fi
	if ! command -v sqlite3 >/dev/null; then
		notrow db_import "lwm2 db import" s 50 "sqlite3 not installed (it makes the synthetic year)"
		return
	fi
	"$bdir/merge" log "$n" >"$work/dblog.jsonl" || {
		notrow db_import "lwm2 db import" s 50 "couldn't write the log"
		return
	}
	# the log on disk before the import is timed, as a site's logs are:
	# else the kernel writes its hundreds of MiB back during the import
	sync
	db_rows db "" "$work/bench.db" "$work/follow.db" "$n" "$y"
	bench_db_mariadb "$n" "$y"
	# the portal's pages over a year of 10,000,000 jobs: SQLite's year
	# grown by more copies (the figures above stay those of $y jobs)
	big=$(reps 10000000 1000000)
	t0=$(date +%s%N)
	if [ -s "$work/db_by_user" ] && synthetic_year "$work/bench.db" "$n" $((y / n + 1)) "$big"; then
		t1=$(date +%s%N)
		log "db: the year grown to $(db_sql "$work/bench.db" 'SELECT count(*) FROM job') jobs in $(calc "($t1 - $t0) / 1e9" 1) s"
		bench_serve_pages "$work/bench.db" "$big"
	else
		notrow serve_jobs "lwm2 serve pages" ms 500 "couldn't grow the synthetic year"
	fi
	rm -f "$work/dblog.jsonl" "$work/bench.db"* "$work/follow.db"*
}

# db_rows P LABEL DB FOLLOWDB N Y: the rows P_import, P_size, P_follow,
# P_summarize and P_stats_* of one database, DB a SQLite file or a
# MariaDB address (FOLLOWDB another of the same kind); the answer of
# `stats --by user` over the year is left in $work/P_by_user.
db_rows() {
	local p=$1 label=$2 db=$3 follow=$4 n=$5 y=$6 secs t cpu stall
	db_drop "$db"
	t=$(took_cpu /dev/null "$lwm2" db import -q --db "$db" "$work/dblog.jsonl") || {
		notrow "${p}_import" "lwm2 db import$label" s 50 "the import failed"
		return 1
	}
	read -r secs cpu stall <<<"$t"
	row "${p}_import" "lwm2 db import, $n digests (s per 1,000,000 jobs)$label" \
		"$(calc "$n / $secs" 0) jobs/s" - "$(calc "$secs * 1000000 / $n" 1)" s 50 \
		"target: 20,000 jobs/s or more; the log's $(($(stat -c %s "$work/dblog.jsonl") >> 20)) MiB parsed; $(calc "$cpu * 1000000 / $n" 1) us of CPU a job (user and system)${stall:+; other work kept it from a CPU $stall ms (PSI)}"
	case $db in
	mysql://*) mariadb_size_row "$p" "$label" "$db" "$n" ;;
	*) db_size_row "$p" "$label" "$db" "$n" "$(stat -c %s "$db")" "" ;;
	esac
	db_follow_row "$p" "$label" "$follow"
	db_forget_row "$p" "$label" "$follow" "$n"
	secs=$(took /dev/null synthetic_year_of "$db" "$n" 1 "$y") || {
		notrow "${p}_year" "lwm2 stats --db over a year$label" s 1 "couldn't make the synthetic year"
		return 1
	}
	log "$p: synthetic year of $(db_sql "$db" 'SELECT count(*) FROM job') jobs made in $(calc "$secs" 1) s"
	db_questions "$p" "$label" "$db" "$y"
}

# took OUT CMD...: CMD run with its output to OUT; prints the seconds it
# took (and fails as CMD fails)
took() {
	local out=$1 t0 t1
	shift
	t0=$(date +%s%N)
	"$@" >"$out" || return
	t1=$(date +%s%N)
	calc "($t1 - $t0) / 1e9" 6
}

# took_cpu OUT CMD...: as took, and after the seconds the CPU seconds
# (user and system) CMD used and, where the kernel tells (PSI), the ms in
# which a task of the machine waited for a CPU: the import's figure on a
# machine shared with other work moves with that work, its CPU a job
# hardly.  Run in a subshell of its own ($(...)): times counts that
# subshell's children.
took_cpu() {
	local out=$1 s c0 cpu
	shift
	c0=$(cpu_stall_us)
	# times: this shell's own CPU times, then its children's
	# ("0m0.780s 0m0.130s"), written from this shell (a command
	# substitution's subshell has no children of its own yet)
	times >"$work/times"
	s=$(took "$out" "$@") || return
	times >>"$work/times"
	cpu=$(awk 'NR % 2 == 0 { gsub(/[ms]/, " "); c[NR] = $1 * 60 + $2 + $3 * 60 + $4 }
		END { printf "%.3f", c[4] - c[2] }' "$work/times")
	echo "$s $cpu $(
		c1=$(cpu_stall_us)
		[ -n "$c0" ] && [ -n "$c1" ] && echo $(((c1 - c0) / 1000))
	)"
}

# cpu_stall_us: the kernel's total of µs in which some task waited for a
# CPU (/proc/pressure/cpu), nothing where it does not tell
cpu_stall_us() {
	[ -r /proc/pressure/cpu ] || return 0
	awk '/^some/ { for (i = 2; i <= NF; i++) if ($i ~ /^total=/) print substr($i, 7) }' /proc/pressure/cpu 2>/dev/null
}

# db_sql DB SQL: the answer, tab-separated, of a SQLite file or of a
# database of the bench's MariaDB server (mysql://...)
db_sql() {
	case $1 in
	mysql://*) my_sql "$(db_name "$1")" -e "$2" ;;
	*) sqlite3 -separator $'\t' "$1" "$2" ;;
	esac
}

# db_drop DB: the database made afresh by the next write
db_drop() {
	case $1 in
	mysql://*) my_sql -e "DROP DATABASE IF EXISTS $(db_name "$1")" ;;
	*) rm -f "$1"* ;;
	esac
}

# db_name URL: the database's name in mysql://USER@HOST/NAME?OPTIONS
db_name() {
	local name=${1#*://*/}
	echo "${name%%\?*}"
}

# db_size_row P LABEL DB N SIZE WHERE: SIZE bytes of DB per job
db_size_row() {
	local p=$1 label=$2 db=$3 n=$4 size=$5 where=${6:+ $6} kept
	kept=$(db_sql "$db" "SELECT coalesce(sum(length(line)), 0), coalesce(sum(length(grid)), 0) FROM job_text")
	row "${p}_size" "database size per job (rows, indexes, metrics, log line)$label" "$((size / n)) B" - \
		"$((size / n))" B 2048 "$n jobs, $((size >> 20)) MiB$where; of each job's $((($(stat -c %s "$work/dblog.jsonl") / n))) B line kept $((${kept%$'\t'*} / n)) B without its grid and $((${kept#*$'\t'} / n)) B of grid, zstd"
}

# db_follow_row P LABEL DB: jobcomp's follow of its log into DB, made
# afresh for each row: the worker's groups in a burst (P_follow: the
# issue's burst of 1,000 jobs a minute, 16.7 a second, gives the lines of
# the worker's quarter of a second of grouping 4 jobs a transaction), and
# a quiet site's lone jobs (P_follow_one); the figure is the mean a job,
# the WAL's checkpoints included
db_follow_row() {
	local p=$1 label=$2 db=$3 line group what id target
	for group in 4 1; do
		case $group in
		1) id=${p}_follow_one target=- what="one job per transaction (a quiet site)" ;;
		*) id=${p}_follow target=100 what="a burst, $group jobs per transaction" ;;
		esac
		if [ ! -x "$bdir/db_follow" ]; then
			notrow "$id" "jobcomp's follow of its log, $what$label" us "$target" "db_follow not built"
			continue
		fi
		db_drop "$db"
		rm -f "$work/${p}_follow.log"
		# what the import before wrote reaches the disk first, not
		# during the follow
		sync
		line=$("$bdir/db_follow" "$work/dblog.jsonl" "$(reps 2000 200)" "$db" "$work/${p}_follow.log" "$group")
		if [ -z "$line" ]; then
			notrow "$id" "jobcomp's follow of its log, $what$label" us "$target" "db_follow failed"
			continue
		fi
		row "$id" "jobcomp's follow of its log, $what$label" \
			"$(field mean_us <<<"$line") us" - "$(field mean_us <<<"$line")" us "$target" \
			"mean of $(field jobs <<<"$line") jobs; per transaction a job's share: median $(field follow_us <<<"$line") us, p99 $(field p99_us <<<"$line") us; in the worker thread, not slurmctld's"
	done
}

# db_forget_row P LABEL DB N: `lwm2 db forget` of the log's N jobs,
# imported afresh into DB (the follow's database) and their days summed
# up before (untimed): the jobs it removes a second
db_forget_row() {
	local p=$1 label=$2 db=$3 n=$4 secs
	db_drop "$db"
	if ! "$lwm2" db import -q --db "$db" "$work/dblog.jsonl" >/dev/null ||
		! "$lwm2" db summarize --db "$db" >/dev/null; then
		notrow "${p}_forget" "lwm2 db forget$label" s - "the import before it failed"
		return
	fi
	secs=$(took /dev/null "$lwm2" db forget --db "$db" --before @1704067200) || {
		notrow "${p}_forget" "lwm2 db forget$label" s - "the forget failed"
		return
	}
	row "${p}_forget" "lwm2 db forget, $n jobs (s per 1,000,000 jobs)$label" \
		"$(calc "$n / $secs" 0) jobs/s" - "$(calc "$secs * 1000000 / $n" 1)" s - \
		"their rows, metrics, lines and nodes, 2,000 jobs a transaction and 20 ms between (jobcomp's follow writes there); $(db_sql "$db" 'SELECT count(*) FROM job') jobs left"
	db_drop "$db"
}

# db_questions P LABEL DB Y: the year's days and months summed up once,
# then the site's questions over it
db_questions() {
	local p=$1 label=$2 db=$3 y=$4 secs same accts q
	# once (lwm2 db summarize; a reader does it for the days and months
	# it needs, and a job added marks its day and month for it again)
	secs=$(took /dev/null "$lwm2" db summarize --db "$db") || {
		notrow "${p}_summarize" "lwm2 db summarize$label" s - "the summaries failed"
		return 1
	}
	row "${p}_summarize" "lwm2 db summarize, a year of $y jobs (once)$label" \
		"$(calc "$secs" 1) s" - "$(calc "$secs" 1)" s - \
		"$(db_sql "$db" 'SELECT count(*) FROM day') days, $(db_sql "$db" 'SELECT count(*) FROM summary') summaries; $(db_sql "$db" 'SELECT count(*) FROM month') months, $(db_sql "$db" 'SELECT count(*) FROM month_summary') summaries"
	# the same question through the rows (a selection of every account
	# reads them): the summaries' figures must be theirs
	accts=$(db_sql "$db" "SELECT group_concat(DISTINCT account) FROM job")
	secs=$(took "$work/${p}_rows_out" "$lwm2" stats --db "$db" -A "$accts" --by user) || secs=
	"$lwm2" stats --db "$db" --by user >"$work/${p}_by_user"
	if [ -n "$secs" ] && cmp -s "$work/${p}_rows_out" "$work/${p}_by_user"; then
		same="the same output as the rows' ($(calc "$secs" 1) s)"
	else
		same="DIFFERENT from the rows' output"
	fi
	# the same synthetic rows in another database: the same answers
	if [ "$p" != db ] && [ -s "$work/db_by_user" ]; then
		if cmp -s "$work/db_by_user" "$work/${p}_by_user"; then
			same="$same and as SQLite's"
		else
			same="$same; DIFFERENT from SQLite's output"
		fi
	fi
	for q in "--by user" "--by account" "--by app"; do
		# shellcheck disable=SC2086 # the question's words
		secs=$(took /dev/null "$lwm2" stats --db "$db" $q) || {
			notrow "${p}_stats_${q#--by }" "lwm2 stats --db $q$label" s 1 "lwm2 stats failed"
			continue
		}
		row "${p}_stats_${q#--by }" "lwm2 stats --db $q, a year of $y jobs$label" \
			"$(calc "$secs" 2) s" - "$(calc "$secs" 2)" s 1 \
			"from the monthly summaries (daily at the edges); $same"
	done
	secs=$(took /dev/null "$lwm2" stats --db "$db" -u u7 -S 2024-03-01 -E 2024-03-31T23:59:59 --by app) || {
		notrow "${p}_stats_user_month" "lwm2 stats --db, one user's month$label" s 0.1 "lwm2 stats failed"
		return 1
	}
	row "${p}_stats_user_month" "lwm2 stats --db, one user's month, $y jobs$label" \
		"$(calc "$secs" 3) s" - "$(calc "$secs" 3)" s 0.1 \
		"through the (user, end) index"
}

# synthetic_year_of DB N FIRST TOTAL: synthetic_year in DB's dialect
synthetic_year_of() {
	case $1 in
	mysql://*) synthetic_year_mariadb "$@" ;;
	*) synthetic_year "$@" ;;
	esac
}

# year_columns COLS: the job table's columns COLS as the copy c.i of a
# row has them (SQL that SQLite and MariaDB with PIPES_AS_CONCAT read
# alike): other ids, users (1,000), accounts (50), applications (200),
# end times over 2024
year_columns() {
	sed -e 's/\bjob_id\b/job_id + c.i * 10000000/' \
		-e 's/\bend_time\b/1704067200 + ((job_id * 7919 + c.i * 104729) % 31536000)/' \
		-e "s/\buser_name\b/'u' || ((job_id * 31 + c.i) % 1000)/" \
		-e "s/\baccount\b/'a' || ((job_id + c.i) % 50)/" \
		-e "s/\bapp\b/'app' || ((job_id * 13 + c.i) % 200)/" <<<"$1"
}

# synthetic_year DB N FIRST TOTAL: the N imported rows of DB copied as
# copies FIRST, FIRST + 1, ... until the job table has TOTAL rows
# (year_columns), with one node each of 4,000 (job_node).  The secondary
# indexes are dropped and made again after: a sorted build of each is
# minutes faster than millions of scattered inserts.
synthetic_year() {
	local db=$1 n=$2 first=$3 total=$4 cols idx drop have k
	cols=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM pragma_table_info('job') WHERE name != 'id'")
	idx=$(sqlite3 "$db" "SELECT group_concat(sql, '; ') FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('job', 'job_node') AND sql IS NOT NULL")
	drop=$(sqlite3 "$db" "SELECT group_concat('DROP INDEX ' || name, '; ') FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('job', 'job_node') AND sql IS NOT NULL")
	have=$(sqlite3 "$db" "SELECT count(*) FROM job")
	[ "$total" -gt "$have" ] || return 0
	k=$((first + (total - have + n - 1) / n))
	sqlite3 "$db" "PRAGMA cache_size = -2000000; $drop;
		WITH RECURSIVE c(i) AS (SELECT $first UNION ALL SELECT i + 1 FROM c WHERE i < $k)
		INSERT INTO job ($cols) SELECT $(year_columns "$cols") FROM c, job
			WHERE job.id <= $n LIMIT $((total - have));
		INSERT INTO job_node (node, job) SELECT 'n' || (id % 4000), id FROM job WHERE id > $have
			ORDER BY 1, 2;
		$idx;
		INSERT INTO day SELECT end_time / 86400, count(*), 0 FROM job WHERE end_time > 0
			GROUP BY 1 ON CONFLICT (day) DO UPDATE SET jobs = excluded.jobs, summarized = 0;
		ANALYZE;" >/dev/null
}

# synthetic_year_mariadb DB N FIRST TOTAL: synthetic_year's rows on
# MariaDB, the copy counter from its sequence engine (seq_FIRST_to_K) and
# the copies in SQLite's order (copy by copy, each in the rows' order),
# so that the two years are the same jobs
synthetic_year_mariadb() {
	local db=$1 n=$2 first=$3 total=$4 cols have k
	cols=$(db_sql "$db" "SELECT group_concat(column_name ORDER BY ordinal_position SEPARATOR ', ') FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'job' AND column_name != 'id'")
	have=$(db_sql "$db" "SELECT count(*) FROM job")
	[ "$total" -gt "$have" ] || return 0
	k=$((first + (total - have + n - 1) / n))
	db_sql "$db" "SET SESSION sql_mode = CONCAT(@@sql_mode, ',PIPES_AS_CONCAT');
		INSERT INTO job ($cols) SELECT $(year_columns "$cols")
			FROM (SELECT seq AS i FROM seq_${first}_to_$k) c, job
			WHERE job.id <= $n ORDER BY c.i, job.id LIMIT $((total - have));
		INSERT INTO job_node (node, job) SELECT 'n' || (id % 4000), id FROM job WHERE id > $have
			ORDER BY 1, 2;
		INSERT INTO day SELECT end_time DIV 86400, count(*), 0 FROM job WHERE end_time > 0
			GROUP BY 1 ON DUPLICATE KEY UPDATE jobs = VALUES(jobs), summarized = 0;
		ANALYZE TABLE job, job_node, day;" >/dev/null
}

# ---------------------------------------------------------------- MariaDB
# The database's rows on MariaDB (ids db_mariadb_*): a private server
# started here (mariadbd on a unix socket under $work, no network; its
# configuration the defaults but for the sizes below), the same log, the
# same synthetic year, the same questions; stopped at the end.
my_server=
my_dir=$work/my

bench_db_mariadb() {
	local n=$1 y=$2 why
	local -x PATH=$PATH:/usr/sbin HOME=$my_dir # the client's option files are the machine's
	why=$(mariadb_missing)
	if [ -z "$why" ] && ! mariadb_start; then
		why="mariadbd did not start: $(tail -n 1 "$my_dir/mariadb.log" 2>/dev/null)"
	fi
	if [ -n "$why" ]; then
		mariadb_notrows "$why"
	else
		db_rows db_mariadb ", MariaDB" "mysql://root@localhost/lwm2bench?socket=$my_dir/sock" \
			"mysql://root@localhost/lwm2follow?socket=$my_dir/sock" "$n" "$y"
	fi
	mariadb_stop
}

# mariadb_missing: why the MariaDB rows cannot be measured here, if so
mariadb_missing() {
	local c
	for c in mariadbd mariadb-install-db mariadb; do
		command -v "$c" >/dev/null || {
			echo "$c is not installed (the Debian package mariadb-server)"
			return
		}
	done
	if "$lwm2" stats --db mysql://x@localhost/x 2>&1 | grep -q "built without MariaDB"; then
		echo "lwm2 built without MariaDB (configure found no libmariadb-dev)"
	fi
}

mariadb_notrows() {
	local q
	notrow db_mariadb_import "lwm2 db import, MariaDB" s 50 "$1"
	notrow db_mariadb_size "database size per job, MariaDB" B 2048 "$1"
	notrow db_mariadb_follow "jobcomp's follow of its log, a burst, MariaDB" us 100 "$1"
	notrow db_mariadb_follow_one "jobcomp's follow of its log, one job per transaction, MariaDB" us - "$1"
	notrow db_mariadb_forget "lwm2 db forget, MariaDB" s - "$1"
	notrow db_mariadb_summarize "lwm2 db summarize, MariaDB" s - "$1"
	for q in user account app; do
		notrow "db_mariadb_stats_$q" "lwm2 stats --db --by $q, MariaDB" s 1 "$1"
	done
	notrow db_mariadb_stats_user_month "lwm2 stats --db, one user's month, MariaDB" s 0.1 "$1"
}

# mariadb_size_row P LABEL DB N: db_size_row of InnoDB's pages of DB's
# tables (data_length + index_length, the statistics made afresh: the
# server updates them in the background), the pages' free space counted
mariadb_size_row() {
	local db=$3 tables size files
	tables=$(db_sql "$db" "SELECT group_concat(table_name) FROM information_schema.tables WHERE table_schema = DATABASE()")
	db_sql "$db" "ANALYZE TABLE $tables" >/dev/null
	size=$(db_sql "$db" "SELECT sum(data_length + index_length) FROM information_schema.tables WHERE table_schema = DATABASE()")
	files=$(du -sb "$my_dir/data/$(db_name "$db")" | cut -f 1)
	db_size_row "$1" "$2" "$db" "$4" "$size" \
		"in InnoDB's pages (data_length + index_length, free space in the pages counted; its files $((files >> 20)) MiB)"
}

# my_sql ARGS...: the mariadb client on the bench's server, as root
my_sql() {
	timeout 600 mariadb --no-defaults --socket="$my_dir/sock" -uroot -B -N -r "$@"
}

# mariadb_start: the server on a new data directory, answering within 60 s
mariadb_start() {
	local own deadline=$((SECONDS + 60))
	own=(--no-defaults --user="$(id -un)" --datadir="$my_dir/data")
	mkdir -p "$my_dir/data"
	mariadb-install-db "${own[@]}" --auth-root-authentication-method=normal --skip-test-db \
		--skip-name-resolve >"$my_dir/mariadb.log" 2>&1 || return 1
	mariadbd "${own[@]}" --socket="$my_dir/sock" --skip-networking --skip-name-resolve \
		--pid-file="$my_dir/mariadb.pid" --log-error="$my_dir/mariadb.log" --tmpdir="$my_dir" \
		--innodb-buffer-pool-size=1G --innodb-log-file-size=256M </dev/null >/dev/null 2>&1 &
	my_server=$!
	until my_sql -e 'SELECT 1' >/dev/null 2>&1; do
		kill -0 "$my_server" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

# mariadb_stop: the server stopped (10 s, then killed), its directory gone
mariadb_stop() {
	if [ -n "$my_server" ] && kill -0 "$my_server" 2>/dev/null; then
		kill "$my_server"
		for _ in $(seq 100); do
			kill -0 "$my_server" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$my_server" 2>/dev/null
		wait "$my_server" 2>/dev/null
	fi
	my_server=
	rm -rf "$my_dir"
}

# The portal's pages (lwm2 serve) over the synthetic year: a month of it
# (March), as an administrator and as one user, without HTTP and Slurm;
# then a load of 100 clients at once for 60 s (BENCH_QUICK: 10 s).
bench_serve_pages() {
	local db=$1 y=$2 job line kind ms secs owner
	if [ ! -x "$bdir/serve_pages" ]; then
		notrow serve_jobs "lwm2 serve pages" ms 500 "serve_pages not built"
		return
	fi
	job=$(sqlite3 "$db" "SELECT job_id FROM job WHERE id IN (SELECT job FROM job_text) LIMIT 1")
	"$bdir/serve_pages" "$db" @1709251200 @1711929599 u7 "$job" n7 >"$work/serve_pages.out" 2>&1
	while read -r line; do
		kind=$(sed -n 's/^kind=\([^ ]*\) .*/\1/p' <<<"$line")
		ms=$(sed -n 's/.* ms=\([^ ]*\) .*/\1/p' <<<"$line")
		[ -n "$kind" ] || continue
		row "serve_$kind" "lwm2 serve page $kind, a month of a year of $y jobs" "$ms ms" - \
			"$ms" ms 500 "$(sed -n 's/.* bytes=\([^ ]*\) status=\(.*\)/\1 B, HTTP \2/p' <<<"$line")"
	done <"$work/serve_pages.out"
	# as the job's owner, who may see its page and series
	secs=$(reps 60 10)
	owner=$(sqlite3 "$db" "SELECT user_name FROM job WHERE job_id = $job LIMIT 1")
	line=$("$bdir/serve_pages" load "$db" @1709251200 @1711929599 "$owner" "$job" "$secs" 100 2>&1 | grep '^kind=load')
	if [ -z "$line" ]; then
		notrow serve_load "lwm2 serve, 100 clients for $secs s" ms 500 "the load did not run"
		return
	fi
	row serve_load "lwm2 serve, 100 clients at once for $secs s (p99)" \
		"$(sed -n 's/.* p99_ms=\([^ ]*\).*/\1/p' <<<"$line") ms" - \
		"$(sed -n 's/.* p99_ms=\([^ ]*\).*/\1/p' <<<"$line")" ms - \
		"$(sed -n 's/.* requests=\([^ ]*\) errors=\([^ ]*\) p50_ms=\([^ ]*\).*/\1 requests, \2 errors, p50 \3 ms/p' <<<"$line"); the job's owner's list, its JSON, the job's page and its series in turn, without HTTP, on this machine's $(nproc) cores"
}

start=$(date +%s)
want posix && bench_posix
want mpi && bench_mpi
want process && bench_process
want container && bench_container
want sampling && bench_sampling
want sampling && bench_cgroup_peak
want sizes && bench_sizes
want merges && bench_merges
want lammps && bench_lammps
want export && bench_export
want view && bench_view
want region && bench_region
want db && bench_db
# minutes a side: only when named (BENCH_ONLY=burst), never in a full run
if [[ " $only " == *" burst "* ]]; then
	bench_burst
elif [ -z "$only" ]; then
	notrow burst "burst of 1,000 job ends (the private cluster)" s 60 "a section of its own: BENCH_ONLY=burst"
fi
print_table | tee "${out%.json}.txt"
write_json
log "wrote $out ($(($(date +%s) - start)) s)"
