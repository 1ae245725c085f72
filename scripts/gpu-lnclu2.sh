#!/bin/sh
# gpu-lnclu2.sh - issue 31's cluster LayerNorms, round 2: PIPE = 1
# (kernels/layernorm/06_cluster.cu f32, layernorm_bf16_cluster.cu bf16:
# WAVE persistent clusters, rows past each one's first two from a counter,
# the next row's slice loaded before this row's exchange and output) on one
# GPU, from a working tree with the `make dist` tarball under build/dist*/
# (nothing is built here), in under 170 s (TOTAL, default 165; runs and
# memchecks start before BUDGET, default 50, five at a time):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`: every timed launch checked, so a
#      counter left unreset is INCORRECT) at 1024 x 13, 5003, 50257, 200003,
#      262144 of each of bench/gallery.py's 8 PIPE = 1 candidates (piped():
#      CLUSTER, VPT, THREADS and MINB as there, WAVE = 132 / CLUSTER x
#      MINB; "no fit" at a width its ranks do not hold, the file's require
#      line: 29 runs); compute-sanitizer memcheck at 16 x 50257 and 16 x 200003 of
#      each PIPE = 1 path (f32 VPT = 8 MINB = 1, bf16 VPT = 8 MINB = 1 and
#      VPT = 4 MINB = 2) at WAVE = 3 (16 rows: 6 static, 10 from the
#      counter), and of PIPE = 0 (its loop restructured) at 50257;
#   2. `bench/gallery.py layernorm f32 50257,200003`, then `... bf16
#      50257,131072,200003,262144` (GALLERY_COMPILE=0 unless set), each
#      with what is left of TOTAL, GALLERY_SKIP leaving out the candidates
#      that lost every row on 2026-11-28 (STATS = 1, PRE = 1, VPT = 4 at
#      PIPE = 0, the rings other than U = 4 NSLOT = 7): the old best
#      (CLUSTER VPT = 8 with and without PF = 1, the ring) beside PIPE = 1;
#   then the summary: the runs and memchecks, the table rows.
# What to look for: every run CORRECT, every memcheck 0 errors; in the
# table, a PIPE=1 candidate the best at each row, at or above the targets
# (f32 50257 and 200003: 80%; bf16 50257 and 200003: 80%; bf16 131072 and
# 262144: 85%), against the old best after `|` (H200, 2026-11-28 11:10Z:
# f32 79.7%, 70.7%; bf16 75.4%, 67.0%, 83.0% (ring), 79.5%).
# Outputs: $OUT/lnclu2.txt (every run and memcheck), $OUT/gallery.txt,
# $OUT/gallery.jsonl, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnclu2.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-165}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=45 BUDGET=${BUDGET:-50}
# one, sanitize, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
study_setup # END, JOBS, the copy ceiling, DEADLINE (no run or memcheck starts after it)

# pipe PER16 N CLUSTER VPT THREADS MINB [WAVE]: the defines of a PIPE = 1
# configuration (WAVE = 132 / CLUSTER x MINB unless given), or nothing
# where its ranks do not hold a slice of N (the file's require line)
pipe() {
	[ $((($2 / $1 + $3 - 1) / $3)) -le $(($5 * $4)) ] || return 0
	echo "--define CLUSTER=$3 --define VPT=$4 --define THREADS=$5 --define MINB=$6 --define PIPE=1 --define WAVE=${7:-$((132 * $6 / $3))}"
}
# the jobs of step 1, a line each (one, sanitize or nofit and its
# arguments), the memchecks first (the slowest)
{
	for n in 50257 200003; do
		c=4 && [ $n = 200003 ] && c=16
		echo "sanitize layernorm/06_cluster 16 $n $(pipe 4 $n $c 8 416 1 3)"
		c=2 && [ $n = 200003 ] && c=8
		echo "sanitize layernorm/layernorm_bf16_cluster 16 $n $(pipe 8 $n $c 8 416 1 3)"
		c=4 && [ $n = 200003 ] && c=16
		echo "sanitize layernorm/layernorm_bf16_cluster 16 $n $(pipe 8 $n $c 4 416 2 3)"
	done
	echo "sanitize layernorm/06_cluster 16 50257 --define CLUSTER=4 --define VPT=8 --define THREADS=416 --define PF=1"
	echo "sanitize layernorm/layernorm_bf16_cluster 16 50257 --define CLUSTER=2 --define VPT=8 --define THREADS=416"
	# FILE PER16 CLUSTER VPT THREADS MINB: gallery.py's 8 piped() candidates
	for k in "06_cluster 4 4 8 416 1" "06_cluster 4 16 8 416 1" "layernorm_bf16_cluster 8 2 8 416 1" \
		"layernorm_bf16_cluster 8 4 4 416 2" "layernorm_bf16_cluster 8 4 8 512 1" \
		"layernorm_bf16_cluster 8 8 8 416 1" "layernorm_bf16_cluster 8 16 4 416 2" \
		"layernorm_bf16_cluster 8 8 8 512 1"; do
		# shellcheck disable=SC2086 # the configuration's words, split on purpose
		set -- $k
		for n in 13 5003 50257 200003 262144; do
			d=$(pipe "$2" $n "$3" "$4" "$5" "$6")
			if [ -n "$d" ]; then
				echo "one kernels/layernorm/$1.cu 1024 $n $d"
			else
				echo "nofit kernels/layernorm/$1.cu 1024 $n CLUSTER=$3 VPT=$4 THREADS=$5 MINB=$6"
			fi
		done
	done
} | awk '!seen[$0]++' >"$JOBS/list"
# nofit FILE M N DEFINES...: a width the configuration does not hold, one line to the summary
nofit() {
	_f=$1 _m=$2 _n=$3
	shift 3
	printf '%-44s %-22s %7s x %-7s %s\n' "${_f#kernels/}" "$*" "$_m" "$_n" "no fit (require)" | tee -a "$SUM"
}
{
	echo "== 1. CORRECT at 1024 x N and memcheck at 16 x N, five at a time"
	lanes 5 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnclu2.txt"

# the table in two calls, f32 then bf16; each stops at TOTAL (a call's
# finished kernel runs are in its jsonl)
: >"$OUT/gallery.txt"
: >"$OUT/gallery.jsonl"
for part in "f32 50257,200003" "bf16 50257,131072,200003,262144"; do
	left=$((END - $(date +%s)))
	if [ "$left" -le 15 ]; then
		echo "table layernorm $part SKIPPED (TOTAL)" | tee -a "$OUT/gallery.txt"
		continue
	fi
	echo "== 2. bench/gallery.py layernorm $part ($left s left)"
	# shellcheck disable=SC2086 # the dtype and the sizes, two arguments
	GALLERY_SKIP=${GALLERY_SKIP-'STATS=1|PRE=1|VPT=4 THREADS=[0-9]+$|SUMS=1$|WN=1|NSLOT=6'} \
		GALLERY_COMPILE=${GALLERY_COMPILE:-0} OUT=$JOBS timeout "$left" python3 bench/gallery.py layernorm $part 2>&1 |
		grep -v '^W11' | tee -a "$OUT/gallery.txt"
	cat "$JOBS/gallery.jsonl" >>"$OUT/gallery.jsonl" 2>/dev/null
	rm -f "$JOBS/gallery.jsonl"
done

checks_summary sort
echo "table (op dtype size best-kernel verdict us GB/s %copy | torch | others):"
grep -E '^layernorm' "$OUT/gallery.txt" || echo "  no table rows"
rm -rf "$SUM" "$JOBS"
