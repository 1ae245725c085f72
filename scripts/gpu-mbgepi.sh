#!/bin/sh
# gpu-mbgepi.sh - issue 29 row (9): why a GELU epilogue made the wgmma
# lowering's TMA store slower (matmul.tile 177 us with it, row (9) 224),
# and the fix (src/tilegen/lower_wgepi.c): each role of a persistent wgmma
# kernel in a loop of its own, so that ptxas keeps setmaxnreg (with one
# loop for both it printed C7507 "'setmaxnreg' ignored" and the consumers
# ran on the launch's 168 registers; --define KB_WG_ROLES=0 keeps that),
# and the TMA store a block at a time (--define KB_WG_STORE=3: a block's
# values worked out and packed before its buffer's wait).  All at 4096^3
# bf16, CORRECT checked, in one call, the most telling first, the main
# pairs ABAB:
#  - kernels/fused/matmul_bias_gelu.tile (its GELU's tanh(x, exact =
#    false): one MUFU.TANH): the default (no -D: KB_WG_STORE=2 since
#    4966551, =0 before), KB_WG_STORE = 0
#    (registers), 1 (TMA, all values first), 2 (TMA, each value where
#    written), 3 (TMA, a block at a time), 0 and 3 with the roles in one
#    loop (-old: the lowering before) and with the bias row read once into
#    registers (-cols: --define KB_WG_COLS=1);
#  - a copy with the exact tanhf (-exact), KB_WG_STORE=3 and 0, and one
#    without the GELU (store(y, u): matmul + bias), KB_WG_STORE=3: what the
#    math costs; pingpong (-D THREADS=128 -D BN=128 -D KB_WG_PINGPONG=1)
#    and 3 stages, KB_WG_STORE=3;
#  - kernels/matmul/matmul.tile --arch sm_90a (TMA store, its default),
#    roles apart and in one loop, and KB_WG_STORE=0;
#  - kernels/fused/matmul_bias_gelu.cu (the hand kernel);
#  - PyTorch eager gelu(addmm) (cuBLASLt's epilogue) and torch.compile,
#    and cuBLAS's matmul, this process, L2 flushed (bench/gallery.py).
# Also ptxas's lines for each variant (C7507 where setmaxnreg is dropped)
# and the SASS of row (9) with KB_WG_STORE=3 and =0, gzipped, with an
# opcode count of each.
# Builds nothing: runs from the repo root with the make dist tarball
# (build/dist*/).  Every step on its own; none starts past BUDGET (270 s).
# Output: $OUT/mbgepi.txt (everything), mbgepi-runs.jsonl (each kbench
# Result), mbgepi-table.txt, sass-*.txt.gz, and the table, printed last.
# Usage: sh scripts/gpu-mbgepi.sh
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=build/kbench
LOG=$OUT/mbgepi.txt
TAB=$OUT/mbgepi-table.txt
RUNS=$OUT/mbgepi-runs.jsonl
TMPJ=$(mktemp -d)
START=$(date +%s)
BUDGET=${BUDGET:-270}
: >"$LOG"; : >"$TAB"; : >"$RUNS"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$LOG" 2>&1
date -u +%Y-%m-%dT%H:%MZ >>"$LOG"

