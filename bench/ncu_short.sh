#!/bin/sh
# ncu_short.sh - kernels of 10-40 us: kbench's median against Nsight
# Compute's gpu__time_duration.sum for the same kernel, inputs and launch,
# with the clocks each tool saw.  Per kernel: kbench's default timing (the
# median of 5 runs' medians, and their CV), plain event pairs, CUPTI kernel
# activity (KBENCH_CUPTI=1), the SM clock NVML sampled during kbench's
# timing; ncu's duration (30 launches after the checks, --cache-control all
# --clock-control none, as kbench times: L2 flushed, clocks as found) and
# the SM and DRAM clocks it measured over the kernel.
# Usage: bench/ncu_short.sh (repo root, GPU machine).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "kbench vs ncu, short kernels  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)  $(git rev-parse --short HEAD 2>/dev/null)"
printf '%-44s %9s %9s %7s %6s | %9s %9s %6s | %7s %7s %6s\n' kernel "kbench" "ncu" "diff" "CV" \
	"events" "activity" "kbMHz" "ncuMHz" "dramMHz" "n"
run_kb() { # label file args... -> prints the median_us of each run, one per line
	out=$1; shift
	: > "$out"
	for i in 1 2 3 4 5; do
		"$@" --no-sweep --json > "$TMP/r.json" 2>/dev/null
		python3 -c "
import json; r = json.load(open('$TMP/r.json')); t = r['timing']
k = t.get('kernel_us', {}).get('median', float('nan'))
print(t['median_us'], k, json.dumps(t.get('gpu', {})))" >> "$out" 2>/dev/null
	done
}
for spec in "bench/kernels/layernorm_f32.cu layernorm_fwd" \
            "bench/kernels/rmsnorm_bf16.cu rmsnorm_fwd" \
            "bench/kernels/transpose_f32.cu transpose_tiled" \
            "bench/kernels/row_sum_f32.cu row_sum" \
            "kernels/softmax.cu softmax_rows M=4096,N=2048" \
            "kernels/vector_add.cu vector_add n=4194304" \
            "kernels/vector_add.cu vector_add n=8388608"; do
	set -- $spec
	f=$1 k=$2 extra=
	if [ -n "${3:-}" ]; then
		for a in $(echo "$3" | tr ',' ' '); do extra="$extra --arg $a"; done
	fi
	run_kb "$TMP/diff" "$KB" run "$f" $extra
	run_kb "$TMP/events" "$KB" run "$f" $extra --timing events
	KBENCH_CUPTI=1 run_kb "$TMP/act" "$KB" run "$f" $extra
	$NCU --csv --print-units base --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__cycles_elapsed.avg.per_second \
	     --cache-control all --clock-control none --target-processes all -k "regex:^$k\$" --launch-skip 4 \
	     --launch-count 30 "$KB" run "$f" $extra --no-sweep --trials 1 --timeout 120 > "$TMP/ncu.csv" 2>"$TMP/ncu.err"
	python3 - "$TMP" "$f $extra" <<'PY'
import csv, json, statistics, sys
tmp, name = sys.argv[1:]
def col(path, i):
    out = []
    for line in open(path):
        parts = line.split(" ", 2)
        try: out.append(float(parts[i]))
        except Exception: pass
    return out
def gpu(path):
    for line in open(path):
        parts = line.split(" ", 2)
        if len(parts) == 3:
            try:
                g = json.loads(parts[2])
                return g
            except Exception: pass
    return {}
diff, ev, act = col(tmp + "/diff", 0), col(tmp + "/events", 0), col(tmp + "/act", 1)
rows = [r for r in csv.reader(l for l in open(tmp + "/ncu.csv") if l.startswith('"'))]
vals = {}
if rows:
    h = rows[0]; vi = h.index("Metric Value"); ni = h.index("Metric Name")
    for r in rows[1:]:
        vals.setdefault(r[ni], []).append(float(r[vi].replace(",", "")))
dur = [v / 1e3 for v in vals.get("gpu__time_duration.sum", [])]
sm = vals.get("sm__cycles_elapsed.avg.per_second", [])
dr = vals.get("dram__cycles_elapsed.avg.per_second", [])
med = lambda v: statistics.median(v) if v else float("nan")
kb, n = med(diff), med(dur)
cv = statistics.pstdev(diff) / statistics.mean(diff) * 100 if len(diff) > 1 else float("nan")
g = gpu(tmp + "/diff")
kbmhz = "%.0f" % g.get("sm_clock_mhz", {}).get("median", float("nan"))
print("%-44s %9.2f %9.2f %6.1f%% %5.2f%% | %9.2f %9.2f %6s | %7.0f %7.0f %6d" % (
    name[:44], kb, n, (kb - n) / n * 100, cv, med(ev), med(act), kbmhz, med(sm) / 1e6, med(dr) / 1e6, len(dur)))
import os
with open(os.environ.get("OUT", tmp) + "/ncu_short_gpu.json", "a") as f:
    f.write(json.dumps({"kernel": name, "kbench_gpu": g}) + "\n")
PY
done
