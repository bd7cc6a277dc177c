#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The central database (lwm2 db, lwm2 stats --db): every form of `lwm2
# stats` gives from the database what it gives from the log; importing
# again adds nothing; rotated, gzip and zstd logs; check, forget, vacuum;
# a newer schema refused for writing; a file that is no database; a
# database with a log line it cannot read.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
# shellcheck source=digest/test/db-lib.sh
. "$(dirname "$0")/db-lib.sh"
export TZ=UTC
need_python3
command -v sqlite3 >/dev/null || skip_all "sqlite3 not installed (contrib/install-deps.sh installs it)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-db.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log=$tmp/jobs.jsonl
db_test_log "$log"
db=$tmp/site.db


# --- import
out=$(./lwm2 db import --db "$db" "$log" 2>"$tmp/err")
is "$?" 0 "import: exit 0"
is "$out" "3009 lines read, 3009 jobs added, 0 already there, 0 lines skipped" "import: every job added"
# the schema a new database has: each older one is migrated to it
schema_now=$(sqlite3 "$db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'")
out=$(./lwm2 db import --db "sqlite:$db" "$log" 2>"$tmp/err")
is "$out" "3009 lines read, 0 jobs added, 3009 already there, 0 lines skipped" \
	"import again (sqlite:PATH): nothing added"
is "$(sqlite3 "$db" 'SELECT count(*) FROM job')" 3009 "one row per job"
is "$(stat -c %a "$db")" 640 "made readable by its owner and group only, as the log is"
# an empty file another program made (the sqlite3 shell asked to read a
# missing file makes one, mode 0644) is a new database: others lose their
# access; a mode the site chose for its group stays
(umask 022 && sqlite3 "$tmp/shell.db" "SELECT 1 FROM job" 2>/dev/null)
is "$(stat -c %a "$tmp/shell.db")" 644 "the sqlite3 shell made an empty file, mode 0644"
./lwm2 db import --db "$tmp/shell.db" "$log" >/dev/null 2>&1
is "$(stat -c %a "$tmp/shell.db")" 640 "  the first import into it: mode 0640"
: >"$tmp/group.db" && chmod 660 "$tmp/group.db"
./lwm2 db import --db "$tmp/group.db" "$log" >/dev/null 2>&1
is "$(stat -c %a "$tmp/group.db")" 660 "an empty file of mode 0660: kept"
is "$(sqlite3 "$db" "SELECT avg FROM job_metric m JOIN metric k ON k.id = m.metric JOIN job j ON j.id = m.job WHERE j.job_id = 103 AND k.name = 'mpi_time'")" \
	50.0 "job_metric: a metric's average under its name"
fired=",$(sqlite3 "$db" "SELECT rules_fired FROM job WHERE job_id = 103"),"
check_eval '[[ $fired == *,mpi-share,* && $fired == *,io-share,* ]]' \
	"the rules that fired, by id (both of job 103's: ${fired})"

# --- threads: the lines read on threads of their own, the rows written
# in the log's order: the same database, counts and messages as one thread
{
	head -n 1500 "$log"
	echo '{"job_id": 9, "digest": {"digest_version": 999, "scope": {}}}'
	printf 'not json\n\n'
	tail -n +1501 "$log"
	head -n 40 "$log"
} >"$tmp/mixed.jsonl"
for t in 0 1 3; do
	./lwm2 db import --threads $t --db "$tmp/t$t.db" "$tmp/mixed.jsonl" >"$tmp/t$t.out" 2>"$tmp/t$t.err"
	echo "exit $?" >>"$tmp/t$t.out"
	sqlite3 "$tmp/t$t.db" .dump >"$tmp/t$t.dump"
