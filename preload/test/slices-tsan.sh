#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test/slices.c under ThreadSanitizer: the core objects and the test built
# with -fsanitize=thread; any data race between the counting threads and
# the heartbeat fails the run (TSan exits 66 on a report).
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"
src=${LWM2_SRCDIR:?}
cc=${CC:-cc}
tmp=$(mktemp -d /tmp/lwm2-tsan-XXXXXX) || exit 99
trap 'rm -rf "$tmp"' EXIT

case ${LWM2_SANITIZER:-no} in
*address*|*thread*) skip_all "the tree is built with -fsanitize=$LWM2_SANITIZER" ;;
esac
if ! echo 'int main(void){return 0;}' >"$tmp/t.c" ||
   ! $cc -fsanitize=thread "$tmp/t.c" -o "$tmp/t" 2>/dev/null || ! "$tmp/t"; then
	skip_all "$cc cannot build or run -fsanitize=thread programs here"
fi
p=$src/preload
if ! $cc -std=gnu11 -g -O1 -fsanitize=thread -fvisibility=hidden -DLWM2_NO_INTERPOSE \
	-I"$p" -I"$src/digest/format" -I"$src/digest/render" -I"$src/digest/util" -I"$src/tests" -I"${LWM2_BUILDDIR:?}" \
	"$p/test/slices.c" "$p/clock.c" "$p/core.c" "$p/core_lock.c" "$p/rawsys.c" "$p/elf_sym.c" \
	"$p/env.c" "$p/sanitizer.c" "$p/heartbeat.c" "$p/identity.c" "$p/modules.c" \
	"$p/container.c" "$p/process.c" "$p/rank_file.c" "$p/region.c" "$p/sampling.c" "$p/summary.c" \
	"$p/thread.c" "$p/thread_scope.c" "$p/unmeasured.c" "$p/view.c" \
	"$src/digest/format/record.c" \
	-o "$tmp/slices-tsan" -ldl -lpthread -lrt 2>"$tmp/cc.log"; then
	plan 1
	not_ok "the ThreadSanitizer build of the slice test compiles"
	sed 's/^/# /' "$tmp/cc.log"
	exit 1
fi
# Fewer adds: TSan makes each one some 20 times slower.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}" LWM2_SLICES_N=200000 \
	"$tmp/slices-tsan" 2>"$tmp/tsan.log"
rc=$?
if [ $rc -ne 0 ]; then
	echo "# exit status $rc; ThreadSanitizer said:"
	sed 's/^/# /' "$tmp/tsan.log" | head -60
	echo "Bail out! not clean under ThreadSanitizer (exit status $rc)"
	exit 1
fi
