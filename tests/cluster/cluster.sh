#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A private Slurm cluster for the integration tests, all of it under one
# scratch directory: MariaDB, slurmdbd, slurmctld and four slurmd daemons
# (virtual nodes n1..n4) on 127.0.0.1, on ports nobody else listens on.
#
#   cluster.sh start DIR      generate the configuration and start everything
#   cluster.sh stop DIR       stop what start started (safe to repeat)
#   cluster.sh status DIR     exit 0 when every daemon is up
#   cluster.sh env DIR        export lines for the client side
#   cluster.sh reconfig DIR   restart Slurm with a regenerated configuration
#   cluster.sh kill-ctld DIR  kill -9 slurmctld, as a crash would
#   cluster.sh start-ctld DIR start slurmctld again (state recovered)
#   cluster.sh restart-ctld DIR  both
#   cluster.sh stop-mariadb DIR  shut MariaDB down (slurmdbd stays, and
#                             reconnects once it is back)
#   cluster.sh start-mariadb DIR start it again on the same data
#
# Environment read by start and reconfig:
#   LWM2_PLUGIN_DIR            directories put before Slurm's own PluginDir
#   LWM2_PLUGSTACK             plugstack.conf: a file to copy, or its text
#   LWM2_CLUSTER_EXTRA_CONF    slurm.conf lines; a key given here replaces
#                              the generated line with the same key
#   LWM2_CLUSTER_DBD_EXTRA_CONF  the same for slurmdbd.conf
#   LWM2_CLUSTER_PRIVATEDATA   PrivateData= for slurm.conf and slurmdbd.conf
#   LWM2_CLUSTER_MAILPROG      MailProg= (default /bin/true)
#   LWM2_CLUSTER_DEBUG         SlurmctldDebug/SlurmdDebug (default info)
#   LWM2_CLUSTER_TIMEOUT       seconds each readiness wait may take (120: two clusters may start side by side on 2 cores)
#   LWM2_CLUSTER_CGROUP        0: proctrack/linuxproc and task/none even
#                              where the host has cgroups (default: cgroups
#                              where the host and Slurm allow, see below)
#   LWM2_CLUSTER_KEEP_FAILED   1: leave the daemons of a failed start running
#   LWM2_CLUSTER_PATH          directories put before the daemons' PATH (a
#                              SPANK plugin's helpers: pyxis runs enroot)
#   LWM2_SLURM_PREFIX          a Slurm installed under this prefix (its sbin,
#                              bin and lib/slurm) instead of the machine's
#                              (contrib/slurm-build.sh makes one); `env`
#                              then puts its bin first in PATH
#
# Cgroups as sites run them: ProctrackType=proctrack/cgroup,
# TaskPlugin=task/cgroup,task/affinity, cgroup.conf with ConstrainCores and
# ConstrainRAMSpace, on a host with the cgroup v1 controllers mounted under
# /sys/fs/cgroup/<controller> and Slurm's cgroup/v1, proctrack/cgroup,
# task/cgroup and task/affinity plugins; anything else (a cgroup v2-only
# host included) falls back to linuxproc and task/none with the reason
# printed.  Slurm names a node's cgroup /slurm_<node> and a job's
# .../uid_<uid>/job_<job> below it, the same in every private cluster of the
# host (nodes n1..n4, job ids from 1): so each cluster has a cgroup of its
# own, /sys/fs/cgroup/<controller>/lwm2-<hash of DIR>, bound at
# CgroupMountpoint=/run/lwm2-cluster/cgroup/lwm2-<hash>/<controller>, where
# Slurm makes its cgroups; a job's /proc/self/cgroup names them from the
# host's root (/lwm2-<hash>/slurm_n1/...), which is where they are under
# /sys/fs/cgroup too, for every process of the host (podman's runc, in
# the mount namespace of a pause process started outside Slurm, included).
# stop unmounts and removes it.
#
# Needs root. munged is the machine's own (Slurm's clients and slurmdbd talk
# to the default socket): it is started if not running, and stopped again by
# the last private cluster to stop if one of them started it.
set -euo pipefail

readonly NODES=(n1 n2 n3 n4)
readonly CLUSTER=lwm2
readonly ACCOUNT=lwm2
readonly TEST_USERS=(lwm2test lwm2other lwm2coord)
readonly SLURM_PREFIX=${LWM2_SLURM_PREFIX:-}
if [ -n "$SLURM_PREFIX" ]; then
	readonly SLURM_PLUGINS=$SLURM_PREFIX/lib/slurm
	readonly SLURM_PATH=$SLURM_PREFIX/sbin:$SLURM_PREFIX/bin:
else
	SLURM_PLUGINS=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm
	readonly SLURM_PLUGINS
	readonly SLURM_PATH=
