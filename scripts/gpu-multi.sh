#!/bin/sh
# gpu-multi.sh - issues 16 and 17 on a machine of two or more GPUs, in one
# device call (repo root, with build/dist and build/sshd carried):
#   tune   bench/multi_gpu_tune.sh: a sweep + tune on one GPU's worker vs all
#   replay `kbench replay --gpus all` of a gallery session, and the gallery test
#   llm    scripts/gpu-llm.sh: `kbench optimize` with the scripted replies
#   remote scripts/gpu-remote.sh: --remote over a loopback sshd, and its tests
# Each part's output goes to $OUT/PART.txt; a summary is printed last.
# Usage: scripts/gpu-multi.sh [PART...]   (default: all four)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/gpus.txt"
for part in ${*:-tune replay llm remote}; do
	t0=$(date +%s)
	case $part in
	tune)   for f in ${TUNE_FILES:-kernels/reduce/02_vec4.cu}; do
			for m in ${TUNE_MODES:-cold}; do
				MODE=$m timeout ${TUNE_LIMIT:-420} sh bench/multi_gpu_tune.sh "$f" "${REPS:-1}"
				[ -z "${TUNE_BIG:-}" ] || MODE=$m EXTRA="$TUNE_BIG" timeout ${TUNE_LIMIT:-420} \
					sh bench/multi_gpu_tune.sh "$f" "${REPS:-1}"
			done
		done
		tar czf "$OUT/tune-runs.tgz" /tmp/kbench-mgpu.* 2>/dev/null ;;
	replay) build/tests/test_pool | tail -3
		build/kbench replay sessions/reduce --gpus all
		build/kbench replay sessions/softmax --gpus all
		KBENCH_NO_SESSION=1 sh tests/cli/gallery.sh | tail -3 ;;
	llm)    OUT=$OUT/llm timeout 300 sh scripts/gpu-llm.sh
		tar czf "$OUT/llm.tgz" -C "$OUT" llm ;; # one file back, not seven
	remote) mkdir -p /tmp/remote-logs; OUT=/tmp/remote-logs timeout 300 sh scripts/gpu-remote.sh ;; # its stdout has it all
	esac >"$OUT/$part.txt" 2>&1
	echo "$part: exit $? in $(( $(date +%s) - t0 )) s" >>"$OUT/summary.txt"
done
echo "== tune";   grep -E '^# 20|^# mode|exit|wall|verdicts|median|status' "$OUT/tune.txt" 2>/dev/null
echo "== replay"; grep -E 'now on|\[gpu|passed=|requeued' "$OUT/replay.txt" 2>/dev/null | head -30
echo "== llm";    grep -iE 'round|best|exit' "$OUT/llm/optimize.txt" 2>/dev/null | head -20
echo "== remote"; grep -E 'overhead|passed=' "$OUT/remote.txt" 2>/dev/null
cat "$OUT/summary.txt"
