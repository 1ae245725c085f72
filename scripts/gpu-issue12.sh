#!/bin/sh
# gpu-issue12.sh - issue 12's GPU figures, in two device calls that each end
# well inside the 10-minute limit:
#   part a: a first run on a GPU with no cached ceilings, every test, the
#           hot spots with a PATH that lacks the CUDA bin folder, the big
#           softmax (run and profile, warm), the TUI's save -> result latency;
#   part b: kbench vs ncu on short kernels.
# Usage: scripts/gpu-issue12.sh a|b (repo root, GPU machine, with the
# `make dist` tarball under build/dist*/).  Logs go to $OUT; a short table
# is printed last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc XDG_DATA_HOME=/tmp/kd
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
  date -u +%Y-%m-%dT%H:%MZ; cat build/COMMIT 2>/dev/null; } > "$OUT/gpu.txt"
cat "$OUT/gpu.txt"
if [ "${1:-a}" = b ]; then
	sh bench/ncu_short.sh > "$OUT/ncu_short.txt" 2>&1
	cat "$OUT/ncu_short.txt"
	exit 0
fi
s=$(date +%s%N)
build/kbench run kernels/vector_add.cu --no-sweep > "$OUT/first_run.txt" 2>&1; rc=$?
echo "first run wall $(( ($(date +%s%N) - s) / 1000000 )) ms rc $rc" >> "$OUT/first_run.txt"
env PATH=/usr/bin:/bin build/kbench profile tests/fixtures/kernels/hot_strided.cu --hot \
	--section quick > "$OUT/hot_nopath.txt" 2>&1
KBENCH_REQUIRE_GPU=1 tests/run.sh > "$OUT/tests.log" 2>&1
sh bench/big_softmax.sh 3 > "$OUT/big_softmax.txt" 2>&1
python3 bench/tui_save.py kernels/softmax.cu 11 > "$OUT/tui_save.txt" 2>&1
grep -iE "ceilings|CORRECT|wall" "$OUT/first_run.txt" | cut -c1-120
grep -A3 "Hot spots" "$OUT/hot_nopath.txt" | cut -c1-120
grep -E "^FAIL|passed" "$OUT/tests.log" | tail -8
grep -E "warm|first" "$OUT/big_softmax.txt" | cut -c1-60
tail -2 "$OUT/tui_save.txt"
