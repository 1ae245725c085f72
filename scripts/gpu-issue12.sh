#!/bin/sh
# gpu-issue12.sh - issue 12's GPU figures in one device call: a first run on a
# GPU with no cached ceilings, every test, the big softmax (run and profile,
# warm), the TUI's save -> result latency, kbench vs ncu on short kernels.
# Logs go to $OUT; a short table is printed last.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
tar xzf build/dist*/kbench-*.tar.gz
export XDG_CACHE_HOME=/tmp/kc XDG_DATA_HOME=/tmp/kd
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/gpu.txt"
date -u +%Y-%m-%dT%H:%MZ >> "$OUT/gpu.txt"
s=$(date +%s%N)
build/kbench run kernels/vector_add.cu --no-sweep > "$OUT/first_run.txt" 2>&1; rc=$?
echo "first run wall $(( ($(date +%s%N) - s) / 1000000 )) ms rc $rc" >> "$OUT/first_run.txt"
env PATH=/usr/bin:/bin build/kbench profile tests/fixtures/kernels/hot_strided.cu --hot --section quick > "$OUT/hot_nopath.txt" 2>&1
[ "${SKIP_TESTS:-0}" = 1 ] || KBENCH_REQUIRE_GPU=1 tests/run.sh > "$OUT/tests.log" 2>&1
sh bench/big_softmax.sh 3 > "$OUT/big_softmax.txt" 2>&1
python3 bench/tui_save.py kernels/softmax.cu 11 > "$OUT/tui_save.txt" 2>&1
[ "${SKIP_NCU:-0}" = 1 ] || sh bench/ncu_short.sh > "$OUT/ncu_short.txt" 2>&1
cat "$OUT/gpu.txt"
grep -iE "calibrat|CORRECT|time  |wall" "$OUT/first_run.txt"
grep -iE "nvdisasm|line|stalls" "$OUT/hot_nopath.txt" | head -5
grep -E "^FAIL|passed" "$OUT/tests.log" 2>/dev/null | tail -8
grep -E "warm|first" "$OUT/big_softmax.txt" | cut -c1-110
tail -2 "$OUT/tui_save.txt"
cat "$OUT/ncu_short.txt" 2>/dev/null | cut -c1-80
