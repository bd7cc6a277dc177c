#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The central database on MariaDB (mysql://, mariadb://): on a private
# server started here (a scratch directory, a unix socket, no network),
# every form of `lwm2 stats` gives from it what it gives from the log;
# importing again adds nothing; the rows are the SQLite database's; the
# daily summaries (made by the first reader that may write, marked stale
# by a late job, the rows read by one that may not); check, forget,
# vacuum; a newer schema refused for writing; the addresses it
# takes and refuses, a password from a file; and the server killed under
# an import and under a read: a clear message, exit 1, nothing hangs, and
# the next import completes what the first began.  Runs in the build
# directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
# shellcheck source=digest/test/db-lib.sh
. "$(dirname "$0")/db-lib.sh"
export TZ=UTC
need_python3
for c in mariadbd mariadb-install-db mariadb mysqladmin; do
	command -v "$c" >/dev/null || PATH=$PATH:/usr/sbin command -v "$c" >/dev/null ||
		skip_all "$c not installed (the Debian package mariadb-server; contrib/install-deps.sh installs it)"
done
PATH=$PATH:/usr/sbin
command -v sqlite3 >/dev/null || skip_all "sqlite3 not installed (contrib/install-deps.sh installs it)"
./lwm2 stats --db mysql://x@localhost/x 2>&1 | grep -q "built without MariaDB" &&
	skip_all "lwm2 built without MariaDB/MySQL (configure found no libmariadb-dev)"

# short: a unix socket's path has 107 bytes at most
tmp=$(mktemp -d /tmp/lwm2-my.XXXXXX)
sock=$tmp/sock
me=$(id -un)
server=
stop_server() {
	if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
		kill "$server"
		for _ in $(seq 100); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$server" 2>/dev/null
	fi
	server=
}
trap 'stop_server; rm -rf "$tmp"' EXIT

# start_server: mariadbd on $tmp/data, ready within 60 s or bail out
start_server() {
	mariadbd --no-defaults --user="$me" --datadir="$tmp/data" --socket="$sock" \
		--skip-networking --skip-name-resolve --pid-file="$tmp/mariadb.pid" \
		--log-error="$tmp/mariadb.log" --tmpdir="$tmp" --innodb-buffer-pool-size=128M \
		--innodb-log-file-size=48M </dev/null >/dev/null 2>&1 &
	server=$!
	for _ in $(seq 600); do
		timeout 5 mysqladmin --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1 && return 0
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 20 "$tmp/mariadb.log" | sed 's/^/# /'
	bail_out "mariadbd did not start"
}
sql() {
	timeout 60 mariadb --no-defaults --socket="$sock" -uroot -B -N -r "$@"
}

mkdir "$tmp/data"
mariadb-install-db --no-defaults --user="$me" --datadir="$tmp/data" \
	--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
	>"$tmp/install.log" 2>&1 || {
	tail -n 20 "$tmp/install.log" | sed 's/^/# /'
	bail_out "mariadb-install-db failed"
}
start_server
# the client's option files are the machine's: none of this test's business
export HOME=$tmp
url="mysql://root@localhost/lwm2?socket=$sock"

log=$tmp/jobs.jsonl
# the log of db.sh
db_test_log "$log"


# --- import
out=$(./lwm2 db import --db "$url" "$log" 2>"$tmp/err")
is "$?" 0 "import: exit 0"
is "$out" "3009 lines read, 3009 jobs added, 0 already there, 0 lines skipped" \
	"import: every job added (the database made)"
out=$(./lwm2 db import --db "mariadb://root@localhost/lwm2?socket=$sock" "$log" 2>"$tmp/err")
is "$out" "3009 lines read, 0 jobs added, 3009 already there, 0 lines skipped" \
	"import again (mariadb://): nothing added"
is "$(sql lwm2 -e 'SELECT count(*) FROM job')" 3009 "one row per job"
is "$(sql lwm2 -e "SELECT avg FROM job_metric m JOIN metric k ON k.id = m.metric JOIN job j ON j.id = m.job WHERE j.job_id = 103 AND k.name = 'mpi_time'")" \
	50 "job_metric: a metric's average under its name"
