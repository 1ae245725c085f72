#!/bin/sh
# gpu-lnclu.sh - issue 31's cluster-split register LayerNorm
# (kernels/layernorm/06_cluster.cu f32, layernorm_bf16_cluster.cu bf16: a
# cluster a row, each rank's slice in registers, one DSMEM exchange of the
# shifted sums, two blocks an SM) on one GPU, from a working tree with the
# `make dist` tarball under build/dist*/ (nothing is built here), in under
# 240 s (TOTAL, default 230; runs and memchecks start before BUDGET, default
# 90, four at a time):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`, % of copy beside three other jobs)
#      at 1024 x 13, 5003, 50257, 65536, 200003, 262144 of each kernel at
#      bench/gallery.py's candidates (clu: VPT = 4 and 8, the smallest
#      cluster and the fewest warps that hold a slice; VPT = 8 also with PF
#      = 1 PRE = 1, the next wave's slices prefetched into L2 and w and b
#      into L1), 13 and 5003 (which the table leaves to the one-block
#      kernels) at CLUSTER = 2 and 16: ranks with no vector, only a head or
#      a tail; compute-sanitizer memcheck of each candidate at 16 x 50257
#      and 16 x 200003 (PF = 1 PRE = 1 at 50257);
#   2. `bench/gallery.py layernorm f32,bf16 50257,65536,131072,200003,262144`
#      (GALLERY_COMPILE=0 unless set) with what is left of TOTAL, as three
#      calls so that the rows the rings miss come first: bf16 at every
#      width, f32 at 50257 and 200003, then f32 at 65536, 131072, 262144
#      (one call takes 8-10 kbench runs a row: it would reach bf16 last);
#   then the summary: the runs and memchecks, the table rows.
# What to look for: every run CORRECT, every memcheck 0 errors; in the
# table, 06_cluster.cu / layernorm_bf16_cluster.cu the best at the seven rows
# the rings miss (H200, 2026-11-28: f32 73.8% at 8192 x 50257, 68.2% at 4096
# x 200003; bf16 65.5%, 59.6%, 84.2% at 65536, 83.3% at 131072, 80.3% at
# 262144), at or above 80% (odd) and 85% (long) of copy, the rings after `|`.
# Outputs: $OUT/lnclu.txt (every run and memcheck), $OUT/gallery.txt,
# $OUT/gallery.jsonl, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnclu.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-230}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=45 BUDGET=${BUDGET:-90}
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
study_setup # END, JOBS, the copy ceiling, DEADLINE (no run or memcheck starts after it)

# cfg C VPT THREADS: the defines of one configuration
cfg() { echo "--define CLUSTER=$1 --define VPT=$2 --define THREADS=$3"; }
PP="--define PF=1 --define PRE=1" # the prefetches (hints: the same results)
# the jobs of step 1, a line each (one or sanitize and its arguments):
# FILE then WIDTH:C:VPT:THREADS, bench/gallery.py clu(4 or 8, VPT)'s at
# 50257 and past, two of the kernel's own below
{
	for k in "06_cluster 13:2:4:416 5003:2:4:416 5003:16:4:416 50257:8:4:416 50257:4:8:416 65536:8:4:512
		65536:4:8:512 200003:16:8:416 262144:16:8:512" \
		"layernorm_bf16_cluster 13:2:4:416 5003:2:4:416 5003:16:4:416 50257:4:4:416 50257:2:8:416
		65536:4:4:512 65536:2:8:512 200003:16:4:416 200003:8:8:416 262144:16:4:512 262144:8:8:512"; do
		# shellcheck disable=SC2086 # the kernel and its widths, split on purpose
		set -- $k
		f=$1
		shift
		for w in "$@"; do
			IFS=: read -r n c v t <<EOF
$w
EOF
			echo "one kernels/layernorm/$f.cu 1024 $n $(cfg "$c" "$v" "$t")"
			case $n in 50257 | 200003) echo "sanitize layernorm/$f 16 $n $(cfg "$c" "$v" "$t")" ;; esac
			if [ "$v" = 8 ] && [ "$n" -gt 16384 ]; then
				echo "one kernels/layernorm/$f.cu 1024 $n $(cfg "$c" "$v" "$t") $PP"
				[ "$n" = 50257 ] && echo "sanitize layernorm/$f 16 $n $(cfg "$c" "$v" "$t") $PP"
			fi
		done
	done
} >"$JOBS/list"
{
	echo "== 1. CORRECT at 1024 x N and memcheck at 16 x N, four at a time"
	lanes 4 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnclu.txt"

# the table in three calls, the seven rows the rings miss first (bf16 at
# every long width, f32 at 50257 and 200003), then f32's powers of two;
# each stops at TOTAL (a call's finished kernel runs are in its jsonl)
: >"$OUT/gallery.txt"
: >"$OUT/gallery.jsonl"
for part in "bf16 50257,65536,131072,200003,262144" "f32 50257,200003" "f32 65536,131072,262144"; do
	left=$((END - $(date +%s)))
	if [ "$left" -le 20 ]; then
		echo "table layernorm $part SKIPPED (TOTAL)" | tee -a "$OUT/gallery.txt"
		continue
	fi
	echo "== 2. bench/gallery.py layernorm $part ($left s left)"
	# shellcheck disable=SC2086 # the dtype and the sizes, two arguments
	GALLERY_COMPILE=${GALLERY_COMPILE:-0} OUT=$JOBS timeout "$left" python3 bench/gallery.py layernorm $part 2>&1 |
		grep -v '^W11' | tee -a "$OUT/gallery.txt"
	cat "$JOBS/gallery.jsonl" >>"$OUT/gallery.jsonl" 2>/dev/null
	rm -f "$JOBS/gallery.jsonl"
done

checks_summary sort
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -rf "$SUM" "$JOBS"
