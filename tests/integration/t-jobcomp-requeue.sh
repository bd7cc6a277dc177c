#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# jobcomp/lwm2 and requeued jobs: a batch job whose first run had steps 0,
# 1 and 2 is requeued (scontrol requeue) and runs step 0 the second time.
# Each run gets its own digest, from its own steps only, in its own
# accounting row (sacct -D), and neither overwrites the other.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

# A requeued job may start again once the job credential has expired:
# 5 s here instead of 120 s.
JOBCOMP_EXTRA_CONF="AuthInfo=cred_expire=5"
jobcomp_setup "VerifyWindow=0"
plan 10

mark=$TESTDIR/$TEST_USER/first-run-done
cat >"$TESTDIR/$TEST_USER/requeue.sh" <<SH
#!/bin/bash
if [ "\${SLURM_RESTART_COUNT:-0}" -eq 0 ]; then
	srun -n1 true
	srun -n1 true
	srun -n1 true
	touch "$mark"
	sleep 120
else
	srun -n1 true
fi
SH
chmod 755 "$TESTDIR/$TEST_USER/requeue.sh"
job=$(submit_batch "$TESTDIR/$TEST_USER/requeue.sh" --requeue -N1 -n1 -o /dev/null) || job=0
for i in $(seq 1 300); do
	[ -e "$mark" ] && break
	sleep 0.2
done
check "first run: three steps done" test -e "$mark"
check "scontrol requeue $job" scontrol requeue "$job"
# the second run starts after the credential lifetime
for i in $(seq 1 250); do
	[ "$(sacct -n -D -X -P -j "$job" -o State 2>/dev/null | tail -n 1)" = COMPLETED ] && break
	sleep 0.2
done
is "$(sacct -n -D -X -P -j "$job" -o State 2>/dev/null | tr '\n' ' ')" "REQUEUED COMPLETED " \
	"accounting has two rows: the requeued run and the completed one"

# lines: the job's log lines, "restart_count state status records_accepted"
lines() {
	python3 - "$JCLOG" "$job" <<'PY'
import json, sys
for s in open(sys.argv[1]):
    try:
        l = json.loads(s)
    except ValueError:
        continue
    if str(l.get("job_id")) != sys.argv[2]:
        continue
    print(l.get("restart_count"), l.get("state"), l.get("status"), l.get("records_accepted"))
PY
}
for i in $(seq 1 150); do
	[ "$(lines | wc -l)" -ge 2 ] && break
	sleep 0.2
done
out=$(lines)
diag "log lines: $(tr '\n' ';' <<<"$out")"
is "$(wc -l <<<"$out")" 2 "two log lines, one per run"
is "$(head -n 1 <<<"$out")" "0 REQUEUED ok 4" "first run: REQUEUED, its batch step and steps 0-2"
is "$(sed -n 2p <<<"$out")" "1 COMPLETED ok 2" "second run: its batch step and step 0 only"

# each row gets the digest of its own run
rows() {
	sacct -n -D -X -P -j "$job" -o State,AdminComment%60000 2>/dev/null
}
for i in $(seq 1 150); do
	[ "$(rows | grep -c 'LWM2:{')" -ge 2 ] && break
	sleep 0.2
done
r=$(rows)
check "the REQUEUED row has a digest" grep -q '^REQUEUED|.*LWM2:{' <<<"$r"
check "the COMPLETED row has a digest" grep -q '^COMPLETED|.*LWM2:{' <<<"$r"
p1=$(grep '^REQUEUED|' <<<"$r" | sed -n 's/.*LWM2://p')
p2=$(grep '^COMPLETED|' <<<"$r" | sed -n 's/.*LWM2://p')
check "and they differ (each run's own)" test -n "$p1" -a "$p1" != "$p2"
# A wrong row would make the read-back miss the part and send it again.
sleep 3
is "$(grep -c "job $job AdminComment lacks the digest" "$CTLD_LOG")" 0 \
	"no part found missing and sent again"

done_testing
