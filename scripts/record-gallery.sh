#!/bin/sh
# record-gallery.sh - records the gallery's tuning paths as kbench sessions
# on this GPU and exports them to sessions/<op>/: each step of kernels/<op>/
# is saved over one working file (so the session shows the path as
# variants of one file, with diffs and Δ lines between steps) and profiled
# with `kbench profile` (its Result keeps the counters); the bf16 and long-
# row kernels are files of their own in the same session.  Beside each
# session, the SASS diff of the first and last step and `kbench log` go to
# $OUT/gallery-notes/ for docs/kernels.md.  The any-width kernels are
# recorded beside the kernel they replace at N = 5003 (files *_odd.cu).
# Each step's line gives its seconds; PROFILE_ARGS (e.g. --section quick)
# go to every `kbench profile`.
# Usage: scripts/record-gallery.sh [OP...] (repo root, GPU machine).
set -u
cd "$(dirname "$0")/.."
REPO=$PWD
KB=$REPO/build/kbench
OUT=${OUT:-/tmp/out}
NOTES=$OUT/gallery-notes
mkdir -p "$NOTES"
W=$(mktemp -d)
export XDG_DATA_HOME=$W/data GIT_CEILING_DIRECTORIES=$W
unset KBENCH_NO_SESSION

# step OP FILE STEP [kbench args...]: STEP of kernels/OP saved over FILE, profiled
step() {
	op=$1 file=$2 st=$3
	shift 3
	t0=$(date +%s)
	src=$REPO/kernels/$op/$st.cu
	[ -f "$src" ] || src=$REPO/kernels/$op/$st # a .tile step: named whole
	cp "$src" "$W/$op/$file"
	# shellcheck disable=SC2086 # PROFILE_ARGS: words
	(cd "$W/$op" && "$KB" profile "$file" --no-sweep --trials 1 ${PROFILE_ARGS:-} "$@") > "$NOTES/${op}_${file%.cu}_$st.txt" 2>&1
	n=$(cd "$W/$op" && "$KB" log "$file" | grep -c '^  v[0-9]')
	(cd "$W/$op" && "$KB" label "v$n" "$st" --file "$file") >/dev/null
	printf '%-10s %-22s %-26s %4ss %s\n' "$op" "$file" "$st" "$(($(date +%s) - t0))" \
		"$(grep -E '^  (CORRECT|INCORRECT|FAULT|TIMEOUT)|bandwidth|TFLOP' "$NOTES/${op}_${file%.cu}_$st.txt" | tr -s ' ' | cut -c1-90 | tr '\n' ' ')"
}

