#!/bin/sh
# gpu-lnodd2.sh - issue 31's LayerNorm rings at the odd long widths (50257,
# 200003) with each rank's slice cut into 3 whole chunks (bench/gallery.py
# fit3: THREADS = 544 x U = 4 or 352 x 6, NSLOT = 6; U = 4 NSLOT = 7 cuts
# it into 3 and a 4th of 138 or 106 vectors, a whole trip of the consumers'
# loops for 2% of the row), on one GPU, from a working tree with the `make
# dist` tarball under build/dist*/ (nothing is built here), in under 200 s
# (TOTAL, default 195; runs and memchecks start before BUDGET, default 90):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, % of copy beside three other jobs)
#      at 1024 x 13, 5003, 50257, 200003 of 04_ring.cu OUT = 1 SUMS = 1 at
#      544 x 4 and 352 x 6 (cluster 2, 2, 2, 8) and layernorm_bf16_ring.cu
#      the same (cluster 1, 1, 1, 4; 544 x 4 not at 4: it spills there),
#      and compute-sanitizer memcheck of each at 16 x 50257 and 16 x
#      200003, four jobs at a time;
#   2. `bench/gallery.py layernorm f32,bf16 50257,65536,200003`
#      (GALLERY_COMPILE=0 unless set) with what is left of TOTAL;
#   then the summary: the runs and memchecks, the table rows.
# What to look for: every run CORRECT, every memcheck 0 errors; in the
# table, a THREADS=544 or 352 candidate the best at 50257 and 200003, at or
# above 80% of copy (today's best 71.7% f32 and 65.5% bf16 at 8192 x 50257,
# 65.2% and 59.6% at 4096 x 200003, H200 2026-11-28), the others after `|`;
# 65536 unchanged (its candidates are not fit3's: a control, 89.2% / 84.2%).
# Outputs: $OUT/lnodd2.txt (every run and memcheck), $OUT/gallery.txt,
# $OUT/gallery.jsonl, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnodd2.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-195}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=45 BUDGET=${BUDGET:-90}
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
L=kernels/layernorm S="--define OUT=1 --define SUMS=1"
F4="--define THREADS=544 --define U=4 --define NSLOT=6" F6="--define THREADS=352 --define U=6 --define NSLOT=6"
study_setup # END, JOBS, the copy ceiling, DEADLINE (no run or memcheck starts after it)

# the jobs of step 1, a line each (one or sanitize and its arguments), then
# four lanes at once, each every fourth line in order, its output its own
{
	for w in 13:2:1 5003:2:1 50257:2:1 200003:8:4; do
		n=${w%%:*} r=${w#*:}
		for x in "$F4" "$F6"; do
			echo "one $L/04_ring.cu 1024 $n --define CLUSTER=${r%:*} $S $x"
		done
		[ "${r#*:}" = 1 ] && echo "one $L/layernorm_bf16_ring.cu 1024 $n --define CLUSTER=1 $S $F4"
		echo "one $L/layernorm_bf16_ring.cu 1024 $n --define CLUSTER=${r#*:} $S $F6"
	done
	for w in 50257:2:1 200003:8:4; do
		n=${w%%:*} r=${w#*:}
		for x in "$F4" "$F6"; do
			echo "sanitize layernorm/04_ring 16 $n --define CLUSTER=${r%:*} $S $x"
		done
		[ "${r#*:}" = 1 ] && echo "sanitize layernorm/layernorm_bf16_ring 16 $n --define CLUSTER=1 $S $F4"
		echo "sanitize layernorm/layernorm_bf16_ring 16 $n --define CLUSTER=${r#*:} $S $F6"
	done
} >"$JOBS/list"
{
	echo "== 1. CORRECT at 1024 x N and memcheck at 16 x N, four at a time"
	lanes 4 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnodd2.txt"

left=$((END - $(date +%s)))
: >"$OUT/gallery.txt"
if [ "$left" -le 20 ]; then
	echo "table SKIPPED (TOTAL)" | tee -a "$OUT/gallery.txt"
else
	echo "== 2. bench/gallery.py layernorm f32,bf16 50257,65536,200003 ($left s left)"
	GALLERY_COMPILE=${GALLERY_COMPILE:-0} OUT=$JOBS timeout "$left" python3 bench/gallery.py layernorm f32,bf16 \
		50257,65536,200003 2>&1 | grep -v '^W11' | tee -a "$OUT/gallery.txt"
	cp "$JOBS/gallery.jsonl" "$OUT/gallery.jsonl" 2>/dev/null
fi

checks_summary sort
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -rf "$SUM" "$JOBS"
