#!/bin/sh
# gpu-attnprof.sh - issue 30: why attention.tile's producer-warpgroup shape
# (-D THREADS=256: 03_fa3.cu's roles in the lowering) reads 53-69% of
# 03_fa3.cu at D = 128 where one warpgroup (the default) reads 67-84%
# (bench/attention_h200.txt, 14:23Z).  `kbench profile` of both and of
# 03_fa3.cu at D = 128, N = 8192 (B = 2, H = 16), not causal: the
# speed-of-light, compute and stall sections.  Under 200 s.
# Usage: OUT=DIR sh scripts/gpu-attnprof.sh   (repo root, dist tarball)
set -u
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc-attnprof} KBENCH_NO_SESSION=1
A="--arg N=8192 --arg B=2 --arg H=16 --arg CAUSAL=0 --trials 1 --no-sweep"
for v in "1wg:kernels/attention/attention.tile -D HD=128 --arg D=128" \
	"ws:kernels/attention/attention.tile -D HD=128 --arg D=128 -D THREADS=256" \
	"fa3:kernels/attention/03_fa3.cu -D D=128"; do
	name=${v%%:*} args=${v#*:}
	for s in sol compute stalls; do
		echo "== $name --section $s"
		# shellcheck disable=SC2086 # the words, split on purpose
		timeout 60 build/kbench profile $args $A --section "$s" 2>&1 | grep -v "^\s*$" | head -40
	done
done 2>&1 | tee "$OUT/attnprof.txt"
