#!/bin/sh
# gpu-idle.sh - issue 24: do the kernels that read 2-3% slower under ncu
# than under kbench (the wgmma .tile GEMMs, bench/ncu_gallery_h200.txt)
# read ncu's time when kbench idles the GPU before each launch, as ncu's
# serialized replay does?  For each FILE: kbench's default (differential
# spans, 5 us idle on the GPU before the kernel) and the same program with
# 1 ms and 10 ms of idle (span programs' H: the stream waits on a host
# function) before the flush (KBENCH_TIMING_EXP, src/measure/timing.c),
# each three runs; then ncu beside kbench's default (bench/ncu_gallery.sh,
# --clock-control none --cache-control all, 15 launches).  Under 200 s.
# Output: $OUT/idle.txt, a row a run, then ncu's table.
# Usage: OUT=DIR sh scripts/gpu-idle.sh [FILE...]   (repo root, dist tarball)
set -u
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc-idle} KBENCH_NO_SESSION=1
[ $# -gt 0 ] || set -- kernels/matmul/matmul.tile kernels/fused/matmul_bias_gelu.tile kernels/gemm/04_wgmma.cu \
	kernels/fused/cross_entropy.cu
L=$OUT/idle.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%Y-%m-%dT%H:%MZ; } >"$L" 2>&1
H10=HHHHHHHHHH
printf '%-40s %-10s %10s %10s %10s\n' file idle "median us" "run 2" "run 3" | tee -a "$L"
for f in "$@"; do
	for mode in default:"" 1ms:"PHFDeFDWKe-HFDeFDWe" 10ms:"P${H10}FDeFDWKe-${H10}FDeFDWe"; do
		name=${mode%%:*} prog=${mode#*:}
		row=""
		for r in 1 2 3; do
			us=$(KBENCH_TIMING_EXP="$prog" timeout 60 build/kbench run "$f" --no-sweep --trials 1 --json 2>/dev/null |
				python3 -c 'import json,sys
try:
    j=json.load(sys.stdin); r=j.get("result",j); print("%.1f" % r["timing"]["median_us"], r.get("verdict","?")[:7])
except Exception as e: print("-", type(e).__name__)' | tr ' ' '/')
			row="$row $us"
		done
		# shellcheck disable=SC2086
		printf '%-40s %-10s %10s %10s %10s\n' "$f" "$name" $row | tee -a "$L"
	done
done
REPS=1 NCU_COUNT=15 sh bench/ncu_gallery.sh "$@" 2>&1 | tail -n $(( $# + 3 )) | tee -a "$L"
