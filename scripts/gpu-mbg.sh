#!/bin/sh
# gpu-mbg.sh - issue 29 row (9), matmul + bias + GELU (tanh), bf16 4096^3,
# on wgmma: kernels/fused/matmul_bias_gelu.tile (its `//! arch sm_90a`: the
# dot as wgmma with a producer warpgroup, the epilogue on its result, the
# reference kernel taking the same 384-thread launch) and the hand
# kernels/fused/matmul_bias_gelu.cu (wgmma, persistent), each CORRECT at
# S = 4096 and 1001 (its sweep) and timed beside torch eager and
# torch.compile as bench/tile_fused.py prints its row; then the .tile on
# sm_90 (mma.sync, the lowering before) at 4096 for comparison, and what
# ptxas made of each (registers, spills, warp roles).  Builds nothing: runs
# from the repo root with the make dist tarball (build/dist*/).  About a
# minute and a half; each step on its own (one failing leaves the others).
# Output: $OUT/mbg.txt (everything), $OUT/tile-fused.jsonl (the row's
# runs), and the summary, printed last.  Usage: sh scripts/gpu-mbg.sh
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=build/kbench
LOG=$OUT/mbg.txt
: >"$LOG"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$LOG" 2>&1
date -u +%Y-%m-%dT%H:%MZ >>"$LOG"

# What ptxas made of each: registers, spills (want none), setmaxnreg 40/232.
for a in "kernels/fused/matmul_bias_gelu.tile" "kernels/fused/matmul_bias_gelu.tile --arch sm_90" \
	 "kernels/fused/matmul_bias_gelu.cu"; do
	echo "== compile $a" >>"$LOG"
	# shellcheck disable=SC2086 # the file and its flags
	timeout 30 $KB compile $a --no-cache >>"$LOG" 2>&1 || echo "compile $a: rc $?" >>"$LOG"
done

# Row (9) as bench/tile_fused.py prints it: both files' sweeps (4096, 1001),
# the hand kernel's tune points, torch eager and torch.compile.
echo "== bench/tile_fused.py matmul_bias_gelu" >>"$LOG"
timeout 110 python3 bench/tile_fused.py matmul_bias_gelu >"$OUT/row9.txt" 2>>"$LOG"
echo "tile_fused.py: rc $?" >>"$LOG"
cat "$OUT/row9.txt" >>"$LOG"

# The .tile on sm_90 (mma.sync) at 4096, the lowering this replaces.
echo "== matmul_bias_gelu.tile --arch sm_90, S = 4096" >>"$LOG"
J=$(mktemp)
timeout 45 $KB run kernels/fused/matmul_bias_gelu.tile --arch sm_90 --arg S=4096 --no-sweep --trials 1 \
	--timeout 40 --json >"$J" 2>>"$LOG"
echo "sm_90 run: rc $?" >>"$LOG"
SM90=$(python3 scripts/result_line.py "$J" 2>>"$LOG" | tr '\t' ' ')
rm -f "$J"

# A dot's whole epilogue on wgmma against its reference kernel (taking the
# 256-thread launch) at ragged sizes: f16, a bias row, tanh, a cast, a
# [BM, BN] residual load (tests/emu/gemm_epilogue.tile, BK = 64).
echo "== gemm_epilogue.tile --arch sm_90a -D BK=64" >>"$LOG"
EPI=""
for size in "M=130 N=70 K=75" "M=1000 N=1000 K=1000" "M=1 N=3 K=5"; do
	J=$(mktemp)
	# shellcheck disable=SC2046,SC2086 # one --arg each
	timeout 30 $KB run tests/emu/gemm_epilogue.tile --arch sm_90a --define BK=64 \
		$(printf -- '--arg %s ' $size) --trials 1 --timeout 25 --json >"$J" 2>>"$LOG"
	EPI="$EPI  [$size] $(python3 scripts/result_line.py "$J" 2>>"$LOG" | cut -f1)"
	rm -f "$J"
done
echo "$EPI" >>"$LOG"

{
	echo "== summary =="
	grep -E '^(kernels/fused/matmul_bias_gelu|  registers|  warp roles|  also)' "$LOG" | cut -c1-110
	grep -E '^fused kernels|^kernel |^\(9\)|^    (tile|hand):' "$OUT/row9.txt"
	echo "matmul_bias_gelu.tile --arch sm_90 (mma.sync) S=4096: $SM90 us"
	echo "gemm_epilogue.tile sm_90a BK=64:$EPI"
} | tee -a "$LOG"
