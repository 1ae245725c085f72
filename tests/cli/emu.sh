#!/bin/sh
# emu.sh - the tile compiler's generated CUDA, and .cu files as written,
# run on the CPU by the host emulator (tests/emu/README.md) and checked
# against each spec's reference: the examples at ragged sizes (row tails, K
# not a multiple of 8 so the scalar copy path runs, M and N not multiples of
# the tile, several K trips so the cp.async stages wrap, several program
# groups), then mutants, the generated matmul with one deliberate mistake
# each, which the emulator must catch (so that a pass above means
# something).
#
# A case the lowering gets wrong today is listed with `known`: it is
# skipped, naming the bug, unless KBENCH_EMU_KNOWN=1 (then it must pass).
. tests/cli/lib.sh

EMU=${EMU:-$PWD/build/emu/tile_emu}
W="$T_TMP/emu"
if [ ! -x "$EMU" ]; then
	fail emu_built "$EMU is missing (make build-tests builds it)"
	finish
	exit
fi

# Driver runs go two at a time (this takes most of its time compiling);
# collect then reads their outputs in the order they were started.
njobs=0
start() { # NAME WANT CMD...: WANT "" (each ok/FAIL line is a case) or a text a FAIL must hold
	njobs=$((njobs + 1))
	printf '%s\n%s\n' "$1" "$2" >"$T_TMP/job.$njobs"
	shift 2
	# the driver runs its kernels under a UBSan of its own (tile_emu.c) whose
	# reports it expects on stderr: not under tests/sanitize.sh's options
	env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS "$@" >"$T_TMP/out.$njobs" 2>&1 &
	[ $((njobs % 2)) -ne 0 ] || wait
}

# Under tests/sanitize.sh asan only kbench's part runs: the lowering of each
# mutant's file with its -D values, each a case.  The emulator and the
# kernels it builds are the plain programs in both passes (the kernels run
# under a UBSan of the driver's own): the examples' runs would repeat the
# plain pass (486 s of the sanitized one, 2026-11-27, on a loaded 2-core
# machine).
SAN=${KBENCH_SANITIZE:-}

# emu NAME TILE [ARGS...]: one driver run; each of its lines (one per
# --size) is a case.
emu() {
	[ -z "$SAN" ] || return 0
	n=$1
	shift
	start "$n" "" "$EMU" --work "$W" "$@"
}

# known NAME WHY TILE [ARGS...]: a case that fails until WHY is fixed.
known() {
	if [ -n "${KBENCH_EMU_KNOWN:-}" ]; then
		n=$1
		shift 2
		emu "$n" "$@"
	else
		skip "$1" "known failure: $2 (KBENCH_EMU_KNOWN=1 runs it)"
	fi
}

collect() {
	wait
	i=0
	while [ "$i" -lt "$njobs" ]; do
		i=$((i + 1))
		{ read -r name; read -r want; } <"$T_TMP/job.$i"
		out="$T_TMP/out.$i"
		cat "$out"
		if [ -n "$want" ]; then
			if grep -q '^FAIL' "$out" && grep -qF -- "$want" "$out"; then pass "$name"
			else fail "$name" "not caught (wanted '$want'): $(head -c 1500 "$out")"; fi
			continue
		fi
		cases=0
		while IFS= read -r line; do
			case $line in
			"ok   "*) pass "$name ${line#ok   }"; cases=$((cases + 1)) ;;
			"FAIL "*) fail "$name" "${line#FAIL }"; cases=$((cases + 1)) ;;
			esac
		done <"$out"
		[ "$cases" -gt 0 ] || fail "$name" "no result: $(head -c 1500 "$out")"
	done
}

NORM_SIZES='--size M=3,N=1000 --size M=2,N=5003 --size M=2,N=16390'
SMALL_SIZES='-D BLOCK=1000 -D THREADS=64 --size M=2,N=999 --size M=3,N=2001 --size M=1,N=3'

emu vector_add kernels/vector_add.tile --size n=10000 --size n=1001 --size n=1
emu vector_add_misaligned kernels/vector_add.tile --offset 4 --size n=4099
for f in softmax/softmax softmax/softmax_bf16 layernorm/layernorm layernorm/layernorm_bf16 \
	 rmsnorm/rmsnorm rmsnorm/rmsnorm_bf16; do
	n=$(basename "$f")
	emu "$n" "kernels/$f.tile" $NORM_SIZES
	emu "${n}_small" "kernels/$f.tile" $SMALL_SIZES
	emu "${n}_misaligned" "kernels/$f.tile" -D BLOCK=256 -D THREADS=32 --offset 4 --size M=3,N=600
	# one trip (the row in registers, w and b streamed) on rows one element off 16 bytes
	case $n in *_bf16) off=2 ;; *) off=4 ;; esac
	emu "${n}_misaligned_one_trip" "kernels/$f.tile" -D BLOCK=1024 -D THREADS=64 --offset $off \
		--size M=3,N=1001 --size M=2,N=1024
done

# Block reductions alternate between two halves of the scratch with one
# barrier each: warp by warp (a warp runs ahead to the next barrier) the
# halves must keep a reduction's values until every warp has read them.
emu softmax_bf16_warp_by_warp kernels/softmax/softmax_bf16.tile --sched warp $NORM_SIZES
emu layernorm_warp_by_warp kernels/layernorm/layernorm.tile --sched warp -D BLOCK=1000 -D THREADS=64 \
	--size M=2,N=999 --size M=3,N=2001
# Whole-tile loads: all groups' 16-byte loads first when every group is whole
# or past the end (rows of N % 8 == 0, or longer than the tile), the element
# path otherwise: row 0 aligned and the rest not, a row ending mid-group, a
# tile past the row, a row longer than the tile.
emu softmax_bf16_groups kernels/softmax/softmax_bf16.tile -D BLOCK=2048 -D THREADS=64 \
	--size M=3,N=1002 --size M=2,N=1000 --size M=2,N=2048 --size M=2,N=4104 --size M=1,N=8
emu rmsnorm_groups kernels/rmsnorm/rmsnorm.tile -D BLOCK=512 -D THREADS=32 \
	--size M=3,N=1001 --size M=2,N=1000 --size M=2,N=500

# Streamed loads (a masked load with other= read by an assignment, a load
# nested in a store) on both sides of the one-trip branch, ragged, unaligned.
emu layernorm_stream tests/emu/layernorm_stream.tile --size M=3,N=1000 --size M=2,N=300 \
	--size M=2,N=1 --size M=1,N=1536
emu layernorm_stream_misaligned tests/emu/layernorm_stream.tile --offset 2 --size M=3,N=1001 \
	--size M=2,N=257
emu layernorm_stream_block1000 tests/emu/layernorm_stream.tile -D THREADS=64 -D BLOCK=1000 \
	--size M=2,N=999 --size M=3,N=2001

# A row kept in registers serves only loads with its other= (and mask=):
# one trip (N <= 1024) and several.
emu kept_other tests/emu/kept_other.tile --size M=3,N=1000 --size M=2,N=1024 --size M=2,N=3000

# matmul with 64 x 64 tiles: vector and scalar copies, 5 K trips through 3
# stages, one K trip, no trip, a single element; GROUP=3 and the default 8
# with 10 row tiles (groups of 3 + 3 + 3 + 1, and 8 + 2).
MM='kernels/matmul/matmul.tile -D BM=64 -D BN=64 -D BK=32 -D STAGES=3'
emu matmul_64 $MM --size M=200,N=264,K=136 --size M=130,N=70,K=75 --size M=70,N=72,K=33 \
	--size M=17,N=9,K=8 --size M=1,N=1,K=1 --size M=64,N=64,K=0
emu matmul_groups $MM -D GROUP=3 --size M=600,N=136,K=100
emu matmul_groups_8 $MM --size M=600,N=70,K=64
emu matmul_copies_at_issue $MM --copies issue --sched shuffle --seed 7 --size M=200,N=264,K=136
emu matmul_misaligned $MM --offset 2 --size M=130,N=136,K=96
emu matmul_bk16 kernels/matmul/matmul.tile -D BM=64 -D BN=128 -D BK=16 -D STAGES=2 \
	--size M=100,N=300,K=90
# The file's own tiles (256 x 128, BK 64, 4 stages): 4 K trips, ragged
# everywhere; 6 trips through all 4 stages with copies at issue; and the
# other shape of its sweep, 128 x 256 at BK 32 through 3 stages.
emu matmul_file kernels/matmul/matmul.tile --size M=130,N=260,K=200
emu matmul_file_at_issue kernels/matmul/matmul.tile --copies issue --sched shuffle --seed 5 \
	--size M=300,N=264,K=328
emu matmul_128x256 kernels/matmul/matmul.tile -D BM=128 -D BK=32 -D STAGES=3 \
	--size M=300,N=264,K=328 --size M=130,N=70,K=75

# f16 operands, f32 result, 2-d grid, 2 / 4 / 1 warps and BK = 16 / 48 / 64.
emu gemm tests/emu/gemm.tile --size M=100,N=72,K=136 --size M=65,N=130,K=40
emu gemm_2warps tests/emu/gemm.tile -D THREADS=64 -D BM=32 -D BK=64 -D STAGES=4 \
	--size M=70,N=100,K=300
emu gemm_1warp tests/emu/gemm.tile -D THREADS=32 -D BM=32 -D BN=32 -D BK=32 -D STAGES=3 \
	--size M=33,N=95,K=77
# BK = 48: an odd number of 16-of-k steps (the last one multiplies buffer 0,
# then refills it), 6 chunks a row of x (no multiple of the threads, and
# at BM = 16 with 2 warps, fewer chunks than two copies a thread).
emu gemm_nt tests/emu/gemm_nt.tile --size M=130,N=70,K=75 --size M=100,N=72,K=136 --size M=1,N=3,K=5
emu gemm_nt_2warps tests/emu/gemm_nt.tile -D THREADS=64 -D BM=32 -D BK=64 -D STAGES=4 \
	--size M=100,N=72,K=136 --size M=65,N=130,K=40
emu gemm_nt_8warps tests/emu/gemm_nt.tile -D THREADS=256 -D BM=128 -D BK=32 -D STAGES=3 \
	--size M=100,N=72,K=136
emu gemm_nt_bk48 tests/emu/gemm_nt.tile -D BK=48 -D STAGES=3 --size M=65,N=130,K=40
emu gemm_bk48 tests/emu/gemm.tile -D BK=48 -D STAGES=3 --size M=100,N=72,K=136 --size M=65,N=130,K=40
emu gemm_bk48_2warps tests/emu/gemm.tile -D THREADS=64 -D BM=16 -D BK=48 -D STAGES=2 \
	--size M=70,N=100,K=300 --size M=33,N=95,K=77
emu gemm_bk48_at_issue tests/emu/gemm.tile -D BK=48 -D STAGES=4 --copies issue --sched shuffle --seed 3 \
	--offset 4 --size M=100,N=72,K=136
# The corpus's f16 dot (f16 result, alpha) with a spec of this test's.
emu hgemm tests/tile/corpus/bf16dot.tile --spec '//! arg M = 64' --spec '//! arg N = 64' \
	--spec '//! arg K = 64' --spec '//! arg alpha = 1.0' \
	--spec '//! in a : f16[M, K] = randn(seed=1)' --spec '//! in b : f16[K, N] = randn(seed=2)' \
	--spec '//! out c : f16[M, N]' --spec '//! ref matmul(a, b) -> c' \
	--spec '//! tol rtol=2e-3 atol=2e-3' --size M=100,N=72,K=136 --size M=65,N=130,K=40

