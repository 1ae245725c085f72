#!/bin/sh
# gpu-lnl2.sh - issue 31: what holds the two 4096 x 200003 LayerNorm rows
# under 80% of copy on the H200, on one GPU, from a working tree with the
# `make dist` tarball under build/dist*/ (nothing is built here), in about
# 5 minutes (TOTAL, default 290 s; no timed run starts after it):
#   0. the copy ceiling every % is of (`kbench calibrate`), where this GPU
#      has none cached;
#   1. one timed run at a time (`kbench run --trials 1`: CORRECT, time, %
#      of copy) of the rings of layernorm/07_ring.cu (f32) and
#      layernorm_bf16_ring2.cu (bf16): W0 (no w or b, on a copy whose spec
#      has w = ones, b = zeros) and WS = 1 (w and b from a window in shared
#      memory) at the same cluster and ring, so the window's cost is read
#      apart from the smaller ring and larger cluster it needs (lnring4
#      timed W0 only at softmax's cluster and 13 slots); U = 1 (8 KiB
#      chunks: twice the slots in the same bytes); the gallery's best (the
#      cluster kernels with the window, XA = 1) beside them;
#   2. Nsight Compute's breakdown of lts__throughput and dram__throughput
#      (each sub-unit as % of its peak) at 1024 x 200003 bf16 for the
#      gallery's best, the ring with the window, W0 and softmax's ring: which
#      part of the L2 is the 84-88% that `kbench profile` reports;
#   3. the SASS instruction mix of the gallery's best (kbench compile).
# What to look for: W0 against WS at one shape (the window's own cost) and
# against W0 at softmax's shape (the shape's); the breakdown's top lines.
# Outputs: $OUT/lnl2.txt, $OUT/ncu.*.csv, $OUT/calibrate.txt.
# Usage: OUT=DIR sh scripts/gpu-lnl2.sh   (repo root, GPU machine)
set -u
START=$(date +%s)
TOTAL=${TOTAL:-290}
# shellcheck disable=SC2034 # read by gpu-gallery.sh
GALLERY_LIB=1 LIMIT=60 BUDGET=${CHECKS:-60}
# timed, defs, study_setup, and the setup: cd to the root, the tarball, OUT, KB
. "$(dirname "$0")/gpu-gallery.sh"
study_setup # END, JOBS, the copy ceiling

# SET=4..7 timed options since taken out of the kernels (EDGE, XW, ONE, UNP
# in the aligned kernel), each beside the kernel without it, after its
# checks at clusters 16, 8, 2 (SET=4, 5) or at the bf16 32768 x 5003 row
# (SET=6, 7): a -D for an option the file no longer has is silently ignored,
# so run those from the commit that has them (their records:
# bench/layernorm_wsm_h200.txt, twelfth run)
case ${SET:-1} in
4) echo "SET=4 times EDGE = 1, taken out: run it at f51c91f"; exit 2 ;;
5) echo "SET=5 times XW = 1, taken out: run it at 0d750ca"; exit 2 ;;
6) echo "SET=6 times ONE = 1, taken out: run it at 89e0e31"; exit 2 ;;
7) echo "SET=7 times UNP in layernorm_bf16_aligned.cu, taken out (and UNP = 1 is the cluster kernel's default): run it at fb6c416"; exit 2 ;;
esac

L=kernels/layernorm
w0_copy "$JOBS" "$L/07_ring.cu" "$L/layernorm_bf16_ring2.cu"
F32=$L/07_ring.cu BF=$L/layernorm_bf16_ring2.cu F32W0=$JOBS/07_ring_w0.cu BFW0=$JOBS/layernorm_bf16_ring2_w0.cu
WS=PIPE=1,WSM=1,WAVE=0,LOOK=0
BESTF="$L/06_cluster.cu CLUSTER=16,VPT=8,THREADS=416,MINB=2,PF=1,PFB=1,XA=1,$WS"
BESTB="$L/layernorm_bf16_cluster.cu CLUSTER=8,VPT=8,THREADS=416,MINB=2,PF=1,PFB=1,XA=1,$WS"

