// Attention forward, step 3 of 3: FlashAttention-3 on sm_90a.  The same o =
// softmax(q k^T / sqrt(D)) v as steps 1 and 2 ([B, H, N, D] bf16, f32
// sums, bf16 out, causal when CAUSAL is 1).
//
// What changes from step 2: the copies and the products move to Hopper's
// engines, and the block's warps split into roles, as 04_wgmma.cu does for
// GEMM.  A block owns 128 query rows of one (batch, head) and is three
// warpgroups:
//  - warpgroup 0, the producer, gives its registers away (setmaxnreg.dec)
//    and one thread issues TMA loads: the block's Q once (D / 64 slabs of
//    128 rows x 64 columns, 128-byte swizzled by the copy engine), then per
//    step the BN-key K and V tiles into a STAGES-deep ring, each completing
//    on its own "full" mbarrier, each stage refilled once both consumers
//    have handed it back on its "empty" mbarrier;
//  - warpgroups 1 and 2, the consumers (setmaxnreg.inc), 64 query rows
//    each: S = Q K^T as wgmma m64nBNk16 with both operands in shared memory
//    (K-major, as 04's), the online softmax of step 2 on the accumulators,
//    then O += P V as wgmma with P from registers (the accumulators' layout
//    is the A operand's, as with mma.sync) and V in shared memory read
//    MN-major (imm-trans-b: V is [key][d], the N dim contiguous).
// Tails: the tensormaps are 4-d ([B, H, N, D]), so TMA zero-fills keys and
// queries past N within their own head; keys past N are masked to -inf.
//
// Phase 2 of issue 30, the softmax of one tile overlapped with the
// products of the next, on by default since its first GPU run (H200,
// 2026-11-28, scripts/gpu-fa3.sh, D = 128, N = 4096-16384, causal and not:
// 98.5-116.9% of the fastest of cuDNN and flash, 570-677 TFLOP/s, where the
// version that waited for each wgmma group read 86.2-104.0%):
//  - PINGPONG=1: the consumers take turns at the tensor cores on named
//    barriers 1 and 2 (bar.sync by the consumer whose turn it is, bar.arrive
//    by the other, 256 threads), so that one's softmax runs while the
//    other's products hold the tensor cores (FlashAttention-3's warp
//    scheduler barriers);
//  - OVERLAP=1: a step issues S of step j and P V of step j - 1 as two
//    groups, waits for S alone (wait_group 1), runs the softmax of step j
//    while P V runs, and rescales O and rewrites P only after wait_group 0:
//    S, O and P live at once (64 + 64 + 32 f32/b32 registers at D = 128,
//    within setmaxnreg's 232; ptxas keeps it without spills);
//  - EX2=1: each exponential one ex2.approx.ftz (MUFU.EX2), as 02_fa2.cu.
// Either of the first two hands a stage's K back once S has read it and
// its V once P V has (KV_APART: two "empty" mbarriers a stage), so the
// producer refills K sooner.  Measured alone (same run): PINGPONG 90.7-
// 108.6%, OVERLAP 94.2-110.9%, both without EX2 88.0-103.5% (the turns
// then wait on the slower exp2f softmax), all three 98.5-116.9%; STAGES=3
// changes nothing (108.5 vs 108.4% at N = 16384).  The SASS shows the
// order: HGMMA x16, WARPGROUP.DEPBAR 1, the softmax's MUFUs, then DEPBAR 0
// (ptxas first scheduled DEPBAR 0 above the softmax, to write P early,
// until the wait for the next V tile went between them).  `-D PINGPONG=0
// -D OVERLAP=0 -D EX2=0` is the version that waited.
//
// What to look at in kbench: HGMMA.64x128x16 and UTMALDG in SASS (no HMMA,
// LDSM or LDGSTS); the warp roles in `compile` (setmaxnreg); the roofline
// against the wgmma ceiling.
//
// D is compile-time: `--define D=64` for the other head size; so are
// PINGPONG, OVERLAP, STAGES and EX2 (`--define OVERLAP=1`; EX2=1: each
// exponential one MUFU.EX2, ex2.approx.ftz, as 02_fa2.cu's default).
//
//! kernel    attn_fa3
//! arch      sm_90a
//! arg       N = 4096
//! arg       B = max(1, 16384 / N)
//! arg       H = 16
//! arg       CAUSAL = 0
//! tune      D = 128
//! tune      STAGES = 2
//! in        q : bf16[B, H, N, D] = randn(seed=1)
//! in        k : bf16[B, H, N, D] = randn(seed=2)
//! in        v : bf16[B, H, N, D] = randn(seed=3)
//! out       o : bf16[B, H, N, D]
//! tensormap tq : q box=(1, 1, 128, 64) swizzle=128
//! tensormap tk : k box=(1, 1, 128, 64) swizzle=128
//! tensormap tv : v box=(1, 1, 128, 64) swizzle=128
//! launch    grid=(cdiv(N, 128), B * H) block=(384) smem=(128 + 2 * STAGES * 128) * D * 2 + 1024
//! ref       attention(q, k, v, causal=CAUSAL) -> o
//! tol       rtol=2e-2 atol=1e-2
//! bytes     4*B*H*N*D*2
//! flops     4*B*H*N*N*D / (1 + CAUSAL)
//! sweep     N = 1024, 4096, 1000, 4097

