#!/bin/sh
# gpu-lnrows.sh - issue 31: rows a cluster, w and b read once for them all
# (layernorm/10_rows.cu, layernorm_bf16_rows.cu) against the
# gallery's best at the six LayerNorm rows under target on the H200, on one
# GPU, from a working tree with the `make dist` tarball under build/dist*/
# (nothing is built here), in under 5 minutes (TOTAL, default 280 s; no
# timed run starts after it):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`) of both files at CLUSTER 2, 4, 8
#      and 16 (the emulator runs them at CLUSTER = 1 only: here every rank's
#      slice of every row, their DSMEM pairs and the cluster barrier are
#      checked) at ROWS = 2 (VPT = 4) and 4 (VPT = 2) where a slice fits
#      768 threads, M = 300 (not a multiple of ROWS APART: clusters with
#      fewer rows, clusters with none) x N = 50257, 5003, 13, 1, and M =
#      3 (under APART) at 5003; 1 x 200003; ROWS = 1 and PRE = 1 beside
#      them; compute-sanitizer memcheck at 21 x 50257, 21 x 200003 and 37 x
#      50257 (ROWS = 4); four at a time, none started after CHECKS (default
#      75 s);
#   2. one timed run at a time (`kbench run --trials 1`: CORRECT, time, %
#      of copy) at f32 8192 x 50257, 4096 x 200003; bf16 8192 x 50257,
#      4096 x 131072, 4096 x 262144, 4096 x 200003: the gallery's best there
#      (bench/gallery_h200.txt, 17:11Z); T4 and T4P (VPT = 4, two blocks an
#      SM, ROWS = 2, PF = 0 and 1: bench/gallery.py's clu(.., 4, TWO_ROWS)),
#      T8P (VPT = 8, MINB = 1, ROWS = 2, PF = 1), Q2P (VPT = 2, ROWS = 4,
#      PF = 1, where its cluster of 4 x the best's fits 16), Q4P (VPT = 4,
#      MINB = 1, ROWS = 4, PF = 1), R1 (ROWS = 1
#      at the best's shape: the same file reading w and b for each row);
#   3. `kbench profile` (sol, memory, occupancy, stalls) of the best and
#      T4P at bf16 4096 x 200003 and f32 8192 x 50257: DRAM throughput, L2
#      hit rate, warps, stall reasons (all of it in $OUT/profiles.txt).
# Last, the table: a line a run, size, kernel and defines, us, % of copy.
# What to look for: every check CORRECT and every memcheck 0 errors; in
# the table T* against best (targets: 80% at 50257 and 200003, 85% at the
# powers of two; the ring without w and b read 90-95%) and against R1 (what
# halving or quartering the weights' L2 stream bought).
# Outputs: $OUT/lnrows.txt (every check, run and profile's lines),
# $OUT/profiles.txt, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnrows.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-280}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=60 BUDGET=${CHECKS:-75}
# one, sanitize, lanes, timed, defs, prof_at, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
study_setup # END, JOBS, the copy ceiling, DEADLINE

