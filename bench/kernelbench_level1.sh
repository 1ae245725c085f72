#!/bin/sh
# kernelbench_level1.sh - every KernelBench level-1 problem opened with
# `kbench new --from-kernelbench` and its reference computed at the
# problem's own sizes with `kbench ref` (on this machine's CPU, PyTorch in
# float64, through kbench's warm reference server), one row each:
# bench/kernelbench_level1.txt.
#
#   sh bench/kernelbench_level1.sh DIR/KernelBench/level1 [OUT.txt]
#
# KernelBench itself is not in this repository: fetch it
# (github.com/ScalingIntelligence/KernelBench) and point at its level1/.
# KBENCH_PYREF_TIMEOUT (default 60 s here) bounds each reference; a
# reference too big for this machine's memory is said so, not run.
L=${1:?usage: kernelbench_level1.sh KernelBench/level1 [OUT.txt]}
OUT=${2:-bench/kernelbench_level1.txt}
KB=${KB:-$PWD/build/kbench}
PY=${KBENCH_PYTHON:-/usr/bin/python3}
export KBENCH_PYTHON=$PY KBENCH_PYREF_TIMEOUT=${KBENCH_PYREF_TIMEOUT:-60}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
rows="$W/rows"
: >"$rows"
for p in $(ls "$L"/*.py | sort -t/ -k1 -V); do
	stem=$(basename "$p" .py)
	d="$W/$stem"
	mkdir -p "$d"
	(cd "$d" && "$KB" new --from-kernelbench "$p" -o k.cu >"$d/new.out" 2>"$d/new.err")
	if [ $? -ne 0 ]; then
		why=$(tr '\n' ' ' <"$d/new.err" | tail -c 200)
		printf '%s\t%s\t%s\t%s\t%s\n' "$stem" "no" "-" "-" "$why" >>"$rows"
		continue
	fi
	shapes=$(sed -n 's/^  inputs   \(.*\) (.*/\1/p; s/^  outputs  /-> /p' "$d/new.out" | tr '\n' ' ')
	(cd "$d" && timeout $((KBENCH_PYREF_TIMEOUT + 60)) "$KB" ref k.cu --json >"$d/ref.json" 2>"$d/ref.err")
	"$PY" - "$d/ref.json" "$stem" "$shapes" >>"$rows" <<'PYEOF'
import json, sys
path, stem, shapes = sys.argv[1:4]
try:
    r = json.load(open(path))
except Exception as e:
    print("%s\tyes\tno\t-\tkbench ref gave no result (%s)\t%s" % (stem, e, shapes)); sys.exit()
if r.get("status") == "ok":
    o = r["outputs"][0]
    what = "ok: %s min %.3g max %.3g, %d NaN" % (o["name"], o["min"], o["max"], o["nan"])
    print("%s\tyes\tyes\t%.1f s\t%s\t%s" % (stem, r["reference_ms"] / 1e3, what, shapes))
else:
    msg = r.get("message", "?").replace("\n", " ")
    if "no answer from the Python reference in" in msg:
        msg = "not done in %s s here (time limit)" % msg.split("reference in ")[1].split(" s")[0]
    elif "needs about" in msg:
        msg = "too big for this machine: " + msg.split("sizes ")[1].split(": try")[0]
    else:
        msg = msg[:160]
    print("%s\tyes\tno\t-\t%s\t%s" % (stem, msg, shapes))
PYEOF
done
opened=$(awk -F'\t' '$2 == "yes"' "$rows" | wc -l)
ran=$(awk -F'\t' '$3 == "yes"' "$rows" | wc -l)
{
	echo "# KernelBench level 1 opened by kbench new --from-kernelbench, each reference run by kbench ref"
	echo "# at the problem's own sizes: $(uname -n), $(nproc) CPU cores (shared), $(awk '/MemTotal/ {printf "%.0f GB", $2/1e6}' /proc/meminfo),"
	echo "# $("$PY" -c 'import torch, numpy; print("PyTorch", torch.__version__, "NumPy", numpy.__version__)' 2>&1), float64 on the CPU; $(date -u +%Y-%m-%d)."
	echo "# KernelBench $(cd "$L" && git rev-parse --short HEAD 2>/dev/null || echo '(a copy)'); time limit ${KBENCH_PYREF_TIMEOUT} s a reference."
	echo "# opened: $opened of $(wc -l <"$rows"); reference ran: $ran"
	echo "#"
	printf '%-58s %-5s %-4s %-8s %s\n' "problem" "opens" "runs" "time" "result / why not    [inputs -> outputs]"
	awk -F'\t' '{ printf "%-58s %-5s %-4s %-8s %s    [%s]\n", $1, $2, $3, $4, $5, $6 }' "$rows"
} >"$OUT"
tail -n +1 "$OUT" | head -8
