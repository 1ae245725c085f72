#!/bin/sh
# gpu-colsum.sh - issue 29's row (7): kernels/fused/colsum.tile and its hand
# colsum.cu over their tune points (ROWS, RB rows a step, BLOCK: `kbench
# run` runs the spec's tune lines), then bench/tile_fused.py's row (7)
# beside PyTorch eager and torch.compile.  Under 200 s.
# Usage: OUT=DIR sh scripts/gpu-colsum.sh   (repo root, dist tarball)
set -u
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc-colsum} KBENCH_NO_SESSION=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for f in kernels/fused/colsum.tile kernels/fused/colsum.cu; do
	echo "== $f"
	timeout 80 build/kbench run "$f" --trials 1 2>&1 | tail -30 | tee "$OUT/$(basename "$f").txt"
done
timeout 100 sh scripts/gpu-tile-fused.sh colsum 2>&1 | tail -4
