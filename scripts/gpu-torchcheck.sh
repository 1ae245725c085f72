#!/bin/sh
# gpu-torchcheck.sh - bench/torch_timing_check.py (is time_op fair to
# PyTorch: its host latency inside the span?) into $OUT/torchcheck.txt.
# Under 90 s.  Usage: OUT=DIR sh scripts/gpu-torchcheck.sh   (repo root)
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
timeout 85 python3 bench/torch_timing_check.py 2>&1 | grep -v -e UserWarning -e _warn_once | tee "$OUT/torchcheck.txt"
