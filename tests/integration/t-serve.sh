#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The site portal (`lwm2 serve`) over the central database that jobcomp/lwm2
# fills, with PrivateData=jobs: each user sees what Slurm shows them (their
# own jobs, a coordinator the account's, an administrator all), a job's
# page and its series as CSV (checked against the digest in the log), and
# bad input refused with a clear status: a header from an address that is
# not the proxy, SQL in every argument, a path out of the service, a
# 1 MB query string, slow clients holding connections, a method other
# than GET.
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"
# shellcheck source=tests/layout-lib.sh
. "$(dirname "$0")/../layout-lib.sh"

command -v curl >/dev/null || skip_all "curl not installed (contrib/install-deps.sh installs it)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 not installed (contrib/install-deps.sh installs it)"
need_python3
JOBCOMP_SETTINGS=(LWM2_CLUSTER_PRIVATEDATA=jobs)
jobcomp_setup
plan 58

id "$COORD_USER" >/dev/null 2>&1 || bail_out "no user $COORD_USER (tests/cluster/cluster.sh makes it)"
sacctmgr -i add coordinator account="$LWM2_CLUSTER_ACCOUNT" names="$COORD_USER" >/dev/null 2>&1
at_exit "sacctmgr -i remove coordinator account=$LWM2_CLUSTER_ACCOUNT names=$COORD_USER >/dev/null 2>&1"

# the test user's job writes a file for a few seconds (its grid has I/O);
# the other user's job is short
run_job -N1 -n1 bash -c 'for i in 1 2 3; do dd if=/dev/zero of=$TMPDIR/s.$$ bs=1M count=4 status=none; sleep 1; done; rm -f $TMPDIR/s.$$; echo $SLURM_JOB_ID' ||
	bail_out "the test user's job did not run"
mine=$(tail -n 1 <<<"$JOB_OUT")
run_job -u "$OTHER_USER" -N1 -n1 printenv SLURM_JOB_ID || bail_out "the other user's job did not run"
theirs=$JOB_OUT
wait_line "$mine" && wait_line "$theirs" || bail_out "jobs $mine, $theirs: no digest in the log"
db=$JCDIR/lwm2.db
for ((i = 0; i < 50; i++)); do
	[ "$(sqlite3 -readonly "$db" "SELECT count(*) FROM job WHERE job_id IN ($mine, $theirs)" 2>/dev/null)" = 2 ] && break
	sleep 0.2
done