fi
readonly REGISTRY=/run/lwm2-cluster
# Memory is scheduled as sites do (CR_Core_Memory), so that
# ConstrainRAMSpace holds a job to what it asked for: RealMemory MB per node
# leaves room for a test's --mem=2G, and a job that asks for nothing gets
# DefMemPerCPU MB per core (two such jobs of two cores on a node, as the
# cores allow; and under the 1 GiB of unused memory the digest's "fit"
# needs before it calls a request too large).
readonly REAL_MEMORY=4000
readonly DEF_MEM_PER_CPU=500

die() {
	echo "cluster: $*" >&2
	exit 1
}

say() {
	echo "cluster: $*"
}

usage() {
	sed -n '8,18s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

# ---------------------------------------------------------------- paths

set_paths() {
	[ -n "${1:-}" ] || usage
	D=$(cd "$1" 2>/dev/null && pwd) || die "no such directory: $1"
	ETC=$D/etc
	LOG=$D/log
	RUN=$D/run
	STATE=$D/state
	DB=$D/db
	CONF=$ETC/slurm.conf
	DBD_CONF=$ETC/slurmdbd.conf
	MYSOCK=$RUN/mysqld.sock
	DAEMON_ENV=(env -i "PATH=${LWM2_CLUSTER_PATH:+$LWM2_CLUSTER_PATH:}${SLURM_PATH}/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root
		SLURM_CONF="$CONF" LWM2_CLUSTER_DAEMON="$D"
		${LWM2_JC_TEST_WRITE_DELAY:+"LWM2_JC_TEST_WRITE_DELAY=$LWM2_JC_TEST_WRITE_DELAY"})
}

port_of() {
	sed -n "s/^$1=//p" "$ETC/ports" 2>/dev/null
}

# ---------------------------------------------------------------- processes

# A pid file is trusted only while its process still has the expected name,
# so a stale file never leads to killing an unrelated process.
pid_alive() {
	local pidfile=$1 comm=$2 pid
	[ -s "$pidfile" ] || return 1
	pid=$(<"$pidfile")
	[ -d "/proc/$pid" ] || return 1
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ]
}

kill_pidfile() {
	local pidfile=$1 comm=$2 what=$3 pid i
	if ! pid_alive "$pidfile" "$comm"; then
		rm -f "$pidfile"
		return 0
	fi
	pid=$(<"$pidfile")
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 300; i++)); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	if [ -d "/proc/$pid" ]; then
		say "$what ($pid) ignored SIGTERM for 30 s, killing it"
		kill -KILL "$pid" 2>/dev/null || true
		while [ -d "/proc/$pid" ]; do sleep 0.1; done
	fi
	rm -f "$pidfile"
}

# slurmstepd inherits slurmd's environment and outlives it: find those left
# behind by their LWM2_CLUSTER_DAEMON marker.
kill_strays() {
	local sig=$1 p env found=1
	for p in /proc/[0-9]*; do
		env=$(tr "\\0" "\\n" 2>/dev/null <"$p/environ") || continue
		if grep -qxF "LWM2_CLUSTER_DAEMON=$D" <<<"$env"; then
			kill "-$sig" "${p#/proc/}" 2>/dev/null && found=0
		fi
	done
	return "$found"
}

# wait_for WHAT LOG WATCH CMD...: poll CMD until it succeeds. WATCH lists
# pidfile:comm pairs of the daemons CMD depends on ("" for none): once one of
# them has written its pid file and died, waiting longer is pointless.
wait_for() {
	local what=$1 logf=$2 watch=$3 limit=${LWM2_CLUSTER_TIMEOUT:-120} w why=
	local t0=$SECONDS
	shift 3
	while :; do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		for w in $watch; do
			if [ -s "${w%%:*}" ] && ! pid_alive "${w%%:*}" "${w#*:}"; then
				why="its daemon exited"
				break 2
			fi
		done
		if ((SECONDS - t0 >= limit)); then
			why="not ready after $limit s"
			break
		fi
		sleep 0.1
	done
	echo "cluster: $what: $why; last lines of $logf:" >&2
	tail -n 25 "$logf" >&2 2>/dev/null || true
	return 1
}

# ---------------------------------------------------------------- munge

munge_works() {
	local cred
	cred=$(munge -n 2>/dev/null) && unmunge <<<"$cred" >/dev/null 2>&1
}

# The registry lives in /run so a reboot clears it together with munged.
munge_acquire() {
	mkdir -p "$REGISTRY/users"
	exec 9>"$REGISTRY/lock"
	flock 9
	printf '%s\n' "$D" >"$REGISTRY/users/$(printf '%s' "$D" | md5sum | cut -c1-16)"
	if ! munge_works; then
		if [ ! -s /etc/munge/munge.key ]; then
			say "creating /etc/munge/munge.key"
			mungekey --create --keyfile=/etc/munge/munge.key
			chown munge:munge /etc/munge/munge.key
			chmod 600 /etc/munge/munge.key
		fi
		install -d -o munge -g munge -m 755 /run/munge
		install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge
		say "starting munged"
		runuser -u munge -- /usr/sbin/munged 9>&-
		LWM2_CLUSTER_TIMEOUT=20 wait_for munged /var/log/munge/munged.log "" munge_works
		cp /run/munge/munged.pid "$REGISTRY/munged.pid"
	fi
	exec 9>&-
}