# The rest of the language, with references: f16 and exp on a 2-d grid,
# integers, masks and where().
emu silu_f16 tests/emu/silu_f16.tile --size M=3,N=1000 --size M=2,N=257 --size M=1,N=1
emu silu_f16_misaligned tests/emu/silu_f16.tile --offset 2 --size M=3,N=1000
emu add_i32 tests/emu/add_i32.tile --size N=1000 --size N=513 --size N=5
emu relu_masked tests/emu/relu_masked.tile --size N=1000 --size N=301 --size N=1
emu relu_masked_misaligned tests/emu/relu_masked.tile --offset 4 --size N=1000
# Issue 29's functions and operators (identities that are x when each is
# right), gelu by erf against the reference, atomics across programs into a
# zeroed accumulator (a column sum, a maximum), at ragged sizes.
emu math_fns tests/emu/math_fns.tile --size N=1001 --size N=3 --size N=4099
emu math_fns_misaligned tests/emu/math_fns.tile --offset 4 --size N=1001
emu gelu_erf tests/emu/gelu_erf.tile --size N=1001 --size N=5
emu colsum_atomic tests/emu/colsum_atomic.tile --size M=300,N=1001 --size M=17,N=5 --size M=40,N=1536
emu max_atomic tests/emu/max_atomic.tile --size N=100003 --size N=7
emu colmax_rows tests/emu/colmax_rows.tile --size M=100,N=1500 --size M=3,N=1024 --size M=9,N=2049
# a gather (x[row, t[row]]) against the cross_entropy reference
emu cross_entropy tests/emu/cross_entropy.tile --size M=7,V=5003 --size M=3,V=1001 --size M=2,V=2048
# 2-d tiles (issue 29, item 1): a bias row and arange beside a 2-d tile
# and a 2-d mask; softmax of 8 rows as one tile (reductions along axis 1
# kept as [8, 1]); a column sum along axis 0; trans() through shared memory
emu bias2d tests/emu/bias2d.tile --size M=37,N=50 --size M=100,N=150 --size M=1,N=1
emu bias2d_misaligned tests/emu/bias2d.tile --offset 4 --size M=37,N=50
emu softmax2d tests/emu/softmax2d.tile --size M=37,N=50 --size M=8,N=64 --size M=1,N=1
emu softmax2d_warp_by_warp tests/emu/softmax2d.tile --sched warp --size M=37,N=50
emu causal2d tests/emu/causal2d.tile --size M=37,N=50 --size M=8,N=64 --size M=1,N=1
emu colsum2d tests/emu/colsum2d.tile --size M=100,N=150 --size M=32,N=64 --size M=1,N=3
emu transpose2d tests/emu/transpose2d.tile --size M=100,N=150 --size M=32,N=64 --size M=1,N=3
emu transpose2d_misaligned tests/emu/transpose2d.tile --offset 4 --size M=37,N=64
# a strided column slice x[r0 : r0 + ROWS, c] (kb_strided), ragged, misaligned
emu transpose_cols tests/emu/transpose_cols.tile --size M=1030,N=13 --size M=2048,N=16 --size M=5,N=3
emu transpose_cols_misaligned tests/emu/transpose_cols.tile --offset 4 --size M=1030,N=13
# kernels/fused/ with a built-in reference, the .tile and the hand .cu at
# ragged sizes: cross-entropy (a vocabulary of 50257 and one off a
# multiple of 4; 5 rows of 32003 start at each of the four offsets from a
# 16-byte boundary, the .tile's h = 0..3, and again from a base that is
# not aligned), the column sum by atomics, the transpose (trans() of a
# 2-d tile in the .tile)
for k in cross_entropy.tile cross_entropy.cu; do
	emu "fused_$k" "kernels/fused/$k" --size M=3,V=50257 --size M=2,V=32001 --size M=5,V=32003
done
emu fused_cross_entropy_misaligned kernels/fused/cross_entropy.tile --offset 4 --size M=5,V=32003
for k in colsum.tile colsum.cu; do
	emu "fused_$k" "kernels/fused/$k" --size M=130,N=1029 --size M=64,N=1024 --size M=1,N=3
done
# ... and those whose reference is a kernel of the file (in double), run
# here after the kernel on the same inputs (matmul_bias_gelu.tile on the
# emulator's sm_90: mma.sync, its reference as written; its sm_90a wgmma
# below; the hand .cu is for the GPU: scripts/gpu-mbg.sh)
for k in bias_gelu swiglu add_rmsnorm; do
	for x in tile cu; do
		emu "fused_${k}_$x" "kernels/fused/$k.$x" --size M=3,N=4099 --size M=2,N=1000
	done
done
emu fused_matmul_bias_gelu_tile kernels/fused/matmul_bias_gelu.tile --size M=257,N=300,K=201 \
	--size M=130,N=260,K=72 --size M=1,N=3,K=5
for x in tile cu; do
	emu "fused_causal_softmax_$x" "kernels/fused/causal_softmax.$x" --size T=67,M=134,N=67 \
		--size T=1030,M=3,N=1030
	emu "fused_rope_$x" "kernels/fused/rope.$x" --size BH=3,T=7,R=21 --size BH=2,T=9,R=18 \
		--size BH=10,T=5,R=50
done
# the causal mask decides which groups are read: whole-row float4s (N % 4
# == 0) with groups the diagonal cuts, and the streamed three-pass branch
# (rows longer than BLOCK) with whole trips past the diagonal
emu fused_causal_softmax_mask_reads kernels/fused/causal_softmax.tile --size T=68,M=136,N=68
emu fused_causal_softmax_streamed kernels/fused/causal_softmax.tile -D BLOCK=256 -D THREADS=64 \
	--size T=259,M=518,N=259
# ... and as written (`//! arch sm_90a`): the dot lowered to wgmma
# (src/tilegen/lower_wgmma.c) with a producer warpgroup's TMA copies (cp.async
# where a row is no 16-byte multiple: N = 300), the ring's mbarriers,
# persistent blocks (--sm-count 2: two or three tiles a block) and, with
# -D KB_WG_STORE=1 (matmul.tile's default), the epilogue's TMA store from
# swizzled shared buffers, run by the emulator's mbarriers, TMA and named
# barriers (tests/emu/tma_emu.cpp); M, N and K ragged (the store clips at
# the edges), shuffled, warp by warp; pingpong (-D KB_WG_PINGPONG=1, 128 x
# 128 tiles a warpgroup in turns; K = 520: nine trips, past two rounds of
# the ring); matmul.tile's two wgmma shapes
WGF='kernels/fused/matmul_bias_gelu.tile --arch sm_90a --sm-count 2'
WPP='-D THREADS=128 -D BN=128 -D KB_WG_PINGPONG=1'
emu wgmma_mbg $WGF --size M=200,N=264,K=136 --size M=130,N=300,K=72
emu wgmma_mbg_tma_store $WGF -D KB_WG_STORE=1 --size M=200,N=264,K=136 --size M=257,N=520,K=64 \
	--size M=130,N=300,K=72 --size M=1,N=8,K=8
emu wgmma_mbg_tma_store_shuffled $WGF -D KB_WG_STORE=1 --sched shuffle --copies issue --size M=200,N=264,K=136 \
	--size M=130,N=300,K=72
emu wgmma_mbg_tma_store_warp_by_warp $WGF -D KB_WG_STORE=1 --sched warp --size M=200,N=264,K=136
emu wgmma_mbg_tma_store_inline $WGF -D KB_WG_STORE=2 --size M=200,N=264,K=136 --size M=130,N=300,K=72
# -D KB_WG_STORE=3: the TMA store a block at a time (its values packed
# before its buffer's wait, lower_wgepi.c; row (9)'s default is =2), the
# GELU's math on it; and
# -D KB_WG_ROLES=0: both roles in one loop over the programs (the lowering
# before the roles got a loop each)
emu wgmma_mbg_tma_store_chunk $WGF -D KB_WG_STORE=3 --size M=200,N=264,K=136 --size M=257,N=520,K=64 \
	--size M=130,N=300,K=72 --size M=1,N=8,K=8
emu wgmma_mbg_tma_store_chunk_shuffled $WGF -D KB_WG_STORE=3 --sched shuffle --copies issue --size M=257,N=520,K=64
emu wgmma_mbg_tma_store_chunk_pingpong $WGF $WPP -D KB_WG_STORE=3 --sched warp --sm-count 3 --size M=300,N=264,K=520
emu wgmma_mbg_roles_one_loop $WGF -D KB_WG_ROLES=0 --size M=200,N=264,K=136 --size M=130,N=300,K=72
# -D KB_WG_COLS=1: the bias row read once into registers after the loop
emu wgmma_mbg_cols_once $WGF -D KB_WG_COLS=1 --size M=200,N=264,K=136 --size M=257,N=520,K=64 --size M=130,N=300,K=72
emu wgmma_mbg_roles_one_loop_tma_store $WGF -D KB_WG_ROLES=0 -D KB_WG_STORE=1 --size M=257,N=520,K=64
emu wgmma_mbg_pingpong $WGF $WPP --size M=300,N=264,K=520 --size M=130,N=300,K=72 --size M=200,N=136,K=200
emu wgmma_mbg_pingpong_warp_by_warp $WGF $WPP --sm-count 3 --sched warp --size M=300,N=264,K=136
emu wgmma_mbg_pingpong_tma_store $WGF $WPP -D KB_WG_STORE=1 --size M=300,N=264,K=520 --size M=130,N=300,K=72
emu wgmma_matmul kernels/matmul/matmul.tile --arch sm_90a --sm-count 2 --size M=200,N=264,K=136 \
	--size M=130,N=260,K=200
emu wgmma_matmul_bm256 kernels/matmul/matmul.tile --arch sm_90a --sm-count 2 -D BM=256 --size M=300,N=136,K=200
# a dot's epilogue: bias row, tanh, a cast, a [BM, BN] residual load
emu gemm_epilogue tests/emu/gemm_epilogue.tile --size M=130,N=70,K=75 --size M=64,N=64,K=16 \
	--size M=1,N=3,K=5
emu dot_softmax tests/emu/dot_softmax.tile --size M=130,N=50,K=75 --size M=64,N=64,K=16 \
	--size M=1,N=3,K=5
emu dot_colmax tests/emu/dot_colmax.tile --size M=64,N=130,K=75 --size M=64,N=3,K=5
emu dot_causal tests/emu/dot_causal.tile --size M=130,N=50,K=75 --size M=64,N=64,K=16 --size M=3,N=3,K=5
emu dot_store_mask tests/emu/dot_store_mask.tile --size M=130,N=70,K=75 --size M=64,N=64,K=16 \
	--size M=1,N=3,K=5
# attention.tile: two dots in one loop with the online softmax between them,
# in the row layout (lower_rows.c: q packed in registers, s and p in the mma
# accumulator's registers, row statistics by quad shuffles, k and v by
# cp.async and ldmatrix), ragged N, causal and not; misaligned rows take the
# element copy.  -D THREADS=256 -D BM=64 (not 16 rows a warp) keeps the 2-d layout
# (operands, results and [BM, 1] statistics through shared memory).  Its
# default (8 warps, 16 rows a warp, 128 keys a step; on sm_90a 03_fa3.cu's
# roles, below), and T1 (4 warps, the default before 2026-11-28T16Z): two
# row tiles a warp, 128 keys a step at D = 64 (64 at D = 128),
# l's sum folded across the quad after the loop and acc's rescale where
# alpha is assigned (lower_rowacc.c); at D = 64 q in shared memory (its
# registers and s's would be too many).  A1T: one row tile a warp, 64 keys
# (the default before).
AT='kernels/attention/attention.tile'
T1='-D THREADS=128' # one warpgroup (TWS below, the default: two and a producer on sm_90a)
A1T="$T1 -D BM=64 -D BN=64"
emu attention_tile_default $AT --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=1 --size B=1,H=1,N=257,CAUSAL=0 --size B=1,H=1,N=1,CAUSAL=1
emu attention_tile_default_shuffled $AT --sched shuffle --copies issue --offset 2 --size B=1,H=1,N=300,CAUSAL=0 \
	--size B=1,H=1,N=200,CAUSAL=1
emu attention_tile_default_warp_by_warp $AT --sched warp --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_1wg $AT $T1 --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=1 --size B=1,H=1,N=257,CAUSAL=0
# the producer warpgroup's shape (-D THREADS=256: 16 rows a warp, 03_fa3.cu's roles on sm_90a)
TWS='-D THREADS=256'
emu attention_tile_ws $AT $TWS --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=1 --size B=1,H=1,N=257,CAUSAL=0 --size B=1,H=1,N=1,CAUSAL=1
emu attention_tile_ws_shuffled $AT $TWS --sched shuffle --copies issue --offset 2 --size B=1,H=1,N=300,CAUSAL=0 \
	--size B=1,H=1,N=200,CAUSAL=1
