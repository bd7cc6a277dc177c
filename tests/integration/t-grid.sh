#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The space-time grid at work on the private cluster, whose four virtual
# nodes share one machine's disk and cores: a real shared resource.
#
#  1. Interference.  A job writing with O_DSYNC (every write waits for the
#     disk) runs alone, then again while a second job on another node
#     writes with O_DIRECT from two tasks for 6 s.  The second run's digest
#     (log and AdminComment) names the other job in the overlapping slices;
#     the first run's names no job.
#  2. Sick nodes.  Four-node MPI jobs with a fixed amount of work per rank
#     run with no node slowed, then with n3's slurmd in a cgroup (the cpu
#     controller, v1 or v2) with a CPU quota of 10% of one core: every stepd
#     and task it starts inherits the quota (the cluster's proctrack/linuxproc
#     leaves them in slurmd's cgroup).  `lwm2 nodes` over the second period
#     names n3 and the jobs; over the first it names no node.
#
# Slices are 1 s (--lwm2-slice=1, the shortest the SPANK option takes).
# The machine has two cores shared with other work, so the test leans on
# margins, not luck.  The O_DIRECT writers made the O_DSYNC writes 5x to
# 19x slower in our runs and the rule asks for 3x and for more than the job's own
# spread, which it measures in the 8 s before the writers start (the other
# work's I/O on the same disk is part of it); the first run can name no
# job, as no other job of this cluster runs beside it.  A 10% quota made
# the rank on n3 1.3x to 2.7x slower than the median node in our runs, also
# with a compiler busy on both cores (a loaded machine still gives a
# runnable process more than 10% of a core), and the outlier test asks for
# 1.1x; the run without the quota can name a node only if one node is the
# slowest of all 5 jobs by chance (1 in 256 for some node), since the rule
# asks for a chance below 1%.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
# the cgroup that slows a node: v1's cpu controller, else v2's
if [ -w /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	CGV=1 CG=/sys/fs/cgroup/cpu
elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
	[ -w /sys/fs/cgroup/cgroup.subtree_control ]; then
	CGV=2 CG=/sys/fs/cgroup
else
	CGV=0 CG=
fi
jobcomp_setup
plan 16

bin=$TESTDIR/bin
cat >"$bin/dsync.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* argv[1] s of 256 KiB writes that each wait for the disk, over a 16 MiB
 * file rewritten from its start. */
int main(int argc, char **argv)
{
	static char buf[1 << 18];
	double t0 = now(), d = argc > 1 ? atof(argv[1]) : 20;
	int fd = open("dsync.out", O_WRONLY | O_CREAT | O_TRUNC | O_DSYNC, 0600);
	long n = 0;

	if (fd < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	while (now() - t0 < d) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
		if (++n % 64 == 0)
			lseek(fd, 0, SEEK_SET);
	}
	close(fd);
	unlink("dsync.out");
	return 0;
}
C
cat >"$bin/flood.c" <<'C'
#define _GNU_SOURCE /* O_DIRECT */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Up to 2 GB in 4 MiB writes that go to the disk as they are made
 * (O_DIRECT: the bytes pass write() in the slices where the disk is
 * busy with them, not when the page cache is flushed later), for at most
 * argv[1] s; a file per task.  Without O_DIRECT on the file system,
 * fdatasync every 16 MiB. */
int main(int argc, char **argv)
{
	char path[64];
	const char *id = getenv("SLURM_PROCID");
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 8);
	void *buf;
	int fd, direct = 1;

	if (posix_memalign(&buf, 4096, 4 << 20))
		return 1;
	memset(buf, 'y', 4 << 20);
	snprintf(path, sizeof(path), "flood.%s", id ? id : "0");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0) {
		direct = 0;
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	}
	if (fd < 0)
		return 1;
	for (int i = 0; i < 500 && time(NULL) < end; i++) {
		if (write(fd, buf, 4 << 20) != 4 << 20)
			return 1;
		if (!direct && i % 4 == 3)
			fdatasync(fd);
	}
	close(fd);
	unlink(path);
	return 0;
}
C
cat >"$bin/rounds.c" <<'C'
#include <mpi.h>

/* Four rounds of a fixed amount of work (not of wall time: a slowed node
 * takes longer) and a barrier. */