lim() {
	left=$((BUDGET - ($(date +%s) - START)))
	if [ "$left" -lt 10 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

MM=kernels/matmul/matmul.tile
MBG=kernels/fused/matmul_bias_gelu.tile
# the diagnostics' copies of row (9): the exact tanhf, and no GELU
EXA=$TMPJ/mbg_exact.tile
NOG=$TMPJ/mbg_bias.tile
sed 's/, exact = false)))$/)))/' "$MBG" >"$EXA"
sed 's/^\( *store(y\[[^]]*\], \)0\.5 \* u \* .*$/\1u)/' "$MBG" >"$NOG"
grep -c 'exact = false' "$MBG" "$EXA" >>"$LOG"
grep -n 'store(y' "$NOG" >>"$LOG"

# one LABEL FILE [FLAGS...]: a kbench run at S = 4096 alone, "label verdict us" into the table
one() {
	label=$1 file=$2 j="$TMPJ/run.json"
	shift 2
	t=$(lim 45)
	if [ "$t" = 0 ]; then
		printf '%s\tSKIPPED(time)\t-\n' "$label" >>"$TAB"
		return
	fi
	: >"$j"
	timeout "$t" $KB run "$file" --arg S=4096 "$@" --no-sweep --trials 1 --seed 1 --timeout 25 --json >"$j" 2>>"$LOG"
	echo "$label rc $? ($(($(date +%s) - START)) s)" >>"$LOG"
	tr -d '\n' <"$j" >>"$RUNS"; echo >>"$RUNS"
	python3 - "$label" "$j" >>"$TAB" 2>>"$LOG" <<'EOF'
import json, sys
label, path = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
    r = r.get("result", r)
except Exception as e:
    r = {"verdict": "NO-JSON(%s)" % type(e).__name__}
us = (r.get("timing") or {}).get("median_us")
print("%s\t%s\t%s" % (label, r.get("verdict") or r.get("status") or "?", "%.1f" % us if us else "-"))
EOF
}

OLD="--define KB_WG_ROLES=0" COLS="--define KB_WG_COLS=1"
PP="--define THREADS=128 --define BN=128 --define KB_WG_PINGPONG=1"
S0="--define KB_WG_STORE=0" S1="--define KB_WG_STORE=1" S2="--define KB_WG_STORE=2" S3="--define KB_WG_STORE=3"
# row (9)'s variants, the roles apart and in one loop (the lowering before)
pass() {
	# shellcheck disable=SC2086 # the flags
	for v in "s3:$S3" "s0:$S0"; do
		one "mbg-${v%%:*}" "$MBG" ${v#*:}
		one "mbg-${v%%:*}-cols" "$MBG" ${v#*:} $COLS
		one "mbg-${v%%:*}-old" "$MBG" ${v#*:} $OLD
	done
}
pass

# PyTorch: eager, torch.compile, cuBLAS, this process
t=$(lim 90)
if [ "$t" != 0 ]; then
	timeout "$t" python3 - >>"$TAB" 2>>"$LOG" <<'EOF'
import sys
sys.path.insert(0, "bench")
import gallery, tile
import torch
import torch.nn.functional as F
def mbg(a, w, b):
    return F.gelu(torch.addmm(b, a, w), approximate="tanh")
s = 4096
a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
w = torch.randn(s, s, device="cuda", dtype=torch.bfloat16) * 0.05
b = torch.randn(s, device="cuda").to(torch.bfloat16)
print("eager\tREF\t%.1f" % (gallery.time_op(lambda: mbg(a, w, b)) * 1e3), flush=True)
print("cuBLAS\tREF\t%.1f" % (tile.cublas_ms(s) * 1e3), flush=True)
try:
    cmbg = torch.compile(mbg, dynamic=False)
    print("compile\tREF\t%.1f" % (gallery.time_op(lambda: cmbg(a, w, b)) * 1e3), flush=True)
except Exception as e:
    print("torch.compile: %s: %s" % (type(e).__name__, str(e)[:300]), file=sys.stderr)
EOF
	echo "torch: rc $? ($(($(date +%s) - START)) s)" >>"$LOG"
else
	printf 'eager\tSKIPPED(time)\t-\n' >>"$TAB"
fi

# ptxas's lines (C7507: setmaxnreg dropped) and the SASS of the two main
# variants: KB_WG_STORE=3 and =0, the roles apart
sass() { # NAME FLAGS...: the compile's JSON, its ptxas log, the SASS gzipped, an opcode count
	name=$1
	shift
	[ "$(lim 20)" = 0 ] && return
	timeout 20 $KB compile "$MBG" "$@" --no-cache --json >"$TMPJ/c.json" 2>>"$LOG"
	python3 - "$TMPJ/c.json" "$OUT/sass-$name.txt" "$name $*" >>"$LOG" 2>&1 <<'EOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
b = d["build"]
print("== %s: ptxas" % sys.argv[3])
print("\n".join(l for l in b.get("log", "").splitlines() if "C75" in l or "Used" in l or "spill" in l))
s = b.get("sass") or {}
if not s.get("available"):
    print("no SASS:", s.get("why"))
    sys.exit()
with open(sys.argv[2], "w") as f:
    for fn in s["functions"]:
        if fn["name"] != "matmul_bias_gelu":
            continue
        ops = collections.Counter()
        for i in fn["instructions"]:
            f.write("%05x %s%s %s\n" % (i["addr"], ("@" + i["pred"] + " ") if i.get("pred") else "", i["opcode"], i["operands"]))
            ops[i["opcode"].split(".")[0]] += 1
        print("%d instructions; %s" % (sum(ops.values()), ", ".join("%s %d" % kv for kv in ops.most_common(24))))
EOF
	[ ! -f "$OUT/sass-$name.txt" ] || gzip -f "$OUT/sass-$name.txt"
}
# shellcheck disable=SC2086 # the flags
{
	one mbg "$MBG"
	one mbg-exact-s3 "$EXA" $S3
	one mbg-exact-s0 "$EXA" $S0
	one mbg-nogelu-s3 "$NOG" $S3
	one mm "$MM" --arch sm_90a
	one mm-old "$MM" --arch sm_90a $OLD
	sass s3 $S3
	sass s0 $S0
	one hand "${MBG%.tile}.cu"
	one mbg-s2 "$MBG" $S2
	one mbg-s1 "$MBG" $S1
	one mbg-nogelu-s3-cols "$NOG" $S3 $COLS
	pass
	one mbg-pp-s3 "$MBG" $PP $S3
	one mbg-s3-st3 "$MBG" $S3 --define STAGES=3
	one mm-s0 "$MM" --arch sm_90a $S0
}

{
	python3 - "$TAB" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.count("\t") == 2]
ref = {n: float(us) for n, v, us in rows if v == "REF" and us != "-"}
runs = {}
for n, v, us in rows:
    if v != "REF" and us != "-":
        runs.setdefault(n, []).append(float(us))
eager = ref.get("eager")
best = min([ref[k] for k in ("eager", "compile") if k in ref], default=None)
print("%-16s %-9s %9s %9s %9s %9s" % ("variant", "verdict", "us", "% eager", "% best", "% old"))
for n, v, us in rows:
    t = float(us) if us not in ("-", "") else None
    base = ref.get("cuBLAS") if n.startswith("mm") else eager
    pe = "%8.1f%%" % (base / t * 100) if t and base else "%9s" % "-"
    pb = "%8.1f%%" % (best / t * 100) if t and best else "%9s" % "-"
    old = runs.get(n + "-old")
    po = "%8.1f%%" % (min(old) / t * 100) if t and old and v != "REF" else "%9s" % "-"
    print("%-16s %-9s %9s %s %s %s" % (n, v[:9], us, pe, pb, po))
print("mbg = matmul_bias_gelu.tile (tanh(x, exact = false)), -sN = --define KB_WG_STORE=N (0 registers, 1 TMA all values first,")
print("  2 TMA each value where written, 3 TMA a block at a time); -old = --define KB_WG_ROLES=0 (both")
print("  roles in one loop: ptxas drops setmaxnreg, the lowering before); mm = matmul.tile --arch sm_90a;")
print("  -cols = --define KB_WG_COLS=1 (the bias row read once); exact = tanhf; nogelu = store(y, u); pp = pingpong (-D THREADS=128 -D BN=128")
print("  -D KB_WG_PINGPONG=1: 128 x 128 tiles, two consumer warpgroups in turns); -st3 = -D STAGES=3;")
print("  hand = matmul_bias_gelu.cu.")
print("% eager = eager / this (> 100%: faster than eager; the mm rows: cuBLAS's matmul / this);")
print("% best: the faster of eager and torch.compile / this;")
print("% old = the -old row's best / this (> 100%: the roles apart are faster)")
EOF
	echo "total $(($(date +%s) - START)) s"
} | tee -a "$LOG"
rm -rf "$TMPJ"