done
for t in 1 3; do
	is "$(cat "$tmp/t$t.out")" "$(cat "$tmp/t0.out")" "import --threads $t: the counts and exit of --threads 0"
	is "$(cat "$tmp/t$t.err")" "$(cat "$tmp/t0.err")" "  its messages"
	check_eval 'cmp -s "$tmp/t$t.dump" "$tmp/t0.dump"' "  its database, dumped, byte for byte"
done
like "$(cat "$tmp/t0.out")" "3052 lines read, 3009 jobs added, 40 already there, 2 lines skipped" \
	"  (a line of each kind: added, already there, skipped, empty)"
./lwm2 db import --threads 3 --db "$tmp/t0.db" "$tmp/mixed.jsonl" >/dev/null 2>&1
check_eval 'sqlite3 "$tmp/t0.db" .dump | cmp -s - "$tmp/t3.dump"' "import again on threads: nothing changes"
err=$(./lwm2 db import --threads x --db "$tmp/t0.db" "$log" 2>&1 >/dev/null)
is "$?" 2 "--threads x: usage error"
like "$err" "couldn't parse --threads \"x\"" "  and why"

# --- every form of lwm2 stats: the database's output is the log's
db_every_form "$log" "$db" "$tmp" "the database (the first reader sums the days up)"
db_every_form "$log" "$db" "$tmp" "the database (over the summaries)"
err=$(LWM2_CONF=/dev/null ./lwm2 stats 2>&1 >/dev/null)
is "$?" 2 "stats with neither log nor database: usage error"
like "$err" "no --file LOG given .*no --db and no Database= in lwm2.conf" "  and why"
printf 'Database=%s\n' "$db" >"$tmp/lwm2.conf"
is "$(LWM2_CONF=$tmp/lwm2.conf ./lwm2 stats --by user -p -n)" "$(./lwm2 stats -f "$log" --by user -p -n)" \
	"stats without --file reads lwm2.conf's Database="
err=$(./lwm2 stats -f "$log" --db "$db" 2>&1 >/dev/null)
is "$?" 2 "--file and --db together: usage error"
like "$err" "--file and --db exclude each other" "  and why"

# --- the daily summaries: whole days answered from them, made by the
# first reader that may write, marked stale by a job added to their day
is "$(sqlite3 "$db" 'SELECT count(*) FROM day WHERE summarized = 0')" 0 \
	"the questions above summed up every day they read"
is "$(sqlite3 "$db" "SELECT count(DISTINCT dim) FROM summary")" 7 \
	"summaries per grouping: all, user, account, partition, executable, app, image"
./mkstatslog >"$tmp/late.jsonl" <<'SPEC' || bail_out "mkstatslog failed"
job=901 user=zoe account=p9 partition=batch end=1700000500 elapsed=7200 cpus=16 procs=16 mpi=70
SPEC
cp "$db" "$tmp/late.db"
./lwm2 db import -q --db "$tmp/late.db" "$tmp/late.jsonl" >/dev/null
is "$(sqlite3 "$tmp/late.db" "SELECT summarized FROM day WHERE day = 1700000500 / 86400")" 0 \
	"a job added to a summarized day: the day is stale"
cat "$log" "$tmp/late.jsonl" >"$tmp/all.jsonl"
is "$(./lwm2 stats --db "$tmp/late.db" --by account --json)" "$(./lwm2 stats -f "$tmp/all.jsonl" --by account --json)" \
	"  and summed up again: the log's figures"
cp "$tmp/late.db" "$tmp/ro.db"
sqlite3 "$tmp/ro.db" 'UPDATE day SET summarized = 0'
chmod 444 "$tmp/ro.db"
if [ "$(id -u)" = 0 ]; then
	skip_because "a database the reader may not write: the same figures" "root writes any file"
else
	is "$(./lwm2 stats --db "$tmp/ro.db" --by user)" "$(./lwm2 stats -f "$tmp/all.jsonl" --by user)" \
		"a database the reader may not write: the same figures, from the rows"
