#!/bin/sh
# gpu-attntile.sh - issue 30's attention.tile on a real GPU: first
# kernels/attention/attention.tile itself (its two dots in the 2-d layout,
# mma.sync from shared memory: correctness first) at D = 64, N = 1024 and the
# ragged 1000 and 129, and at D = 128, N = 1000, causal and not, against the attention() reference,
# timed beside 02_fa2.cu at the same sizes; then the dot lowering's
# constructs (src/tile, tests/emu/*.tile) CORRECT on the GPU (mma.sync,
# sm_90), each beside its reference kernel in double: dot(x, trans(w))
# (gemm_nt.tile, 4 and 8 warps, aligned and ragged sizes), kept reductions
# of a dot's result (dot_softmax, dot_colmax), its row index (dot_causal:
# the causal mask), mask= on its store (dot_store_mask) and the 2-d row
# index without dot (causal2d).  Builds nothing: runs from the repo root
# with the make dist tarball (build/dist*/).  Two minutes or so; each step
# on its own (one failing leaves the others).  Output: $OUT/attntile.txt
# (everything), $OUT/attntile-table.txt, the table printed last.
# Usage: sh scripts/gpu-attntile.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc-attntile KBENCH_NO_SESSION=1
KB=build/kbench
LOG=$OUT/attntile.txt
TAB=$OUT/attntile-table.txt
: >"$LOG"; : >"$TAB"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$LOG" 2>&1
date -u +%Y-%m-%dT%H:%MZ >>"$LOG"

# one kbench run: LABEL FILE ARGS [DEFINES...] -> a table row (verdict, median us)
one() {
	label=$1 file=$2 args=$3
	shift 3
	set -- $(for d in "$@"; do printf -- '--define %s ' "$d"; done)
	a=$(for x in $(echo "$args" | tr ',' ' '); do printf -- '--arg %s ' "$x"; done)
	j="$OUT/attntile-run.json"
	# shellcheck disable=SC2086
	timeout 60 $KB run "$file" $a "$@" --no-sweep --trials 2 --seed 1 --timeout 20 --json \
		>"$j" 2>>"$LOG"
	echo "$label $args rc $?" >>"$LOG"
	v=$(python3 scripts/result_line.py "$j" 2>>"$LOG")
	printf '%s\t%s\t%s\n' "$label" "$args" "$v" >>"$TAB"
}

A=kernels/attention
for c in 0 1; do
	one attention.tile $A/attention.tile N=1024,B=2,H=8,CAUSAL=$c
	one 02_fa2-d64 $A/02_fa2.cu N=1024,B=2,H=8,CAUSAL=$c D=64
	one attention.tile $A/attention.tile N=1000,B=2,H=8,CAUSAL=$c
	one attention.tile $A/attention.tile N=129,B=3,H=2,CAUSAL=$c
	one attention.tile-d128 $A/attention.tile N=1000,B=2,H=8,D=128,CAUSAL=$c HD=128
	one 02_fa2-d128 $A/02_fa2.cu N=1000,B=2,H=8,CAUSAL=$c D=128
done

E=tests/emu
one gemm_nt $E/gemm_nt.tile M=1024,N=1024,K=1024
one gemm_nt $E/gemm_nt.tile M=1000,N=1001,K=999
one gemm_nt-8warps $E/gemm_nt.tile M=1024,N=512,K=512 THREADS=256 BM=128 BK=32 STAGES=3
one gemm_nt-8warps $E/gemm_nt.tile M=1001,N=333,K=257 THREADS=256 BM=128 BK=32 STAGES=3
one gemm_nt-bk64 $E/gemm_nt.tile M=777,N=640,K=520 THREADS=64 BM=32 BK=64 STAGES=4
one dot_softmax $E/dot_softmax.tile M=4099,N=61,K=300
one dot_colmax $E/dot_colmax.tile M=64,N=4099,K=300
one dot_causal $E/dot_causal.tile M=4099,N=64,K=300
one dot_causal $E/dot_causal.tile M=1000,N=37,K=129
one dot_store_mask $E/dot_store_mask.tile M=1000,N=1001,K=300
one causal2d $E/causal2d.tile M=4099,N=61

# the table: every row CORRECT is what to look for
python3 - "$TAB" <<'EOF' | tee -a "$LOG"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.count("\t") == 3]
print("%-16s %-44s %-12s %10s" % ("kernel", "args", "verdict", "median us"))
for name, args, v, us in rows:
    print("%-16s %-44s %-12s %10s" % (name, args[:44], v[:12], us))
ok = sum(r[2] == "CORRECT" for r in rows)
print("%d of %d CORRECT" % (ok, len(rows)))
EOF
