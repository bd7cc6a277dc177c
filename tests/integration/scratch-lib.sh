# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# A scratch copy of the tree, built apart: for tests that build the tree
# the way a change would (a new counter, the next version's counter
# table) beside the build under test.

# scratch_copy SRC DEST: the tree's files as they are in SRC's working
# tree (tracked, and new ones not ignored) into DEST; 1 where SRC is no
# git checkout or the copy failed.
scratch_copy() {
	command -v git >/dev/null && git -C "$1" rev-parse --git-dir >/dev/null 2>&1 || return 1
	mkdir -p "$2" &&
		(cd "$1" && git ls-files -z -c -o --exclude-standard |
			tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -C "$2" -xf -
}

# scratch_build TREE BUILD [CONFIGURE-ARGS...]: autogen, configure and
# make -j2; the logs in BUILD/../scratch-*.log, their ends said on failure.
scratch_build() {
	local tree=$1 build=$2 logs
	shift 2
	logs=$(dirname "$build")
	mkdir -p "$build"
	if ! (cd "$tree" && ./autogen.sh >"$logs/scratch-configure.log" 2>&1) ||
		! (cd "$build" && "$tree/configure" CC="${CC:-gcc}" "$@" >>"$logs/scratch-configure.log" 2>&1 &&
			make -j2 >"$logs/scratch-make.log" 2>&1); then
		diag "$(tail -n 30 "$logs/scratch-configure.log" "$logs/scratch-make.log" 2>&1)"
		return 1
	fi
}
