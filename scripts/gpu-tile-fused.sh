#!/bin/sh
# gpu-tile-fused.sh - issue 29's table (bench/tile_fused.py): the nine
# kernels of kernels/fused/, .tile and hand .cu, CORRECT at every swept size
# and timed beside PyTorch eager and torch.compile in one run.  Builds
# nothing: the programs come from the make dist tarball (build/dist*/).
# Output: $OUT/tile-fused.txt (the table, printed last) and
# $OUT/tile-fused.jsonl.  A kernel that fails is a row saying so; the
# others still run.  FILTER keeps the kernels whose name contains it
# (e.g. "matmul"); FUSED_COMPILE=0 skips torch.compile.
# Usage: scripts/gpu-tile-fused.sh [FILTER]  (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc} KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 460 python3 bench/tile_fused.py "${1:-}" 2>"$OUT/tile-fused.err" | tee "$OUT/tile-fused.txt"
echo "exit $? (124: the 460 s limit; rows printed above are complete)"
tail -5 "$OUT/tile-fused.err"
echo "== summary =="
grep -E '^\(|^kernel ' "$OUT/tile-fused.txt" | cut -c1-120
