# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What db.sh and db_mariadb.sh share: the log both import, and `like`.

# db_test_log FILE: the jobs of stats.sh (users, accounts, partitions,
# months, nodes, rules), containers, lwm2's own cost, and 3,000 generated
# ones; 3,009 lines.
db_test_log() {
	./mkstatslog >"$1" <<'SPEC' || bail_out "mkstatslog failed"
job=101 user=alice account=p1 partition=batch end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10
job=102 user=alice account=p1 partition=batch end=1700003600 elapsed=7200 cpus=4 procs=4 mpi=30
job=103 user=bob account=p2 partition=gpu end=1702000000 elapsed=3600 cpus=8 procs=4 cpt=2 threads=1 mpi=50 io=20
job=104 user=bob account=p2 partition=batch state=FAILED end=1702003600 elapsed=1800 cpus=2 procs=2 mpi=0 cpi=2
job=105 user=carol account=p1 partition=batch end=1700000100 elapsed=3600 cpus=4 nodigest=1
job=106 user=alice account=p1 partition=batch end=1700007200 elapsed=3600 cpus=4 procs=4 mpi=20 nodes=n[1-2] nnodes=2
job=201 user=dave end=1700000000 elapsed=3600 cpus=4 procs=4 container=charliecloud:/img/x
job=202 user=dave end=1700000000 elapsed=3600 cpus=8 procs=4 container=podman:docker.io/library/debian:11 container0=charliecloud:/img/x
job=206 user=erin end=1700000000 elapsed=3600 cpus=1 procs=1 container=enroot
SPEC
	./mkdigestlog 3000 1701000000 >>"$1" || bail_out "mkdigestlog failed"
}

# like GOT REGEX DESC
like() {
	if [[ $1 =~ $2 ]]; then ok "$3"; else not_ok "$3"; diag "got:  '$1'" "want: /$2/"; fi
}
