#!/bin/sh
# ncu_gallery.sh [FILE...] - kbench's median kernel time against Nsight
# Compute's gpu__time_duration (median of 30 profiled launches,
# --cache-control all --clock-control none, filtered to the kernel by name)
# for every kernels/ file at its default size (or the files given).
# kbench: the median of REPS runs' medians (seed fixed, so the warm runner
# reuses the CPU reference; the first is the run that named the kernel).  PROGS: the span programs to compare
# (KBENCH_TIMING_EXP; "default" is kbench's own timing, "trials1" the same
# with one trial, so one input set and no rotation), one column each.
# "graph" is kbench's --timing graph (launches back to back over rotated
# buffers, the L2 flushed once per graph of them).  "cupti" is kbench's own timing with KBENCH_CUPTI=1, its column CUPTI's
# kernel durations (GPU timestamps of each timed launch: gpu__time_duration's
# definition) instead of the event spans.  NCU_NONE=1: a second ncu column
# with --cache-control none (the kernel starts from the L2 kbench's own
# flush left, under ncu's serialized launch), to tell the L2's state from
# the measurement.  ncu stops kbench once its launches are profiled (--kill).
# CLOCKS=1: also the SM clock each side ran at (ncu's
# sm__cycles_elapsed.avg.per_second, median of its launches; kbench's NVML
# samples while timing, timing.gpu.sm_clock_mhz, median of the runs).
# NCU_FILTER=EXPR: ncu's --target-processes-filter; by default
# exclude-tree:python3, so the server of a Python reference (a python3 child
# of kbench's runner) is not followed: followed, KernelBench's 23_softmax
# ran past its limit, not followed it agrees within 0.1% (H200, 2026-11-28).
# FILE@A=1,B=2 times FILE at those args instead of its default size (the
# KernelBench problems, whose own sizes take minutes of reference each).
# Usage: bench/ncu_gallery.sh [--list | FILE...] (repo root, GPU; prints a
# table; --list: the default entries).
set -u
KB=${KB:-build/kbench}
NCU=${NCU:-ncu}
REPS=${REPS:-3}
PROGS=${PROGS:-default}
CLOCKS=${CLOCKS:-0}
NCU_NONE=${NCU_NONE:-0}
NCU_COUNT=${NCU_COUNT:-30}
NCU_FILTER=${NCU_FILTER-exclude-tree:python3}
FILTER=; [ -n "$NCU_FILTER" ] && FILTER="--target-processes-filter $NCU_FILTER"
KILL=; $NCU --help 2>/dev/null | grep -q -- '--kill' && KILL="--kill on"
METRICS=gpu__time_duration.sum
[ "$CLOCKS" = 1 ] && METRICS=$METRICS,sm__cycles_elapsed.avg.per_second
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# the default entries: every kernels/ file, the KernelBench problems whose
# references take minutes at their own sizes at the sizes
# bench/pyref_gpu_h100.txt times them
entries() {
	find kernels -name '*.cu' -o -name '*.tile' -o -name '*.ptx' | sort | sed \
	    -e 's|^kernels/kernelbench/19_relu.cu$|&@D=32768|' -e 's|^kernels/kernelbench/23_softmax.cu$|&@D=32768|' \
	    -e 's|^kernels/kernelbench/89_cumsum.cu$|&@B=4096|' -e 's|^kernels/kernelbench/97_sdpa.cu$|&@B=4|'
}
[ "${1:-}" = --list ] && { entries; exit 0; }
[ $# -gt 0 ] || set -- $(entries)
echo "kbench vs ncu  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $($NCU --version | tail -1)  kbench $($KB --version 2>&1 | head -1)"
printf '%-44s %-24s %10s' file kernel "ncu us"
[ "$NCU_NONE" = 1 ] && printf ' %12s %7s' "ncu cc=none" diff
for p in $PROGS; do printf ' %12s %7s' "${p%%-*}" diff; done
[ "$CLOCKS" = 1 ] && printf ' %8s %8s' "ncu MHz" "kb MHz"
echo
for entry in "$@"; do
	f=${entry%%@*} A=
	[ "$f" != "$entry" ] && A=$(echo "${entry#*@}" | tr ',' '\n' | sed 's/^/--arg /' | tr '\n' ' ')
	"$KB" run "$f" $A --no-sweep --seed 1 --timeout 300 --json >"$TMP/r.json" 2>"$TMP/r.err"
	k=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['launch']['kernel'] if j.get('verdict') == 'CORRECT' else '-' + j.get('verdict', j.get('status', '?')) + ' ' + j.get('message', '')[:300].replace(chr(10), ' '))" "$TMP/r.json" 2>/dev/null || echo -ERROR)
	case $k in -*) printf '%-44s %s\n' "$entry" "not timed: ${k#-} $(head -c 160 "$TMP/r.err" | tr '\n' ' ')"; continue ;; esac
	for cc in all none; do
		[ $cc = none ] && [ "$NCU_NONE" != 1 ] && continue
		$NCU --csv --print-units base --metrics "$METRICS" --cache-control $cc \
		     --clock-control none --target-processes all $FILTER -k "regex:^$k\$" --launch-skip 4 \
		     --launch-count "$NCU_COUNT" $KILL "$KB" run "$f" $A --no-sweep --trials 1 --seed 1 \
		     --timeout 300 >"$TMP/ncu-$cc.csv" 2>"$TMP/ncu.err"
	done
	for p in $PROGS; do
		: >"$TMP/med.$p"
		for i in $(seq "$REPS"); do
			if [ "$p" = default ] && [ "$i" = 1 ]; then cat "$TMP/r.json" # the first run's (the same command)
			elif [ "$p" = default ]; then "$KB" run "$f" $A --no-sweep --seed 1 --timeout 300 --json
			elif [ "$p" = cupti ]; then KBENCH_CUPTI=1 "$KB" run "$f" $A --no-sweep --seed 1 --json
			elif [ "$p" = graph ]; then "$KB" run "$f" $A --no-sweep --seed 1 --timing graph --json
			elif [ "$p" = trials1 ]; then "$KB" run "$f" $A --no-sweep --seed 1 --trials 1 --json
			else KBENCH_TIMING_EXP=$p "$KB" run "$f" $A --no-sweep --seed 1 --json; fi >"$TMP/k.json" 2>/dev/null
			python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['timing']; print(t['kernel_us']['median'] if sys.argv[2] == 'cupti' else t['median_us'])" "$TMP/k.json" "$p" >>"$TMP/med.$p" 2>/dev/null
			python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['timing']['gpu']['sm_clock_mhz']['median'])" "$TMP/k.json" >>"$TMP/mhz.$p" 2>/dev/null
		done
	done
	python3 - "$TMP" "$entry" "$k" "$CLOCKS" "$NCU_NONE" $PROGS <<'PY'
import csv, os, statistics, sys
tmp, f, k, clocks, none, progs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5] == "1", sys.argv[6:]
def ncu_values(cc):
    """gpu__time_duration (us) and the SM clock (Hz) of each profiled launch."""
    path = "%s/ncu-%s.csv" % (tmp, cc)
    rows = [r for r in csv.reader(l for l in open(path) if l.startswith('"'))] if os.path.exists(path) else []
    if not rows:
        return [], []
    hdr = rows[0]; vi = hdr.index("Metric Value"); ni = hdr.index("Metric Name")
    val = lambda name: [float(r[vi].replace(",", "")) for r in rows[1:] if r[ni] == name]
    return [v / 1e3 for v in val("gpu__time_duration.sum")], val("sm__cycles_elapsed.avg.per_second")
ncu, hz = ncu_values("all")
rows = ncu
n = statistics.median(ncu) if ncu else float("nan")
line = "%-44s %-24s %10.2f" % (f, k[:24], n)
if none:
    nn, _ = ncu_values("none")
    v = statistics.median(nn) if nn else float("nan")
    line += " %12.2f %+6.1f%%" % (v, (v - n) / n * 100)
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
