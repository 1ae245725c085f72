#!/bin/sh
# gpu-lnsmem.sh - issue 31's LayerNorm and RMSNorm candidates that take the
# weights off the output pass's per-row L2 path (bench/layernorm_accounting.txt:
# with OUT = 1 STATS = 1 the f32 ring is latency-bound on long_scoreboard,
# the loads of w and b every row), on one GPU, from a working tree with the
# `make dist` tarball under build/dist*/ (nothing is built here), in under
# 200 s (TOTAL, default 195):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, with its % of copy), four runs at a
#      time (four lanes, each its share in order): each new path at ragged widths (13, 5003, 50257, 200003, and
#      65536 where the WS window fills the ring exactly):
#        04_ring.cu / layernorm_bf16_ring.cu OUT = 1 STATS = 1 PF = 1 (w and b
#          a chunk ahead, the next row's first chunk's during the statistics)
#          at the ring's cluster (f32 2, 2, 2, 8; bf16 1, 1, 1, 4);
#        the same with WS = 1 (w and b in shared memory once) at gallery.py
#          ws_of()'s shapes (f32 4 x 544 threads x 7 slots, 16 at 200003;
#          bf16 2 x 544 x 7, 8 at 200003; 512 x 6 at 65536);
#        rmsnorm/04_ring.cu PF = 1 (2, 2, 2, 8); layernorm/02_registers.cu
#          VPT = 8 (16384, 5003, 13); layernorm_bf16_aligned.cu OUT = 1
#          (5003, 4099, 13, 7);
#      (their % of copy ran beside three other jobs: the table's are alone);
#   2. compute-sanitizer memcheck of each new path at one odd width (the
#      rings at 16 x 50257: several chunks a row, every head; 02_registers
#      at 16383, the aligned kernel at 5003), in the same pool;
#   3. `bench/gallery.py rmsnorm f32 50257`, then `layernorm f32,bf16` at
#      the sizes with a new candidate (16384, 5003, 50257, 65536, 131072,
#      262144, 200003; 4096 and 8192 have none: GALLERY_SIZES=all runs every
#      size), GALLERY_COMPILE=0 unless set, with what is left of TOTAL (a
#      row not reached is missing from the table; TOTAL=400 gives it room);
#   then the summary: the runs, the memchecks, the table rows.
# What to look for: every run CORRECT and every memcheck 0 errors; in the
# table, a PF or WS candidate as the best kernel at 50257..262144 at or
# above 85% of copy (80% at 50257 and 200003), VPT=8 at 32768 x 16384 and
# OUT=1 at bf16 32768 x 5003 above the 83.7% and 70.1% of
# bench/gallery_h200.txt; the others' %copy after `|` say how each fared.
# Outputs: $OUT/lnsmem.txt (every run and memcheck), $OUT/gallery.txt,
# $OUT/gallery.jsonl, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnsmem.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-195}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=60 BUDGET=${BUDGET:-90}
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
L=kernels/layernorm F="--define OUT=1 --define STATS=1"
study_setup # END, JOBS, the copy ceiling, DEADLINE (no run or memcheck starts after it)

# job CMD...: CMD (one or mem; words without spaces or quotes) queued on
# lane nj % 4, its output to a file of its own; `drain` runs the four lanes
# at once, each its jobs in order, then prints every job's output in order
nj=0
job() {
	nj=$((nj + 1))
	echo "$* >$JOBS/$(printf %03d $nj).out 2>&1" >>"$JOBS/lane.$((nj % 4))"
}
drain() {
	for l in "$JOBS"/lane.*; do
		# shellcheck disable=SC1090 # the lane's queued calls, written by job
		(. "$l") &
	done
	wait
	cat "$JOBS"/*.out 2>/dev/null
}

# mem FILE M N [kbench args...]: a memcheck, or SKIPPED past the budget
mem() {
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		echo "$* SKIPPED (BUDGET)" | tee -a "$SUM"
		return
	fi
	sanitize "$@"
}

{
	echo "== 1, 2. CORRECT at ragged widths and memcheck, four at a time"
	for w in 13:2:1 5003:2:1 50257:2:1 200003:8:4; do
		n=${w%%:*} r=${w#*:}
		job one $L/04_ring.cu 1024 "$n" --define CLUSTER="${r%:*}" $F --define PF=1
		job one $L/layernorm_bf16_ring.cu 1024 "$n" --define CLUSTER="${r#*:}" $F --define PF=1
		job one kernels/rmsnorm/04_ring.cu 1024 "$n" --define CLUSTER="${r%:*}" --define PF=1
	done
	job mem layernorm/04_ring 16 50257 --define CLUSTER=2 $F --define PF=1
	job mem layernorm/layernorm_bf16_ring 16 50257 --define CLUSTER=1 $F --define PF=1
	job mem rmsnorm/04_ring 16 50257 --define CLUSTER=2 --define PF=1
	# WS = 1: f32 CLUSTER:THREADS:NSLOT, then bf16's
	for w in 13:4:544:7:2:544:7 5003:4:544:7:2:544:7 50257:4:544:7:2:544:7 200003:16:544:7:8:544:7 \
		65536:4:512:6:2:512:6; do
		# shellcheck disable=SC2046 # the fields of w, split on purpose
		set -- $(echo "$w" | tr : ' ')
		job one $L/04_ring.cu 1024 "$1" --define CLUSTER="$2" --define WS=1 --define THREADS="$3" --define NSLOT="$4" $F
		job one $L/layernorm_bf16_ring.cu 1024 "$1" --define CLUSTER="$5" --define WS=1 --define THREADS="$6" \
			--define NSLOT="$7" $F
	done
	job mem layernorm/04_ring 16 50257 --define CLUSTER=4 --define WS=1 --define THREADS=544 --define NSLOT=7 $F
	job mem layernorm/layernorm_bf16_ring 16 50257 --define CLUSTER=2 --define WS=1 --define THREADS=544 --define NSLOT=7 $F
	for w in 4096:16384 1024:5003 1024:13; do
		job one $L/02_registers.cu "${w%:*}" "${w#*:}" --define VPT=8
	done
	for w in 4096:5003 1024:4099 1024:13 1024:7; do
		job one $L/layernorm_bf16_aligned.cu "${w%:*}" "${w#*:}" --define OUT=1
	done
	job mem layernorm/02_registers 64 16383 --define VPT=8
	job mem layernorm/layernorm_bf16_aligned 64 5003 --define OUT=1
	drain
	echo "== 1, 2. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnsmem.txt"

# table ARGS...: bench/gallery.py with what is left of TOTAL, appended
table() {
	left=$((END - $(date +%s)))
	if [ "$left" -le 20 ]; then
		echo "table $* SKIPPED (TOTAL)" | tee -a "$OUT/gallery.txt"
		return
	fi
	echo "== 3. bench/gallery.py $* ($left s left)"
	GALLERY_COMPILE=${GALLERY_COMPILE:-0} OUT=$JOBS timeout "$left" python3 bench/gallery.py "$@" 2>&1 |
		grep -v '^W11' | tee -a "$OUT/gallery.txt"
	cat "$JOBS/gallery.jsonl" >>"$OUT/gallery.jsonl" 2>/dev/null
}
: >"$OUT/gallery.txt"
: >"$OUT/gallery.jsonl"
table rmsnorm f32 50257
table layernorm f32,bf16 "${GALLERY_SIZES:-16384,5003,50257,65536,131072,262144,200003}"

checks_summary sort
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^(layernorm|rmsnorm)' "$OUT/gallery.txt" || echo "  no table rows"
rm -rf "$SUM" "$JOBS"
