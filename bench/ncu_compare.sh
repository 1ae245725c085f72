#!/bin/sh
# ncu_compare.sh - kbench's median kernel time against Nsight Compute's
# gpu__time_duration.sum for the same kernel, inputs and launch (kbench's
# default timing, then plain event pairs for the two shortest kernels, to
# show the launch latency that the default leaves out).
# ncu runs with cache flushing before every profiled launch and clocks left
# alone (--cache-control all --clock-control none), as kbench times (L2
# flushed, clocks as found).  Also: kbench's run-to-run spread (CV of the
# medians of 5 separate runs).  Usage: bench/ncu_compare.sh (repo root, GPU).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "kbench vs ncu  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)"
printf '%-40s %-14s %12s %12s %8s %10s\n' file kernel "kbench us" "ncu us" "diff" "kbench CV"
for spec in "kernels/softmax.cu softmax_rows" "kernels/vector_add.cu vector_add" \
            "kernels/vector_add.cu vector_add n=8388608" "kernels/saxpy.ptx saxpy" \
            "kernels/vector_add.cu vector_add n=8388608 events" "kernels/saxpy.ptx saxpy - events"; do
	set -- $spec
	f=$1 k=$2 extra=
	[ -n "${3:-}" ] && [ "$3" != - ] && extra="--arg $3"
	[ -n "${4:-}" ] && extra="$extra --timing $4"
	: > "$TMP/med"
	for i in 1 2 3 4 5; do
		"$KB" run "$f" $extra --no-sweep --json > "$TMP/r.json" 2>/dev/null
		python3 -c "import json; print(json.load(open('$TMP/r.json'))['timing']['median_us'])" >> "$TMP/med"
	done
	# ncu: profile 30 launches of the kernel after the checks (launches 0..3).
	$NCU --csv --print-units base --metrics gpu__time_duration.sum --cache-control all \
	     --clock-control none --target-processes all -k "regex:^$k\$" --launch-skip 4 \
	     --launch-count 30 "$KB" run "$f" $extra --no-sweep --trials 1 --timeout 120 > "$TMP/ncu.csv" 2>"$TMP/ncu.err"
	python3 - "$TMP/med" "$TMP/ncu.csv" "$f $extra" "$k" <<'PY'
import csv, statistics, sys
meds = [float(x) for x in open(sys.argv[1]) if x.strip()]
rows = [r for r in csv.reader(l for l in open(sys.argv[2]) if l.startswith('"'))]
hdr = rows[0]; vi = hdr.index("Metric Value"); ni = hdr.index("Metric Name")
ncu = [float(r[vi].replace(",", "")) / 1e3 for r in rows[1:] if r[ni] == "gpu__time_duration.sum"]
kb = statistics.median(meds)
cv = statistics.pstdev(meds) / statistics.mean(meds) * 100
n = statistics.median(ncu) if ncu else float("nan")
print("%-40s %-14s %12.2f %12.2f %7.1f%% %9.2f%%   (ncu n=%d)" % (sys.argv[3], sys.argv[4], kb, n, (kb - n) / n * 100, cv, len(ncu)))
PY
done
