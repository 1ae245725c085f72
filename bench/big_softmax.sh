#!/bin/sh
# big_softmax.sh - kbench run and kbench profile on a GPT-2-sized softmax
# (8192 x 50257 f32: 1.6 GB in, 1.6 GB out), warm (the shared runner kept
# between calls), wall time of each call and where it went (phases_ms and
# the check's own split from the Result).  Usage: bench/big_softmax.sh
# [RUNS] (repo root, GPU machine).
set -u
KB=${KB:-build/kbench}
RUNS=${1:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ARGS="kernels/softmax.cu --arg M=8192 --arg N=50257 --no-sweep"
echo "big softmax 8192x50257 f32  $(date -u +%Y-%m-%dT%H:%MZ)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  $(git rev-parse --short HEAD 2>/dev/null)"
for verb in run profile; do
	i=0
	while [ $i -le "$RUNS" ]; do
		t0=$(date +%s%N)
		"$KB" $verb $ARGS --json > "$TMP/r.json" 2> "$TMP/err.txt"
		rc=$?
		t1=$(date +%s%N)
		label=$([ $i = 0 ] && echo "first" || echo "warm $i")
		python3 - "$TMP/r.json" "$verb" "$label" "$(( (t1 - t0) / 1000000 ))" "$rc" <<'PY'
import json, sys
path, verb, label, wall, rc = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{verb:8s} {label:7s} wall {wall:>6s} ms rc {rc}: no JSON ({e})"); sys.exit()
ph = r.get("phases_ms", {})
ck = r.get("check", {}).get("ms", {})
t = r.get("timing", {})
print(f"{verb:8s} {label:7s} wall {wall:>6s} ms rc {rc} {r.get('verdict')} "
      f"median {t.get('median_us', float('nan')):.1f} us | phases " +
      " ".join(f"{k} {v:.0f}" for k, v in ph.items()) +
      " | check " + " ".join(f"{k} {v:.0f}" for k, v in ck.items()) +
      f" | ref cached {r.get('check', {}).get('reference_cached_trials')}")
PY
		i=$((i + 1))
	done
done
