#!/bin/sh
# gpu-lnres.sh - issue 31: the persistent LayerNorm kernels with w and b
# resident in shared memory (layernorm/09_resident.cu,
# layernorm_bf16_resident.cu) against the gallery's best at the seven
# LayerNorm rows under target on the H200, on one GPU, from a working tree
# with the `make dist` tarball under build/dist*/ (nothing is built here),
# in under 5 minutes (TOTAL, default 280 s; no timed run starts after it):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. CORRECT (`kbench run --trials 2`) of both files at CLUSTER 2, 4, 8
#      and 16 (the emulator runs them at CLUSTER = 1 only: here every rank's
#      slice, the DSMEM pairs and the cluster barrier are checked) at
#      M = 300 (more rows than clusters: the row counter) x N = 1, 7, 13,
#      5003, 50257 and 1 x 200003 (fewer rows than clusters), NB = 3 and
#      PF = 1, 2 at N = 13, 5003, 50257; compute-sanitizer memcheck at
#      16 x 50257 and 16 x 200003; four at a time, none started after
#      CHECKS (default 75 s);
#   2. one timed run at a time (`kbench run --trials 1`: CORRECT, time, %
#      of copy) at f32 8192 x 50257, 4096 x 200003, 4096 x 262144; bf16
#      8192 x 50257, 4096 x 131072, 4096 x 262144, 4096 x 200003: the
#      gallery's best there (bench/gallery_h200.txt); resident A0, A1, A2
#      (VPT = 8, one block an SM: bench/gallery.py's resident(.., 8, 1),
#      at PF = 0, 1, 2: that many rows ahead prefetched into L2); N30, N31
#      (NB = 3: two rows in flight in registers, 384 threads, PF = 0, 1);
#      B1 (VPT = 4, two blocks an SM, PF = 1, where it fits);
#   3. `kbench profile` (sol, memory, occupancy, stalls) of the best, A0,
#      A2 and N30 at bf16 4096 x 200003: DRAM throughput, L2 hit rate,
#      warps, stall reasons (all of it in $OUT/profiles.txt).
# Last, the table: a line a run, size, kernel and defines, us, % of copy.
# What to look for: every check CORRECT and every memcheck 0 errors; in
# the table A*, N3*, B1 against best (targets: 80% at 50257 and 200003, 85% at
# the powers of two; the ring without w and b read 90-95%).  A FAULT or
# "cannot launch" at CLUSTER = 16 says the GPU would not place it.
# Outputs: $OUT/lnres.txt (every check, run and profile's lines),
# $OUT/profiles.txt, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnres.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-280}
# shellcheck disable=SC2034 # read by gpu-gallery.sh (LIMIT: a memcheck's seconds)
GALLERY_LIB=1 LIMIT=60 BUDGET=${CHECKS:-75}
# one, sanitize, lanes, timed, defs, prof_at, and the setup: cd to the root, the tarball, OUT, KB, SUM, DEADLINE
. "$(dirname "$0")/gpu-gallery.sh"
study_setup # END, JOBS, the copy ceiling, DEADLINE

L=kernels/layernorm
F32=$L/09_resident.cu BF=$L/layernorm_bf16_resident.cu
# step 1's jobs, a line each (the memchecks first: the slowest)
{
	echo "sanitize layernorm/09_resident 16 50257 --define CLUSTER=4 --define VPT=8 --define THREADS=416 --define MINB=1"
	echo "sanitize layernorm/layernorm_bf16_resident 16 200003 --define CLUSTER=16 --define VPT=4 --define THREADS=416"
	for c in 2 4 8 16; do
		t=$((c == 2 ? 1024 : 512)) # a slice of 50257 in registers
		for n in 1 7 13 5003 50257; do
			echo "one $F32 300 $n --define CLUSTER=$c --define VPT=8 --define THREADS=$t --define MINB=1"
			echo "one $BF 300 $n --define CLUSTER=$c --define VPT=8 --define THREADS=$t --define MINB=1"
		done
	done
	echo "one $F32 1 200003 --define CLUSTER=16 --define VPT=8 --define THREADS=416 --define MINB=1"
	echo "one $BF 1 200003 --define CLUSTER=16 --define VPT=4 --define THREADS=416"
	echo "one $F32 300 50257 --define CLUSTER=8"
	echo "one $BF 300 50257 --define CLUSTER=4"
	# NB = 3 (two rows in flight in registers) and PF = 1, 2 (rows into L2)
	for c in 2 4 8 16; do
		for n in 13 5003 50257; do
			echo "one $F32 300 $n --define CLUSTER=$c --define VPT=9 --define THREADS=384 --define MINB=1 --define NB=3 --define PF=1"
			echo "one $BF 300 $n --define CLUSTER=$c --define VPT=9 --define THREADS=384 --define MINB=1 --define NB=3 --define PF=2"
		done
	done
	echo "one $F32 300 50257 --define CLUSTER=16 --define VPT=8 --define THREADS=416 --define MINB=1 --define PF=2"
	echo "one $BF 300 5003 --define CLUSTER=4 --define PF=1"
	echo "sanitize layernorm/layernorm_bf16_resident 16 50257 --define CLUSTER=2 --define VPT=9 --define THREADS=384 --define MINB=1 --define NB=3 --define PF=2"
} >"$JOBS/list"
{
	echo "== 1. CORRECT at 300 x N and memcheck at 16 x N, four at a time"
	lanes 4 "$JOBS/list" "$JOBS"
	cat "$JOBS"/lane.*
	echo "== 1. done ($(($(date +%s) - START)) s)"
} 2>&1 | tee "$OUT/lnres.txt"