like "$(sql lwm2 -e "SELECT rules_fired FROM job WHERE job_id = 103")" \
	"(^|,)mpi-share(,|$).*|(^|,)io-share(,|$)" "the rules that fired, by id"

# --- the rows of the SQLite database of the same log
./lwm2 db import --db "$tmp/site.db" "$log" >/dev/null 2>&1 || bail_out "SQLite import failed"
cols="job_id, cluster, sacct_id, submit, start, end_time, user_name, uid, account, partition_name,
	qos, state, job_name, nodes, node_count, cpus, has_digest, cpus_per_task, rules_fired, exe,
	app, image"
sqlite3 -separator $'\t' -nullvalue NULL "$tmp/site.db" "SELECT $cols FROM job ORDER BY id" >"$tmp/sq.rows"
sql lwm2 -e "SELECT $cols FROM job ORDER BY id" >"$tmp/my.rows"
check "the job table's rows are the SQLite database's (all but the doubles)" cmp -s "$tmp/sq.rows" "$tmp/my.rows"
q="SELECT k.name, count(*), sum(n) FROM job_metric m JOIN metric k ON k.id = m.metric GROUP BY k.name ORDER BY k.name"
is "$(sql lwm2 -e "$q")" "$(sqlite3 -separator $'\t' "$tmp/site.db" "$q")" \
	"job_metric: the same metrics, as many, the same counts"

# --- every form of lwm2 stats: the database's output is the log's
db_every_form "$log" "$url" "$tmp" "MariaDB (the first reader sums the days up)"
printf 'Database=%s\n' "$url" >"$tmp/lwm2.conf"
is "$(LWM2_CONF=$tmp/lwm2.conf ./lwm2 stats --by user -p -n)" "$(./lwm2 stats -f "$log" --by user -p -n)" \
	"stats without --file reads lwm2.conf's Database=mysql://"

# --- every other site command: the database's output is the log's, and
# each job's line is stored as SQLite stores it
db_cmd_log "$tmp/cmd.jsonl"
curl_="mysql://root@localhost/cmds?socket=$sock"
./lwm2 db import -q --db "$curl_" "$tmp/cmd.jsonl" >/dev/null
db_every_command "$tmp/cmd.jsonl" "$curl_" "$tmp" "MariaDB"
./lwm2 db import -q --db "$tmp/cmd.db" "$tmp/cmd.jsonl" >/dev/null
q="SELECT t.job, t.cut, hex(t.line), CASE WHEN t.grid IS NULL THEN 'none' ELSE hex(t.grid) END FROM job_text t ORDER BY t.job"
sql cmds -e "$q" >"$tmp/my.text"
sqlite3 -separator $'\t' -nullvalue NULL "$tmp/cmd.db" "$q" >"$tmp/sq.text"
if cmp -s "$tmp/my.text" "$tmp/sq.text"; then
	ok "job_text: the lines as SQLite keeps them, byte for byte ($(wc -l <"$tmp/my.text") jobs)"
else
	not_ok "job_text: the lines as SQLite keeps them, byte for byte"
	diag "$(diff "$tmp/my.text" "$tmp/sq.text" | head -n 4 | awk '{ print length($0), substr($0, length($0) - 80) }')"
fi

# --- the daily summaries
is "$(sql lwm2 -e 'SELECT count(*) FROM day WHERE summarized = 0')" 0 \
	"the questions above summed up every day they read"
is "$(sql lwm2 -e 'SELECT count(DISTINCT dim) FROM summary')" 7 \
	"summaries per grouping: all, user, account, partition, executable, app, image"
db_every_form "$log" "$url" "$tmp" "MariaDB (over the summaries)"
late="mysql://root@localhost/late?socket=$sock"
./lwm2 db import -q --db "$late" "$log" >/dev/null
./lwm2 stats --db "$late" >/dev/null
sql -e "CREATE USER 'reader'@'localhost'; GRANT SELECT ON late.* TO 'reader'@'localhost'"
./mkstatslog >"$tmp/late.jsonl" <<'SPEC' || bail_out "mkstatslog failed"
job=901 user=zoe account=p9 partition=batch end=1700000500 elapsed=7200 cpus=16 procs=16 mpi=70
SPEC
./lwm2 db import -q --db "$late" "$tmp/late.jsonl" >/dev/null
is "$(sql late -e 'SELECT summarized FROM day WHERE day = 1700000500 DIV 86400')" 0 \
	"a job added to a summarized day: the day is stale"
