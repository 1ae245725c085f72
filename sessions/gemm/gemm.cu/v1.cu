// GEMM, step 1 of 4: shared-memory tiles, FMA on the CUDA cores (the
// baseline).  C = A B with A [M, K], B [K, N], C [M, N], all row-major bf16;
// products summed in f32, C rounded to bf16 once at the end (every step of
// kernels/gemm/ has the same inputs, output and tolerance, so their times
// compare).
//
// A block of (BM / 8) x (BN / 8) threads owns a BM x BN tile of C and walks
// K BK at a time: it copies the BM x BK slab of A and the BK x BN slab of B
// into shared memory (as f32, converted once on the way in; A stored k-major
// so that a thread's 8 rows of one k are two float4), then every thread
// keeps an 8 x 8 block of C in 64 registers and, for each k, reads 8 values
// of A and 8 of B from shared memory for 64 FMAs.  Loads are one bf16 at a
// time with bounds checks, so any M, N, K works (K = 1001 included).
//
// What to look at in kbench: SASS is FFMA and LDS.128, no HMMA (`kbench
// compile`, the SASS pane); the profile's pipe utilisation shows the FMA
// pipe busy and the tensor pipe idle; compute lands at a few percent of the
// bf16 tensor peak.  Step 2 moves the products onto the tensor cores.
//
//! kernel  gemm_bf16
//! arg     S = 4096
//! arg     M = S
//! arg     N = S
//! arg     K = S
//! in      a : bf16[M, K] = randn(seed=1)
//! in      b : bf16[K, N] = randn(seed=2)
//! out     c : bf16[M, N]
//! launch  grid=(cdiv(N, BN), cdiv(M, BM)) block=(BM / 8 * (BN / 8))
//! ref     matmul(a, b) -> c
//! tol     rtol=2e-2 atol=2e-2
//! flops   2*M*N*K
//! sweep   S = 4096, 8192, 4000, 1001
//! tune    BM = 128, 64
//! tune    BN = 128, 64
//! tune    BK = 8, 16

#include <cuda_bf16.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#define TM 8 /* a thread's block of C: TM rows x TN columns */
#define TN 8
#define THREADS (BM / TM * (BN / TN))
#define PAD 4 /* As rows padded so the transposing stores hit 8 banks, not 1 */

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_bf16(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
	  __nv_bfloat16 *__restrict__ c, int M, int N, int K)
{
	__shared__ __align__(16) float As[BK][BM + PAD]; /* A's slab, k-major */
	__shared__ __align__(16) float Bs[BK][BN];
	const int tid = threadIdx.x, m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	const int tr = tid / (BN / TN) * TM, tc = tid % (BN / TN) * TN; /* this thread's block */
	float acc[TM][TN] = {};

	for (int k0 = 0; k0 < K; k0 += BK) {
		for (int i = tid; i < BM * BK; i += THREADS) { /* consecutive threads: consecutive k */
			const int r = i / BK, k = i % BK;
			const bool in = m0 + r < M && k0 + k < K;
			As[k][r] = in ? __bfloat162float(a[(size_t)(m0 + r) * K + k0 + k]) : 0.0f;
		}
		for (int i = tid; i < BK * BN; i += THREADS) {
			const int k = i / BN, n = i % BN;
			const bool in = k0 + k < K && n0 + n < N;
			Bs[k][n] = in ? __bfloat162float(b[(size_t)(k0 + k) * N + n0 + n]) : 0.0f;
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < BK; k++) {
			float x[TM], y[TN];
#pragma unroll
			for (int i = 0; i < TM; i += 4)
				*(float4 *)&x[i] = *(const float4 *)&As[k][tr + i];
#pragma unroll
			for (int j = 0; j < TN; j += 4)
				*(float4 *)&y[j] = *(const float4 *)&Bs[k][tc + j];
#pragma unroll
			for (int i = 0; i < TM; i++)
#pragma unroll
				for (int j = 0; j < TN; j++)
					acc[i][j] = fmaf(x[i], y[j], acc[i][j]);
		}
		__syncthreads(); /* every thread is done with the slabs before they are refilled */
	}

	const bool pairs = N % 2 == 0 && ((size_t)c & 3) == 0; /* 4-byte stores of 2 bf16 */
#pragma unroll
	for (int i = 0; i < TM; i++) {
		const int r = m0 + tr + i;
		if (r >= M)
			break;
#pragma unroll
		for (int j = 0; j < TN; j += 2) {
			const int n = n0 + tc + j;
			__nv_bfloat16 *p = c + (size_t)r * N + n;
			if (pairs && n + 1 < N)
				*(__nv_bfloat162 *)p = __floats2bfloat162_rn(acc[i][j], acc[i][j + 1]);
			else if (n < N) {
				p[0] = __float2bfloat16_rn(acc[i][j]);
				if (n + 1 < N)
					p[1] = __float2bfloat16_rn(acc[i][j + 1]);
			}
		}
	}
}
