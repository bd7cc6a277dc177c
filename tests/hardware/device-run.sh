#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The checks that need real hardware, run on a machine with a GPU (and a
# PMU where it has one), from the repository root with a kit made by
# tests/hardware/kit.sh:
#
#   bash tests/hardware/device-run.sh [KITDIR]     (results in $OUT)
#
# Writes to $OUT: facts.txt (what the machine has), cuda.tap (every kind
# of copy counted exactly, threads, time in CUDA against the program's own
# timing), counters.tap and counters-table.txt (CPI, L1D hit ratio and
# last-level misses against perf stat, held to 5 %), torch.txt (a PyTorch
# program's copies as lwm2 counted them, where PyTorch is there).
# Nothing is installed; what the machine lacks is said in the outputs.
set -u

kit=$(cd "${1:-.hwkit}" && pwd) || exit 1
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$top/_build/hw-out}
mkdir -p "$out"
export LWM2_LIB=$kit/liblwm2.so LWM2_DUMP=$kit/dump LWM2_SRCDIR=$top LWM2_BUILDDIR=$kit
rc=0

{
	echo "commit of the kit: $(cat "$kit/commit")"
	uname -a
	ldd --version 2>&1 | head -n 1
	nvidia-smi -L 2>&1
	nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1
	"${NVCC:-nvcc}" --version 2>&1 | tail -n 1
	for t in perf papi_avail ncu nsys mpicc python3; do
		printf '%s: %s\n' "$t" "$(command -v "$t" || echo 'not installed')"
	done
	ls /sys/bus/event_source/devices/ 2>&1 | tr '\n' ' '
	echo
} >"$out/facts.txt" 2>&1

# The CUDA module: the suite's own script, which on a GPU checks every
# kind of copy exactly.
[ -x "${NVCC:-}" ] || NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export NVCC
bash "$top/preload/test/cuda_run.sh" >"$out/cuda.tap" 2>&1 || rc=1

# Counters against perf stat, strictly.
LWM2_HW_STRICT=1 LWM2_HW_OUT=$out bash "$top/preload/test/hw_counters.sh" >"$out/counters.tap" 2>&1 || rc=1

# A PyTorch program: 3 host-to-device copies of 4 MiB, 2 back.
if python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
	rec=$(mktemp -d)
	LD_PRELOAD=$LWM2_LIB CUDA_INJECTION64_PATH=$kit/liblwm2cuda.so LWM2_DIR=$rec python3 -c '
import torch
x = torch.ones(1 << 20)
for _ in range(3):
    d = x.cuda()
for _ in range(2):
    h = d.cpu()
torch.cuda.synchronize()
print("torch copies done")
' >"$out/torch.txt" 2>&1
	for f in "$rec"/*; do
		[ -f "$f" ] && "$kit/dump" "$f" | grep -E '^(cuda_|missing_cuda|runtimes)' >>"$out/torch.txt"
	done
	rm -rf "$rec"
else
	echo "no PyTorch with a GPU here" >"$out/torch.txt"
fi

grep -hE '^(not ok|ok .*SKIP)' "$out/cuda.tap" "$out/counters.tap"
echo "device-run: results in $out (rc $rc)"
exit $rc
