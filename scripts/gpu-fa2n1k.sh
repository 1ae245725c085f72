#!/bin/sh
# gpu-fa2n1k.sh - issue 30: the one row where 02_fa2.cu trailed PyTorch's
# flash backend (D = 128, N = 1024, not causal: 422.0 against 419.8 us, H200
# 11:49Z).  02_fa2.cu's tune points at that shape (BM x MT x BN, `kbench
# run` runs them), then bench/attention.py's table at D = 128, N = 1024
# (kbench's kernels beside the three SDPA backends, one process).  Under
# 150 s.  Usage: OUT=DIR sh scripts/gpu-fa2n1k.sh   (repo root, dist tarball)
set -u
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc-fa2n1k} KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 70 build/kbench run kernels/attention/02_fa2.cu --define D=128 --arg N=1024 --arg B=16 --arg H=16 \
	--trials 1 --no-sweep >"$OUT/fa2-base.txt" 2>&1
head -3 "$OUT/fa2-base.txt"
timeout 90 build/kbench run kernels/attention/02_fa2.cu --arg N=1024 --arg B=16 --arg H=16 --trials 1 \
	>"$OUT/fa2-tune.txt" 2>&1
sed -n '/^tune/,$p' "$OUT/fa2-tune.txt"
NS=1024 DS=128 BUDGET=70 timeout 80 python3 bench/attention.py table 2>&1 | grep -v Warning | head -8
