#!/bin/sh
# gpu-wgpp.sh - issue 29 row (9): the wgmma lowering's epilogue store by TMA
# (src/tilegen/lower_wgmma.c: each consumer warpgroup's converted tile through
# two swizzled shared buffers, [64][64] blocks out by cp.async.bulk.tensor,
# so the consumers go back to the next tile's wgmma; the default on sm_90a
# where the stored value calls no transcendental, so matmul.tile's and not
# row (9)'s GELU; --define KB_WG_STORE=1 forces it, =0 keeps the store from
# registers, the lowering before), each CORRECT and timed in one run,
# interleaved:
#  - kernels/fused/matmul_bias_gelu.tile (row (9)) at S = 4096, 8192, 1000
#    (TMA's clipping at ragged edges) and 1001 (rows no 16-byte multiple:
#    zero tensormaps, the store from registers) beside PyTorch eager
#    (gelu(addmm): cuBLASLt with its bias + GELU epilogue) and torch.compile;
#  - kernels/matmul/matmul.tile --arch sm_90a at 4096, 8192, 1000, 1001
#    beside cuBLAS (torch.matmul bf16, timed as bench/gemm.py does);
#  - pingpong (-D THREADS=128 -D BN=128 -D KB_WG_PINGPONG=1: two consumer
#    warpgroups, each its own 128 x 128 tiles, one's epilogue under the
#    other's wgmma), row (9) at 4 and 6 stages, 4096, 8192, 1000 and 1001;
#  - compute-sanitizer memcheck of the TMA store at S = 1000 (time left).
# Builds nothing: runs from the repo root with the make dist tarball
# (build/dist*/).  Each step on its own, the most telling first, all of it
# under BUDGET (285 s; a step that would start past it is SKIPPED and says
# so).  Output: $OUT/wgpp.txt (everything: ptxas's lines, each step's rc),
# $OUT/wgpp-runs.jsonl (each kbench Result), $OUT/wgpp-table.txt, and the
# summary table, printed last.  Usage: sh scripts/gpu-wgpp.sh
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=build/kbench
LOG=$OUT/wgpp.txt
TAB=$OUT/wgpp-table.txt
RUNS=$OUT/wgpp-runs.jsonl
TMPJ=$(mktemp -d)
START=$(date +%s)
BUDGET=${BUDGET:-285}
: >"$LOG"; : >"$TAB"; : >"$RUNS"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$LOG" 2>&1
date -u +%Y-%m-%dT%H:%MZ >>"$LOG"