L=kernels/layernorm
F32=$L/10_rows.cu BF=$L/layernorm_bf16_rows.cu
# step 1's jobs, a line each (the memchecks first: the slowest)
{
	echo "sanitize layernorm/10_rows 21 50257 --define CLUSTER=8 --define VPT=4 --define THREADS=416 --define PF=1"
	echo "sanitize layernorm/layernorm_bf16_rows 21 200003 --define CLUSTER=16 --define VPT=4 --define THREADS=416 --define PF=1"
	echo "sanitize layernorm/layernorm_bf16_rows 37 50257 --define CLUSTER=8 --define VPT=2 --define THREADS=416 --define ROWS=4 --define PF=1"
	for c in 16 8 4 2; do # the gallery's clusters first (CHECKS may stop the rest)
		for n in 50257 5003 13 1; do
			for fp in "$F32 4" "$BF 8"; do
				set -- $fp
				for rv in "2 4" "4 2"; do
					rows=${rv% *} vpt=${rv#* }
					t=$(fit "$2" "$n" "$c" "$vpt")
					[ "$t" -gt 0 ] || continue
					echo "one $1 300 $n --define CLUSTER=$c --define VPT=$vpt --define THREADS=$t --define MINB=1 --define ROWS=$rows --define PF=1"
					[ "$n" != 5003 ] || echo "one $1 3 $n --define CLUSTER=$c --define VPT=$vpt --define THREADS=$t --define MINB=1 --define ROWS=$rows"
				done
			done
		done
	done
	echo "one $F32 1 200003 --define CLUSTER=16 --define VPT=8 --define THREADS=416 --define MINB=1"
	echo "one $BF 1 200003 --define CLUSTER=16 --define VPT=4 --define THREADS=416"
	echo "one $F32 300 50257 --define CLUSTER=8 --define VPT=4 --define THREADS=416 --define PRE=1"
	echo "one $BF 300 50257 --define CLUSTER=4 --define VPT=4 --define THREADS=416 --define PRE=1"
	echo "one $F32 300 50257 --define CLUSTER=4 --define VPT=8 --define THREADS=416 --define ROWS=1"
	echo "one $BF 300 50257 --define CLUSTER=2 --define VPT=8 --define THREADS=416 --define ROWS=1"
} >"$JOBS/list"
{
	echo "== 1. CORRECT at 300 x N and memcheck at 16 x N, four at a time"
	lanes 4 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnrows.txt"

RES=$(mktemp) # timed's lines
# ROW: DTYPE M N best-file best-defines T4-defines (ROWS = 2, VPT = 4) T8-defines (VPT = 8, MINB = 1) R1-defines
# Q2-defines (ROWS = 4, VPT = 2) Q4-defines (ROWS = 4, VPT = 4, MINB = 1)
ROWS="f32:8192:50257:$L/06_cluster.cu:CLUSTER=4,VPT=8,THREADS=416,PF=1:CLUSTER=8,VPT=4,THREADS=416:CLUSTER=4,VPT=8,THREADS=416,MINB=1:CLUSTER=4,VPT=8,THREADS=416,ROWS=1,PF=1:CLUSTER=16,VPT=2,THREADS=416:CLUSTER=8,VPT=4,THREADS=416,MINB=1
f32:4096:200003:$L/06_cluster.cu:CLUSTER=16,VPT=8,THREADS=416,PF=1:-:CLUSTER=16,VPT=8,THREADS=416,MINB=1:CLUSTER=16,VPT=8,THREADS=416,ROWS=1,PF=1:-:-
bf16:8192:50257:$L/layernorm_bf16_cluster.cu:CLUSTER=2,VPT=8,THREADS=416,PF=1:CLUSTER=4,VPT=4,THREADS=416:CLUSTER=2,VPT=8,THREADS=416,MINB=1:CLUSTER=2,VPT=8,THREADS=416,ROWS=1,PF=1:CLUSTER=8,VPT=2,THREADS=416:CLUSTER=4,VPT=4,THREADS=416,MINB=1
bf16:4096:131072:$L/layernorm_bf16_cluster.cu:CLUSTER=4,VPT=8,THREADS=512,PF=1:CLUSTER=8,VPT=4,THREADS=512:CLUSTER=4,VPT=8,THREADS=512,MINB=1:CLUSTER=4,VPT=8,THREADS=512,ROWS=1,PF=1:CLUSTER=16,VPT=2,THREADS=512:CLUSTER=8,VPT=4,THREADS=512,MINB=1
bf16:4096:262144:$L/layernorm_bf16_cluster.cu:CLUSTER=8,VPT=8,THREADS=512,PF=1:CLUSTER=16,VPT=4,THREADS=512:CLUSTER=8,VPT=8,THREADS=512,MINB=1:CLUSTER=8,VPT=8,THREADS=512,ROWS=1,PF=1:-:CLUSTER=16,VPT=4,THREADS=512,MINB=1
bf16:4096:200003:$L/layernorm_bf16_cluster.cu:CLUSTER=8,VPT=8,THREADS=416,PF=1:CLUSTER=16,VPT=4,THREADS=416:CLUSTER=8,VPT=8,THREADS=416,MINB=1:CLUSTER=8,VPT=8,THREADS=416,ROWS=1,PF=1:-:CLUSTER=16,VPT=4,THREADS=416,MINB=1"
{
	echo "== 2. one timed run at a time ($((END - $(date +%s))) s left)"
	echo "$ROWS" | while IFS=: read -r d m n bf bd d4 d8 d1 q2 q4; do
		if [ "$d" = f32 ]; then new=$F32; else new=$BF; fi
		# shellcheck disable=SC2046 # the defines, split on purpose
		timed best "$d" "$m" "$n" "$bf" $(defs "$bd")
		for pf in 0 1; do
			# shellcheck disable=SC2046
			[ "$d4" = - ] || timed "T4$([ $pf = 1 ] && echo P)" "$d" "$m" "$n" "$new" $(defs "$d4,ROWS=2,PF=$pf")
		done
		# shellcheck disable=SC2046
		timed T8P "$d" "$m" "$n" "$new" $(defs "$d8,ROWS=2,PF=1")
		# shellcheck disable=SC2046
		[ "$q2" = - ] || timed Q2P "$d" "$m" "$n" "$new" $(defs "$q2,ROWS=4,PF=1")
		# shellcheck disable=SC2046
		[ "$q4" = - ] || timed Q4P "$d" "$m" "$n" "$new" $(defs "$q4,ROWS=4,PF=1")
		# shellcheck disable=SC2046
		timed R1 "$d" "$m" "$n" "$new" $(defs "$d1")
	done
} 2>&1 | tee -a "$OUT/lnrows.txt"

PT=$(mktemp) # prof_at's lines
# shellcheck disable=SC2046 # the defines, split on purpose
{
	echo "== 3. profiles ($((END - $(date +%s))) s left)"
	prof_at best bf16 4096 200003 "$L/layernorm_bf16_cluster.cu" $(defs CLUSTER=8,VPT=8,THREADS=416,PF=1)
	prof_at T4P bf16 4096 200003 "$BF" $(defs CLUSTER=16,VPT=4,THREADS=416,ROWS=2,PF=1)
	prof_at best f32 8192 50257 "$L/06_cluster.cu" $(defs CLUSTER=4,VPT=8,THREADS=416,PF=1)
	prof_at T4P f32 8192 50257 "$F32" $(defs CLUSTER=8,VPT=4,THREADS=416,ROWS=2,PF=1)
	cat "$PT"
} 2>&1 | tee -a "$OUT/lnrows.txt"

{
	echo "== summary ($(($(date +%s) - START)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(wc -l <"$SUM") checks"
	grep -v ' CORRECT ' "$SUM" | sed 's/^/  NOT: /'
	grep -E 'ERROR SUMMARY: [1-9]|no summary' "$SUM" | sed 's/^/  MEMCHECK: /'
	echo "timed runs (best: the H200 gallery's pick; two rows a cluster: T4, T4P VPT = 4 two blocks an SM at PF = 0, 1;"
	echo "T8P VPT = 8 one block an SM, PF = 1; Q2P, Q4P four rows a cluster at VPT = 2 and at VPT = 4 one block an SM;"
	echo "R1 the same file at ROWS = 1, PF = 1)"
	printf '%-6s %-4s %-12s %-10s %8s %6s  %s\n' run dtype size verdict us %copy "kernel defines"
	cat "$RES"
} 2>&1 | tee -a "$OUT/lnrows.txt"
rm -rf "$SUM" "$RES" "$JOBS" "$PT"