#include <cuda.h>
#include <cuda_bf16.h>

#ifndef D
#define D 128
#endif
#define BM 128                      /* query rows a block: 64 a consumer */
#define BN 128                      /* keys a step (the tensormaps' box) */
#ifndef STAGES
#define STAGES 2                    /* K/V ring depth (3 fits at D = 128: 225 KiB) */
#endif
#ifndef PINGPONG
#define PINGPONG 1                  /* 1: the consumers take turns at the tensor cores */
#endif
#ifndef OVERLAP
#define OVERLAP 1                   /* 1: S of step j + 1 issued before softmax j */
#endif
#define KV_APART (PINGPONG || OVERLAP) /* K and V handed back apart (kempty, vempty) */
#ifndef EX2
#define EX2 1                       /* 1: 2^x as one ex2.approx.ftz; 0: exp2f */
#endif
#define SLAB_Q (BM * 128)           /* 64 columns of Q: 128-byte rows */
#define SLAB_KV (BN * 128)
#define Q_BYTES (BM * D * 2)
#define KV_BYTES (BN * D * 2)
#define CONSUMER_WARPS 8
#define NEG_INF __int_as_float(0xff800000)

static_assert(D == 64 || D == 128, "head dims 64 and 128");

typedef unsigned long long u64;
typedef __nv_bfloat16 bf16;

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* A wgmma descriptor of a K-major tile, 128-byte swizzle: 128-byte rows,
 * 8-row atoms 1024 bytes apart (the stride offset). */
__device__ __forceinline__ u64 desc_k(unsigned addr)
{
	return (u64)((addr & 0x3FFFF) >> 4) | (u64)1 << 16 | (u64)(1024 >> 4) << 32 | (u64)1 << 62;
}

/* An MN-major tile (V: rows are keys, the K dim; 64 d a 128-byte row, the
 * N dim), 128-byte swizzle: 8-key groups 1024 bytes apart (stride offset),
 * the next 64 d (the next slab) SLAB_KV bytes on (leading offset). */
__device__ __forceinline__ u64 desc_mn(unsigned addr)
{
	return (u64)((addr & 0x3FFFF) >> 4) | (u64)(SLAB_KV >> 4) << 16 | (u64)(1024 >> 4) << 32 |
	       (u64)1 << 62;
}

/* ---- mbarriers and TMA -------------------------------------------------- */

__device__ __forceinline__ void bar_init(unsigned bar, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}

__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity)
{
	asm volatile("{\n\t.reg .pred done;\n"
		     "WAIT_%=:\n\t"
		     "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
		     "@!done bra WAIT_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void bar_expect_tx(unsigned bar, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
		     : "memory");
}

/* The box of a 4-d map at (d, n, h, b), innermost first; completes on bar. */
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap *map, unsigned bar,
					 int d, int n, int h, int b)
{
	asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4, %5}], [%6];"
		     ::"r"(dst), "l"(map), "r"(d), "r"(n), "r"(h), "r"(b), "r"(bar) : "memory");
}

/* ---- wgmma ---------------------------------------------------------------- */

__device__ __forceinline__ void wgmma_fence()
{
	asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
	asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int W> __device__ __forceinline__ void wgmma_wait()
{
	asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(W) : "memory");
}

/* D[64 x 128] (+)= A[64 x 16] B[16 x 128], both K-major in shared memory; scale_d 0
 * starts the sum. */
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], u64 da, u64 db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
		"}, %64, %65, p, 1, 1, 0, 0;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		: "l"(da), "l"(db), "r"(scale_d));
}

