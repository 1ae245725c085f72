#!/bin/sh
# gpu-lndiag.sh - why the LayerNorm rings sit at 39-62% of copy (issue 31,
# bench/layernorm_accounting.txt: they issue 2.5x the instructions an
# element of the RMSNorm and softmax rings, 92-168% of what the copy time
# leaves an SM, every path counted), on one GPU, from a working tree with
# the `make dist` tarball under build/dist*/ (nothing is built here), in
# under 150 s: a run, profile or memcheck that would start after BUDGET
# seconds (default 100) is listed as SKIPPED, and the table gets what is
# left of TOTAL (140).
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. `kbench profile` (sections sol, memory, compute, occupancy, stalls
#      and quick, one trial, --json) at 8192 x 50257 of 04_ring.cu and
#      layernorm_bf16_ring.cu, each plain and with OUT = 1 STATS = 1 (the
#      output loop specialised on the row's head, shifted sums for the
#      statistics), rmsnorm/04_ring.cu, 03_bulk.cu and 05_pair.cu: a row
#      each of its verdict, % of copy, DRAM, L2, L1 and SM throughput,
#      issue slots busy (smsp__issue_active), IPC, eligible warps a
#      scheduler and the three largest stall reasons;
#   2. CORRECT (`kbench run --trials 2`, with its % of copy): both rings
#      with OUT = 1 STATS = 1 at 1024 x N for N = 13, 5003, 50257, 200003
#      (f32 cluster 2, 2, 2, 8; bf16 1, 1, 1, 4);
#   3. compute-sanitizer memcheck of OUT = 1 STATS = 1: f32 at 2000 x 5003
#      and 64 x 200003, bf16 at 64 x 200003;
#   4. 04_ring.cu with OUT = 1 and with STATS = 1 alone at 8192 x 50257;
#   5. `bench/gallery.py layernorm f32,bf16 50257,200003` (the new
#      candidates beside the old kernels; GALLERY_COMPILE=0 unless set);
#   then the summary: the runs, the profile table, the gallery rows.
# What to look for: issue% near or above 50 and short_scoreboard/wait/
# long_scoreboard on the LayerNorm rings against RMSNorm's lower issue% at
# a higher DRAM% says issue-bound (the accounting); OUT = 1 STATS = 1 near
# RMSNorm's %copy says the fix was the instructions.
# Outputs: $OUT/lndiag.txt (the runs), $OUT/profiles.txt (every profile's
# counters), $OUT/gallery.txt and $OUT/gallery.jsonl, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lndiag.sh   (repo root, GPU machine)
set -u
# shellcheck disable=SC2034 # read by study_setup (gpu-gallery.sh)
START=$(date +%s)
BUDGET=${BUDGET:-100}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=30
# one, sanitize, prof, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
TOTAL=${TOTAL:-140}
study_setup # END, JOBS, the copy ceiling, DEADLINE (BUDGET on from here)
L=kernels/layernorm F="--define OUT=1 --define STATS=1"
PT=$(mktemp)

{
	echo "== 1. kbench profile, 8192 x 50257"
	prof ln-04_ring $L/04_ring.cu --define CLUSTER=2
	prof ln-04_ring-OUT-STATS $L/04_ring.cu --define CLUSTER=2 $F
	prof rms-04_ring kernels/rmsnorm/04_ring.cu --define CLUSTER=2
	prof ln-bf16_ring $L/layernorm_bf16_ring.cu --define CLUSTER=1
	prof ln-bf16_ring-OUT-STATS $L/layernorm_bf16_ring.cu --define CLUSTER=1 $F
	prof ln-03_bulk $L/03_bulk.cu --define CLUSTER=8
	prof ln-05_pair $L/05_pair.cu --define CLUSTER=2
	echo "== 2. CORRECT: OUT = 1 STATS = 1 at 1024 x N"
	for w in 13:2:1 5003:2:1 50257:2:1 200003:8:4; do
		n=${w%%:*} r=${w#*:}
		one $L/04_ring.cu 1024 "$n" --define CLUSTER="${r%:*}" $F
		one $L/layernorm_bf16_ring.cu 1024 "$n" --define CLUSTER="${r#*:}" $F
	done
	echo "== 3. memcheck"
	for spec in "04_ring 2000 5003 2" "04_ring 64 200003 8" "layernorm_bf16_ring 64 200003 4"; do
		set -- $spec
		if [ "$(date +%s)" -ge "$DEADLINE" ]; then
			echo "layernorm/$1 $F M=$2 N=$3 SKIPPED (BUDGET)" | tee -a "$SUM"
			continue
		fi
		sanitize "layernorm/$1" "$2" "$3" --define CLUSTER="$4" $F
	done
	echo "== 4. each define alone, 8192 x 50257"
	one $L/04_ring.cu 8192 50257 --define CLUSTER=2 --define OUT=1
	one $L/04_ring.cu 8192 50257 --define CLUSTER=2 --define STATS=1
} 2>&1 | tee "$OUT/lndiag.txt"

echo "== 5. bench/gallery.py layernorm f32,bf16 50257,200003 ($((END - $(date +%s))) s left)"
left=$((END - $(date +%s)))
if [ "$left" -gt 15 ]; then
	GALLERY_COMPILE=${GALLERY_COMPILE:-0} timeout "$left" python3 bench/gallery.py layernorm f32,bf16 50257,200003 2>&1 |
		grep -v '^W11' | tee "$OUT/gallery.txt"
else
	echo "table SKIPPED (TOTAL)" | tee "$OUT/gallery.txt"
fi

checks_summary cat
echo "profiles, 8192 x 50257 (label verdict %copy | DRAM% L2% L1% SM% issue% IPC eligible | L1hit% L2hit% ld-sectors/request | top stalls per issue):"
cat "$PT"
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -f "$SUM" "$PT"
