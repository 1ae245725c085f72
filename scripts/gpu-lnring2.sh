#!/bin/sh
# gpu-lnring2.sh - issue 31's LayerNorm rings with RMSNorm's per-row
# protocol (SUMS = 1: one shift K a row from the producer, sums added in the
# warp, block and cluster, no Chan merge on the 15 reduction levels), with
# 32 KiB chunks (U = 4 NSLOT = 7: half the output pass's serial L2 round
# trips a row) and, f32, with one load of w and b a vector (WN = 1), on one
# GPU, from a working tree with the `make dist` tarball under build/dist*/
# (nothing is built here), in under 200 s (TOTAL, default 195; runs, memchecks and profiles
# start before BUDGET, default 100):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, % of copy beside three other jobs)
#      at 1024 x 13, 5003, 50257, 200003 of 04_ring.cu OUT = 1 SUMS = 1,
#      the same with WN = 1 and with U = 4 NSLOT = 7 (cluster 2, 2, 2, 8),
#      and layernorm_bf16_ring.cu OUT = 1 SUMS = 1, also with U = 4 NSLOT
#      = 7 (1, 1, 1, 4), with compute-sanitizer memcheck of each at 16 x
#      50257 and 16 x 200003, four jobs at a time;
#   2. `kbench profile` (sections sol, memory, occupancy, stalls, quick) at
#      8192 x 50257 of 04_ring.cu CLUSTER = 2 OUT = 1 STATS = 1 (today's,
#      62.2%), OUT = 1 SUMS = 1, the same with WN = 1 and with U = 4 NSLOT
#      = 7, and rmsnorm/04_ring.cu CLUSTER = 2 PF = 1 (85% of copy there);
#   3. `bench/gallery.py layernorm f32,bf16 50257,65536,200003`
#      (GALLERY_COMPILE=0 unless set) with what is left of TOTAL;
#   then the summary: the runs and memchecks, the profiles, the table rows.
# What to look for: every run CORRECT, every memcheck 0 errors; in the
# profiles, SUMS against OUT-STATS (62.2% of copy, long_scoreboard 4.6,
# wait 2.0, branch_resolving 0.9 a issue on 2026-11-28): %copy up with
# branch_resolving gone says the per-row merges were on the serial path;
# WN's L2% and ld sectors a request below SUMS's say the second load of w
# and b cost L2 traffic; U4 above SUMS with less long_scoreboard says the
# output pass's chunk-by-chunk L2 round trips were; in the table,
# a SUMS candidate the best at 50257..200003 at or above 85% of copy (80%
# at 50257 and 200003), the others' %copy after `|`.
# Outputs: $OUT/lnring2.txt (every run and memcheck), $OUT/profiles.txt
# (every counter), $OUT/gallery.txt, $OUT/gallery.jsonl, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnring2.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-195}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds; PROF_SECTIONS: prof's)
GALLERY_LIB=1 LIMIT=45 BUDGET=${BUDGET:-100} PROF_SECTIONS="sol memory occupancy stalls quick"
# one, sanitize, prof, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
L=kernels/layernorm S="--define OUT=1 --define SUMS=1" U4="--define U=4 --define NSLOT=7"
study_setup # END, JOBS, the copy ceiling, DEADLINE (no run or memcheck starts after it)
PT=$(mktemp)

# the jobs of step 1, a line each (one or sanitize and its arguments), then
# four lanes at once, each every fourth line in order, its output its own
{
	for w in 13:2:1 5003:2:1 50257:2:1 200003:8:4; do
		n=${w%%:*} r=${w#*:}
		for x in "" "--define WN=1" "$U4"; do
			echo "one $L/04_ring.cu 1024 $n --define CLUSTER=${r%:*} $S $x"
		done
		for x in "" "$U4"; do
			echo "one $L/layernorm_bf16_ring.cu 1024 $n --define CLUSTER=${r#*:} $S $x"
		done
	done
	for w in 50257:2:1 200003:8:4; do
		n=${w%%:*} r=${w#*:}
		for x in "" "--define WN=1" "$U4"; do
			echo "sanitize layernorm/04_ring 16 $n --define CLUSTER=${r%:*} $S $x"
		done
		for x in "" "$U4"; do
			echo "sanitize layernorm/layernorm_bf16_ring 16 $n --define CLUSTER=${r#*:} $S $x"
		done
	done
} >"$JOBS/list"
{
	echo "== 1. CORRECT at 1024 x N and memcheck at 16 x N, four at a time"
	lanes 4 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
	echo "== 2. kbench profile, 8192 x 50257"
	prof ln-OUT-STATS $L/04_ring.cu --define CLUSTER=2 --define OUT=1 --define STATS=1
	prof ln-OUT-SUMS $L/04_ring.cu --define CLUSTER=2 $S
	prof ln-OUT-SUMS-WN $L/04_ring.cu --define CLUSTER=2 $S --define WN=1
	prof ln-OUT-SUMS-U4 $L/04_ring.cu --define CLUSTER=2 $S $U4
	prof rms-04_ring-PF kernels/rmsnorm/04_ring.cu --define CLUSTER=2 --define PF=1
} 2>&1 | tee "$OUT/lnring2.txt"

left=$((END - $(date +%s)))
: >"$OUT/gallery.txt"
if [ "$left" -le 20 ]; then
	echo "table SKIPPED (TOTAL)" | tee -a "$OUT/gallery.txt"
else
	echo "== 3. bench/gallery.py layernorm f32,bf16 50257,65536,200003 ($left s left)"
	GALLERY_COMPILE=${GALLERY_COMPILE:-0} OUT=$JOBS timeout "$left" python3 bench/gallery.py layernorm f32,bf16 \
		50257,65536,200003 2>&1 | grep -v '^W11' | tee -a "$OUT/gallery.txt"
	cp "$JOBS/gallery.jsonl" "$OUT/gallery.jsonl" 2>/dev/null
fi

checks_summary sort
echo "profiles, 8192 x 50257 (label verdict %copy | DRAM% L2% L1% SM% issue% IPC eligible | L1hit% L2hit%" \
	"ld-sectors/request | top stalls a issue):"
cat "$PT"
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -rf "$SUM" "$PT" "$JOBS"
