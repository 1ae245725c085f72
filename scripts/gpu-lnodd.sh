#!/bin/sh
# gpu-lnodd.sh - the ring LayerNorms of issue 31 (layernorm_bf16_ring.cu and
# layernorm/04_ring.cu: softmax_bf16_ring.cu's producer warp and ring of
# 16 KiB chunks) on one GPU, from a working tree with the `make dist`
# tarball under build/dist*/ (nothing is built here), in under 150 s: a
# run or memcheck that would start after BUDGET seconds (default 100) is
# listed as SKIPPED, and the table gets what is left of TOTAL (140).
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, with its % of copy): each ring at
#      1024 x N for N = 13, 5003, 50257, 65536, 200003, at the gallery's
#      cluster sizes (bf16 1, 1, 1, 1, 4; f32 2, 2, 2, 2, 8), then with the
#      weights in shared memory (WS = 1, NSLOT = 9) at the gallery's sizes
#      for it (bf16 4, 4, 4, 4, 16; f32 8, 8, 8, 8 and none at 200003);
#   2. compute-sanitizer memcheck at 2000 x 5003 (a row a chunk, 16 rows a
#      block or more: the ring wraps) and at 64 x 200003 (clusters of 4 to
#      16), with and without WS;
#   3. `bench/gallery.py layernorm f32,bf16 50257,200003`: the rings beside
#      the old kernels (03_bulk.cu, layernorm_bf16_aligned.cu) and PyTorch
#      eager (GALLERY_COMPILE=0 unless set: torch.compile's first compiles
#      do not fit);
#   then the summary: every run's line, those not CORRECT again.
# Outputs: $OUT/lnodd.txt (the runs; the tail of any not CORRECT),
# $OUT/gallery.txt and $OUT/gallery.jsonl (the table and its runs),
# $OUT/calibrate.txt (if it ran).
# Usage: OUT=DIR sh scripts/gpu-lnodd.sh   (repo root, GPU machine)
set -u
# shellcheck disable=SC2034 # read by study_setup (gpu-gallery.sh)
START=$(date +%s)
BUDGET=${BUDGET:-100}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=30
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
TOTAL=${TOTAL:-140}
study_setup # END, JOBS, the copy ceiling, DEADLINE (BUDGET on from here)
L=kernels/layernorm WS="--define WS=1 --define NSLOT=9"

{
	echo "== 1. CORRECT (1024 x N, the gallery's cluster sizes)"
	for w in 13:1:2 5003:1:2 50257:1:2 65536:1:2 200003:4:8; do
		n=${w%%:*} r=${w#*:}
		one $L/layernorm_bf16_ring.cu 1024 "$n" --define CLUSTER="${r%:*}"
		one $L/04_ring.cu 1024 "$n" --define CLUSTER="${r#*:}"
	done
	for w in 13:4:8 5003:4:8 50257:4:8 65536:4:8 200003:16:0; do
		n=${w%%:*} r=${w#*:}
		one $L/layernorm_bf16_ring.cu 1024 "$n" --define CLUSTER="${r%:*}" $WS
		[ "${r#*:}" = 0 ] || one $L/04_ring.cu 1024 "$n" --define CLUSTER="${r#*:}" $WS
	done
	echo "== 2. memcheck"
	for spec in "layernorm_bf16_ring 2000 5003 1" "04_ring 2000 5003 2" "layernorm_bf16_ring 64 200003 4" \
		"04_ring 64 200003 8" "layernorm_bf16_ring 64 200003 16 $WS" "04_ring 2000 5003 8 $WS"; do
		set -- $spec
		if [ "$(date +%s)" -ge "$DEADLINE" ]; then
			echo "layernorm/$1 M=$2 N=$3 CLUSTER=$4 SKIPPED (BUDGET)" | tee -a "$SUM"
			continue
		fi
		f=$1 m=$2 n=$3 c=$4
		shift 4
		sanitize "layernorm/$f" "$m" "$n" --define CLUSTER="$c" "$@"
	done
} 2>&1 | tee "$OUT/lnodd.txt"

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