emu attention_tile_ws_warp_by_warp $AT $TWS --sched warp --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_ws_d128 $AT $TWS -D HD=128 --size B=1,H=2,N=100,CAUSAL=0,D=128 --size B=2,H=1,N=129,CAUSAL=1,D=128
# KB_COPY_ZFILL 0: a chunk past the tensor copied from the tensor's first
# element (an address selected), not with src-size 0 from its own
[ -n "$SAN" ] || { "$KB" compile --emit-cuda --arch sm_90 "$AT" | sed 's/^#define KB_COPY_ZFILL 1$/#define KB_COPY_ZFILL 0/' \
	>"$T_TMP/copy_select.cu" && grep -q '^#define KB_COPY_ZFILL 0$' "$T_TMP/copy_select.cu" ||
	fail attention_tile_copy_select "KB_COPY_ZFILL not found in the generated CUDA"; }
emu attention_tile_copy_select $AT --cuda "$T_TMP/copy_select.cu" --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=0
emu attention_tile $AT $A1T --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=0 \
	--size B=1,H=2,N=100,CAUSAL=1 --size B=2,H=1,N=129,CAUSAL=1 --size B=1,H=1,N=1,CAUSAL=1 \
	--size B=1,H=1,N=1,CAUSAL=0 --size B=1,H=1,N=256,CAUSAL=1 --size B=1,H=1,N=256,CAUSAL=0
emu attention_tile_warp_by_warp $AT $A1T --sched warp --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_shuffled $AT $A1T --sched shuffle --copies issue --size B=1,H=2,N=300,CAUSAL=0 \
	--size B=1,H=1,N=200,CAUSAL=1
emu attention_tile_misaligned $AT $A1T --offset 2 --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_8warps $AT -D THREADS=256 -D BM=128 -D BN=64 --size B=2,H=1,N=129,CAUSAL=1 --size B=1,H=2,N=100,CAUSAL=0
emu attention_tile_d128 $AT -D HD=128 --size B=1,H=2,N=100,CAUSAL=0,D=128 --size B=2,H=1,N=129,CAUSAL=1,D=128 \
	--size B=1,H=1,N=1,CAUSAL=0,D=128
# -D BM=128 at 4 warps: two m16 row tiles a warp (each B fragment feeds both)
A2T="$T1 -D BM=128 -D BN=64"
emu attention_tile_2tiles $AT $A2T --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=0 \
	--size B=1,H=2,N=100,CAUSAL=1 --size B=2,H=1,N=129,CAUSAL=1 --size B=1,H=1,N=1,CAUSAL=1 \
	--size B=1,H=1,N=1,CAUSAL=0 --size B=1,H=1,N=256,CAUSAL=1 --size B=1,H=1,N=256,CAUSAL=0
emu attention_tile_2tiles_warp_by_warp $AT $A2T --sched warp --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_2tiles_shuffled $AT $A2T --sched shuffle --copies issue --size B=1,H=2,N=300,CAUSAL=0 \
	--size B=1,H=1,N=200,CAUSAL=1
emu attention_tile_2tiles_misaligned $AT $A2T --offset 2 --size B=1,H=2,N=100,CAUSAL=0 \
	--size B=2,H=1,N=129,CAUSAL=1
# at D = 128 q goes to shared memory (its A fragments by ldmatrix)
emu attention_tile_2tiles_d128 $AT $A2T -D HD=128 --size B=1,H=2,N=100,CAUSAL=0,D=128 \
	--size B=2,H=1,N=129,CAUSAL=1,D=128 --size B=1,H=1,N=1,CAUSAL=0,D=128 --size B=1,H=1,N=256,CAUSAL=1,D=128
emu attention_tile_2tiles_d128_warp_misaligned $AT $A2T -D HD=128 --sched warp --offset 2 \
	--size B=2,H=1,N=129,CAUSAL=1,D=128
emu attention_tile_2tiles_d128_shuffled $AT $A2T -D HD=128 --sched shuffle --copies issue \
	--size B=1,H=1,N=200,CAUSAL=1,D=128
emu attention_tile_2d $AT -D THREADS=256 -D BM=64 -D BN=64 --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_2d_d128 $AT -D THREADS=256 -D BM=64 -D BN=64 -D HD=128 --size B=1,H=2,N=100,CAUSAL=1,D=128
# ... and on sm_90a (the file's `//! arch sm_90a`; the emulator takes sm_90
# unless --arch says) its dots are wgmma (lower_rowwg.c), run by the
# emulator from PTX's semantics (register fragments, matrix descriptors, the
# 128-byte swizzle): the default (8 warps, 03_fa3.cu's two warpgroups of 64
# rows and a producer, below), D = 128, T1 (one warpgroup: two m64 pieces a
# warpgroup, q in shared memory), one tile a warp, misaligned rows (the
# element copy, swizzled), shuffled, warp by warp, copies at issue; -D
# KB_WGMMA=0 keeps mma.sync there
WG='--arch sm_90a'
emu attention_tile_wgmma $AT $WG --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=1
emu attention_tile_wgmma_shuffled $AT $WG --sched shuffle --copies issue --offset 2 \
	--size B=1,H=1,N=300,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_wgmma_warp_by_warp $AT $WG --sched warp --size B=2,H=1,N=129,CAUSAL=1
emu attention_tile_wgmma_d128 $AT $WG -D HD=128 --size B=1,H=2,N=100,CAUSAL=0,D=128 \
	--size B=2,H=1,N=129,CAUSAL=1,D=128 --size B=1,H=1,N=300,CAUSAL=1,D=128
emu attention_tile_wgmma_d128_misaligned $AT $WG -D HD=128 --sched warp --offset 2 --size B=2,H=1,N=129,CAUSAL=1,D=128
emu attention_tile_wgmma_1wg $AT $WG $T1 --size B=1,H=2,N=100,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=1
emu attention_tile_wgmma_1wg_d128 $AT $WG $T1 -D HD=128 --sched warp --offset 2 --size B=2,H=1,N=129,CAUSAL=1,D=128 \
	--size B=1,H=2,N=100,CAUSAL=0,D=128
emu attention_tile_wgmma_2wg $AT $WG -D THREADS=256 -D BM=128 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=2,N=300,CAUSAL=0
emu attention_tile_wgmma_2wg_d128 $AT $WG -D THREADS=256 -D BM=128 -D HD=128 --sched shuffle --copies issue \
	--size B=2,H=1,N=129,CAUSAL=1,D=128 --size B=1,H=2,N=300,CAUSAL=0,D=128
# threads(256) with one row tile a warp (two warpgroups of 64 rows):
# 03_fa3.cu's roles (lower_rowwg.c), a producer warpgroup filling k's and
# v's rings (lower_rowwg_tma.c: TMA boxes by one thread, each stage's full
# and empty mbarriers), the consumers taking turns at the tensor cores on
# named barriers; D = 64 and 128, 128 keys a step, ragged (N = 1000, 1025:
# one key in the last trip, the rings wrapped four times), causal, one trip
# and several, several heads (TMA reads [B, H, N, D] as rows), shuffled,
# warp by warp, copies at issue, misaligned rows (no tensormap: the
# producer's cp.async and element copies), -D KB_TMA=0 (cp.async at aligned
# rows), overlapped or not; -D KB_WG_WS=0 keeps every thread copying
AWS="-D THREADS=256 -D BM=128 -D BN=128"
emu attention_tile_wgmma_ws $AT $WG $AWS --size B=1,H=1,N=300,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=1,CAUSAL=0 --size B=1,H=1,N=1000,CAUSAL=1 --size B=1,H=2,N=128,CAUSAL=1 \
	--size B=1,H=1,N=1000,CAUSAL=0 --size B=1,H=2,N=1025,CAUSAL=0
emu attention_tile_wgmma_ws_d128_ragged $AT $WG $AWS -D HD=128 --size B=1,H=1,N=1000,CAUSAL=1,D=128 \
	--size B=2,H=1,N=1000,CAUSAL=0,D=128 --size B=1,H=1,N=1025,CAUSAL=1,D=128
emu attention_tile_wgmma_ws_cp_async $AT $WG $AWS -D KB_TMA=0 --sched shuffle --size B=1,H=1,N=1000,CAUSAL=1 \
	--size B=2,H=1,N=300,CAUSAL=0
emu attention_tile_wgmma_ws_d128 $AT $WG $AWS -D HD=128 --sched shuffle --copies issue --offset 2 \
	--size B=1,H=1,N=300,CAUSAL=0,D=128 --size B=2,H=1,N=129,CAUSAL=1,D=128 --size B=1,H=1,N=257,CAUSAL=1,D=128
emu attention_tile_wgmma_ws_warp $AT $WG $AWS --sched warp --offset 2 --size B=1,H=1,N=385,CAUSAL=0 \
	--size B=1,H=1,N=200,CAUSAL=1
emu attention_tile_wgmma_ws_waited $AT $WG $AWS -D KB_WG_OVERLAP=0 --sched shuffle --size B=1,H=1,N=300,CAUSAL=1 \
	--size B=1,H=1,N=129,CAUSAL=0
emu attention_tile_wgmma_ws_off $AT $WG $AWS -D KB_WG_WS=0 --size B=1,H=1,N=300,CAUSAL=1
emu attention_tile_wgmma_1tile $AT $WG $A1T --offset 2 --size B=2,H=1,N=129,CAUSAL=1 --size B=1,H=2,N=100,CAUSAL=0
emu attention_tile_wgmma_off $AT $WG -D KB_WGMMA=0 --size B=2,H=1,N=129,CAUSAL=1
# D = 128 overlapped (lower_rowwg.c, 03_fa3.cu's OVERLAP): S of a trip,
# then the last trip's P V behind it, v of the next trip copied once that
# is done; one trip (N = 1, 64), two (65, 129), ragged ends; the 2wg shape
# and 64 keys a step at D = 64 overlap too; -D KB_WG_OVERLAP=0 waits
emu attention_tile_wgmma_d128_ovl $AT $WG $T1 -D HD=128 --sched shuffle --copies issue --offset 2 \
	--size B=1,H=1,N=1,CAUSAL=0,D=128 --size B=1,H=1,N=64,CAUSAL=1,D=128 --size B=1,H=1,N=65,CAUSAL=0,D=128 \
	--size B=2,H=1,N=129,CAUSAL=1,D=128 --size B=1,H=1,N=257,CAUSAL=0,D=128
# one warpgroup at D = 64 with 96 keys a step (without 128's 56 B of
# spills): a trip's keys no multiple of 64, ragged ends (97, 193, 1000),
# overlapped; with 128 each dot is waited for
emu attention_tile_wgmma_bn96 $AT $WG $T1 -D BN=96 --sched shuffle --copies issue --offset 2 --size B=1,H=1,N=97,CAUSAL=0 \
	--size B=1,H=1,N=96,CAUSAL=1 --size B=1,H=1,N=193,CAUSAL=1 --size B=1,H=1,N=1000,CAUSAL=1
emu attention_tile_wgmma_bn128 $AT $WG $T1 -D BN=128 --sched warp --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=1,N=300,CAUSAL=0
emu attention_tile_wgmma_bn64_ovl $AT $WG $T1 -D BN=64 --sched warp --size B=2,H=1,N=129,CAUSAL=1 \
	--size B=1,H=2,N=300,CAUSAL=0
emu attention_tile_wgmma_d128_ovl_off $AT $WG $T1 -D HD=128 -D KB_WG_OVERLAP=0 --size B=2,H=1,N=129,CAUSAL=1,D=128 \
	--size B=1,H=1,N=257,CAUSAL=0,D=128
# a dot's b copied where the dot is, f16, a start x * 0.5, on wgmma (BK = 64: a swizzle row)
emu dot_rows_here_wgmma tests/emu/dot_rows_here.tile $WG -D BK=64 --size M=130,N=70,K=75 --size M=100,N=129,K=150
emu dot_rows_here_wgmma_2wg tests/emu/dot_rows_here.tile $WG -D BK=64 -D THREADS=256 -D BM=128 --sched shuffle \
	--copies issue --size M=130,N=70,K=75