# lim N: N seconds, or what is left of the budget if less; 0 when too little is left
lim() {
	left=$((BUDGET - ($(date +%s) - START)))
	if [ "$left" -lt 10 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

MM=kernels/matmul/matmul.tile
MBG=kernels/fused/matmul_bias_gelu.tile
OFF="--define KB_WG_STORE=0"
TMA="--define KB_WG_STORE=1"
TMA2="--define KB_WG_STORE=2"
PP="--define THREADS=128 --define BN=128 --define KB_WG_PINGPONG=1"

# What ptxas made of each: registers, spills (want none), shared memory
# (225 KiB with the store's buffers, 193 without).
for a in "$MBG" "$MBG $TMA" "$MBG $PP" "$MM --arch sm_90a" "$MM --arch sm_90a $OFF"; do
	echo "== compile $a" >>"$LOG"
	# shellcheck disable=SC2086 # the file and its flags
	timeout 30 $KB compile $a --no-cache >>"$LOG" 2>&1 || echo "compile $a: rc $?" >>"$LOG"
done

# one LABEL FILE S [FLAGS...]: a kbench run at S alone, "label S verdict us" into the table
one() {
	label=$1 file=$2 s=$3 j="$TMPJ/run.json"
	shift 3
	t=$(lim 50)
	if [ "$t" = 0 ]; then
		printf '%s\t%s\tSKIPPED(time)\t-\n' "$label" "$s" >>"$TAB"
		return
	fi
	: >"$j"
	timeout "$t" $KB run "$file" --arg S="$s" "$@" --no-sweep --trials 1 --seed 1 --timeout 25 --json >"$j" 2>>"$LOG"
	echo "$label S=$s rc $? ($(($(date +%s) - START)) s)" >>"$LOG"
	tr -d '\n' <"$j" >>"$RUNS"; echo >>"$RUNS"
	python3 - "$label" "$s" "$j" >>"$TAB" 2>>"$LOG" <<'EOF'
import json, sys
label, s, path = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    r = json.load(open(path))
    r = r.get("result", r)
except Exception as e:
    r = {"verdict": "NO-JSON(%s)" % type(e).__name__}
us = (r.get("timing") or {}).get("median_us")
print("%s\t%s\t%s\t%s" % (label, s, r.get("verdict") or r.get("status") or "?", "%.1f" % us if us else "-"))
EOF
}

# the most telling first: row (9) at 4096 from registers (its default)
# and by TMA, twice (ABAB: the difference looked for is a few per cent)
for _ in 1 2; do
	one mbg.tile "$MBG" 4096
	# shellcheck disable=SC2086
	one mbg.tile-tma "$MBG" 4096 $TMA
	# shellcheck disable=SC2086
	one mbg.tile-tma2 "$MBG" 4096 $TMA2
done

# PyTorch: row (9) eager and torch.compile, and cuBLAS, this GPU, this run
t=$(lim 100)
if [ "$t" != 0 ]; then
	timeout "$t" python3 - >>"$TAB" 2>>"$LOG" <<'EOF'
import sys
sys.path.insert(0, "bench")
import gallery, tile
import torch
import torch.nn.functional as F
def mbg(a, w, b):
    return F.gelu(torch.addmm(b, a, w), approximate="tanh")
cmbg = torch.compile(mbg, dynamic=False)
for s in (4096, 8192, 1001):
    a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(s, s, device="cuda", dtype=torch.bfloat16) * 0.05
    b = torch.randn(s, device="cuda").to(torch.bfloat16)
    print("eager\t%d\tREF\t%.1f" % (s, gallery.time_op(lambda: mbg(a, w, b)) * 1e3), flush=True)
    try:
        print("compile\t%d\tREF\t%.1f" % (s, gallery.time_op(lambda: cmbg(a, w, b)) * 1e3), flush=True)
    except Exception as e:
        print("torch.compile: %s: %s" % (type(e).__name__, str(e)[:300]), file=sys.stderr)
for s in (4096, 8192, 1000, 1001):
    print("cuBLAS\t%d\tREF\t%.1f" % (s, tile.cublas_ms(s) * 1e3), flush=True)
EOF
	echo "torch: rc $? ($(($(date +%s) - START)) s)" >>"$LOG"
else
	printf 'eager\t4096\tSKIPPED(time)\t-\n' >>"$TAB"
fi

# pingpong at 4096, 4 and 6 stages
# shellcheck disable=SC2086
one mbg.tile-pp "$MBG" 4096 $PP
# shellcheck disable=SC2086
one mbg.tile-pp6 "$MBG" 4096 $PP --define STAGES=6

# the ragged sizes: 1000 (the TMA store clips at the edges), 1001 (zero
# tensormaps: the store from registers, masked)
for s in 1000 1001; do
	one mbg.tile "$MBG" "$s"
	# shellcheck disable=SC2086
	one mbg.tile-tma "$MBG" "$s" $TMA
	one matmul.tile "$MM" "$s" --arch sm_90a
	# shellcheck disable=SC2086
	one mbg.tile-pp "$MBG" "$s" $PP
done

# matmul.tile at 4096 and 8192, row (9) at 8192, on and off
for s in 4096 8192; do
	one matmul.tile "$MM" "$s" --arch sm_90a
	# shellcheck disable=SC2086
	one matmul.tile-off "$MM" "$s" --arch sm_90a $OFF
done
one mbg.tile "$MBG" 8192
# shellcheck disable=SC2086
one mbg.tile-tma "$MBG" 8192 $TMA
# shellcheck disable=SC2086
one mbg.tile-tma2 "$MBG" 8192 $TMA2
# shellcheck disable=SC2086
one mbg.tile-pp "$MBG" 8192 $PP

# compute-sanitizer memcheck of the TMA store at S = 1000: 0 errors expected
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
MC="not run (time)"
t=$(lim 40)
if [ "$t" != 0 ]; then
	# shellcheck disable=SC2086
	MC=$(timeout "$t" "$CS" --tool memcheck --target-processes all $KB run "$MBG" $TMA --arg S=1000 --no-sweep \
		--trials 1 --timeout 30 2>&1 | tee -a "$LOG" | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' ||
		echo "no summary")
fi

# the table: each row's verdict, % of its reference (row (9): the faster of
# eager and torch.compile; matmul: cuBLAS), and on against off
{
	echo "memcheck mbg.tile -D KB_WG_STORE=1 S=1000 (TMA store): $MC"
	python3 - "$TAB" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.count("\t") == 3]
ref, runs = {}, {}
for name, s, v, us in rows:
    if v == "REF" and us != "-":
        ref[(name, s)] = float(us)
    elif us != "-":
        runs.setdefault((name, s), []).append(float(us))
print("%-16s %5s %-9s %10s %8s %14s %9s" % ("kernel", "S", "verdict", "median us", "TFLOP/s", "vs reference", "on/off"))
for name, s, v, us in rows:
    t = float(us) if us not in ("-", "") else None
    n = int(s) if s.isdigit() else 0
    tf = "%8.1f" % (2 * n ** 3 / (t * 1e-6) / 1e12) if t and n else "%8s" % "-"
    vs, oo = "", ""
    if t and v != "REF":
        if name.startswith("mbg"):
            best = min([ref[k] for k in (("eager", s), ("compile", s)) if k in ref], default=None)
            vs = "%6.1f%% best" % (best / t * 100) if best else ""
        elif ("cuBLAS", s) in ref:
            vs = "%6.1f%% cuBLAS" % (ref[("cuBLAS", s)] / t * 100)
        base = name.rsplit("-", 1)[0] if name.endswith(("-tma", "-tma2")) else None
        off = runs.get((name + "-off", s)) or (base and runs.get((base, s)))
        if off:
            oo = "%8.1f%%" % (min(off) / t * 100)
    print("%-16s %5s %-9s %10s %s %14s %9s" % (name, s, v[:9], us, tf, vs, oo))
print("mbg = kernels/fused/matmul_bias_gelu.tile (its default: the store from registers, a GELU);")
print("-tma = --define KB_WG_STORE=1 (the store by TMA), -tma2 = =2 (each value worked out where written);")
print("matmul.tile's default is by TMA, -off = KB_WG_STORE=0;")
print("-pp = pingpong, -D THREADS=128 -D BN=128 -D KB_WG_PINGPONG=1 (-pp6: and STAGES=6);")
print("best = the faster of eager and torch.compile; on/off = the -off row's (for -tma, -tma2: the default's) best time")
print("  / this row's (> 100%: this row is faster)")
EOF
	echo "total $(($(date +%s) - START)) s"
} | tee -a "$LOG"
rm -rf "$TMPJ"
