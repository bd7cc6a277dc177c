# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# A page as a browser lays it out: layout_probe PAGE WIDTH prints
# "LAYOUT texts=N bad=M" and what sticks out, one line each.  A copy of
# the page gets a script that, once laid out, compares every SVG <text>'s
# box with its <svg>'s and every HTML element's box with the window, and
# writes what sticks out into the DOM, which headless Chromium dumps.
# Wants $CHROMIUM (the browser) and $LAYOUT_TMP (a scratch directory).

layout_probe_js() {
	[ -s "$LAYOUT_TMP/probe.js" ] && return
	cat >"$LAYOUT_TMP/probe.js" <<'JS'
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
}

# layout_probe PAGE WIDTH: the page's layout report, as the browser wrote it
layout_probe() {
	local page=$1 width=$2 copy prof
	copy=$(dirname "$page")/.probe-$(basename "$page")
	layout_probe_js
	python3 -c 'import sys
p = open(sys.argv[1]).read(); js = open(sys.argv[2]).read()
open(sys.argv[3], "w").write(p.replace("</body>", "<script>" + js + "</script></body>", 1))' \
		"$page" "$LAYOUT_TMP/probe.js" "$copy"
	prof=$(mktemp -d "$LAYOUT_TMP/chromium.XXXXXX")
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
