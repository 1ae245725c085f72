#!/bin/sh
# gpu-redodd.sh - issue 31's bf16 rows under the targets at odd widths (row
# sum and max at 32768 x 5003, the sum across rows, transpose), on one GPU,
# from a working tree with the `make dist` tarball under build/dist*/
# (nothing is built here; under 150 s).
#   1. CORRECT, with % of copy, at the small odd widths (N = 1, 7, 4093 and
#      4093 rows: a last block part empty): row_sum/row_max_bf16_aligned.cu
#      as they are (their last loads now predicated) and with ROWS = 8 (a
#      warp a row), col_sum_bf16_vec.cu (CLUSTER = 16 and 4) and
#      transpose_bf16_aligned.cu (its odd-width path rewritten); then the
#      new configurations at 1000 x 200003.
#   2. bench/gallery.py sum,max,colsum,transpose bf16: every candidate at
#      32768 x 5003, 8192 x 50257 (and 8192, 4096 x 200003) with its
#      verdict and % of copy (the others after |), beside PyTorch.
#   3. where time is left, col_sum_bf16_vec.cu under compute-sanitizer; a
#      summary: step 1's runs that are not CORRECT, the memcheck line, then
#      the gallery's rows.
# Outputs: $OUT/runs.txt, $OUT/gallery.txt, $OUT/gallery.jsonl.
# Usage: OUT=DIR sh scripts/gpu-redodd.sh   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/kc} KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=${KB:-build/kbench}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%Y-%m-%dT%H:%MZ
T0=$(date +%s)
: >"$OUT/runs.txt"

# run FILE M N DEFINES...: one kbench run, a line to $OUT/runs.txt (skipped
# past 45 s, so the gallery keeps its time)
run() {
	_f=$1 _m=$2 _n=$3
	shift 3
	if [ $(($(date +%s) - T0)) -ge 45 ]; then
		printf '%-11s %6s %6s x %-6s %s %s\n' SKIPPED "" "$_m" "$_n" "${_f#kernels/}" "$*" | tee -a "$OUT/runs.txt"
		return
	fi
	case $_f in *transpose*) _a=R _b=C ;; *) _a=M _b=N ;; esac
	_r=$(timeout 40 "$KB" run "$_f" --arg "$_a=$_m" --arg "$_b=$_n" "$@" --no-sweep --trials 1 --timeout 30 2>&1)
	_v=$(printf '%s\n' "$_r" | grep -m1 -oE '\b(CORRECT|INCORRECT|UNSUPPORTED|FAULT|TIMEOUT|error)\b' || echo "no-verdict")
	_p=$(printf '%s\n' "$_r" | grep -m1 -oE '[0-9.]+% of (measured )?copy' | cut -d% -f1)
	printf '%-11s %6s %6s x %-6s %s %s\n' "$_v" "${_p:+$_p%}" "$_m" "$_n" "${_f#kernels/}" "$*" | tee -a "$OUT/runs.txt"
	[ "$_v" = CORRECT ] || printf '%s\n' "$_r" | tail -6 | sed 's/^/    /' >>"$OUT/runs.txt"
}

# 1. the small odd widths, then 200003
R=kernels/reduce
for n in 1 7 4093; do
	run $R/row_sum_bf16_aligned.cu 4093 $n
	run $R/row_sum_bf16_aligned.cu 4093 $n --define ROWS=8
	run $R/row_max_bf16_aligned.cu 4093 $n
	run $R/row_max_bf16_aligned.cu 4093 $n --define ROWS=8
	run $R/col_sum_bf16_vec.cu 4093 $n
	run $R/col_sum_bf16_vec.cu 4093 $n --define CLUSTER=4 --define THREADS=512
	run kernels/transpose/transpose_bf16_aligned.cu 4096 $n
done
run $R/row_sum_bf16_aligned.cu 1000 200003 --define ROWS=8
run $R/row_max_bf16_aligned.cu 1000 200003 --define ROWS=8
run $R/col_sum_bf16_vec.cu 1000 200003 --define CLUSTER=4
echo "== step 1 ($(($(date +%s) - T0)) s)"

# 2. the gallery's rows for these ops (every candidate, CORRECT or not)
G=$((140 - ($(date +%s) - T0)))
timeout $((G < 40 ? 40 : G)) python3 bench/gallery.py sum,max,colsum,transpose bf16 2>&1 |
	grep -v '^W11' | tee "$OUT/gallery.txt"

# 2b. while time is left: col_sum_bf16_vec.cu under compute-sanitizer (its
# last rows' chunks end at x's end; the host emulator cannot see a read
# a few bytes past it)
MC=skipped
if [ $(($(date +%s) - T0)) -lt 120 ]; then
	CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
	MC=$(timeout 25 "$CS" --tool memcheck --target-processes all "$KB" run $R/col_sum_bf16_vec.cu --arg M=41 --arg N=4093 \
		--define CLUSTER=4 --no-sweep --trials 1 --timeout 20 2>&1 | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' ||
		echo "no summary")
fi

# 3. summary
echo
echo "== summary ($(($(date +%s) - T0)) s): step 1, $(grep -c '^CORRECT' "$OUT/runs.txt") CORRECT of $(grep -c '^[A-Za-z]' "$OUT/runs.txt") runs"
grep '^[A-Za-z]' "$OUT/runs.txt" | grep -v '^CORRECT' | sed 's/^/  NOT: /'
echo "memcheck col_sum_bf16_vec.cu 41 x 4093 CLUSTER=4: $MC"
echo "gallery (targets: >= 80% of copy at 5003/50257, >= 85% at 8192/200003, faster than torch):"
grep -E '^(sum|max|colsum|transpose) ' "$OUT/gallery.txt" | cut -c1-140
