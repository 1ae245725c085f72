#!/bin/sh
# gpu-crash.sh - the gallery's one "crash" (2026-11-29T01:45Z, H200):
# softmax_bf16_ring.cu CLUSTER=2 at 4096 x 131072, run again as the gallery
# runs it (the rows before it first, the shared runner) and alone, each
# Result's status and message, from a working tree with the `make dist`
# tarball under build/dist*/ (nothing is built here), in about a minute.
# Output: $OUT/crash.txt.  Usage: OUT=DIR sh scripts/gpu-crash.sh
set -u
cd "$(dirname "$0")/.." || exit 1
. scripts/gpu-start.sh
KB=build/kbench F=kernels/softmax/softmax_bf16_ring.cu
show() { # LABEL N CLUSTER [env...]
	_l=$1 _n=$2 _c=$3
	shift 3
	env "$@" timeout 120 "$KB" run "$F" --arg M=4096 --arg N="$_n" --define CLUSTER="$_c" --no-sweep --trials 1 \
		--timeout 60 --json >"$OUT/r.json" 2>"$OUT/r.err"
	echo "$_l N=$_n CLUSTER=$_c rc=$? $(python3 -c 'import json,sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no json:", e); sys.exit()
print(r.get("verdict"), r.get("status"), (r.get("message") or "")[:600].replace("\n", " | "),
      (r.get("timing") or {}).get("median_us"))' "$OUT/r.json") $(tail -c 300 "$OUT/r.err" | tr '\n' ' ')"
}
{
	nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
	show seq1 65536 1
	show seq2 131072 2
	show seq3 131072 2
	show alone 131072 2 KBENCH_NO_SHARED_RUNNER=1
	show alone2 131072 2 KBENCH_NO_SHARED_RUNNER=1
	show c4 131072 4
	dmesg 2>/dev/null | grep -i xid | tail -3
} >"$OUT/crash.txt" 2>&1
cat "$OUT/crash.txt"