fi
chmod 644 "$tmp/ro.db"
is "$(./lwm2 db summarize --db "$tmp/ro.db")" \
	"$(sqlite3 "$tmp/ro.db" 'SELECT count(*) FROM day') days summed up" "db summarize: every stale day"
is "$(./lwm2 db summarize --db "$tmp/ro.db")" "0 days summed up" "  and again: none"
cp "$tmp/ro.db" "$tmp/cut.db"
sqlite3 "$tmp/cut.db" "UPDATE month_summary SET data = x'4c01ff' WHERE dim = 'user' AND name = 'u1'"
err=$(./lwm2 stats --db "$tmp/cut.db" --by user 2>&1 >/dev/null)
is "$?" 1 "a month's summary cut short: exit 1"
like "$err" "a summary that cannot be read" "  and why"
# a day's: read by the reader that makes the months' again
sqlite3 "$tmp/ro.db" "UPDATE summary SET data = x'4c01ff' WHERE dim = 'user' AND name = 'u1'; DELETE FROM month"
err=$(./lwm2 stats --db "$tmp/ro.db" --by user 2>&1 >/dev/null)
is "$?" 1 "a day's summary cut short: exit 1"
like "$err" "a summary that cannot be read" "  and why"

# --- the monthly summaries: a window of whole months (from theirs) and
# partial ones (the days' summaries, the edge days' rows), as the log
for i in $(seq 0 59); do
	echo "job=$((5000 + i)) user=m$((i % 4)) account=q$((i % 3)) partition=batch end=$((1697760000 + i * 129600)) elapsed=$((600 + i * 60)) cpus=$((1 + i % 8)) procs=$((1 + i % 8)) mpi=$((i % 90))"
done | ./mkstatslog >"$tmp/months.jsonl" || bail_out "mkstatslog failed"
./lwm2 db import -q --db "$tmp/months.db" "$tmp/months.jsonl" >/dev/null
./lwm2 db summarize --db "$tmp/months.db" >/dev/null
is "$(sqlite3 "$tmp/months.db" "SELECT count(*) FROM month"),$(sqlite3 "$tmp/months.db" "SELECT sum(jobs) FROM month")" \
	"$(sqlite3 "$tmp/months.db" "SELECT count(DISTINCT strftime('%Y-%m', day * 86400, 'unixepoch')) FROM day"),60" \
	"db summarize: each month with jobs summed up, with its jobs"
is "$(sqlite3 "$tmp/months.db" "SELECT count(*) FROM month WHERE strftime('%d', month * 86400, 'unixepoch') != '01'")" 0 \
	"  each known by its first day"
window=(-S 2023-10-25T06:00:00 -E 2024-01-09T12:00:00)
for f in "--by user" "--by account --csv" "" "--by app -p"; do
	# shellcheck disable=SC2086 # the form's words
	is "$(./lwm2 stats --db "$tmp/months.db" "${window[@]}" $f)" "$(./lwm2 stats -f "$tmp/months.jsonl" "${window[@]}" $f)" \
		"whole and partial months, stats ${f:-(all jobs)}: the log's"
done
dec=$(($(date -u -d 2023-12-01 +%s) / 86400))
echo "job=5999 user=m9 account=q9 partition=batch end=1702500000 elapsed=7200 cpus=16 procs=16 mpi=70" |
	./mkstatslog >"$tmp/months-late.jsonl" || bail_out "mkstatslog failed"
./lwm2 db import -q --db "$tmp/months.db" "$tmp/months-late.jsonl" >/dev/null
cat "$tmp/months.jsonl" "$tmp/months-late.jsonl" >"$tmp/months-all.jsonl"
is "$(./lwm2 stats --db "$tmp/months.db" "${window[@]}" --by user)" "$(./lwm2 stats -f "$tmp/months-all.jsonl" "${window[@]}" --by user)" \
	"a job added to a whole month: the month's summaries not used, the log's figures"