/* D[64 x 128] += A[64 x 16] B[16 x 128]: A from registers (the mma.sync A
 * layout, per warp), B in shared memory MN-major (transposed: imm-trans-b 1). */
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const unsigned (&a)[4], u64 db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
		"}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}

/* D[64 x 64] += A[64 x 16] B[16 x 64]: A from registers (the mma.sync A
 * layout, per warp), B in shared memory MN-major (transposed: imm-trans-b 1). */
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const unsigned (&a)[4], u64 db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
		"}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
}


#if D == 128
#define WGMMA_PV wgmma_rs_n128
#else
#define WGMMA_PV wgmma_rs_n64
#endif

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *(unsigned *)&v;
}

/* ---- operand fences, the consumers' turns -------------------------------- */

/* An empty asm that reads and writes r: the compiler may not move a use of
 * r across it (a wgmma owns its registers until its wait_group). */
template <int n> __device__ __forceinline__ void fence_f(float (&r)[n])
{
#pragma unroll
	for (int i = 0; i < n; i++)
		asm volatile("" : "+f"(r[i])::"memory");
}

template <int n> __device__ __forceinline__ void fence_u(unsigned (&r)[n][4])
{
#pragma unroll
	for (int i = 0; i < n; i++)
		asm volatile("" : "+r"(r[i][0]), "+r"(r[i][1]), "+r"(r[i][2]), "+r"(r[i][3])::"memory");
}

/* PINGPONG: consumer c's turn at the tensor cores is named barrier 1 + c
 * (0 is __syncthreads'), of 256 threads: c's 128 wait on it (bar.sync), the
 * other consumer's 128 pass the turn to c (bar.arrive).  Empty otherwise. */
__device__ __forceinline__ void turn_wait(int c)
{
#if PINGPONG
	asm volatile("bar.sync %0, 256;" ::"r"(1 + c) : "memory");
#endif
}

__device__ __forceinline__ void turn_pass(int c)
{
#if PINGPONG
	asm volatile("bar.arrive %0, 256;" ::"r"(2 - c) : "memory");
#endif
}

/* ---- the kernel ------------------------------------------------------------ */

/* The producer: one thread loads Q, then keeps the K/V ring full.  With
 * KV_APART a stage's K is refilled once the consumers have read it (S), its
 * V once P V is done; otherwise both wait for P V. */
__device__ void produce(const CUtensorMap *tq, const CUtensorMap *tk, const CUtensorMap *tv,
			unsigned ring, unsigned bars, int m0, int h, int b, int steps)
{
	unsigned qfull = bars, kfull = bars + 8, vfull = kfull + 8 * STAGES, kempty = vfull + 8 * STAGES;
	unsigned kring = ring + Q_BYTES, vring = kring + STAGES * KV_BYTES;
	bar_expect_tx(qfull, Q_BYTES);
	for (int j = 0; j < D / 64; j++)
		tma_load(ring + j * SLAB_Q, tq, qfull, 64 * j, m0, h, b);
	for (int it = 0; it < steps; it++) {
		int s = it % STAGES;
		if (it >= STAGES) /* both consumers' (it / STAGES)-th release of s */
			bar_wait(kempty + 8 * s, (it / STAGES - 1) & 1);
		bar_expect_tx(kfull + 8 * s, KV_BYTES);
		for (int j = 0; j < D / 64; j++)
			tma_load(kring + s * KV_BYTES + j * SLAB_KV, tk, kfull + 8 * s, 64 * j, it * BN, h, b);
#if KV_APART
		if (it >= STAGES) /* vempty[s] */
			bar_wait(kempty + 8 * STAGES + 8 * s, (it / STAGES - 1) & 1);
#endif
		bar_expect_tx(vfull + 8 * s, KV_BYTES);
		for (int j = 0; j < D / 64; j++)
			tma_load(vring + s * KV_BYTES + j * SLAB_KV, tv, vfull + 8 * s, 64 * j, it * BN, h, b);
	}
}

/* Keys past N, and with CAUSAL keys past the row, to -inf in the S of the
 * step at key n0 (w0: the warp's first row, row0: the thread's). */
