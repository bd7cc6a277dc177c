#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The algebra of digests on the private cluster: two runs of the same
# program (two tasks writing files), their difference and mean from
# jobcomp/lwm2's log and from accounting, read back by lwm2 digest --file,
# lwm2 report and lwm2 ranks, with a derived metric in each.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

need_python3
jobcomp_setup
plan 25

bin=$TESTDIR/bin
cat >"$bin/alg-writer.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 16 writes of 1 MB into a file of its own, then removed. */
int main(void)
{
	static char buf[1 << 20];
	char path[256];
	const char *id = getenv("SLURM_PROCID");
	int fd;

	snprintf(path, sizeof(path), "alg.%s", id ? id : "0");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 16; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	close(fd);
	unlink(path);
	return 0;
}
C
cc -O1 -o "$bin/alg-writer" "$bin/alg-writer.c" || bail_out "cannot build the writer"
chmod -R a+rX "$bin"

cat >"$TESTDIR/$TEST_USER/alg.sh" <<JOB
#!/bin/bash
#SBATCH -N1 -n2 -o alg-%j.out
srun $bin/alg-writer
JOB
chown "$TEST_USER" "$TESTDIR/$TEST_USER/alg.sh"
job_a=$(submit_batch "$TESTDIR/$TEST_USER/alg.sh") || job_a=0
job_b=$(submit_batch "$TESTDIR/$TEST_USER/alg.sh") || job_b=0
is "$(wait_job "$job_a" 60)" COMPLETED "run A ($job_a) COMPLETED"
is "$(wait_job "$job_b" 60)" COMPLETED "run B ($job_b) COMPLETED"
check "digest of $job_a in AdminComment" wait_digest "$job_a" 60
check "digest of $job_b in AdminComment" wait_digest "$job_b" 60
check "$job_a in the log" wait_line "$job_a"
check "$job_b in the log" wait_line "$job_b"

out=$TESTDIR/algebra
install -d -m 755 "$out"
# q FILE EXPR: EXPR over the digest of the log line in FILE
q() {
	python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read())["digest"]; print(eval(sys.argv[2]))' "$@"
}
m='bpc=posix_write_bytes/posix_write_calls'

# --- difference: a run against itself is zero; the two runs, rank by rank
"$LWM2" diff --file "$JCLOG" "$job_a" "$job_a" --output "$out/zero.jsonl" >"$out/zero.txt"
is "$?" 0 "diff of $job_a with itself: exit 0"
is "$(q "$out/zero.jsonl" 'd["scope"]["totals"]["posix_write_bytes"], d["scope"]["metrics"]["bytes_written"]["max"], d["derived"]["ranks_aligned"]')" \
	"(0, 0, True)" "itself: 0 bytes written, rank by rank"
"$LWM2" diff --file "$JCLOG" "$job_a" "$job_b" --output "$out/d.jsonl" --metric "$m" >"$out/d.txt"
check "diff of $job_a and $job_b: exit 0 or 1" test "$?" -le 1
is "$(q "$out/d.jsonl" 'd["derived"]["operation"], [o["job_id"] for o in d["derived"]["operands"]], d["derived"]["ranks_aligned"], d["scope"]["totals"]["posix_write_bytes"]')" \
	"('diff', [$job_a, $job_b], True, 0)" "the same writes in both: 0, rank by rank"
is "$(q "$out/d.jsonl" 'd["scope"]["derived_metrics"]["bpc"]["value"], d["scope"]["derived_metrics"]["bpc"]["why"]')" \
	"(None, 'division by zero')" "bytes per call of a difference of 0 calls: n/a"

# --- the mean, from accounting (as the owner) and from the log
as_user "$LWM2" mean "$job_a" "$job_b" --metric "$m" >"$out/m.jsonl" 2>"$out/err"
is "$?" 0 "mean of $job_a and $job_b from accounting"
is "$(q "$out/m.jsonl" 'd["scope"]["totals"]["posix_write_bytes"], d["scope"]["derived_metrics"]["bpc"]["value"]')" \
	"(33554432, 1048576)" "mean: 32 MB written (2 tasks, 16 MB each), 1 MB a call"
"$LWM2" mean --file "$JCLOG" "$job_a" "$job_b" -o "$out/ml.jsonl" --metric "$m"
is "$?" 0 "mean of $job_a and $job_b from the log"
is "$(q "$out/ml.jsonl" 'd["derived"]["ranks_aligned"], [s["metrics"]["bytes_written"]["avg"] for s in d["steps"] if s["step_id"] == 0]')" \
	"(True, [16777216])" "mean from the log: rank by rank, 16 MB for each task of step 0"

# --- every reader renders them
"$LWM2" digest --file "$out/d.jsonl" -a -S 2000-01-01 >"$out/d-render.txt"
is "$?" 0 "digest --file reads the difference"
grep -q "^Derived: the difference B - A of 2 digests, not a run: A = job $job_a" "$out/d-render.txt" &&
	ok "digest --file: the derived line" || not_ok "digest --file: the derived line"
grep -q '^  bpc  *n/a  = posix_write_bytes/posix_write_calls (division by zero)$' "$out/d-render.txt" &&
	ok "digest --file: the derived metric, n/a" || not_ok "digest --file: the derived metric, n/a"
"$LWM2" digest --file "$out/ml.jsonl" -a -S 2000-01-01 -n -o JobIDRaw,posix_write_bytes,bpc --metric "$m" >"$out/o.txt"
is "$(tr -s ' ' <"$out/o.txt")" " $job_a 33554432 1048576" "-o columns of the mean, with the derived metric"
"$LWM2" ranks --file "$out/ml.jsonl" "$job_a" >"$out/r.txt"
is "$?" 0 "ranks reads the mean"
grep -q '^Derived: the mean of 2 digests' "$out/r.txt" && ok "ranks: the derived line" || not_ok "ranks: the derived line"
grep -q '^  bpc  *1048576' "$out/r.txt" && ok "ranks: the derived metric" || not_ok "ranks: the derived metric"
"$LWM2" report --file "$out/ml.jsonl" -j "$job_a" -o "$out/m.html" 2>"$out/err"
is "$?" 0 "report reads the mean"
grep -q 'Derived: the mean of 2 digests' "$out/m.html" && ok "report: the derived line" || not_ok "report: the derived line"
grep -q '<tr><th>bpc</th><td>1048576</td>' "$out/m.html" && ok "report: the derived metric" ||
	not_ok "report: the derived metric"
done_testing
