#!/bin/sh
# gpu-bench.sh - the GPU benchmarks whose output is committed under bench/:
# compile speed with nvdisasm present, warm-runner latency, kbench vs ncu.
# Run after scripts/gpu-check.sh (same checkout, same unpacked build).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp}
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kbench-cache}
bench/compile_speed.sh 20 > "$OUT/compile_speed_gpu.txt" 2>&1
python3 bench/serve_latency.py 10 > "$OUT/serve_latency.txt" 2>&1
sh bench/ncu_compare.sh > "$OUT/ncu_compare.txt" 2>&1
cat "$OUT/compile_speed_gpu.txt" "$OUT/serve_latency.txt" "$OUT/ncu_compare.txt"
# How long the disassemblers take on the softmax cubin, by option.
for o in "-c" "-c -g" "-c -gi"; do
	s=$(date +%s%N); nvdisasm $o tests/fixtures/cubin/softmax.cubin > /dev/null; e=$(date +%s%N)
	echo "nvdisasm $o: $(( (e - s) / 1000000 )) ms"
done
s=$(date +%s%N); cuobjdump -sass tests/fixtures/cubin/softmax.cubin > /dev/null; e=$(date +%s%N)
echo "cuobjdump -sass: $(( (e - s) / 1000000 )) ms"