cat "$log" "$tmp/late.jsonl" >"$tmp/all.jsonl"
is "$(./lwm2 stats --db "mysql://reader@localhost/late?socket=$sock" --by user)" \
	"$(./lwm2 stats -f "$tmp/all.jsonl" --by user)" \
	"a reader that may only SELECT: the same figures (the stale day from its rows)"
is "$(sql late -e 'SELECT summarized FROM day WHERE day = 1700000500 DIV 86400')" 0 "  and writes nothing"
is "$(./lwm2 stats --db "$late" --by account --json)" "$(./lwm2 stats -f "$tmp/all.jsonl" --by account --json)" \
	"a reader that may write: summed up again, the log's figures"
sql late -e 'UPDATE day SET summarized = 0'
is "$(./lwm2 db summarize --db "$late")" "$(sql late -e 'SELECT count(*) FROM day') days summed up" \
	"db summarize: every stale day"
is "$(./lwm2 db summarize --db "$late")" "0 days summed up" "  and again: none"
cp "$tmp/site.db" "$tmp/late.db"
./lwm2 db import --db "$tmp/late.db" "$tmp/late.jsonl" >/dev/null 2>&1
./lwm2 db summarize --db "$tmp/late.db" >/dev/null 2>&1
q="SELECT day, dim, name, hex(data) FROM summary ORDER BY dim, day, name"
n=$(sql late -e 'SELECT count(*) FROM summary')
is "$(sql late -e "$q" | md5sum)" "$(sqlite3 -separator $'\t' "$tmp/late.db" "$q" | md5sum)" \
	"the summaries are the SQLite database's, byte for byte ($n of them)"
check "  and there are some" test "$n" -gt 0
q="SELECT month, dim, name, hex(data) FROM month_summary ORDER BY dim, month, name"
n=$(sql late -e 'SELECT count(*) FROM month_summary')
is "$(sql late -e "$q" | md5sum)" "$(sqlite3 -separator $'\t' "$tmp/late.db" "$q" | md5sum)" \
	"the monthly summaries too ($n of them)"
is "$(sql late -e 'SELECT month, days, jobs FROM month ORDER BY month' | tr '\t' ' ')" \
	"$(sqlite3 -separator ' ' "$tmp/late.db" 'SELECT month, days, jobs FROM month ORDER BY month')" \
	"  made from the same days and jobs"
check "  and there are some" test "$n" -gt 0
# a window of whole and partial months, as the log
for i in $(seq 0 59); do
	echo "job=$((5000 + i)) user=m$((i % 4)) account=q$((i % 3)) partition=batch end=$((1697760000 + i * 129600)) elapsed=$((600 + i * 60)) cpus=$((1 + i % 8)) procs=$((1 + i % 8)) mpi=$((i % 90))"
done | ./mkstatslog >"$tmp/months.jsonl" || bail_out "mkstatslog failed"
months="mysql://root@localhost/months?socket=$sock"
./lwm2 db import -q --db "$months" "$tmp/months.jsonl" >/dev/null
window=(-S 2023-10-25T06:00:00 -E 2024-01-09T12:00:00)
for f in "--by user" "--by account --csv" ""; do
	# shellcheck disable=SC2086 # the form's words
	is "$(./lwm2 stats --db "$months" "${window[@]}" $f)" "$(./lwm2 stats -f "$tmp/months.jsonl" "${window[@]}" $f)" \
		"whole and partial months, stats ${f:-(all jobs)}: the log's"
done
is "$(sql months -e 'SELECT count(*) FROM month')" 2 "  the whole months' summaries made by the reader"
echo "job=5999 user=m9 account=q9 partition=batch end=1702500000 elapsed=7200 cpus=16 procs=16 mpi=70" |
	./mkstatslog >"$tmp/months-late.jsonl" || bail_out "mkstatslog failed"