__device__ __forceinline__ void mask_tile(float (&sc)[BN / 2], int n0, int N, int CAUSAL, int w0,
					  int row0, int lane)
{
	if (n0 + BN > N || (CAUSAL && n0 + BN > w0))
#pragma unroll
		for (int i = 0; i < BN / 2; i++) {
			int key = n0 + 8 * (i / 4) + 2 * (lane % 4) + (i & 1);
			int row = row0 + 8 * (i / 2 % 2);
			if (key >= N || (CAUSAL && key > row))
				sc[i] = NEG_INF;
		}
}

/* 2^x: one MUFU.EX2 with EX2 (ex2.approx.ftz, as 02_fa2.cu); exp2f adds
 * a range test and two multiplies to keep subnormal results, which P
 * rounded to bf16 does not need. */
__device__ __forceinline__ float ex2(float x)
{
#if EX2
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
#else
	return exp2f(x);
#endif
}

/* The online softmax of one step over S (the C layout: S[4j + 2h + e] is
 * row row0 + 8h, key 8j + 2(lane % 4) + e), P left in S; corr[h] is what
 * O's row h must be scaled by (rescale), before P V of this step. */
__device__ __forceinline__ void softmax_rows(float (&s)[BN / 2], float *mrow, float *lrow,
					     float *corr)
{
	const float sl2 = 1.44269504f * rsqrtf((float)D); /* scale * log2(e) */
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float mx = NEG_INF;
#pragma unroll
		for (int j = 0; j < BN / 8; j++)
			mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
		mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, 1));
		mx = fmaxf(mx, __shfl_xor_sync(~0u, mx, 2));
		float mnew = fmaxf(mrow[h], mx * sl2);
		float muse = mnew == NEG_INF ? 0.f : mnew, sum = 0;
		corr[h] = ex2(mrow[h] - muse);
		mrow[h] = mnew;
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			s[4 * j + 2 * h] = ex2(s[4 * j + 2 * h] * sl2 - muse);
			s[4 * j + 2 * h + 1] = ex2(s[4 * j + 2 * h + 1] * sl2 - muse);
			sum += s[4 * j + 2 * h] + s[4 * j + 2 * h + 1];
		}
		lrow[h] = lrow[h] * corr[h] + sum;
	}
}

__device__ __forceinline__ void rescale(float (&acc)[D / 2], const float *corr)
{
#pragma unroll
	for (int h = 0; h < 2; h++)
#pragma unroll
		for (int j = 0; j < D / 8; j++) {
			acc[4 * j + 2 * h] *= corr[h];
			acc[4 * j + 2 * h + 1] *= corr[h];
		}
}

/* P (f32, the C layout) as bf16 A fragments: the C layout of 16 keys is the
 * A layout of a k16 step, as with mma.sync. */
__device__ __forceinline__ void pack_p(unsigned (&a)[BN / 16][4], const float (&sc)[BN / 2])
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++) {
		a[kk][0] = pack_bf16(sc[8 * kk], sc[8 * kk + 1]);
		a[kk][1] = pack_bf16(sc[8 * kk + 2], sc[8 * kk + 3]);
		a[kk][2] = pack_bf16(sc[8 * kk + 4], sc[8 * kk + 5]);
		a[kk][3] = pack_bf16(sc[8 * kk + 6], sc[8 * kk + 7]);
	}
}

/* S = Q K^T of consumer c's 64 rows and the K tile at kt: D / 16 wgmmas
 * from shared memory, not committed. */
__device__ __forceinline__ void issue_s(float (&sc)[BN / 2], unsigned q, unsigned kt, int c)
{
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++)
		wgmma_ss_n128(sc, desc_k(q + kk / 4 * SLAB_Q + c * 64 * 128 + 32 * (kk % 4)),
			      desc_k(kt + kk / 4 * SLAB_KV + 32 * (kk % 4)), kk > 0);
}

/* O += P V with the V tile at vt: BN / 16 wgmmas, P from registers, not
 * committed. */
__device__ __forceinline__ void issue_pv(float (&acc)[D / 2], const unsigned (&a)[BN / 16][4],
					 unsigned vt)
{
#pragma unroll
	for (int kk = 0; kk < BN / 16; kk++)
		WGMMA_PV(acc, a[kk], desc_mn(vt + kk * 16 * 128));
}