# the same dot alone: a register operand, f16, 2 to 8 warps, 12 pieces over 8
emu dot_regs tests/emu/dot_regs.tile --size M=130,N=70,K=75 --size M=1,N=3,K=5
emu dot_regs_8warps tests/emu/dot_regs.tile -D THREADS=256 -D BM=32 -D BN=48 -D BK=32 --size M=100,N=97,K=70
emu rows_mix tests/emu/rows_mix.tile --size M=100,N=29,K=75 --size M=64,N=32,K=64 --size M=1,N=1,K=1
# row sums folded after their loop, a dot's start rescaled where its factor is assigned (lower_rowacc.c)
# stores two slots (columns c, c + 1) at a time where the row's start is
# aligned to the pair (lower_rowio.c): f32 pairs at even N, the column
# mask cutting the last pair or not; at odd N and --offset 4 every element
# alone
emu rows_mix_store_pairs tests/emu/rows_mix.tile --size M=100,N=30,K=75 --size M=64,N=26,K=64 \
	--size M=3,N=2,K=7
emu rows_mix_store_pairs_misaligned tests/emu/rows_mix.tile --offset 4 --size M=100,N=30,K=75
emu rows_acc tests/emu/rows_acc.tile --size M=100,N=29,K=75 --size M=64,N=32,K=32 --size M=3,N=5,K=7
emu rows_acc_2tiles tests/emu/rows_acc.tile -D BM=128 --sched shuffle --copies issue --size M=130,N=29,K=75
emu dot_rows_here tests/emu/dot_rows_here.tile --size M=130,N=70,K=75 --size M=64,N=64,K=64 --size M=1,N=3,K=5
# the same with two row tiles a warp (-D BM=128 at 4 warps): x packed and read back, the bias row, the
# [M, 1] column, kept reductions and the stores
emu rows_mix_2tiles tests/emu/rows_mix.tile -D BM=128 --size M=100,N=29,K=75 --size M=200,N=32,K=64 \
	--size M=1,N=1,K=1
emu dot_rows_here_2tiles tests/emu/dot_rows_here.tile -D BM=128 --size M=130,N=70,K=75 --size M=1,N=3,K=5
emu dot_regs_2warps tests/emu/dot_regs.tile -D THREADS=64 -D BM=16 -D BN=64 -D BK=32 --size M=33,N=65,K=64
for k in transpose.tile transpose.cu; do
	emu "fused_$k" "kernels/fused/$k" --size M=1030,N=13 --size M=64,N=96 --size M=5,N=3
	emu "fused_${k}_misaligned" "kernels/fused/$k" --offset 4 --size M=1030,N=13
done

# A file of two kernels: the one its //! kernel line picks gets the launch.
emu two_kernels tests/tile/corpus/two_kernels.tile --size N=1000 --size N=4097

# .cu files run as written, after their tune values (and -D) as #defines:
# the gallery's kernels (cache-hinted loads and stores, a 2-d block, static
# shared memory, bf16); VPT=8 at N=16390 is wrong unless the -D reaches
# the code as it reaches the launch line.  A .ptx file has no CUDA to run.
emu cu_vector_add kernels/vector_add.cu --size n=1000 --size n=1
emu cu_softmax kernels/softmax/05_registers.cu --size M=3,N=1000 --size M=2,N=5003
emu cu_softmax_vpt8 kernels/softmax/05_registers.cu -D VPT=8 --size M=1,N=16390 --size M=2,N=5003
emu cu_transpose kernels/transpose/03_tile64.cu --size R=130,C=70 --size R=128,C=256
emu cu_layernorm_bf16 kernels/layernorm/layernorm_bf16.cu --size M=3,N=1000 --size M=2,N=5003
# the any-width kernels (a scalar head to each row's first 16-byte boundary,
# whole uint4 or float4, a scalar tail; the norms' weights shifted into
# the row's alignment): widths of every residue, rows shorter than a head,
# GPT-2's 50257 at VPT=8, and buffers off 16 bytes (the offsets per row
# change, and the weights' differ from the rows')
for f in softmax/softmax_bf16_aligned layernorm/layernorm_bf16_aligned rmsnorm/rmsnorm_bf16_aligned \
	reduce/03_aligned reduce/row_sum_bf16_aligned reduce/row_max_f32_aligned reduce/row_max_bf16_aligned \
	reduce/col_sum_f32 reduce/col_sum_bf16; do
	emu "cu_$(basename $f)" kernels/$f.cu --size M=9,N=5003 --size M=5,N=13 --size M=3,N=1 --size M=3,N=4099 \
		--size M=2,N=4096
done
for f in softmax/softmax_bf16_aligned layernorm/layernorm_bf16_aligned rmsnorm/rmsnorm_bf16_aligned \
	reduce/row_sum_bf16_aligned; do
	emu "cu_$(basename $f)_off" kernels/$f.cu --offset 4 --size M=5,N=1003 --size M=3,N=4096
done
emu cu_transpose_bf16_aligned kernels/transpose/transpose_bf16_aligned.cu --size R=256,C=5003 --size R=130,C=70 --size R=128,C=4096
# a warp a row (ROWS = 8: a last block part empty), and the sum across rows
# with 16-byte loads at every row offset (CLUSTER = 1: the emulator has no
# clusters)
for f in row_sum_bf16_aligned row_max_bf16_aligned; do
	emu "cu_${f}_rows8" kernels/reduce/$f.cu -D ROWS=8 --size M=9,N=5003 --size M=13,N=4099 --size M=11,N=7 \
		--size M=3,N=1 --size M=2,N=4096
done
emu cu_col_sum_bf16_vec kernels/reduce/col_sum_bf16_vec.cu -D CLUSTER=1 --size M=100,N=5003 --size M=33,N=7 \
	--size M=70,N=1 --size M=41,N=4093 --size M=3,N=50257 --size M=24,N=256
emu cu_col_sum_bf16_vec_512 kernels/reduce/col_sum_bf16_vec.cu -D CLUSTER=1 -D THREADS=512 --size M=100,N=5003 \
	--size M=33,N=7
# the gallery's deeper variants: U = 8 (several trips of 8 rows a warp, then
# fewer than 8 left), UNROLL = 16 (16 x 32 rows a trip, then the one-row loop)
emu cu_col_sum_bf16_vec_u8 kernels/reduce/col_sum_bf16_vec.cu -D CLUSTER=1 -D U=8 --size M=300,N=5003 --size M=97,N=4093 \
	--size M=33,N=7 --size M=70,N=1
emu cu_col_sum_f32_unroll16 kernels/reduce/col_sum_f32.cu -D UNROLL=16 --size M=1000,N=37 --size M=515,N=5003 \
	--size M=3,N=13
# f32 with float4 loads from each row class's 16-byte boundary (rows m and
# m + 4 share it): every N mod 4, N < 4 (the last rows' chunks pass x's
# end), a strip part empty, 512 / 1024 / 128 threads
emu cu_col_sum_f32_vec kernels/reduce/col_sum_f32_vec.cu -D CLUSTER=1 --size M=100,N=5003 --size M=33,N=7 \
	--size M=70,N=1 --size M=41,N=4093 --size M=3,N=50257 --size M=24,N=256 --size M=9,N=2 --size M=130,N=3
emu cu_col_sum_f32_vec_1024 kernels/reduce/col_sum_f32_vec.cu -D CLUSTER=1 -D THREADS=1024 --size M=100,N=5003 \
	--size M=33,N=7 --size M=9,N=2
emu cu_col_sum_f32_vec_128 kernels/reduce/col_sum_f32_vec.cu -D CLUSTER=1 -D THREADS=128 -D U=2 --size M=100,N=5003 \
	--size M=41,N=4093 --size M=130,N=3
emu cu_layernorm_bf16_aligned_vpt8 kernels/layernorm/layernorm_bf16_aligned.cu -D VPT=8 --size M=2,N=50257 --size M=2,N=7
# issue 31's gallery candidates: the bf16 output loop at compile-time heads
# (every head at N = 5003 and 4099, N < 8, buffers off 16 bytes: the loop
# above), and the f32 row at VPT = 8 (512 threads at 16384, the scalar path)
emu cu_layernorm_bf16_aligned_out kernels/layernorm/layernorm_bf16_aligned.cu -D OUT=1 --size M=16,N=5003 \
	--size M=9,N=4099 --size M=5,N=13 --size M=9,N=7 --size M=3,N=1 --size M=2,N=4096 --size M=2,N=8
emu cu_layernorm_bf16_aligned_out_off kernels/layernorm/layernorm_bf16_aligned.cu -D OUT=1 --offset 4 --size M=5,N=1003
# MAXR's register cap (compiled away here) and FZ = 1's fma form, every
# head, N < 8, off 16 bytes
emu cu_layernorm_bf16_aligned_fz kernels/layernorm/layernorm_bf16_aligned.cu -D OUT=1 -D FZ=1 -D MAXR=48 \
	--size M=16,N=5003 --size M=9,N=4099 --size M=5,N=13 --size M=9,N=7 --size M=3,N=1 --size M=2,N=4096
emu cu_layernorm_bf16_aligned_fz_off kernels/layernorm/layernorm_bf16_aligned.cu -D FZ=1 --offset 4 --size M=5,N=1003 \
	--size M=3,N=5
# the two-pass norms (the row read again from cache: createpolicy and
# ld.global with an L2 cache hint, run here as plain reads), a row in one
# step, in several, and with a remainder of single loads
for f in rmsnorm/05_twopass layernorm/08_twopass rmsnorm/rmsnorm_bf16_twopass layernorm/layernorm_bf16_twopass; do
	emu "cu_$(basename $f)" kernels/$f.cu -D THREADS=64 -D U=2 -D U2=2 --size M=3,N=4096 --size M=2,N=8 \
		--size M=4,N=1288
done
emu cu_layernorm_vpt8 kernels/layernorm/02_registers.cu -D VPT=8 --size M=2,N=16384 --size M=3,N=5003 --size M=2,N=13
# issue 31's cluster-split LayerNorm with CLUSTER = 1 (the emulator has no
# clusters: the exchange is then a block's own pair): every head and tail,
# N < a vector, the shift K at every residue, 5 warps (no power of two),
# buffers off 16 bytes (w and b by load4/load8, not the compile-time heads)
for f in 06_cluster layernorm_bf16_cluster; do
	emu "cu_$f" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=8 --size M=9,N=5003 --size M=5,N=13 \
		--size M=3,N=1 --size M=3,N=4099 --size M=2,N=4096 --size M=9,N=7
	emu "cu_${f}_off" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=4 --offset 4 --size M=5,N=503
	# PIPE = 1: 2 or 3 persistent blocks, rows past their first two from the
	# counter (odd rows: a new head each row), the next row's slice loaded
	# before this one's sums and output
	emu "cu_${f}_pipe" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=8 -D PIPE=1 -D WAVE=2 \
		--size M=9,N=5003 --size M=5,N=13 --size M=1,N=5003 --size M=3,N=4099 --size M=2,N=4096 --size M=9,N=7
	emu "cu_${f}_pipe_off" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=4 -D MINB=2 -D PIPE=1 \
		-D WAVE=3 --offset 4 --size M=7,N=503
	# WSM = 1: w and b from the block's shared-memory window, every head
	# (odd rows) shifted out of it; LOOK = 0: the next row loaded after the
	# output; WAVE = 0: sm_count x MINB / CLUSTER blocks; off 16 bytes: the
	# windows filled element by element
	emu "cu_${f}_wsm" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=8 -D PIPE=1 -D LOOK=0 -D WSM=1 \
		-D WAVE=0 --sm-count 2 --size M=9,N=5003 --size M=5,N=13 --size M=1,N=5003 --size M=3,N=4099 \
		--size M=2,N=4096 --size M=9,N=7
	emu "cu_${f}_wsm_look" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=8 -D PIPE=1 -D WSM=1 \
		-D WAVE=2 --size M=9,N=5003 --size M=9,N=7
	emu "cu_${f}_wsm_off" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=160 -D VPT=4 -D PIPE=1 -D LOOK=0 \
		-D WSM=1 -D WAVE=3 --offset 4 --size M=7,N=503
