#!/bin/sh
# gpu-clockgap.sh - issue 24: is the 2-3% by which the wgmma .tile kernels
# read slower under ncu than under kbench the GPU's clock after an idle
# wait?  1. scripts/gpu-clockgap.py: cuBLAS (torch.mm) bf16 4096^3 and
# 8192^3 timed by events after an L2 flush with 0-100 ms of idle before each
# launch; 2. the same matmul under ncu (--clock-control none --cache-control
# all, as bench/ncu_gallery.sh): gpu__time_duration and the SM clock over
# the kernel (sm__cycles_elapsed.avg.per_second), median of 20 launches.
# Compare 2's time with 1's gap-0 row and its gap rows.  Under 120 s.
# Output: $OUT/clockgap.txt.  Usage: OUT=DIR sh scripts/gpu-clockgap.sh
set -u
cd "$(dirname "$0")/.." || exit
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
L=$OUT/clockgap.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader >"$L" 2>&1
timeout 80 python3 scripts/gpu-clockgap.py 40 2>&1 | tee -a "$L"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
cat >/tmp/clockgap_mm.py <<'PY'
import sys, torch
n = int(sys.argv[1])
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16); b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
for _ in range(25):
    torch.mm(a, b)
torch.cuda.synchronize()
PY
for n in 4096 8192; do
	timeout 60 "$NCU" --clock-control none --cache-control all --launch-skip 5 --launch-count 20 \
		--metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second --csv --page raw \
		python3 /tmp/clockgap_mm.py $n >/tmp/clockgap_ncu.csv 2>/dev/null
	python3 - /tmp/clockgap_ncu.csv $n <<'PY' | tee -a "$L"
import csv, statistics, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next((i for i, r in enumerate(rows) if "gpu__time_duration.sum" in r), None)
if head is None:
    print("ncu n=%s: no rows" % sys.argv[2]); sys.exit()
h = rows[head]; t = h.index("gpu__time_duration.sum"); c = h.index("sm__cycles_elapsed.avg.per_second")
k = h.index("Kernel Name") if "Kernel Name" in h else None
vals = []
for r in rows[head + 1:]:
    try:
        vals.append((float(r[t].replace(",", "")), float(r[c].replace(",", "")), r[k] if k is not None else ""))
    except (ValueError, IndexError):
        pass
units = rows[head + 1] if len(rows) > head + 1 else []
tu = units[t] if len(units) > t else "?"
cu = units[c] if len(units) > c else "?"
scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}.get(tu, 1e-3 if statistics.median(v[0] for v in vals) > 1e4 else 1.0)
big = [v for v in vals if "gemm" in v[2].lower() or "nvjet" in v[2].lower() or "xmma" in v[2].lower()] or vals
ts = [v[0] * scale for v in big]; cs = [v[1] for v in big]
print("ncu n=%s: %d launches of %s, gpu__time_duration median %.1f us (min %.1f max %.1f), SM clock median %.4g %s"
      % (sys.argv[2], len(big), big[0][2][:50], statistics.median(ts), min(ts), max(ts), statistics.median(cs), cu))
PY
done