/* O / l of the thread's rows row0 and row0 + 8 (those below N) as bf16. */
__device__ __forceinline__ void store_o(bf16 *o, size_t base, int N, const float (&acc)[D / 2],
				       const float *lrow, int row0, int lane)
{
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float l = lrow[h];
		l += __shfl_xor_sync(~0u, l, 1);
		l += __shfl_xor_sync(~0u, l, 2);
		int row = row0 + 8 * h;
		if (row >= N)
			continue;
		float inv = 1.f / l;
		bf16 *orow = o + base + (size_t)row * D + 2 * (lane % 4);
#pragma unroll
		for (int j = 0; j < D / 8; j++)
			*(__nv_bfloat162 *)(orow + 8 * j) =
				__floats2bfloat162_rn(acc[4 * j + 2 * h] * inv, acc[4 * j + 2 * h + 1] * inv);
	}
}

#if !OVERLAP
/* A consumer warpgroup: rows [m0 + 64 c, m0 + 64 c + 64), each step's S
 * waited for before its softmax, P V before the next S.  With PINGPONG a
 * turn is P V of step j and S of step j + 1 (consumer 0 first), so one
 * consumer's softmax runs while the other's products hold the tensor cores
 * (FlashAttention-3's schedule without the intra-warpgroup overlap). */
__device__ void consume(bf16 *o, size_t base, int N, int CAUSAL, unsigned ring, unsigned bars,
			int m0, int c, int steps)
{
	unsigned qfull = bars, kfull = bars + 8, vfull = kfull + 8 * STAGES, kempty = vfull + 8 * STAGES;
	unsigned vempty = kempty + (KV_APART ? 8 * STAGES : 0);
	unsigned kring = ring + Q_BYTES, vring = kring + STAGES * KV_BYTES;
	int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
	int row0 = m0 + 64 * c + 16 * warp + lane / 4; /* rows row0, row0 + 8 */
	float acc[D / 2], mrow[2] = {NEG_INF, NEG_INF}, lrow[2] = {0, 0};
#pragma unroll
	for (int i = 0; i < D / 2; i++)
		acc[i] = 0;
	bar_wait(qfull, 0);
	if (c == 1) /* consumer 0 takes the first turn; one wait and one pass a step each */
		turn_pass(c);
	turn_wait(c);
	for (int it = 0; it < steps; it++) {
		int s = it % STAGES, n0 = it * BN;
		unsigned kt = kring + s * KV_BYTES, vt = vring + s * KV_BYTES;
		float sc[BN / 2], corr[2];
		unsigned a[BN / 16][4];
		bar_wait(kfull + 8 * s, (it / STAGES) & 1);
		wgmma_fence();
		issue_s(sc, ring, kt, c);
		wgmma_commit();
		turn_pass(c);
		wgmma_wait<0>();
#if KV_APART
		if (lane == 0)
			bar_arrive(kempty + 8 * s);
#endif
		mask_tile(sc, n0, N, CAUSAL, m0 + 64 * c + 16 * warp, row0, lane);
		softmax_rows(sc, mrow, lrow, corr);
		rescale(acc, corr);
		pack_p(a, sc);
		bar_wait(vfull + 8 * s, (it / STAGES) & 1);
		turn_wait(c);
		wgmma_fence();
		issue_pv(acc, a, vt);
		wgmma_commit();
		wgmma_wait<0>();
		if (lane == 0)
			bar_arrive(vempty + 8 * s);
	}
	if (c == 0) /* consumer 1's last turn; consumer 1 passes none back (none is waited for) */
		turn_pass(c);
	store_o(o, base, N, acc, lrow, row0, lane);
}
#else
/* A consumer warpgroup, OVERLAP: step j issues S of step j and P V of step
 * j - 1 as two wgmma groups, waits for the first (wait_group 1), runs the
 * softmax of step j while P V runs, then waits for P V (wait_group 0) and
 * only then rescales O and overwrites P: S, O and P live together (64 + 64
 * + 32 registers at D = BN = 128).  The wait for V of step j sits between
 * the softmax and the wait_group 0: its try_wait loop ends ptxas's basic
 * block, which keeps ptxas from scheduling the wait_group (and the writes
 * of P it guards) into the softmax.  With PINGPONG a turn is the two
 * groups' issue (FlashAttention-3's schedule). */