done
# the bf16 file's output at FZ = 0 and UNP = 0 (its defaults: the one-fma
# form, the shift unpack), and
# the window at VPT = 7 (a slice in 7 vectors a thread, the last one used: every head)
emu cu_layernorm_bf16_cluster_fz0 kernels/layernorm/layernorm_bf16_cluster.cu -D CLUSTER=1 -D THREADS=160 -D VPT=8 -D UNP=0 \
	-D FZ=0 --size M=9,N=5003 --size M=3,N=4099
emu cu_layernorm_bf16_cluster_vpt7 kernels/layernorm/layernorm_bf16_cluster.cu -D CLUSTER=1 -D THREADS=160 -D VPT=7 \
	-D PIPE=1 -D LOOK=0 -D WSM=1 -D WAVE=0 --sm-count 2 --size M=9,N=5003 --size M=5,N=13 --size M=3,N=4099
emu cu_06_cluster_vpt7 kernels/layernorm/06_cluster.cu -D CLUSTER=1 -D THREADS=96 -D VPT=7 -D PIPE=1 -D LOOK=0 \
	-D WSM=1 -D WAVE=0 --sm-count 2 --size M=9,N=2601 --size M=5,N=13 --size M=3,N=2600
# issue 31's persistent LayerNorm, w and b resident in shared memory, at
# CLUSTER = 1, on a copy whose default N is 5003 (the launch check reads the
# defaults, and one block's w and b at 50257 exceed shared memory) and whose
# L2 prefetch does nothing (the emulator has none): 1 to 4 blocks (sm_count
# x MINB: a block's first NB + PF rows, then the row counter), every head,
# N < a vector, 2, 3 and 5 warps, buffers off 16 bytes; NB = 3 (the sets
# in turn) with PF = 0 and 2 (the rows known further ahead)
for f in 09_resident layernorm_bf16_resident; do
	sed -e 's|^//! arg     N = 50257|//! arg     N = 5003|' \
		-e 's/asm volatile("prefetch.global.L2 \[%0\];" ::"l"(p));/(void)p;/' kernels/layernorm/$f.cu >"$T_TMP/$f.cu"
	grep -q '(void)p;' "$T_TMP/$f.cu" && pass "cu_${f}_copy" || fail "cu_${f}_copy" "the prefetch is not stubbed"
	emu "cu_$f" "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=160 -D VPT=8 --sm-count 1 --size M=9,N=5003 --size M=5,N=13 \
		--size M=3,N=1 --size M=3,N=4099 --size M=2,N=4096 --size M=9,N=7 --size M=11,N=15
	emu "cu_${f}_one_block" "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=64 -D VPT=4 -D MINB=1 --sm-count 1 --sched warp \
		--size M=9,N=767 --size M=7,N=503
	emu "cu_${f}_off" "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=160 -D VPT=4 --sm-count 2 --offset 4 --size M=7,N=503 \
		--size M=9,N=1533
	emu "cu_${f}_shuffle" "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=96 -D VPT=2 --sm-count 1 --offset 8 --sched shuffle \
		--seed 3 --size M=9,N=767 --size M=11,N=15
	for pf in 0 2; do
		emu "cu_${f}_nb3_pf$pf" "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=160 -D VPT=8 -D NB=3 -D PF=$pf --sm-count 1 \
			--size M=9,N=5003 --size M=5,N=13 --size M=1,N=4099 --size M=11,N=15
		emu "cu_${f}_nb3_pf${pf}_warp" "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=64 -D VPT=4 -D MINB=1 -D NB=3 -D PF=$pf \
			--sm-count 1 --sched warp --size M=9,N=767 --size M=2,N=767
	done
done
# the rings (softmax/09_ring.cu's mbarrier ring: a producer warp's bulk
# copies into NSLOT slots, the consumers' named barrier) at CLUSTER = 1 (the
# emulator's cluster is one block), 2 consumer warps and the producer: one
# block takes every row from the counter (M = 9: the ring wraps), every head
# and tail, N < a vector, one element, a slice of 10 chunks in 13 slots
# (5003); issue 31's 07_ring.cu and layernorm_bf16_ring2.cu also with w and
# b a chunk ahead, 32 KiB chunks, buffers off 16 bytes (w and b element by
# element), copies at issue with shuffled threads, and W = 0 (no w or b
# read) on a copy whose spec has w = ones, b = zeros
RS='--size M=9,N=5003 --size M=5,N=13 --size M=3,N=1 --size M=9,N=7 --size M=3,N=4099 --size M=2,N=4096'
for f in layernorm/07_ring layernorm/layernorm_bf16_ring2 softmax/09_ring softmax/softmax_bf16_ring rmsnorm/04_ring \
	layernorm/04_ring layernorm/layernorm_bf16_ring; do
	# shellcheck disable=SC2086 # the sizes, split on purpose
	emu "cu_ring_$(echo "$f" | tr / _)" kernels/$f.cu -D CLUSTER=1 -D THREADS=64 $RS
done
for f in 04_ring layernorm_bf16_ring; do
	emu "cu_ring_${f}_sums" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 -D OUT=1 -D SUMS=1 --size M=9,N=5003 \
		--size M=9,N=7 --size M=3,N=1
done
for f in 07_ring layernorm_bf16_ring2; do
	emu "cu_${f}_wpf" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 -D WPF=1 --size M=9,N=5003 --size M=9,N=7 \
		--size M=3,N=4099
	emu "cu_${f}_u4" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 -D U=4 -D NSLOT=7 --size M=9,N=5003 \
		--size M=9,N=7 --size M=3,N=1
	emu "cu_${f}_off" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 --offset 4 --size M=5,N=503
	emu "cu_${f}_issue" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 --copies issue --sched shuffle --seed 5 \
		--size M=9,N=5003
	sed -e 's/^\(\/\/! in *w : [a-z0-9]*\[N\]\) = .*/\1 = ones/' -e 's/^\(\/\/! in *b : [a-z0-9]*\[N\]\) = .*/\1 = zeros/' \
		kernels/layernorm/$f.cu >"$T_TMP/${f}_w0.cu"
	emu "cu_${f}_w0" "$T_TMP/${f}_w0.cu" -D CLUSTER=1 -D THREADS=64 -D W=0 --size M=9,N=5003 --size M=9,N=7
done
# w and b from the rank's window in shared memory (WS = 1, loaded once a
# launch; bf16 WS = 2: as f32): every head, N = 1, 7, 13, 5003, and buffers off 16 bytes
for f in 07_ring layernorm_bf16_ring2; do
	# shellcheck disable=SC2086 # the sizes, split on purpose
	emu "cu_${f}_ws" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 -D WS=1 $RS
	emu "cu_${f}_ws_off" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 -D WS=1 --offset 4 --size M=5,N=503 \
		--size M=9,N=5003
	emu "cu_${f}_ws_issue" kernels/layernorm/$f.cu -D CLUSTER=1 -D THREADS=64 -D WS=1 -D U=4 -D NSLOT=7 \
		--copies issue --sched shuffle --seed 5 --size M=9,N=5003
done
# shellcheck disable=SC2086 # the sizes, split on purpose
emu cu_layernorm_bf16_ring2_ws2 kernels/layernorm/layernorm_bf16_ring2.cu -D CLUSTER=1 -D THREADS=64 -D WS=2 $RS
emu cu_layernorm_bf16_ring2_ws2_off kernels/layernorm/layernorm_bf16_ring2.cu -D CLUSTER=1 -D THREADS=64 -D WS=2 \
	--offset 4 --size M=5,N=503 --size M=9,N=5003
# kernels/gemm, the hand-written tensor-core steps: a tail in every dim
# (75, 70: no multiple of 8, so the scalar copies), rows 16-byte aligned
# (the cp.async copies, zero-filled past M, N and K), K = 0 and K = 8,
# several K trips through 03's stages, its 256 x 128 tile at BK = 64, ten tile rows of
# the raster, copies landing at issue with shuffled threads, and buffers off
# 16 bytes (the scalar path again).
emu gemm_01 kernels/gemm/01_smem.cu --size S=200 --size M=130,N=70,K=75
emu gemm_02 kernels/gemm/02_mma.cu --size M=130,N=264,K=200 --size M=130,N=70,K=75 --size M=77,N=136,K=8
emu gemm_02_64 kernels/gemm/02_mma.cu -D BM=64 -D BN=64 -D BK=64 --size M=130,N=200,K=136
G3=kernels/gemm/03_pipeline.cu
emu gemm_03 $G3 --size M=300,N=264,K=328 --size M=200,N=200,K=200 --size M=130,N=70,K=75 \
	--size M=64,N=64,K=0
emu gemm_03_256x128_bk64 $G3 -D BM=256 -D BK=64 -D STAGES=3 --size M=300,N=264,K=328 --size M=100,N=72,K=40
emu gemm_03_raster $G3 --size M=1300,N=264,K=40
emu gemm_03_copies_at_issue $G3 --copies issue --sched shuffle --seed 7 --size M=130,N=264,K=200
emu gemm_03_misaligned $G3 --offset 2 --size M=130,N=136,K=96
# kernels/attention: N no multiple of the tiles (masked key and query
# tails), several key steps through the two buffers, causal or not, both
# head dims and block heights, two row tiles a warp (MT, the default) and
# one (as before: Q in registers, exp2f, O rescaled every step), 32- and
# 128-key steps, copies at issue with shuffled threads.
A2=kernels/attention/02_fa2.cu
emu attn_01 kernels/attention/01_naive.cu --size N=77,B=2,H=1,CAUSAL=1 --size N=100,B=1,H=2,CAUSAL=0
emu attn_02 $A2 --size N=200,B=2,H=1,CAUSAL=1 --size N=100,B=1,H=2,CAUSAL=0
emu attn_02_d64_bm64 $A2 -D D=64 -D BM=64 --size N=200,B=1,H=2,CAUSAL=0 --size N=129,B=1,H=1,CAUSAL=1
emu attn_02_mt2 $A2 -D MT=2 -D BN=32 --size N=300,B=1,H=1,CAUSAL=1 --size N=150,B=1,H=2,CAUSAL=0
emu attn_02_mt1_as_before $A2 -D MT=1 -D QREG=1 -D EX2=0 -D LAZY=0 -D CSKIP=0 -D XADDR=0 -D OSTAGE=0 \
	-D TREE=0 --size N=200,B=1,H=1,CAUSAL=1 --size N=129,B=1,H=1,CAUSAL=0
emu attn_02_d64_bn128 $A2 -D D=64 -D BN=128 --size N=300,B=1,H=1,CAUSAL=1 --size N=1,B=1,H=1,CAUSAL=0
# its default at D = 64 (the tune line's BN = 0): 128 keys a step
emu attn_02_d64_default $A2 -D D=64 --size N=300,B=1,H=1,CAUSAL=1 --size N=257,B=1,H=1,CAUSAL=0
emu attn_02_copies_at_issue $A2 -D D=64 --copies issue --sched shuffle --seed 3 --size N=150,B=1,H=1,CAUSAL=1
# the defaults of one head dim at the other: at D = 128 O stored through
# the warp's Q rows (OSTAGE), a row's max and sum as trees (TREE), the lazy
# rescale; at D = 64 none of them
emu attn_02_d128_defaults_at_d64 $A2 -D D=64 -D OSTAGE=1 -D TREE=3 -D LAZY=1 --copies issue \
	--sched shuffle --seed 5 --size N=200,B=2,H=1,CAUSAL=1 --size N=129,B=1,H=2,CAUSAL=0
emu attn_02_d64_defaults_at_d128 $A2 -D OSTAGE=0 -D TREE=0 -D LAZY=0 --size N=200,B=1,H=1,CAUSAL=1 \
	--size N=77,B=1,H=1,CAUSAL=0
emu attn_02_tree_max_only $A2 -D TREE=1 --size N=300,B=1,H=1,CAUSAL=1
[ -n "$SAN" ] || start cu_ptx 'a .ptx file has no CUDA to run here' "$EMU" --work "$W" kernels/saxpy.ptx --size n=10

