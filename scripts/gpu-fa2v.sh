#!/bin/sh
# gpu-fa2v.sh - issue 30: 02_fa2.cu trailed PyTorch's flash backend by
# 0.3-1.5% at D = 128, N = 1024 and 4096, not causal (H200, 2026-11-28
# 17:12Z).  Variants of it (V: -D lists, "-" its defaults) beside its
# defaults and flash in one process (bench/attention.py's table with
# FA2_VARIANTS; each variant's time in attention-table.jsonl, the defaults
# first and last to show the drift), after the unit test of the device
# reference cache's eviction.  Under 300 s.
# K: another kernel's variants (kernels/attention/03_fa3.cu), or none
# ("K= ").  Usage: OUT=DIR [V='-;A=1;A=1,B=2'] [K=FILE] sh scripts/gpu-fa2v.sh
# (repo root)
set -u
cd "$(dirname "$0")/.." || exit
. scripts/gpu-start.sh
export PYTHONUNBUFFERED=1
V=${V:--;OSTAGE=0;TREE=1;TREE=3;LAZY=0;-}
K=${K:-kernels/attention/02_fa2.cu}
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader
date -u +%FT%TZ
timeout 60 build/tests/test_profile_devcheck 2>&1 | tail -4
FA2_VARIANTS="$V" VARIANT_KERNEL="$K" NS=1024,4096,8192 DS=128,64 BUDGET=230 \
	timeout 240 python3 bench/attention.py table 2>&1 | grep -v Warning | sed -n '1,16p'
python3 - "$OUT/attention-table.jsonl" "$V" "$(basename "$K" | cut -d. -f1)" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
key = lambda r: (r["D"], r["N"], r["causal"])
pts = {}
for r in rows:
    pts.setdefault(key(r), []).append(r)
print(f"{'D':>3} {'N':>6} {'causal':6} | {'flash':>8} | " + " | ".join(f"{v[:16]:>16}" for v in
      sys.argv[2].split(";")) + "   (us, % of flash's speed)")
for k, rs in pts.items():
    fl = next((r["us"] for r in rs if r["kernel"] == "sdpa_flash"), None)
    cells = []
    for r in (r for r in rs if r["kernel"] == sys.argv[3]):
        us = r.get("us")
        ok = r.get("verdict") == "CORRECT"
        cells.append(f"{us:8.1f} {fl / us * 100:6.1f}%" if us and fl and ok else f"{r.get('verdict', '?')[:16]:>16}")
    print(f"{k[0]:3d} {k[1]:6d} {str(k[2]):6} | {fl or 0:8.1f} | " + " | ".join(cells))
PY