# A cluster whose directory was removed without a stop would keep munged
# running for ever; forget entries older than ten minutes (a start in
# progress is younger) whose cluster has no daemon left.
prune_registry() {
	local f dir pf live
	for f in "$REGISTRY"/users/*; do
		[ -f "$f" ] || continue
		[ -n "$(find "$f" -mmin +10)" ] || continue
		dir=$(<"$f")
		live=0
		for pf in "$dir"/run/*.pid; do
			[ -s "$pf" ] && [ -d "/proc/$(<"$pf")" ] && live=1
		done
		[ "$live" -eq 1 ] || rm -f "$f"
	done
}

munge_release() {
	[ -d "$REGISTRY/users" ] || return 0
	exec 9>"$REGISTRY/lock"
	flock 9
	rm -f "$REGISTRY/users/$(printf '%s' "$D" | md5sum | cut -c1-16)"
	prune_registry
	if [ -z "$(ls -A "$REGISTRY/users")" ] && [ -s "$REGISTRY/munged.pid" ]; then
		say "stopping munged (started by a private cluster)"
		kill_pidfile "$REGISTRY/munged.pid" munged munged
	fi
	exec 9>&-
}

# ---------------------------------------------------------------- configuration

port_free() {
	! ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .
}

# Seven consecutive ports nobody uses, from a random start so that clusters
# started at the same time rarely race for the same range, and below the
# kernel's range of ephemeral ports (above it where that leaves too few):
# the daemons, the readiness polls and the tests open outgoing connections
# all the time, each from an ephemeral port, and one that took a picked
# port between the pick and the daemon's bind made the daemon exit
# ("Address already in use", seen when two clusters started side by side).
pick_ports() {
	local base p ok tries lo=10000 hi eph_lo=32768 eph_hi=60999
	read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	hi=$((eph_lo - 8))
	if ((hi - lo < 2000)); then
		lo=$((eph_hi + 1))
		hi=65528
	fi
	if ((hi - lo < 2000)); then
		# the ephemeral ports are nearly all of them: anywhere
		lo=20000
		hi=50000
	fi
	for ((tries = 0; tries < 200; tries++)); do
		base=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo)))
		ok=1
		for ((p = base; p < base + 7; p++)); do
			port_free "$p" || {
				ok=0
				break
			}
		done
		if [ "$ok" -eq 1 ]; then
			{
				echo "mysql=$base"
				echo "slurmdbd=$((base + 1))"
				echo "slurmctld=$((base + 2))"
				local i
				for i in "${!NODES[@]}"; do
					echo "${NODES[$i]}=$((base + 3 + i))"
				done
			} >"$ETC/ports"
			return 0
		fi
	done
	die "no free range of 7 ports found"
}

# Extra lines win over generated ones with the same key; NodeName and
# PartitionName lines are never dropped since several may coexist.
merge_conf() {
	local extra=$1
	if [ -z "$extra" ]; then
		cat
		return
	fi
	awk -v extra="$extra" '
		function key(l) { sub(/=.*/, "", l); gsub(/[ \t]/, "", l); return tolower(l) }
		BEGIN {
			n = split(extra, x, "\n")
			for (i = 1; i <= n; i++)
				if (x[i] !~ /^[ \t]*(#|$)/) drop[key(x[i])] = 1
			delete drop["nodename"]; delete drop["partitionname"]
		}
		!($0 ~ /=/ && key($0) in drop) { print }
		END { print "# from the environment"; for (i = 1; i <= n; i++) print x[i] }'
}

plugin_dir() {
	if [ -n "${LWM2_PLUGIN_DIR:-}" ]; then
		echo "$LWM2_PLUGIN_DIR:$SLURM_PLUGINS"
	else
		echo "$SLURM_PLUGINS"
	fi
}

# ---------------------------------------------------------------- cgroups

readonly CG_ROOT=/sys/fs/cgroup
readonly CG_CONTROLLERS=(cpu cpuacct cpuset memory devices freezer blkio pids)

# "v1", or "none: why": what the host and Slurm allow (header comment).
cgroup_choice() {
	local c p
	if [ "${LWM2_CLUSTER_CGROUP:-1}" = 0 ]; then
		echo "none: LWM2_CLUSTER_CGROUP=0"
		return
	fi
	if [ "$(stat -f -c %T "$CG_ROOT" 2>/dev/null)" = cgroup2fs ]; then
		# cgroup/v2 takes slurmd's cgroup from /proc/self/cgroup below
		# CgroupMountpoint, and a stepd scope per node name below that:
		# a cluster of its own would need slurmd in a cgroup namespace
		# and the subtree's controllers delegated, not tried on a host
		echo "none: $CG_ROOT is cgroup v2 only; this cluster sets up cgroup v1 only"
		return
	fi
	for c in cpuset memory freezer; do
		if [ "$(stat -f -c %T "$CG_ROOT/$c" 2>/dev/null)" != cgroupfs ]; then
			echo "none: no cgroup v1 $c controller mounted at $CG_ROOT/$c"
			return
		fi
	done
	for p in cgroup_v1 proctrack_cgroup task_cgroup task_affinity; do
		if [ ! -f "$SLURM_PLUGINS/$p.so" ]; then
			echo "none: Slurm has no $p.so in $SLURM_PLUGINS"
			return
		fi
	done
	echo v1
}

cgroup_name() {
	echo "lwm2-$(printf '%s' "$D" | md5sum | cut -c1-12)"
}

# Where the cluster's cgroups are bound (CgroupMountpoint): outside DIR, so
# that removing DIR never walks into a cgroup file system.
cgroup_mnt() {
	echo "$REGISTRY/cgroup/$(cgroup_name)"
}

# The v1 controllers mounted on this host, one per line.
cgroup_controllers() {
	local c
	for c in "${CG_CONTROLLERS[@]}"; do
		if [ "$(stat -f -c %T "$CG_ROOT/$c" 2>/dev/null)" = cgroupfs ]; then
			echo "$c"
		fi
	done
}

# The cluster's own cgroup in every controller (a cpuset starts with no
# CPU and no memory node, so it gets its parent's), bound at
# CgroupMountpoint/<controller>: Slurm makes its /slurm_<node> there.
cgroup_setup() {
	local c name f mnt
	name=$(cgroup_name)
	mnt=$(cgroup_mnt)
	for c in $(cgroup_controllers); do
		mkdir -p "$CG_ROOT/$c/$name" "$mnt/$c"
		if [ "$c" = cpuset ]; then
			for f in cpuset.cpus cpuset.mems; do
				cat "$CG_ROOT/$c/$f" >"$CG_ROOT/$c/$name/$f"
			done
		fi
		if ! mountpoint -q "$mnt/$c"; then
			mount --bind "$CG_ROOT/$c/$name" "$mnt/$c"
		fi
	done
}

# After every process of the cluster is gone: Slurm leaves /slurm_<node>
# (and a job's cgroups when its stepd was killed) behind.
cgroup_remove() {
	local c name mnt
	name=$(cgroup_name)
	mnt=$(cgroup_mnt)
	for c in "${CG_CONTROLLERS[@]}"; do
		if mountpoint -q "$mnt/$c" 2>/dev/null; then
			umount "$mnt/$c" || say "couldn't unmount $mnt/$c"
		fi
		if [ -d "$CG_ROOT/$c/$name" ]; then
			find "$CG_ROOT/$c/$name" -depth -type d -exec rmdir {} + 2>/dev/null ||
				say "couldn't remove $CG_ROOT/$c/$name (processes still in it?)"
		fi
	done
	rmdir "$mnt"/* "$mnt" 2>/dev/null || true
}

write_cgroup_conf() {
	local tmp=$ETC/cgroup.conf.new
	CGMODE=$(cgroup_choice)
	# for the tests that need cgroups, and the reason when there are none
	echo "$CGMODE" >"$ETC/cgroup.mode"
	if [ "$CGMODE" != v1 ]; then
		say "proctrack/linuxproc and task/none: ${CGMODE#none: }"
		rm -f "$ETC/cgroup.conf"
		return
	fi
	cat >"$tmp" <<-EOF
		# generated by tests/cluster/cluster.sh
		CgroupPlugin=cgroup/v1
		CgroupMountpoint=$(cgroup_mnt)
		CgroupAutomount=no
		ConstrainCores=yes
		ConstrainRAMSpace=yes
	EOF
	chmod 644 "$tmp"
	mv "$tmp" "$ETC/cgroup.conf"
}

write_slurm_conf() {
	local i n tmp=$CONF.new
	write_cgroup_conf
	{
		cat <<-EOF
			# generated by tests/cluster/cluster.sh
			ClusterName=$CLUSTER
			SlurmctldHost=$(hostname -s)(127.0.0.1)
			SlurmctldPort=$(port_of slurmctld)
			SlurmUser=root
			SlurmdUser=root
			AuthType=auth/munge
			CredType=cred/munge
			StateSaveLocation=$STATE
			SlurmdSpoolDir=$D/spool/%n
			TmpFS=$D/tmp/%n
			SlurmctldPidFile=$RUN/slurmctld.pid
			SlurmdPidFile=$RUN/slurmd-%n.pid
			SlurmctldLogFile=$LOG/slurmctld.log
			SlurmdLogFile=$LOG/slurmd-%n.log
			SlurmctldDebug=${LWM2_CLUSTER_DEBUG:-info}
			SlurmdDebug=${LWM2_CLUSTER_DEBUG:-info}
			PluginDir=$(plugin_dir)
			PlugStackConfig=$ETC/plugstack.conf
			MpiDefault=none
			SelectType=select/cons_tres
			SelectTypeParameters=CR_Core_Memory
			DefMemPerCPU=$DEF_MEM_PER_CPU
			SchedulerType=sched/backfill
			SlurmdParameters=config_overrides
			ReturnToService=2
			JobAcctGatherType=jobacct_gather/linux
			JobAcctGatherFrequency=30
			AccountingStorageType=accounting_storage/slurmdbd
			AccountingStorageHost=127.0.0.1
			AccountingStoragePort=$(port_of slurmdbd)
			AccountingStorageEnforce=associations
			JobCompType=jobcomp/none
			MailProg=${LWM2_CLUSTER_MAILPROG:-/bin/true}
			KillWait=5
			MinJobAge=300
			InactiveLimit=0
			SlurmdTimeout=120
		EOF
		if [ "$CGMODE" = v1 ]; then
			echo "ProctrackType=proctrack/cgroup"
			echo "TaskPlugin=task/cgroup,task/affinity"
		else
			echo "ProctrackType=proctrack/linuxproc"
			echo "TaskPlugin=task/none"
		fi
		if [ -n "${LWM2_CLUSTER_PRIVATEDATA:-}" ]; then
			echo "PrivateData=$LWM2_CLUSTER_PRIVATEDATA"
		fi
		# 24.11 has no switch/none: no SwitchType is the same there.
		if [ -f "$SLURM_PLUGINS/switch_none.so" ]; then
			echo "SwitchType=switch/none"
		fi
		for n in "${NODES[@]}"; do
			echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$(port_of "$n") CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=$REAL_MEMORY State=UNKNOWN"
		done
		i=${#NODES[@]}
		echo "PartitionName=debug Nodes=n[1-$i] Default=YES MaxTime=INFINITE State=UP"
	} | merge_conf "${LWM2_CLUSTER_EXTRA_CONF:-}" >"$tmp"
	chmod 644 "$tmp"
	mv "$tmp" "$CONF"

	if [ -n "${LWM2_PLUGSTACK:-}" ] && [ -f "$LWM2_PLUGSTACK" ]; then
		cp "$LWM2_PLUGSTACK" "$ETC/plugstack.conf.new"
	else
		printf '%s\n' "${LWM2_PLUGSTACK:-# empty}" >"$ETC/plugstack.conf.new"
	fi
	chmod 644 "$ETC/plugstack.conf.new"
	mv "$ETC/plugstack.conf.new" "$ETC/plugstack.conf"
}

write_dbd_conf() {
	local tmp=$DBD_CONF.new
	{
		cat <<-EOF
			# generated by tests/cluster/cluster.sh
			AuthType=auth/munge
			DbdHost=localhost
			DbdAddr=127.0.0.1
			DbdPort=$(port_of slurmdbd)
			SlurmUser=root
			LogFile=$LOG/slurmdbd.log
			PidFile=$RUN/slurmdbd.pid
			DebugLevel=${LWM2_CLUSTER_DEBUG:-info}
			StorageType=accounting_storage/mysql
			StorageHost=127.0.0.1
			StoragePort=$(port_of mysql)
			StorageUser=slurm
			StoragePass=lwm2
			StorageLoc=slurm_acct_db
		EOF
		if [ -n "${LWM2_CLUSTER_PRIVATEDATA:-}" ]; then
			echo "PrivateData=$LWM2_CLUSTER_PRIVATEDATA"
		fi
	} | merge_conf "${LWM2_CLUSTER_DBD_EXTRA_CONF:-}" >"$tmp"
	# slurmdbd refuses a configuration others can read (it holds a password).
	chmod 600 "$tmp"
	mv "$tmp" "$DBD_CONF"
}

write_env() {
	cat <<-EOF
		export LWM2_CLUSTER_DIR='$D'
		export SLURM_CONF='$CONF'
		export LWM2_CLUSTER_NAME='$CLUSTER'
		export LWM2_CLUSTER_ACCOUNT='$ACCOUNT'
		export LWM2_CLUSTER_NODES='${NODES[*]}'
		export OMPI_MCA_btl='self,tcp'
		export OMPI_MCA_btl_tcp_if_include='lo'
		export OMPI_MCA_oob_tcp_if_include='lo'
		export OMPI_MCA_pml='ob1'
		export OMPI_MCA_io='romio321'
	EOF
	if [ -n "$SLURM_PREFIX" ]; then
		printf "export LWM2_SLURM_PREFIX='%s'\n" "$SLURM_PREFIX"
		# shellcheck disable=SC2016 # expanded where the line is sourced
		printf 'export PATH=%s"$PATH"\n' "'$SLURM_PATH'"
	fi
}

readonly SETTINGS=(LWM2_PLUGIN_DIR LWM2_PLUGSTACK LWM2_CLUSTER_EXTRA_CONF
	LWM2_CLUSTER_DBD_EXTRA_CONF LWM2_CLUSTER_PRIVATEDATA
	LWM2_CLUSTER_MAILPROG LWM2_CLUSTER_DEBUG LWM2_CLUSTER_CGROUP LWM2_CLUSTER_PATH)

# A sourceable record of the settings start used, so that a test that changed
# them (lib.sh cluster_reconfig) can put them back.
save_settings() {
	local v
	echo "unset ${SETTINGS[*]}"
	for v in "${SETTINGS[@]}"; do
		if [ -n "${!v+set}" ]; then
			printf 'export %s=%q\n' "$v" "${!v}"
		fi
	done
}

# Under the registry's lock: two clusters started at the same time on a
# new machine would both run useradd, and the second finds /etc/passwd
# locked by the first ("cannot lock /etc/passwd; try again later").
ensure_users() {
	local u
	mkdir -p "$REGISTRY"
	exec 8>"$REGISTRY/users.lock"
	flock 8
	for u in "${TEST_USERS[@]}"; do
		if ! id "$u" >/dev/null 2>&1; then
			say "creating user $u"
			useradd --create-home --shell /bin/bash "$u" 8>&-
		fi
	done
	exec 8>&-
}

# ---------------------------------------------------------------- daemons

mysql_ping() {
	timeout 10 mysqladmin --no-defaults --socket="$MYSOCK" -uroot ping
}

start_mariadb() {
	if [ ! -d "$DB/mysql" ]; then
		rm -rf "$DB"
		mkdir -p "$DB"
		if ! mariadb-install-db --no-defaults --user=root --datadir="$DB" \
			--auth-root-authentication-method=normal --skip-test-db \
			--skip-name-resolve >"$LOG/mariadb-install.log" 2>&1; then
			tail -n 25 "$LOG/mariadb-install.log" >&2
			die "mariadb-install-db failed"
		fi
	fi
	# --no-defaults keeps the machine's /etc/mysql (socket, port, datadir)
	# out; innodb_lock_wait_timeout is what slurmdbd asks for.
	setsid "${DAEMON_ENV[@]}" mariadbd --no-defaults --user=root \
		--datadir="$DB" --socket="$MYSOCK" --port="$(port_of mysql)" \
		--bind-address=127.0.0.1 --skip-name-resolve \
		--pid-file="$RUN/mariadb.pid" --log-error="$LOG/mariadb.log" \
		--tmpdir="$D/tmp" --innodb-buffer-pool-size=128M \
		--innodb-log-file-size=64M --innodb-lock-wait-timeout=900 \
		</dev/null >/dev/null 2>&1 &
	wait_for MariaDB "$LOG/mariadb.log" "$RUN/mariadb.pid:mariadbd" mysql_ping
	mariadb --no-defaults --socket="$MYSOCK" -uroot <<-EOF
		CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'lwm2';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
	EOF
}

dbd_ready() {
	timeout 10 "${DAEMON_ENV[@]}" sacctmgr -n -P show cluster format=cluster
}

ctld_ready() {
	timeout 10 "${DAEMON_ENV[@]}" scontrol ping | grep -q 'is UP'
}

# Every node idle (or mixed/allocated by an early job), none down or unknown.
nodes_ready() {
	local states
	states=$(timeout 10 "${DAEMON_ENV[@]}" sinfo -h -N -o '%t') || return 1
	[ "$(wc -l <<<"$states")" -eq "${#NODES[@]}" ] || return 1
	! grep -qvE '^(idle|mix|alloc)$' <<<"$states"
}

# dbd_show ARGS...: what sacctmgr shows, asked again while slurmdbd does
# not answer in time (a loaded machine), so that a slow answer is never
# taken for an empty one.
dbd_show() {
	local out
	for _ in 1 2 3; do
		if out=$(timeout 30 "${DAEMON_ENV[@]}" sacctmgr -n -P show "$@"); then
			printf '%s\n' "$out"
			return 0
		fi
		sleep 1
	done
	echo "cluster: sacctmgr show $*: no answer from slurmdbd" >&2
	return 1
}

setup_accounts() {
	local u have sm=("${DAEMON_ENV[@]}" sacctmgr -i)
	have=$(dbd_show cluster format=cluster)
	if ! grep -qx "$CLUSTER" <<<"$have"; then
		"${sm[@]}" add cluster "$CLUSTER" >/dev/null
	fi
	have=$(dbd_show account "$ACCOUNT" format=account)
	if [ -z "$have" ]; then
		"${sm[@]}" add account "$ACCOUNT" cluster="$CLUSTER" \
			description=lwm2-tests organization=lwm2 >/dev/null
	fi
	for u in "${TEST_USERS[@]}" root; do
		have=$(dbd_show assoc where user="$u" account="$ACCOUNT" format=user)
		if [ -z "$have" ]; then
			"${sm[@]}" add user "$u" account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
		fi
	done
}

start_slurm() {
	setsid "${DAEMON_ENV[@]}" slurmdbd </dev/null >"$LOG/slurmdbd.out" 2>&1
	wait_for slurmdbd "$LOG/slurmdbd.log" "$RUN/slurmdbd.pid:slurmdbd" dbd_ready
	setup_accounts
	start_ctld_nodes
}

start_ctld_nodes() {
	local n
	setsid "${DAEMON_ENV[@]}" slurmctld </dev/null >"$LOG/slurmctld.out" 2>&1
	wait_for slurmctld "$LOG/slurmctld.log" "$RUN/slurmctld.pid:slurmctld" ctld_ready
	if [ "${CGMODE:-}" = v1 ]; then
		cgroup_setup
	fi
	for n in "${NODES[@]}"; do
		setsid "${DAEMON_ENV[@]}" slurmd -N "$n" </dev/null >"$LOG/slurmd-$n.out" 2>&1
	done
	local watch="$RUN/slurmctld.pid:slurmctld"
	for n in "${NODES[@]}"; do
		watch+=" $RUN/slurmd-$n.pid:slurmd"
	done
	wait_for "slurmd ${NODES[*]}" "$LOG/slurmd-${NODES[0]}.log" "$watch" nodes_ready
}

# ---------------------------------------------------------------- commands

# The start's ERR trap: which command failed, and what the daemons said
# on their standard error before they had a log (a daemon that stops on
# its configuration exits there, before it writes its pid file or its
# log), so that a failed start always says why.
start_failed_at() {
	local line=$1 cmd=$2 rc=$3 f
	echo "cluster: start: '$cmd' failed (exit $rc) at line $line, in ${FUNCNAME[*]:1}" >&2
	for f in "$LOG"/*.out; do
		[ -s "$f" ] || continue
		echo "cluster: $(basename "$f"):" >&2
		tail -n 10 "$f" >&2
	done
}

all_up() {
	local n
	pid_alive "$RUN/mariadb.pid" mariadbd || return 1
	pid_alive "$RUN/slurmdbd.pid" slurmdbd || return 1
	pid_alive "$RUN/slurmctld.pid" slurmctld || return 1
	for n in "${NODES[@]}"; do
		pid_alive "$RUN/slurmd-$n.pid" slurmd || return 1
	done
}

cmd_start() {
	[ "$(id -u)" -eq 0 ] || die "start needs root"
	mkdir -p "$1"
	set_paths "$1"
	if all_up; then
		say "already running in $D"
		return 0
	fi
	cmd_stop "$D" >/dev/null
	mkdir -p "$ETC" "$LOG" "$RUN" "$STATE"
	local n
	for n in "${NODES[@]}"; do
		mkdir -p "$D/spool/$n" "$D/tmp/$n"
	done
	# Jobs of the test users run below DIR (TmpFS, PMIx directories).
	chmod 755 "$D" "$D/tmp" "$D/spool"
	chmod 1777 "$D/tmp"/*
	ensure_users
	pick_ports
	write_slurm_conf
	write_dbd_conf
	write_env >"$D/env"
	save_settings >"$ETC/start.env"
	cp "$ETC/start.env" "$ETC/current.env"
	munge_acquire
	say "starting in $D (ports $(tr '\n' ' ' <"$ETC/ports"))"
	# A subshell outside any condition, so that set -e holds in it.
	local rc=0
	set +e
	(
		set -eE
		trap 'start_failed_at "$LINENO" "$BASH_COMMAND" "$?"' ERR
		start_mariadb
		start_slurm
	)
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		if [ "${LWM2_CLUSTER_KEEP_FAILED:-0}" = 1 ]; then
			die "start failed; daemons left running for inspection"
		fi
		cmd_stop "$D" >/dev/null
		die "start failed"
	fi
	say "up"
}

stop_slurm_nodes() {
	local n
	for n in "${NODES[@]}"; do
		kill_pidfile "$RUN/slurmd-$n.pid" slurmd "slurmd $n" &
	done
	wait
}

cmd_stop() {
	if [ ! -d "$1" ]; then
		say "nothing to stop in $1"
		return 0
	fi
	set_paths "$1"
	if pid_alive "$RUN/slurmctld.pid" slurmctld; then
		# Cancelled jobs let slurmstepd kill their tasks, which a plain
		# slurmd shutdown would leave running.
		"${DAEMON_ENV[@]}" scancel --quiet --partition=debug 2>/dev/null || true
	fi
	# Each Slurm daemon takes a second or two to go; slurmd and slurmctld
	# need nothing from each other on the way out, slurmctld still talks
	# to slurmdbd, and slurmdbd to MariaDB.
	kill_pidfile "$RUN/slurmctld.pid" slurmctld slurmctld &
	stop_slurm_nodes
	wait
	kill_pidfile "$RUN/slurmdbd.pid" slurmdbd slurmdbd
	kill_pidfile "$RUN/mariadb.pid" mariadbd mariadbd
	if kill_strays TERM; then
		sleep 1
		kill_strays KILL || true
	fi
	cgroup_remove
	munge_release
	say "stopped"
}

cmd_status() {
	set_paths "$1"
	local rc=0 n
	check() {
		if pid_alive "$1" "$2"; then
			echo "$3: running ($(<"$1"))"
		else
			echo "$3: stopped"
			rc=1
		fi
	}
	check "$RUN/mariadb.pid" mariadbd mariadb
	check "$RUN/slurmdbd.pid" slurmdbd slurmdbd
	check "$RUN/slurmctld.pid" slurmctld slurmctld
	for n in "${NODES[@]}"; do
		check "$RUN/slurmd-$n.pid" slurmd "slurmd $n"
	done
	if munge_works; then echo "munged: running"; else
		echo "munged: not answering"
		rc=1
	fi
	return "$rc"
}

cmd_env() {
	set_paths "$1"
	[ -f "$ETC/ports" ] || die "no cluster configured in $D"
	write_env
}

# PluginDir, JobCompType and friends are read only when a daemon starts, so
# reconfig restarts the Slurm daemons; MariaDB, munged and the job history
# stay.
cmd_reconfig() {
	[ "$(id -u)" -eq 0 ] || die "reconfig needs root"
	set_paths "$1"
	all_up || die "not running in $D"
	local old n
	old=$(cat "$DBD_CONF")
	# side by side, as in cmd_stop: each takes a second or two to go
	kill_pidfile "$RUN/slurmctld.pid" slurmctld slurmctld &
	stop_slurm_nodes
	wait
	write_slurm_conf
	write_dbd_conf
	save_settings >"$ETC/current.env"
	if [ "$old" != "$(cat "$DBD_CONF")" ]; then
		kill_pidfile "$RUN/slurmdbd.pid" slurmdbd slurmdbd
		setsid "${DAEMON_ENV[@]}" slurmdbd </dev/null >>"$LOG/slurmdbd.out" 2>&1
		wait_for slurmdbd "$LOG/slurmdbd.log" "$RUN/slurmdbd.pid:slurmdbd" dbd_ready
	fi
	start_ctld_nodes
	say "reconfigured"
}

# A crash of slurmctld: no shutdown, nothing saved, whatever it held in
# memory is gone.
cmd_kill_ctld() {
	[ "$(id -u)" -eq 0 ] || die "kill-ctld needs root"
	set_paths "$1"
	local pid
	pid_alive "$RUN/slurmctld.pid" slurmctld || die "slurmctld not running in $D"
	pid=$(<"$RUN/slurmctld.pid")
	kill -KILL "$pid"
	while [ -d "/proc/$pid" ]; do sleep 0.05; done
	# a stale pid file would make start-ctld take the new daemon for dead
	rm -f "$RUN/slurmctld.pid"
	say "slurmctld killed"
}

cmd_start_ctld() {
	[ "$(id -u)" -eq 0 ] || die "start-ctld needs root"
	set_paths "$1"
	pid_alive "$RUN/slurmctld.pid" slurmctld && die "slurmctld already running in $D"
	setsid "${DAEMON_ENV[@]}" slurmctld </dev/null >>"$LOG/slurmctld.out" 2>&1
	wait_for slurmctld "$LOG/slurmctld.log" "$RUN/slurmctld.pid:slurmctld" ctld_ready
	say "slurmctld started"
}

cmd_restart_ctld() {
	cmd_kill_ctld "$1"
	cmd_start_ctld "$1"
}

# A restart of the database server under the running cluster.
cmd_stop_mariadb() {
	[ "$(id -u)" -eq 0 ] || die "stop-mariadb needs root"
	set_paths "$1"
	pid_alive "$RUN/mariadb.pid" mariadbd || die "MariaDB not running in $D"
	kill_pidfile "$RUN/mariadb.pid" mariadbd mariadbd
	say "MariaDB stopped"
}

cmd_start_mariadb() {
	[ "$(id -u)" -eq 0 ] || die "start-mariadb needs root"
	set_paths "$1"
	pid_alive "$RUN/mariadb.pid" mariadbd && die "MariaDB already running in $D"
	start_mariadb
	say "MariaDB started"
}

main() {
	[ $# -eq 2 ] || usage
	case $1 in
	start | stop | status | env | reconfig) "cmd_$1" "$2" ;;
	kill-ctld | start-ctld | restart-ctld | stop-mariadb | start-mariadb) "cmd_${1//-/_}" "$2" ;;
	*) usage ;;
	esac
}

main "$@"
