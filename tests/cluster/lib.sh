# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Helpers for integration tests on the private cluster (tests/cluster/
# cluster.sh). A test sources this file, calls cluster_up, and prints TAP.
#
# Standalone, each test starts its own cluster in LWM2_CLUSTER_DIR (default:
# a new mktemp directory) and stops it on exit. A suite shares one cluster:
#
#   tests/cluster/cluster.sh start "$dir"
#   LWM2_CLUSTER_DIR=$dir bash tests/integration/t-....sh   # for each test
#   tests/cluster/cluster.sh stop "$dir"
#
# cluster_up sees the running cluster there and leaves it running on exit.
# LWM2_KEEP=1 keeps the scratch directory of a standalone run.

LWM2_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LWM2_CLUSTER_SH=$LWM2_TOP/tests/cluster/cluster.sh
TEST_USER=lwm2test
OTHER_USER=lwm2other
# in the account as the others; made its coordinator by the tests that need one
COORD_USER=lwm2coord

# ---------------------------------------------------------------- TAP

# shellcheck source=tests/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tap.sh"

# ---------------------------------------------------------------- cluster

_cluster_own=0
_cluster_made_dir=0

# Skips the whole test where a private cluster cannot run.
cluster_prereq() {
	[ "$(id -u)" -eq 0 ] || skip_all "needs root to start the private cluster"
	local c
	# python3 reads the JSON the tests check.
	for c in slurmctld slurmd slurmdbd mariadbd mariadb-install-db munged srun python3; do
		PATH=$PATH:/usr/sbin command -v "$c" >/dev/null ||
			skip_all "$c not installed (contrib/install-deps.sh)"
	done
}

cluster_up() {
	cluster_prereq
	if [ -n "${LWM2_CLUSTER_DIR:-}" ] &&
		bash "$LWM2_CLUSTER_SH" status "$LWM2_CLUSTER_DIR" >/dev/null 2>&1; then
		_cluster_own=0
	else
		if [ -z "${LWM2_CLUSTER_DIR:-}" ]; then
			LWM2_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-cluster.XXXXXX")
			_cluster_made_dir=1
		fi
		_cluster_own=1
		trap cluster_down EXIT
		trap 'exit 130' INT TERM
		local out
		if ! out=$(bash "$LWM2_CLUSTER_SH" start "$LWM2_CLUSTER_DIR" 2>&1); then
			diag "$out"
			bail_out "private cluster did not start (logs: $LWM2_CLUSTER_DIR/log)"
		fi
	fi
	eval "$(bash "$LWM2_CLUSTER_SH" env "$LWM2_CLUSTER_DIR")"
	# Each test gets its own work area, one directory per user inside it, so
	# job output of one user is not readable by the other.
	mkdir -p "$LWM2_CLUSTER_DIR/work"
	chmod 755 "$LWM2_CLUSTER_DIR/work"
	TESTDIR=$(mktemp -d "$LWM2_CLUSTER_DIR/work/$(basename "$0" .sh).XXXXXX")
	chmod 755 "$TESTDIR"
	local u
	for u in "$TEST_USER" "$OTHER_USER" "$COORD_USER"; do
		install -d -o "$u" -g "$u" -m 700 "$TESTDIR/$u"
	done
	export TESTDIR
}

cluster_down() {
	local rc=$?
	[ "$_cluster_own" -eq 1 ] || return "$rc"
	_cluster_own=0
	bash "$LWM2_CLUSTER_SH" stop "$LWM2_CLUSTER_DIR" >/dev/null 2>&1 ||
		echo "# cluster stop failed in $LWM2_CLUSTER_DIR"
	if [ "$_cluster_made_dir" -eq 1 ]; then
		if [ "$rc" -eq 0 ] && [ "${LWM2_KEEP:-0}" != 1 ]; then
			rm -rf "$LWM2_CLUSTER_DIR"
		else
			echo "# cluster directory kept: $LWM2_CLUSTER_DIR"
		fi
	fi
	return "$rc"
}

# cluster_reconfig NAME=VALUE...: restart the Slurm daemons with these
# cluster.sh settings (LWM2_CLUSTER_PRIVATEDATA=jobs, LWM2_PLUGSTACK=...)
# on top of those the cluster was started with; the start settings come back
# when the test exits.
cluster_reconfig() {
	(
		# shellcheck disable=SC1091
		. "$LWM2_CLUSTER_DIR/etc/start.env"
		# shellcheck disable=SC2163
		export "$@"
		bash "$LWM2_CLUSTER_SH" reconfig "$LWM2_CLUSTER_DIR"
	) >"$LWM2_CLUSTER_DIR/log/reconfig.out" 2>&1 || {
		# Say why: the daemons' own logs stay in the cluster directory.
		sed 's/^/# reconfig: /' "$LWM2_CLUSTER_DIR/log/reconfig.out" | tail -n 20
		return 1
	}
	# A cluster of this test's own goes away with it anyway.
	if [ "$_cluster_own" -eq 0 ] && [ -z "${_cluster_restore:-}" ]; then
		_cluster_restore=1
		at_exit _cluster_restore_conf
	fi
}

