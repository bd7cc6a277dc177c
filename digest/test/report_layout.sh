#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `lwm2 report`'s pages as a browser lays them out: no text cut off at
# window widths of 800, 1100 and 1600 px.  A copy of each page gets a
# script that, once laid out, compares every SVG <text>'s box with its
# <svg>'s and every HTML element's box with the window, and writes what
# sticks out into the DOM, which headless Chromium dumps.  The job page's
# box plots once cut long metric labels ("Time in MPI calls, without
# Init/Finalize") at their left edge.  Runs in the build directory.
set -uo pipefail

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
need_python3
export TZ=UTC

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip_all "chromium not installed (contrib/install-deps.sh)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-layout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

{
	./mkreportlog 101 alice 16 4 1700000000
	./mkreportlog 102 bob 8 2 1700000050 5
} >"$tmp/log.jsonl" || skip_all "mkreportlog failed"
./lwm2 report --file "$tmp/log.jsonl" -j 101 -o "$tmp/job.html" 2>/dev/null
is "$?" 0 "job page written"
./lwm2 report --site --file "$tmp/log.jsonl" -o "$tmp/site" 2>/dev/null
is "$?" 0 "site pages written"

cat >"$tmp/probe.js" <<'JS'
addEventListener("load", () => {
  const bad = [], vw = document.documentElement.clientWidth;
  const px = (r) => Math.round(r.left) + ".." + Math.round(r.right) + " x " +
    Math.round(r.top) + ".." + Math.round(r.bottom);
  const out = (what, r, box) => bad.push(what + " [" + px(r) + " in " + px(box) + "]");
  /* inside a box that scrolls (a wide table), text is scrolled to, not cut */
  const scrolled = (e) => {
    for (let a = e; a && a !== document.body; a = a.parentElement)
      if (/auto|scroll/.test(getComputedStyle(a).overflowX) && a !== e) return true;
    return false;
  };
  let texts = 0;
  for (const t of document.querySelectorAll("svg text")) {
    const r = t.getBoundingClientRect(), s = t.ownerSVGElement.getBoundingClientRect();
    if (!r.width) continue;
    texts++;
    if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 ||
        r.bottom > s.bottom + 0.5)
      out("svg text '" + t.textContent + "'", r, s);
  }
  for (const e of document.body.querySelectorAll("*")) {
    if ((e.closest("svg") && e.tagName.toLowerCase() !== "svg") || scrolled(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.width && (r.left < -0.5 || r.right > vw + 0.5))
      out("<" + e.tagName.toLowerCase() + "> '" + (e.textContent || "").slice(0, 60) + "'",
          r, {left: 0, right: vw, top: r.top, bottom: r.bottom});
  }
  const pre = document.createElement("pre");
  pre.id = "layout";
  pre.textContent = "LAYOUT texts=" + texts + " bad=" + bad.length + "\n" + bad.join("\n");
  document.body.appendChild(pre);
});
JS

# probe PAGE WIDTH: the page's layout report, as the browser wrote it
probe() {
	local page=$1 width=$2 copy prof
	copy=$(dirname "$page")/.probe-$(basename "$page")
	python3 -c 'import sys
p = open(sys.argv[1]).read(); js = open(sys.argv[2]).read()
open(sys.argv[3], "w").write(p.replace("</body>", "<script>" + js + "</script></body>", 1))' \
		"$page" "$tmp/probe.js" "$copy"
	prof=$(mktemp -d "$tmp/chromium.XXXXXX")
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$prof" --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --host-resolver-rules='MAP * ~NOTFOUND' \
		--window-size="$width,1000" --virtual-time-budget=2000 \
		--dump-dom "file://$copy" 2>/dev/null |
		python3 -c 'import html,re,sys
m = re.search(r"<pre id=\"layout\">(.*?)</pre>", sys.stdin.read(), re.S)
print(html.unescape(m.group(1)) if m else "LAYOUT none")'
	rm -rf "$prof" "$copy"
}

for page in "$tmp/job.html" "$tmp/site/index.html" "$tmp/site/grid-mpi.html" \
	"$tmp/site/jobs/101.html" "$tmp/site/jobs/101/node-n1.html" "$tmp/site/users/alice.html"; do
	name=${page#"$tmp/"}
	for width in 800 1100 1600; do
		rep=$(probe "$page" "$width")
		head=$(head -1 <<<"$rep")
		case $head in
		"LAYOUT texts="*" bad=0") ok "$name at $width px: no text cut off (${head#LAYOUT })" ;;
		"LAYOUT none") not_ok "$name at $width px: the browser ran the probe" ;;
		*)
			not_ok "$name at $width px: no text cut off (${head#LAYOUT })"
			tail -n +2 <<<"$rep" | head -8 | sed 's/^/# /'
			;;
		esac
	done
done

done_testing