RES=$(mktemp)
# RUNS: LABEL DTYPE FILE DEFINES, a line each, at 4096 x 200003, or LABEL
# DTYPE MxN FILE DEFINES.  SET=1 (the first call, 01:00Z): the rings and
# the breakdowns; SET=2 (the second): the window kernels' slice cut to fit
# (VPT = 7: 448 x 7 uint4 for the 3126 of a rank, no spill in f32; bf16 at
# 16 ranks, 224 x 7 and four blocks an SM, or 416 x 4 and three), the
# prefetch off (PFB = 0: a prefetch a line; PF = 0: none), and the bf16
# 32768 x 5003 row's kernel at each VPT, no breakdowns
X="PF=1,PFB=1,XA=1,$WS" A=$L/layernorm_bf16_aligned.cu
[ "${SET:-1}" = 1 ] || NCU_ON=0
[ "${SET:-1}" = 1 ] || RUNS="best f32 $BESTF
V7 f32 $L/06_cluster.cu CLUSTER=16,VPT=7,THREADS=448,MINB=2,$X
PL f32 $L/06_cluster.cu CLUSTER=16,VPT=8,THREADS=416,MINB=2,PF=1,XA=1,$WS
best bf16 $BESTB
V7 bf16 $L/layernorm_bf16_cluster.cu CLUSTER=8,VPT=7,THREADS=448,MINB=2,$X
V7m4 bf16 $L/layernorm_bf16_cluster.cu CLUSTER=16,VPT=7,THREADS=224,MINB=4,$X
V4m3 bf16 $L/layernorm_bf16_cluster.cu CLUSTER=16,VPT=4,THREADS=416,MINB=3,$X
PL bf16 $L/layernorm_bf16_cluster.cu CLUSTER=8,VPT=8,THREADS=416,MINB=2,PF=1,XA=1,$WS
P0 bf16 $L/layernorm_bf16_cluster.cu CLUSTER=8,VPT=8,THREADS=416,MINB=2,XA=1,$WS
best bf16 32768x5003 $A VPT=4,OUT=1
V2 bf16 32768x5003 $A VPT=2,OUT=1
V8 bf16 32768x5003 $A VPT=8,OUT=1
best bf16 32768x5003 $A VPT=4,OUT=1"
# SET=3: FZ = 1 (bf16: (x - mean) * rstd as one fma) at each bf16 row the
# cluster kernel leads, beside the same without it, and V7 again
B=$L/layernorm_bf16_cluster.cu
[ "${SET:-1}" != 3 ] || RUNS="best bf16 $BESTB
FZ bf16 $B CLUSTER=8,VPT=8,THREADS=416,MINB=2,FZ=1,$X
V7 bf16 $B CLUSTER=8,VPT=7,THREADS=448,MINB=2,$X
V7FZ bf16 $B CLUSTER=8,VPT=7,THREADS=448,MINB=2,FZ=1,$X
best bf16 8192x50257 $B CLUSTER=2,VPT=8,THREADS=416,PF=1,PFB=1,XA=1
FZ bf16 8192x50257 $B CLUSTER=2,VPT=8,THREADS=416,PF=1,PFB=1,XA=1,FZ=1
best bf16 4096x131072 $B CLUSTER=8,VPT=8,THREADS=256,PF=1,PFB=1,XA=1,MINB=4
FZ bf16 4096x131072 $B CLUSTER=8,VPT=8,THREADS=256,PF=1,PFB=1,XA=1,MINB=4,FZ=1
best bf16 4096x262144 $B CLUSTER=8,VPT=8,THREADS=512,PF=1,PFB=1,XA=1
FZ bf16 4096x262144 $B CLUSTER=8,VPT=8,THREADS=512,PF=1,PFB=1,XA=1,FZ=1
best f32 $BESTF
V7 f32 $L/06_cluster.cu CLUSTER=16,VPT=7,THREADS=448,MINB=2,$X
best bf16 $BESTB
FZ bf16 $B CLUSTER=8,VPT=8,THREADS=416,MINB=2,FZ=1,$X"
RUNS=${RUNS:-"best f32 $BESTF
W0 f32 $F32W0 CLUSTER=8,NSLOT=13,W=0
W0 f32 $F32W0 CLUSTER=16,NSLOT=7,W=0
WS f32 $F32 CLUSTER=16,NSLOT=7,WS=1
W0 f32 $F32W0 CLUSTER=16,U=1,NSLOT=14,W=0
WS f32 $F32 CLUSTER=16,U=1,NSLOT=14,WS=1
best bf16 $BESTB
W0 bf16 $BFW0 CLUSTER=4,NSLOT=13,W=0
W0 bf16 $BFW0 CLUSTER=8,NSLOT=7,W=0
WS bf16 $BF CLUSTER=8,NSLOT=7,WS=1
W0 bf16 $BFW0 CLUSTER=8,U=1,NSLOT=14,W=0
WS bf16 $BF CLUSTER=8,U=1,NSLOT=14,WS=1
W0 bf16 $BFW0 CLUSTER=16,NSLOT=10,W=0
WS bf16 $BF CLUSTER=16,NSLOT=10,WS=1"}
{
	echo "== 1. one timed run at a time, 4096 x 200003 ($((END - $(date +%s))) s left)"
	echo "$RUNS" | while read -r k d f v; do
		m=4096 n=200003
		case $f in [0-9]*x[0-9]*) m=${f%x*} n=${f#*x} f=${v%% *} v=${v#* } ;; esac
		# shellcheck disable=SC2046 # the defines, split on purpose
		timed "$k" "$d" "$m" "$n" "$f" $(defs "$v")
	done
} 2>&1 | tee "$OUT/lnl2.txt"

# step 2: the breakdowns (one launch after the check's, the L2 flushed by ncu)
M="breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:dram__throughput.avg.pct_of_peak_sustained_elapsed"
M="$M,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
NCU="best $BESTB
WS $BF CLUSTER=8,NSLOT=7,WS=1
W0 $BFW0 CLUSTER=4,NSLOT=13,W=0
softmax kernels/softmax/softmax_bf16_ring.cu CLUSTER=4"
{
	echo "== 2. Nsight Compute breakdowns at 1024 x 200003 bf16 ($((END + 60 - $(date +%s))) s left)"
	[ "${NCU_ON:-1}" = 1 ] || NCU=
	echo "$NCU" | grep . | while read -r k f v; do
		[ "$(date +%s)" -lt $((END + 60)) ] || { echo "$k: SKIPPED (TOTAL)"; continue; }
		# shellcheck disable=SC2046 # the defines, split on purpose
		timeout 90 ncu --csv --print-units base --metrics "$M" --cache-control all --clock-control none \
			--target-processes all -k 'regex:^(layernorm|softmax)' --launch-skip 2 --launch-count 1 \
			"$KB" run "$f" --arg M=1024 --arg N=200003 --no-sweep --trials 1 --timeout 60 $(defs "$v") \
			>"$OUT/ncu.$k.csv" 2>"$OUT/ncu.$k.err"
		echo "-- $k ${f##*/} $v (rc $?)"
		python3 - "$OUT/ncu.$k.csv" <<'PY'
import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
if not rows:
    print("    no metrics"); sys.exit()
h = rows[0]; ni = h.index("Metric Name"); vi = h.index("Metric Value")
vals = [(r[ni], float(r[vi].replace(",", ""))) for r in rows[1:] if r[vi].replace(",", "").replace(".", "").isdigit()]
for n, v in sorted(vals, key=lambda p: -p[1] if "pct" in p[0] else 0):
    print("    %-70s %12.2f" % (n, v))
PY
	done
} 2>&1 | tee -a "$OUT/lnl2.txt"

{
	echo "== 3. SASS of the gallery's best (kbench compile)"
	for b in "$BESTB" "$BESTF"; do
		[ "${NCU_ON:-1}" = 1 ] || break
		# shellcheck disable=SC2086 # file and defines
		set -- $b
		# shellcheck disable=SC2046 # the defines, split on purpose
		timeout 60 "$KB" compile "$1" $(defs "$2") 2>&1 | head -60
	done
	echo "== summary ($(($(date +%s) - START)) s): % of copy at 4096 x 200003"
	cat "$RES"
} 2>&1 | tee -a "$OUT/lnl2.txt"
rm -rf "$RES" "$JOBS"
