#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The Debian packages as a site installs them (tests/suite.sh's deb stage
# builds and installs them first): spank_lwm2.so and jobcomp_lwm2.so found
# in Slurm's own PluginDir by name, liblwm2.so at the path the plugin was
# built with (no lib= argument), /usr/bin/lwm2 and the man pages; a job of
# the test user gets its digest through the installed plugins and command.
# The jobcomp package depends on exactly the Slurm version it was built for.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

for p in lwm2 slurm-spank-lwm2 slurm-jobcomp-lwm2 lwm2-mail lwm2-jobend; do
	[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
		skip_all "package $p is not installed (tests/suite.sh's deb stage installs them)"
done
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugdir=/usr/lib/$ma/slurm-wlm
plan 16

check "spank_lwm2.so is in Slurm's plugin directory" test -f "$plugdir/spank_lwm2.so"
check "jobcomp_lwm2.so is in Slurm's plugin directory" test -f "$plugdir/jobcomp_lwm2.so"
check "liblwm2.so is where the plugin looks by default" test -f "/usr/lib/$ma/lwm2/liblwm2.so"
check "man pages are installed" bash -c "man -w lwm2 spank_lwm2 jobcomp_lwm2 lwm2-mail liblwm2 >/dev/null"
slurm_up=$(dpkg-query -W -f='${source:Upstream-Version}' slurmctld)
deps=$(dpkg-query -W -f='${Depends}' slurm-jobcomp-lwm2)
is "$(grep -oE "slurmctld \\(>= [^)]*\\), slurmctld \\(<< [^)]*\\)" <<<"$deps")" \
	"slurmctld (>= $slurm_up), slurmctld (<< $slurm_up.~)" \
	"the jobcomp package depends on exactly Slurm $slurm_up"

cluster_up
LWM2=/usr/bin/lwm2
BASEDIR=$TESTDIR/run
SPOOL=$TESTDIR/spool
install -d -m 755 "$SPOOL"
JCDIR=$TESTDIR/jobcomp
install -d -m 700 "$JCDIR"
JCLOG=$JCDIR/digests.jsonl
STATEDIR=$JCDIR/state
CTLD_LOG=$LWM2_CLUSTER_DIR/log/slurmctld.log
jobcomp_conf
# Scratch paths stay in the test directory; the plugins, the library and
# the command are the installed ones.
check "the cluster restarts with the installed plugins" cluster_reconfig \
	"LWM2_PLUGSTACK=required spank_lwm2.so basedir=$BASEDIR spool=$SPOOL" \
	"LWM2_PLUGIN_DIR=" \
	"LWM2_CLUSTER_DEBUG=debug" \
	"LWM2_CLUSTER_EXTRA_CONF=JobCompType=jobcomp/lwm2
JobCompLoc=$JCLOG"
check "slurmctld loaded the installed jobcomp/lwm2" grep -q "lwm2: init: settings from" "$CTLD_LOG"

run_job -N1 -n1 bash -c 'echo "job=$SLURM_JOB_ID LD_PRELOAD=${LD_PRELOAD:-}"; dd if=/dev/zero of=out bs=4096 count=8 status=none'
job=$(sed -n 's/^job=\([0-9]*\) .*/\1/p' <<<"$JOB_OUT")
is "$(grep -c "LD_PRELOAD=/usr/lib/$ma/lwm2/liblwm2.so" <<<"$JOB_OUT")" 1 \
	"the task has the installed liblwm2.so in LD_PRELOAD"
check "the job's digest reaches AdminComment" wait_digest "$job" 90
is "$(log_line "$job" "l['status']")" ok "the JSON-lines log has the digest"
out=$(as_user "$LWM2" digest -j "$job" -p -n -o JobID,State,posix_write_bytes 2>&1)
is "$out" "$job|COMPLETED|32768" "/usr/bin/lwm2 digest reads it back: 8 writes of 4096 bytes"
check "lwm2-mail is installed where slurm.conf's MailProg names it" test -x /usr/sbin/lwm2-mail
check "lwm2-jobend is installed for EpilogSlurmctld, with its man page" \
	bash -c "test -x /usr/sbin/lwm2-jobend && man -w lwm2-jobend >/dev/null"
# A Slurm point release keeps libslurm's soname: the package names that
# library and no Slurm version, so it outlives the update.
deps=$(dpkg-query -W -f='${Depends}' lwm2-jobend)
check "lwm2-jobend depends on libslurm's soname package, not on a Slurm version ($deps)" \
	bash -c "grep -Eq 'libslurm[0-9]+' <<<'$deps' && ! grep -q 'slurmctld' <<<'$deps'"
soname=$(objdump -p /usr/sbin/lwm2-jobend | awk '$1 == "NEEDED" && $2 ~ /^libslurm/ { print $2 }')
check "lwm2-jobend links Slurm's public library only ($soname)" \
	bash -c "[[ '$soname' =~ ^libslurm\.so\.[0-9]+$ ]]"
check "the log's rotation comes with the lwm2 package" \
	bash -c "dpkg -L lwm2 | grep -qx /etc/logrotate.d/lwm2 && logrotate -d /etc/logrotate.d/lwm2 >/dev/null 2>&1"

done_testing