serve_log=$TESTDIR/serve.log
# serve NAME ARGS...: `lwm2 serve ARGS` in the background, its pid in
# SERVE_PID; 0 once it serves (it writes $TESTDIR/NAME.pid), within 5 s
serve() {
	local ready=$TESTDIR/$1.pid i
	shift
	"$LWM2" serve --ready-file "$ready" "$@" 2>>"$serve_log" &
	SERVE_PID=$!
	at_exit "kill $SERVE_PID 2>/dev/null"
	for ((i = 0; i < 50; i++)); do
		[ -s "$ready" ] && return 0
		sleep 0.1
	done
	return 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

port=$(free_port)
check "lwm2 serve is serving on 127.0.0.1:$port" serve main --db "$db" --listen "127.0.0.1:$port" \
	--trust-proxy 127.0.0.1 --timeout 3 --connections 512 --per-address 128
serve_pid=$SERVE_PID
URL=http://127.0.0.1:$port

# get USER PATH [CURL-ARGS...]: the body; the status in $code
get() {
	local user=$1 path=$2 out
	shift 2
	out=$(curl -s -m 10 -H "X-Remote-User: $user" -w '\n%{http_code}' "$@" "$URL$path")
	code=${out##*$'\n'}
	body=${out%$'\n'*}
}
# ids: the jobs of a JSON job list
ids() {
	python3 -c 'import json, sys; print(" ".join(j["job"] for j in json.load(sys.stdin)["jobs"]))' <<<"$body" 2>/dev/null
}
has() { [[ " $1 " == *" $2 "* ]]; }

get "$TEST_USER" "/api/jobs?sort=job&order=asc"
is "$code" 200 "/api/jobs: 200"
seen=$(ids)
if has "$seen" "$mine" && ! has "$seen" "$theirs"; then
	ok "the owner sees their job and not the other user's"
else
	not_ok "the owner sees their job and not the other user's" && diag "mine=$mine theirs=$theirs seen=$seen"
fi
get "$COORD_USER" "/api/jobs"
seen=$(ids)
if has "$seen" "$mine" && has "$seen" "$theirs"; then
	ok "the account's coordinator sees both"
else
	not_ok "the account's coordinator sees both" && diag "seen=$seen"
fi
get root "/api/jobs"
seen=$(ids)
if has "$seen" "$mine" && has "$seen" "$theirs"; then ok "an administrator sees both"; else not_ok "an administrator sees both" && diag "$body"; fi
get "$OTHER_USER" "/api/jobs?user=$TEST_USER"
is "$(ids)" "" "a user asking for another's jobs gets none"

# the page, the query builder and its drill-down links
get "$TEST_USER" "/"
is "$code" 200 "/: 200"
check "the page lists the job with a link to its report" grep -q "href=\"/job/$mine\"" <<<"$body"
check "and a link narrowing the list to the user" grep -q "href=\"/?[^\"]*user=$TEST_USER\"" <<<"$body"
check "and the query builder" grep -q '<form method="get" action="/"' <<<"$body"
get "$TEST_USER" "/?format=csv"
is "$(head -n 1 <<<"$body")" "job,cluster,user,account,partition,app,state,end,elapsed_s,core_h,mpi_time,posix_io_time,threads_per_core,cpi" \
	"CSV: the columns' names first"
get "$TEST_USER" "/job/$mine"
is "$code" 200 "/job/$mine: 200 for its owner"
check "it is the job's report" grep -q "Space-time grid" <<<"$body"
get "$OTHER_USER" "/job/$mine"
is "$code" 404 "/job/$mine: 404 for another user, as a job that does not exist"

# the drill-down goes on: a node of the job's report, the node's jobs
get "$TEST_USER" "/job/$mine"
nlink=$(grep -o 'href="/node/[^"]*"' <<<"$body" | head -n 1 | sed -e 's/^href="//' -e 's/"$//' -e 's/&amp;/\&/g')
check "the job's report links its nodes to their pages ($nlink)" test -n "$nlink"
get "$TEST_USER" "$nlink"
is "$code" 200 "the node's page: 200"
check "it lists the job that ran there" grep -q "href=\"/job/$mine\"" <<<"$body"
node=${nlink#/node/}
node=${node%%\?*}
get "$OTHER_USER" "/node/$node?format=json"
check "another user sees not the owner's job on the node ($(ids))" bash -c '[[ " $1 " != *" $2 "* ]]' _ "$(ids)" "$mine"
get "$TEST_USER" "/node/no-such-node?format=json"
is "$(ids)" "" "a node that ran nothing: no job"
get "$TEST_USER" "/node/a%2Fb"
is "$code" 400 "a node's name with a slash: 400"

# the site's groups: Num% and Time% add up, each group links to its jobs
get "$COORD_USER" "/site?by=user&format=json"
is "$(python3 -c 'import json, sys; d = json.load(sys.stdin); print(sorted(g["name"] for g in d["groups"]), round(sum(g["num_pct"] for g in d["groups"])))' <<<"$body")" \
	"['$OTHER_USER', '$TEST_USER'] 100" "/site?by=user: the coordinator's two users, Num% adding up to 100"
get "$TEST_USER" "/site?by=app"
is "$code" 200 "/site?by=app: 200"
check "the groups link to their jobs" grep -q "href=\"/?[^\"]*app=dd\"" <<<"$body"
get "$TEST_USER" "/site?by=mode&format=csv"
is "$(sed -n 2p <<<"$body" | cut -d, -f1,2)" "interactive,1" "/site?by=mode: the test user's job ran by srun alone: interactive"
get "$TEST_USER" "/site?by=nosuch"
is "$code" 400 "/site?by=nosuch: 400"

# LWM2's HTTP query: a counter per node and slice, against the log's digest
get "$TEST_USER" "/api/series?job=$mine&metric=posix_write_bytes"
is "$code" 200 "/api/series: 200"
want=$(python3 - "$JCLOG" "$mine" <<'PY'
import json, sys
pts = {}
for line in open(sys.argv[1]):
    l = json.loads(line)
    if str(l.get("job_id")) != sys.argv[2] or "digest" not in l:
        continue
    pts = {}  # a requeued job: its last run
    for g in l["digest"].get("grid", []):
        v = g["c"].get("posix_write_bytes")
        if v is None:
            continue
        for k in range(g["n"]):
            t = (g["first_slice"] + k) * g["slice_length_s"]
            pts[(g["node"], t)] = pts.get((g["node"], t), 0) + (v[k] if k < len(v) else 0)
print("node,time,value")
for (n, t) in sorted(pts):
    print("%s,%d,%r" % (n, t, float(pts[(n, t)])))
PY
)
norm() { python3 -c 'import sys, csv; r = [x for x in csv.reader(sys.stdin) if x]; print(r[0]); print(sorted((a, int(b), float(c)) for a, b, c in r[1:]))'; }
is "$(norm <<<"$body")" "$(norm <<<"$want")" "the series is the digest's, per node and slice"
check "3 x 4 MiB written in the series" python3 -c 'import sys, csv; r = [x for x in csv.reader(sys.stdin) if x][1:]; sys.exit(sum(float(x[2]) for x in r) != 12582912)' <<<"$body"
get "$TEST_USER" "/api/series?job=$mine&metric=nosuch"
is "$code" 404 "an unknown series: 404"
check "naming the series the job has" grep -q "posix_write_bytes" <<<"$body"

# bad input
get "$TEST_USER" "/api/jobs" --interface 127.0.0.2
is "$code" 403 "a user header from an address that is not the proxy: 403"
check "and the service's log says so" grep -q "not a trusted proxy" "$serve_log"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$URL/api/jobs")
is "$code" 401 "no user named: 401"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' -X POST -H "X-Remote-User: $TEST_USER" -d x=1 "$URL/api/jobs")
is "$code" 405 "POST: 405"
inj="' OR 1=1 --"
bad=0
for a in cluster user account partition app state; do
	get "$OTHER_USER" "/api/jobs" -G --data-urlencode "$a=$inj"
	[ "$code" = 200 ] && [ -z "$(ids)" ] || bad=$((bad + 1))
done
for a in start end metric min max sort order page per format; do
	get "$OTHER_USER" "/api/jobs" -G --data-urlencode "$a=$inj"
	[ "$code" = 400 ] || bad=$((bad + 1))
done
is "$bad" 0 "SQL in each of 16 arguments: no job, or 400 naming the argument"
get "$TEST_USER" "/job/$mine%20OR%201=1"
is "$code" 400 "a job id with SQL: 400"
get "$TEST_USER" "/job/../../../../etc/passwd" --path-as-is
case $code in 400 | 404) ok "a path out of the service: $code" ;; *) not_ok "a path out of the service: $code" ;; esac
check "and no file's content" bash -c '! grep -q "root:" <<<"$1"' _ "$body"
code=$(python3 - "$port" "$TEST_USER" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
try:
    s.sendall(b"GET /api/jobs?user=" + b"a" * 1048576 + b" HTTP/1.1\r\nHost: x\r\nX-Remote-User: "
              + sys.argv[2].encode() + b"\r\n\r\n")
except OSError:
    pass  # refused before it was all sent: the answer is there
s.settimeout(10)
try:
    print(s.recv(64).split(b" ")[1].decode())
except (OSError, IndexError):
    print("none")
PY
)
case $code in 414 | 431 | 400) ok "a 1 MB query string: $code" ;; *) not_ok "a 1 MB query string: $code" ;; esac

