#!/bin/sh
# gpu-bf16fix.sh - softmax_bf16_ring.cu (issue 31: bf16 softmax at odd and
# long widths, a producer warp feeding a ring of 16 KiB chunks) on one GPU,
# beside softmax_bf16_bulk.cu LEAN=1 (the gallery's best at 50257 and
# 200003 on 2026-11-28) and softmax_bf16_aligned.cu, from a working tree with
# the `make dist` tarball under build/dist*/ (nothing is built here; under
# 4 minutes; a step that would start after BUDGET seconds, default 180, is
# listed as SKIPPED).
#   1. CORRECT: the ring at N = 1, 7, 5003, 50257, 65536 (CLUSTER = 1),
#      131072 (2), 200003 and 262144 (4), and with empty slices (7 and 5003
#      in clusters of 2 and 4, 200003 in 8), 1024 rows or more (several rows
#      a block, so the ring wraps); then the spec's own sweep at its default
#      size (8192 x 50257, N = 1, 7, 5003, 65536, 16384).
#   2. time (kbench run --trials 1, the L2 flushed, as bench/gallery.py
#      does) at 8192 x 50257, 4096 x 200003, 16384 x 5003, 4096 x 65536 and
#      4096 x 262144: the ring beside the current best of each width, each
#      run also checked CORRECT; then the ring at 992 threads x 1 uint4.
#   then compute-sanitizer memcheck at 300 x 50257, 64 x 200003, 300 x 7.
#   3. the table last: verdict, us, GB/s and % of copy (kbench's measured
#      copy ceiling: `kbench calibrate`, run on the first run if not cached;
#      the copy GB/s it divides by is printed beside).
# Outputs: $OUT/runs.txt (every run, the tail of any not CORRECT),
# $OUT/sweep.txt, $OUT/runs.jsonl, $OUT/calibrate.txt (if it ran).
# Usage: OUT=DIR sh scripts/gpu-bf16fix.sh   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc KBENCH_NO_SESSION=1
KB=${KB:-build/kbench}
S=kernels/softmax
RING=$S/softmax_bf16_ring.cu BULK=$S/softmax_bf16_bulk.cu
LEAN="--define LEAN=1 --define VPT=3 --define MINB=2" # bench/gallery.py's lean(), THREADS per width
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%Y-%m-%dT%H:%MZ
: >"$OUT/runs.txt"; : >"$OUT/runs.jsonl"
# the copy ceiling every % is of, measured once per GPU (cached under XDG_CACHE_HOME)
"$KB" devices 2>&1 | grep -q 'no measured ceilings' && timeout 120 "$KB" calibrate >"$OUT/calibrate.txt" 2>&1
"$KB" devices 2>&1 | grep -m1 -E '^ *copy' || echo "no copy ceiling: % of copy will be missing"
DEADLINE=$(($(date +%s) + ${BUDGET:-180}))
PY=$(mktemp)
cat >"$PY" <<'EOF'
import json, sys
f = lambda x, s: s % x if x is not None else "-"
def show(r):
    return (f"{r['size']:>12s} {(r['file'] + ' ' + r['defines'])[:68]:68s} {str(r['verdict'])[:10]:10s} "
            f"{f(r['us'], '%9.1f')} {f(r['GBps'], '%6.0f')} {f(r['pct_copy'], '%5.1f%%')}")
if sys.argv[1] == "line":  # kbench's JSON on stdin -> one line of runs.jsonl
    try:
        r = json.loads(sys.stdin.read())
    except Exception:
        r = {}
    rf, t = r.get("roofline", {}), r.get("timing", {})
    gb, pct = rf.get("GBps"), rf.get("pct_of_measured_copy")
    print(json.dumps({"size": sys.argv[2], "file": sys.argv[3], "defines": sys.argv[4],
                      "verdict": r.get("verdict") or r.get("status") or "NO-JSON", "us": t.get("median_us"),
                      "GBps": gb, "pct_copy": pct, "copy_GBps": gb * 100 / pct if gb and pct else None}))
elif sys.argv[1] == "show":  # a line of runs.jsonl, as text
    print(show(json.loads(sys.stdin.read())))
else:  # the table of the timed runs (M x N past 1024 rows)
    rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
    copy = next((r["copy_GBps"] for r in rows if r.get("copy_GBps")), None)
    print(f"== table: % of kbench's measured copy ({copy:.0f} GB/s)" if copy else "== table (no copy ceiling)")
    print(f"{'size':>12s} {'kernel and defines':68s} {'verdict':10s} {'us':>9s} {'GB/s':>6s} {'%copy':>6s}")
    for r in rows:
        if int(r["size"].split("x")[0]) > 1024:
            print(show(r))
    bad = [r for r in rows if r["verdict"] not in ("CORRECT", "UNSUPPORTED")]
    print(f"== {sum(r['verdict'] == 'CORRECT' for r in rows)} CORRECT of {len(rows)} runs"
          + ("; NOT: " + ", ".join(f"{r['file']} {r['size']} {r['defines']} {r['verdict']}" for r in bad) if bad else ""))
