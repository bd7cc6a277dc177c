#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 report` on the private cluster, looked at as a person would: two
# jobs run at once, a two-node MPI job where rank 2 computes 3 s longer
# than the others (who wait for it in a barrier) and a job writing files;
# their pages (from accounting and from jobcomp/lwm2's log) and the site
# pages are opened in headless Chromium.  The rendered page shows the
# digest's numbers, names the outlier rank, has SVG paths with data, logs
# no console error and makes no network request; the screenshots stay in
# the cluster's scratch directory ($LWM2_CLUSTER_DIR/screenshots).
set -uo pipefail

# shellcheck source=tests/cluster/lib.sh
. "$(dirname "$0")/../cluster/lib.sh"
# shellcheck source=tests/integration/jobcomp-lib.sh
. "$(dirname "$0")/jobcomp-lib.sh"

command -v mpicc.openmpi >/dev/null || skip_all "mpicc.openmpi not installed"
jobcomp_setup
plan 46

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
shots=$LWM2_CLUSTER_DIR/screenshots
mkdir -p "$shots"

bin=$TESTDIR/bin
cat >"$bin/imbalance.c" <<'C'
#include <mpi.h>
#include <time.h>

/* Busy for s seconds of wall time. */
static void work(double s)
{
	struct timespec a, b;
	volatile double x = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}

