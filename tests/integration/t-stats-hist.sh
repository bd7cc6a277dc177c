#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 stats --histogram` over real jobs of the private cluster: the
# same buckets from jobcomp/lwm2's log and from the central database made
# of it; and AdviceMinRuntime (its default, 60 s): a two-rank MPI job of
# a moment on four cores (two nodes of two) gets its fit's figures, no --ntasks, and the
# reason once.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

need_python3
jobcomp_setup

bin=$TESTDIR/bin
mpi=no
if command -v mpicc.openmpi >/dev/null; then
	cat >"$bin/hello.c" <<'C'
#include <mpi.h>
int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Finalize();
	return 0;
}
C
	mpicc.openmpi -O1 -o "$bin/hello" "$bin/hello.c" && mpi=yes
	chmod -R a+rX "$bin"
fi

t0=$(date +%s)
ids=()
cat >"$TESTDIR/$TEST_USER/spin.sh" <<'SH'
#!/bin/bash
#SBATCH -N1 -n2 -o /dev/null
srun -n2 bash -c 'end=$((SECONDS + 2)); while [ $SECONDS -lt $end ]; do :; done'
SH
cat >"$TESTDIR/$TEST_USER/idle.sh" <<'SH'
#!/bin/bash
#SBATCH -N1 -n1 -o /dev/null
srun -n1 sleep 1
SH
cat >"$TESTDIR/$TEST_USER/mpi.sh" <<MPI
#!/bin/bash
#SBATCH -N2 -n4 -o /dev/null
srun -N1 -n2 --mpi=pmix $bin/hello
MPI
chown "$TEST_USER" "$TESTDIR/$TEST_USER"/{spin,idle,mpi}.sh
for s in spin idle spin; do
	ids+=("$(submit_batch "$TESTDIR/$TEST_USER/$s.sh" || echo 0)")
done
mpijob=0
if [ "$mpi" = yes ]; then
	mpijob=$(submit_batch "$TESTDIR/$TEST_USER/mpi.sh") || mpijob=0
	ids+=("$mpijob")
fi
for j in "${ids[@]}"; do
	wait_job "$j" 120 >/dev/null
	check "digest of job $j in the log" wait_digest "$j" 90
done

out=$TESTDIR/hist
install -d -m 755 "$out"
"$LWM2" db import --db "$out/jobs.db" "$JCLOG" >/dev/null 2>"$out/err"
is "$?" 0 "the log imported into a database"
for a in "--histogram duration" "--histogram duration --weight core-hours --by user --json" \
	"--histogram avg_threads.max -p" "--histogram mpi_time --bucket 2.5 --csv"; do
	# shellcheck disable=SC2086
	"$LWM2" stats --file "$JCLOG" -S "@$t0" $a >"$out/log.out" 2>"$out/err"
	is "$?" 0 "stats $a from the log"
	# shellcheck disable=SC2086
	"$LWM2" stats --db "$out/jobs.db" -S "@$t0" $a >"$out/db.out" 2>>"$out/err"
	check "stats $a: the database's output is the log's" cmp -s "$out/log.out" "$out/db.out"
done
"$LWM2" stats --file "$JCLOG" -S "@$t0" --histogram duration >"$out/h.txt"
diag "$(cat "$out/h.txt")"
is "$(python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout)
t = d["total"]
print(t["jobs"] + t["no_value"], sum(b["jobs"] for b in t["buckets"]) == t["jobs"],
      round(sum(b["share_pct"] for b in t["buckets"])))' \
	"$LWM2" stats --file "$JCLOG" -S "@$t0" --histogram duration --json 2>&1)" \
	"${#ids[@]} True 100" "every job counted once, the shares adding up to 100 %"

# --- AdviceMinRuntime's default: the short MPI job gets no --ntasks
if [ "$mpi" = yes ]; then
	is "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if str(d.get("job_id")) == sys.argv[2]:
        f = d["digest"]["fit"]
        print(f["cpu"]["verdict"], "advice" in f["cpu"], f.get("no_advice"))' "$JCLOG" "$mpijob" 2>&1)" \
		"low False the job ran less than 00:01:00" \
		"a two-rank MPI job of a moment on 4 cores: CPU low, no --ntasks, the reason"
	text=$("$LWM2" digest --file "$JCLOG" -j "$mpijob" 2>&1)
	case $text in
	*"next time"*) not_ok "text digest: no advice" && diag "$text" ;;
	*"(advice not given: the job ran less than 00:01:00)"*) ok "text digest: the reason, no advice" ;;
	*) not_ok "text digest: the reason, no advice" && diag "$text" ;;
	esac
else
	skip "mpicc.openmpi not installed: no MPI job"
	skip "mpicc.openmpi not installed: no MPI job"
fi

done_testing
