#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Put what tests/hardware/device-run.sh needs into one folder, built here
# from a configured build tree, for a machine that cannot build lwm2
# itself (no Slurm, json-c or munge headers there):
#
#   tests/hardware/kit.sh BUILDDIR [KITDIR]      (KITDIR default .hwkit)
#
# The kit holds liblwm2.so, liblwm2cuda.so and the record dump tool; the
# test programs are built on the machine itself from the source tree.
set -euo pipefail

build=${1:?usage: kit.sh BUILDDIR [KITDIR]}
kit=${2:-.hwkit}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)

for f in preload/.libs/liblwm2.so digest/.libs/liblwm2record.a; do
	[ -f "$build/$f" ] || { echo "kit: $build/$f missing: build first" >&2; exit 1; }
done
rm -rf "$kit"
mkdir -p "$kit"
cp -L "$build/preload/.libs/liblwm2.so" "$kit/"
if [ -f "$build/preload/.libs/liblwm2cuda.so" ]; then
	cp -L "$build/preload/.libs/liblwm2cuda.so" "$kit/"
else
	echo "kit: no liblwm2cuda.so (built without CUPTI): the CUDA checks will fail" >&2
fi
${CC:-cc} -std=gnu11 -O2 -I"$top/digest/format" -o "$kit/dump" "$top/preload/test/papi_dump.c" \
	"$build/digest/.libs/liblwm2record.a"
git -C "$top" rev-parse HEAD >"$kit/commit" 2>/dev/null || echo unknown >"$kit/commit"
echo "kit: $(cd "$kit" && pwd): $(ls "$kit" | tr '\n' ' ')"