int main(int argc, char **argv)
{
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	/* every rank works 1 s per round; rank 2 another 1 s, six rounds: the
	 * MPI guidance judges runs of 10 s and more */
	for (int r = 0; r < 6; r++) {
		work(rank == 2 ? 2.0 : 1.0);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
C
cat >"$bin/writer.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* 8 MB per second for 4 s into a file of its own, then removed. */
int main(void)
{
	static char buf[1 << 20];
	char path[256];
	const char *id = getenv("SLURM_PROCID");
	struct timespec t = {0, 125000000};
	int fd;

	snprintf(path, sizeof(path), "out.%s", id ? id : "0");
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return 1;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 32; i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
		nanosleep(&t, NULL);
	}
	close(fd);
	unlink(path);
	return 0;
}
C
mpicc.openmpi -O1 -o "$bin/imbalance" "$bin/imbalance.c" ||
	bail_out "mpicc.openmpi cannot build the imbalanced program"
cc -O1 -o "$bin/writer" "$bin/writer.c" || bail_out "cannot build the writer"
chmod -R a+rX "$bin"

# --- two jobs at once, 1-second slices
cat >"$TESTDIR/$TEST_USER/a.sh" <<EOF
#!/bin/bash
#SBATCH -N2 -n4 -o imb-%j.out
srun --lwm2-slice=1 --mpi=pmix $bin/imbalance
EOF
cat >"$TESTDIR/$TEST_USER/b.sh" <<EOF
#!/bin/bash
#SBATCH -N1 -n2 -o io-%j.out
srun --lwm2-slice=1 $bin/writer
EOF
chown "$TEST_USER" "$TESTDIR/$TEST_USER/a.sh" "$TESTDIR/$TEST_USER/b.sh"
t0=$(date +%s)
job_a=$(submit_batch "$TESTDIR/$TEST_USER/a.sh") || job_a=0
job_b=$(submit_batch "$TESTDIR/$TEST_USER/b.sh") || job_b=0
is "$(wait_job "$job_a" 180)" COMPLETED "MPI job $job_a COMPLETED"
is "$(wait_job "$job_b" 180)" COMPLETED "I/O job $job_b COMPLETED"
check "digest of $job_a in AdminComment" wait_digest "$job_a" 90
check "digest of $job_b in AdminComment" wait_digest "$job_b" 90
sa=$(sacct -n -X -P -j "$job_a" -o Start)
sb=$(sacct -n -X -P -j "$job_b" -o Start)
diag "job $job_a started $sa, job $job_b started $sb"

# --- pages from the log (root reads it) and from accounting (as the user)
out=$TESTDIR/report
install -d -m 755 "$out"
"$LWM2" report --file "$JCLOG" -j "$job_a" -o "$out/a.html" 2>"$out/err"
is "$?" 0 "report of $job_a from the log"
"$LWM2" report --file "$JCLOG" -j "$job_b" -o "$out/b.html" 2>>"$out/err"
is "$?" 0 "report of $job_b from the log"
as_user "$LWM2" report -j "$job_a" -o - >"$out/a-acct.html" 2>>"$out/err"
is "$?" 0 "report of $job_a from accounting, as its owner"
check "nothing on stderr" test ! -s "$out/err"
check "accounting: the page says what the compact form cannot show" \
	grep -q 'Not available from the compact digest of AdminComment' "$out/a-acct.html"

# numbers in the page equal the digest's, from either source
pyjob() {
	python3 - "$@" <<'PY'
import json, re, sys
html = open(sys.argv[1]).read()
src = sys.argv[2]
if src.endswith(".jsonl"):
    d = None
    for s in open(src):
        try:
            l = json.loads(s)
        except ValueError:
            continue
        if str(l.get("job_id")) == sys.argv[3] and "digest" in l:
            d = l["digest"]
else:
    d = json.load(open(src))[-1]["digest"]
bad = []
for mid, m in d["scope"]["metrics"].items():
    r = re.search(r'data-metric="%s" data-min="([^"]*)" data-avg="([^"]*)" data-max="([^"]*)"' % mid, html)
    if not r or any(abs(float(g) - m[k]) > 1e-6 * max(1, abs(m[k])) for g, k in zip(r.groups(), ("min", "avg", "max"))):
        bad.append(mid)
print("ok" if not bad and d["scope"]["metrics"] else "differ: " + ",".join(bad))
PY
}
is "$(pyjob "$out/a.html" "$JCLOG" "$job_a")" ok "job $job_a (log): every min/avg/max shown is the digest's"
is "$(pyjob "$out/b.html" "$JCLOG" "$job_b")" ok "job $job_b (log): every min/avg/max shown is the digest's"
as_user "$LWM2" digest -j "$job_a" --json >"$out/a-acct.json" 2>/dev/null
is "$(pyjob "$out/a-acct.html" "$out/a-acct.json")" ok "job $job_a (accounting): every min/avg/max shown is lwm2 digest's"
check "job $job_a: rank 2 is the named outlier of the MPI share" \
	grep -Eq 'data-metric="mpi_time"><b>[^<]*</b> \(median [^)]*\): <span class="outlier" data-rank="2"' "$out/a.html"
check "job $job_a: guidance on the imbalance" grep -q 'data-rule="mpi-imbalance"' "$out/a.html"
is "$(grep -o 'step 0 n[0-9]*</text>' "$out/a.html" | sort -u | wc -l)" 2 "job $job_a: two node rows in the grid"
check "job $job_b: each writer wrote 32 MiB (the maximum over its processes)" \
	grep -q '<tr data-metric="bytes_written" data-min="[^"]*" data-avg="[^"]*" data-max="33554432"' "$out/b.html"
check "job $job_b: its grid shows file I/O bytes/s" \
	grep -Eq 'file I/O bytes/s</h3><p class="small">Colour from 0 \(light\) to [1-9]' "$out/b.html"

# --- lwm2 ranks: the same processes as text and JSON, rank 2 named
"$LWM2" ranks --file "$JCLOG" --json --groups --metric mpi_time "$job_a" >"$out/a-ranks.json" 2>"$out/err"
is "$?" 0 "ranks of $job_a from the log"
is "$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]["mpi_time"]
low = m["groups"][0]["ranks"]
print(m["n"], m["min_at"]["rank"], [r["rank"] for r in low])' "$out/a-ranks.json")" "4 2 [2]" \
	"ranks of $job_a: 4 ranks, rank 2 (computing longer) has the least MPI time, alone in the lowest band"
want=$(log_line "$job_a" '"%.6g %.6g %.6g" % tuple(l["digest"]["scope"]["metrics"]["mpi_time"][k] for k in ("min", "avg", "max"))')
is "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metrics"]["mpi_time"]; print("%.6g %.6g %.6g" % (m["min"], m["mean"], m["max"]))' "$out/a-ranks.json")" \
	"$want" "ranks of $job_a: min, mean and max are the digest's ($want)"