# From any directory, without --emu-dir, --runtime or --work: the driver
# finds its own files (issue 25: "cuda_emu.h: No such file" outside the checkout).
mkdir -p "$T_TMP/elsewhere"
[ -n "${KBENCH_SANITIZE:-}" ] || start emu_any_dir "" sh -c 'cd "$1" && shift && exec "$@"' sh \
	"$T_TMP/elsewhere" "$EMU" "$PWD/kernels/vector_add.cu" --size n=1000

# Mutants: the emulator must reject each one-line mistake.
# mutant NAME SED-EXPR WANT TILE [-D ...] --size ...: TILE's generated CUDA,
# edited by SED-EXPR, must fail with WANT in the report.
mutant() {
	name=mutant_$1 expr=$2 want=$3
	shift 3
	defs=$(echo " $*" | grep -o ' -D [^ ]*' | tr '\n' ' ')
	arch=$(echo " $*" | grep -o ' --arch [^ ]*' || echo ' --arch sm_90') # the emulator's, unless ARGS say
	"$KB" compile --emit-cuda $arch $defs "$1" >"$T_TMP/orig.cu" 2>"$T_TMP/err"
	sed "$expr" "$T_TMP/orig.cu" >"$T_TMP/$name.cu"
	if cmp -s "$T_TMP/orig.cu" "$T_TMP/$name.cu"; then
		fail "$name" "the edit $expr changed nothing: update the mutant to the lowering"
		return
	fi
	[ -z "$SAN" ] || { pass "${name}_lowered"; return; }
	start "$name" "$want" "$EMU" --work "$W" "$@" --cuda "$T_TMP/$name.cu"
}
# mutant_cu NAME SED-EXPR WANT FILE [ARGS...]: a .cu file edited by SED-EXPR.
mutant_cu() {
	[ -z "$SAN" ] || return 0
	name=mutant_$1 expr=$2 want=$3 file=$4
	shift 4
	sed "$expr" "$file" >"$T_TMP/$name.cu"
	if cmp -s "$file" "$T_TMP/$name.cu"; then
		fail "$name" "the edit $expr changed nothing: update the mutant to $file"
		return
	fi
	start "$name" "$want" "$EMU" --work "$W" "$T_TMP/$name.cu" "$@"
}
G3S='--size M=130,N=264,K=200'
mutant_cu gemm_03_wait_too_short 's/cp_async_wait<STAGES - 2>();$/cp_async_wait<STAGES - 1>();/' \
	'is in flight' $G3 $G3S
mutant_cu gemm_03_b_unswizzled 's/xb = (lane \/ 16) ^ (lane % 8);/xb = lane \/ 16;/' 'elements wrong' $G3 $G3S
AS='-D D=64 -D BM=64 --size N=200,B=1,H=1,CAUSAL=1'
mutant_cu attn_02_no_causal_mask 's/(CAUSAL \&\& key > row)/(0 \&\& key > row)/' 'elements wrong' $A2 $AS
mutant_cu attn_02_ostage_no_syncwarp 's/__syncwarp(); \/\* every/; \/* every/' 'elements wrong' $A2 \
	--copies issue --sched shuffle --seed 3 --size N=200,B=1,H=1,CAUSAL=1
mutant_cu attn_02_no_rescale 's/acc\[mt\]\[t\]\[2 \* h\] \*= corr\[mt\]\[h\];/;/' 'elements wrong' $A2 $AS
mutant_cu attn_02_rescale_never 's/warp_any(grew)/warp_any(false)/' 'elements wrong' $A2 -D LAZY=1 $AS
mutant_cu attn_02_v_unswizzled 's/tv + (voff ^ (t << 4))/tv + 2 * ((8 * (lane \/ 8 % 2) + lane % 8) * D + 8 * (t + lane \/ 16))/' \
	'elements wrong' $A2 $AS
mutant_cu attn_02_no_refill_barrier 's|__syncthreads(); /\* this buffer is refilled|/* this buffer is refilled|' \
	'with no __syncthreads between' $A2 --sched warp --size N=200,B=1,H=1,CAUSAL=0
# the rings: consumers that never wait for their slot's copy (a bulk copy
# lands at the first wait on its mbarrier, so the slot still holds the
# block-start NaNs, and the producer's next copy finds the phase open);
# 07_ring.cu with w and b unshifted at rows off a boundary; consumers that
# never release a slot (the producer waits for it: a deadlock, not a hang)
R7=kernels/layernorm/07_ring.cu
mutant_cu ring_read_before_wait 's/^\tbar_wait(smem(\&r.full\[sl\]), (q \/ NSLOT) \& 1);/\t;/' 'more arrivals than' $R7 \
	-D CLUSTER=1 -D THREADS=64 --size M=9,N=5003
mutant_cu ring_weights_unshifted 's/shiftv<(H < 0 ? 0 : H)>(cur\[k\].wa/shiftv<0>(cur[k].wa/' 'elements wrong' $R7 \
	-D CLUSTER=1 -D THREADS=64 --size M=9,N=5003
mutant_cu ring_no_release 's/bar_arrive(smem(\&r.empty\[q % NSLOT\]));/;/' 'deadlock' $R7 \
	-D CLUSTER=1 -D THREADS=64 --size M=9,N=5003
# the resident LayerNorm (its N = 5003 copies above): one slot of pairs
# for every row (a warp run ahead stores row i + 1's pair over row i's),
# w and b unshifted at rows off a boundary, the slice of w and b without
# its padding vector (the shifted pair's second reads NaNs), NB = 3's
# second row loaded into the set the next row is in
for f in 09_resident layernorm_bf16_resident; do
	mutant_cu "${f}_nb3_sets" 's/step(vb, k3b, va, k3a) \&\&/step(vb, k3b, vc, k3c) \&\&/' 'elements wrong' "$T_TMP/$f.cu" \
		-D CLUSTER=1 -D THREADS=160 -D VPT=8 -D NB=3 --sm-count 1 --size M=9,N=5003
	mutant_cu "${f}_one_slot" 's/float2 \*pp = part\[it & 1\];/float2 *pp = part[0];/' 'elements wrong' "$T_TMP/$f.cu" \
		-D CLUSTER=1 -D THREADS=64 -D VPT=4 -D MINB=1 --sm-count 1 --sched warp --size M=9,N=767
	mutant_cu "${f}_unshifted" 's/shift4(ws\[i\], ws\[i + 1\], H)/ws[i]/; s/shift8<H>(ws\[i\], ws\[i + 1\])/ws[i]/' \
		'elements wrong' "$T_TMP/$f.cu" -D CLUSTER=1 -D THREADS=160 -D VPT=8 --sm-count 1 --size M=9,N=5003
	mutant_cu "${f}_unpadded" 's/j < \([48]\) \* (PER(N) + 1)/j < \1 * PER(N)/' 'nan, want' "$T_TMP/$f.cu" \
		-D CLUSTER=1 -D THREADS=160 -D VPT=8 --sm-count 1 --size M=9,N=5003
done
MS='--size M=130,N=70,K=75 --size M=200,N=264,K=136'
mutant atomic_as_store 's/atomicAdd(p_ + e_ + j_, \(.*\));$/*(p_ + e_ + j_) = \1;/' 'elements wrong' \
	tests/emu/colsum_atomic.tile --size M=40,N=1001
mutant residual_wrong_stride 's/) \* N + (wn0_ + (i_/) * M + (wn0_ + (i_/g' "past the end of 'res'" \
	tests/emu/gemm_epilogue.tile --size M=130,N=70,K=75
mutant dot_reduce_read_by_column 's/\(_t[0-9]*\[i_\] = kb_ax[0-9]*_\)\[r_\]/\1[c_]/' 'elements wrong' \
	tests/emu/dot_softmax.tile --size M=130,N=50,K=75
# the wgmma epilogue's TMA store: a buffer written again before its last
# store read it, unswizzled writes, the second warpgroup's rows; pingpong
# without its turns (a warpgroup's waits run ahead of the ring), reading
# the other warpgroup's a rows
WGS='-D KB_WG_STORE=1 --arch sm_90a --sm-count 2 --size M=200,N=264,K=136'
mutant wg_store_no_wait 's/b_ == 0 ? kb_wg_st_wait<0>() : kb_wg_st_wait<1>();/;/' 'elements wrong' \
	kernels/fused/matmul_bias_gelu.tile $WGS
mutant wg_store_unswizzled 's/((j_ \/ 2 ^ r_ % 8) << 4)/((j_ \/ 2) << 4)/' 'elements wrong' \
	kernels/fused/matmul_bias_gelu.tile $WGS
mutant wg_store_rows 's/(m0) + w_ \* 64 + b_ \/ 4 \* 64/(m0) + b_ \/ 4 * 64/' 'elements wrong' \
	kernels/fused/matmul_bias_gelu.tile $WGS
# ... a block's pairs written to each other's places; the producer's own
# loop a trip ahead of the consumers' (its stages and phases theirs no more)
mutant wg_store_chunk_pairs 's/, pk_\[j_\]);$/, pk_[j_ ^ 1]);/' 'elements wrong' \
	kernels/fused/matmul_bias_gelu.tile -D KB_WG_STORE=3 --arch sm_90a --sm-count 2 --size M=200,N=264,K=136
mutant wg_roles_producer_ahead 's/^\t\tint it_ = 0;/\t\tint it_ = 1;/' 'deadlock' \
	kernels/fused/matmul_bias_gelu.tile $WGS
mutant wg_pingpong_no_turns 's/^\(\t*\)kb_wg_turn_wait((int)threadIdx.x \/ 128);$/\1;/' 'deadlock' \
	kernels/fused/matmul_bias_gelu.tile -D THREADS=128 -D BN=128 -D KB_WG_PINGPONG=1 --arch sm_90a --sm-count 2 \
	--size M=300,N=264,K=520
mutant wg_pingpong_a_rows 's/threadIdx.x \/ 128 % CONS;/threadIdx.x \/ 128;/' 'elements wrong' \
	kernels/fused/matmul_bias_gelu.tile -D THREADS=128 -D BN=128 -D KB_WG_PINGPONG=1 --arch sm_90a --sm-count 2 \
	--size M=300,N=264,K=520
mutant dot_arange_pairs 's/ + j_ % 2;$/;/' 'elements wrong' tests/emu/dot_softmax.tile --size M=130,N=49,K=75
mutant dot_store_mask_pair 's/ \&\& m_\[0\] \&\& m_\[1\])$/)/' 'elements wrong' tests/emu/dot_store_mask.tile \
	--size M=130,N=70,K=75
mutant dot_store_mask_element 's/ \&\& m_\[j_\])$/)/' 'elements wrong' tests/emu/dot_store_mask.tile \
	--size M=130,N=70,K=75
mutant dot_nt_pieces_swapped 's/this->b\[buf\]\[nt\]\[1\] = r\[1\];/this->b[buf][nt][1] = r[2];/' \
	'elements wrong' tests/emu/gemm_nt.tile --size M=100,N=72,K=136
mutant dot_nt_lane_xor 's/xbt = lane \/ 8 % 2 ^ /xbt = lane \/ 16 ^ /' 'elements wrong' \
	tests/emu/gemm_nt.tile --size M=100,N=72,K=136
# a group read only when every slot of it is in the mask (not any): the
# diagonal's group reads as zeros
mutant mask_group_read_all 's/)) || (/)) \&\& (/g' 'elements wrong' kernels/fused/causal_softmax.tile \
	--size T=68,M=136,N=68
mutant arange_rows_as_columns 's/\(_t[0-9]*\[i_\]\) = r_;/\1 = c_;/' 'elements wrong' tests/emu/causal2d.tile \
	--size M=37,N=50
mutant dot2_w_not_transposed 's/\(kb_dot_ + [0-9]*))\)\[r_\]\[c_\]/\1[c_][r_]/' 'elements wrong' $AT -D THREADS=256 -D BM=64 -D BN=64 \
	--size B=1,H=2,N=100,CAUSAL=0
mutant dot2_b_fragment_k 's/&b_\[n_ + g_\]\[k_ + 2 \* t_ + 8\]}/\&b_[n_ + g_][k_ + 2 * t_]}/' 'elements wrong' \
	$AT -D THREADS=256 -D BM=64 -D BN=64 --size B=1,H=2,N=100,CAUSAL=0