# slow clients: 20 connections that send half a request and wait; the
# service keeps answering others, and closes them after --timeout
python3 - "$port" >"$TESTDIR/slow.out" 2>&1 <<'PY' &
import socket, sys, time
socks = []
for i in range(20):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET /api/jobs HTTP/1.1\r\nHost: x\r\n")
    socks.append(s)
time.sleep(6)
closed = 0
for s in socks:
    s.settimeout(0.5)
    try:
        if s.recv(1) == b"":
            closed += 1
    except OSError:
        closed += 1
print("closed", closed)
PY
slow=$!
sleep 1
t0=$(date +%s%N)
get "$TEST_USER" "/api/jobs"
t1=$(date +%s%N)
is "$code" 200 "with 20 slow clients connected, a request is answered ($(((t1 - t0) / 1000000)) ms)"
wait "$slow"
is "$(cat "$TESTDIR/slow.out")" "closed 20" "the slow clients are closed after --timeout"

# a browser through the site's web server (here a proxy that adds the
# header, as the web server does after its login): it follows the links a
# user clicks, site -> user -> job, and submits the query builder; the
# pages laid out at 800 and 1600 px cut nothing off
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip "chromium not installed (contrib/install-deps.sh): the browser's checks" 10
else
	pport=$(free_port)
	python3 - "$pport" "$URL" "$COORD_USER" 2>/dev/null <<'PY' &
