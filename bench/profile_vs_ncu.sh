#!/bin/sh
# profile_vs_ncu.sh - kbench's counters against Nsight Compute's for the
# same kernel, inputs and launch conditions, and the wall time of each.
#   kbench: `kbench profile FILE --json` (every section; one launch after
#           an L2 flush, kernel replay).
#   ncu:    the same metric names on a launch that also follows kbench's L2
#           flush (a timed launch of `kbench run --timing events`), with
#           --clock-control none --cache-control none (ncu's defaults lock
#           the SM clock to base and clean L2 before each pass; see
#           gpu-apis.md, 'Verified on the GPU').
# DRAM bytes must agree within 2%, the other metrics within 5%.
# Usage: bench/profile_vs_ncu.sh (repository root, GPU machine).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ms() { date +%s%N | awk '{printf "%d\n", $1/1000000}'; }
echo "kbench profile vs ncu  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)"
for spec in "kernels/softmax.cu softmax_rows" "tests/fixtures/kernels/copy.cu copy4"; do
	set -- $spec
	f=$1 k=$2
	"$KB" profile "$f" --json > "$TMP/kb.json" 2>/dev/null   # warm the compile cache
	t0=$(ms); "$KB" profile "$f" --json > "$TMP/kb.json" 2>"$TMP/kb.err"; t1=$(ms)
	metrics=$(python3 -c "import json; print(','.join(sorted(json.load(open('$TMP/kb.json'))['counters'])))")
	t2=$(ms)
	$NCU --csv --print-units base --metrics "$metrics" --clock-control none --cache-control none \
	     --target-processes all -k "regex:^$k\$" --launch-skip 1 --launch-count 1 \
	     "$KB" run "$f" --no-sweep --trials 1 --timing events --timeout 300 > "$TMP/ncu.csv" 2>"$TMP/ncu.err"
	t3=$(ms)
	python3 - "$TMP/kb.json" "$TMP/ncu.csv" "$f" $((t1 - t0)) $((t3 - t2)) <<'PY'
import csv, json, sys
kb = json.load(open(sys.argv[1]))["counters"]
rows = [r for r in csv.reader(l for l in open(sys.argv[2]) if l.startswith('"'))]
h = rows[0]; ni, vi = h.index("Metric Name"), h.index("Metric Value")
ncu, res = {}, {}
for r in rows[1:]:
    try:
        t = r[vi].replace(",", "")
        ncu[r[ni]] = float(t)
        # ncu prints ratios with few decimals: half its last digit is its resolution
        res[r[ni]] = 0.5 * 10 ** -(len(t.split(".")[1]) if "." in t else 0)
    except ValueError: pass
f, tkb, tncu = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
print("\n%s: %d metrics; wall: kbench profile %d ms, ncu %d ms (%.1fx)" % (f, len(kb), tkb, tncu, tncu / max(tkb, 1)))
print("  %-66s %16s %16s %8s" % ("metric", "kbench", "ncu", "diff"))
worst = {}
for m in sorted(kb):
    a, b = kb[m], ncu.get(m)
    if a is None or b is None: print("  %-66s %16s %16s" % (m, a, b)); continue
    d = 0.0 if a == b else abs(a - b) / max(abs(b), 1e-12) * 100
    lim = 2.0 if m.startswith("dram__bytes") else 5.0
    within_print = abs(a - b) <= res.get(m, 0) + 1e-12
    flag = "" if d <= lim else "  (within ncu's printed resolution)" if within_print else "  > %.0f%%" % lim
    print("  %-66s %16.6g %16.6g %7.2f%%%s" % (m, a, b, d, flag))
PY
done
