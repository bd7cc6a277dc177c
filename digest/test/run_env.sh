#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lwm2 run gives a program the environment srun --lwm2 gives it
# (digest/util/stepenv.c): a gcc AddressSanitizer program runs (ASan's
# link-order check off, the user's ASAN_OPTIONS kept; an ASan error said
# as what ended it), the user's own
# LD_PRELOAD is kept with liblwm2.so once; and where nothing was measured
# the message names the reason that holds: a static program, a
# set-user-ID one, a signal, an exec into a program without the library,
# a library the program's loader refuses.  The program's exit status and
# output are its own throughout.
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
L=./lwm2
lib=${LWM2_LIB:-../preload/.libs/liblwm2.so}
[ -r "$lib" ] || skip_all "needs liblwm2.so (preload/)"
# A sanitized library needs its runtime loaded first in every program it
# is preloaded into (sh, the test programs): not what is tested here.
if ldd "$lib" 2>/dev/null | grep -q 'lib[at]san\|libubsan'; then
	skip_all "liblwm2.so is built with sanitizers"
fi
command -v gcc >/dev/null || skip_all "gcc not installed (the programs under test)"
lib=$(realpath "$lib")
export LWM2_LIB="$lib"
unset LWM2_MODE LWM2_PRINT LWM2_DIR LWM2_SLICE LWM2_PARENT LWM2_ROOT_PPID ASAN_OPTIONS
w=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-runenv-XXXXXX") || exit 1
chmod 755 "$w"
trap 'rm -rf "$w"' EXIT
mkdir "$w/tmp"
export TMPDIR="$w/tmp"

# The program: says what it was given, exits with its argument.
cat >"$w/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	const char *a = getenv("ASAN_OPTIONS"), *p = getenv("LD_PRELOAD");
	char *m = malloc(16);

	m[0] = 'x';
	printf("prog %c asan=%s preload=%s\n", m[0], a ? a : "", p ? p : "");
	free(m);
	return argc > 1 ? atoi(argv[1]) : 0;
}
EOF
gcc -o "$w/prog" "$w/prog.c" || bail_out "gcc couldn't build a plain program"

# -- a gcc AddressSanitizer program: libasan.so comes after liblwm2.so ------
if gcc -fsanitize=address -o "$w/asan" "$w/prog.c" 2>"$w/asan.err" &&
	"$w/asan" 0 >/dev/null 2>&1; then
	ASAN_OPTIONS=detect_leaks=1 $L run -- "$w/asan" 3 >"$w/out" 2>"$w/err"
	st=$?
	check "asan: the program's exit status (3)" test "$st" -eq 3
	check "asan: it ran, not stopped by ASan's link-order check" \
		sh -c "grep -q '^prog x ' '$w/out' && ! grep -q 'does not come first' '$w/err'"
	check "asan: the user's ASAN_OPTIONS kept, the check turned off after them" \
		grep -q "asan=detect_leaks=1:verify_asan_link_order=0 " "$w/out"
	check "asan: counted as a process, liblwm2.so stepped aside" \
		sh -c "grep -q 'Number of processes  *1 ' '$w/err' &&
		       grep -q 'built with AddressSanitizer: lwm2 stepped aside' '$w/err'"
	# An error ASan reports ends the program with _exit: no record.
	printf '#include <stdlib.h>\nint main(void) { char *p = malloc(4); p[8] = 1; return p[8]; }\n' \
		>"$w/bug.c"
	gcc -fsanitize=address -o "$w/bug" "$w/bug.c" || bail_out "gcc couldn't build bug.c"
	$L run -- "$w/bug" >"$w/out" 2>"$w/err"
	st=$?
	check "asan error: ASan's exit status (1) and report" \
		sh -c "test $st -eq 1 && grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' '$w/err'"
	check "asan error: the reason is the sanitizer's _exit" \
		grep -q "was not measured: $w/bug is built with AddressSanitizer: liblwm2.so steps aside in it and writes its record at exit(3), which the program did not reach" "$w/err"
else
	for t in 1 2 3 4 5 6; do
		skip_because "asan $t" "gcc -fsanitize=address doesn't build a program that runs here"
	done
fi

# -- the user's own LD_PRELOAD ----------------------------------------------
cat >"$w/mine.c" <<'EOF'
#include <stdio.h>
__attribute__((constructor)) static void mine(void) { fputs("mine loaded\n", stderr); }
EOF
gcc -shared -fPIC -o "$w/libmine.so" "$w/mine.c" || bail_out "gcc couldn't build a library"
LD_PRELOAD="$w/libmine.so" $L run -- "$w/prog" 4 >"$w/out" 2>"$w/err"
st=$?
check "preload: the program's exit status (4)" test "$st" -eq 4
check "preload: liblwm2.so first, the user's library kept" \
	grep -q "preload=$lib:$w/libmine.so\$" "$w/out"