RES=$(mktemp) # timed's lines
# ROW: DTYPE M N best-file best-defines A-defines N3-defines B-defines (- where none fits)
ROWS="f32:8192:50257:$L/06_cluster.cu:CLUSTER=4,VPT=8,THREADS=416,PF=1:CLUSTER=4,VPT=8,THREADS=416,MINB=1:CLUSTER=4,VPT=9,THREADS=384,MINB=1,NB=3:CLUSTER=8,VPT=4,THREADS=416,MINB=2
f32:4096:200003:$L/06_cluster.cu:CLUSTER=16,VPT=8,THREADS=416,PF=1:CLUSTER=16,VPT=8,THREADS=416,MINB=1:CLUSTER=16,VPT=9,THREADS=384,MINB=1,NB=3:-
f32:4096:262144:$L/04_ring.cu:CLUSTER=8,OUT=1,SUMS=1,U=4,NSLOT=7:CLUSTER=16,VPT=8,THREADS=512,MINB=1:-:-
bf16:8192:50257:$L/layernorm_bf16_cluster.cu:CLUSTER=2,VPT=8,THREADS=416,PF=1:CLUSTER=2,VPT=8,THREADS=416,MINB=1:CLUSTER=2,VPT=9,THREADS=384,MINB=1,NB=3:CLUSTER=4,VPT=4,THREADS=416,MINB=2
bf16:4096:131072:$L/layernorm_bf16_cluster.cu:CLUSTER=4,VPT=8,THREADS=512,PF=1:CLUSTER=4,VPT=8,THREADS=512,MINB=1:CLUSTER=8,VPT=8,THREADS=256,MINB=1,NB=3:-
bf16:4096:262144:$L/layernorm_bf16_ring.cu:CLUSTER=4,OUT=1,SUMS=1,U=4,NSLOT=7:CLUSTER=8,VPT=8,THREADS=512,MINB=1:CLUSTER=16,VPT=8,THREADS=256,MINB=1,NB=3:-
bf16:4096:200003:$L/layernorm_bf16_cluster.cu:CLUSTER=8,VPT=8,THREADS=416,PF=1:CLUSTER=8,VPT=8,THREADS=416,MINB=1:CLUSTER=8,VPT=9,THREADS=384,MINB=1,NB=3:CLUSTER=16,VPT=4,THREADS=416,MINB=2"
{
	echo "== 2. one timed run at a time ($((END - $(date +%s))) s left)"
	echo "$ROWS" | while IFS=: read -r d m n bf bd da d3 db; do
		if [ "$d" = f32 ]; then new=$F32; else new=$BF; fi
		# shellcheck disable=SC2046 # the defines, split on purpose
		timed best "$d" "$m" "$n" "$bf" $(defs "$bd")
		for pf in 0 1 2; do
			# shellcheck disable=SC2046
			timed "A$pf" "$d" "$m" "$n" "$new" $(defs "$da,PF=$pf")
		done
		for pf in 0 1; do
			# shellcheck disable=SC2046
			[ "$d3" = - ] || timed "N3$pf" "$d" "$m" "$n" "$new" $(defs "$d3,PF=$pf")
		done
		# shellcheck disable=SC2046
		[ "$db" = - ] || timed B1 "$d" "$m" "$n" "$new" $(defs "$db,PF=1")
	done
} 2>&1 | tee -a "$OUT/lnres.txt"

PT=$(mktemp) # prof_at's lines
# shellcheck disable=SC2046 # the defines, split on purpose
{
	echo "== 3. profiles at bf16 4096 x 200003 ($((END - $(date +%s))) s left)"
	prof_at best bf16 4096 200003 "$L/layernorm_bf16_cluster.cu" $(defs CLUSTER=8,VPT=8,THREADS=416,PF=1)
	prof_at A0 bf16 4096 200003 "$BF" $(defs CLUSTER=8,VPT=8,THREADS=416,MINB=1)
	prof_at A2 bf16 4096 200003 "$BF" $(defs CLUSTER=8,VPT=8,THREADS=416,MINB=1,PF=2)
	prof_at N30 bf16 4096 200003 "$BF" $(defs CLUSTER=8,VPT=9,THREADS=384,MINB=1,NB=3)
	cat "$PT"
} 2>&1 | tee -a "$OUT/lnres.txt"

{
	echo "== summary ($(($(date +%s) - START)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(wc -l <"$SUM") checks"
	grep -v ' CORRECT ' "$SUM" | sed 's/^/  NOT: /'
	grep -E 'ERROR SUMMARY: [1-9]|no summary' "$SUM" | sed 's/^/  MEMCHECK: /'
	echo "timed runs (best: the H200 gallery's pick; the resident kernels: A0..A2 VPT = 8 one block an SM at PF = 0..2"
	echo "(rows prefetched into L2), N30, N31 NB = 3 (two rows in flight in registers) at PF = 0, 1, B1 two blocks an SM, PF = 1)"
	printf '%-6s %-4s %-12s %-10s %8s %6s  %s\n' run dtype size verdict us %copy "kernel defines"
	cat "$RES"
} 2>&1 | tee -a "$OUT/lnres.txt"
rm -rf "$SUM" "$RES" "$JOBS" "$PT"
