#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The job's requests through lwm2-jobend (EpilogSlurmctld, Slurm's public
# API: slurm_load_job's time_limit in minutes, pn_min_memory,
# tres_alloc_str) beside the site's own jobcomp plugin: a job with --time
# and --mem-per-cpu gets "time_limit_s", "mem_req_mb",
# "mem_req_per_node_mb" and "gpus" in lwm2's log line and its digest's
# "fit" block, as t-fit.sh checks them for jobcomp/lwm2.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

need_python3
jobend_setup
plan 4

jobend_reconfig "JobCompType=jobcomp/none" "$EPILOG" ||
	bail_out "cluster reconfig with EpilogSlurmctld failed"
# two CPUs of one node at 200 MB each: 400 MB for the node and the job
cat >"$TESTDIR/$TEST_USER/asks.sh" <<'EOF'
#!/bin/bash
#SBATCH -N1 -n2 --time=2:00:00 --mem-per-cpu=200M -o /dev/null
srun -n1 sleep 2
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/asks.sh"
job=$(submit_batch "$TESTDIR/$TEST_USER/asks.sh") || job=0
is "$(wait_job "$job" 60)" COMPLETED "job $job with --time=2:00:00 --mem-per-cpu=200M COMPLETED"
check "its digest reaches AdminComment" wait_digest "$job" 60
is "$(log_line "$job" "(l['time_limit_s'], l['mem_req_mb'], l['mem_req_per_node_mb'], l['gpus'])")" \
	"(7200, 400, 400, 0)" "log line: time_limit_s, mem_req_mb, mem_req_per_node_mb, gpus"
out=$(digest_as -j "$job" --json)
is "$(python3 -c '
import json, sys
f = json.loads(sys.argv[1])[0]["digest"]["fit"]
print(f["time"]["limit_s"], f["memory"]["requested_per_node_mb"], f["cpu"]["allocated_cores"],
      f["gpu"]["allocated"])' "$out" 2>&1)" \
	"7200 400 2 0" "JSON: the fit block has the requests"
digest_as -j "$job" | sed -n '/^Fit/,/^  GPU/s/^/# /p'
