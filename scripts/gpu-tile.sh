#!/bin/sh
# gpu-tile.sh - issue 14's GPU work (bench/tile.py) in device calls that fit
# 10 minutes: PART is correct, norms, matmul or hot (FILTER narrows norms to
# e.g. "softmax" or "bf16").  Output under $OUT/tile-PART.txt and .jsonl.
# Usage: scripts/gpu-tile.sh PART [FILTER]  (repo root, GPU machine, make
# dist tarball under build/dist*/)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 570 python3 bench/tile.py "${1:-norms}" "${2:-}" 2>&1 | grep -v '^W11' | tee "$OUT/tile-${1:-norms}.txt"
