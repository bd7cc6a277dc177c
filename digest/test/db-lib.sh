# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# What db.sh and db_mariadb.sh share: the log both import, and `like`.

# db_test_log FILE: the jobs of stats.sh (users, accounts, partitions,
# months, nodes, rules), containers, lwm2's own cost, and 3,000 generated
# ones (languages, an MPI library, a batch script's step among them);
# 3,009 lines.
db_test_log() {
	./mkstatslog >"$1" <<'SPEC' || bail_out "mkstatslog failed"
job=101 user=alice account=p1 partition=batch end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10
job=102 user=alice account=p1 partition=batch end=1700003600 elapsed=7200 cpus=4 procs=4 mpi=30
job=103 user=bob account=p2 partition=gpu end=1702000000 elapsed=3600 cpus=8 procs=4 cpt=2 threads=1 mpi=50 io=20
job=104 user=bob account=p2 partition=batch state=FAILED end=1702003600 elapsed=1800 cpus=2 procs=2 mpi=0 cpi=2
job=105 user=carol account=p1 partition=batch end=1700000100 elapsed=3600 cpus=4 nodigest=1
job=106 user=alice account=p1 partition=batch end=1700007200 elapsed=3600 cpus=4 procs=4 mpi=20 nodes=n[1-2] nnodes=2
job=201 user=dave end=1700000000 elapsed=3600 cpus=4 procs=4 container=charliecloud:/img/x lang=3 steps=4294967291
job=202 user=dave end=1700000000 elapsed=3600 cpus=8 procs=4 container=podman:docker.io/library/debian:11 container0=charliecloud:/img/x
job=206 user=erin end=1700000000 elapsed=3600 cpus=1 procs=1 container=enroot lang=2 mpilib=MPICH_Version:_4.0
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
	"--top 2 -u bob --json" "--by user -n" "--top 4000 --json" "--by language" "--by mpi"
	"--by cluster" "--by mode" "--by qos" "--by user,app" "--by mode,language,mpi --json"
	"-u dave --by language,month -p")

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

# db_cmd_log FILE: db_test_log's jobs and two with a space-time grid
# (mkreportlog: job 301 on n1-n4, job 302 on n2-n3); 3,011 lines.
db_cmd_log() {
	db_test_log "$1"
	{ ./mkreportlog 301 alice 16 4 1700000000 && ./mkreportlog 302 bob 8 2 1700000020 2; } >>"$1" ||
		bail_out "mkreportlog failed"
}

# The forms of the other site commands the database must answer as the
# log does: each command with its selections and outputs.
db_cmd_forms=(
	"history" "history -u alice" "history -S @1700000050 -E @1701000500" "history --json"
	"grid" "grid --json" "grid -S @1700000000 -E @1700000005" "grid --node n4 --metric mpi_share"
	"grid --interference" "grid --interference --json" "nodes" "nodes --all" "nodes --json"
	"digest -a -S @1600000000 -E now -o JobID,User,Account,Status -p" "digest -u alice -S @1600000000 -E now"
	"digest -A p1 -a -S @1600000000 -E now --json" "digest -j 103" "digest -j 301 --json" "digest -j 301 --steps"
	"digest -j 99999" "report -j 301 -o -" "report -j 103 -o -" "report -j 99999 -o -"
	"diff 301 302" "diff --json 101 103" "diff --history 103" "ranks 301" "ranks --groups --json 302"
	"ranks 99999")

# the source a command names: "(LOG line N)" or "(DATABASE row N)" (diff),
# "in the log" or "in the database" (a job not found)
_db_source_named() {
	sed -E -e 's/\(\S+ (line|row) ([0-9]+)\)/(SOURCE \2)/g' \
		-e 's/ in the (log|database)$/ in the SOURCE/'
}

# db_every_command LOG DATABASE SCRATCH WHAT: a point per form of
# db_cmd_forms, and the site pages of report --site, from DATABASE against
# LOG's, the source's name aside
db_every_command() {
	local f want_rc got_rc cmd rest
	local site_log=$3/site-log site_db=$3/site-db
	for f in "${db_cmd_forms[@]}"; do
		cmd=${f%% *}
		rest=${f#"$cmd"}
		# shellcheck disable=SC2086 # the form's words
		./lwm2 $cmd -f "$1" $rest 2>&1 | _db_source_named >"$3/want"
		want_rc=${PIPESTATUS[0]}
		# shellcheck disable=SC2086
		./lwm2 $cmd --db "$2" $rest 2>&1 | _db_source_named >"$3/got"
		got_rc=${PIPESTATUS[0]}
		if [ "$want_rc" = "$got_rc" ] && cmp -s "$3/want" "$3/got"; then
			ok "$f: the same from $4 (exit $got_rc, $(wc -l <"$3/got") lines)"
		else
			not_ok "$f: the same from $4 (exit $want_rc/$got_rc)"
			diff "$3/want" "$3/got" | head -n 6 | sed 's/^/# /'
		fi
	done
	rm -rf "$site_log" "$site_db"
	./lwm2 report --site -f "$1" -S @1600000000 -o "$site_log" >/dev/null 2>&1
	want_rc=$?
	./lwm2 report --site --db "$2" -S @1600000000 -o "$site_db" >/dev/null 2>&1
	got_rc=$?
	check_eval '[ "$want_rc" = "$got_rc" ] && [ -s "$site_db/index.html" ] && diff -r "$site_log" "$site_db" >/dev/null' \
		"report --site: the same pages from $4 ($(find "$site_db" -type f | wc -l) files, exit $got_rc)"
}