import http.server, sys, urllib.error, urllib.request
up, user = sys.argv[2], sys.argv[3]
class Proxy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        req = urllib.request.Request(up + self.path, headers={"X-Remote-User": user})
        try:
            r = urllib.request.urlopen(req, timeout=30)
        except urllib.error.HTTPError as e:
            r = e
        body = r.read()
        self.send_response(r.status)
        self.send_header("Content-Type", r.headers["Content-Type"])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Proxy).serve_forever()
PY
	proxy_pid=$!
	at_exit "kill $proxy_pid 2>/dev/null"
	for ((i = 0; i < 50; i++)); do
		curl -s -o /dev/null "http://127.0.0.1:$pport/" && break
		sleep 0.1
	done
	LAYOUT_TMP=$TESTDIR/layout
	mkdir -p "$LAYOUT_TMP"
	shots=${LWM2_SHOTS:-$TESTDIR/shots}
	mkdir -p "$shots"
	browse() { # browse PATH [ARGS...]: the DOM as Chromium has it
		local path=$1 prof
		shift
		prof=$(mktemp -d "$LAYOUT_TMP/chromium.XXXXXX")
		timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--user-data-dir="$prof" --no-first-run --disable-background-networking \
			--disable-component-update --disable-sync "$@" "http://127.0.0.1:$pport$path" 2>/dev/null
		rm -rf "$prof"
	}
	# href TEXT: the first link's target whose text is TEXT
	href() { python3 -c 'import html, re, sys
m = re.search(r"<a href=\"([^\"]*)\">" + re.escape(sys.argv[1]) + "</a>", sys.stdin.read())
print(html.unescape(m.group(1)) if m else "")' "$1"; }
	site=$(browse / --dump-dom)
	check "browser: the site's page lists both jobs for the coordinator" \
		grep -q "href=\"/job/$theirs\"" <<<"$site"
	ulink=$(href "$TEST_USER" <<<"$site")
	userpage=$(browse "$ulink" --dump-dom)
	if grep -q "href=\"/job/$mine\"" <<<"$userpage" && ! grep -q "href=\"/job/$theirs\"" <<<"$userpage"; then
		ok "browser: the user's link ($ulink) lists that user's job only"
	else
		not_ok "browser: the user's link ($ulink) lists that user's job only"
	fi
	jlink=$(href "$mine" <<<"$userpage")
	jobpage=$(browse "$jlink" --dump-dom)
	check "browser: the job's link ($jlink) opens its report" grep -q "Space-time grid" <<<"$jobpage"
	# the form as the browser submits it: every field, empty or not
	q="/?cluster=&user=&account=&partition=&app=&state=&start=now-1d&end=&metric=posix_io_time&min=0&max="
	built=$(browse "$q" --dump-dom)
	if grep -q "<option value=\"posix_io_time\" selected" <<<"$built" && grep -q "href=\"/job/$mine\"" <<<"$built"; then
		ok "browser: the query builder keeps its choice and lists the job that wrote"
	else
		not_ok "browser: the query builder keeps its choice and lists the job that wrote"
	fi
	sorted=$(browse "/?sort=user&order=asc" --dump-dom)
	check "browser: a column's heading sorts by it" grep -q "User ▲" <<<"$sorted"
	printf '%s' "$site" >"$LAYOUT_TMP/site.html"
	printf '%s' "$jobpage" >"$LAYOUT_TMP/job.html"
	for page in site job; do
		for width in 800 1600; do
			rep=$(layout_probe "$LAYOUT_TMP/$page.html" "$width")
			head=$(head -1 <<<"$rep")
			case $head in
			"LAYOUT texts="*" bad=0") ok "browser: the $page page at $width px cuts nothing off (${head#LAYOUT })" ;;
			*) not_ok "browser: the $page page at $width px cuts nothing off (${head#LAYOUT })" &&
				tail -n +2 <<<"$rep" | head -5 | sed 's/^/# /' ;;
			esac
			browse "$([ "$page" = site ] && echo / || echo "$jlink")" --window-size="$width,900" \
				--screenshot="$shots/portal-$page-$width.png" >/dev/null
		done
	done
	check "browser: 4 screenshots (portal-{site,job}-{800,1600}.png in $shots)" \
		test "$(find "$shots" -name 'portal-*.png' -size +1k | wc -l)" = 4
