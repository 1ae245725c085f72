#!/bin/sh
# gpu-pyref.sh - GPU evidence of Python references (issue 28,
# docs/python-refs.md), from a checkout with build/dist unpacked (as
# scripts/gpu-single.sh): the kernels of tests/pyref/ run by `kbench run`
# on the GPU and checked against their NumPy and PyTorch references (CPU,
# float64; and torch device=cuda), a second run served by the warm
# reference server and the reference cache, a reference that raises never
# CORRECT, a file from a session folder REFUSED, and a problem written as
# KernelBench writes them opened with `kbench new --from-kernelbench`
# (its skeleton runs INCORRECT: it writes zeros).  One step failing does
# not stop the others.  Outputs under $OUT (runs.txt, results.json,
# summary.txt); the summary table is printed last.
#
#   sh scripts/gpu-pyref.sh          (about a minute; KBENCH_PYTHON if python3 lacks torch)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
[ -x build/kbench ] || tar xzf build/dist/kbench-*.tar.gz
KB=$ROOT/build/kbench
export XDG_CACHE_HOME=/tmp/kc-pyref XDG_DATA_HOME=/tmp/kd-pyref KBENCH_NO_SESSION=1
W=$(mktemp -d /tmp/pyref.XXXXXX)
cp tests/pyref/*.cu tests/pyref/*.py "$W/"
S="$OUT/summary.txt"
: >"$S"
: >"$OUT/runs.txt"
echo "python: ${KBENCH_PYTHON:-$(command -v python3)} $(${KBENCH_PYTHON:-python3} -c \
	'import numpy, torch; print("numpy", numpy.__version__, "torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1)" >>"$S"

# step NAME WANT CMD...: runs CMD (output to runs.txt), a row: ok when its
# output holds WANT
step() {
	name=$1 want=$2
	shift 2
	t0=$(date +%s.%N)
	"$@" >"$W/step.out" 2>&1
	rc=$?
	secs=$(echo "$t0 $(date +%s.%N)" | awk '{printf "%.1f", $2-$1}')
	{ echo "=== $name (exit $rc, $secs s): $*"; cat "$W/step.out"; } >>"$OUT/runs.txt"
	if grep -qF -- "$want" "$W/step.out"; then v=ok; else v=FAIL; fi
	ref=$(sed -n 's/^  reference   //p' "$W/step.out" | head -1 | cut -c1-110)
	printf '%-28s %-4s exit %-3s %6s s  %s\n' "$name" "$v" "$rc" "$secs" \
		"${ref:-$(grep -m1 -E 'CORRECT|INCORRECT|REFUSED|REFERENCE ERROR|NO REFERENCE|ERROR' "$W/step.out" | cut -c1-110)}" >>"$S"
}

cd "$W" || exit 1
step numpy_expression "CORRECT" "$KB" run scan_rows.cu --no-sweep
step numpy_file_function "CORRECT" "$KB" run softmax_rows.cu --no-sweep
step numpy_again_warm "warm server" "$KB" run softmax_rows.cu --no-sweep --seed 7
step numpy_same_seeds_kept "3 of 3 trials reused a kept result" "$KB" run softmax_rows.cu --no-sweep --seed 7
step torch_cpu_expression "CORRECT" "$KB" run conv1d_torch.cu --no-sweep
step torch_cpu_file "CORRECT" "$KB" run pool_torch.cu --no-sweep
sed 's|^//! ref     torch |//! ref     torch device=cuda |' conv1d_torch.cu >conv1d_cuda.cu
step torch_cuda_expression "CORRECT" "$KB" run conv1d_cuda.cu --no-sweep
"$KB" run conv1d_torch.cu --no-sweep --json >"$OUT/results.json" 2>&1
sed 's/softmax_ref/broken_ref/' softmax_rows.cu >broken.cu
step exception_not_correct "ref.py:13: the reference raised IndexError" "$KB" run broken.cu --no-sweep
mkdir -p theirs/k.cu && cp scan_rows.cu theirs/k.cu/v1.cu && echo '{}' >theirs/manifest.json && : >theirs/journal.jsonl
step session_folder_refused "REFUSED" "$KB" run theirs/k.cu/v1.cu --no-sweep
step session_folder_trusted "CORRECT" "$KB" run theirs/k.cu/v1.cu --no-sweep --trust-python
step kernelbench_new "wrote kb_problem.cu" "$KB" new --from-kernelbench kb_problem.py
step kernelbench_skeleton_runs "INCORRECT" "$KB" run kb_problem.cu --no-sweep
step kernelbench_ref_here "reference   python torch" "$KB" ref kb_problem.cu
"$KB" serve --stop >/dev/null 2>&1
cd "$ROOT" && rm -rf "$W"
echo "(the python line, then one row a step: ok when its output says what it must; runs.txt has each output)"
cat "$S"