mutant dot2_f16_as_bf16 's/(const __half \*)0);$/(const __nv_bfloat16 *)0);/' 'elements wrong' \
	tests/emu/dot_regs.tile --size M=130,N=70,K=75
mutant dot2_result_over_unread_operands '/every warp has read the operands/d' 'elements wrong' $AT -D THREADS=256 -D BM=64 -D BN=64 \
	--sched warp --size B=1,H=2,N=100,CAUSAL=0
mutant row_broadcast_by_column 's/\(kb_bc[0-9]*_\)\[r_\]\[0\]/\1[c_][0]/' 'elements wrong' $AT -D THREADS=256 -D BM=64 -D BN=64 \
	--size B=1,H=2,N=100,CAUSAL=1
mutant kept_row_unguarded 's/\(_t[0-9]*\[i_\]\) = f_ < 64 ? \(kb_ax[0-9]*_\[r_\]\) : 0;/\1 = \2;/' \
	'out of bounds' $AT -D THREADS=256 -D BM=64 -D BN=64 --size B=1,H=2,N=100,CAUSAL=0
# the row layout (attention.tile with one row tile a warp: A1T)
AR="$A1T --size B=1,H=2,N=100,CAUSAL=1"
mutant rows_quad_shuffle_short 's/for (int o_ = 1; o_ < 4; o_ \*= 2)/for (int o_ = 1; o_ < 2; o_ *= 2)/' \
	'elements wrong' $AT $AR
mutant rows_pick_by_column 's/\[(i_) % 4 \/ 2\]/[(i_) % 2]/g' 'elements wrong' $AT $AR
mutant rows_arange_pairs 's/ + (int)threadIdx.x % 4 \* 2 + (i_) % 2)/ + (int)threadIdx.x % 4 * 2)/g' \
	'elements wrong' $AT $AR
mutant rows_q_halves_swapped 's/= lo_ | hi_ << 16;/= hi_ | lo_ << 16;/' 'elements wrong' $AT $AR
mutant rows_q_pair_halves_swapped 's/? w_ \& 0xffffu :/? w_ >> 16 :/' 'elements wrong' $AT $AR
mutant rows_a_fragment_order 's/qt\[k_ \* 4 + 1\], qt\[k_ \* 4 + 2\]/qt[k_ * 4 + 2], qt[k_ * 4 + 1]/' \
	'elements wrong' $AT $AR
mutant rows_b_pieces_swapped 's/n_ \* 8 + 4, af_, bf_\[1\]/n_ * 8 + 4, af_, bf_[0]/' 'elements wrong' $AT $AR
mutant rows_k_lane_rows 's/(unsigned)((l_ \/ 16 \* 8 + l_ % 8)/(unsigned)((l_ \/ 8 % 2 * 8 + l_ % 8)/' \
	'elements wrong' $AT $AR
mutant rows_copy_row_past 's/"r"(r_ < n_ ? 16 : 0)/"r"(r_ <= n_ ? 16 : 0)/' \
	'past the end of' $AT $A1T --size B=1,H=1,N=100,CAUSAL=0
mutant rows_dot_init_dropped 's/acc\[i_\] \*= alpha\[(i_) % 4 \/ 2\];/(void)0;/' \
	'elements wrong' $AT $AR
# the rescale skipped where alpha is 1 in every row of the warp (02_fa2.cu's LAZY)
mutant rows_lazy_inverted 's/|| kb_warp_any(!kb_one_))/|| kb_warp_any(kb_one_))/' 'elements wrong' $AT $A1T \
	--size B=1,H=1,N=300,CAUSAL=0
mutant rows_lazy_one_row 's/for (int rr_ = 0; rr_ < 2; rr_++)/for (int rr_ = 0; rr_ < 1; rr_++)/' 'elements wrong' \
	$AT $A1T --size B=1,H=1,N=300,CAUSAL=0
mutant rows_p_pair_swapped 's/kb_pack2(p\[(k_ \* 8 + 0)\], p\[(k_ \* 8 + 1)\]/kb_pack2(p[(k_ * 8 + 1)], p[(k_ * 8 + 0)]/' \
	'elements wrong' $AT $AR
mutant rows_exp_sign 's/x = fmaf(a, k, -b \* k)/x = fmaf(a, k, b * k)/' 'elements wrong' $AT $AR
mutant rows_exp_unscaled 's/const float k = c \* 1.44269504088896341f/const float k = 1.44269504088896341f/' \
	'elements wrong' $AT $AR
mutant rows_bf16_unpack_halves 's/hi ? v \& 0xffff0000u : v << 16/hi ? v << 16 : v \& 0xffff0000u/' 'elements wrong' \
	tests/emu/rows_mix.tile --size M=100,N=29,K=75
# o stored two bf16 a 32-bit store (lower_rowio.c): the pair's halves, and
# the pair stored where its elements are masked (rows past N)
mutant rows_store_pair_halves_swapped 's/kb_pair<__nv_bfloat16>{w_\[0\], w_\[1\]}/kb_pair<__nv_bfloat16>{w_[1], w_[0]}/' \
	'elements wrong' $AT --size B=1,H=2,N=100,CAUSAL=1
mutant rows_store_pair_unmasked 's/if (al_ \&\& in_\[0\] \&\& in_\[1\])$/if (al_)/' "past the end of 'o'" \
	$AT --size B=1,H=1,N=100,CAUSAL=0
mutant rows_store_pair_f32_halves_swapped 's/kb_pair<float>{w_\[0\], w_\[1\]}/kb_pair<float>{w_[1], w_[0]}/' \
	'elements wrong' tests/emu/rows_mix.tile --size M=100,N=30,K=75
# lower_rowacc.c: a loop's row sums as lanes' parts, folded after it (l
# starts from a load: only lane 0 of a quad may keep it); a sum read
# elsewhere in its loop folded every trip (c); acc's rescale where r2 is
# assigned, once
RA='--size M=100,N=29,K=75'
mutant rowacc_start_every_lane 's/(int)threadIdx.x % 4 == 0 ? l\[h_\] : 0.0f/l[h_]/' 'elements wrong' \
	tests/emu/rows_acc.tile $RA
mutant rowacc_fold_dropped 's/l\[h_\] += __shfl_xor_sync(0xffffffff, l\[h_\], o_);/(void)0;/' 'elements wrong' \
	tests/emu/rows_acc.tile $RA
mutant rowacc_read_sum_unfolded 's/_t[0-9]*\[0\] += __shfl_xor_sync.*;$/(void)0;/' 'elements wrong' \
	tests/emu/rows_acc.tile $RA
mutant rowacc_hoisted_rescale_dropped 's/acc\[i_\] \*= r2\[(i_) % 4 \/ 2\];/(void)0;/' 'elements wrong' \
	tests/emu/rows_acc.tile $RA
mutant rowacc_attention_rescaled_twice 's/\(_t[0-9]*\)\[i_\] = acc\[i_\];/\1[i_] = acc[i_] * alpha[i_ % 8 \/ 2];/' \
	'elements wrong' $AT $T1 --size B=1,H=1,N=300,CAUSAL=0
mutant rowacc_attention_fold_dropped 's/l\[h_\] += __shfl_xor_sync(0xffffffff, l\[h_\], o_);/(void)0;/' \
	'elements wrong' $AT $T1 --size B=1,H=1,N=300,CAUSAL=1
# the mask only on tiles past N or across the diagonal (N = 256: interior tiles)
mutant rows_mask_diagonal_skipped 's/ || ((CAUSAL != 0) \&\& ((j + BN) > m0))//' 'elements wrong' $AT $A1T \
	--size B=1,H=1,N=256,CAUSAL=1
# k and v copied a trip ahead into the other of two buffers
mutant rows_wait_too_short 's/kb_cp_async_wait<1>(); \/\* this trip/kb_cp_async_wait<2>(); \/* this trip/' \
	'is in flight' $AT $AR
mutant rows_no_barrier_after_copy '/this trip.s b tiles are in shared memory/d' 'cp.async' $AT --sched warp $AR
mutant rows_no_refill_barrier '/every warp has read this trip/d' 'cp.async' $AT $A1T --sched warp \
	--size B=1,H=1,N=300,CAUSAL=0
mutant rows_next_into_current 's/(kb_par_ ^ 1) \* /(kb_par_) * /g' 'cp.async' $AT $AR
mutant rows_parity_kept '/kb_par_ ^= 1;/d' 'elements wrong' $AT $AR
# two row tiles a warp (-D BM=128): each must be caught there
A2R='--size B=1,H=2,N=100,CAUSAL=1'
mutant rows2_tile_rows_as_one 's/ + i_ % 8 \/ 2 \* 8, c_ = / + i_ % 4 \/ 2 * 8, c_ = /g' 'elements wrong' $AT $A2T $A2R
mutant rows2_band_stride 's|(int)threadIdx.x / 32 \* 32 |(int)threadIdx.x / 32 * 16 |g' 'elements wrong' $AT $A2T $A2R
mutant rows2_b_not_reused 's/+ 4, af1_, bf_\[0\]/+ 4, af1_, bf_[1]/g' 'elements wrong' $AT $A2T $A2R
mutant rows2_mma_into_other_tile 's/n_ \* 16 + 4, af1_/n_ * 16 + 0, af1_/g' 'elements wrong' $AT $A2T $A2R
mutant rows2_q_first_tile_twice 's/af1_\[4\] = {qt\[k_ \* 8 + 2\], qt\[k_ \* 8 + 3\]/af1_[4] = {qt[k_ * 8 + 0], qt[k_ * 8 + 1]/' \
	'elements wrong' $AT $A2T $A2R
mutant rows2_stat_across_tiles 's/\[(i_) % 8 \/ 2\]/[(i_) % 4 \/ 2]/g' 'elements wrong' $AT $A2T $A2R
mutant rows2_shuffle_first_tile 's/for (int h_ = 0; h_ < 4; h_++)/for (int h_ = 0; h_ < 2; h_++)/' 'elements wrong' \
	$AT $A2T $A2R
mutant rows2_lazy_tile0_only 's/for (int rr_ = 0; rr_ < 4; rr_++)/for (int rr_ = 0; rr_ < 2; rr_++)/' 'elements wrong' \
	$AT $A2T --size B=1,H=1,N=300,CAUSAL=0
mutant rows2_column_rows_of_tile0 's/+ i_ \* 8, c_ = 0, f_ = r_;/+ i_ % 2 * 8, c_ = 0, f_ = r_;/' 'elements wrong' \
	tests/emu/rows_mix.tile -D BM=128 --size M=100,N=29,K=75
mutant rows2_arange_row_tile 's/+ (i_) \* 8)/+ (i_) % 2 * 8)/g' \
	'elements wrong' $AT $A2T --size B=1,H=1,N=256,CAUSAL=1
# the row layout's wgmma (lower_rowwg.c): k's k16 steps, v read K-major,
# the copy unswizzled, a warp's m64 pieces 16 rows apart, q's second piece
# read as its first, every warpgroup reading the first's q rows, s's first
# k16 step overwritten by the second (scale-d), both pieces into one's
# accumulators, no barrier before the refill of what wgmma read
AW="--arch sm_90a $T1 -D BN=128 --size B=1,H=2,N=100,CAUSAL=1"
mutant wg_k_step 's/k_ % 4 \* 32), 16, 1024)/k_ % 4 * 16), 16, 1024)/' 'elements wrong' $AT $AW
mutant wg_v_k_major 's/kb_rwg_bf16_n64<8, 1>/kb_rwg_bf16_n64<8, 0>/g' 'elements wrong' $AT $AW
mutant wg_copy_unswizzled 's/((((c >> 3) ^ r) \& 7) << 4)/(((c >> 3) \& 7) << 4)/' 'elements wrong' $AT $AW
mutant wg_pieces_16_apart 's/(i_) % 8 \/ 4 \* 64/(i_) % 8 \/ 4 * 16/g' 'elements wrong' $AT $AW
mutant wg_q_one_piece 's/k_ % 4 \* 32 + 8192), 16, 1024)/k_ % 4 * 32 + 0), 16, 1024)/' 'elements wrong' $AT $AW
mutant wg_q_warpgroups 's/(int)threadIdx.x \/ 128 \* 64 \* 128)/0)/' 'elements wrong' $AT --arch sm_90a \
	-D THREADS=256 -D BM=128 --size B=1,H=1,N=300,CAUSAL=1
