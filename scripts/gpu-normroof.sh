#!/bin/sh
# gpu-normroof.sh - issue 31: torch.compile's Triton code for the norm rows
# where it reads 1-3% faster than kbench (bench/norm_triton.py), into
# $OUT/triton/*.py, and a summary of each kernel's launch (num_warps, the
# block sizes, persistent or not).  Under 120 s.
# Usage: OUT=DIR sh scripts/gpu-normroof.sh   (repo root, GPU machine)
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
timeout 110 python3 bench/norm_triton.py 2>&1 | grep -v -e UserWarning -e _warn_once | tail -20
for f in "$OUT"/triton/*.py; do
	[ -e "$f" ] || continue
	echo "== $(basename "$f")"
	grep -hoE "num_warps['\"]?[:=] ?[0-9]+|[XR]0?_?BLOCK['\"]?[:=] ?[0-9]+|R0_BLOCK ?: ?tl.constexpr|def triton_[a-z_0-9]+|grid=[^,]*" "$f" | sort -u | tr '\n' ' '
	echo
done
