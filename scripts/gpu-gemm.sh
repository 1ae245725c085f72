#!/bin/sh
# gpu-gemm.sh - issue 15's GPU figures (bench/gemm.py): kernels/gemm's steps
# and matmul.tile at 4096^3 and 8192^3, 03_pipeline.cu's sweep and tune
# points, beside torch.matmul (cuBLAS) timed in the same run.  Finishes in
# under 8 minutes (bench/gemm.py's BUDGET, and a timeout behind it).
# Output under $OUT/gemm.txt and $OUT/gemm.jsonl.
# Usage: scripts/gpu-gemm.sh  (repo root, GPU machine, make dist tarball
# under build/dist*/)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
timeout 460 python3 bench/gemm.py 2>&1 | grep -v '^W11' | tee "$OUT/gemm.txt"