mutant wg_s_first_step_dropped 's/db_, k_ > 0);/db_, k_ > 1);/g' 'elements wrong' $AT $AW
mutant wg_one_piece 's/(_t4 + 4, aw_\[k_\]\[1\]/(_t4 + 0, aw_[k_][1]/' 'elements wrong' $AT $AW
mutant wg_no_refill_barrier '/every warp has read this trip/d' 'cp.async' $AT --arch sm_90a $T1 -D BN=128 --sched warp \
	--size B=1,H=1,N=300,CAUSAL=0
# the overlap at D = 64 with 96 keys a step: the last trip's P V
# never issued, v's refill before it
A96="--arch sm_90a $T1 -D BN=96 --size B=1,H=1,N=300,CAUSAL=0 --size B=2,H=1,N=129,CAUSAL=1"
mutant wg_ovl96_last_pv_dropped 's|if (kb_pv_) { /\* the last trip.s acc += dot \*/|if (0) {|' 'elements wrong' $AT $A96
mutant wg_ovl96_no_v_refill_barrier '/every warp.s dots are done: their b buffers are free/d' 'no __syncthreads' $AT \
	$A96 --sched warp
# the overlap (D = 128): the last trip's P V reading this trip's v buffer,
# the last trip's P V never issued, P V never marked pending (none issued),
# a P V issued on the first trip (of nothing), this trip's k waited for one
# group short, no barrier before v's refill (the buffer the last trip's P V
# read)
AO="--arch sm_90a $T1 -D HD=128 --size B=1,H=1,N=200,CAUSAL=0,D=128 --size B=2,H=1,N=129,CAUSAL=1,D=128"
mutant wg_ovl_v_this_trip 's|(kb_par_ ^ 1) \* 16384); /\* the last trip|kb_par_ * 16384); /* the last trip|' \
	'in flight' $AT $AO
mutant wg_ovl_last_pv_dropped 's|if (kb_pv_) { /\* the last trip.s acc += dot \*/|if (0) {|' 'elements wrong' $AT $AO
mutant wg_ovl_pv_never_pending 's|kb_pv_ = 1;|;|' 'elements wrong' $AT $AO
mutant wg_ovl_pv_on_first_trip 's|int kb_pv_ = 0;|int kb_pv_ = 1;|' 'elements wrong' $AT $AO
mutant wg_ovl_wait_short 's|kb_cp_async_wait<2>();|kb_cp_async_wait<3>();|' 'in flight' $AT $AO
mutant wg_ovl_no_v_refill_barrier '/every warp.s dots are done: their b buffers are free/d' 'no __syncthreads' $AT $AO \
	--sched warp
# the producer warpgroup: a consumer not waiting for k's copy (its full
# mbarrier), the producer refilling k's stage without waiting for its
# empty one (its full one then completes a phase early), the cp.async
# producer arriving before its copies landed, a consumer not handing k's or
# v's stage back, the TMA boxes all into stage 0 or k's second box over its
# first (D = 128), a turn not passed, warpgroup 0 not taking the last
# pass, the producer's element copy from thread 0 (not 256).  (v's full
# wait dropped is not caught: the emulator's TMA lands at issue, and v's
# boxes go out before the next trip's k, which is waited for.)
AWM="--arch sm_90a $AWS --size B=1,H=1,N=300,CAUSAL=0"
mutant ws_full_not_waited '/the producer.s copy of this trip.s b tile/d' 'elements wrong' $AT $AWM --sched warp
mutant ws_empty_not_waited 's/kb_bar_wait(kb_empty_ + 8 \* (0 + kb_s_), (kb_it_ \/ 2 - 1) \& 1);/(void)0;/' 'deadlock' \
	$AT $AWM --sched warp
mutant ws_copies_not_landed 's|kb_cp_async_wait<0>(); /\* its copies landed|/* its copies landed|' 'in flight' $AT $AWM \
	--offset 2
mutant ws_k_stage_kept 's/kb_bar_arrive(kb_empty_ + 8 \* (0 + kb_par_));/(void)0;/' 'deadlock' $AT $AWM
mutant ws_v_stage_kept 's/kb_bar_arrive(kb_empty_ + 8 \* (2 + (kb_par_ ^ 1)));/(void)0;/g' 'deadlock' $AT $AWM
mutant ws_tma_one_stage 's/(unsigned)kb_s_ \* 16384u/0u/g' 'elements wrong' $AT $AWM
mutant ws_tma_box_column 's/(0) + 64, (r0 + j)/(0) + 0, (r0 + j)/' 'elements wrong' $AT --arch sm_90a $AWS -D HD=128 \
	--size B=1,H=1,N=300,CAUSAL=0,D=128
mutant ws_turn_kept '/the turn passes: its softmax runs/d' 'deadlock' $AT $AWM
mutant ws_last_pass_left 's|asm volatile("bar.sync %0, 256;" :: "r"(8) : "memory"); /\* warpgroup 1.s last pass \*/|;|' \
	'the block ends with' $AT $AWM
mutant ws_slow_copy_t0 's/, true, 256>/, true>/' 'elements wrong' $AT $AWM --offset 2
# q in shared memory (two row tiles at D = 128)
A2Q="$A2T -D HD=128 --size B=1,H=2,N=100,CAUSAL=1,D=128"
mutant rows2_q_smem_tile0_twice 's/af1_, al_ + (unsigned)(2176 + k_/af1_, al_ + (unsigned)(0 + k_/' 'elements wrong' \
	$AT $A2Q
mutant rows2_q_smem_lane_column 's/+ l_ % 16) \* 136 + l_ \/ 16 \* 8)/+ l_ % 16) * 136 + l_ \/ 8 % 2 * 8)/' \
	'elements wrong' $AT $A2Q
mutant rows2_q_smem_band 's|(int)threadIdx.x / 32 \* 32 + l_ % 16)|(int)threadIdx.x / 32 * 16 + l_ % 16)|' \
	'elements wrong' $AT $A2Q
# b copied where the dot is (its slice names a variable the loop assigns)
mutant rows_here_unsynced '/the b tile is in shared memory/d' 'cp.async' tests/emu/dot_rows_here.tile \
	--sched warp --size M=64,N=64,K=64
mutant dot_arange_rows 's/\(_t[0-9]*\[i_\] = wm0_ .*\) + i_ % 4 \/ 2 \* 8;$/\1;/' 'elements wrong' \
	tests/emu/dot_causal.tile --size M=130,N=50,K=75
mutant fused_gelu_constant 's/0\.797884561f/0.8f/' 'elements wrong' kernels/fused/bias_gelu.tile --size M=3,N=4099
mutant tile2_vector_lanes 's/= v_\.x, /= v_.y, /' 'elements wrong' tests/emu/transpose2d.tile --size M=32,N=64
mutant trans_not_transposed 's/\[c_\]\[r_\]/[r_][c_]/' 'elements wrong' tests/emu/transpose2d.tile \
	--size M=100,N=150
mutant no_trans 's/m8n8\.x4\.trans\.shared/m8n8.x4.shared/' 'elements wrong' $MM $MS
mutant unswizzled_scalar_copy \
	's|((unsigned short \*)s)\[kb_swz<CH>(i / C, i % C / 8) \* 8 + i % 8\]|((unsigned short *)s)[i]|' \
	'elements wrong' $MM $MS
mutant b_fragment_swapped 's|a\[buf\]\[mt\], b\[buf\]\[nt\]|a[buf][mt], b[buf][nt ^ 1]|' 'elements wrong' $MM $MS
mutant a_row_unswizzled 's|xa = lane / 16 ^ kb_swz_x<CHA>(lane % 16);|xa = lane / 16;|' 'elements wrong' $MM $MS
mutant prefetch_over_current 's|f_.load((kk_ + 1) % 2,|f_.load(kk_ % 2,|' 'elements wrong' $MM $MS
mutant stage_not_advanced 's|rd_ = rd_ == 2 ? 0 : rd_ + 1;|rd_ = rd_;|' 'elements wrong' $MM $MS
mutant epilogue_row 's|lane_ / 4 + i_ % 4 / 2 \* 8|lane_ / 4 + i_ % 2 * 8|' 'elements wrong' $MM $MS
mutant wait_too_short 's/kb_cp_async_wait<1>();/kb_cp_async_wait<2>();/' 'is in flight' $MM $MS
mutant no_barrier_before_refill 's|__syncthreads(); /\* and every warp|/* and every warp|' \
	'with no __syncthreads between' $MM $MS
mutant copy_past_the_tensor 's|"l"(in ? base + from : g)|"l"(in ? base + from + 64 : g)|' \
	"past the end of 'a'" $MM $MS
# The copy plan's row mask, made before the loop, one row too generous:
# the last row tile's copies read row M of a.
mutant plan_row_mask 's|rows_in \|= (unsigned)(r0 + i \* STEP < row_lim) << i;|rows_in \|= (unsigned)(r0 + i * STEP <= row_lim) << i;|' \
	"past the end of 'a'" $MM $MS
mutant stage_past_smem 's|kb_smem + 12288;|kb_smem + 16384;|' \
	'dynamic shared memory the launch gives' $MM $MS
mutant half_butterfly 's|for (int o = 16; o > 0; o /= 2)|for (int o = 8; o > 0; o /= 2)|' \
	'elements wrong' kernels/softmax/softmax.tile --size M=3,N=1000
mutant vector_load_misaligned 's|float4 v_ = \(.*\)(const float4 \*)(p_ + e_ + 0)|float4 v_ = \1(const float4 *)(p_ + e_ + 1)|' \
	'misaligned address' kernels/softmax/softmax.tile --size M=3,N=1001
mutant whole_load_misaligned 's|raw_\[k_\] = e_ < lim_ ? __ldcs((const float4 \*)(p_ + e_ + 0))|raw_[k_] = e_ < lim_ ? __ldcs((const float4 *)(p_ + e_ + 1))|' \
	'misaligned address' kernels/softmax/softmax.tile --size M=3,N=1000
# whole groups taken for a row that ends mid-group: row 0 reads row 1's head
mutant whole_groups_partial 's/lim_ % 8 == 0/lim_ % 2 == 0/' 'elements wrong' \
	kernels/softmax/softmax_bf16.tile --size M=3,N=1002
# one half of the scratch for every reduction (no barrier guards its reuse)
mutant scratch_one_half 's/32 \* (n_++ & 1)/32 * (n_++ \& 0)/' 'elements wrong' \
	kernels/softmax/softmax.tile --sched warp --size M=3,N=1000
# the window read at the aligned vector, not shifted by the row's head
WS='-D CLUSTER=1 -D THREADS=160 -D VPT=8 -D PIPE=1 -D LOOK=0 -D WSM=1 -D WAVE=2 --size M=9,N=5003'
# shellcheck disable=SC2086
mutant_cu wsm_unshifted 's/shift8<H>(ww\[i\], ww\[i + 1\])/shift8<0>(ww[i], ww[i + 1])/' 'elements wrong' \
	kernels/layernorm/layernorm_bf16_cluster.cu $WS
# the window one vector short (the shifted pair's second past its end)
# shellcheck disable=SC2086
mutant_cu wsm_short 's/i <= PER(N); i += THREADS/i < PER(N); i += THREADS/' 'elements wrong' \
	kernels/layernorm/06_cluster.cu $WS
# a case outside the file's `//! require` (a slice of 5003 f32 in 160 x 4
# float4) is not run, as kbench would not run it, and says which line
[ -n "$SAN" ] || start emu_refuses_require 'not run: the file requires (N / 4 + CLUSTER - 1) / CLUSTER <= THREADS * VPT' \
	"$EMU" --work "$W" kernels/layernorm/06_cluster.cu -D CLUSTER=1 -D THREADS=160 -D VPT=4 --size M=9,N=5003
collect
finish
