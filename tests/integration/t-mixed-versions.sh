#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A rolling upgrade in the middle of a job: one job's step on two nodes of
# the private cluster, where node 0's processes run this build's
# liblwm2.so and node 1's processes load the next version's (a scratch
# build of the tree with one more counter, LWM2_TEST_NEXT_COUNTERS: the
# shape of the next release's records), while slurmstepd keeps this
# build's plugin and slurmctld this build's jobcomp, as on a node upgraded
# while the job ran.  The job's digest is complete: both nodes' processes,
# the exact bytes each wrote; the counter this build does not know is
# skipped, nothing reads as 0 that was measured.  Both builds reading
# each other's records, node records and digests is test/evolve.sh's
# (digest/).
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"
# shellcheck source=tests/integration/scratch-lib.sh
. "$(dirname "$0")/scratch-lib.sh"

command -v autoreconf >/dev/null || skip_all "no autoreconf (the next version is built from a copy)"
jobcomp_setup
plan 7

scratch=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-mixed.XXXXXX")
at_exit 'rm -rf "$scratch"'
if ! scratch_copy "$LWM2_TOP" "$scratch/tree"; then
	skip_all "the tree is not a git checkout (its files are listed by git)"
fi
if scratch_build "$scratch/tree" "$scratch/b" CFLAGS="-O2 -g -DLWM2_TEST_NEXT_COUNTERS"; then
	ok "the next version's library builds (one more counter)"
else
	not_ok "the next version's library builds (one more counter)"
	done_testing
	exit 1
fi
next=$TESTDIR/lib/liblwm2-next.so
install -m 755 "$scratch/b/preload/.libs/liblwm2.so" "$next"

# Each node's task writes 100 KiB with dd; node 1's dd loads the next
# version's library in place of this one (an exec that names its own
# LD_PRELOAD, as a process started after the package upgrade would).
out=$TESTDIR/$TEST_USER/mixed
mkdir -p "$out" && chown "$TEST_USER" "$out"
job=$(as_user sbatch --parsable -N2 -n2 -o /dev/null --wrap \
	"srun -N2 -n2 sh -c 'if [ \"\$SLURM_NODEID\" = 1 ]; then LD_PRELOAD=$next exec dd if=/dev/zero of=$out/w.\$SLURM_NODEID bs=4096 count=25 status=none; else exec dd if=/dev/zero of=$out/w.\$SLURM_NODEID bs=4096 count=25 status=none; fi'" \
	2>/dev/null) || job=0
is "$(wait_job "$job" 60)" COMPLETED "job $job: one step on two nodes, two builds"
check "its digest reaches AdminComment" wait_digest "$job" 60
json=$(digest_as -j "$job" --json)
is "$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])[0]["digest"]
s = d["steps"][0]
print(s["processes"], s["nodes"], s["totals"]["posix_write_bytes"])' "$json" 2>&1)" \
	"2 2 204800" "the step: both nodes' processes, 2 x 102400 bytes written, exactly"
is "$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])[0]["digest"]
t = d["scope"]["totals"]
print("posix_msync_bytes" in t, [k for k, v in t.items() if v == "not measured"])' "$json" 2>&1)" \
	"False []" "the next version's counter skipped, no counter of this build read as not measured"
# The next version's records are in the step's node record as this build
# read them: the process of node 1 is there, with its bytes.
is "$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])[0]["digest"]
print(d["scope"]["totals"]["posix_write_calls"])' "$json" 2>&1)" 50 \
	"the write calls of both builds' processes: 2 x 25"
text=$(digest_as -j "$job")
case $text in
*"Counters not measured"*) not_ok "the text digest names no counter as not measured" && diag "$text" ;;
*"Number of processes"*"3 (0 MPI) on 2 nodes"*) ok "the text digest: the batch shell and the step's 2 processes on 2 nodes" ;;
*) not_ok "the text digest: the batch shell and the step's 2 processes on 2 nodes" && diag "$text" ;;
esac
done_testing
