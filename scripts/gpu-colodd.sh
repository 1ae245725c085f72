#!/bin/sh
# gpu-colodd.sh - issue 31's sum across rows (bench/gallery_h200.txt,
# 2026-11-28T06:55Z: f32 32768 x 5003 78.5% of copy, f32 8192 x 50257 0.97x
# PyTorch, bf16 32768 x 5003 68.7%) on one GPU, from a working tree with the
# `make dist` tarball under build/dist*/ (nothing is built here; under 7 min).
#   1. each file at each gallery size with the bytes in flight doubled
#      beside its default: col_sum_f32.cu UNROLL = 8 and 16 (32 / 64 KB a
#      block), col_sum_bf16_vec.cu CLUSTER = 16 plain, THREADS = 512, U = 8
#      (16 / 32 / 32 KB a block over 336 blocks at 5003), and the new
#      col_sum_f32_vec.cu (float4 loads, a cluster a strip) at its gallery
#      clusters and their neighbours, CORRECT at N = 1, 2, 3, 7, 4093;
#      verdict and % of copy; then it under memcheck at 41 x 4093 and 41 x 3.
#   2. bench/gallery.py colsum f32,bf16: every candidate at every size,
#      beside PyTorch (the best kernel, then the others after |).
#   3. a summary: step 1's runs that are not CORRECT, then the gallery rows.
# Outputs: $OUT/runs.txt, $OUT/gallery.txt, $OUT/gallery.jsonl.
# Usage: OUT=DIR sh scripts/gpu-colodd.sh   (repo root, GPU machine)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
sh scripts/unpack-dist.sh
export XDG_CACHE_HOME="${XDG_CACHE_HOME:-/tmp/kc}" KBENCH_NO_SESSION=1 PYTHONUNBUFFERED=1
KB=${KB:-build/kbench}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%Y-%m-%dT%H:%MZ
T0=$(date +%s)
: >"$OUT/runs.txt"

# run FILE M N DEFINES...: one kbench run, a line to $OUT/runs.txt (skipped
# past 150 s, so the gallery keeps its time)
run() {
	_f=$1 _m=$2 _n=$3
	shift 3
	if [ $(($(date +%s) - T0)) -ge 150 ]; then
		printf '%-11s %6s %6s x %-6s %s %s\n' SKIPPED "" "$_m" "$_n" "${_f#kernels/}" "$*" | tee -a "$OUT/runs.txt"
		return
	fi
	_r=$(timeout 40 "$KB" run "$_f" --arg "M=$_m" --arg "N=$_n" "$@" --no-sweep --trials 1 --timeout 30 2>&1)
	_v=$(printf '%s\n' "$_r" | grep -m1 -oE '\b(CORRECT|INCORRECT|UNSUPPORTED|FAULT|TIMEOUT|error)\b' || echo "no-verdict")
	_p=$(printf '%s\n' "$_r" | grep -m1 -oE '[0-9.]+% of (measured )?copy' | cut -d% -f1)
	printf '%-11s %6s %6s x %-6s %s %s\n' "$_v" "${_p:+$_p%}" "$_m" "$_n" "${_f#kernels/}" "$*" | tee -a "$OUT/runs.txt"
	[ "$_v" = CORRECT ] || printf '%s\n' "$_r" | tail -6 | sed 's/^/    /' >>"$OUT/runs.txt"
}

# 1. the defaults beside the deeper variants, odd widths first
R=kernels/reduce
for s in "32768 5003" "8192 50257" "32768 8192"; do
	# shellcheck disable=SC2086
	set -- $s
	run $R/col_sum_f32.cu "$1" "$2"
	run $R/col_sum_f32.cu "$1" "$2" --define UNROLL=16
done
# the float4 kernel (new): the gallery's cluster (8, 1, 4) and its neighbours
run $R/col_sum_f32_vec.cu 32768 5003 --define CLUSTER=8
run $R/col_sum_f32_vec.cu 32768 5003 --define CLUSTER=4 --define THREADS=1024
run $R/col_sum_f32_vec.cu 32768 5003 --define CLUSTER=16
run $R/col_sum_f32_vec.cu 8192 50257 --define CLUSTER=1
run $R/col_sum_f32_vec.cu 8192 50257 --define CLUSTER=2
run $R/col_sum_f32_vec.cu 32768 8192 --define CLUSTER=4
for n in 1 2 3 7 4093; do run $R/col_sum_f32_vec.cu 4093 $n --define CLUSTER=8; done
for s in "32768 5003" "32768 8192"; do
	# shellcheck disable=SC2086
	set -- $s
	run $R/col_sum_bf16_vec.cu "$1" "$2" --define CLUSTER=16
	run $R/col_sum_bf16_vec.cu "$1" "$2" --define CLUSTER=16 --define THREADS=512
	run $R/col_sum_bf16_vec.cu "$1" "$2" --define CLUSTER=16 --define U=8
done
run $R/col_sum_bf16_vec.cu 4093 7 --define CLUSTER=16 --define U=8
run $R/col_sum_f32.cu 4093 7 --define UNROLL=16
echo "== step 1 ($(($(date +%s) - T0)) s)"

# 1b. col_sum_f32_vec.cu under compute-sanitizer (the last rows' chunks
# end at x's end; the host emulator cannot see a read a few bytes past it)
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
MC=""
for n in 4093 3; do
	MC="$MC N=$n: $(timeout 30 "$CS" --tool memcheck --target-processes all "$KB" run $R/col_sum_f32_vec.cu --arg M=41 \
		--arg N=$n --define CLUSTER=8 --no-sweep --trials 1 --timeout 25 2>&1 | grep -m1 -oE 'ERROR SUMMARY: [0-9]+ error' ||
		echo "no summary");"
done

# 2. the gallery's rows (every candidate, CORRECT or not)
G=$((420 - ($(date +%s) - T0)))
timeout $((G < 60 ? 60 : G)) python3 bench/gallery.py colsum f32,bf16 2>&1 | grep -v '^W11' | tee "$OUT/gallery.txt"

# 3. summary
echo
echo "== summary ($(($(date +%s) - T0)) s): step 1, $(grep -c '^CORRECT' "$OUT/runs.txt") CORRECT of $(grep -c '^[A-Za-z]' "$OUT/runs.txt") runs"
grep '^[A-Za-z]' "$OUT/runs.txt" | grep -v '^CORRECT' | sed 's/^/  NOT: /'
grep '^CORRECT' "$OUT/runs.txt" | sed 's/^/  /'
echo "memcheck col_sum_f32_vec.cu 41 x N CLUSTER=8:$MC"
echo "gallery (targets: >= 80% of copy at 5003/50257, >= 85% at 8192, faster than torch):"
grep -E '^colsum ' "$OUT/gallery.txt" | cut -c1-200