err=$(as_user "$LWM2" ranks "$job_a" 2>&1 >/dev/null)
like_err() { if [[ $err =~ $1 ]]; then ok "$2"; else not_ok "$2"; diag "got: '$err'"; fi; }
like_err "the compact digest of AdminComment keeps no per-process values" \
	"ranks from accounting: says the compact form has no per-process values"

# --- lwm2 stats: the two jobs by mode, language and MPI library
"$LWM2" stats --file "$JCLOG" -S "@$t0" --by mode,language,mpi --json >"$out/stats.json" 2>"$out/err"
is "$?" 0 "stats --by mode,language,mpi over the two jobs"
is "$(python3 -c '
import json, sys
g = {x["group"].split(",")[2][:8]: x for x in json.load(open(sys.argv[1]))["groups"]}
a, b = g["Open MPI"], g["(none)"]
print(a["group"].split(",")[:2], b["group"].split(",")[:2], a["jobs"], b["jobs"],
      round(a["jobs_pct"] + b["jobs_pct"]), round(a["core_hours_pct"] + b["core_hours_pct"]),
      a["no_mpi_msgs_pct"], b["no_mpi_msgs_pct"])' "$out/stats.json" 2>&1)" \
	"['batch', 'c'] ['batch', 'c'] 1 1 100 100 0 100" \
	"stats: both batch jobs in C, one with Open MPI, shares adding up, the writer passed no MPI message"

# --- the site pages
"$LWM2" report --site --file "$JCLOG" -o "$out/site" 2>"$out/err"
is "$?" 0 "site pages"
check "site: both jobs outlined with links" bash -c \
	"grep -q 'href=\"jobs/$job_a.html\"><rect class=\"job\"' '$out/site/index.html' && grep -q 'href=\"jobs/$job_b.html\"><rect class=\"job\"' '$out/site/index.html'"
check "site: the user's page lists both" bash -c \
	"grep -q 'jobs/$job_a.html' '$out/site/users/$TEST_USER.html' && grep -q 'jobs/$job_b.html' '$out/site/users/$TEST_USER.html'"
check "site: node pages with rank anchors" grep -q 'id="rank-2-step-0"' "$out/site/jobs/$job_a/node-$(python3 -c 'import re,sys; print(re.search(r"rank 2 on ([a-z0-9]+)", open(sys.argv[1]).read()).group(1))' "$out/a.html").html"
"$LWM2" report --site --file "$JCLOG" --metric io -o "$out/site-io" 2>/dev/null
check "site --metric io: I/O bytes/s grid" grep -q 'data-metric="io"' "$out/site-io/index.html"
check "no URL in any page" bash -c "! grep -rEqi 'https?:' '$out'/[ab]*.html '$out/site'"

# --- in the browser
# --- PrivateData decides who gets a page from accounting
if cluster_reconfig LWM2_CLUSTER_PRIVATEDATA=jobs; then
	as_user "$LWM2" report -j "$job_a" -o - >/dev/null 2>&1
	is "$?" 0 "PrivateData=jobs: the owner gets the page of $job_a"
	as_user -u "$OTHER_USER" "$LWM2" report -j "$job_a" -o - >"$out/other.html" 2>"$out/other.err"
	is "$?" 1 "PrivateData=jobs: another user does not get it"
	check "PrivateData=jobs: and is told why" grep -q 'PrivateData hides it from you' "$out/other.err"
else
	not_ok "cluster restarted with PrivateData=jobs"
	skip "cluster restart failed"
	skip "cluster restart failed"
fi

if [ -z "$CHROMIUM" ]; then
	for i in $(seq 1 14); do skip "chromium not installed (contrib/install-deps.sh)"; done
	done_testing
	exit