fi

# a bounded load: 100 clients at once for 5 s, each asking for the job
# list and a job's page in turn; no error, and the latencies said
load=$(python3 - "$URL" "$TEST_USER" "$mine" <<'PY'
import sys, threading, time, urllib.request
url, user, job = sys.argv[1:4]
lat, errors, stop = [], [0], time.time() + 5
def client(i):
    paths = ["/", "/api/jobs", "/job/" + job, "/api/series?job=%s&metric=posix_write_bytes" % job]
    k = i
    while time.time() < stop:
        t0 = time.time()
        try:
            r = urllib.request.urlopen(urllib.request.Request(
                url + paths[k % 4], headers={"X-Remote-User": user}), timeout=30)
            r.read()
            if r.status != 200:
                errors[0] += 1
        except Exception:
            errors[0] += 1
        lat.append(time.time() - t0)
        k += 1
ts = [threading.Thread(target=client, args=(i,)) for i in range(100)]
[t.start() for t in ts]
[t.join() for t in ts]
lat.sort()
print(len(lat), errors[0], "%.0f" % (1000 * lat[len(lat) // 2]), "%.0f" % (1000 * lat[int(len(lat) * 0.99)]))
PY
)
read -r nreq nerr p50 p99 <<<"$load"
diag "load: $nreq requests from 100 clients in 5 s, p50 $p50 ms, p99 $p99 ms"
is "${nerr:-none}" 0 "100 clients for 5 s: no error ($nreq requests, p50 $p50 ms, p99 $p99 ms)"

# MariaDB: the same log imported into the cluster's server, the same
# answers from both backends
mariadb_database lwm2serve "lwm2-serve-$$"
if [ -n "$mariadb_why" ]; then
	skip "MariaDB: $mariadb_why" 3
else
	at_exit "my -e 'DROP DATABASE IF EXISTS lwm2serve' >/dev/null 2>&1"
	mydb=$MARIADB_URL
	"$LWM2" db import -q --db "$mydb" "$JCLOG" >/dev/null 2>&1
	myport=$(free_port)
	serve mariadb --db "$mydb" --listen "127.0.0.1:$myport" --trust-proxy 127.0.0.1 ||
		diag "lwm2 serve on MariaDB did not start: $(tail -n 3 "$serve_log")"
	my_pid=$SERVE_PID
	both() { # both PATH: the answers of SQLite's and MariaDB's services, side by side
		curl -s -m 10 -H "X-Remote-User: root" "$URL$1"
		echo ---
		curl -s -m 10 -H "X-Remote-User: root" "http://127.0.0.1:$myport$1"
	}
	same() { python3 -c 'import sys; a, b = sys.stdin.read().split("---\n"); sys.exit(not a.strip() or a.strip() != b.strip())'; }
	check "MariaDB: the same job list as JSON" same < <(both "/api/jobs?sort=job&order=asc")
	check "MariaDB: the same groups by user" same < <(both "/site?by=user&format=csv")
	check "MariaDB: the same series of job $mine" same < <(both "/api/series?job=$mine&metric=posix_write_bytes")
	kill "$my_pid" 2>/dev/null
fi

# the Unix socket: the web server's, trusted
sock=$TESTDIR/serve.sock
serve socket --db "$db" --socket "$sock" || diag "lwm2 serve on a socket did not start: $(tail -n 3 "$serve_log")"
sock_pid=$SERVE_PID
out=$(curl -s -m 10 --unix-socket "$sock" -H "X-Remote-User: $TEST_USER" "http://portal/api/jobs")
case $out in *"\"job\":\"$mine\""*) ok "over the Unix socket (mode $(stat -c %a "$sock")): the owner's jobs" ;; *) not_ok "over the Unix socket" && diag "$out" ;; esac
kill "$serve_pid" "$sock_pid"
wait "$serve_pid"
is "$?" 0 "SIGTERM stops the service, exit 0"
wait "$sock_pid" 2>/dev/null
check "and the socket is gone" test ! -e "$sock"

done_testing
