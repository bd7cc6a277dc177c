# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What the t-jobcomp-*.sh tests share: spank_lwm2.so, liblwm2.so,
# jobcomp_lwm2.so and the lwm2 command of the build under test installed
# where the daemons and the test users can use them, an lwm2.conf next to
# the cluster's slurm.conf, and the cluster restarted with
# JobCompType=jobcomp/lwm2.
#
#   jobcomp_setup [LWM2.CONF LINES...]
#
# Sets LIBDIR, BASEDIR, SPOOL, JCDIR, JCLOG, STATEDIR, LWM2 (the command),
# CTLD_LOG, CTLD_FROM.  LWM2_BUILDDIR is the build tree (default: the source tree).

jobcomp_builddir() {
	local d
	for d in "${LWM2_BUILDDIR:-}" "$LWM2_TOP"; do
		if [ -n "$d" ] && [ -f "$d/jobcomp/.libs/jobcomp_lwm2.so" ] &&
			[ -f "$d/spank/.libs/spank_lwm2.so" ] &&
			[ -f "$d/preload/.libs/liblwm2.so" ] && [ -x "$d/digest/lwm2" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# jobcomp_conf LINES...: (re)write lwm2.conf; slurmctld reads it at start.
jobcomp_conf() {
	{
		echo "# written by $(basename "$0")"
		echo "SpoolDir=$SPOOL"
		echo "StateDir=$STATEDIR"
		echo "LateRecordWait=60"
		echo "RecordSettle=1"
		echo "VerifyDelay=2"
		# done at the first read-back that finds the part (a test of
		# the window sets its own)
		echo "VerifyWindow=0"
		echo "LwmCommand=$LWM2"
		echo "SlurmConf=$LWM2_CLUSTER_DIR/etc/slurm.conf"
		printf '%s\n' "$@"
	} >"$LWM2_CLUSTER_DIR/etc/lwm2.conf"
	chmod 644 "$LWM2_CLUSTER_DIR/etc/lwm2.conf"
}

jobcomp_setup() {
	local build
	build=$(jobcomp_builddir) ||
		skip_all "jobcomp_lwm2.so, spank_lwm2.so, liblwm2.so or lwm2 not built (configure --with-slurm-source; make)"
	cluster_up
	LIBDIR=$TESTDIR/lib
	install -d -m 755 "$LIBDIR" "$TESTDIR/plugins" "$TESTDIR/bin"
	install -m 755 "$build/spank/.libs/spank_lwm2.so" "$LIBDIR/spank_lwm2.so"
	install -m 755 "$build/preload/.libs/liblwm2.so" "$LIBDIR/liblwm2.so"
	install -m 755 "$build/jobcomp/.libs/jobcomp_lwm2.so" "$TESTDIR/plugins/jobcomp_lwm2.so"
	install -m 755 "$build/digest/lwm2" "$TESTDIR/bin/lwm2"
	LWM2=$TESTDIR/bin/lwm2
	BASEDIR=$TESTDIR/run
	SPOOL=$TESTDIR/spool
	install -d -m 755 "$SPOOL"
	JCDIR=$TESTDIR/jobcomp
	install -d -m 700 "$JCDIR"
	JCLOG=$JCDIR/digests.jsonl
	STATEDIR=$JCDIR/state
	CTLD_LOG=$LWM2_CLUSTER_DIR/log/slurmctld.log
	# slurmctld's log is the cluster's, kept from test to test: this
	# test's part of it begins here (ctld_log)
	CTLD_FROM=$(($(cat "$CTLD_LOG" 2>/dev/null | wc -l) + 1))
	jobcomp_conf "$@"
	# A test's own part of the restart, now that its directory is known:
	# its function jobcomp_before_reconfig may set JOBCOMP_PLUGSTACK_FIRST
	# (plugstack.conf lines before lwm2's) and JOBCOMP_SETTINGS (more
	# cluster.sh settings): t-pyxis.sh's pyxis, enroot in the daemons' PATH.
	# JOBCOMP_PLUGSTACK_ARGS: more arguments of lwm2's plugstack line.
	JOBCOMP_PLUGSTACK_FIRST=${JOBCOMP_PLUGSTACK_FIRST:-}
	declare -F jobcomp_before_reconfig >/dev/null && jobcomp_before_reconfig
	cluster_reconfig \
		"LWM2_PLUGSTACK=${JOBCOMP_PLUGSTACK_FIRST:+$JOBCOMP_PLUGSTACK_FIRST
}optional $LIBDIR/spank_lwm2.so lib=$LIBDIR/liblwm2.so basedir=$BASEDIR spool=$SPOOL${JOBCOMP_PLUGSTACK_ARGS:+ $JOBCOMP_PLUGSTACK_ARGS}" \
		"LWM2_PLUGIN_DIR=$TESTDIR/plugins" \
		"LWM2_CLUSTER_DEBUG=debug" \
		"LWM2_CLUSTER_MAILPROG=${JOBCOMP_MAILPROG:-/bin/true}" \
		"LWM2_CLUSTER_EXTRA_CONF=JobCompType=jobcomp/lwm2
JobCompLoc=$JCLOG
${JOBCOMP_EXTRA_CONF:-}" ${JOBCOMP_SETTINGS[@]+"${JOBCOMP_SETTINGS[@]}"} ||
		bail_out "cluster reconfig with jobcomp/lwm2 failed"
	grep -q "lwm2: init: settings from" "$CTLD_LOG" ||
		bail_out "slurmctld did not load jobcomp/lwm2: $(grep -i 'jobcomp\|lwm2' "$CTLD_LOG" | tail -n 5)"
}

# ctld_log: slurmctld's log since jobcomp_setup (not the earlier tests')
ctld_log() {
	tail -n "+$CTLD_FROM" "$CTLD_LOG"
}

# digest_as [-u USER] ARGS...: `lwm2 digest ARGS` as the test user, with the
# cluster's client environment.
digest_as() {
	local u=()
	if [ "${1:-}" = -u ]; then
		u=(-u "$2")
		shift 2
	fi
	as_user "${u[@]}" "$LWM2" digest "$@"
}

# wait_digest JOB [SECONDS]: until AdminComment holds the LWM2 part (60 s).
wait_digest() {
	local i limit=$((${2:-60} * 2))
	for ((i = 0; i < limit; i++)); do
		if sacct -n -X -P -j "$1" -o AdminComment%60000 2>/dev/null | grep -q 'LWM2:{'; then
			return 0
		fi
		sleep 0.5
	done
	return 1
}

# in_state JOB: the job has a file in the state dir.
in_state() {
	compgen -G "$STATEDIR/$1.*.job" >/dev/null
}

# wait_line JOB: until the log has a line of the job with its digest (at
# most 60 s).
wait_line() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(log_line "$1" "l['status']")" = ok ] && return 0
		sleep 0.2
	done
	return 1
}

