#!/bin/sh
# gpu-rope.sh - issue 29's row (6), RoPE, alone, in under a minute: the
# bench/tile_fused.py row (rope.tile and the hand rope.cu, CORRECT at T =
# 1024 and 1001, beside eager and torch.compile), then rope.tile at ROWS =
# 16 and 32 heads a program (the default is 8) while time is left.  Builds
# nothing: the programs come from the make dist tarball (build/dist*/).
# Output: $OUT/rope.txt (the row), $OUT/rope-rows.txt (the ROWS points),
# $OUT/rope.err; a summary table last.  FUSED_COMPILE=0 skips torch.compile.
# Usage: scripts/gpu-rope.sh  (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 42 python3 bench/tile_fused.py rope 2>"$OUT/rope.err" | tee "$OUT/rope.txt"
echo "bench exit $? (124: cut at 42 s)"
: >"$OUT/rope-rows.txt"
for rows in 16 32; do
	[ $(($(date +%s) - t0)) -lt 47 ] || { echo "ROWS=$rows skipped: out of time" >>"$OUT/rope-rows.txt"; continue; }
	timeout 6 build/kbench run kernels/fused/rope.tile --define ROWS=$rows --no-sweep --trials 1 --json \
		2>>"$OUT/rope.err" | python3 -c "
import json, sys
try:
    j = json.load(sys.stdin); r = j.get('result', j)
    print('rope.tile ROWS=$rows  %s  %s us' % (r.get('verdict') or r.get('status'), r.get('timing', {}).get('median_us')))
except Exception as e:
    print('rope.tile ROWS=$rows  no result (%s)' % type(e).__name__)" >>"$OUT/rope-rows.txt"
done
tail -3 "$OUT/rope.err"
echo "== summary ($(($(date +%s) - t0)) s) =="
grep -E '^\(6\)|^kernel ' "$OUT/rope.txt" | cut -c1-120
cat "$OUT/rope-rows.txt"
