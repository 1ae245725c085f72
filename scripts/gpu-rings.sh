#!/bin/sh
# gpu-rings.sh - GPU evidence for issue 26's moves in src/runner (message.c,
# listing.c, call.c split out of server.c, run.c, client.c and remote.c):
# the paths that only a GPU takes still answer as before.  Each step has its
# own time limit and one failing does not stop the others (under 8 min):
#   unit      test_runner, test_runner_hot, test_pool, test_profile_sassm
#   run       kbench run kernels/softmax.cu: a verdict (run.c, message.c)
#   hot       kbench profile --hot: hot lines with SASS and source (listing.c)
#   sassm     kbench profile --sass-metrics: conflict lines, collected by a
#             fresh runner that sassm.c starts through call.c and client.c
#   shared    tests/cli/shared.sh: the shared runner (client.c, shared.c)
#   run_gpu   tests/cli/run_gpu.sh, the runner's GPU CLI cases
# Run from the repository root with the `make dist` tarball under build/dist
# (or after `make build-tests`): OUT=/some/dir sh scripts/gpu-rings.sh
# Logs: $OUT/<step>.txt; the table last (also $OUT/summary.txt).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kbench-rings-cache XDG_DATA_HOME=/tmp/kbench-rings-data KBENCH_NO_SESSION=1
K=kernels/transpose/02a_smem32_unpadded.cu
: >"$OUT/summary.txt"

# step NAME LIMIT_S WANT COMMAND...: runs it into $OUT/NAME.txt; ok when it
# exits 0 and its output has WANT (an extended regex; "" for none).
step() {
	name=$1 limit=$2 want=$3; shift 3
	t0=$(date +%s)
	timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	if [ "$rc" -eq 0 ] && { [ -z "$want" ] || grep -qE -- "$want" "$OUT/$name.txt"; }; then st=ok; else st=FAIL; fi
	last=$(grep -E -- "${want:-^# passed=}" "$OUT/$name.txt" | tail -1 | cut -c1-70)
	printf '%-8s %-4s rc=%-3s %4ss  %s\n' "$name" "$st" "$rc" "$secs" "$last" >>"$OUT/summary.txt"
}

unit() {
	r=0
	for t in test_runner test_runner_hot test_pool test_profile_sassm; do
		echo "== $t"; build/tests/$t || r=1
	done
	return $r
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/gpu.txt" 2>&1
step unit 120 '' unit
step run 90 'CORRECT' build/kbench run kernels/softmax.cu --no-sweep
step hot 90 'hot|line' build/kbench profile "$K" --hot --section quick --no-sweep
step sassm 90 'conflict' build/kbench profile "$K" --sass-metrics --section quick --no-sweep
step shared 90 '^# passed=' sh tests/cli/shared.sh
step run_gpu 170 '^# passed=' sh tests/cli/run_gpu.sh
echo "step     ok?  exit  time  (last matching line; gpu: $(cat "$OUT/gpu.txt" | head -1))"
cat "$OUT/summary.txt"
