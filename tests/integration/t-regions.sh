#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Named regions (lwm2_region_begin/end, lwm2_region_get of lwm2_view(3))
# on the private cluster: contrib/taug/hybrid.c, an MPI + OpenMP program
# whose first rank is 3 times slower per unit of work, times its compute
# part as the region "compute" (the master thread) with "thread_work"
# inside it (each OpenMP thread), and rebalances every 5 steps from the
# ranks' "compute" time gathered with lwm2_region_get.  Under srun --lwm2
# (2 ranks with 2 threads each, 2 nodes, as the test user) the job digest
# that `lwm2 digest` reads back from accounting (jobcomp/lwm2) has each
# region with the calls the program made and each rank's time as the
# program measured it (see "near" below), with the ranks of the minimum and
# the maximum, and its text the "Named regions" block; with --lwm2=off the
# program prints the same lines, rebalanced from its own clock, and its
# job has no digest, so no regions.  The elapsed times with and without
# rebalancing are printed, not asserted: the two nodes share the host's
# cores, and a busy host made a rebalanced run the slower once in nine.
# (spank-lib.sh for job_of.)
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
need_python3
jobcomp_setup

bin=$TESTDIR/bin
mkdir -p "$bin"
mpicc.openmpi -std=gnu11 -fopenmp -O2 -I"$LWM2_TOP/preload/include" -o "$bin/hybrid" \
	"$LWM2_TOP/contrib/taug/hybrid.c" -lm || bail_out "mpicc.openmpi -fopenmp cannot build hybrid.c"
chmod -R a+rX "$bin"
# passive: an OpenMP thread that waits sleeps, so its CPU time stops
# where its work does (the threads' check below)
ompi_env=OMPI_MCA_btl=self,tcp,OMPI_MCA_btl_tcp_if_include=lo,OMPI_MCA_pml=ob1,OMP_NUM_THREADS=2,OMP_WAIT_POLICY=passive
steps=30
threads=2

plan 46

# hybrid LABEL LWM2-OPTION ARGS...: 2 ranks on 2 nodes, 2 threads each;
# output in JOB_OUT.
hybrid() {
	local label=$1 opt=$2
	shift 2
	if run_job "$opt" -N2 -n2 -c$threads --mpi=pmix --export="ALL,$ompi_env" \
		"$bin/hybrid" -t $steps "$@"; then
		ok "$label: srun $opt -N2 -n2 -c$threads hybrid $*"
	else
		not_ok "$label: srun $opt -N2 -n2 -c$threads hybrid $*"
		return 1
	fi
}
elapsed() { sed -n 's/^elapsed \([0-9.]*\) .*/\1/p' <<<"$1"; }
# the lines every run prints, whatever measured it, less the figures
# that differ from run to run
shape() {
	grep -E '^(own|thread|elapsed) ' <<<"$1" | sed -E 's/[0-9]+\.[0-9]+/T/g;
		s/ units [0-9]+/ units U/; s/timing [a-z0-9]+ moves [0-9]+ shares [0-9]+:[0-9]+ job=[0-9]+/.../' |
		sort
}

# digest_of JOB: the job's digest (lwm2 digest --json) into a file; prints
# the file's name.
digest_of() {
	local f=$TESTDIR/digest.$1.json
	wait_digest "$1" 60 && digest_as -j "$1" --json >"$f"
	echo "$f"
}

# region_fields FILE NAME: calls ranks min min_rank max max_rank of a
# region of the digest ("none" when it has no such region).
region_fields() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))[0]['digest']
for e in d.get('regions', {}).get('names', []):
    if e['name'] == sys.argv[2]:
        s = e['seconds']
        # a location is [rank, node, pid, executable]
        print(e['calls'], e['ranks'], s['min'], s['min_at'][0], s['max'], s['max_at'][0])
        break
else:
    print('none')
PY
}