# at_exit CMD: run CMD when the test exits, before what is already due then
# (cluster_reconfig's return to the start configuration, cluster_down),
# with the test's exit status kept for them: a test's own EXIT trap that
# replaced them left the shared cluster reconfigured for the tests after it.
at_exit() {
	local prev
	prev=$(trap -p EXIT)
	prev=${prev#"trap -- '"}
	prev=${prev%"' EXIT"}
	prev=${prev//"'\\''"/"'"}
	# shellcheck disable=SC2064,SC2154 # the handlers as they are now, on purpose
	trap "_at_exit_rc=\$?; $1; (exit \$_at_exit_rc); ${prev:-:}" EXIT
}

_cluster_restore_conf() {
	local rc=$?
	(
		# shellcheck disable=SC1091
		. "$LWM2_CLUSTER_DIR/etc/start.env"
		bash "$LWM2_CLUSTER_SH" reconfig "$LWM2_CLUSTER_DIR"
	) >/dev/null 2>&1 || echo "# restoring the cluster configuration failed"
	return "$rc"
}

# ---------------------------------------------------------------- jobs

# as_user [-u USER] CMD...: run as the test user (default lwm2test) in that
# user's work directory, with the cluster's client environment.
as_user() {
	local user=$TEST_USER
	if [ "${1:-}" = -u ]; then
		user=$2
		shift 2
	fi
	local dir=${TESTDIR:-/nonexistent}/$user
	[ -d "$dir" ] || dir=/tmp
	# shellcheck disable=SC2016
	runuser -u "$user" -- /bin/bash -c 'cd "$1" && shift && exec "$@"' \
		as_user "$dir" "$@"
}

# run_job [-u USER] SRUN-ARGS...: srun as the user; output in JOB_OUT.
# Fails (with the output as TAP diagnostics) when srun does.
run_job() {
	if run_job_unchecked "$@"; then
		return 0
	fi
	diag "srun $* failed:" "$JOB_OUT"
	return 1
}

run_job_unchecked() {
	local u=()
	if [ "${1:-}" = -u ]; then
		u=(-u "$2")
		shift 2
	fi
	local rc=0
	JOB_OUT=$(as_user "${u[@]}" timeout "${LWM2_JOB_TIMEOUT:-60}" srun "$@" 2>&1) || rc=$?
	return "$rc"
}

# sbatch_as [-u USER] ARGS...: sbatch --parsable as the user (default
# lwm2test), ARGS as sbatch takes them (a script and its own arguments
# last, or --wrap); prints the job id.
sbatch_as() {
	local u=() out
	if [ "${1:-}" = -u ]; then
		u=(-u "$2")
		shift 2
	fi
	out=$(as_user "${u[@]}" sbatch --parsable "$@" 2>&1) || {
		diag "sbatch $* failed:" "$out"
		return 1
	}
	echo "${out%%;*}"
}

# submit_batch [-u USER] SCRIPT [SBATCH-ARGS...]: prints the job id.
submit_batch() {
	local u=()
	if [ "${1:-}" = -u ]; then
		u=(-u "$2")
		shift 2
	fi
	local script=$1
	shift
	sbatch_as "${u[@]}" "$@" "$script"
}

# Terminal states as sacct prints them; CANCELLED may carry "by UID".
_job_done_re='^(COMPLETED|FAILED|CANCELLED.*|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$'

# wait_job JOBID [TIMEOUT]: wait until accounting has the job's final state
# and print it. The record reaches slurmdbd after squeue forgets the job.
wait_job() {
	local id=$1 limit=$((${2:-60} * 5)) i state
	for ((i = 0; i < limit; i++)); do
		state=$(sacct -n -X -P -j "$id" -o State 2>/dev/null | head -n 1)
		if [[ $state =~ $_job_done_re ]]; then
			# a job that did not complete says which step failed and
			# how, on stderr: the caller reads the state from stdout
			[ "$state" = COMPLETED ] ||
				diag "job $id ended $state; its steps:" \
					"$(sacct -n -P -j "$id" -o JobID,State,ExitCode,NodeList,Elapsed 2>&1)" >&2
			echo "$state"
			return 0
		fi
		sleep 0.2
	done
	diag "job $id not finished after ${2:-60} s (state '${state:-}')"
	return 1
}

# sacct_field JOBID[.STEP] FIELD: the field of the job (or of that step).
sacct_field() {
	local x=(-X)
	case $1 in *.*) x=() ;; esac
	sacct -n -P "${x[@]}" -j "$1" -o "$2" 2>/dev/null | head -n 1
}
