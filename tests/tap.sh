# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# TAP output for the shell tests (unit tests run by Automake's tap-driver,
# integration tests counted by tests/suite.sh): source it, then ok, not_ok,
# is, check, check_eval, skip, skip_because, skip_all, diag, and
# done_testing as the last command.

_tap_n=0
_tap_failed=0
_tap_planned=

plan() {
	_tap_planned=$1
	echo "1..$1"
}

# diag MSG...: each argument, and each line of it, as a TAP comment.
diag() {
	local arg line
	for arg in "$@"; do
		while IFS= read -r line; do
			echo "# $line"
		done <<<"$arg"
	done
}

ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $*"
}

not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $*"
}

# tap_relay LABEL: the TAP lines a test program prints on stdin, renumbered
# as this script's points with LABEL before their text; its plan and
# other lines dropped but for comments.
tap_relay() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$1: ${line#ok * - }" ;;
		"not ok "*) not_ok "$1: ${line#not ok * - }" ;;
		"#"*) echo "$line" ;;
		esac
	done
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # SKIP $*"
}

# skip_because DESC REASON: a point that could not run here, with the
# reason alone after "# SKIP" (tests/suite.sh groups skips by it).
skip_because() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

# Whole script skipped: TAP wants exactly this plan line, nothing else.
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

# need_python3: the tests that read JSON output do it with python3, which
# configure looks for (PYTHON3 in the tests' environment); without it the
# whole script skips, saying why.
need_python3() {
	command -v "${PYTHON3:-python3}" >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 ||
		skip_all "python3 not installed: it reads the JSON output (configure says so; contrib/install-deps.sh)"
}

bail_out() {
	echo "Bail out! $*"
	exit 1
}

# check DESC CMD...: one test point from a command's exit status.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# check_eval EXPR DESC: one test point from a shell expression, evaluated
# where the test's variables are in scope (for conditions built of several
# commands).
check_eval() {
	if eval "$1"; then ok "$2"; else not_ok "$2"; fi
}

# is GOT WANT DESC
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		diag "got:  '$1'" "want: '$2'"
	fi
}

done_testing() {
	if [ -z "$_tap_planned" ]; then
		echo "1..$_tap_n"
	elif [ "$_tap_planned" != "$_tap_n" ]; then
		diag "planned $_tap_planned tests but ran $_tap_n"
		_tap_failed=$((_tap_failed + 1))
	fi
	[ "$_tap_failed" -eq 0 ]
}
