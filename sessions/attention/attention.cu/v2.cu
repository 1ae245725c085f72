// Attention forward, step 2 of 3: FlashAttention-2.  The same o =
// softmax(q k^T / sqrt(D)) v as step 1 ([B, H, N, D] bf16, f32 sums, bf16
// out, causal when CAUSAL is 1), without the scores in global memory.
//
// What changes from step 1: a block owns BM query rows of one (batch,
// head), a warp 16 MT of them (MT = 2 by default: two 16-row tiles), and
// walks the keys BN at a time: FlashAttention-2's shape on sm_80/sm_90
// (128 rows of 4 warps, 64 keys a step at D = 128; 2 blocks an SM).  Q
// arrives in shared memory once; each K and V tile by cp.async into one of
// two buffers (the next tile's copies in flight while this one is used),
// 16-byte chunks XOR-swizzled by row so that the ldmatrix reads are free of
// bank conflicts.  S = Q K^T is mma.sync m16n8k16 (bf16 in, f32
// accumulate), Q's A fragments ldmatrix'd from shared memory every step
// (QREG = 0: the 64 registers Q would hold at D = 128 with MT = 2 are
// what leaves room for O and S) and K's rows as the B fragments (plain
// ldmatrix); the online softmax keeps a running max m and sum l per row
// (four lanes share a row: two shuffles for the max, the sum reduced once
// at the end), exponentials as one ex2.approx.ftz each with the scale and
// log2(e) folded into one FFMA, at D = 128 rescales the accumulator only
// when a row max of the warp grew (LAZY: most steps past the first few
// skip it), and
// the probabilities P, rounded to bf16, go from the accumulator's layout
// straight into the A fragments of O += P V (ldmatrix.trans of V gives its
// B fragments).  Keys past N are masked to -inf (the copies zero-fill
// them), so N need not be a multiple of the tile; causal blocks stop at
// the diagonal, mask only the tiles that cross it, a warp skips the tiles
// wholly past its rows (CSKIP), and the longest rows start first (the
// grid's x reversed).
//
// Why MT = 2 (issue 30, from the H100 run of 2026-11-28 where MT = 1 gave
// 201-247 TFLOP/s against flash's 268-355): with a warp's 16 rows each
// ldmatrix.x4 of K or V (512 bytes) feeds 2 mmas, 32 KiB of shared memory
// reads a warp a step at D = 128 against 128 mmas, so 8 warps read 256 KiB
// an SM a step: 2048 cycles at 128 B/cycle, more than the mmas' own time;
// with 32 rows a K/V fragment feeds 4 mmas (Q's reads added, 0.625 times the
// bytes per mma), and 128 rows take 4 warps, not 8, so two blocks share an
// SM and one's softmax overlaps the other's mmas (with one block of 8
// warps every warp meets the same two barriers a step).  exp2f was four
// instructions an exponential (the subnormal range kept), 32 of them a
// thread a step; the rescale of O, 64 (MT = 1) to 128 FMULs a step.
//
// Tune: MT row tiles of 16 a warp, BM rows a block, BN keys a step (0:
// 128 at D = 64, the faster there on an H100 and an H200, 2026-11-28; 64
// at D = 128).  The kernel as it was before (issue 30's first H100
// table): `-D MT=1 -D QREG=1 -D EX2=0 -D LAZY=0 -D CSKIP=0 -D XADDR=0
// -D OSTAGE=0 -D TREE=0 -D BN=64` (XADDR: the ldmatrix addresses as this
// lane's offset XOR a chunk constant, one LOP3 each, not swz()).
//
// Per head dim (H200, 2026-11-29, bench/attention_h200.txt, each against
// the defaults before and flash in one process): at D = 128 O leaves
// through shared memory (OSTAGE: the warp's own Q rows, 16-byte stores of
// whole rows; 0 B spilled against 8), 1.6-2% faster at N = 1024 in two
// runs and level at 4096 and 8192; a row's max and sum are trees, 3 deep,
// not chains of 15 dependent FMNMX or FADD (TREE = 3), 0.4-2% faster in
// two runs (03_fa3.cu, whose softmax overlaps the other consumer's
// products, gained nothing from them); and
// the lazy rescale stays (2-3% faster than always).  At D = 64 (BN = 128,
// 255 registers) OSTAGE spills (2-4% slower), TREE is level, and the lazy
// rescale's vote and branch cost more than its multiplies (LAZY = 0 1-2.5%
// faster), so those are off there.  Tried and dropped: one
// barrier a step, the next tile's copies issued after it (0.5-2% slower
// everywhere), and a key tile in sub-steps whose S = Q K^T is written
// beside the previous one's softmax for ptxas to overlap (SPLIT = 2: 6-11%
// slower at D = 128, SPLIT = 4: 20-24%; Q's fragments are read again each
// sub-step and registers spill).  scripts/gpu-fa2v.sh times such variants.
//
// What to look at in kbench: HMMA.16816.F32.BF16 in SASS, LDSM and
// LDGSTS; MUFU.EX2 for the exponentials (the softmax's share of issue
// slots); registers (NVRTC 13.0, sm_90): MT = 2, BN = 64: 255 at D = 128
// (none spilled with OSTAGE; two words without), 213 at D = 64, two blocks
// of 4 warps an SM; BN = 128: 255 at D = 64, 8 B spilled, and 12-14%
// faster there than BN = 64 (H100, bench/attention_h100.txt; 11% on an
// H200): the default at D = 64 (BN = 0 on the tune line); BN = 32: 238 at
// D = 128, 160 at D = 64 (3 blocks); as
// before: 182 at D = 128 (178 before the K/V copies shared one offset),
// 136 at D = 64, one block of 8 warps an SM.  Step 3 moves to wgmma with
// TMA and warp specialisation.
//
// Tolerance: P is rounded to bf16 for the tensor cores (as FlashAttention
// does), an error of up to 2^-9 |v| a term; a row with few keys (causal's
// first rows) averages none of it away, and two keys that nearly cancel
// leave an output near 0 with an error near 2e-3 (seen on the emulator), so
// atol is 1e-2; at large N, where outputs are ~1/sqrt(N), the errors are
// far smaller (the Result's max abs err says how much).
//
// D is compile-time: `--define D=64` for the other head size.
//
//! kernel  attn_fa2
//! arg     N = 4096
//! arg     B = max(1, 16384 / N)
//! arg     H = 16
//! arg     CAUSAL = 0
//! tune    D = 128
//! tune    BM = 128, 64
//! tune    MT = 2, 1
//! tune    BN = 0, 32, 64, 128
//! in      q : bf16[B, H, N, D] = randn(seed=1)
//! in      k : bf16[B, H, N, D] = randn(seed=2)
//! in      v : bf16[B, H, N, D] = randn(seed=3)
//! out     o : bf16[B, H, N, D]
//! launch  grid=(cdiv(N, BM), B * H) block=(BM / MT * 2) smem=((BM + 4 * (BN + max(0, 1 - BN) * 8192 / D)) * D * 2)
//! ref     attention(q, k, v, causal=CAUSAL) -> o
//! tol     rtol=2e-2 atol=1e-2
//! bytes   4*B*H*N*D*2
//! flops   4*B*H*N*N*D / (1 + CAUSAL)
//! sweep   N = 1024, 4096, 1000, 4097