is "$(sqlite3 "$tmp/months.db" "SELECT jobs FROM month WHERE month = $dec")" \
	"$(sqlite3 "$tmp/months.db" "SELECT count(*) FROM job WHERE end_time / 86400 >= $dec AND end_time / 86400 < $dec + 31")" \
	"  and made again by the reader, with the month's jobs"
cp "$db" "$tmp/v6.db"
sqlite3 "$tmp/v6.db" "DROP TABLE month; DROP TABLE month_summary; UPDATE lwm2_meta SET value = '6' WHERE key = 'schema_version'"
is "$(./lwm2 stats --db "$tmp/v6.db" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"schema 6 (no monthly summaries) migrated by a reader that may write: the log's figures"
is "$(sqlite3 "$tmp/v6.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v6.db" 'SELECT count(*) > 0 FROM month_summary')" \
	"$schema_now,1" "  its whole months summed up"
cp "$db" "$tmp/v7.db"
sqlite3 "$tmp/v7.db" "CREATE INDEX job_end ON job (end_time); CREATE INDEX job_node_job ON job_node (job); UPDATE lwm2_meta SET value = '7' WHERE key = 'schema_version'"
is "$(./lwm2 stats --db "$tmp/v7.db" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"schema 7 (indexes of end_time alone and of job_node by the job) migrated by a reader that may write: the log's figures"
is "$(sqlite3 "$tmp/v7.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v7.db" "SELECT count(*) FROM sqlite_schema WHERE name IN ('job_end', 'job_node_job')")" \
	"$schema_now,0" "  the indexes gone, the one that begins with end_time serving its questions"
is "$(sqlite3 "$db" "EXPLAIN QUERY PLAN SELECT count(*) FROM job WHERE end_time >= 0 AND end_time < 2000000000" | grep -c 'USING COVERING INDEX job_end_figures')" \
	"1" "  a window of time read from that index"

# --- jobs of absurd size (a hostile line): the exact sums are held at
# their limits, the reader goes on, the database answers as the log
./mkstatslog >"$tmp/huge.jsonl" <<'SPEC' || bail_out "mkstatslog failed"
job=1 user=x end=9000000000000000000 elapsed=8999999999999999999 cpus=4000000000 procs=4 mpi=1e300 cpi=1e300
job=2 user=x end=9000000000000000000 elapsed=8999999999999999999 cpus=4000000000 procs=4 mpi=1e300
job=3 user=y end=1700000000 elapsed=3600 cpus=4 procs=4 mpi=10
SPEC
./lwm2 db import -q --db "$tmp/huge.db" "$tmp/huge.jsonl" >/dev/null
want=$(./lwm2 stats -f "$tmp/huge.jsonl" --by user --json)
is "$?" 0 "absurd sizes: read, exit 0"
is "$(./lwm2 stats --db "$tmp/huge.db" --by user --json)" "$want" "  the same from the database"

# --- rotated, compressed: the same rows as the plain log
if ! command -v zstd >/dev/null || ! command -v gzip >/dev/null; then
	bail_out "gzip or zstd not installed (contrib/install-deps.sh installs them)"
fi
mkdir "$tmp/set"
head -n 1000 "$log" | gzip -c >"$tmp/set/l.jsonl.2.gz"
sed -n '1001,2000p' "$log" | zstd -q -c >"$tmp/set/l.jsonl.1.zst"
tail -n +2001 "$log" >"$tmp/set/l.jsonl"
out=$(./lwm2 db import --db "$tmp/rot.db" "$tmp/set/l.jsonl"* 2>&1)
is "$out" "3009 lines read, 3009 jobs added, 0 already there, 0 lines skipped" \
	"a rotated set (gzip, zstd, plain) imported"
is "$(./lwm2 stats --db "$tmp/rot.db" --by user --json)" "$(./lwm2 stats --db "$db" --by user --json)" \
	"the rotated set's database answers as the plain log's"

