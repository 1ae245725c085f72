# ncu_med.sh - sourced by bench/ncu_short.sh and bench/timing_exp.sh (which
# set KB, NCU and TMP).
# ncu_med FILE KERNEL ARGS...: ncu's median gpu__time_duration.sum (us) of 30
# launches of KERNEL after the checks, --cache-control all --clock-control
# none (the L2 flushed, clocks as found, as kbench times), "nan" when ncu
# gave none.
ncu_med() {
	f=$1 k=$2; shift 2
	$NCU --csv --print-units base --metrics gpu__time_duration.sum --cache-control all \
	     --clock-control none --target-processes all -k "regex:^$k\$" --launch-skip 4 \
	     --launch-count 30 "$KB" run "$f" "$@" --no-sweep --trials 1 --timeout 120 > "$TMP/ncu.csv" 2>"$TMP/ncu.err"
	python3 - "$TMP/ncu.csv" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
try:
    vi = rows[0].index("Metric Value")
    print("%.3f" % statistics.median(float(r[vi].replace(",", "")) / 1e3 for r in rows[1:]))
except Exception:
    print("nan")
PY
}