check "preload: the user's library loaded, the program measured" \
	sh -c "grep -q '^mine loaded' '$w/err' && grep -q 'Number of processes  *1 ' '$w/err'"
# As inside a measured batch job: liblwm2.so is there already.
LD_PRELOAD="$lib:$w/libmine.so" $L run -- "$w/prog" >"$w/out" 2>/dev/null
check "preload: liblwm2.so listed once when inherited" \
	grep -q "preload=$lib:$w/libmine.so\$" "$w/out"

# -- a static program -------------------------------------------------------
if gcc -static -o "$w/static" "$w/prog.c" 2>/dev/null; then
	$L run -- "$w/static" 5 >"$w/out" 2>"$w/err"
	st=$?
	check "static: the program's exit status and output" \
		sh -c "test $st -eq 5 && grep -q '^prog x ' '$w/out'"
	check "static: the reason is that it is statically linked" \
		grep -q "no records: $w/static was not measured: $w/static is statically linked" "$w/err"
else
	skip_because "static 1" "gcc -static fails (no libc.a)"
	skip_because "static 2" "gcc -static fails (no libc.a)"
fi

# -- a set-user-ID program: secure mode, LD_PRELOAD paths ignored -----------
cp "$w/prog" "$w/suid"
if [ "$(id -u)" -ne 0 ]; then
	why="not root: no set-user-ID copy owned by another user"
elif ! chown nobody "$w/suid" 2>/dev/null || ! chmod 4755 "$w/suid"; then
	why="couldn't make a set-user-ID copy owned by nobody"
elif grep -q '^NoNewPrivs:[[:space:]]*1' /proc/self/status; then
	why="no_new_privs is set: exec ignores the set-user-ID bit"
else
	why=
	case ",$(findmnt -n -o OPTIONS --target "$w" 2>/dev/null)," in
	*,nosuid,*) why="$w is on a nosuid mount" ;;
	esac
fi
if [ -z "$why" ]; then
	$L run -- "$w/suid" 6 >"$w/out" 2>"$w/err"
	st=$?
	check "setuid: the program's exit status and output" \
		sh -c "test $st -eq 6 && grep -q '^prog x ' '$w/out'"
	check "setuid: the reason is secure mode" \
		grep -q "was not measured: $w/suid is set-user-ID (to uid $(id -u nobody)): the loader runs it in secure mode" "$w/err"
else
	skip_because "setuid 1" "$why"
	skip_because "setuid 2" "$why"
fi

# -- killed before liblwm2.so wrote a record --------------------------------
sh -c "$L run -- sh -c 'kill -KILL \$\$' 2>'$w/err'; echo \$? >'$w/st'"
check "signal: lwm2 ends as the program did (137)" test "$(cat "$w/st")" -eq 137
check "signal: the reason is the signal" \
	grep -q "was not measured: sh was killed by signal 9 (SIGKILL) before liblwm2.so wrote its record" "$w/err"

# -- a wrapper that takes LD_PRELOAD out and execs the program --------------
printf '#!/bin/sh\nunset LD_PRELOAD\nexec "%s" "$@"\n' "$w/prog" >"$w/wrap"
chmod 755 "$w/wrap"
$L run -- "$w/wrap" 8 >"$w/out" 2>"$w/err"
st=$?
check "wrapper: the program's exit status and output" \
	sh -c "test $st -eq 8 && grep -q '^prog x .* preload=\$' '$w/out'"
check "wrapper: the reason is the exec into a program run without liblwm2.so" \
	grep -q "was not measured: $w/wrap replaced itself (exec) with prog, which ran without liblwm2.so" "$w/err"

# -- a library the program's loader refuses ---------------------------------
echo "not a library" >"$w/liblwm2.so"
LWM2_LIB="$w/liblwm2.so" $L run -- "$w/prog" 9 >"$w/out" 2>"$w/err"
st=$?
check "loader: the program's exit status and output" \
	sh -c "test $st -eq 9 && grep -q '^prog x ' '$w/out'"
# ld.so said why on the program's stderr; lwm2 says the same.
said=$(sed -n "s/^ERROR: ld.so: object .* cannot be preloaded (\(.*\)): ignored.*/\1/p" "$w/err")
check "loader: the reason is the loader's own (${said:-none})" \
	grep -qF "its loader couldn't preload $w/liblwm2.so into $w/prog: ${said:-?}" "$w/err"

# -- a command that never started: its error alone --------------------------
$L run -- "$w/nosuch" >"$w/out" 2>"$w/err"
st=$?
check "no command: exit 127, the error, no second reason" \
	sh -c "test $st -eq 127 && grep -q \"couldn't run $w/nosuch\" '$w/err' && ! grep -q 'no records' '$w/err'"
check "record directories removed" test -z "$(ls -A "$w/tmp")"
done_testing
