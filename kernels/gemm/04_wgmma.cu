// GEMM, step 4 of 4: TMA + wgmma, warp-specialised and persistent (sm_90a).
// C = A B^T with A [M, K] and B [N, K] row-major bf16 (both operands
// K-major, the layout wgmma reads without a transpose; `ref matmul(a, b,
// transpose_b=true)`), products summed in f32, C rounded to bf16 once.
//
// A block is three warpgroups and owns one SM for the whole run: it walks
// the output tiles blockIdx.x, blockIdx.x + gridDim.x, ... (grouped along M
// so that neighbouring blocks share B tiles in L2).
//  - warpgroup 0, the producer, gives its registers away (setmaxnreg.dec to
//    40) and one of its threads issues the copies: per K step of 64, one
//    TMA load of the 128 x 64 A tile and one of the BN x 64 B tile into a
//    STAGES-deep ring of shared-memory buffers, 128-byte swizzled by the
//    copy engine itself (the `//! tensormap` lines), completing on that
//    stage's "full" mbarrier.
//  - warpgroups 1 and 2, the consumers (setmaxnreg.inc to 232: 128 f32
//    accumulators each for a 64 x 256 half of the tile), wait on "full",
//    issue four wgmma.mma_async m64nBNk16 straight from shared memory
//    (matrix descriptors, no ldmatrix, no register copies of A or B), keep
//    one group in flight, and hand the stage back on its "empty" mbarrier
//    once the wgmmas that read it are done.  The epilogue converts to bf16
//    and stores with bounds checks while the producer already fills the
//    ring for the next tile.
// Edges: TMA zero-fills whatever lies outside A or B, so M, N and K need
// not be multiples of the tile; the rows of A and B must be 16-byte
// multiples (K a multiple of 8), which kbench checks when it encodes them.
//
// What to look at in kbench: the SASS is HGMMA.64x256x16 with UTMALDG and
// SYNCS (mbarrier) instead of HMMA/LDSM/LDGSTS; `compile` lists the warp
// roles (setmaxnreg 40 / 232); the roofline judges it against the wgmma
// ceiling `kbench calibrate` measures; profile --hot puts the consumers'
// stalls on the mbarrier wait when the producer cannot keep up.
//
//! kernel    gemm_bf16
//! arch      sm_90a
//! arg       S = 4096
//! arg       M = S
//! arg       N = S
//! arg       K = S
//! in        a : bf16[M, K] = randn(seed=1)
//! in        b : bf16[N, K] = randn(seed=2)
//! out       c : bf16[M, N]
//! tensormap ta : a box=(128, 64) swizzle=128
//! tensormap tb : b box=(BN, 64) swizzle=128
//! launch    grid=(min(sm_count, cdiv(M, 128) * cdiv(N, BN))) block=(384) smem=STAGES * (128 + BN) * 128 + 1024
//! ref       matmul(a, b, transpose_b=true) -> c
//! tol       rtol=2e-2 atol=2e-2
//! flops     2*M*N*K
//! sweep     S = 4096, 8192, 4000, 1000
//! require   K % 8 == 0   // TMA: the rows of a and b are multiples of 16 bytes
//! tune      BN = 256, 128
//! tune      STAGES = 4, 3
//! tune      GROUP_M = 16, 8

#include <cuda.h>
#include <cuda_bf16.h>

#ifndef BN
#define BN 256
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 16
#endif
#define BM 128
#define BK 64
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#define CONSUMER_WARPS 8

typedef unsigned long long u64;

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* A wgmma matrix descriptor of a K-major tile with the 128-byte swizzle:
 * rows of 128 bytes (64 bf16 of K), 8-row atoms 1024 bytes apart (the
 * stride offset); the leading offset is unused with this swizzle. */
__device__ __forceinline__ u64 desc_sw128(unsigned addr)
{
	return (u64)((addr & 0x3FFFF) >> 4) | (u64)1 << 16 | (u64)(1024 >> 4) << 32 | (u64)1 << 62;
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

/* The box of `map` at (inner, outer) into shared memory; completes on bar. */
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap *map, unsigned bar,
					 int inner, int outer)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];"
		     ::"r"(dst), "l"(map), "r"(inner), "r"(outer), "r"(bar) : "memory");
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

