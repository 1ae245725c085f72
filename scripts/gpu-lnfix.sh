#!/bin/sh
# gpu-lnfix.sh - issue 31's LayerNorms that take ROWS rows a pass
# (layernorm/05_pair.cu and layernorm_bf16_pair.cu: each load of w and b
# serves 2 or 4 rows, so L2 moves 1.5 or 1.25 bytes for each byte from DRAM
# instead of 2) on one GPU, from a working tree with the `make dist` tarball
# under build/dist*/ (nothing is built here), in under 120 s: a run or
# memcheck that would start after BUDGET seconds (default 55) is listed as
# SKIPPED, and the table gets what is left of TOTAL (117).
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, with its % of copy): each kernel
#      at 1023 x N (an odd M: the last pass is part empty) for N = 13, 5003,
#      50257, 200003, at the gallery's cluster sizes: ROWS = 2 (bf16 1, 1,
#      1, 4; f32 2, 2, 2, 8), then ROWS = 4 with THREADS = 480 and NSLOT = 28
#      (bf16 2, 2, 2, 8; f32 4, 4, 4, 16);
#   2. compute-sanitizer memcheck of the riskiest: 05_pair.cu ROWS = 4
#      CLUSTER = 4 at 267 x 50257 (four rows fill all 28 slots, so every
#      pass wraps the ring; rows of four different heads; the last pass has
#      3 rows);
#   3. `bench/gallery.py layernorm f32,bf16 50257,200003` (GALLERY_COMPILE=0
#      unless set): the pair kernels (ROWS = 2, 4, and 1: the ring with
#      their weight loads) beside the rings, 03_bulk.cu and the aligned
#      kernel, the fastest CORRECT one tabled;
#   then the summary: every run's line, those not CORRECT again, the table.
# Outputs: $OUT/lnfix.txt (the runs; the tail of any not CORRECT),
# $OUT/gallery.txt (the table), $OUT/calibrate.txt (if it ran).
# Usage: OUT=DIR sh scripts/gpu-lnfix.sh   (repo root, GPU machine)
set -u
# shellcheck disable=SC2034 # read by study_setup (gpu-gallery.sh)
START=$(date +%s)
BUDGET=${BUDGET:-55}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=25
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
TOTAL=${TOTAL:-117}
study_setup # END, JOBS, the copy ceiling, DEADLINE (BUDGET on from here)
L=kernels/layernorm R4="--define ROWS=4 --define THREADS=480 --define NSLOT=28"

{
	echo "== 1. CORRECT (1023 x N, the gallery's cluster sizes)"
	for w in 13:1:2 5003:1:2 50257:1:2 200003:4:8; do
		n=${w%%:*} r=${w#*:}
		one $L/layernorm_bf16_pair.cu 1023 "$n" --define CLUSTER="${r%:*}"
		one $L/05_pair.cu 1023 "$n" --define CLUSTER="${r#*:}"
	done
	for w in 13:2:4 5003:2:4 50257:2:4 200003:8:16; do
		n=${w%%:*} r=${w#*:}
		one $L/layernorm_bf16_pair.cu 1023 "$n" --define CLUSTER="${r%:*}" $R4
		one $L/05_pair.cu 1023 "$n" --define CLUSTER="${r#*:}" $R4
	done
	echo "== 2. memcheck"
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		echo "layernorm/05_pair M=267 N=50257 CLUSTER=4 $R4 SKIPPED (BUDGET)" | tee -a "$SUM"
	else
		sanitize layernorm/05_pair 267 50257 --define CLUSTER=4 $R4
	fi
} 2>&1 | tee "$OUT/lnfix.txt"

echo "== 3. bench/gallery.py layernorm f32,bf16 50257,200003 ($((END - $(date +%s))) s left)"
left=$((END - $(date +%s)))
if [ "$left" -gt 10 ]; then
	GALLERY_COMPILE=${GALLERY_COMPILE:-0} timeout "$left" python3 bench/gallery.py layernorm f32,bf16 50257,200003 2>&1 |
		grep -v '^W11' | tee "$OUT/gallery.txt"
else
	echo "table SKIPPED (TOTAL)" | tee "$OUT/gallery.txt"
fi

checks_summary cat
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -f "$SUM"
