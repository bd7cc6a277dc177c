#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The application's view API (lwm2_view(3), TAUg) on the private cluster:
# contrib/taug/balance.c, whose first rank is 3 times slower per unit of
# work, queries every rank's compute time each step through lwm2.h and
# rebalances.  Under srun --lwm2 (2 ranks, 2 nodes, as the test user) it
# receives values, and each rank's final view matches the rank's record in
# the node record (MPI calls exactly, with its queries apart; MPI time
# within 5 %), and the record counts the rank's queries and their time;
# with --lwm2=off it runs, told "not measured"; rebalancing makes it
# faster than the same run without, and its digest (--lwm2=print) shows
# the queries the ranks made.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
spank_setup

bin=$TESTDIR/bin
mkdir -p "$bin"
mpicc.openmpi -std=gnu11 -O2 -I"$LWM2_TOP/preload/include" -o "$bin/balance" \
	"$LWM2_TOP/contrib/taug/balance.c" -lm || bail_out "mpicc.openmpi cannot build balance.c"
chmod -R a+rX "$bin"
ompi_env=OMPI_MCA_btl=self,tcp,OMPI_MCA_btl_tcp_if_include=lo,OMPI_MCA_pml=ob1
steps=30

# balance LABEL LWM2-OPTION ARGS...: 2 ranks on 2 nodes; output in JOB_OUT.
balance() {
	local label=$1 opt=$2
	shift 2
	if run_job "$opt" -N2 -n2 --mpi=pmix --export="ALL,$ompi_env" "$bin/balance" -t $steps "$@"; then
		ok "$label: srun $opt -N2 -n2 balance $*"
	else
		not_ok "$label: srun $opt -N2 -n2 balance $*"
		return 1
	fi
}
elapsed() { sed -n 's/^elapsed \([0-9.]*\) .*/\1/p' <<<"$1"; }

# --- without lwm2: runs, told so
balance "no lwm2" --lwm2=off
check "no lwm2: the query says not measured" grep -q "measured 0" <<<"$JOB_OUT"

# --- under lwm2, without rebalancing: the values against the records
balance "lwm2, no rebalancing" --lwm2 -n
out_fixed=$JOB_OUT
check "lwm2: the query has values" grep -q "measured 1" <<<"$out_fixed"
job=$(job_of "$out_fixed")
for _ in $(seq 50); do
	[ "$(find "$SPOOL/$job" -name '*.lwm2node' 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.2
done
# pid calls mpi_ns view_queries view_ns of every process of the job's node
# records
python3 - "$SPOOL/$job" >"$TESTDIR/procs" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + '/*.lwm2node'):
    b = open(f, 'rb').read()
    nl = b.index(b'\n')
    hdr = b[:nl].split()
    cl, rl = int(hdr[2]), int(hdr[3])
    start = nl + 1 + cl + 1
    r = json.loads(b[start:start + rl])
    names = r['counters']
    calls = [n for n in names if n in ('mpi_p2p_calls', 'mpi_coll_calls', 'mpi_other_calls')
             or (n.startswith('mpiio_') and n.endswith('_calls'))]
    ns = [n for n in names if n in ('mpi_p2p_ns', 'mpi_coll_ns', 'mpi_other_ns')
          or (n.startswith('mpiio_') and n.endswith('_ns'))]
    for p in r['procs']:
        c = p['c']
        print(p['pid'], sum(c[names.index(n)] for n in calls),
              sum(c[names.index(n)] for n in ns), p.get('view_queries', 0),
              p.get('view_ns', 0))
PY
is "$(grep -c '^view rank ' <<<"$out_fixed")" 2 "lwm2: both ranks print their final view"
# view rank R pid P compute C mpi M mpi_calls K view_time V queries Q
while read -r _ _ rank _ pid _ _ _ m _ k _ q _ nq; do
	read -r _ calls mpins vq vns < <(awk -v p="$pid" '$1 == p' "$TESTDIR/procs")
	if [ -z "${calls:-}" ]; then
		not_ok "rank $rank: pid $pid in the node records of job $job"
		continue
	fi
	is "$calls" "$((${k%.*} + nq))" \
		"rank $rank: the record's MPI calls = the view's ($k) + the queries' ($nq)"
	# shellcheck disable=SC2016 # awk's variables
	# A query's time is its whole call (its collective and the rank's
	# read): a rank that loses its core in between adds time that is not
	# MPI time, so the record holds the view's MPI time and at most the
	# queries' time more, within 5 % either way.
	check "rank $rank: the record's MPI time $mpins ns between the view's ($m s) and that + the queries' ($q s), 5 % either way" \
		awk -v r="$mpins" -v m="$m" -v q="$q" \
		'BEGIN { r /= 1e9; exit !(r >= 0.95 * m - 0.005 && r <= 1.05 * (m + q) + 0.005) }'
	is "$vq" "$nq" "rank $rank: the record counts the rank's $nq queries"
	# shellcheck disable=SC2016 # awk's variables
	check "rank $rank: the record's query time $vns ns = the view's ($q s) within 5 %" \
		awk -v r="$vns" -v q="$q" \
		'BEGIN { d = r / 1e9 - q; if (d < 0) d = -d; exit !(r > 0 && d <= 0.05 * q + 0.001) }'
	calls=
done < <(grep '^view rank ' <<<"$out_fixed")

# --- rebalancing is faster (a 3:1 imbalance: 2x at best; 2 shared cores);
# its digest, printed at the step's end, shows the queries the ranks made
balance "lwm2, rebalancing" --lwm2=print
out_bal=$JOB_OUT
nq_all=$(awk '/^view rank / { n += $NF; r++ } END { print n + 0, r + 0 }' <<<"$out_bal")
view_line=$(grep '^Application view (lwm2_view): ' <<<"$out_bal")
diag "digest: $view_line"
check "the digest shows the ranks' queries: $nq_all (queries, ranks)" \
	grep -q "^Application view (lwm2_view): ${nq_all% *} queries by ${nq_all#* } ranks, [0-9.e-]* s\$" <<<"$view_line"
t_fixed=$(elapsed "$out_fixed")
t_bal=$(elapsed "$out_bal")
diag "elapsed: $t_fixed s without rebalancing, $t_bal s with ($(grep -o 'shares.*' <<<"$out_bal"))"
# shellcheck disable=SC2016 # awk's variables
check "rebalancing from the queried compute time is at least 20 % faster ($t_bal s against $t_fixed s)" \
	awk -v a="${t_bal:-0}" -v b="${t_fixed:-0}" 'BEGIN { exit !(a > 0 && b > 0 && a < 0.8 * b) }'

done_testing
