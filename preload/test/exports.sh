#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What liblwm2.so exports is what its sources wrap, and the committed
# generated sources are what their generators write today.
#
# A wrapper whose name is missing from liblwm2.map is silently hidden by
# its "local: *" (the application's calls then go straight to libc); a map
# name without a definition exports nothing.  Both are caught here, from
# the built library's dynamic symbol table (nm -D) against the LWM2_EXPORT
# definitions of the sources it was built from and the map's names.
set -u
: "${LWM2_LIB:?}" "${LWM2_SRCDIR:?}"
# shellcheck source=tests/tap.sh
. "$LWM2_SRCDIR/tests/tap.sh"
pre=$LWM2_SRCDIR/preload
tmp=$(mktemp -d /tmp/lwm2-exports-XXXXXX) || bail_out "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

# ---- exports against the sources -----------------------------------------
if ! command -v nm >/dev/null; then
	skip_because "exports against the sources" "nm is not installed"
else
	# Functions the library defines and exports (T, W, i: text, weak, ifunc).
	nm -D --defined-only "$LWM2_LIB" | awk '$2 ~ /^[TWi]$/ { print $3 }' | sort -u >"$tmp/exported"
	# The LWM2_EXPORT definitions of the library's sources (LWM2_LIB_SOURCES,
	# from the Makefile, so a module left out by configure is left out
	# here), and of the .c files those include (the generated wrappers).
	: >"$tmp/files"
	for f in ${LWM2_LIB_SOURCES:-}; do
		case $f in *.c) ;; *) continue ;; esac
		echo "$pre/$f" >>"$tmp/files"
		sed -n 's/^#include "\(.*\.c\)"$/\1/p' "$pre/$f" | sed "s|^|$pre/$(dirname "$f")/|" >>"$tmp/files"
	done
	if [ ! -s "$tmp/files" ]; then
		bail_out "LWM2_LIB_SOURCES is not set: run from make check"
	fi
	# shellcheck disable=SC2046
	grep -hoE '^(__attribute__\(\(.*\)\) )?LWM2_EXPORT [^(]*[ *][A-Za-z_][A-Za-z0-9_]*\(' \
		$(sort -u "$tmp/files") | sed -E 's/.*[ *]([A-Za-z_][A-Za-z0-9_]*)\($/\1/' |
		sort -u >"$tmp/wrapped"
	n_wrapped=$(wc -l <"$tmp/wrapped")
	check "the sources define wrappers ($n_wrapped)" test "$n_wrapped" -gt 100

	hidden=$(comm -23 "$tmp/wrapped" "$tmp/exported" | tr '\n' ' ')
	is "$hidden" "" "every wrapper is exported (none hidden by liblwm2.map's local: *)"

	# The CUDA bridge (lwm2_cuda_*, which liblwm2cuda.so looks up) is
	# exported by name pattern; anything else must be a wrapper: the
	# record and rendering code linked in stays hidden.
	extra=$(comm -13 "$tmp/wrapped" "$tmp/exported" | grep -v '^lwm2_cuda_' | tr '\n' ' ')
	is "$extra" "" "every exported function outside lwm2_cuda_* is a wrapper the sources define"

	# The map's plain names (not patterns), each exported.
	perl -0pe 's|/\*.*?\*/||gs; s/#[^\n]*//g' "$pre/liblwm2.map" |
		awk '/global:/ { on = 1; next } /local:/ { on = 0 } on' | tr ';' '\n' |
		tr -d ' \t' | grep -v '^$' | grep -v '[*?]' | sort -u >"$tmp/mapped"
	ghost=$(comm -23 "$tmp/mapped" "$tmp/exported" | tr '\n' ' ')
	is "$ghost" "" "every name liblwm2.map lists is a function the library exports"
fi

# ---- the environment's names -------------------------------------------------
# The variables between the SPANK plugin (and `lwm2 run`) and the library
# are named in digest/format/lwm2_env.h only: a name spelled out elsewhere could
# drift from the other side's.
spelled=$(cd "$LWM2_SRCDIR" && grep -lE '"LWM2_[A-Z_]+' spank/*.[ch] preload/*.[ch] digest/cmd/cmd_run.c digest/cmd/run_why.c digest/util/stepenv.c | tr '\n' ' ')
is "$spelled" "" "the environment's variable names are spelled only in digest/format/lwm2_env.h"

# ---- generated sources against their generators ---------------------------
# The formatter the committed output was laid out with (Debian 12's).
fmt_major=14
if ! command -v python3 >/dev/null; then
	skip_because "generated sources are current" "python3 is not installed"
elif ! command -v clang-format >/dev/null; then
	skip_because "generated sources are current" "clang-format is not installed (the generators format their output)"
elif ! clang-format --version | grep -q "version $fmt_major\."; then
	# Another clang-format lays some lines out otherwise: the files are
	# compared only with the one they were formatted with.
	skip_because "generated sources are current" "clang-format is not version $fmt_major (the committed files' formatter)"
else
	# same GENERATOR OUTDIR FILE...: each FILE of preload/ equals the
	# generator's output in OUTDIR.
	same() {
		local gen=$1 out=$2 f
		shift 2
		for f in "$@"; do
			if cmp -s "$out/$f" "$pre/$f"; then
				ok "preload/$f is $gen's output"
			else
				not_ok "preload/$f is $gen's output"
				diag "$(diff -u "$pre/$f" "$out/$f" | head -n 20)"
			fi
		done
	}
	mkdir "$tmp/posix" "$tmp/mpi"
	if python3 "$pre/posix_gen.py" "$tmp/posix" 2>"$tmp/posix.err"; then
		same posix_gen.py "$tmp/posix" posix_wrappers.h posix_wrappers.c liblwm2.map
	else
		not_ok "posix_gen.py runs"
		diag "$(cat "$tmp/posix.err")"
	fi
	# mpi_gen.py writes into the current folder and formats there: the
	# project's style file goes along.
	cp "$LWM2_SRCDIR/.clang-format" "$tmp/mpi/"
	if (cd "$tmp/mpi" && python3 "$pre/mpi_gen.py") 2>"$tmp/mpi.err"; then
		same mpi_gen.py "$tmp/mpi" mpi_wrappers.h mpi_wrappers.c
	else
		not_ok "mpi_gen.py runs"
		diag "$(cat "$tmp/mpi.err")"
	fi
fi
done_testing
