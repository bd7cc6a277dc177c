#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The digest's "fit" block on the private cluster as sites run it
# (proctrack/cgroup, task/cgroup with ConstrainRAMSpace and ConstrainCores,
# memory scheduled with CR_Core_Memory), jobs of the unprivileged test
# user through jobcomp/lwm2:
#   - a job that asks --mem=2G and touches 300 MB is told its peak, read
#     from its cgroup (source "cgroup"), within what the job itself read of
#     its cgroup's memory.max_usage_in_bytes, and the --mem for next time
#     (the peak and 25 %, in 128 MiB steps);
#   - a job given 4 cores that keeps one busy shows about 25 % and the
#     advice --ntasks=1;
#   - a job that uses what it asked for (one core busy, 300 MB of 512 MB)
#     gets no advice at all;
#   - a step that touches more than the job's --mem is stopped by its
#     cgroup (OUT_OF_MEMORY): the limit is the request.
# Skipped where the cluster runs without cgroups (cluster.sh says why).
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

# the jobs here run seconds: advice for every job, whatever its run time
jobcomp_setup AdviceMinRuntime=0
mode=$(cat "$LWM2_CLUSTER_DIR/etc/cgroup.mode" 2>/dev/null || echo "none: no cgroup.mode")
[ "$mode" = v1 ] || skip_all "the private cluster runs without cgroups (${mode#none: })"
plan 17