__device__ void consume(bf16 *o, size_t base, int N, int CAUSAL, unsigned ring, unsigned bars,
			int m0, int c, int steps)
{
	unsigned qfull = bars, kfull = bars + 8, vfull = kfull + 8 * STAGES, kempty = vfull + 8 * STAGES;
	unsigned vempty = kempty + 8 * STAGES;
	unsigned kring = ring + Q_BYTES, vring = kring + STAGES * KV_BYTES;
	int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
	int row0 = m0 + 64 * c + 16 * warp + lane / 4, w0 = m0 + 64 * c + 16 * warp;
	float acc[D / 2], sc[BN / 2], mrow[2] = {NEG_INF, NEG_INF}, lrow[2] = {0, 0}, corr[2];
	unsigned a[BN / 16][4];
#pragma unroll
	for (int i = 0; i < D / 2; i++)
		acc[i] = 0;
	bar_wait(qfull, 0);
	bar_wait(kfull, 0); /* step 0: S alone; O is 0, nothing to rescale */
	wgmma_fence();
	issue_s(sc, ring, kring, c);
	wgmma_commit();
	wgmma_wait<0>();
	fence_f(sc);
	if (lane == 0)
		bar_arrive(kempty);
	mask_tile(sc, 0, N, CAUSAL, w0, row0, lane);
	softmax_rows(sc, mrow, lrow, corr);
	bar_wait(vfull, 0);
	pack_p(a, sc);
	if (c == 1 && steps > 1) /* consumer 0 takes the first turn */
		turn_pass(c);
	for (int it = 1; it < steps; it++) {
		int s = it % STAGES, p = (it - 1) % STAGES;
		bar_wait(kfull + 8 * s, (it / STAGES) & 1);
		turn_wait(c);
		wgmma_fence();
		issue_s(sc, ring, kring + s * KV_BYTES, c);
		wgmma_commit();
		issue_pv(acc, a, vring + p * KV_BYTES);
		wgmma_commit();
		turn_pass(c);
		wgmma_wait<1>(); /* S of step it */
		fence_f(sc);
		if (lane == 0)
			bar_arrive(kempty + 8 * s);
		mask_tile(sc, it * BN, N, CAUSAL, w0, row0, lane);
		softmax_rows(sc, mrow, lrow, corr);
		fence_f(sc);
		bar_wait(vfull + 8 * s, (it / STAGES) & 1); /* for the next turn; ends the block */
		wgmma_wait<0>(); /* P V of step it - 1: O and P are ours again */
		fence_f(acc);
		fence_u(a);
		if (lane == 0)
			bar_arrive(vempty + 8 * p);
		rescale(acc, corr);
		pack_p(a, sc);
	}
	int p = (steps - 1) % STAGES;
	wgmma_fence();
	issue_pv(acc, a, vring + p * KV_BYTES);
	wgmma_commit();
	wgmma_wait<0>();
	fence_f(acc);
	if (lane == 0)
		bar_arrive(vempty + 8 * p);
	if (c == 0 && steps > 1) /* consumer 1's last pass (each waits as often as it is passed) */
		turn_wait(c);
	store_o(o, base, N, acc, lrow, row0, lane);
}
#endif

extern "C" __global__ void __launch_bounds__(384, 1)
attn_fa3(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
	 const __grid_constant__ CUtensorMap tv, bf16 *o, int N, int H, int CAUSAL)
{
	extern __shared__ unsigned char smem[];
	/* qfull, kfull[s], vfull[s], kempty[s] (K's and V's), vempty[s] (KV_APART) */
	__shared__ alignas(8) u64 bars[1 + (3 + KV_APART) * STAGES];
	unsigned ring = (smem_addr(smem) + 1023) & ~1023u; /* the 128-byte swizzle's 1 KiB atoms */
	unsigned b0 = smem_addr(bars);
	int mb = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x; /* longest rows first */
	int m0 = mb * BM;
	int nkeys = CAUSAL ? min(N, m0 + BM) : N, steps = (nkeys + BN - 1) / BN;
	if (threadIdx.x == 0) {
		bar_init(b0, 1);
		for (int s = 0; s < STAGES; s++) {
			bar_init(b0 + 8 + 8 * s, 1);
			bar_init(b0 + 8 + 8 * STAGES + 8 * s, 1);
			bar_init(b0 + 8 + 16 * STAGES + 8 * s, CONSUMER_WARPS);
			if (KV_APART)
				bar_init(b0 + 8 + 24 * STAGES + 8 * s, CONSUMER_WARPS);
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	if (threadIdx.x < 128) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
		if (threadIdx.x == 0)
			produce(&tq, &tk, &tv, ring, b0, m0, blockIdx.y % H, blockIdx.y / H, steps);
		return;
	}
	asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
	consume(o, (size_t)blockIdx.y * N * D, N, CAUSAL, ring, b0, m0, threadIdx.x / 128 - 1, steps);
}