int main(int argc, char **argv)
{
	volatile double x = 0;

	MPI_Init(&argc, &argv);
	for (int r = 0; r < 4; r++) {
		for (long i = 0; i < 40000000L; i++)
			x += i * 0.5;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
C
cc -O1 -o "$bin/dsync" "$bin/dsync.c" || bail_out "cannot build dsync"
cc -O1 -o "$bin/flood" "$bin/flood.c" || bail_out "cannot build flood"
mpicc.openmpi -O1 -o "$bin/rounds" "$bin/rounds.c" || bail_out "cannot build rounds"
chmod -R a+rX "$bin"

# job_script NAME NODES BODY: a batch script in the user's directory
job_script() {
	local f=$TESTDIR/$TEST_USER/$1.sh
	printf '#!/bin/bash\n#SBATCH -o %s-%%j.out %s\n%s\n' "$1" "$2" "$3" >"$f"
	chown "$TEST_USER" "$f"
	echo "$f"
}

# wait_running JOB: until the job runs (30 s at most)
wait_running() {
	local i
	for ((i = 0; i < 150; i++)); do
		[ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ] && return 0
		sleep 0.2
	done
	return 1
}

# interference JOB: the texts of the interference findings in its log line
interference() {
	log_line "$1" "' | '.join(f['text'] for f in l.get('digest', {}).get('interference', []))"
}

# --- 1. interference
victim=$(job_script victim "-N1 -w n1" "srun --lwm2-slice=1 $bin/dsync 30")
flood=$(job_script flood "-N1 -n2 -w n3" "srun --lwm2-slice=1 $bin/flood 6")

v1=$(submit_batch "$victim") || v1=0
is "$(wait_job "$v1" 60)" COMPLETED "I/O job $v1 alone COMPLETED"
check "digest of $v1 in AdminComment" wait_digest "$v1" 60

v2=$(submit_batch "$victim") || v2=0
wait_running "$v2" || diag "job $v2 not running after 30 s"
# its own baseline before the other job starts: the writers' 6 s (and the
# disk's slowness for a while after them) must stay well under half of the
# job's 30 s, or its median is no longer its typical rate
sleep 8
f2=$(submit_batch "$flood") || f2=0
is "$(wait_job "$f2" 60)" COMPLETED "heavy writer $f2 COMPLETED"
is "$(wait_job "$v2" 60)" COMPLETED "I/O job $v2 beside it COMPLETED"
check "digest of $v2 in AdminComment" wait_digest "$v2" 60
diag "job $v2 ran $(sacct_field "$v2" Start) to $(sacct_field "$v2" End), job $f2 $(sacct_field "$f2" Start) to $(sacct_field "$f2" End)"

t1=$(interference "$v1")
is "$t1" "" "job $v1 alone: no interference finding"
t2=$(interference "$v2")
diag "job $v2: ${t2:-no finding}"
check "job $v2: its digest names job $f2 as the writer in its slow slices" \
	grep -Eq "write bandwidth fell [0-9]+x in .* while job $f2 wrote .* on the shared file system; rerun may be faster" <<<"$t2"
digest_as -j "$v2" >"$TESTDIR/v2.txt" 2>&1
check "job $v2: lwm2 digest (AdminComment) shows it under Interference" \
	grep -q "^  \* write bandwidth fell .* while job $f2 wrote .*\[interference-write\]" "$TESTDIR/v2.txt"
sed -n '/^Interference/,$p' "$TESTDIR/v2.txt" | head -n 3 | while IFS= read -r l; do diag "$l"; done

# the command over the log finds the same, and prints the cells
"$LWM2" grid --file "$JCLOG" --interference -j "$v2" >"$TESTDIR/gi.txt" 2>&1
check "lwm2 grid --interference -j $v2 names job $f2" grep -q "^job $v2: .* while job $f2 wrote" "$TESTDIR/gi.txt"
"$LWM2" grid --file "$JCLOG" --interference -j "$v1" >"$TESTDIR/gi1.txt" 2>&1
check "lwm2 grid --interference -j $v1 finds nothing" grep -q "^No interference found" "$TESTDIR/gi1.txt"
s=$(sacct_field "$f2" Start)
"$LWM2" grid --file "$JCLOG" -S "$s" -E "$(sacct_field "$f2" End)" --metric write_bw >"$TESTDIR/cells.txt" 2>&1
check "lwm2 grid: cells of both jobs in the overlap, each with its node" bash -c \
	"grep -Eq ' n1 +1 +$v2 ' '$TESTDIR/cells.txt' && grep -Eq ' n3 +1 +$f2 ' '$TESTDIR/cells.txt'"
head -n 6 "$TESTDIR/cells.txt" | while IFS= read -r l; do diag "$l"; done

# --- 2. sick nodes
# Open MPI's TCP transport can crash (SIGSEGV in mca_btl_tcp, a NULL
# callback, inside MPI_Init) when a peer is as slow as the quota makes n3,
# with or without lwm2 (seen with --lwm2=off): -K ends such a job at once,
# and a period takes up to 8 jobs to have 5 that completed.
rounds=$(job_script rounds "-N4 -n4" "OMPI_MCA_mpi_yield_when_idle=1 srun -K --lwm2-slice=1 --mpi=pmix $bin/rounds")
run_rounds() {
	local i j st completed=0
	for ((i = 0; i < 8 && completed < 5; i++)); do
		j=$(submit_batch "$rounds") || continue
		st=$(wait_job "$j" 60)
		if [ "$st" = COMPLETED ]; then
			completed=$((completed + 1))
		else
			diag "job $j: ${st:-not finished}"
		fi
		wait_digest "$j" 60 || diag "job $j: no digest"
	done
}

cg=$CG/lwm2-grid-$$
slurmd_pid=$(cat "$LWM2_CLUSTER_DIR/run/slurmd-n3.pid" 2>/dev/null)
if [ "$CGV" = 1 ]; then
	orig_cg=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' "/proc/$slurmd_pid/cgroup" 2>/dev/null)
else
	orig_cg=$(awk -F: '$1 == 0 {print $3}' "/proc/$slurmd_pid/cgroup" 2>/dev/null)
fi
# slow: n3's slurmd into a cgroup of 10% of one core (its stepds and tasks
# inherit it); unslow: it and what is left of them back where it was
slow() {
	[ -n "$slurmd_pid" ] && [ "$CGV" != 0 ] && mkdir "$cg" || return 1
	if [ "$CGV" = 1 ]; then
		echo 100000 >"$cg/cpu.cfs_period_us" && echo 10000 >"$cg/cpu.cfs_quota_us"
	else
		grep -qw cpu "$CG/cgroup.subtree_control" || echo +cpu >"$CG/cgroup.subtree_control"
		echo "10000 100000" >"$cg/cpu.max"
	fi && echo "$slurmd_pid" >"$cg/cgroup.procs"
}
unslow() {
	if [ -n "$slurmd_pid" ] && [ -n "$CG" ] && [ -d "$cg" ]; then
		echo "$slurmd_pid" >"$CG${orig_cg%/}/cgroup.procs" 2>/dev/null
		while read -r p; do echo "$p" >"$CG${orig_cg%/}/cgroup.procs"; done <"$cg/cgroup.procs" 2>/dev/null
		rmdir "$cg" 2>/dev/null
	fi
}
at_exit unslow

p0=$(date +%s)
run_rounds
p1=$(date +%s)
sleep 1
"$LWM2" nodes --file "$JCLOG" -S "@$p0" -E "@$p1" >"$TESTDIR/nodes0.txt" 2>&1
is "$?" 0 "lwm2 nodes over the period without a slowed node"
check "no node named when none was slowed" grep -Eq "^No node stands out \\([5-8] multi-node jobs\\)" "$TESTDIR/nodes0.txt"
while IFS= read -r l; do diag "$l"; done <"$TESTDIR/nodes0.txt"

if [ "$CGV" = 0 ]; then
	for i in 1 2 3; do skip "no writable cgroup cpu controller (v1 or v2) to slow a node"; done
	done_testing
	exit
fi
if slow; then
	ok "n3's slurmd (pid $slurmd_pid) in a cgroup (v$CGV) with 10% of one core"
else
	not_ok "n3's slurmd (pid ${slurmd_pid:-?}) in a cgroup (v$CGV) with 10% of one core"
fi
p2=$(date +%s)
run_rounds
p3=$(date +%s)
unslow
"$LWM2" nodes --file "$JCLOG" -S "@$p2" -E "@$p3" >"$TESTDIR/nodes1.txt" 2>&1
while IFS= read -r l; do diag "$l"; done <"$TESTDIR/nodes1.txt"
check "lwm2 nodes names n3 with the jobs as evidence" \
	grep -Eq "^STANDS OUT n3 held the slowest rank in [3-8] of [5-8] multi-node jobs" "$TESTDIR/nodes1.txt"
is "$(grep -c '^STANDS OUT' "$TESTDIR/nodes1.txt")" 1 "and no other node"
done_testing