# near LWM2-SECONDS OWN-SECONDS: lwm2's time of a region is the program's
# own.  lwm2 reads its clock inside the program's begin and end, so its
# figure is at most the program's (2 ms for rounding); a thread that loses
# its CPU between the two reads (the two nodes share the host's busy
# cores: up to 26 ms seen over a run) adds its wait to the program's
# figure alone, so lwm2's may be 1 % and 50 ms less.
near() {
	awk -v r="$1" -v o="$2" 'BEGIN { x = o - r; exit !(r > 0 && x >= -0.002 && x <= 0.01 * o + 0.05) }'
}

# check_regions LABEL OUTPUT: the digest's regions against the program's
# own figures of each rank.
check_regions() {
	local label=$1 out=$2 job json name calls ranks min min_rank max max_rank
	job=$(job_of "$out")
	json=$(digest_of "$job")
	check "$label: lwm2 digest -j $job --json" test -s "$json"
	for name in compute thread_work; do
		read -r calls ranks min min_rank max max_rank < <(region_fields "$json" "$name")
		local own_calls own_min own_max own_min_rank own_max_rank
		# own NAME rank R calls C seconds S, of the two ranks
		read -r own_calls own_min own_min_rank own_max own_max_rank < <(awk -v n="$name" '
			$1 == "own" && $2 == n { c += $6; s[$4] = $8 }
			END { lo = (s[0] <= s[1]) ? 0 : 1; hi = 1 - lo
			      print c, s[lo], lo, s[hi], hi }' <<<"$out")
		is "$calls" "$own_calls" "$label: $name: the digest's calls are the program's ($own_calls)"
		is "$ranks" 2 "$label: $name: entered by 2 ranks"
		# shellcheck disable=SC2016 # awk's variables
		check_eval 'near "${min:-0}" "$own_min" && near "${max:-0}" "$own_max"' \
			"$label: $name: the digest's min $min s and max $max s are the ranks' own ($own_min s, $own_max s)"
		# the locations, where the two ranks differ by more than twice
		# the tolerance
		if awk -v c="$own_min" -v d="$own_max" 'BEGIN { exit !(d - c > 0.02 * d + 0.1) }'; then
			is "$min_rank:$max_rank" "$own_min_rank:$own_max_rank" \
				"$label: $name: the minimum at rank $own_min_rank, the maximum at rank $own_max_rank"
		else
			skip "$label: $name: the ranks' times $own_min s and $own_max s too close to tell min and max apart"
		fi
	done
	local text
	text=$(digest_as -j "$job" 2>&1)
	check "$label: lwm2 digest shows the regions: $(grep -A2 '^Named regions' <<<"$text" | tr '\n' '|')" \
		grep -qE "^  compute: $((2 * steps)) calls by 2 processes, avg " <<<"$text"
	check "$label: and thread_work, $((2 * threads * steps)) calls" \
		grep -qE "^  thread_work: $((2 * threads * steps)) calls by 2 processes, avg " <<<"$text"
}

# check_threads LABEL OUTPUT: the threads of each rank in the full
# digest of jobcomp/lwm2's log (its per-process table's "threads") against
# the CPU time each OpenMP thread read from its own clock at the end: a
# worker thread's is the record's within 5 % and 30 ms (it sleeps after);
# the main thread goes on (MPI_Finalize), so its record has at least its own.
check_threads() {
	local label=$1 out=$2 job rows
	job=$(job_of "$out")
	check "$label: job $job's full digest in the log" wait_line "$job" 60
	# tid rank flags cpu_ns of each thread row (its process's rank)
	rows=$(log_line "$job" "'\\n'.join('%s %s %s %s' % (t[1], l['digest']['ranks']['rows'][t[0]][2], t[2], t[3]) for t in l['digest']['ranks'].get('threads', {}).get('rows', []))")
	while read -r _ _ rank _ tid _ own; do
		read -r _ trank flags cpu < <(awk -v t="$tid" '$1 == t' <<<"$rows")
		if [ $((${flags:-0} & 1)) -eq 1 ]; then
			check "$label: rank $rank's main thread $tid: its record's CPU time ${cpu:-none} ns, at least its own $own s" \
				awk -v c="${cpu:-0}" -v o="$own" 'BEGIN { c /= 1e9; exit !(c > 0 && c >= o - 0.002) }'
		else
			check "$label: rank $rank's thread $tid: its record's CPU time ${cpu:-none} ns is its own $own s within 5 % and 30 ms" \
				awk -v c="${cpu:-0}" -v o="$own" 'BEGIN { c /= 1e9; d = c - o; exit !(c > 0 && d <= 0.05 * o + 0.03 && d >= -0.002) }'
		fi
		is "${trank:-none}" "$rank" "$label: thread $tid belongs to rank $rank in the digest"
	done < <(grep '^threadcpu ' <<<"$out")
}

# --- without lwm2: runs, rebalances from its own clock, no record
hybrid "no lwm2" --lwm2=off
out_off=$JOB_OUT
check "no lwm2: rebalanced from the program's own clock" grep -q "^elapsed .* rebalance 1 timing self moves [1-9]" <<<"$out_off"
check_eval '! grep -q "^lwm2 " <<<"$out_off"' "no lwm2: no lwm2 figures"
job_off=$(job_of "$out_off")
check "no lwm2: job $job_off's status reaches accounting" wait_digest "$job_off" 60
err=$(digest_as -j "$job_off" 2>&1 >/dev/null)
check "no lwm2: no digest, so no regions: $err" \
	grep -q "job $job_off: no digest: no node records: lwm2 was off for this job" <<<"$err"

# --- under lwm2, without rebalancing: rank 0 is the slow one
hybrid "lwm2, no rebalancing" --lwm2 -n
out_fixed=$JOB_OUT
check "lwm2, no rebalancing: lwm2 measures" grep -q "^elapsed .* rebalance 0 timing lwm2 moves 0 shares 200:200" <<<"$out_fixed"
check_regions "lwm2, no rebalancing" "$out_fixed"
check_threads "lwm2, no rebalancing" "$out_fixed"
# lwm2_region_self in each rank says what the record says
for r in 0 1; do
	for name in compute thread_work; do
		read -r own_c own_s < <(awk -v n="$name" -v r="$r" '$1 == "own" && $2 == n && $4 == r { print $6, $8 }' <<<"$out_fixed")
		read -r self_c self_s < <(awk -v n="$name" -v r="$r" '$1 == "lwm2" && $2 == n && $4 == r { print $6, $8 }' <<<"$out_fixed")
		check_eval '[ "${self_c:-x}" = "$own_c" ] && near "${self_s:-0}" "$own_s"' \
			"rank $r: lwm2_region_self($name): $self_c calls, $self_s s; its own $own_c calls, $own_s s"
	done
done

# --- under lwm2, rebalancing from lwm2_region_get
hybrid "lwm2, rebalancing" --lwm2
out_bal=$JOB_OUT
check "lwm2, rebalancing: from lwm2_region_get's figures, work moved" \
	grep -q "^elapsed .* rebalance 1 timing lwm2 moves [1-9]" <<<"$out_bal"
check_regions "lwm2, rebalancing" "$out_bal"
# shellcheck disable=SC2016 # awk's fields
check "lwm2, rebalancing: the slow rank's share went down ($(grep -o 'shares [0-9:]*' <<<"$out_bal"))" \
	awk '/^elapsed / { split($10, s, ":"); ok = s[1] < s[2] } END { exit !ok }' <<<"$out_bal"
is "$(shape "$out_off")" "$(shape "$out_bal")" "--lwm2=off prints the lines --lwm2 does, but lwm2's own"

t_fixed=$(elapsed "$out_fixed")
t_bal=$(elapsed "$out_bal")
t_off=$(elapsed "$out_off")
diag "elapsed: $t_fixed s without rebalancing, $t_bal s rebalanced by lwm2_region_get ($(grep -o 'shares [0-9:]*' <<<"$out_bal")), $t_off s rebalanced by its own clock under --lwm2=off"
done_testing
