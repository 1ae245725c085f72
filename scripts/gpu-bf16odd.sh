#!/bin/sh
# gpu-bf16odd.sh - softmax_bf16_bulk.cu's LEAN = 1 (issue 31: bf16 softmax
# at odd long widths) on one GPU, from a working tree with the `make dist`
# tarball under build/dist*/ (nothing is built here; under 2 minutes).
#   1. CORRECT: LEAN = 1 at its default shape (VPT = 4, 512 threads) and at
#      VPT = 3 with 544 threads, at N = 7, 4093, 5003 (CLUSTER = 2) and
#      65536 (CLUSTER = 4, and 8 for 544 x 3 uint4); 50257 and 200003 are
#      checked by step 2's runs.
#   2. bench/gallery.py softmax bf16 at 8192 x 50257 and 4096 x 200003: every
#      candidate (today's best, softmax_bf16_aligned.cu VPT=8 and
#      softmax_bf16_bulk.cu CLUSTER=4/16, beside the two LEAN ones) with its
#      verdict and % of copy, and PyTorch eager (GALLERY_COMPILE=0: eager was
#      the faster at both sizes on 2026-11-28, bench/gallery_softmax_h100.txt).
#   3. where time is left, LEAN at 8192 x 50257 in clusters of 8 (288
#      threads, four blocks an SM), and 2048 x 262144 with and without LEAN.
#   4. a short table: step 1 and 3's runs, then each gallery run's verdict,
#      time and % of copy, and torch's time.
# Outputs: $OUT/runs.txt, $OUT/gallery.txt, $OUT/gallery.jsonl.
# Usage: OUT=DIR sh scripts/gpu-bf16odd.sh   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1 GALLERY_COMPILE=0
KB=${KB:-build/kbench}
F=kernels/softmax/softmax_bf16_bulk.cu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%Y-%m-%dT%H:%MZ

T0=$(date +%s)
# run M N DEFINES...: one kbench run of softmax_bf16_bulk.cu, a line to $OUT/runs.txt
run() {
	_m=$1 _n=$2
	shift 2
	_r=$(timeout 60 "$KB" run $F --arg M=$_m --arg N=$_n "$@" --no-sweep --trials 1 --timeout 40 2>&1)
	_v=$(printf '%s\n' "$_r" | grep -m1 -oE '\b(CORRECT|INCORRECT|UNSUPPORTED|FAULT|TIMEOUT|error)\b' || echo "no-verdict")
	_p=$(printf '%s\n' "$_r" | grep -m1 -oE '[0-9.]+% of (measured )?copy' | cut -d% -f1)
	printf '%-11s %6s %5s x %-6s %s\n' "$_v" "${_p:+$_p%}" "$_m" "$_n" "$*" | tee -a "$OUT/runs.txt"
	[ "$_v" = CORRECT ] || printf '%s\n' "$_r" | tail -6 | sed 's/^/    /' >>"$OUT/runs.txt"
}

# 1. correctness at the small and power-of-two widths (512 rows: 8 a
# cluster, so each carries its edges through several rows)
BAL="--define LEAN=1 --define VPT=3 --define THREADS=544 --define MINB=2"
for n in 7 4093 5003; do
	run 512 $n --define CLUSTER=2 --define LEAN=1
	run 512 $n --define CLUSTER=2 $BAL
done
run 512 65536 --define CLUSTER=4 --define LEAN=1
run 512 65536 --define CLUSTER=8 $BAL

# 2. the gallery's candidates at the two odd widths, beside PyTorch
timeout 100 python3 bench/gallery.py softmax bf16 50257,200003 2>&1 | grep -v '^W11' | tee "$OUT/gallery.txt"

# 3. while the two minutes last: 50257 in clusters of 8 at 288 threads,
# four blocks an SM; LEAN at a power of two (82% of copy without it)
if [ $(($(date +%s) - T0)) -lt 90 ]; then
	run 8192 50257 --define CLUSTER=8 --define LEAN=1 --define VPT=3 --define THREADS=288 --define MINB=4 --define BLOCKS=512
fi
if [ $(($(date +%s) - T0)) -lt 100 ]; then
	run 2048 262144 --define CLUSTER=16
	run 2048 262144 --define CLUSTER=16 --define LEAN=1
fi

# 4. the table
echo "== runs of softmax_bf16_bulk.cu (verdict, % of copy, size, defines):"
cat "$OUT/runs.txt"
python3 - "$OUT/gallery.jsonl" <<'EOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])] if os.path.exists(sys.argv[1]) else []
print(f"{'size':>12s} {'kernel and defines':62s} {'verdict':9s} {'us':>8s} {'%copy':>6s}")
for r in rows:
    k, size = r["kbench"], f"{r['m']}x{r['n']}"
    if r.get("row"):
        t = r.get("torch_eager_us")
        print(f"{size:>12s} {'torch eager':62s} {'':9s} {t or 0:8.1f}   best: {r['best']}")
        continue
    name = r["file"].split("/")[-1] + " " + " ".join(a for a in r["args"] if "=" in a)
    us, pct = k.get("us"), k.get("pct_copy")
    print(f"{size:>12s} {name[:62]:62s} {str(k.get('verdict'))[:9]:9s} {us or 0:8.1f} {pct or 0:5.1f}%")
EOF
