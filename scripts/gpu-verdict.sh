#!/bin/sh
# gpu-verdict.sh - issue 26's verdict enum, optimize's judge_run steps and
# write-back on one GPU, from the make dist bundle (repo root; build/dist
# carried; nothing is built here).  Each part under $OUT/PART.txt, a summary
# table last; a failing part does not stop the others.
#   units    test_core (the verdict table), test_app (optimize's write-back,
#            no GPU needed), test_report, test_diff
#   run      tests/cli/run_gpu.sh: CORRECT / INCORRECT / IMPOSSIBLE / FAULT
#            verdicts as JSON and text, and kbench run's exit codes
#   guard    tests/cli/guard_gpu.sh: optimize's rounds (scored, worded and
#            promoted by judge_run's steps), the best written back, and an
#            immutable file: non-zero, naming where the best is
#   exits    kbench run's verdict and exit status: softmax.cu CORRECT 0,
#            impossible.cu IMPOSSIBLE 1, three_mistakes.cu SPEC ERROR 1
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=/tmp/kc XDG_DATA_HOME=/tmp/kd PYTHONUNBUFFERED=1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
: >"$OUT/summary.txt"
for part in ${*:-units run guard exits}; do
	t0=$(date +%s)
	case $part in
	units)
		for t in test_core test_app test_report test_diff; do
			echo "== $t"; timeout 120 build/tests/$t 2>&1 | tail -8
		done ;;
	run)
		KBENCH_REQUIRE_GPU=1 timeout 240 sh tests/cli/run_gpu.sh 2>&1 | tail -30 ;;
	guard)
		KBENCH_REQUIRE_GPU=1 timeout 240 sh tests/cli/guard_gpu.sh 2>&1 | tail -30 ;;
	exits)
		for f in kernels/softmax.cu tests/fixtures/kernels/impossible.cu \
			 tests/fixtures/kernels/three_mistakes.cu; do
			[ -f "$f" ] || { echo "$f: missing"; continue; }
			timeout 120 build/kbench run "$f" --trials 2 >/tmp/verdict-run.txt 2>&1
			echo "$f: exit $? $(grep -oE 'INCORRECT|CORRECT|IMPOSSIBLE|FAULT|SPEC ERROR|NO GPU' \
				/tmp/verdict-run.txt | head -1)"
		done ;;
	esac >"$OUT/$part.txt" 2>&1
	res=$(grep -hE '^# passed=' "$OUT/$part.txt" | awk -F'[= ]' \
		'{p+=$3; f+=$5; s+=$7} END {if (NR) printf "passed=%d failed=%d skipped=%d", p, f, s}')
	[ "$part" = exits ] && res=$(tr '\n' ';' <"$OUT/exits.txt")
	printf '%-6s %4ss  %s  (%s)\n' "$part" "$(( $(date +%s) - t0 ))" "${res:-see $part.txt}" \
		"${GPU:-no GPU}" >>"$OUT/summary.txt"
done
for f in "$OUT"/*.txt; do
	[ "$f" = "$OUT/summary.txt" ] && continue
	echo "==== $(basename "$f")"; grep -E '^==|passed=|FAIL|exit ' "$f"
done
echo "==== summary"
cat "$OUT/summary.txt"