fi
# browse NAME PAGE: dump the DOM, screenshot, console and network log
browse() {
	local name=$1 page=$2 prof
	prof=$(mktemp -d "$TESTDIR/chromium.XXXXXX")
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$prof" --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --metrics-recording-only \
		--host-resolver-rules='MAP * ~NOTFOUND' --log-net-log="$shots/$name.netlog.json" \
		--enable-logging=stderr --v=0 --window-size=1100,2400 --virtual-time-budget=3000 \
		--dump-dom "file://$page" >"$shots/$name.dom.html" 2>"$shots/$name.console.log"
	local rc=$?
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$prof" --window-size=1100,2400 --virtual-time-budget=3000 \
		--screenshot="$shots/$name.png" "file://$page" >/dev/null 2>&1
	rm -rf "$prof"
	return "$rc"
}
# URLs the page asked for, other than itself and data: (from the net log)
requests() {
	python3 - "$1" "$2" <<'PY'
import json, sys
try:
    log = json.load(open(sys.argv[1]))
except ValueError:
    # the log is cut off when the browser exits: close it
    text = open(sys.argv[1]).read().rstrip().rstrip(",")
    log = json.loads(text + "]}")
urls = set()
for e in log.get("events", []):
    p = e.get("params", {})
    # the browser's own requests (updates, time) have no origin; the
    # page's carry theirs ("null" for a file)
    if "url" in p and "initiator" in p and p["initiator"] != "not an origin":
        urls.add(p["url"])
print(" ".join(sorted(urls)) or "none")
PY
}
# the checks can fail: a page loading an image and a style sheet from
# elsewhere, and one with a script error
cat >"$out/neg.html" <<'EOF'
<!DOCTYPE html><html><head><link rel="stylesheet" href="https://cdn.example.invalid/a.css"></head>
<body><img src="http://example.invalid/x.png"><script>throw new Error("boom")</script></body></html>
EOF
browse neg "$out/neg.html"
is "$(requests "$shots/neg.netlog.json" "$out/neg.html")" \
	"http://example.invalid/x.png https://cdn.example.invalid/a.css" "control: a page's requests are seen"
check "control: a console error is seen" grep -q 'CONSOLE.*Uncaught Error: boom' "$shots/neg.console.log"
for name in job site; do
	case $name in
	job) page=$out/site/jobs/$job_a.html ;;
	site) page=$out/site/index.html ;;
	esac
	t0=$(date +%s%N)
	browse "$name" "$page"
	is "$?" 0 "chromium renders the $name page"
	diag "$name page: $(stat -c %s "$page") bytes, dump-dom $((($(date +%s%N) - t0) / 1000000)) ms with the browser's start"
	is "$(requests "$shots/$name.netlog.json" "$page")" none "$name page: no network request"
	check "$name page: no console message" bash -c "! grep -E ':CONSOLE[(:]' '$shots/$name.console.log'"
	check "$name page: screenshot taken" test -s "$shots/$name.png"
done
python3 - "$shots/job.dom.html" "$job_a" >"$out/dom.txt" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
paths = re.findall(r'<path d="([^"]*)"', dom)
print("paths", len(paths), "empty", sum(1 for p in paths if not p.strip()))
print("outlier", bool(re.search(r'class="outlier" data-rank="2"[^>]*>(<a [^>]*>)?rank 2 on', dom)))
print("title", "lwm2 report: job %s" % sys.argv[2] in dom)
PY
check "rendered job page: SVG paths, none empty ($(head -n 1 "$out/dom.txt"))" grep -Eq '^paths [1-9][0-9]* empty 0$' "$out/dom.txt"
check "rendered job page: rank 2 named as the outlier" grep -qx 'outlier True' "$out/dom.txt"
check "rendered job page: its title" grep -qx 'title True' "$out/dom.txt"
check "rendered site page: the grid and both jobs" bash -c \
	"grep -q 'class=\"grid\"' '$shots/site.dom.html' && grep -q 'jobs/$job_a.html' '$shots/site.dom.html' && grep -q 'jobs/$job_b.html' '$shots/site.dom.html'"
diag "screenshots: $shots"

done_testing
