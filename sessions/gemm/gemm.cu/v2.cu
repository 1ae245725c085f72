// GEMM, step 2 of 4: the products on the tensor cores.  C = A B as in step
// 1 (A [M, K], B [K, N], C [M, N], row-major bf16, f32 sums, bf16 out).
//
// What changes from step 1: each warp owns a 64 x 64 block of C as 4 x 8
// tiles of mma.sync.m16n8k16 (bf16 in, f32 accumulate: 128 f32 a thread in
// the mma's register layout), and feeds them from shared memory with
// ldmatrix: one ldmatrix.x4 gives a 16 x 16 piece of A in the A-fragment
// layout, and one ldmatrix.x4.trans gives two 16 x 8 pieces of B (B is
// row-major, k by n, and the mma wants it column by column: .trans does the
// transpose on the way out of shared memory).  The BM x BK and BK x BN slabs
// arrive by cp.async, 16 bytes a copy straight to shared memory (no
// registers on the way), with the src-size operand zero-filling what lies
// past M, N or K; rows that are not 16-byte aligned (K or N not a multiple
// of 8, as at 1001) take a scalar path.  The tiles are stored plainly (in dynamic shared memory, the spec's smem=), one
// row after another, and there is a single stage: the block waits for its
// copies, computes, waits at a barrier, and only then copies the next slab.
//
// What to look at in kbench: SASS has HMMA.16816.F32.BF16 and LDSM.16.M88.4
// / LDSM.16.MT88.4 where step 1 had FFMA and LDS (`kbench compile`, SASS
// pane), and LDGSTS for the copies.  The profile shows tensor_pipe_pct
// well below 100, shared_bank_conflicts on every LDSM (a 64-byte A row and
// a BN * 2-byte B row put the 8 rows an ldmatrix reads in the same banks:
// 4- and 8-way), and stalls at the barrier and on the copies
// (long_scoreboard: nothing overlaps the wait for global memory).  Step 3
// swizzles the tiles (no conflicts), pipelines the copies over several
// stages and uses 8 warps on a larger tile.
//
//! kernel  gemm_bf16
//! arg     S = 4096
//! arg     M = S
//! arg     N = S
//! arg     K = S
//! in      a : bf16[M, K] = randn(seed=1)
//! in      b : bf16[K, N] = randn(seed=2)
//! out     c : bf16[M, N]
//! launch  grid=(cdiv(N, BN), cdiv(M, BM)) block=(BM / 64 * (BN / 64) * 32) smem=((BM + BN) * BK * 2)
//! ref     matmul(a, b) -> c
//! tol     rtol=2e-2 atol=2e-2
//! flops   2*M*N*K
//! sweep   S = 4096, 8192, 4000, 1001
//! tune    BM = 128, 64
//! tune    BN = 128, 64
//! tune    BK = 32, 64

#include <cuda_bf16.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#define WM 64 /* a warp's block of C */
#define WN 64
#define MT (WM / 16) /* its mma tiles: MT x NT of 16 x 8 */
#define NT (WN / 8)
#define THREADS (BM / WM * (BN / WN) * 32)

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* 16 bytes from src to shared dst; only the first `bytes` are read, the rest
 * of the 16 are zeros. */
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

__device__ __forceinline__ void ldsm_x4(unsigned *r, unsigned addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* Two B fragments (n tiles j and j + 1) from a k-major tile. */
__device__ __forceinline__ void ldsm_x4_trans(unsigned *b0, unsigned *b1, unsigned addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])
		     : "r"(addr));
}

/* d += a b for one m16n8k16 tile, f32 accumulate. */
__device__ __forceinline__ void mma_bf16(float *d, const unsigned *a, const unsigned *b)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
		     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* The R x C tile at (r0, c0) of the row-major rows x cols matrix g into
 * shared s (row-major, C a row), zeros outside g: cp.async 16 bytes at a
 * time when vec (every row of g 16-byte aligned), else element by element. */