# --- check, forget, vacuum
out=$(./lwm2 db check --db "$db")
is "$?" 0 "check: exit 0"
like "$out" "integrity: ok" "check: integrity"
with=$(./lwm2 stats -f "$log" -p -n | cut -d'|' -f2)
like "$out" "jobs: 3009 \\($with with a digest\\), ended from 1700000000 to 1702003600" \
	"check: the jobs, those with a digest, their span"
cp "$db" "$tmp/old.db"
out=$(./lwm2 db forget --db "$tmp/old.db" --before @1700006400)
is "$out" "$(python3 -c 'import json,sys; print(sum(json.loads(l)["end"] < 1700006400 for l in open(sys.argv[1])))' "$log") jobs that ended before @1700006400 forgotten" \
	"forget --before: the jobs before (a day's start)"
is "$(sqlite3 "$tmp/old.db" 'SELECT count(*) FROM job WHERE end_time < 1700006400')" 0 "  their rows gone"
is "$(sqlite3 "$tmp/old.db" 'SELECT count(*) FROM job_metric WHERE job NOT IN (SELECT id FROM job)')" 0 \
	"  their metrics with them"
is "$(./lwm2 stats --db "$tmp/old.db" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"  their days' summaries stay: the whole period still answers as the log"
is "$(./lwm2 stats --db "$tmp/old.db" -S @1700006400 --by account)" \
	"$(./lwm2 stats -f "$log" -S @1700006400 --by account)" "  and from the cut on, as the log"
./lwm2 db vacuum --db "$tmp/old.db" >/dev/null
is "$?" 0 "vacuum: exit 0"
out=$(./lwm2 db forget --db "$tmp/old.db" --keep 1200)
is "$out" "0 jobs that ended before @$(python3 -c 'import datetime as d; t=d.date.today(); y,m=t.year-100,t.month; print(int(d.datetime(y+(m==12),(m%12)+1,1,tzinfo=d.timezone.utc).timestamp()))') forgotten" \
	"forget --keep 1200: the start of the month 1199 months ago"
# every job left: more than a forget's chunk of 2,000 jobs a transaction
cp "$db" "$tmp/all.db"
out=$(./lwm2 db forget --db "$tmp/all.db" --before @1702003601)
is "$out,$(sqlite3 "$tmp/all.db" 'SELECT (SELECT count(*) FROM job) + (SELECT count(*) FROM job_metric) + (SELECT count(*) FROM job_text) + (SELECT count(*) FROM job_node)')" \
	"3009 jobs that ended before @1702003601 forgotten,0" \
	"forget of 3009 jobs, chunk by chunk: each counted once, no row of theirs left"
is "$(./lwm2 stats --db "$tmp/all.db" --by user)" "$(./lwm2 stats -f "$log" --by user)" \
	"  the summaries of every day still answer as the log"
./lwm2 db forget --db "$tmp/old.db" >/dev/null 2>&1
is "$?" 2 "forget without --keep or --before: usage error"
./lwm2 db check --db "$tmp/old.db" --keep 3 >/dev/null 2>&1
is "$?" 2 "--keep outside forget: usage error"
./lwm2 db frobnicate --db "$db" >/dev/null 2>&1
is "$?" 2 "unknown action: usage error"
./lwm2 db import --db "$db" >/dev/null 2>&1
is "$?" 2 "import without a log: usage error"