./lwm2 db import -q --db "$months" "$tmp/months-late.jsonl" >/dev/null
cat "$tmp/months.jsonl" "$tmp/months-late.jsonl" >"$tmp/months-all.jsonl"
is "$(./lwm2 stats --db "$months" "${window[@]}" --by user)" "$(./lwm2 stats -f "$tmp/months-all.jsonl" "${window[@]}" --by user)" \
	"a job added to a whole month: the log's figures"

# --- check, forget, vacuum
out=$(./lwm2 db check --db "$url")
is "$?" 0 "check: exit 0"
like "$out" "integrity: ok" "check: integrity"
like "$out" "schema: 8 \\(this lwm2: 8\\)" "check: the schema's version"
with=$(./lwm2 stats -f "$log" -p -n | cut -d'|' -f2)
like "$out" "jobs: 3009 \\($with with a digest\\), ended from 1700000000 to 1702003600" \
	"check: the jobs, those with a digest, their span"
old="mysql://root@localhost/lwm2old?socket=$sock"
./lwm2 db import --db "$old" "$log" >/dev/null 2>&1
out=$(./lwm2 db forget --db "$old" --before @1700006400)
is "$out" "$(python3 -c 'import json,sys; print(sum(json.loads(l)["end"] < 1700006400 for l in open(sys.argv[1])))' "$log") jobs that ended before @1700006400 forgotten" \
	"forget --before: the jobs before (a day's start)"
is "$(sql lwm2old -e 'SELECT count(*) FROM job WHERE end_time < 1700006400')" 0 "  their rows gone"
is "$(sql lwm2old -e 'SELECT count(*) FROM job_metric WHERE job NOT IN (SELECT id FROM job)')" 0 \
	"  their metrics with them"
is "$(./lwm2 stats --db "$old" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"  their days' summaries stay: the whole period still answers as the log"
is "$(./lwm2 stats --db "$old" -S @1700006400 --by account)" \
	"$(./lwm2 stats -f "$log" -S @1700006400 --by account)" "  and from the cut on, as the log"
./lwm2 db vacuum --db "$old" >/dev/null
is "$?" 0 "vacuum: exit 0"
is "$(./lwm2 stats --db "$old" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"  the same answers after it"
# every job: more than a forget's chunk of 2,000 jobs a transaction
all="mysql://root@localhost/lwm2all?socket=$sock"
./lwm2 db import --db "$all" "$log" >/dev/null 2>&1
out=$(./lwm2 db forget --db "$all" --before @1702003601)
is "$out,$(sql lwm2all -e 'SELECT (SELECT count(*) FROM job) + (SELECT count(*) FROM job_metric) + (SELECT count(*) FROM job_text) + (SELECT count(*) FROM job_node)')" \
	"3009 jobs that ended before @1702003601 forgotten,0" \
	"forget of 3009 jobs, chunk by chunk: each counted once, no row of theirs left"
is "$(./lwm2 stats --db "$all" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"  the summaries of every day still answer as the log"

