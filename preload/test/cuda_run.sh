#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The CUDA module: liblwm2cuda.so is built and shaped right (exports only
# InitializeInjection, links CUPTI, not liblwm2); a program without CUDA
# never maps CUPTI; a CUDA program that finds no device runs exactly as
# without lwm2 and its record says there was no device; on a machine with
# a GPU, known transfers are counted exactly and a driver API program's
# calls, cuInit among them, with their time (skipped without one).
set -u
# shellcheck source=tests/tap.sh
. "$(dirname "$0")/../../tests/tap.sh"

: "${LWM2_LIB:?}" "${LWM2_BUILDDIR:?}" "${LWM2_SRCDIR:?}"
T=$LWM2_SRCDIR/preload/test
INJ=$(dirname "$LWM2_LIB")/liblwm2cuda.so
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_DIR/bin/nvcc}
W=$(mktemp -d "${TMPDIR:-/tmp}/lwm2-cuda.XXXXXX")
trap 'rm -rf "$W"' EXIT

# LWM2_DUMP: a dump tool built elsewhere (tests/hardware/device-run.sh).
if [ -n "${LWM2_DUMP:-}" ]; then
	cp "$LWM2_DUMP" "$W/dump"
else
	${CC:-cc} -std=gnu11 -I"$LWM2_SRCDIR/digest/format" -o "$W/dump" "$T/papi_dump.c" \
		"$LWM2_BUILDDIR/digest/.libs/liblwm2record.a" || { echo "Bail out! dump"; exit 1; }
fi
${CC:-cc} -std=gnu11 -o "$W/nocuda" "$T/cuda_nocuda.c" || { echo "Bail out! nocuda"; exit 1; }

