#!/bin/sh
# gpu-sring.sh - issue 31's f32 rings on one GPU: kernels/softmax/09_ring.cu
# (softmax_bf16_ring.cu's ring for f32) and kernels/rmsnorm/04_ring.cu, from
# a working tree with the `make dist` tarball under build/dist*/ (nothing is
# built here).  Under 150 s (gpu-farm.sh's limit for a NAME job): a run of
# 2 or 3 that would start after BUDGET seconds from the start (default
# 125; a memcheck, 25 s before) is listed as SKIPPED, and the summary
# always prints.
#   1. bench/gallery.py softmax f32 50257,200003,262144 and rmsnorm f32
#      50257: every candidate of the gallery at those sizes (the rings
#      among them), the best beside PyTorch eager and torch.compile.
#   2. CORRECT (kbench run --trials 1) at N = 1, 7, 13, 5003, 50257, 65536,
#      200003, 262144 at bench/gallery.py's ring32() clusters, 256 rows (a
#      block takes several rows, so the ring wraps), and with ranks whose
#      slice is empty (13 in a cluster of 8); the % of copy beside (of
#      kbench's measured copy; small problems, so low: the timed numbers
#      are step 1's).
#   3. compute-sanitizer memcheck at 300 rows (softmax 50257, RMSNorm 5003).
#   then a summary: every run of 2 and 3, and the gallery's rows.
# Outputs: $OUT/runs.txt (every run; the tail of any not CORRECT),
# $OUT/gallery.txt (step 1's tables), $OUT/gallery_softmax.jsonl and
# gallery_rmsnorm.jsonl (every kernel run of step 1), $OUT/calibrate.txt (if
# the copy ceiling was not cached).
# Usage: OUT=DIR sh scripts/gpu-sring.sh   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc} KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=${KB:-build/kbench}
T0=$(date +%s)
DEADLINE=$((T0 + ${BUDGET:-125}))
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%Y-%m-%dT%H:%MZ
"$KB" devices 2>&1 | grep -q 'no measured ceilings' && timeout 90 "$KB" calibrate >"$OUT/calibrate.txt" 2>&1
SUM=$(mktemp)
: >"$OUT/runs.txt"

late() { [ "$(date +%s)" -ge $((DEADLINE - ${1:-0})) ]; } # late [SECONDS]: past the budget, or within SECONDS of it

# ring FILE M N DEFINE...: one run of kernels/FILE.cu; verdict, us and % of copy
ring() {
	f=$1 m=$2 n=$3
	shift 3
	d=$(printf '%s ' "$@")
	if late; then
		printf '%-18s %4s x %-7s %-22s SKIPPED (BUDGET)\n' "$f" "$m" "$n" "$d" | tee -a "$SUM"
		return
	fi
	j=$(timeout 30 "$KB" run "kernels/$f.cu" --arg M="$m" --arg N="$n" $(printf -- '--define %s ' "$@") --no-sweep \
		--json --trials 1 --timeout 20 2>"$OUT/err")
	v=$(printf '%s' "$j" | python3 -c 'import json, sys
try:
    r = json.load(sys.stdin)
except Exception:
    r = {}
t, p = r.get("timing") or {}, (r.get("roofline") or {}).get("pct_of_measured_copy")
print(r.get("verdict") or r.get("status") or "NO-JSON", t.get("median_us", "-"), "%.1f%%" % p if p else "-")')
	printf '%-18s %4s x %-7s %-22s %s\n' "$f" "$m" "$n" "$d" "$v" | tee -a "$SUM"
	case $v in CORRECT*) ;; *) { printf '%s\n' "$j" | tail -c 600; tail -4 "$OUT/err"; } | sed 's/^/    /' >>"$OUT/runs.txt" ;; esac
}

echo "== 1. gallery"
t1=$(date +%s)
timeout 100 python3 bench/gallery.py softmax f32 50257,200003,262144 2>&1 | grep -v '^W11' | tee "$OUT/gallery.txt"
mv "$OUT/gallery.jsonl" "$OUT/gallery_softmax.jsonl" 2>/dev/null
timeout 50 python3 bench/gallery.py rmsnorm f32 50257 2>&1 | grep -v '^W11' | tee -a "$OUT/gallery.txt"
mv "$OUT/gallery.jsonl" "$OUT/gallery_rmsnorm.jsonl" 2>/dev/null
echo "gallery: $(($(date +%s) - t1)) s"

echo "== 2. CORRECT (M x N, defines, verdict, us, % of copy)"
for w in 50257:2 200003:8 13:2 1:2 7:2 5003:2 65536:2 262144:8 13:8; do
	ring softmax/09_ring 256 "${w%:*}" CLUSTER="${w#*:}"
	ring rmsnorm/04_ring 256 "${w%:*}" CLUSTER="${w#*:}"
done
cat "$SUM" >>"$OUT/runs.txt"

echo "== 3. memcheck"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for spec in "softmax/09_ring 300 50257 2" "rmsnorm/04_ring 300 5003 2"; do
	set -- $spec
	if late 25; then
		echo "memcheck $1 $2 x $3 CLUSTER=$4 SKIPPED (BUDGET)" | tee -a "$SUM"
		continue
	fi
	r=$(timeout 25 "$CS" --tool memcheck --target-processes all "$KB" run "kernels/$1.cu" --arg M="$2" --arg N="$3" \
		--define CLUSTER="$4" --no-sweep --trials 1 --timeout 20 2>&1)
	v=$(printf '%s\n' "$r" | grep -m1 -oE '\b(CORRECT|INCORRECT|FAULT)\b')
	e=$(printf '%s\n' "$r" | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' || echo 'no summary')
	case "$v $e" in "CORRECT ERROR SUMMARY: 0 error") ok=CORRECT ;; *) ok=NOT ;; esac
	echo "memcheck $1 $2 x $3 CLUSTER=$4 $ok ($v, $e)" | tee -a "$SUM"
done
grep memcheck "$SUM" >>"$OUT/runs.txt"

echo "== summary ($(($(date +%s) - T0)) s): $(grep -c ' CORRECT' "$SUM") CORRECT of $(wc -l <"$SUM") runs and memchecks"
grep -v ' CORRECT' "$SUM" | sed 's/^/  NOT: /'
grep -E '^(softmax|rmsnorm) ' "$OUT/gallery.txt" | cut -c1-170
rm -f "$SUM" "$OUT/err"
