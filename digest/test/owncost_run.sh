#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lwm2's own cost in the digest of a real run with a known number of
# calls and processes: a program that makes exactly 20,000 one-byte
# writes and 10 opens and closes of a file, run 3 times from a measured
# shell under lwm2 run.  The digest's lwm2_cost counts every one of those
# calls and every process started, and its seconds are those counts
# times the costs lwm2(1) lists (LWM2'S OWN COST), with the clock each
# process measured.  How close the estimate comes to the time lwm2 adds
# is make bench's own_cost row (a timed figure, not a test).
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
lib=${LWM2_LIB:-../preload/.libs/liblwm2.so}
[ -r "$lib" ] || skip_all "needs liblwm2.so (preload/)"
if ldd "$lib" 2>/dev/null | grep -q 'lib[at]san\|libubsan'; then
	skip_all "liblwm2.so is built with sanitizers"
fi
command -v gcc >/dev/null || skip_all "gcc not installed (the program under test)"
command -v python3 >/dev/null || skip_all "python3 not installed (reads the JSON)"
export LWM2_LIB
LWM2_LIB=$(realpath "$lib")
unset LWM2_MODE LWM2_PRINT LWM2_DIR LWM2_SLICE LWM2_PARENT LWM2_ROOT_PPID
w=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-owncost-XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT

cat >"$w/writer.c" <<'PROG'
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	for (int f = 0; f < 10; f++) {
		int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 1;
		for (int i = 0; i < 2000; i++)
			if (write(fd, "x", 1) != 1)
				return 1;
		close(fd);
	}
	return argc == 2 ? 0 : 2;
}
PROG
gcc -O1 -o "$w/writer" "$w/writer.c" || skip_all "the writer does not build"

./lwm2 run --quiet --json "$w/d.json" -- /bin/sh -c '"$1" "$2" && "$1" "$2" && "$1" "$2"' _ \
	"$w/writer" "$w/out" 2>"$w/err"
is "$?" 0 "the run: exit 0"
py() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); c = d.get('lwm2_cost', {}); print($2)" "$1"; }

is "$(py "$w/d.json" "c.get('images')")" 4 "process starts: the shell and its 3 writers"
# Each writer: 20,000 writes and 10 opens and 10 closes of its file; the
# shell makes none of its own (it writes nothing, reads no file).
calls=$(py "$w/d.json" "c.get('calls')")
if [ "$calls" -ge 60060 ] 2>/dev/null && [ "$calls" -le 60100 ]; then
	ok "calls: the writers' 60,060 and the loader's few ($calls)"
else
	not_ok "calls: the writers' 60,060 and the loader's few ($calls)"
fi
is "$(py "$w/d.json" "c.get('calls') == sum(d['scope']['totals'].get(k, 0) for k in ('posix_read_calls', 'posix_write_calls', 'posix_meta_calls', 'posix_aio_calls'))")" \
	True "calls: the digest's own file-call totals, each call once"
# seconds = calls x (5 ns + 2 clock reads) + images x 0.27 ms + samples x
# 400 ns + heartbeats x 20 us: each process's clock is in the node
# record, the dearest is shown; the check takes the bounds the shown one
# gives (a read costs at least 1 ns).
check=$(python3 - "$w/d.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["lwm2_cost"]
fixed = c["images"] * 270e-6 + c["samples"] * 400e-9 + c["heartbeats"] * 20e-6
hi = fixed + c["calls"] * (5 + 2 * c["clock_read_ns"]) * 1e-9
lo = fixed + c["calls"] * (5 + 2 * 1) * 1e-9
parts = c["wrappers_s"] + c["sampling_s"] + c["start_end_s"] + c["heartbeat_s"]
print(lo - 1e-6 <= c["seconds"] <= hi + 1e-6 and abs(parts - c["seconds"]) < 5e-6,
      "%.6f in [%.6f, %.6f]" % (c["seconds"], lo, hi))
PY
)
case $check in
True*) ok "seconds: the counts times the listed costs (${check#True })" ;;
*) not_ok "seconds: the counts times the listed costs (${check#False })" ;;
esac
share=$(py "$w/d.json" "c.get('cpu_share_percent', -1)")
case $share in
-1) not_ok "a share of the job's CPU time" ;;
*) ok "a share of the job's CPU time: $share %" ;;
esac
is "$(py "$w/d.json" "c.get('clock') in ('tsc', 'monotonic')")" True "the clock the processes used"

./lwm2 run -- /bin/sh -c '"$1" "$2"' _ "$w/writer" "$w/out" 2>"$w/text"
if grep -Eq "^lwm2 used [0-9.e+-]+ % of this job's CPU time, [0-9.e+-]+ s \(estimated: [0-9]+ calls, 2 process starts, [0-9]+ samples; clock [a-z]+, [0-9.]+ ns a read\)$" "$w/text"; then
	ok "the text digest's line"
else
	not_ok "the text digest's line"
	grep -m1 "lwm2 used" "$w/text" | sed 's/^/# /'
fi
done_testing