# --- schema 2 (no language, MPI library, run mode or MPI calls):
# migrated in place by a writer, the rows there were NULL in them
sql lwm2old -e "ALTER TABLE job DROP COLUMN language, DROP COLUMN mpi_library, DROP COLUMN run_mode, DROP COLUMN mpi_calls_per_s, DROP COLUMN cpu_model; UPDATE lwm2_meta SET value = '2' WHERE \`key\` = 'schema_version'"
./lwm2 db import --db "$old" /dev/null >/dev/null 2>&1
is "$(sql lwm2old -e "SELECT value FROM lwm2_meta WHERE \`key\` = 'schema_version'") $(sql lwm2old -e 'SELECT count(language), count(run_mode), count(mpi_calls_per_s), count(cpu_model) FROM job' | tr '\t' ' ')" \
	"8 0 0 0 0" "schema 2 migrated in place: the new columns, NULL in the rows there were"

# --- schema 7 (job_end, 8-byte metric ids, job_metric uncompressed,
# job_node clustered by node, a metric's id used up past 65535):
# migrated in place by a writer, the same answers
mig="mysql://root@localhost/mig7?socket=$sock"
./lwm2 db import -q --db "$mig" "$tmp/cmd.jsonl" >/dev/null
sql mig7 -e "ALTER TABLE metric MODIFY id BIGINT NOT NULL AUTO_INCREMENT;
	ALTER TABLE job_metric MODIFY metric BIGINT NOT NULL, ROW_FORMAT=DYNAMIC KEY_BLOCK_SIZE=0;
	ALTER TABLE job ADD KEY job_end (end_time);
	ALTER TABLE job_node DROP PRIMARY KEY, DROP KEY job_node_node, ADD PRIMARY KEY (node, job), ADD KEY job_node_job (job);
	UPDATE job_metric SET metric = 70000 WHERE metric = 3; UPDATE metric SET id = 70000 WHERE id = 3;
	ALTER TABLE metric AUTO_INCREMENT = 90000;
	UPDATE lwm2_meta SET value = '7' WHERE \`key\` = 'schema_version'"
q="SELECT k.name, count(*), sum(n), sum(avg) FROM job_metric m JOIN metric k ON k.id = m.metric GROUP BY k.name ORDER BY k.name"
metrics7=$(sql mig7 -e "$q")
./lwm2 db import --db "$mig" /dev/null >/dev/null 2>&1
is "$(sql mig7 -e "SELECT value FROM lwm2_meta WHERE \`key\` = 'schema_version'")" 8 "schema 7 migrated in place to 8"
shape=$(sql mig7 -e "SHOW CREATE TABLE job; SHOW CREATE TABLE job_node; SHOW CREATE TABLE job_metric; SHOW CREATE TABLE metric")
check "  job_end dropped (job_end_figures serves it)" test "${shape/KEY \`job_end\` (/}" = "$shape"
like "$shape" "PRIMARY KEY \(\`job\`,\`node\`\).*KEY \`job_node_node\` \(\`node\`\)" "  job_node clustered by the job, its nodes' index beside"
like "$shape" "\`metric\` smallint\(5\) unsigned NOT NULL.*ROW_FORMAT=COMPRESSED" "  job_metric: the metric's id in 2 bytes, compressed"
is "$(sql mig7 -e "SELECT max(id) <= 65535, (SELECT auto_increment FROM information_schema.tables WHERE table_schema = 'mig7' AND table_name = 'metric') <= 65535 FROM metric" | tr '\t' ' ')" \
	"1 1" "  the metric's id past 65535 given a free one, the next ones from there"
is "$(sql mig7 -e "$q")" "$metrics7" "  job_metric: each metric's rows under its name, as before"
db_every_command "$tmp/cmd.jsonl" "$mig" "$tmp" "MariaDB migrated from schema 7"
out=$(./lwm2 db import --db "$mig" "$tmp/cmd.jsonl")
like "$out" "0 jobs added" "  importing again adds nothing"

# --- what cannot be used
sql lwm2old -e "UPDATE lwm2_meta SET value = '99' WHERE \`key\` = 'schema_version'"
err=$(./lwm2 db import --db "$old" "$log" 2>&1 >/dev/null)
is "$?" 1 "a newer schema: not written"
like "$err" "schema version 99, newer than this lwm2's 8: not writing" "  and why"
is "$(./lwm2 stats --db "$old" -p -n | cut -d'|' -f2)" \
	"$(./lwm2 stats -f "$log" -p -n | cut -d'|' -f2)" "  but read"
err=$(./lwm2 stats --db "mysql://root@localhost/nodb?socket=$sock" 2>&1 >/dev/null)
is "$?" 1 "a database that is not there: exit 1"
like "$err" "couldn't open the database mysql://root@localhost/nodb.*: Unknown database" "  and why"
is "$(sql -e "SHOW DATABASES LIKE 'nodb'")" "" "  reading never makes one"
sql -e "CREATE DATABASE other; CREATE TABLE other.t (x INT)"
err=$(./lwm2 stats --db "mysql://root@localhost/other?socket=$sock" 2>&1 >/dev/null)
is "$?" 1 "a database of something else: exit 1"
like "$err" "not an lwm2 database" "  and why"
for bad in "mysql://root@localhost?socket=$sock" "mysql://root@localhost/a-b" \
	"mysql://root@localhost:99999/lwm2" "mysql://root@localhost/lwm2?sock=$sock" \
	"mysql:lwm2"; do
	err=$(./lwm2 stats --db "$bad" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" = 1 ] && [[ $err =~ "couldn't open the database" ]]; then
		ok "a bad address refused: $bad"
	else
		not_ok "a bad address refused: $bad (exit $rc)"
		diag "$err"
	fi
done

# --- a user with a password: from a file, %-escaped in the address, never said
sql -e "CREATE USER 'site'@'localhost' IDENTIFIED BY 'p@ss:w/rd%'; GRANT ALL ON lwm2.* TO 'site'@'localhost'"
printf 'p@ss:w/rd%%\n' >"$tmp/pw"
is "$(./lwm2 stats --db "mysql://site@localhost/lwm2?socket=$sock&password_file=$tmp/pw" --by user -p -n)" \
	"$(./lwm2 stats -f "$log" --by user -p -n)" "?password_file=: the password from its first line"
is "$(./lwm2 stats --db "mysql://site:p%40ss%3Aw%2Frd%25@localhost/lwm2?socket=$sock" --by user -p -n)" \
	"$(./lwm2 stats -f "$log" --by user -p -n)" "a %-escaped password in the address"
err=$(./lwm2 stats --db "mysql://site:secret99@localhost/lwm2?socket=$sock" 2>&1 >/dev/null)
is "$?" 1 "a wrong password: exit 1"
like "$err" "couldn't open the database mysql://site@localhost/lwm2.*Access denied" "  and why"
check "  the password is not in the message" test "${err/secret99/}" = "$err"
err=$(./lwm2 stats --db "mysql://site@localhost/lwm2?socket=$sock&password_file=$tmp/nopw" 2>&1 >/dev/null)
like "$err" "couldn't read the password file .*nopw: No such file" "a password file that is not there: said"

# --- the server killed under an import, then under a read
# several seconds of import (about 2,500 jobs a second on 2 cores): the
# server is killed after the first of its four batches (5,000 jobs) commits
big_n=20000
./mkdigestlog "$big_n" 1710000000 >"$tmp/big.jsonl" || bail_out "mkdigestlog failed"
big="mysql://root@localhost/big?socket=$sock"
timeout 120 ./lwm2 db import --db "$big" "$tmp/big.jsonl" >"$tmp/out" 2>"$tmp/err" &
imp=$!
for _ in $(seq 300); do
	[ "$(sql big -e 'SELECT count(*) FROM job' 2>/dev/null)" -gt 0 ] 2>/dev/null && break
	sleep 0.1
done
kill -9 "$server"
wait "$server" 2>/dev/null
server=
wait "$imp"
is "$?" 1 "the server killed under an import: exit 1 (no hang)"
like "$(cat "$tmp/err")" "lwm2: db: .*(Lost connection|server has gone away|Can't connect)" \
	"  and why: the connection lost"
SECONDS=0
err=$(timeout 60 ./lwm2 stats --db "$url" 2>&1 >/dev/null)
is "$?" 1 "a read with the server down: exit 1"
like "$err" "couldn't open the database mysql://root@localhost/lwm2.*Can't connect" "  and why"
check "  at once (${SECONDS} s)" test "$SECONDS" -lt 15
start_server
done_lines=$(sql big -e 'SELECT count(*) FROM job')
out=$(timeout 300 ./lwm2 db import --db "$big" "$tmp/big.jsonl" 2>&1)
is "$out" "$big_n lines read, $((big_n - done_lines)) jobs added, $done_lines already there, 0 lines skipped" \
	"the server back: an import again adds what the killed one had not committed ($done_lines were)"
is "$(./lwm2 stats --db "$big" --by user --json)" "$(./lwm2 stats -f "$tmp/big.jsonl" --by user --json)" \
	"  and the database answers as the log"
out=$(./lwm2 db check --db "$big")
like "$out" "integrity: ok" "  check: integrity"

stop_server
check "the server stopped at the end" test ! -e "$sock"
done_testing