# --- what cannot be used
err=$(./lwm2 stats --db "$tmp/none.db" 2>&1 >/dev/null)
is "$?" 1 "a database that is not there: exit 1"
like "$err" "couldn't open the database .*none.db: No such file" "  and why"
is "$(./lwm2 stats --db "$tmp/none.db" 2>/dev/null)" "" "  and no table"
check "  reading never makes one" test ! -e "$tmp/none.db"
head -c 4096 /dev/urandom >"$tmp/junk.db"
err=$(./lwm2 stats --db "$tmp/junk.db" 2>&1 >/dev/null)
is "$?" 1 "a file that is no database: exit 1"
like "$err" "not an lwm2 database|file is not a database" "  and why"
cp "$db" "$tmp/new.db"
sqlite3 "$tmp/new.db" "UPDATE lwm2_meta SET value = '99' WHERE key = 'schema_version'"
err=$(./lwm2 db import --db "$tmp/new.db" "$log" 2>&1 >/dev/null)
is "$?" 1 "a newer schema: not written"
like "$err" "schema version 99, newer than this lwm2's 8: not writing" "  and why"
is "$(./lwm2 stats --db "$tmp/new.db" -p -n | cut -d'|' -f2)" \
	"$(./lwm2 stats -f "$log" -p -n | cut -d'|' -f2)" "  but read"
{
	head -n 3 "$log"
	echo '{"job_id": 9, "digest": {"digest_version": 999, "scope": {}}}'
	echo 'not json'
} >"$tmp/bad.jsonl"
out=$(./lwm2 db import --db "$tmp/bad.db" "$tmp/bad.jsonl" 2>"$tmp/err")
is "$?" 0 "unreadable lines: the others imported, exit 0"
is "$out" "5 lines read, 3 jobs added, 0 already there, 2 lines skipped" "  counted"
like "$(cat "$tmp/err")" "bad.jsonl line 4: digest version .*skipped" "  the line reported with its number"

# --- every other site command: the database's output is the log's
clog=$tmp/cmd.jsonl
cdb=$tmp/cmd.db
db_cmd_log "$clog"
./lwm2 db import --db "$cdb" "$clog" >/dev/null 2>&1
db_every_command "$clog" "$cdb" "$tmp" "the database"
# each job's line kept in two compressed pieces: the line without the
# digest's grid, and the grid
is "$(sqlite3 "$cdb" "SELECT count(*), count(grid) FROM job_text")" "3011|$(grep -c '"grid":' "$clog")" \
	"a line per job, the grid apart where the digest has one"
kept=$(sqlite3 "$cdb" "SELECT length(line) + length(grid) FROM job_text t JOIN job j ON j.id = t.job WHERE j.job_id = 301")
logged=$(grep '"job_id":301' "$clog" | wc -c)
check "  compressed: job 301's $logged bytes kept in $kept" test "$kept" -lt $((logged / 2))
# a database of schema 1 (no lines kept): said, and filled by an import
cp "$cdb" "$tmp/v1.db"
sqlite3 "$tmp/v1.db" "DROP TABLE job_text; ALTER TABLE job DROP COLUMN cpu_model; ALTER TABLE job DROP COLUMN language; ALTER TABLE job DROP COLUMN mpi_library; ALTER TABLE job DROP COLUMN run_mode; ALTER TABLE job DROP COLUMN mpi_calls_per_s; UPDATE lwm2_meta SET value = '1' WHERE key = 'schema_version'"
chmod a-w "$tmp/v1.db"
err=$(./lwm2 history --db "$tmp/v1.db" 2>&1 >/dev/null)
is "$?" 1 "schema 1, read only: a command that needs the lines fails"
like "$err" "3011 of the jobs asked for have no log line in .*v1.db .*schema 2.*lwm2 db import" "  and says how to mend it"
chmod u+w "$tmp/v1.db"
is "$(./lwm2 db import --db "$tmp/v1.db" "$clog" 2>&1)" \
	"3011 lines read, 0 jobs added, 3011 already there, 0 lines skipped" \
	"schema 1 migrated in place; importing again adds no job"
is "$(sqlite3 "$tmp/v1.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v1.db" "SELECT count(*) FROM job_text")" \
	"$schema_now,3011" "  but each job's line"
is "$(./lwm2 history --db "$tmp/v1.db" --json | md5sum)" "$(./lwm2 history -f "$clog" --json | md5sum)" \
	"  and the commands read them"
