#!/bin/sh
# gpu-lnring4.sh - issue 31: the weights from shared memory in the LayerNorm
# rings (layernorm/07_ring.cu, layernorm_bf16_ring2.cu WS = 1: the rank's
# window of w and b loaded once a launch after the ring; bf16 WS = 2: that
# window as f32, nothing unpacked), on one GPU, from a working tree with
# the `make dist` tarball under build/dist*/ (nothing is built here), in
# under 6 minutes (TOTAL, default 320 s; the checks start before CHECKS,
# default 70 s, four at a time; no timed run starts after TOTAL):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`) of WS = 1 (both files) and WS = 2
#      (bf16) at 1024 x 1, 7, 13, 5003 (CLUSTER 1, 2 and 4: ranks with
#      nothing, with only an edge, every head); compute-sanitizer memcheck
#      at 16 x 50257 (f32 CLUSTER 4, bf16 WS = 2 CLUSTER 4) and 16 x 200003
#      (bf16 WS = 1 CLUSTER 8);
#   2. one timed run at a time (`kbench run --trials 1`, each its verdict
#      and % of copy) at the seven LayerNorm rows under target on the H200:
#      f32 8192 x 50257, 4096 x 200003, 4096 x 262144; bf16 8192 x 50257,
#      4096 x 131072, 4096 x 262144, 4096 x 200003.  First pass, at each
#      row: the gallery's best (bench/gallery_h200.txt's), softmax's ring,
#      WSa (the window, the config a row lists below); second pass: WSb
#      (another cluster or slot count), W1 (07_ring.cu / ring2 at softmax's
#      cluster, lnring3's) and W0 (the same without w and b, on a copy
#      whose spec has w = ones, b = zeros).
#   Last, the table: a line a row, % of copy of each column, and the WSa /
#   WSb configs.
# What to look for: every check CORRECT and every memcheck 0 errors; in
# the table WSa / WSb against W0 (what the window leaves of the weights'
# cost: W0 - WS, expected a few points where the smaller slots and larger
# cluster cost little) and against best (targets: 80% at 50257 and
# 200003, 85% at the powers of two; bf16 WS = 2 against WS = 1: the
# unpacking).  CLUSTER 16 is non-portable: a FAULT or "cannot launch"
# there says the GPU would not place it.
# Outputs: $OUT/lnring4.txt (every check and run), $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnring4.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-320}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=60 BUDGET=${CHECKS:-70}
# one, sanitize, lanes, timed, defs, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
study_setup # END, JOBS, the copy ceiling, DEADLINE

# W = 0's copies: the same text, w = ones and b = zeros in the spec
L=kernels/layernorm
w0_copy "$JOBS" "$L/07_ring.cu" "$L/layernorm_bf16_ring2.cu"
F32=$L/07_ring.cu BF=$L/layernorm_bf16_ring2.cu F32W0=$JOBS/07_ring_w0.cu BFW0=$JOBS/layernorm_bf16_ring2_w0.cu