record() {
	op=$1 main=$op.cu
	mkdir -p "$W/$op"
	(cd "$W/$op" && "$KB" session new "$op") >/dev/null
	case $op in
	softmax)
		for s in 01_block_row 02_warp_row 03_vec4 04_online 05_registers; do step softmax softmax.cu $s; done
		step softmax softmax_long.cu 04_online --arg M=4096 --arg N=131072
		step softmax softmax_long.cu 06_cluster --arg N=131072 --define CLUSTER=8
		step softmax softmax_long.cu 07_cluster_async --arg N=131072 --define CLUSTER=8
		step softmax softmax_long.cu 08_bulk --arg N=131072 --define CLUSTER=16
		step softmax softmax_bf16.cu softmax_bf16
		step softmax softmax_bf16_long.cu softmax_bf16_cluster --arg N=131072 --define CLUSTER=8
		step softmax softmax_bf16_long.cu softmax_bf16_cluster_async --arg N=131072 --define CLUSTER=8
		step softmax softmax_bf16_long.cu softmax_bf16_bulk --arg N=131072 --define CLUSTER=8
		step softmax softmax_bf16_odd.cu softmax_bf16 --arg N=5003
		step softmax softmax_bf16_odd.cu softmax_bf16_aligned --arg N=5003
		# a GPT-2 vocabulary: the any-width kernel, then the ring (issue 31)
		step softmax softmax_bf16_vocab.cu softmax_bf16_aligned --arg M=8192 --arg N=50257 --define VPT=8
		step softmax softmax_bf16_vocab.cu softmax_bf16_ring --arg M=8192 --arg N=50257 --define CLUSTER=1 ;;
	attention) # issue 30's steps at N = 4096, D = 128, B x H = 64; the .tile beside them
		main=attention.cu
		for s in 01_naive 02_fa2 03_fa3; do
			step attention attention.cu $s --arg N=4096 --arg B=4 --arg H=16 --timeout 120
		done
		step attention attention.tile attention.tile --arg N=4096 --arg B=4 --arg H=16 --arg D=128 --define HD=128 ;;
	layernorm)
		for s in 01_naive 02_registers; do step layernorm layernorm.cu $s; done
		step layernorm layernorm_bf16.cu layernorm_bf16
		step layernorm layernorm_bf16_odd.cu layernorm_bf16 --arg N=5003
		step layernorm layernorm_bf16_odd.cu layernorm_bf16_aligned --arg N=5003 ;;
	rmsnorm)
		for s in 01_naive 02_registers; do step rmsnorm rmsnorm.cu $s; done
		step rmsnorm rmsnorm_bf16.cu rmsnorm_bf16
		step rmsnorm rmsnorm_bf16_odd.cu rmsnorm_bf16 --arg N=5003
		step rmsnorm rmsnorm_bf16_odd.cu rmsnorm_bf16_aligned --arg N=5003 ;;
	reduce)
		main=row_sum.cu
		for s in 01_naive 02_vec4; do step reduce row_sum.cu $s; done
		step reduce row_sum_bf16.cu row_sum_bf16
		step reduce row_max.cu row_max_f32
		step reduce row_sum_odd.cu 02_vec4 --arg N=5003
		step reduce row_sum_odd.cu 03_aligned --arg N=5003
		step reduce row_sum_bf16_odd.cu row_sum_bf16 --arg N=5003
		step reduce row_sum_bf16_odd.cu row_sum_bf16_aligned --arg N=5003
		step reduce row_max_odd.cu row_max_f32 --arg N=5003
		step reduce row_max_odd.cu row_max_f32_aligned --arg N=5003
		step reduce row_max_bf16.cu row_max_bf16_aligned
		step reduce col_sum.cu col_sum_f32
		step reduce col_sum_bf16.cu col_sum_bf16 ;;
	gemm) # 8192^3, the size issue 15 measures; 04 takes B as [N, K]
		main=gemm.cu
		for s in 01_smem 02_mma 03_pipeline; do step gemm gemm.cu $s --arg S=8192 --timeout 120; done
		step gemm gemm.cu 04_wgmma --arg S=8192 --timeout 120 ;;
	transpose)
		for s in 01_naive 02_smem32 03_tile64; do step transpose transpose.cu $s; done
		step transpose transpose_bf16.cu transpose_bf16 ;;
	esac
	(cd "$W/$op" && "$KB" log) > "$NOTES/${op}_log.txt" 2>&1
	first=$(cd "$W/$op" && "$KB" log "$main" | grep -m1 -o '^  v[0-9]*' | tr -d ' ')
	last=$(cd "$W/$op" && "$KB" log "$main" | grep -o '^  v[0-9]*' | tail -1 | tr -d ' ')
	(cd "$W/$op" && "$KB" diff "$first" "$last" --file "$main") > "$NOTES/${op}_diff_${first}_${last}.txt" 2>&1
	rm -rf "$REPO/sessions/$op"
	"$KB" session export "$op" -o "$REPO/sessions/$op"
}

for op in ${*:-softmax layernorm rmsnorm reduce transpose attention}; do
	record "$op"
done
tar czf "$OUT/sessions.tgz" sessions
tar czf "$OUT/gallery-notes.tgz" -C "$OUT" gallery-notes && rm -rf "$NOTES"
rm -rf "$W"
