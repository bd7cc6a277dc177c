#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# doc/HACKING.md's walk-through, done: a scratch copy of the tree gets a
# new counter (posix_open_calls) the way the guide says, one line in the
# counter table and the count in the wrapper, and nothing else; built, it
# counts the opens of a command run by `lwm2 run`, and every view shows
# the counter by its name: the rank record (`lwm2 dump`), the job digest's
# JSON totals and grid, the text of `lwm2 digest -o` from the log, and the
# field list.  Needs no cluster: a compiler and the
# tree's build dependencies (it configures and builds the copy, some
# minutes on two cores).  LWM2_SRCDIR: the tree (default: this file's).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=${LWM2_SRCDIR:-$here/../..}
# shellcheck source=tests/tap.sh
. "$src/tests/tap.sh"
# shellcheck source=tests/integration/scratch-lib.sh
. "$src/tests/integration/scratch-lib.sh"
need_python3

command -v git >/dev/null && git -C "$src" rev-parse --git-dir >/dev/null 2>&1 ||
	skip_all "the tree is not a git checkout (its files are listed by git)"
command -v autoreconf >/dev/null || skip_all "no autoreconf (the copy runs autogen.sh)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-add-counter.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
scratch_copy "$src" "$tree" || bail_out "couldn't copy the tree"

# Step 1 of the guide: the counter's line at the end of the table.
check "step 1: the counter's line appended to LWM2_LATER_COUNTERS" python3 - "$tree" <<'EOF'
import re, sys
p = sys.argv[1] + '/digest/format/lwm2_record.h'
s = open(p).read()
# the definition, continued lines and all, up to the test build's counter
m = re.search(r'#define LWM2_LATER_COUNTERS\(X\)(?:[^\n]*\\\n)*?[^\n]*?(LWM2_TEST_NEXT_COUNTER\(X\))', s)
assert m, 'the table\'s end is not where doc/HACKING.md says'
s = (s[:m.start(1)] + 'X(posix_open_calls, "calls", "successful opens of files") '
     + s[m.start(1):])
open(p, 'w').write(s)
EOF
# Step 2: count it where the wrapper ends (preload/posix.c).
check "step 2: the wrapper counts it" python3 - "$tree" <<'EOF'
import sys
p = sys.argv[1] + '/preload/posix.c'
s = open(p).read()
a = '''	if (lwm2_posix_fd_classify(fd))
		posix_count_meta(s.t, ticks);
}'''
assert a in s, 'posix_end_open is not as doc/HACKING.md shows it'
s = s.replace(a, '''	if (lwm2_posix_fd_classify(fd)) {
		posix_count_meta(s.t, ticks);
		lwm2_add(lwm2_buffer(s.t), LWM2_C_posix_open_calls, 1);
	}
}''')
open(p, 'w').write(s)
EOF

if ! scratch_build "$tree" "$tmp/b"; then
	not_ok "the tree with the new counter builds"
	done_testing
	exit 1
fi
ok "the tree with the new counter builds"
lwm2=$tmp/b/digest/lwm2

# Three opens of a regular file, and the command's own.
printf 'x\n' >"$tmp/f"
mkdir "$tmp/keep"
"$lwm2" run -q -k "$tmp/keep" -j "$tmp/d.json" -- sh -c 'cat "$1" "$1" "$1" >/dev/null' sh "$tmp/f"
is "$?" 0 "lwm2 run measures the command"
opens=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scope"]["totals"].get("posix_open_calls", 0))' "$tmp/d.json")
check_eval '[ "${opens:-0}" -ge 3 ]' "the digest's JSON totals have the counter: $opens opens"
check "the digest's grid has its column" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert any("posix_open_calls" in g["c"] for g in d.get("grid", [])), d.get("grid")' "$tmp/d.json"
rec=$(find "$tmp/keep" -type f -name '*.lwm2' | head -1)
check "lwm2 dump names it in the rank record" bash -c \
	"'$lwm2' dump '$rec' | grep -q '\"posix_open_calls\"'"
# The text digest's field, from a log line as jobcomp/lwm2 writes it.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({"job_id": 4242, "status": "ok", "start": 1, "end": 2, "digest": d}))' \
	"$tmp/d.json" >"$tmp/log.jsonl"
text=$("$lwm2" digest --file "$tmp/log.jsonl" -j 4242 -o posix_open_calls 2>&1)
check_eval '[[ "$text" == *"$opens"* ]]' "lwm2 digest -o posix_open_calls shows $opens: $(echo "$text" | tr '\n' ' ')"
check "lwm2 digest --helpformat lists it" bash -c "'$lwm2' digest --helpformat | grep -qw posix_open_calls"

done_testing
