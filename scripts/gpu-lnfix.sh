#!/bin/sh
# gpu-lnfix.sh - issue 31's two-row LayerNorms (layernorm/05_pair.cu and
# layernorm_bf16_pair.cu: each load of w and b serves two rows, so L2 moves
# 1.5 bytes for each byte from DRAM instead of 2) on one GPU, from a working
# tree with the `make dist` tarball under build/dist*/ (nothing is built
# here), in under 120 s: a run or memcheck that would start after BUDGET
# seconds (default 50) is listed as SKIPPED, and the table gets what is left
# of TOTAL (115).
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, with its % of copy): each pair
#      kernel at 1023 x N (an odd M: the last pass has one row) for N = 13,
#      5003, 50257, 200003, at the gallery's cluster sizes (bf16 1, 1, 1, 4;
#      f32 2, 2, 2, 8);
#   2. compute-sanitizer memcheck of the riskiest: 05_pair.cu CLUSTER=2 at
#      265 x 50257 (two rows fill all 26 slots, so every pass wraps the
#      ring; rows of four different heads; the last pass one row);
#   3. `bench/gallery.py layernorm f32,bf16 50257,200003` (GALLERY_COMPILE=0
#      unless set): the pair kernels beside the rings, 03_bulk.cu and the
#      aligned kernel, the fastest CORRECT one tabled;
#   then the summary: every run's line, those not CORRECT again, the table.
# Outputs: $OUT/lnfix.txt (the runs; the tail of any not CORRECT),
# $OUT/gallery.txt (the table), $OUT/calibrate.txt (if it ran).
# Usage: OUT=DIR sh scripts/gpu-lnfix.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
BUDGET=${BUDGET:-50}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=30
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
END=$((START + ${TOTAL:-115}))
L=kernels/layernorm
"$KB" devices 2>&1 | grep -q 'no measured ceilings' && timeout 40 "$KB" calibrate >"$OUT/calibrate.txt" 2>&1
"$KB" devices 2>&1 | grep -m1 -E '^ *copy' || echo "no copy ceiling: % of copy will be missing"

{
	echo "== 1. CORRECT (1023 x N, the gallery's cluster sizes)"
	for w in 13:1:2 5003:1:2 50257:1:2 200003:4:8; do
		n=${w%%:*} r=${w#*:}
		one $L/layernorm_bf16_pair.cu 1023 "$n" --define CLUSTER="${r%:*}"
		one $L/05_pair.cu 1023 "$n" --define CLUSTER="${r#*:}"
	done
	echo "== 2. memcheck"
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		echo "layernorm/05_pair M=265 N=50257 CLUSTER=2 SKIPPED (BUDGET)" | tee -a "$SUM"
	else
		sanitize layernorm/05_pair 265 50257 --define CLUSTER=2
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

echo "== summary ($(($(date +%s) - START)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(wc -l <"$SUM") runs and memchecks"
cat "$SUM"
grep -v ' CORRECT ' "$SUM" | sed 's/^/  NOT: /'
grep -E 'ERROR SUMMARY: [1-9]|no summary' "$SUM" | sed 's/^/  MEMCHECK: /'
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -f "$SUM"
