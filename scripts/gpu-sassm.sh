#!/bin/sh
# gpu-sassm.sh - shared-memory bank conflicts per instruction (CUPTI SASS
# metrics, issue 15) on a GPU machine: the unit test with its 32-way, 2-way
# and conflict-free loads (it prints the chip's SASS metric names about
# shared memory), then `kbench profile --hot` of the transpose whose tile
# has no padding (a 32-way conflicted LDS) and of the padded one (none),
# and the JSON of the first.  Run from the repository root after `make`
# (or with the `make dist` tarball under build/dist*/).  Logs go to $OUT.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc} XDG_DATA_HOME=${XDG_DATA_HOME:-/tmp/kd}
export KBENCH_NO_SESSION=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
cat build/COMMIT 2>/dev/null
[ -x build/tests/test_profile_sassm ] || make build/tests/test_profile_sassm >/dev/null
echo "== tests/unit/test_profile_sassm.c"
T_VERBOSE=1 build/tests/test_profile_sassm 2>&1 | tee "$OUT/test_profile_sassm.log"
for k in 02a_smem32_unpadded 02_smem32; do
	echo "== kbench profile --hot --section quick kernels/transpose/$k.cu"
	build/kbench profile kernels/transpose/$k.cu --hot --section quick --no-sweep 2>&1 |
		tee "$OUT/profile_$k.txt"
done
build/kbench profile kernels/transpose/02a_smem32_unpadded.cu --hot --section quick --no-sweep \
	--json > "$OUT/profile_02a.json" 2>&1
echo "== sass_metrics of 02a (JSON)"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sm = r.get("sass_metrics") or {"error": r.get("sass_metrics_error")}
for k in ("shared", "conflict_lines"):
    if k in sm: sm[k] = sm[k][:6]
print(json.dumps(sm, indent=1))
print("phases_ms:", json.dumps(r.get("phases_ms")))
' "$OUT/profile_02a.json" 2>&1 | head -120
echo "== sass-metrics alone (no PC sampling), 02a"
build/kbench profile kernels/transpose/02a_smem32_unpadded.cu --sass-metrics --section quick \
	--no-sweep 2>&1 | tail -12