template <int N> __device__ __forceinline__ void wgmma_wait()
{
	asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* D[64 x 256] (+)= A[64 x 16] B[16 x 256], both from shared memory; scale_d 0
 * starts the sum (the accumulators' old values are ignored). */
__device__ __forceinline__ void wgmma_n256(float (&d)[128], u64 da, u64 db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
		"%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
		"%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
		"%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
		"%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
		  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
		: "l"(da), "l"(db), "r"(scale_d));
}

/* D[64 x 128] (+)= A[64 x 16] B[16 x 128], both from shared memory; scale_d 0
 * starts the sum (the accumulators' old values are ignored). */
__device__ __forceinline__ void wgmma_n128(float (&d)[64], u64 da, u64 db, int scale_d)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
		"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
		"%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
		"%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
		"%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
		"%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
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
#if BN == 256
#define WGMMA wgmma_n256
#else
#define WGMMA wgmma_n128
#endif

/* ---- the kernel ------------------------------------------------------------ */

/* Output tile t as (tile row, tile column), GROUP_M tile rows at a time. */
__device__ __forceinline__ void tile_of(int t, int tiles_m, int tiles_n, int *tm, int *tn)
{
	int per_group = GROUP_M * tiles_n, first = t / per_group * GROUP_M;
	int rows = min(tiles_m - first, GROUP_M), r = t % per_group;
	*tm = first + r % rows;
	*tn = r / rows;
}

/* The producer: one thread keeps the ring full, tile after tile. */
__device__ void produce(const CUtensorMap *ta, const CUtensorMap *tb, unsigned ring,
			unsigned full, unsigned empty, int tiles_m, int tiles_n, int ktiles)
{
	int it = 0;
	for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x) {
		int tm, tn;
		tile_of(t, tiles_m, tiles_n, &tm, &tn);
		for (int k = 0; k < ktiles; k++, it++) {
			int s = it % STAGES;
			if (it >= STAGES) /* the consumers' (it / STAGES)-th release of s */
				bar_wait(empty + 8 * s, (it / STAGES - 1) & 1);
			unsigned dst = ring + s * STAGE_BYTES;
			bar_expect_tx(full + 8 * s, STAGE_BYTES);
			tma_load(dst, ta, full + 8 * s, k * BK, tm * BM);
			tma_load(dst + A_BYTES, tb, full + 8 * s, k * BK, tn * BN);
		}
	}
}

/* Accumulators to C: fragment j holds rows r and r + 8, columns 8j + 2(lane % 4) + {0, 1}. */
__device__ __forceinline__ void store_tile(const float (&d)[BN / 2], __nv_bfloat16 *c, int M,
					   int N, int row0, int col0)
{
	int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
	int r = row0 + warp * 16 + lane / 4;
#pragma unroll
	for (int j = 0; j < BN / 8; j++) {
		int col = col0 + 8 * j + 2 * (lane % 4);
#pragma unroll
		for (int h = 0; h < 2; h++) {
			int row = r + 8 * h;
			if (row >= M)
				continue;
			__nv_bfloat16 *p = c + (size_t)row * N + col;
			float x = d[4 * j + 2 * h], y = d[4 * j + 2 * h + 1];
			if (col + 1 < N && N % 2 == 0)
				*(__nv_bfloat162 *)p = __floats2bfloat162_rn(x, y);
			else if (col < N) {
				p[0] = __float2bfloat16_rn(x);
				if (col + 1 < N)
					p[1] = __float2bfloat16_rn(y);
			}
		}
	}
}

/* A consumer warpgroup: rows [64 * half, 64 * half + 64) of every tile. */
__device__ void consume(__nv_bfloat16 *c, int M, int N, unsigned ring, unsigned full,
			unsigned empty, int tiles_m, int tiles_n, int ktiles, int half)
{
	float d[BN / 2];
	int it = 0;
	bool lane0 = threadIdx.x % 32 == 0;
	for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x) {
		int tm, tn;
		tile_of(t, tiles_m, tiles_n, &tm, &tn);
		for (int k = 0; k < ktiles; k++, it++) {
			int s = it % STAGES;
			bar_wait(full + 8 * s, (it / STAGES) & 1);
			unsigned a = ring + s * STAGE_BYTES + half * 64 * 128, b = ring + s * STAGE_BYTES + A_BYTES;
			wgmma_fence();
#pragma unroll
			for (int kk = 0; kk < BK / 16; kk++)
				WGMMA(d, desc_sw128(a + 32 * kk), desc_sw128(b + 32 * kk), k > 0 || kk > 0);
			wgmma_commit();
			if (k > 0) { /* the previous stage's wgmmas are done: give it back */
				wgmma_wait<1>();
				if (lane0)
					bar_arrive(empty + 8 * ((it - 1) % STAGES));
			}
		}
		wgmma_wait<0>();
		if (lane0)
			bar_arrive(empty + 8 * ((it - 1) % STAGES));
		store_tile(d, c, M, N, tm * BM + half * 64, tn * BN);
	}
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_bf16(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
	   __nv_bfloat16 *c, int M, int N, int K)
{
	extern __shared__ unsigned char smem[];
	__shared__ alignas(8) u64 bars[2 * STAGES]; /* full[s], then empty[s] */
	unsigned ring = (smem_addr(smem) + 1023) & ~1023u; /* the 128-byte swizzle's 1 KiB atoms */
	unsigned full = smem_addr(bars), empty = full + 8 * STAGES;
	int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, ktiles = (K + BK - 1) / BK;
	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			bar_init(full + 8 * s, 1);
			bar_init(empty + 8 * s, CONSUMER_WARPS);
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	if (threadIdx.x < 128) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
		if (threadIdx.x == 0)
			produce(&ta, &tb, ring, full, empty, tiles_m, tiles_n, ktiles);
		return;
	}
	asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
	consume(c, M, N, ring, full, empty, tiles_m, tiles_n, ktiles, threadIdx.x / 128 - 1);
}