# a database of schema 3: its lines compressed without a dictionary
# (each whole line here, no grid cut out); read as they are, kept as
# they are by the migration to 4, and the lines added after compressed
# against the dictionary it makes
cp "$cdb" "$tmp/v3.db"
mkdir "$tmp/v3"
split -l 1 -a 5 -d "$clog" "$tmp/v3/l"
for f in "$tmp"/v3/l*; do head -c -1 "$f" >"$f.t"; done
zstd -q -1 --rm "$tmp"/v3/l*.t
{
	echo "BEGIN; DROP TABLE text_dict; ALTER TABLE job_text DROP COLUMN dict; DELETE FROM job_text;"
	echo "ALTER TABLE job DROP COLUMN cpu_model;"
	echo "UPDATE lwm2_meta SET value = '3' WHERE key = 'schema_version';"
	i=0
	for f in "$tmp"/v3/l*.t.zst; do
		i=$((i + 1))
		echo "INSERT INTO job_text VALUES ($i, 0, readfile('$f'), NULL);"
	done
	echo "COMMIT;"
} | sqlite3 "$tmp/v3.db"
# and one of schema 2, as that of 3 without language, MPI library, run
# mode or MPI calls
cp "$tmp/v3.db" "$tmp/v2.db"
sqlite3 "$tmp/v2.db" "ALTER TABLE job DROP COLUMN language; ALTER TABLE job DROP COLUMN mpi_library; ALTER TABLE job DROP COLUMN run_mode; ALTER TABLE job DROP COLUMN mpi_calls_per_s; UPDATE lwm2_meta SET value = '2' WHERE key = 'schema_version'"
chmod a-w "$tmp/v3.db" "$tmp/v2.db"
is "$(./lwm2 history --db "$tmp/v3.db" --json | md5sum)" "$(./lwm2 history -f "$clog" --json | md5sum)" \
	"schema 3, read only: its lines read"
is "$(./lwm2 stats --db "$tmp/v2.db" --by language -p -n | cut -d'|' -f1 | sort -u | tr '\n' ' ')" "(all) (none) " \
	"schema 2, read only: stats --by language reads, every job's language not known"
is "$(./lwm2 stats --db "$tmp/v2.db" --by mode --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["mpi_known"])')" 0 \
	"  nor whether a job passed MPI messages"
chmod u+w "$tmp/v3.db" "$tmp/v2.db"
sqlite3 "$tmp/v3.db" "DELETE FROM job_metric WHERE job > 3000; DELETE FROM job_text WHERE job > 3000; DELETE FROM job WHERE id > 3000"
is "$(./lwm2 db import --db "$tmp/v3.db" "$clog" 2>&1)" \
	"3011 lines read, 11 jobs added, 3000 already there, 0 lines skipped" \
	"schema 3 migrated in place by an import"
is "$(sqlite3 "$tmp/v3.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v3.db" "SELECT count(DISTINCT dict), count(dict), count(*) FROM job_text")" \
	"$schema_now,1|11|3011" "  its lines kept as they were, the new ones against one dictionary"
is "$(./lwm2 history --db "$tmp/v3.db" --json | md5sum)" "$(./lwm2 history -f "$clog" --json | md5sum)" \
	"  the old lines and the new read together"
./lwm2 db import --db "$tmp/v2.db" /dev/null >/dev/null 2>&1
is "$(sqlite3 "$tmp/v2.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v2.db" "SELECT count(*), count(language), count(run_mode) FROM job")" \
	"$schema_now,3011|0|0" "schema 2 migrated in place: the new columns, NULL in the rows there were"
is "$(./lwm2 history --db "$tmp/v2.db" --json | md5sum)" "$(./lwm2 history -f "$clog" --json | md5sum)" \
	"  its lines read after"
