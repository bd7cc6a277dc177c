#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The site's rules of who is measured (plugstack on.SCOPE= and off.SCOPE=,
# spank_lwm2(8) WHO IS MEASURED) on the private cluster: the most specific
# scope that names the job decides (user over account over QOS over
# partition over default=), a user's own --lwm2 over the rules, off.nodes=
# over everything, and a node list Slurm cannot read measures nothing.
# Measured or not is read from the tasks themselves: liblwm2.so in
# LD_PRELOAD and LWM2_MODE, or neither.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/spank-lib.sh
. "$(dirname "$0")/spank-lib.sh"

spank_setup off.partition=debug "on.user=$TEST_USER"
PLUGSTACK_BASE="lib=$LIBDIR/liblwm2.so basedir=$BASEDIR spool=$SPOOL"
account=${LWM2_CLUSTER_ACCOUNT:-lwm2}
# shellcheck disable=SC2016 # the task's own expansions
probe='echo "node=$SLURMD_NODENAME measured=$([ "${LWM2_MODE:-}" = on ] && [[ "${LD_PRELOAD:-}" == *liblwm2.so* ]] && echo yes || echo no)"'

# measured USER NODES...: "yes"/"no" per node, in the order of the nodes,
# for one task on each of NODES run as USER with the options before --.
measured() {
	local user=$1 nodes=$2
	shift 2
	run_job -u "$user" -w "$nodes" -N"$(wc -w <<<"${nodes//,/ }")" --ntasks-per-node=1 \
		"$@" bash -c "$probe" || return 1
	sort <<<"$JOB_OUT" | sed -n 's/^node=\(n[0-9]*\) measured=\(yes\|no\)$/\1:\2/p' | tr '\n' ' '
}

# --- off.partition=debug on.user=TEST_USER: the user rule is the more specific
is "$(measured "$TEST_USER" n1)" "n1:yes " "on.user over off.partition: $TEST_USER measured"
is "$(measured "$OTHER_USER" n1)" "n1:no " "off.partition: $OTHER_USER (no user rule) not measured"
is "$(measured "$OTHER_USER" n1 --lwm2=on)" "n1:yes " \
	"off.partition: $OTHER_USER's own --lwm2=on measures"

# --- default=off on.account=ACCOUNT off.user=OTHER_USER
spank_plugstack "$PLUGSTACK_BASE default=off on.account=$account off.user=$OTHER_USER"
is "$(measured "$TEST_USER" n1)" "n1:yes " "default=off, on.account=$account: measured"
is "$(measured "$OTHER_USER" n1)" "n1:no " "off.user over on.account: $OTHER_USER not measured"
is "$(measured "$COORD_USER" n1 --lwm2=off)" "n1:no " "on.account: a user's --lwm2=off (optout=yes)"

# --- on.qos over off.partition, and a batch job's steps follow the rules too
spank_plugstack "$PLUGSTACK_BASE off.partition=debug on.qos=normal"
is "$(measured "$OTHER_USER" n1)" "n1:yes " "on.qos=normal over off.partition=debug: measured"
printf '#!/bin/bash\n%s\nsrun -n1 bash -c %q\n' "$probe" "$probe" >"$TESTDIR/$TEST_USER/policy.sh"
chmod 755 "$TESTDIR/$TEST_USER/policy.sh"
job=$(sbatch_as -N1 -o "policy-%j.out" policy.sh)
wait_job "$job" 60 >/dev/null
is "$(sed -n 's/^node=n[0-9]* measured=//p' "$TESTDIR/$TEST_USER/policy-$job.out" 2>/dev/null | tr '\n' ' ')" \
	"yes yes " "a batch job: its script and its step measured by the same rule"

# --- off.nodes: that node never, whatever the rules or the user say
spank_plugstack "$PLUGSTACK_BASE on.user=$TEST_USER off.nodes=n[2-3]"
is "$(measured "$TEST_USER" n1,n2)" "n1:yes n2:no " "off.nodes=n[2-3]: n2 not measured, n1 is"
is "$(measured "$TEST_USER" n2 --lwm2=on)" "n2:no " "off.nodes over the user's --lwm2=on"

# --- rank subsets: only the chosen ranks measured, the others counted as
# left out in the node records
spank_plugstack "$PLUGSTACK_BASE"
# shellcheck disable=SC2016 # the task's own expansions
rank_probe='echo "rank=$SLURM_PROCID measured=$([ "${LWM2_MODE:-}" = on ] && [[ "${LD_PRELOAD:-}" == *liblwm2.so* ]] && echo yes || echo no) job=$SLURM_JOB_ID"'
# ranks_measured OPTIONS...: the ranks measured, in order, of a 4-task step
# on 2 nodes, into RANKS; its job into job
ranks_measured() {
	RANKS=
	run_job -N2 -n4 "$@" bash -c "$rank_probe" || return 1
	job=$(job_of "$JOB_OUT")
	RANKS=$(sed -n 's/^rank=\([0-9]*\) measured=yes .*/\1/p' <<<"$JOB_OUT" | sort -n | tr '\n' ' ')
}
# left_out JOB: tasks left out and tasks expected, over the step's node records
left_out() {
	local f out=0 exp=0 a b
	for f in "$SPOOL/$1"/0.*.lwm2node; do
		read -r a b < <(node_field "$f" "r['totals'].get('unmeasured', {}).get('rank_subset', 0), r['expected_tasks']" | tr -d '(),')
		out=$((out + a))
		exp=$((exp + b))
	done
	echo "$out left out, $exp expected"
}
ranks_measured --lwm2-ranks=0,2-3
is "$RANKS" "0 2 3 " "--lwm2-ranks=0,2-3: ranks 0, 2 and 3 measured"
for _ in $(seq 1 50); do
	[ "$(find "$SPOOL/$job" -name '0.*.lwm2node' 2>/dev/null | wc -l)" = 2 ] && break
	sleep 0.2
done
is "$(left_out "$job")" "1 left out, 3 expected" "the node records count the task left out"
ranks_measured --lwm2-ranks=first,last
is "$RANKS" "0 3 " "--lwm2-ranks=first,last: ranks 0 and 3"
ranks_measured --lwm2-ranks=random:2
is "$(wc -w <<<"$RANKS")" 2 "--lwm2-ranks=random:2: two ranks in all"
out=$(as_user srun -N1 -n1 --lwm2-ranks=3-1 true 2>&1)
check "--lwm2-ranks=3-1 refused before submission" grep -q "couldn't use --lwm2-ranks=3-1" <<<"$out"
spank_plugstack "$PLUGSTACK_BASE ranks=last"
ranks_measured
is "$RANKS" "3 " "plugstack ranks=last: the last rank only"
ranks_measured --lwm2-ranks=1
is "$RANKS" "1 " "the user's --lwm2-ranks over the site's ranks="

# --- a node list Slurm's parser refuses: nothing measured, said in slurmd's log
spank_plugstack "$PLUGSTACK_BASE off.nodes=n[3-1]"
is "$(measured "$TEST_USER" n1)" "n1:no " "off.nodes=n[3-1] (a range backwards): nothing measured"
check "slurmd's log says the node list is unreadable" \
	grep -q "off.nodes=n\[3-1\] is not a node list" <(slurmd_logs)

# --- rules that cannot hold are refused as any bad argument: not measured, one line
spank_plugstack "$PLUGSTACK_BASE on.user=$TEST_USER off.user=$TEST_USER"
is "$(measured "$TEST_USER" n1)" "n1:no " "a user in on.user and off.user: the arguments refused"
check "slurmd's log names the conflict" \
	grep -q "on.user: '$TEST_USER' is also in off.user" <(slurmd_logs)

done_testing