# step 1's jobs, a line each (the memchecks first: the slowest)
{
	echo "sanitize layernorm/07_ring 16 50257 --define CLUSTER=4 --define NSLOT=7 --define WS=1"
	echo "sanitize layernorm/layernorm_bf16_ring2 16 50257 --define CLUSTER=4 --define NSLOT=7 --define WS=2"
	echo "sanitize layernorm/layernorm_bf16_ring2 16 200003 --define CLUSTER=8 --define NSLOT=7 --define WS=1"
	for n in 1 7 13 5003; do
		for c in 1 2 4; do
			echo "one $F32 1024 $n --define CLUSTER=$c --define WS=1"
			echo "one $BF 1024 $n --define CLUSTER=$c --define WS=1"
			echo "one $BF 1024 $n --define CLUSTER=$c --define WS=2"
		done
	done
} >"$JOBS/list"
{
	echo "== 1. CORRECT at 1024 x N and memcheck at 16 x N, four at a time"
	lanes 4 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnring4.txt"

# step 2: one timed run at a time (the library's timed: a line of RES a
# run, "KEY DTYPE MxN verdict us % file defines"), none started after END
RES=$(mktemp)
S=kernels/softmax
# ROW: DTYPE M N best-file best-defines softmax-file softmax-cluster WSa-defines WSb-defines
# (the window's smem, NSLOT x 16 KiB + WS x 32 B x (slice uint4 + CLUSTER),
# at most 225 KiB: each config's `require`)
ROWS="f32:8192:50257:$L/06_cluster.cu:CLUSTER=4,VPT=8,THREADS=416,PF=1:$S/09_ring.cu:2:WS=1,CLUSTER=4,NSLOT=7:WS=1,CLUSTER=8,NSLOT=10
f32:4096:200003:$L/06_cluster.cu:CLUSTER=16,VPT=8,THREADS=416,PF=1:$S/09_ring.cu:8:WS=1,CLUSTER=16,NSLOT=7:WS=1,CLUSTER=16,THREADS=256,NSLOT=13
f32:4096:262144:$L/04_ring.cu:CLUSTER=8,OUT=1,SUMS=1,U=4,NSLOT=7:$S/09_ring.cu:8:WS=1,CLUSTER=16,NSLOT=6:WS=1,CLUSTER=16,THREADS=256,NSLOT=10
bf16:8192:50257:$L/layernorm_bf16_cluster.cu:CLUSTER=2,VPT=8,THREADS=416,PF=1:$S/softmax_bf16_ring.cu:1:WS=2,CLUSTER=4,NSLOT=7:WS=1,CLUSTER=2,NSLOT=7
bf16:4096:131072:$L/layernorm_bf16_cluster.cu:CLUSTER=4,VPT=8,THREADS=512,PF=1:$S/softmax_bf16_ring.cu:2:WS=2,CLUSTER=8,NSLOT=6:WS=1,CLUSTER=8,NSLOT=9
bf16:4096:262144:$L/layernorm_bf16_ring.cu:CLUSTER=4,OUT=1,SUMS=1,U=4,NSLOT=7:$S/softmax_bf16_ring.cu:4:WS=2,CLUSTER=16,NSLOT=6:WS=1,CLUSTER=16,NSLOT=9
bf16:4096:200003:$L/layernorm_bf16_cluster.cu:CLUSTER=8,VPT=8,THREADS=416,PF=1:$S/softmax_bf16_ring.cu:4:WS=2,CLUSTER=16,NSLOT=7:WS=1,CLUSTER=8,NSLOT=7"
{
	echo "== 2. one timed run at a time ($((END - $(date +%s))) s left)"
	for pass in 1 2; do
		echo "$ROWS" | while IFS=: read -r d m n bf bd sf sc wa wb; do
			if [ "$d" = f32 ]; then new=$F32 w0=$F32W0; else new=$BF w0=$BFW0; fi
			# shellcheck disable=SC2046 # the defines, split on purpose
			if [ $pass = 1 ]; then
				timed best "$d" "$m" "$n" "$bf" $(defs "$bd")
				timed softmax "$d" "$m" "$n" "$sf" --define CLUSTER="$sc"
				timed WSa "$d" "$m" "$n" "$new" $(defs "$wa")
			else
				timed WSb "$d" "$m" "$n" "$new" $(defs "$wb")
				timed W1 "$d" "$m" "$n" "$new" --define CLUSTER="$sc"
				timed W0 "$d" "$m" "$n" "$w0" --define CLUSTER="$sc" --define W=0
			fi
		done
	done
} 2>&1 | tee -a "$OUT/lnring4.txt"

{
	echo "== summary ($(($(date +%s) - START)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(wc -l <"$SUM") checks"
	grep -v ' CORRECT ' "$SUM" | sed 's/^/  NOT: /'
	grep -E 'ERROR SUMMARY: [1-9]|no summary' "$SUM" | sed 's/^/  MEMCHECK: /'
	echo "timed runs not CORRECT:"
	grep -v ' CORRECT ' "$RES" | sed 's/^/  /'
	echo "% of copy (best: the H200 table's pick; softmax: its ring; WSa, WSb: the window of w and b in shared memory,"
	echo "configs below; W1: 07_ring.cu / layernorm_bf16_ring2.cu at softmax's cluster; W0: the same without w and b)"
	printf '%-4s %-12s %8s %8s %8s %8s %8s %8s\n' dtype size best softmax WSa WSb W1 W0
	echo "$ROWS" | while IFS=: read -r d m n _ _ _ _ wa wb; do
		printf '%-4s %-12s' "$d" "${m}x$n"
		for k in best softmax WSa WSb W1 W0; do
			v=$(awk -v k="$k" -v d="$d" -v s="${m}x$n" '$1 == k && $2 == d && $3 == s { print ($4 == "CORRECT" ? $6 : $4) }' "$RES")
			printf ' %8s' "${v:--}"
		done
		echo "   WSa $wa; WSb $wb"
	done
} 2>&1 | tee -a "$OUT/lnring4.txt"
rm -rf "$SUM" "$RES" "$JOBS"