# db_jobs DB: the jobs in the database DB, as `lwm2 db check` counts them.
db_jobs() {
	"$LWM2" db check --db "$1" 2>/dev/null | sed -n 's/^jobs: \([0-9]*\) .*/\1/p'
}

# wait_db DB: until the database DB has a row for every line of the log
# (the worker writes the lines that wait as one group, a quarter of a
# second after the first; at most 30 s).
wait_db() {
	local i
	for ((i = 0; i < 150; i++)); do
		[ -s "$1" ] && [ "$(db_jobs "$1")" = "$(grep -c . "$JCLOG" 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	return 1
}

# log_line JOB EXPR: a value of the job's line in the JSON-lines log, EXPR a
# Python expression over the line l (last line of that job); NO-LINE
# when there is none (nor a log yet).
log_line() {
	if [ ! -e "$JCLOG" ]; then
		echo NO-LINE
		return
	fi
	python3 - "$JCLOG" "$1" "$2" <<'PY'
import json, sys
last = None
for s in open(sys.argv[1]):
    try:
        l = json.loads(s)
    except ValueError:
        continue
    if str(l.get("job_id")) == sys.argv[2]:
        last = l
l = last
print(eval(sys.argv[3]) if l is not None else "NO-LINE")
PY
}

# log_tasks ARRAY: the lines of the array job's tasks in the log and how
# many distinct tasks they are, "LINES TASKS"
log_tasks() {
	python3 - "$JCLOG" "$1" <<'PY'
import json, sys
tasks = []
for s in open(sys.argv[1]):
    try:
        l = json.loads(s)
    except ValueError:
        continue
    if str(l.get("array_job_id")) == sys.argv[2]:
        tasks.append(l.get("array_task_id"))
print(len(tasks), len(set(tasks)))
PY
}

# --- lwm2-jobend: lwm2 from EpilogSlurmctld beside the site's own jobcomp
# plugin (t-jobcomp-site.sh).
#
#   jobend_setup [LWM2.CONF LINES...]
#
# Installs what jobcomp_setup does, and lwm2-jobend, without taking the
# JobCompType slot; writes lwm2.conf with LogFile= (JCLOG) and JobEndLog=
# (JOBEND_MSGS), and EPILOG, the site's EpilogSlurmctld script with lwm2's
# one line, which also notes the program's own wall time in microseconds
# ("JOB US" lines in JOBEND_US).  Sets JOBEND besides jobcomp_setup's names.
jobend_setup() {
	local build
	build=$(jobcomp_builddir) ||
		skip_all "spank_lwm2.so, liblwm2.so or lwm2 not built (make)"
	[ -x "$build/jobcomp/lwm2-jobend" ] || skip_all "lwm2-jobend not built (make -C jobcomp)"
	cluster_up
	LIBDIR=$TESTDIR/lib
	install -d -m 755 "$LIBDIR" "$TESTDIR/bin"
	install -m 755 "$build/spank/.libs/spank_lwm2.so" "$LIBDIR/spank_lwm2.so"
	install -m 755 "$build/preload/.libs/liblwm2.so" "$LIBDIR/liblwm2.so"
	install -m 755 "$build/digest/lwm2" "$TESTDIR/bin/lwm2"
	install -m 755 "$build/jobcomp/lwm2-jobend" "$TESTDIR/bin/lwm2-jobend"
	LWM2=$TESTDIR/bin/lwm2
	JOBEND=$TESTDIR/bin/lwm2-jobend
	BASEDIR=$TESTDIR/run
	SPOOL=$TESTDIR/spool
	install -d -m 755 "$SPOOL"
	JCDIR=$TESTDIR/jobcomp
	install -d -m 700 "$JCDIR"
	JCLOG=$JCDIR/digests.jsonl
	STATEDIR=$JCDIR/state
	JOBEND_MSGS=$JCDIR/jobend.log
	JOBEND_US=$JCDIR/jobend-us
	CTLD_LOG=$LWM2_CLUSTER_DIR/log/slurmctld.log
	jobcomp_conf "LogFile=$JCLOG" "JobEndLog=$JOBEND_MSGS" "$@"
	EPILOG=$TESTDIR/bin/epilog-slurmctld
	cat >"$EPILOG" <<SH
#!/bin/sh
# A site's EpilogSlurmctld: its own work, then lwm2's one line (timed here
# for the test).
t0=\$(date +%s%N)
SLURM_CONF=$LWM2_CLUSTER_DIR/etc/slurm.conf LWM2_JOBEND_DEBUG=1 $JOBEND
t1=\$(date +%s%N)
echo "\$SLURM_JOB_ID \$(( (t1 - t0) / 1000 ))" >>$JOBEND_US
exit 0
SH
	chmod 755 "$EPILOG"
}

# jobend_reconfig JOBCOMP-LINES EPILOG|"": the cluster restarted with the
# site's jobcomp plugin and, unless EPILOG is empty, lwm2-jobend run from
# EpilogSlurmctld.
jobend_reconfig() {
	local extra=$1
	# DebugFlags=Script: slurmctld logs when it starts the epilog and when
	# the epilog has returned (jobend_epilog_ms)
	[ -n "$2" ] && extra="$extra
EpilogSlurmctld=$2
DebugFlags=Script"
	cluster_reconfig \
		"LWM2_PLUGSTACK=optional $LIBDIR/spank_lwm2.so lib=$LIBDIR/liblwm2.so basedir=$BASEDIR spool=$SPOOL" \
		"LWM2_CLUSTER_DEBUG=debug" \
		"LWM2_CLUSTER_EXTRA_CONF=$extra"
}

# jobend_epilog_ms JOB: milliseconds between slurmctld's first and last
# log line about the job's epilog (DebugFlags=Script), "NONE" without two.
jobend_epilog_ms() {
	python3 - "$CTLD_LOG" "$1" <<'PY'
import re, sys
from datetime import datetime
ts = []
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\[(\S+?)\] ", line)
    if m and "SCRIPT" in line and re.search(r"JobId=%s\b" % sys.argv[2], line):
        ts.append(datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f"))
print(int((ts[-1] - ts[0]).total_seconds() * 1000) if len(ts) >= 2 else "NONE")
PY
}

# my ARGS...: the cluster's MariaDB as root, through its socket.
my() { timeout 30 mariadb --no-defaults --socket="$LWM2_CLUSTER_DIR/run/mysqld.sock" -uroot -B -N "$@"; }

# mariadb_database NAME PASSWORD: database NAME on the cluster's MariaDB,
# made afresh, with a user NAME of that password; its address for lwm2
# in MARIADB_URL, or the reason there is none in mariadb_why.
# shellcheck disable=SC2034 # both read by the tests
mariadb_database() {
	local name=$1 pw=$2
	mariadb_why=
	MARIADB_URL=
	if ! command -v mariadb >/dev/null; then
		mariadb_why="the mariadb client is not installed"
	elif "$LWM2" stats --db mysql://x@localhost/x 2>&1 | grep -q "built without MariaDB"; then
		mariadb_why="lwm2 built without MariaDB/MySQL (configure found no libmariadb-dev)"
	elif ! my -e "DROP DATABASE IF EXISTS $name; CREATE DATABASE $name;
		CREATE USER IF NOT EXISTS '$name'@'localhost';
		ALTER USER '$name'@'localhost' IDENTIFIED BY '$pw';
		GRANT ALL ON $name.* TO '$name'@'localhost';" 2>"$TESTDIR/my.err"; then
		mariadb_why="couldn't make database $name on the cluster's server: $(tail -n 1 "$TESTDIR/my.err")"
	else
		MARIADB_URL="mysql://$name:$pw@localhost/$name?socket=$LWM2_CLUSTER_DIR/run/mysqld.sock"
	fi
}
