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

# The forms of `lwm2 stats` the database must answer as the log does:
# every grouping and output, each selection, the top list by every sort.
db_forms=("" "--by user" "--by account" "--by partition" "--by month" "--by node" "--by app"
	"--by executable" "--by image" "--by user --json" "--by account --csv" "-p --by month"
	"-u alice" "-u alice,1001 --by account" "-A p1 --by user" "-r batch --by user"
	"-s failed --by user" "-S @1700000050 -E @1701000500 --by user" "-E @1700003600"
	"--top 5" "--top 3 --sort io" "--top 4 --sort core_hours" "--top 2 --sort cpi"
	"--top 3 --sort idle" "--top 3 --sort avg_threads" "--top 3 --sort lwm2_cost"
	"--top 2 -u bob --json" "--by user -n" "--top 4000 --json")

# db_every_form LOG DATABASE SCRATCH WHAT: a point per form, its output and
# exit status from DATABASE against LOG's
db_every_form() {
	local f want_rc got_rc
	for f in "${db_forms[@]}"; do
		# shellcheck disable=SC2086 # the form's words
		./lwm2 stats -f "$1" $f >"$3/want" 2>&1
		want_rc=$?
		# shellcheck disable=SC2086
		./lwm2 stats --db "$2" $f >"$3/got" 2>&1
		got_rc=$?
		if [ "$want_rc" = "$got_rc" ] && cmp -s "$3/want" "$3/got"; then
			ok "stats ${f:-(all jobs)}: the same from $4"
		else
			not_ok "stats ${f:-(all jobs)}: the same from $4 (exit $want_rc/$got_rc)"
			diff "$3/want" "$3/got" | head -n 6 | sed 's/^/# /'
		fi
	done
}

# like GOT REGEX DESC
like() {
	if [[ $1 =~ $2 ]]; then ok "$3"; else not_ok "$3"; diag "got:  '$1'" "want: /$2/"; fi
}
