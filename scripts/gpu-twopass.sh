#!/bin/sh
# gpu-twopass.sh - issue 31: the two-pass norm kernels (the row read again
# from cache, as torch.compile's Triton does: bench/norm_triton.py) over
# their tune points (THREADS, U loads in flight in the first pass, U2
# in the second) at the power-of-two rows where torch.compile was 1-3% ahead
# (bench/gallery_h200.txt).  `kbench run` runs the spec's tune lines; the
# gallery rows beside PyTorch are gpu-farm.sh's gal-OP:DTYPE:N jobs.
# Under 300 s.  Usage: OUT=DIR sh scripts/gpu-twopass.sh   (repo root)
set -u
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc-twopass} KBENCH_NO_SESSION=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for fn in rmsnorm/05_twopass.cu:4096 rmsnorm/05_twopass.cu:8192 rmsnorm/05_twopass.cu:16384 \
	rmsnorm/rmsnorm_bf16_twopass.cu:8192 layernorm/08_twopass.cu:4096 layernorm/08_twopass.cu:8192 \
	layernorm/layernorm_bf16_twopass.cu:16384; do
	f=kernels/${fn%%:*} n=${fn#*:}
	echo "== $f N=$n"
	timeout 60 build/kbench run "$f" --arg M=32768 --arg "N=$n" --trials 1 >"$OUT/tp.txt" 2>&1
	grep -E "^CORRECT|^INCORRECT" "$OUT/tp.txt"
	sed -n '/^tune/,$p' "$OUT/tp.txt" | grep -E "CORRECT" | sort -k5 -n | head -6
	{ echo "== $f N=$n"; sed -n '/^tune/,$p' "$OUT/tp.txt"; } >>"$OUT/twopass-tune.txt"
done