template <int R, int C>
__device__ __forceinline__ void load_tile(__nv_bfloat16 *s, const __nv_bfloat16 *g, int r0, int c0,
					  int rows, int cols, bool vec)
{
	static_assert(R * C / 8 % THREADS == 0, "a tile is a whole number of 16-byte copies a thread");
	if (vec) {
#pragma unroll
		for (int it = 0; it < R * C / 8 / THREADS; it++) {
			const int i = threadIdx.x + it * THREADS, r = i / (C / 8), c = i % (C / 8) * 8;
			const bool in = r0 + r < rows && c0 + c < cols; /* cols % 8 == 0: all 8 or none */
			const __nv_bfloat16 *src = in ? g + (size_t)(r0 + r) * cols + c0 + c : g;
			cp_async16(smem_addr(s + r * C + c), src, in ? 16 : 0);
		}
	} else {
		for (int i = threadIdx.x; i < R * C; i += THREADS) {
			const int r = i / C, c = i % C;
			const bool in = r0 + r < rows && c0 + c < cols;
			s[r * C + c] = in ? g[(size_t)(r0 + r) * cols + c0 + c] : __float2bfloat16_rn(0.0f);
		}
	}
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
	 __nv_bfloat16 *__restrict__ c, int M, int N, int K)
{
	extern __shared__ __align__(128) __nv_bfloat16 smem[];
	__nv_bfloat16 *As = smem, *Bs = smem + BM * BK; /* [BM][BK], [BK][BN] */
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	const int wm = warp / (BN / WN) * WM, wn = warp % (BN / WN) * WN; /* this warp's block */
	const bool a_vec = K % 8 == 0 && ((size_t)a & 15) == 0;
	const bool b_vec = N % 8 == 0 && ((size_t)b & 15) == 0;
	float acc[MT][NT][4] = {};

	for (int k0 = 0; k0 < K; k0 += BK) {
		load_tile<BM, BK>(As, a, m0, k0, M, K, a_vec);
		load_tile<BK, BN>(Bs, b, k0, n0, K, N, b_vec);
		asm volatile("cp.async.wait_all;\n" ::);
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			unsigned fa[MT][4], fb[NT][2];
			/* lanes 0-15 name rows 0-15 at k kk..kk+7, lanes 16-31 the same rows at kk+8.. */
#pragma unroll
			for (int i = 0; i < MT; i++)
				ldsm_x4(fa[i], smem_addr(&As[(wm + i * 16 + lane % 16) * BK + kk + lane / 16 * 8]));
			/* lanes 0-15 name k rows kk..kk+15 at columns j*8.., lanes 16-31 at (j+1)*8.. */
#pragma unroll
			for (int j = 0; j < NT; j += 2)
				ldsm_x4_trans(fb[j], fb[j + 1],
					      smem_addr(&Bs[(kk + lane % 16) * BN + wn + j * 8 + lane / 16 * 8]));
#pragma unroll
			for (int i = 0; i < MT; i++)
#pragma unroll
				for (int j = 0; j < NT; j++)
					mma_bf16(acc[i][j], fa[i], fb[j]);
		}
		__syncthreads(); /* every warp is done with the slabs before they are refilled */
	}

	/* acc[i][j] holds rows g and g + 8 (g = lane / 4), columns 2 (lane % 4) and + 1, of tile (i, j). */
	const bool pairs = N % 2 == 0 && ((size_t)c & 3) == 0;
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int r = m0 + wm + i * 16 + lane / 4 + h * 8;
			if (r >= M)
				continue;
#pragma unroll
			for (int j = 0; j < NT; j++) {
				const int n = n0 + wn + j * 8 + lane % 4 * 2;
				const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
				__nv_bfloat16 *p = c + (size_t)r * N + n;
				if (pairs && n + 1 < N)
					*(__nv_bfloat162 *)p = __floats2bfloat162_rn(v0, v1);
				else if (n < N) {
					p[0] = __float2bfloat16_rn(v0);
					if (n + 1 < N)
						p[1] = __float2bfloat16_rn(v1);
				}
			}
		}
}