#include <cuda_bf16.h>

#ifndef D
#define D 128
#endif
#ifndef BM
#define BM 128                /* query rows a block */
#endif
#ifndef MT
#define MT 2                  /* 16-row tiles a warp */
#endif
#if !defined(BN) || BN == 0   /* keys a step; 0 (the tune line's first): the head dim's best */
#undef BN
#define BN (8192 / D)         /* 128 at D = 64 (12-14% faster than 64 on an H100), 64 at D = 128 */
#endif
#ifndef QREG
#define QREG (MT == 1)        /* 1: Q in registers for the walk; 0: from shared memory each step */
#endif
#ifndef EX2
#define EX2 1                 /* 1: ex2.approx.ftz (one MUFU.EX2); 0: exp2f */
#endif
#ifndef LAZY
#define LAZY (D == 128)       /* 1: O rescaled only when a row max of the warp grew */
#endif
#ifndef XADDR
#define XADDR 1               /* 1: ldmatrix addresses as lane offset ^ chunk; 0: swz() each */
#endif
#ifndef CSKIP
#define CSKIP 1               /* 1: causal, a warp skips the tiles wholly past its rows */
#endif
#ifndef TREE
#define TREE (D == 128 ? 3 : 0) /* bit 0: a row's max as a tree, not a chain; bit 1: its sum */
#endif
#ifndef OSTAGE
#define OSTAGE (D == 128)     /* 1: O through the warp's Q rows in shared memory, 16-byte stores */
#endif
#define WARPS (BM / (16 * MT))
#define THREADS (WARPS * 32)
#define DC (D / 8)            /* 16-byte chunks in a row */
#define NEG_INF __int_as_float(0xff800000)

