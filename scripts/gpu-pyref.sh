#!/bin/sh
# gpu-pyref.sh [checks] [kernelbench] [optimize] - GPU evidence of Python
# references (issue 28, docs/python-refs.md), from a checkout with
# build/dist unpacked (as scripts/gpu-single.sh).  Parts (default: all
# three; each step has its own time limit, and a part starts no step after
# 7 minutes of the call):
#   checks       the kernels of tests/pyref/ run by `kbench run` on the GPU
#                against their NumPy and PyTorch references (CPU float64, and
#                torch device=cuda); a second run on the warm reference
#                server, one with the same seeds from the kept results; a
#                raising reference never CORRECT; a session folder's file
#                REFUSED, then trusted; a problem written as KernelBench
#                writes them opened by `kbench new --from-kernelbench` (its
#                skeleton INCORRECT: it writes zeros)           ~2 minutes
#   kernelbench  ten KernelBench level-1 problems with a hand-written kernel
#                each (kernels/kernelbench/) checked against their torch
#                reference and timed, beside PyTorch eager and torch.compile
#                                                              ~4-5 minutes
#   optimize     `kbench optimize` with the scripted provider on two of them
#                                                              ~2 minutes
# One step failing does not stop the others.  Outputs under $OUT (runs.txt:
# every step's output; results.json; summary.txt); the summary is printed
# last.  KBENCH_PYTHON=... when python3 lacks NumPy or torch.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
sh scripts/unpack-dist.sh
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

PARTS=${*:-checks kernelbench optimize}
T0=$(date +%s)
want() { # PART: whether it was asked for and there is time left
	case " $PARTS " in *" $1 "*) [ $(( $(date +%s) - T0 )) -lt 420 ] ;; *) false ;; esac
}

cd "$W" || exit 1
if want checks; then
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
fi

# ---- KernelBench level-1 problems with a hand-written kernel each
# (kernels/kernelbench/, CORRECT on the CPU emulator at small sizes in
# pyref.sh): kbench's check against the torch reference (on the GPU, in
# float64) and time, beside PyTorch eager and torch.compile on the same
# sizes (float32).  Sizes: the problem's, except where the float64
# reference's inputs would pass tens of GB through shared memory per trial:
# there the batch is cut (the args shown).
cd "$ROOT" || exit 1
if want kernelbench; then
printf '\n%-22s %-20s %-9s %10s %10s %10s\n' "kernelbench" "args" "kbench" "kbench_us" "eager_us" "compile_us" >>"$S"
for spec in "19_relu D=32768" "23_softmax D=32768" "51_argmax B=16" "89_cumsum B=4096" \
	    "100_hinge_loss B=4096" "94_mse_loss B=4096" "42_maxpool2d N=4" "50_conv2d" \
	    "82_depthwise_conv2d N=4" "97_sdpa B=4"; do
	want kernelbench || break
	set -- $spec
	# KB_ONLY="50_conv2d 97_sdpa": only these problems (a call's time left)
	case " ${KB_ONLY:-$1} " in *" $1 "*) ;; *) continue ;; esac
	f=kernels/kernelbench/$1.cu
	shift
	a=""
	for kv in "$@"; do a="$a --arg $kv"; done
	timeout 90 "$KB" run "$f" --no-sweep --trials 2 $a >"$W.run" 2>&1
	rc=$?
	{ echo "=== kbench run $f$a (exit $rc)"; cat "$W.run"; } >>"$OUT/runs.txt"
	v=$(grep -m1 -oE 'CORRECT|INCORRECT|REFERENCE ERROR|NO REFERENCE|UNSUPPORTED|FAULT|TIMEOUT|ERROR' "$W.run")
	us=$(sed -n 's/^  time *\([0-9.]*\) us median.*/\1/p' "$W.run" | head -1)
	ms=$(sed -n 's/^  time *\([0-9.]*\) ms median.*/\1/p' "$W.run" | head -1)
	[ -n "$ms" ] && us=$(echo "$ms" | awk '{print $1 * 1000}')
	tt=$(timeout 90 ${KBENCH_PYTHON:-python3} scripts/gpu-pyref-torch.py "$f" "$@" 2>>"$OUT/runs.txt" | tail -1)
	printf '%-22s %-20s %-9s %10s %10s %10s\n' "$(basename "$f" .cu)" "${*:--}" "${v:-?}" "${us:--}" \
		$(echo "${tt:-n/a n/a}" | cut -c1-40) >>"$S"
done

fi

# ---- kbench optimize with the scripted provider on two of them: each
# answer is checked and timed like any variant (the script's answers are
# kernels/softmax.cu's, whose spec differs: refused as spec changes)
for f in kernels/kernelbench/50_conv2d.cu kernels/kernelbench/82_depthwise_conv2d.cu; do
	want optimize || break
	cp "$f" "$W.opt.cu"
	timeout 100 "$KB" optimize "$W.opt.cu" --rounds 2 --trials 1 \
		--llm-cmd "$ROOT/tests/fixtures/scripted-llm" >"$W.run" 2>&1
	rc=$?
	{ echo "=== kbench optimize $f (exit $rc)"; cat "$W.run"; } >>"$OUT/runs.txt"
	printf 'optimize %-28s exit %s: %s\n' "$(basename "$f")" "$rc" \
		"$(grep -m2 -E 'round|baseline|best' "$W.run" | tr '\n' ' ' | cut -c1-150)" >>"$S"
done
"$KB" serve --stop >/dev/null 2>&1
rm -rf "$W" "$W.run" "$W.opt.cu"
echo "(the python line, then one row a step: ok when its output says what it must; runs.txt has each output)"
cat "$S"