# schema 4 (no nodes of the jobs): migrated in place, each job's nodes
# from its host list, as an import of this lwm2 keeps them
cp "$cdb" "$tmp/v4.db"
nodes=$(sqlite3 "$tmp/v4.db" "SELECT count(*), count(DISTINCT node), count(DISTINCT job) FROM job_node")
sqlite3 "$tmp/v4.db" "DROP TABLE job_node; DROP INDEX job_end_figures; ALTER TABLE job DROP COLUMN cpu_model; UPDATE lwm2_meta SET value = '4' WHERE key = 'schema_version'"
./lwm2 db import --db "$tmp/v4.db" /dev/null >/dev/null 2>&1
is "$(sqlite3 "$tmp/v4.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v4.db" "SELECT count(*), count(DISTINCT node), count(DISTINCT job) FROM job_node")" \
	"$schema_now,$nodes" "schema 4 migrated in place: the jobs' nodes as an import keeps them"
is "$(sqlite3 "$tmp/v4.db" "SELECT count(*) FROM job WHERE nodes IS NOT NULL AND id NOT IN (SELECT job FROM job_node)")" 0 \
	"  every job with a host list has its nodes"
# schema 5 (no processor column): migrated in place, the column NULL in
# the rows there were; read only before, stats --by cpu says "(none)"
cp "$cdb" "$tmp/v5.db"
sqlite3 "$tmp/v5.db" "ALTER TABLE job DROP COLUMN cpu_model; UPDATE lwm2_meta SET value = '5' WHERE key = 'schema_version'"
chmod a-w "$tmp/v5.db"
is "$(./lwm2 stats --db "$tmp/v5.db" --by cpu -p -n | cut -d'|' -f1 | sort -u | tr '\n' ' ')" "(all) (none) " \
	"schema 5, read only: stats --by cpu reads, no job's processor known"
chmod u+w "$tmp/v5.db"
./lwm2 db import --db "$tmp/v5.db" /dev/null >/dev/null 2>&1
is "$(sqlite3 "$tmp/v5.db" "SELECT value FROM lwm2_meta WHERE key = 'schema_version'"),$(sqlite3 "$tmp/v5.db" "SELECT count(*), count(cpu_model) FROM job")" \
	"$schema_now,3011|0" "schema 5 migrated in place: the processor's column, NULL in the rows there were"
# forget takes the lines with the jobs
cp "$cdb" "$tmp/f.db"
nodes_before=$(sqlite3 "$tmp/f.db" "SELECT count(*) FROM job_node")
./lwm2 db forget --db "$tmp/f.db" --before @1701000000 >/dev/null 2>&1
is "$(sqlite3 "$tmp/f.db" "SELECT count(*) FROM job_text t LEFT JOIN job j ON j.id = t.job WHERE j.id IS NULL")" 0 \
	"forget: no line outlives its job"
is "$(sqlite3 "$tmp/f.db" "SELECT count(*) FROM job_node n LEFT JOIN job j ON j.id = n.job WHERE j.id IS NULL")" 0 \
	"  nor a node row"
is "$(sqlite3 "$tmp/f.db" "SELECT count(*) < $nodes_before, count(*) = (SELECT count(*) FROM job_node n JOIN job j ON j.id = n.job) FROM job_node")" "1|1" \
	"  the old jobs' node rows found by their host lists, the others kept"
# a damaged line: that job reported, the others read
cp "$cdb" "$tmp/d.db"
sqlite3 "$tmp/d.db" "UPDATE job_text SET line = x'28b52ffd00' WHERE job = 3"
out=$(./lwm2 history --db "$tmp/d.db" 2>"$tmp/err")
is "$?" 1 "a damaged line: exit 1"
like "$(cat "$tmp/err")" "job row 3: its line in the database is damaged" "  the job named"
is "$(($(echo "$out" | wc -l)))" "$(($(./lwm2 history -f "$clog" | wc -l) - 1))" "  every other job read"

done_testing