static_assert(D == 64 || D == 128, "head dims 64 and 128");
static_assert(BM % (16 * MT) == 0 && BN % 16 == 0, "whole tiles");

typedef __nv_bfloat16 bf16;

/* Element offset of chunk c of row r in a [rows][D] tile: chunk c ^ (r % 8),
 * so the 8 rows an ldmatrix reads fall in 8 different bank groups. */
__device__ __forceinline__ int swz(int r, int c)
{
	return r * D + ((c ^ (r & 7)) << 3);
}

/* 16 bytes global -> shared, zero-filled when !ok (g is then not read). */
__device__ __forceinline__ void cp16(bf16 *s, const bf16 *g, bool ok)
{
	unsigned a = (unsigned)__cvta_generic_to_shared(s);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
		     :: "r"(a), "l"(g), "r"(ok ? 16 : 0));
}

__device__ __forceinline__ void cp_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int PENDING> __device__ __forceinline__ void cp_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(PENDING));
}

/* Rows [r0, r0 + ROWS) of a [n][D] matrix into a swizzled tile; rows past
 * n are zeros. */
template <int ROWS> __device__ __forceinline__ void load_tile(bf16 *s, const bf16 *g, int r0, int n)
{
	for (int i = threadIdx.x; i < ROWS * DC; i += THREADS) {
		int r = i / DC, c = i % DC;
		bool ok = r0 + r < n;
		cp16(s + swz(r, c), ok ? g + (size_t)(r0 + r) * D + c * 8 : g, ok);
	}
}

/* Keys [r0, r0 + BN) of K and V into their swizzled tiles, one offset for
 * both; rows past n are zeros. */
__device__ __forceinline__ void load_kv(bf16 *sk, bf16 *sv, const bf16 *kg, const bf16 *vg, int r0,
				       int n)
{
#pragma unroll
	for (int i = threadIdx.x; i < BN * DC; i += THREADS) {
		int r = i / DC, c = i % DC;
		bool ok = r0 + r < n;
		size_t g = ok ? (size_t)(r0 + r) * D + c * 8 : 0;
		cp16(sk + swz(r, c), kg + g, ok);
		cp16(sv + swz(r, c), vg + g, ok);
	}
}

__device__ __forceinline__ void ldsm4(unsigned *r, unsigned a)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

__device__ __forceinline__ void ldsm4t(unsigned *r, unsigned a)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

