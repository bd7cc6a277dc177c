#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The digest's "fit" block on the private cluster (jobcomp/lwm2, jobs of
# the unprivileged test user): a job of 4 cores on two nodes that keeps
# one core busy for a few seconds is told it used about a quarter of them,
# with the --ntasks for next time, in `lwm2 digest -j` text and JSON; a job
# with --time and --mem gets its requests, as slurmctld has them, into the
# JSON-lines log ("time_limit_s", "mem_req_mb", "mem_req_per_node_mb",
# "gpus") and the digest's "fit" block; a job that asks for no memory
# has the cluster's DefMemPerCPU (500 MB a core).  The cluster's nodes have
# no GPU.  The memory verdicts against the job's cgroup are
# t-fit-cgroup.sh's; here, the fields, and the source of the peak: the
# job's cgroup where the cluster runs Slurm's cgroup plugins, else the
# processes' own peaks.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

# the jobs here run seconds: advice for every job, whatever its run time
jobcomp_setup AdviceMinRuntime=0
plan 15
# where the peak comes from (cluster.sh writes cgroup.conf where it
# confines jobs in cgroups)
src=processes
[ -f "$LWM2_CLUSTER_DIR/etc/cgroup.conf" ] && src=cgroup

# --- one busy core of 4 (two nodes of 2 cores): a loop until it has had
# 2.5 s of CPU time (clock ticks of /proc/PID/stat, 100 a second), not
# 2.5 s of wall time, which a loaded host would give less CPU
cat >"$TESTDIR/$TEST_USER/busy.sh" <<'EOF'
#!/bin/bash
#SBATCH -N2 --ntasks=4 -o busy-%j.out
srun -N1 -n1 bash -c 'hz=$(getconf CLK_TCK); end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
	read -r -a s </proc/$BASHPID/stat
	[ $((s[13] + s[14])) -ge $((hz * 5 / 2)) ] && break
done'
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/busy.sh"
job=$(submit_batch "$TESTDIR/$TEST_USER/busy.sh") || job=0
is "$(wait_job "$job" 60)" COMPLETED "busy job $job COMPLETED"
check "its digest reaches AdminComment" wait_digest "$job" 60

text=$(digest_as -j "$job")
echo "$text" | sed -n '/^Fit/,/^  GPU/s/^/# /p'
case $text in
*"Fit (asked for against used)"*) ok "text digest: the Fit block" ;;
*) not_ok "text digest: the Fit block" && diag "$text" ;;
esac
if [[ $text =~ CPU:\ [0-9.]+\ of\ 4\ cores\ busy\ \(([0-9]+)\ %\)\ -\>\ next\ time:\ --ntasks=1 ]] &&
	[ "${BASH_REMATCH[1]}" -le 40 ]; then
	ok "text digest: about one core of 4 busy (${BASH_REMATCH[1]} %), advice --ntasks=1"
else
	not_ok "text digest: about one core of 4 busy, advice --ntasks=1"
	diag "$(echo "$text" | grep -A5 '^Fit')"
fi
out=$(digest_as -j "$job" --json)
is "$(python3 -c '
import json, sys
c = json.loads(sys.argv[1])[0]["digest"]["fit"]["cpu"]
print(c["verdict"], c["allocated_cores"], 0.01 < c["efficiency"] < 0.4, c["cpu_s"] >= 2,
      c["advice"])' "$out" 2>&1)" \
	"low 4 True True --ntasks=1" "JSON: fit.cpu low, 4 cores, efficiency and CPU time, advice"
is "$(python3 -c '
import json, sys
f = json.loads(sys.argv[1])[0]["digest"]["fit"]
m = f["memory"]
print(m["verdict"], m["requested_mb"], m["requested_per_node_mb"], "advice" in m, m["source"],
      f["time"]["verdict"], f["gpu"]["verdict"], f["gpu"]["allocated"], "advice" in f["gpu"])' \
	"$out" 2>&1)" \
	"ok 2000 1000 False $src unlimited ok 0 False" \
	"JSON: no --mem: DefMemPerCPU's 1000 MB a node, ok, peak from $src; no --time (MaxTime=INFINITE): unlimited; no GPU: ok, no advice"
html=$("$LWM2" report --file "$JCLOG" -j "$job" -o - 2>&1)
if [[ $html == *'<h2 id="fit">Fit: asked for against used</h2>'* &&
	$html == *'<tr><th>CPU</th><td>4 cores</td>'*'<td>low</td><td>--ntasks=1</td></tr>'* ]]; then
	ok "HTML job report: the fit table, CPU low, --ntasks=1"
else
	not_ok "HTML job report: the fit table, CPU low, --ntasks=1"
	diag "$(echo "$html" | grep -A6 'id="fit"')"
fi
is "$(log_line "$job" "('time_limit_s' in l, l.get('time_unlimited'), l['mem_req_mb'], l['mem_req_per_node_mb'], l['gpus'])")" \
	"(False, True, 2000, 1000, 0)" "log line: no limit (time_unlimited), DefMemPerCPU's memory (4 cores), 0 GPUs"

# --- --time and --mem: the requests as slurmctld has them
cat >"$TESTDIR/$TEST_USER/asks.sh" <<'EOF'
#!/bin/bash
#SBATCH -N1 -n1 --time=90 --mem=300M -o asks-%j.out
srun true
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/asks.sh"
job2=$(submit_batch "$TESTDIR/$TEST_USER/asks.sh") || job2=0
is "$(wait_job "$job2" 60)" COMPLETED "job $job2 with --time=90 --mem=300M COMPLETED"
check "its digest reaches AdminComment" wait_digest "$job2" 60
is "$(log_line "$job2" "(l['time_limit_s'], l['mem_req_mb'], l['mem_req_per_node_mb'], l['gpus'])")" \
	"(5400, 300, 300, 0)" "log line: time_limit_s, mem_req_mb, mem_req_per_node_mb, gpus"
out=$(digest_as -j "$job2" --json)
is "$(python3 -c '
import json, sys
f = json.loads(sys.argv[1])[0]["digest"]["fit"]
t, m = f["time"], f["memory"]
print(t["limit_s"], t["verdict"], "advice" in t, m["requested_mb"], m["peak_mb"] > 0,
      m["verdict"])' "$out" 2>&1)" \
	"5400 low False 300 True ok" \
	"JSON: a 90 min limit, a short job: low without advice; 300 MB asked, a peak"
text=$(digest_as -j "$job2")
echo "$text" | sed -n '/^Fit/,/^  GPU/s/^/# /p'
case $text in
*"Time: ran 00:00:0"?" of a 01:30:00 limit (a short job: no advice)"*)
	ok "text digest: the time line, no advice for a short job" ;;
*) not_ok "text digest: the time line, no advice for a short job" && diag "$text" ;;
esac
case $text in
*"of 300 MB asked per node"*) ok "text digest: the memory line" ;;
*) not_ok "text digest: the memory line" && diag "$text" ;;
esac
# the compact form in AdminComment keeps the block
ac=$(sacct -n -X -P -j "$job2" -o AdminComment%65000)
is "$(python3 -c 'import json,sys; s=sys.argv[1]; d=json.loads(s[s.index("LWM2:")+5:]); print(d["fit"]["time"]["limit_s"])' "$ac" 2>&1)" \
	5400 "AdminComment: the compact digest keeps the fit block"
