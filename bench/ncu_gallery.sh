#!/bin/sh
# ncu_gallery.sh [FILE...] - kbench's median kernel time against Nsight
# Compute's gpu__time_duration (median of 30 profiled launches,
# --cache-control all --clock-control none, filtered to the kernel by name)
# for every kernels/ file at its default size (or the files given).
# kbench: the median of REPS runs' medians (seed fixed, so the warm runner
# reuses the CPU reference).  PROGS: the span programs to compare
# (KBENCH_TIMING_EXP; "default" is kbench's own timing, "trials1" the same
# with one trial, so one input set and no rotation), one column each.
# CLOCKS=1: also the SM clock each side ran at (ncu's
# sm__cycles_elapsed.avg.per_second, median of its launches; kbench's NVML
# samples while timing, timing.gpu.sm_clock_mhz, median of the runs).
# Usage: bench/ncu_gallery.sh (repo root, GPU; prints a table).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
REPS=${REPS:-3}
PROGS=${PROGS:-default}
CLOCKS=${CLOCKS:-0}
METRICS=gpu__time_duration.sum
[ "$CLOCKS" = 1 ] && METRICS=$METRICS,sm__cycles_elapsed.avg.per_second
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ $# -gt 0 ] || set -- $(find kernels -name '*.cu' -o -name '*.tile' -o -name '*.ptx' | sort)
echo "kbench vs ncu  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)  kbench $($KB --version 2>&1 | head -1)"
printf '%-44s %-24s %10s' file kernel "ncu us"
for p in $PROGS; do printf ' %12s %7s' "${p%%-*}" diff; done
[ "$CLOCKS" = 1 ] && printf ' %8s %8s' "ncu MHz" "kb MHz"
echo
for f in "$@"; do
	"$KB" run "$f" --no-sweep --seed 1 --json >"$TMP/r.json" 2>"$TMP/r.err"
	k=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['launch']['kernel'] if j.get('verdict') == 'CORRECT' else '-' + j.get('verdict', j.get('status', '?')))" "$TMP/r.json" 2>/dev/null || echo -ERROR)
	case $k in -*) printf '%-44s %s\n' "$f" "not timed: ${k#-} $(head -c 160 "$TMP/r.err" | tr '\n' ' ')"; continue ;; esac
	$NCU --csv --print-units base --metrics "$METRICS" --cache-control all \
	     --clock-control none --target-processes all -k "regex:^$k\$" --launch-skip 4 \
	     --launch-count 30 "$KB" run "$f" --no-sweep --trials 1 --seed 1 --timeout 300 \
	     >"$TMP/ncu.csv" 2>"$TMP/ncu.err"
	for p in $PROGS; do
		: >"$TMP/med.$p"
		for i in $(seq "$REPS"); do
			if [ "$p" = default ]; then "$KB" run "$f" --no-sweep --seed 1 --json
			elif [ "$p" = trials1 ]; then "$KB" run "$f" --no-sweep --seed 1 --trials 1 --json
			else KBENCH_TIMING_EXP=$p "$KB" run "$f" --no-sweep --seed 1 --json; fi >"$TMP/k.json" 2>/dev/null
			python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['timing']['median_us'])" "$TMP/k.json" >>"$TMP/med.$p" 2>/dev/null
			python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['timing']['gpu']['sm_clock_mhz']['median'])" "$TMP/k.json" >>"$TMP/mhz.$p" 2>/dev/null
		done
	done
	python3 - "$TMP" "$f" "$k" "$CLOCKS" $PROGS <<'PY'
import csv, statistics, sys
tmp, f, k, clocks, progs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]
rows = [r for r in csv.reader(l for l in open(tmp + "/ncu.csv") if l.startswith('"'))]
ncu = []
if rows:
    hdr = rows[0]; vi = hdr.index("Metric Value"); ni = hdr.index("Metric Name")
    ncu = [float(r[vi].replace(",", "")) / 1e3 for r in rows[1:] if r[ni] == "gpu__time_duration.sum"]
    hz = [float(r[vi].replace(",", "")) for r in rows[1:] if r[ni] == "sm__cycles_elapsed.avg.per_second"]
n = statistics.median(ncu) if ncu else float("nan")
line = "%-44s %-24s %10.2f" % (f, k[:24], n)
for p in progs:
    meds = [float(x) for x in open("%s/med.%s" % (tmp, p)) if x.strip()]
    kb = statistics.median(meds) if meds else float("nan")
    line += " %12.2f %+6.1f%%" % (kb, (kb - n) / n * 100)
if clocks:
    mhz = [float(x) for x in open("%s/mhz.%s" % (tmp, progs[0])) if x.strip()] if progs else []
    line += " %8.0f %8s" % (statistics.median(hz) / 1e6 if rows and hz else float("nan"),
                            "%.0f" % statistics.median(mhz) if mhz else "-")
print(line + "   (ncu n=%d)" % len(ncu))
PY
done