# The --mem for a peak of MB, as lwm2(1) states the rule: 25 % more,
# whole GiB from 1 GiB up, else 128 MiB steps.
mem_advice() {
	python3 -c 'import math, sys
mb = math.ceil(int(sys.argv[1]) * 1.25)
print("--mem=%dG" % ((mb + 1023) // 1024) if mb >= 1024 else "--mem=%dM" % ((mb + 127) // 128 * 128))' "$1"
}

# fit PY: a value of the job's JSON digest's "fit" block f, PY a Python
# expression.
fit() {
	python3 -c 'import json, sys
f = json.loads(sys.argv[1])[0]["digest"]["fit"]
print(eval(sys.argv[2]))' "$(digest_as -j "$job" --json)" "$1" 2>&1
}

# a process that touches 300 MB, page by page, then keeps one core busy
# until it has had CPU_S seconds of CPU time (not wall time, which a
# loaded host would give less CPU)
cat >"$TESTDIR/$TEST_USER/touch.py" <<'EOF'
import os, sys
b = bytearray(300 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
cpu = float(sys.argv[1]) if len(sys.argv) > 1 else 0
while sum(os.times()[:2]) < cpu:
    pass
import resource
print("maxrss_kb=%d" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
EOF

# --- --mem=2G, a 300 MB peak; the job reads its own cgroup's peak after
# the step, before the batch step ends
cat >"$TESTDIR/$TEST_USER/mem.sh" <<EOF
#!/bin/bash
#SBATCH -N1 -n1 --mem=2G -o mem-%j.out
srun -n1 python3 $TESTDIR/$TEST_USER/touch.py
p=\$(sed -n 's/^[0-9]*:[^:]*memory[^:]*://p' /proc/self/cgroup)
j=/sys/fs/cgroup/memory\${p%/step_*}
echo "job_cgroup_peak_bytes=\$(cat \$j/memory.max_usage_in_bytes)"
echo "job_cgroup_limit_bytes=\$(cat \$j/memory.limit_in_bytes)"
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/mem.sh" "$TESTDIR/$TEST_USER/touch.py"
job=$(cd "$TESTDIR/$TEST_USER" && submit_batch "$TESTDIR/$TEST_USER/mem.sh") || job=0
is "$(wait_job "$job" 60)" COMPLETED "--mem=2G job $job COMPLETED"
check "its digest reaches AdminComment" wait_digest "$job" 60
outf=$TESTDIR/$TEST_USER/mem-$job.out
own=$(sed -n 's/^job_cgroup_peak_bytes=//p' "$outf")
lim=$(sed -n 's/^job_cgroup_limit_bytes=//p' "$outf")
is "$lim" 2147483648 "the job's cgroup is limited to its --mem=2G"
own_mb=$(((${own:-0} + 1048575) / 1048576))
peak=$(fit 'f["memory"]["peak_per_node_mb"]')
diag "the job's cgroup peak as the job read it: ${own:-?} bytes ($own_mb MB);" \
	"the digest's: $peak MB; the 300 MB process's own peak (maxrss):" \
	"$(sed -n 's/^maxrss_kb=//p' "$outf") kB; sacct MaxRSS of step 0:" \
	"$(sacct -n -P -j "$job.0" -o MaxRSS)"
if [[ $peak =~ ^[0-9]+$ ]] && [ "$peak" -ge 300 ] && [ "$peak" -ge "$own_mb" ] &&
	[ "$peak" -le $((own_mb + 64)) ]; then
	ok "the digest's peak ($peak MB) is the job cgroup's ($own_mb MB when the job read it)"
else
	not_ok "the digest's peak is the job cgroup's" && diag "digest: $peak, job: $own_mb"
fi
adv=$(mem_advice "${peak//[^0-9]/}")
is "$(fit '(f["memory"]["source"], f["memory"]["verdict"], f["memory"]["requested_per_node_mb"], f["memory"].get("advice"))')" \
	"('cgroup', 'low', 2048, '$adv')" "JSON: from the cgroup, low, 2048 MB asked, advice $adv"
text=$(digest_as -j "$job")
echo "$text" | sed -n '/^Fit/,/^  GPU/s/^/# /p'
case $text in
*"Memory: peak $peak MB of 2048 MB asked per node (the job's cgroup peak) -> next time: $adv"*)
	ok "text digest: the peak, its source and $adv" ;;
*) not_ok "text digest: the peak, its source and $adv" && diag "$text" ;;
esac
# no --time in a partition of MaxTime=INFINITE: the run time, no limit
if [[ $text =~ Time:\ ran\ [0-9:]+,\ no\ time\ limit ]]; then
	ok "text digest: no time limit, the run time"
else
	not_ok "text digest: no time limit, the run time" && diag "$text"
fi

# --- 4 cores (two nodes of 2), one kept busy for 8 s of CPU time
cat >"$TESTDIR/$TEST_USER/cpu.sh" <<EOF
#!/bin/bash
#SBATCH -N2 --ntasks=4 --mem-per-cpu=200M -o cpu-%j.out
hz=\$(getconf CLK_TCK)
while :; do
	read -r -a s </proc/\$BASHPID/stat
	[ \$((s[13] + s[14])) -ge \$((hz * 8)) ] && break
done
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/cpu.sh"
job=$(cd "$TESTDIR/$TEST_USER" && submit_batch "$TESTDIR/$TEST_USER/cpu.sh") || job=0
is "$(wait_job "$job" 120)" COMPLETED "4-core job $job COMPLETED"
check "its digest reaches AdminComment" wait_digest "$job" 60
eff=$(fit 'round(f["cpu"]["efficiency"] * 100)')
is "$(fit '(f["cpu"]["verdict"], f["cpu"]["allocated_cores"], f["cpu"].get("advice"))')" \
	"('low', 4, '--ntasks=1')" "JSON: CPU low, 4 cores, advice --ntasks=1"
# one core of 4 is 25 %; the job's start and end (and a busy host's
# other work) take some of it
if [[ $eff =~ ^[0-9]+$ ]] && [ "$eff" -ge 5 ] && [ "$eff" -le 30 ]; then
	ok "JSON: about a quarter of the cores busy ($eff %)"
else
	not_ok "JSON: about a quarter of the cores busy" && diag "efficiency: $eff %"
fi
text=$(digest_as -j "$job")
echo "$text" | sed -n '/^Fit/,/^  GPU/s/^/# /p'
if [[ $text =~ CPU:\ [0-9.]+\ of\ 4\ cores\ busy\ \($eff\ %\)\ -\>\ next\ time:\ --ntasks=1 ]]; then
	ok "text digest: $eff % of 4 cores, advice --ntasks=1"
else
	not_ok "text digest: $eff % of 4 cores, advice --ntasks=1" && diag "$text"
fi

# --- what it asked for: one core, kept busy; 300 MB of 512 MB; a short
# job under its time limit (no advice for those)
cat >"$TESTDIR/$TEST_USER/fits.sh" <<EOF
#!/bin/bash
#SBATCH -N1 -n1 --mem=512M --time=5 -o fits-%j.out
exec python3 $TESTDIR/$TEST_USER/touch.py 4
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/fits.sh"
job=$(cd "$TESTDIR/$TEST_USER" && submit_batch "$TESTDIR/$TEST_USER/fits.sh") || job=0
is "$(wait_job "$job" 120)" COMPLETED "fitting job $job COMPLETED"
check "its digest reaches AdminComment" wait_digest "$job" 60
# one core busy is "ok" on an idle host, "low" (without advice: one core
# is the least a job can ask for) where other work takes the CPU from it
diag "CPU efficiency of one busy core: $(fit 'round(f["cpu"]["efficiency"] * 100)') %"
is "$(fit '[(k, f[k]["verdict"] if k != "cpu" else f[k]["verdict"] in ("ok", "low"), "advice" in f[k]) for k in ("cpu", "memory", "time", "gpu")]')" \
	"[('cpu', True, False), ('memory', 'ok', False), ('time', 'low', False), ('gpu', 'ok', False)]" \
	"JSON: memory ok, a short job, no GPU, one core: no advice anywhere"
text=$(digest_as -j "$job")
echo "$text" | sed -n '/^Fit/,/^  GPU/s/^/# /p'
case $text in
*"next time"*) not_ok "text digest: no advice" && diag "$text" ;;
*"Memory: peak "*" MB of 512 MB asked per node (the job's cgroup peak)"*) ok "text digest: no advice" ;;
*) not_ok "text digest: no advice (no memory line?)" && diag "$text" ;;
esac

# --- more than --mem: the cgroup stops it
cat >"$TESTDIR/$TEST_USER/oom.sh" <<EOF
#!/bin/bash
#SBATCH -N1 -n1 --mem=128M -o oom-%j.out
srun -n1 python3 $TESTDIR/$TEST_USER/touch.py
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/oom.sh"
job=$(cd "$TESTDIR/$TEST_USER" && submit_batch "$TESTDIR/$TEST_USER/oom.sh") || job=0
wait_job "$job" 60 >/dev/null
is "$(sacct_field "$job.0" State)" OUT_OF_MEMORY \
	"a step that touches 300 MB under --mem=128M: OUT_OF_MEMORY"
diag "sacct MaxRSS of that step: $(sacct -n -P -j "$job.0" -o MaxRSS)"