# lwm NAME PROGRAM ARGS: under liblwm2 with the injection path, record in $W/NAME
lwm() {
	local name=$1
	shift
	rm -rf "$W/rec-$name" && mkdir -p "$W/rec-$name"
	LD_PRELOAD="$LWM2_LIB" CUDA_INJECTION64_PATH="$INJ" LWM2_DIR="$W/rec-$name" "$@" >"$W/$name.out" 2>&1
	echo $? >"$W/$name.rc"
	local f
	f=$(find "$W/rec-$name" -type f | head -n 1)
	if [ -n "$f" ]; then "$W/dump" "$f" >"$W/$name.rec" 2>&1; else : >"$W/$name.rec"; fi
}
val() { awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$W/$1.rec"; }

# -- the injection library ----------------------------------------------------
check_eval '[ -f "$INJ" ]' "liblwm2cuda.so is built"
check_eval '[ "$(nm -D --defined-only "$INJ" | awk "\$2 == \"T\" { print \$3 }")" = InitializeInjection ]' \
	"it exports InitializeInjection only"
check_eval 'readelf -d "$INJ" | grep NEEDED | grep -q libcupti' "it links CUPTI"
check_eval '! readelf -d "$INJ" | grep NEEDED | grep -q liblwm2' "it does not link liblwm2"
check_eval 'nm -D --defined-only "$LWM2_LIB" | grep -q " lwm2_cuda_api_enter$"' \
	"liblwm2.so exports the bridge"

# -- a program without CUDA -----------------------------------------------------
lwm nocuda "$W/nocuda"
# shellcheck disable=SC2034 # read inside check's quoted condition
rt_nocuda=$(val nocuda runtimes)
check_eval '[ "$(cat $W/nocuda.out)" = "libcupti 0 libcuda 0 liblwm2cuda 0" ]' \
	"a program without CUDA maps neither CUPTI nor the injection library"
check_eval '[ -z "$(val nocuda missing_cuda)" ] && [ $(( ${rt_nocuda:-0} & 8 )) -eq 0 ]' \
	"and its record claims no CUDA"

gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then gpu=1; fi
driver=0
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then driver=1; fi

if [ ! -x "$NVCC" ]; then
	skip "no nvcc: the CUDA programs"
	done_testing
	exit
fi

# -- a CUDA program without a device ---------------------------------------------
# Shared cudart, so that lwm2 can see the runtime even without a driver.
if ! "$NVCC" -cudart shared -o "$W/nodev" "$T/cuda_nodev.cu" >"$W/nvcc.log" 2>&1; then
	cat "$W/nvcc.log"
	not_ok "nvcc builds cuda_nodev.cu"
else
	"$W/nodev" >"$W/ref.out" 2>&1
	echo $? >"$W/ref.rc"
	lwm nodev "$W/nodev"
	# shellcheck disable=SC2034 # read inside check's quoted condition
	rt_nodev=$(val nodev runtimes)
	check_eval 'cmp -s "$W/ref.out" "$W/nodev.out" && cmp -s "$W/ref.rc" "$W/nodev.rc"' \
		"the CUDA program prints and exits the same under lwm2 ($(cat $W/nodev.out), $(cat $W/nodev.rc))"
	check_eval '[ $(( ${rt_nodev:-0} & 8 )) -ne 0 ]' "its record says it used CUDA"
	if [ $gpu = 1 ]; then
		skip "no-device reason (this machine has a GPU)"
	elif [ $driver = 0 ]; then
		check_eval '[ "$(val nodev missing_cuda)" = "no CUDA device (no driver)" ]' \
			"no driver: the record says no CUDA device (no driver)"
	else
		check_eval '[ "$(val nodev missing_cuda)" = "no CUDA device" ]' \
			"driver, no GPU: the record says no CUDA device ($(val nodev missing_cuda))"
	fi
fi

# -- known transfers on a GPU ---------------------------------------------------------
if [ $gpu = 0 ]; then
	skip "no GPU: exact transfer counts"
else
	if ! "$NVCC" -o "$W/xfer" "$T/cuda_transfers.cu" >"$W/nvcc.log" 2>&1; then
		cat "$W/nvcc.log"
		not_ok "nvcc builds cuda_transfers.cu"
	else
		lwm xfer "$W/xfer"
		check_eval '[ "$(cat $W/xfer.out)" = "transfers done" ] && [ "$(cat $W/xfer.rc)" = 0 ]' \
			"the transfer program runs under lwm2"
		check_eval '[ -z "$(val xfer missing_cuda)" ]' "no missing reason ($(val xfer missing_cuda))"
		check_eval '[ "$(val xfer cuda_h2d_count)" = 3 ] && [ "$(val xfer cuda_h2d_bytes)" = 3145728 ]' \
			"3 host-to-device copies, 3 MiB ($(val xfer cuda_h2d_count), $(val xfer cuda_h2d_bytes))"
		check_eval '[ "$(val xfer cuda_d2h_count)" = 2 ] && [ "$(val xfer cuda_d2h_bytes)" = 1048576 ]' \
			"2 device-to-host copies, 1 MiB ($(val xfer cuda_d2h_count), $(val xfer cuda_d2h_bytes))"
		check_eval '[ "$(val xfer cuda_other_copy_count)" = 1 ] && [ "$(val xfer cuda_other_copy_bytes)" = 65536 ]' \
			"1 device-to-device copy, 64 KiB ($(val xfer cuda_other_copy_count), $(val xfer cuda_other_copy_bytes))"
		check_eval '[ "$(val xfer cuda_calls)" -ge 14 ] && [ "$(val xfer cuda_ns)" -gt 0 ]' \
			"CUDA calls and their time counted ($(val xfer cuda_calls) calls, $(val xfer cuda_ns) ns)"
	fi
fi

# -- every kind of copy, threads, time in CUDA --------------------------------------
# cuda_kinds prints what it did ("expect NAME VALUE"); the record must say
# the same, and lwm2's time in CUDA must be near the program's own timing
# of its CUDA calls.
if ! "$NVCC" -cudart shared -o "$W/kinds" "$T/cuda_kinds.cu" >"$W/nvcc.log" 2>&1; then
	cat "$W/nvcc.log"
	not_ok "nvcc builds cuda_kinds.cu"
elif [ $gpu = 0 ]; then
	"$W/kinds" >"$W/kinds-ref.out" 2>&1
	echo $? >"$W/kinds-ref.rc"
	lwm kinds "$W/kinds"
	check_eval 'cmp -s "$W/kinds-ref.out" "$W/kinds.out" && cmp -s "$W/kinds-ref.rc" "$W/kinds.rc"' \
		"without a device the copy program fails the same way under lwm2 (rc $(cat "$W/kinds.rc"))"
	skip "no GPU: every kind of copy, 4 threads, time in CUDA"
else
	lwm kinds "$W/kinds" 4
	check_eval '[ "$(cat "$W/kinds.rc")" = 0 ] && grep -q "^own_cuda_ns " "$W/kinds.out"' \
		"the copy program runs under lwm2 (rc $(cat "$W/kinds.rc"))"
	while read -r _ key want; do
		check_eval '[ "$(val kinds "$key")" = "$want" ]' "$key: $want expected, $(val kinds "$key") counted"
	done < <(grep '^expect ' "$W/kinds.out")
	own=$(awk '$1 == "own_cuda_ns" { print $2 }' "$W/kinds.out")
	got=$(val kinds cuda_ns)
	check_eval 'awk -v a="${got:-0}" -v b="${own:-0}" "BEGIN { exit !(b > 0 && a >= b / 2 && a <= b * 3 / 2) }"' \
		"time in CUDA calls within a factor 1.5 of the program's own timing ($got ns vs $own ns)"
	echo "# managed memory: $(grep '^managed_prefetch' "$W/kinds.out"), counted as copies: h2d $(val kinds cuda_h2d_count), other $(val kinds cuda_other_copy_count)"
fi

# -- the driver API alone: cuInit counted ------------------------------------------
# The driver loads liblwm2cuda.so inside cuInit, whose exit CUPTI never
# reports; lwm2 must still count it as a call and its time.
if [ $gpu = 0 ]; then
	skip "no GPU: a driver API program's calls and time, cuInit's included"
elif ! ${CC:-cc} -std=gnu11 -I"$CUDA_DIR/include" -o "$W/driver" "$T/cuda_driver.c" \
	-L"$CUDA_DIR/lib64/stubs" -lcuda >"$W/cc-driver.log" 2>&1; then
	cat "$W/cc-driver.log"
	not_ok "cc builds cuda_driver.c"
else
	lwm driver "$W/driver"
	own=$(awk '$1 == "own_cuda_ns" { print $2 }' "$W/driver.out")
	got=$(val driver cuda_ns)
	calls=$(awk '$1 == "own_calls" { print $2 }' "$W/driver.out")
	check_eval '[ "$(cat "$W/driver.rc")" = 0 ] && [ -n "$calls" ] && [ "$(val driver cuda_calls)" = "$calls" ]' \
		"a driver API program: each of its ${calls:-?} calls counted once ($(val driver cuda_calls) counted)"
	check_eval 'awk -v a="${got:-0}" -v b="${own:-0}" "BEGIN { exit !(b > 0 && a >= b * 9 / 10 && a <= b * 11 / 10) }"' \
		"and their time within 10 % of its own timing, cuInit's included ($got ns vs $own ns)"
fi

done_testing