EOF

# run FILE M N DEFINES...: one kbench run (JSON), a line to runs.txt and runs.jsonl
run() {
	_f=$1 _m=$2 _n=$3
	shift 3
	_d=$(printf '%s ' "$@" | sed 's/--define //g; s/ $//')
	if [ "$(date +%s)" -ge "$DEADLINE" ]; then
		printf '%-10s %-26s %-44s SKIPPED (BUDGET)\n' "${_m}x$_n" "${_f##*/}" "$_d" | tee -a "$OUT/runs.txt"
		return
	fi
	_j=$(timeout 60 "$KB" run "$_f" --arg M="$_m" --arg N="$_n" --no-sweep --json --trials 1 --timeout 15 "$@" 2>"$OUT/err")
	printf '%s\n' "$_j" | python3 "$PY" line "${_m}x$_n" "${_f##*/}" "$_d" >>"$OUT/runs.jsonl"
	tail -1 "$OUT/runs.jsonl" | python3 "$PY" show | tee -a "$OUT/runs.txt"
	case $_j in *'"CORRECT"'*) ;; *) { printf '%s\n' "$_j" | tail -c 600; tail -4 "$OUT/err"; } | sed 's/^/    /' >>"$OUT/runs.txt" ;; esac
}

# 1. correctness at every width, several rows a block
echo "== 1. CORRECT"
for n in 1 7 5003 50257 65536; do run $RING 1024 $n --define CLUSTER=1; done
run $RING 1024 131072 --define CLUSTER=2
for n in 200003 262144; do run $RING 1024 $n --define CLUSTER=4; done
run $RING 1024 7 --define CLUSTER=4 # ranks with empty slices
run $RING 1024 5003 --define CLUSTER=2
run $RING 1024 200003 --define CLUSTER=8
run $RING 1024 50257 --define CLUSTER=1 --define THREADS=992 --define U=1
if [ "$(date +%s)" -lt "$DEADLINE" ]; then
	timeout 60 "$KB" run $RING --trials 1 --timeout 15 >"$OUT/sweep.txt" 2>&1
	echo "spec sweep (8192 x N, CLUSTER=1): $(grep -oE '\b(CORRECT|INCORRECT|UNSUPPORTED|FAULT|TIMEOUT)\b' "$OUT/sweep.txt" | sort | uniq -c | tr -s ' \n' ' ')"
fi

# 2. the timed sizes: the ring beside the current best kernels
echo "== 2. time"
run $RING 8192 50257 --define CLUSTER=1
run $BULK 8192 50257 --define CLUSTER=4 $LEAN --define THREADS=544
run $S/softmax_bf16_aligned.cu 8192 50257 --define VPT=8
run $RING 4096 200003 --define CLUSTER=4
run $BULK 4096 200003 --define CLUSTER=16 $LEAN --define THREADS=544
run $RING 16384 5003 --define CLUSTER=1
run $S/softmax_bf16_aligned.cu 16384 5003 --define VPT=4
run $RING 4096 65536 --define CLUSTER=1
run $RING 4096 65536 --define CLUSTER=2
run $BULK 4096 65536 --define CLUSTER=4 --define LEAN=1
run $RING 4096 262144 --define CLUSTER=4
run $BULK 4096 262144 --define CLUSTER=16 --define LEAN=1
run $RING 8192 50257 --define CLUSTER=1 --define THREADS=992 --define U=1
run $RING 4096 200003 --define CLUSTER=4 --define THREADS=992 --define U=1

# memcheck at small sizes, where time is left (several rows a block: the ring wraps)
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for spec in "300 50257 CLUSTER=1" "64 200003 CLUSTER=4" "300 7 CLUSTER=2"; do
	set -- $spec
	if [ "$(date +%s)" -lt "$DEADLINE" ]; then
		r=$(timeout 30 "$CS" --tool memcheck --target-processes all "$KB" run $RING --arg M=$1 --arg N=$2 --define $3 \
			--no-sweep --trials 1 --timeout 15 2>&1)
		printf 'memcheck %5s x %-6s %-10s %s  %s\n' "$1" "$2" "$3" "$(printf '%s\n' "$r" | grep -m1 -oE '\b(CORRECT|INCORRECT|FAULT)\b')" \
			"$(printf '%s\n' "$r" | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' || echo 'no summary')" | tee -a "$OUT/runs.txt"
	fi
done

# 3. the table
echo "== runs (size, file and defines, verdict, us, GB/s, % of copy):"
cat "$OUT/runs.txt"
python3 "$PY" table "$OUT/runs.jsonl"
rm -f "$PY" "$OUT/err"