/* c += a b: a 16 x 16 A fragment, b one 16 x 8 B fragment (two regs). */
__device__ __forceinline__ void mma(float *c, const unsigned *a, unsigned b0, unsigned b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* 2^x: one MUFU.EX2 (ex2.approx.ftz; exp2f is four instructions, its
 * subnormal results kept, which P rounded to bf16 does not need). */
__device__ __forceinline__ float ex2(float x)
{
#if EX2 && defined(__CUDA_ARCH__)
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
#else
	return exp2f(x); /* and on the host emulator */
#endif
}

/* Whether any lane of the warp has p (the emulator: this lane's p, which
 * gives the same result where it is used: a rescale by exactly 1 skipped). */
__device__ __forceinline__ bool warp_any(bool p)
{
#ifdef __CUDA_ARCH__
	return __any_sync(~0u, p);
#else
	return p;
#endif
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *(unsigned *)&v;
}

/* The max (SUM 0) or the sum (SUM 1) of the BN / 4 values a lane holds
 * of row h of a row tile (the C layout's elements 2h and 2h + 1 of each of
 * its BN / 8 key tiles) as a tree, log2 deep, not a chain of BN / 4
 * dependent instructions that each wait for the one before (TREE). */
template <int SUM> __device__ __forceinline__ float row_tree(const float (*st)[4], int h)
{
	float v[BN / 8];
#pragma unroll
	for (int t = 0; t < BN / 8; t++)
		v[t] = SUM ? st[t][2 * h] + st[t][2 * h + 1] : fmaxf(st[t][2 * h], st[t][2 * h + 1]);
	/* halves folded onto halves: loops of constant trips, so that v stays
	 * in registers (a loop to a bound that halves left it in local memory) */
#pragma unroll
	for (int level = 1; (BN / 8) >> level; level++)
#pragma unroll
		for (int t = 0; t < BN / 16; t++)
			if (t < (BN / 8) >> level)
				v[t] = SUM ? v[t] + v[t + ((BN / 8) >> level)]
					   : fmaxf(v[t], v[t + ((BN / 8) >> level)]);
	return v[0];
}

/* 1 / l of row h (0: lane / 4, 1: lane / 4 + 8) of row tile mt, the sum
 * of the four lanes that share the row. */
__device__ __forceinline__ float inv_rowsum(const float (*lrow)[2], int mt, int h)
{
	float l = lrow[mt][h];
	l += __shfl_xor_sync(~0u, l, 1);
	l += __shfl_xor_sync(~0u, l, 2);
	return 1.f / l;
}

/* o = O / l, straight from the C layout: two bf16 a 32-bit store; rows
 * past N not stored.  og: this (batch, head)'s o. */
__device__ __forceinline__ void store_o_direct(bf16 *og, const float (*acc)[D / 8][4],
					       const float (*lrow)[2], int lane, int w0, int N)
{
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float inv = inv_rowsum(lrow, mt, h);
			int row = w0 + 16 * mt + lane / 4 + 8 * h;
			if (row >= N)
				continue;
			bf16 *orow = og + (size_t)row * D + 2 * (lane % 4);
#pragma unroll
			for (int t = 0; t < D / 8; t++)
				*(__nv_bfloat162 *)(orow + 8 * t) = __floats2bfloat162_rn(
					acc[mt][t][2 * h] * inv, acc[mt][t][2 * h + 1] * inv);
		}
}

/* o = O / l through shared memory: the warp's own Q rows (only this warp
 * read them, so no block barrier), written in the swizzled layout (the 8
 * rows of a store in 8 bank groups), then read back a 16-byte chunk a lane
 * and stored whole rows at a time; rows past N not stored. */
__device__ __forceinline__ void store_o(bf16 *og, bf16 *sq, const float (*acc)[D / 8][4],
					const float (*lrow)[2], int warp, int lane, int w0, int N)
{
	int r0 = warp * 16 * MT; /* the warp's first row in sq */
	__syncwarp();
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float inv = inv_rowsum(lrow, mt, h);
			int r = r0 + 16 * mt + lane / 4 + 8 * h;
#pragma unroll
			for (int t = 0; t < D / 8; t++)
				*(__nv_bfloat162 *)(sq + swz(r, t) + 2 * (lane % 4)) = __floats2bfloat162_rn(
					acc[mt][t][2 * h] * inv, acc[mt][t][2 * h + 1] * inv);
		}
	__syncwarp(); /* every lane's rows written before any lane reads them */
