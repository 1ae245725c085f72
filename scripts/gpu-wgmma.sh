#!/bin/sh
# gpu-wgmma.sh - issue 29 item 4's GPU evidence: kernels/matmul/matmul.tile
# lowered for sm_90a (its dot as wgmma with a producer warpgroup,
# src/tilegen/lower_wgmma.c) CORRECT at S = 8192, 4096, 1000 and 1001, and its
# time at 8192^3 beside cuBLAS (torch.matmul bf16, L2 flushed, timed as
# bench/gemm.py does, this GPU), kernels/gemm/04_wgmma.cu and the same file
# lowered for sm_90 (mma.sync, the lowering before); the other wgmma tile
# shape (BM = 128: m64n256k16, 04_wgmma.cu's) at 8192 too.  Builds nothing:
# runs from the repo root with the make dist tarball (build/dist*/).  About
# two minutes; each step on its own (one failing leaves the others).  Output:
# $OUT/wgmma.txt (everything: ptxas's lines, each run's rc), $OUT/wgmma-runs.json
# (each run's Result, one a line), $OUT/wgmma-table.txt, and the table,
# printed last.  Usage: sh scripts/gpu-wgmma.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=build/kbench
LOG=$OUT/wgmma.txt
TAB=$OUT/wgmma-table.txt
RUNS=$OUT/wgmma-runs.json
TMPJ=$(mktemp -d)
: >"$LOG"; : >"$TAB"; : >"$RUNS"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$LOG" 2>&1
date -u +%Y-%m-%dT%H:%MZ >>"$LOG"

# What ptxas made of it: registers, spills, the warp roles (setmaxnreg 40/232).
for bm in 256 128; do
	timeout 60 $KB compile kernels/matmul/matmul.tile --arch sm_90a --define BM=$bm --no-cache >>"$LOG" 2>&1 ||
		echo "compile sm_90a BM=$bm: rc $?" >>"$LOG"
done

# one kbench run: LABEL FILE ARCH S [DEFINE] -> a table row (verdict, median us)
one() {
	label=$1 file=$2 arch=$3 s=$4 def=${5:-} j="$TMPJ/run.json"
	: >"$j"
	timeout 100 $KB run "$file" ${arch:+--arch "$arch"} ${def:+--define "$def"} --arg S="$s" --no-sweep \
		--trials 1 --seed 1 --timeout 60 --json >"$j" 2>>"$LOG"
	echo "$label S=$s rc $?" >>"$LOG"
	tr -d '\n' <"$j" >>"$RUNS"; echo >>"$RUNS"
	python3 - "$label" "$s" "$j" >>"$TAB" 2>>"$LOG" <<'EOF'
import json, sys
label, s, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    j = json.load(open(path))
except Exception as e:
    j = {"verdict": "NO-JSON (%s)" % type(e).__name__}
r = j.get("result", j)
us = (r.get("timing") or {}).get("median_us")
v = r.get("verdict") or r.get("status") or "?"
print("%s\t%d\t%s\t%s" % (label, s, v, "%.1f" % us if us else "-"))
EOF
}

for s in 8192 4096 1000 1001; do
	one matmul.tile-sm_90a kernels/matmul/matmul.tile sm_90a "$s"
done
one matmul.tile-sm_90a-BM128 kernels/matmul/matmul.tile sm_90a 8192 BM=128
one matmul.tile-sm_90 kernels/matmul/matmul.tile sm_90 8192
one 04_wgmma.cu kernels/gemm/04_wgmma.cu "" 8192

# cuBLAS at 8192^3 on this GPU, timed as bench/gemm.py times it
timeout 120 python3 - >>"$TAB" 2>>"$LOG" <<'EOF'
import os, sys
sys.path.insert(0, "bench")
import tile
print("cuBLAS\t8192\tREF\t%.1f" % (tile.cublas_ms(8192) * 1e3))
EOF
echo "cuBLAS: rc $?" >>"$LOG"

# the table: % of cuBLAS's throughput at 8192 (the target: >= 80% for matmul.tile on sm_90a)
python3 - "$TAB" <<'EOF' | tee -a "$LOG"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.count("\t") == 3]
cub = next((float(r[3]) for r in rows if r[0] == "cuBLAS" and r[3] != "-"), None)
print("%-27s %5s %-12s %10s %9s %10s" % ("kernel", "S", "verdict", "median us", "TFLOP/s", "% cuBLAS"))
for name, s, v, us in rows:
    s = int(s)
    t = float(us) if us != "-" else None
    tf = "%9.1f" % (2 * s ** 3 / (t * 1e-6) / 1e12) if t else "%9s" % "-"
    pct = "%9.1f%%" % (cub / t * 100) if t and cub and s == 8192 else "%10s" % "-"
    print("%-27s %5d %-12s %10s %s %s" % (name, s, v[:12], us, tf, pct))
EOF
rm -rf "$TMPJ"
