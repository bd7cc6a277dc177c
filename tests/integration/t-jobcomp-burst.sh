#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A burst of jobs ending together (an array of LWM2_BURST_JOBS tasks, 100
# by default; bench/burst.sh runs 1,000 and compares slurmctld's RPC times
# with and without the database): every task's digest in the log and in
# the central database beside it, within a minute of the last end, none
# lost, none twice, and slurmctld's log without a database message.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v sqlite3 >/dev/null || skip_all "sqlite3 not installed (contrib/install-deps.sh installs it)"
jobcomp_setup
plan 6

n=${LWM2_BURST_JOBS:-100}
arr=$(sbatch_as --array="1-$n" -N1 -n1 -o /dev/null --wrap true) || bail_out "sbatch of the array failed"

# until no task is left in the queue (each takes well under a second)
for ((i = 0; i < 600; i++)); do
	[ -z "$(squeue -h -j "$arr" -o %i 2>/dev/null)" ] && break
	sleep 0.5
done
is "$(squeue -h -j "$arr" -o %i 2>/dev/null | wc -l)" 0 "the $n tasks of array $arr ended"

# the log: a line per task, each with its array task id
in_log() { log_tasks "$arr"; }
for ((i = 0; i < 240; i++)); do
	[ "$(in_log)" = "$n $n" ] && break
	sleep 0.5
done
is "$(in_log)" "$n $n" "the log: a line for each task, none twice"
last=$(date +%s)

# the database: a row for each task within a minute of the last line
in_db() {
	sqlite3 -readonly "$JCDIR/lwm2.db" \
		"SELECT count(*), count(DISTINCT sacct_id) FROM job WHERE sacct_id LIKE '${arr}\_%' ESCAPE '\\'" \
		2>/dev/null | tr '|' ' '
}
for ((i = 0; i < 120; i++)); do
	[ "$(in_db)" = "$n $n" ] && break
	sleep 0.5
done
is "$(in_db)" "$n $n" "the database: a row for each task, none twice"
check "  within a minute of the last line ($(($(date +%s) - last)) s)" test $(($(date +%s) - last)) -le 60
is "$("$LWM2" history --db "$JCDIR/lwm2.db" --json 2>&1 | grep -c "\"job_id\":")" \
	"$("$LWM2" history -f "$JCLOG" --json 2>&1 | grep -c "\"job_id\":")" \
	"lwm2 history --db: as many runs as from the log"
is "$(ctld_log | grep -c 'lwm2: database:')" 0 "slurmctld's log: no database trouble"

done_testing