#pragma unroll
	for (int i = lane; i < 16 * MT * DC; i += 32) {
		int r = i / DC, c = i % DC;
		if (w0 + r < N)
			*(uint4 *)(og + (size_t)(w0 + r) * D + c * 8) = *(const uint4 *)(sq + swz(r0 + r, c));
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
attn_fa2(const bf16 *q, const bf16 *k, const bf16 *v, bf16 *o, int N, int CAUSAL)
{
	extern __shared__ __align__(128) unsigned char smem[];
	bf16 *sq = (bf16 *)smem, *sk = sq + BM * D, *sv = sk + 2 * BN * D;
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int mb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x; /* longest rows first */
	int m0 = mb * BM, w0 = m0 + warp * 16 * MT; /* the warp's first row */
	size_t base = (size_t)blockIdx.y * N * D;
	const bf16 *qg = q + base, *kg = k + base, *vg = v + base;
	int nkeys = CAUSAL ? min(N, m0 + BM) : N;
	/* shared byte addresses: sq0, sk0, sv0 the tiles (sk0, sv0 buffer 0);
	 * with XADDR the ldmatrix rows of this lane at chunk 0 (Q: rows lane %
	 * 16, chunk lane / 16; K: rows 8 (lane / 16) + lane % 8, chunk lane / 8
	 * % 2; V: rows 8 (lane / 8 % 2) + lane % 8, chunk lane / 16), chunk 2c
	 * + x of the same rows then at offset ^ (c << 5): the swizzle is an XOR
	 * on bits 4-6 and a row of D bf16 is a multiple of 128 bytes, so
	 * swz(r, 2c + x) = swz(r, x) ^ (c << 4) for every c < D / 16 */
	unsigned sq0 = (unsigned)__cvta_generic_to_shared(sq);
	unsigned sk0 = (unsigned)__cvta_generic_to_shared(sk);
	unsigned sv0 = (unsigned)__cvta_generic_to_shared(sv);
	int qrow = warp * 16 * MT + lane % 16;
	unsigned qoff = 2 * swz(qrow, lane / 16);
	unsigned koff = 2 * swz(8 * (lane / 16) + lane % 8, lane / 8 % 2);
	unsigned voff = 2 * swz(8 * (lane / 8 % 2) + lane % 8, lane / 16);
	int steps = (nkeys + BN - 1) / BN;

	load_tile<BM>(sq, qg, m0, N);
	load_kv(sk, sv, kg, vg, 0, N);
	cp_commit();

#if QREG
	unsigned qf[MT][D / 16][4];    /* the warp's Q rows, A fragments */
#endif
	float acc[MT][D / 8][4];       /* O, 16 x D a row tile, C layout */
	float mrow[MT][2], lrow[MT][2]; /* rows lane/4 and lane/4 + 8 of each tile */
	const float sl2 = 1.44269504f * rsqrtf((float)D); /* scale * log2(e) */
#pragma unroll
	for (int mt = 0; mt < MT; mt++) {
		mrow[mt][0] = mrow[mt][1] = NEG_INF;
		lrow[mt][0] = lrow[mt][1] = 0;
#pragma unroll
		for (int t = 0; t < D / 8; t++)
			acc[mt][t][0] = acc[mt][t][1] = acc[mt][t][2] = acc[mt][t][3] = 0;
	}

	for (int j = 0; j < steps; j++) {
		int n0 = j * BN;
		if (j + 1 < steps) { /* the next tile into the other buffer */
			int o = ((j + 1) & 1) * BN * D;
			load_kv(sk + o, sv + o, kg, vg, n0 + BN, N);
		}
		cp_commit();
		cp_wait<1>();
		__syncthreads();
#if QREG
		if (j == 0)
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
#pragma unroll
				for (int kk = 0; kk < D / 16; kk++)
					ldsm4(qf[mt][kk], sq0 + 2 * swz(qrow + 16 * mt, 2 * kk + lane / 16));
#endif
		/* causal: a tile wholly past the warp's last row adds nothing */
		if (!CSKIP || !CAUSAL || n0 <= w0 + 16 * MT - 1) {
			unsigned tk = sk0 + (j & 1) * BN * D * 2, tv = sv0 + (j & 1) * BN * D * 2;

			/* S = Q K^T: 16 x BN a row tile, two key tiles of 8 per ldmatrix.x4
			 * (shared by the warp's MT row tiles) */
			float s[MT][BN / 8][4];
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
#pragma unroll
				for (int t = 0; t < BN / 8; t++)
					s[mt][t][0] = s[mt][t][1] = s[mt][t][2] = s[mt][t][3] = 0;
#pragma unroll
			for (int kk = 0; kk < D / 16; kk++) {
#if QREG
#define QA(mt) qf[mt][kk]
#else
				unsigned qa[MT][4];
#pragma unroll
				for (int mt = 0; mt < MT; mt++)
#if XADDR
					ldsm4(qa[mt], sq0 + (qoff ^ (kk << 5)) + 16 * mt * D * 2);
#else
					ldsm4(qa[mt], sq0 + 2 * swz(qrow + 16 * mt, 2 * kk + lane / 16));
#endif
#define QA(mt) qa[mt]
#endif
#pragma unroll
				for (int t = 0; t < BN / 8; t += 2) {
					unsigned b[4];
#if XADDR
					ldsm4(b, tk + (koff ^ (kk << 5)) + 8 * t * D * 2);
#else
					int mi = lane / 8;
					ldsm4(b, tk + 2 * swz(8 * (t + mi / 2) + lane % 8, 2 * kk + mi % 2));
#endif
#pragma unroll
					for (int mt = 0; mt < MT; mt++) {
						mma(s[mt][t], QA(mt), b[0], b[1]);
						mma(s[mt][t + 1], QA(mt), b[2], b[3]);
					}
				}
#undef QA
			}

			/* masks: keys past N, and past the diagonal when causal */
			bool edge = n0 + BN > N || (CAUSAL && n0 + BN > w0);
			if (edge)
#pragma unroll
				for (int mt = 0; mt < MT; mt++)
#pragma unroll
					for (int t = 0; t < BN / 8; t++)
#pragma unroll
						for (int e = 0; e < 4; e++) {
							int key = n0 + 8 * t + 2 * (lane % 4) + (e & 1);
							int row = w0 + 16 * mt + lane / 4 + 8 * (e >> 1);
							if (key >= N || (CAUSAL && key > row))
								s[mt][t][e] = NEG_INF;
						}

			/* online softmax, per row (h 0: lane/4, 1: lane/4 + 8) of each tile */
			float corr[MT][2];
			bool grew = false; /* a row max of this lane grew: O is rescaled */
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
#pragma unroll
				for (int h = 0; h < 2; h++) {
#if TREE & 1
					float mx = row_tree<0>(s[mt], h);
#else
					float mx = NEG_INF;
#pragma unroll
					for (int t = 0; t < BN / 8; t++)
						mx = fmaxf(mx, fmaxf(s[mt][t][2 * h], s[mt][t][2 * h + 1]));
#endif
					mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, 1));
					mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, 2));
					float mnew = fmaxf(mrow[mt][h], mx * sl2);
					float muse = mnew == NEG_INF ? 0.f : mnew;
					corr[mt][h] = ex2(mrow[mt][h] - muse);
					grew |= mnew > mrow[mt][h];
					mrow[mt][h] = mnew;
					float sum = 0;
#pragma unroll
					for (int t = 0; t < BN / 8; t++) {
						s[mt][t][2 * h] = ex2(s[mt][t][2 * h] * sl2 - muse);
						s[mt][t][2 * h + 1] = ex2(s[mt][t][2 * h + 1] * sl2 - muse);
#if !(TREE & 2)
						sum += s[mt][t][2 * h] + s[mt][t][2 * h + 1];
#endif
					}
#if TREE & 2
					sum = row_tree<1>(s[mt], h);
#endif
					lrow[mt][h] = lrow[mt][h] * corr[mt][h] + sum;
				}
			/* unchanged maxima leave corr = 1: the warp skips the D / 2 (MT
			 * times) multiplies when none of its rows' maxima grew (most steps
			 * past the first few) */
			if (!LAZY || warp_any(grew))
#pragma unroll
				for (int mt = 0; mt < MT; mt++)
#pragma unroll
					for (int h = 0; h < 2; h++)
#pragma unroll
						for (int t = 0; t < D / 8; t++) {
							acc[mt][t][2 * h] *= corr[mt][h];
							acc[mt][t][2 * h + 1] *= corr[mt][h];
						}

			/* O += P V: P's C layout is the A layout of 16 keys at a time */
#pragma unroll
			for (int kk = 0; kk < BN / 16; kk++) {
				unsigned a[MT][4];
#pragma unroll
				for (int mt = 0; mt < MT; mt++) {
					a[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
					a[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
					a[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
					a[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
				}
#pragma unroll
				for (int t = 0; t < D / 8; t += 2) {
					unsigned b[4];
#if XADDR
					ldsm4t(b, tv + (voff ^ (t << 4)) + 16 * kk * D * 2);
#else
					int mi = lane / 8;
					ldsm4t(b, tv + 2 * swz(16 * kk + 8 * (mi % 2) + lane % 8, t + mi / 2));
#endif
#pragma unroll
					for (int mt = 0; mt < MT; mt++) {
						mma(acc[mt][t], a[mt], b[0], b[1]);
						mma(acc[mt][t + 1], a[mt], b[2], b[3]);
					}
				}
			}
		}
		__syncthreads(); /* this buffer is refilled at the next step */
	}
	cp_wait<0>(); /* the last (empty) group */
#if OSTAGE
	store_o(o + base, sq, acc, lrow, warp, lane, w0, N);
#else
	store_o_direct(o + base, acc, lrow, lane, w0, N);
#endif
}
