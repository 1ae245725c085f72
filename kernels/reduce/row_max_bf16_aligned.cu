// Row max of bf16 at any width (an f32 result): row_sum_bf16_aligned.cu with
// max for +: 128-bit loads of 8 bf16, eight in flight a thread, from each
// row's first 16-byte boundary, with a scalar head and tail of up to 7
// elements (threads 0..6).  The last loads of a row go out together, and
// ROWS = THREADS / 32 gives each warp a row, as row_sum_bf16_aligned.cu.
//
//! kernel  row_max_bf16
//! arg     M = 32768
//! arg     N = 5003
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(cdiv(M, ROWS)) block=(THREADS)
//! ref     max(x, dim=1) -> y
//! tol     rtol=0 atol=0
//! sweep   N = 5003, 4096, 8192, 50257, 4093, 7, 1
//! require min(ROWS - 1, THREADS / ROWS - 32) <= 0   // a block a row, or at most 32 threads a row
//! require THREADS / ROWS >= 8                         // a thread each for the head and tail
//! tune    THREADS = 256, 128, 512
//! tune    INFLIGHT = 8, 4, 16
//! tune    ROWS = 1, 8

#include <cuda_bf16.h>
#include <math_constants.h>

#ifndef THREADS
#define THREADS 256
#endif
#ifndef INFLIGHT
#define INFLIGHT 8
#endif
#ifndef ROWS
#define ROWS 1 /* rows a block: 1, or THREADS / G for G = 8, 16 or 32 threads a row */
#endif
#define G (THREADS / ROWS) /* threads a row */
static_assert(ROWS == 1 || (G >= 8 && G <= 32 && (G & (G - 1)) == 0 && G * ROWS == THREADS),
	      "ROWS: 1, or G = 8, 16 or 32 threads a row");

/* The max of the 8 bf16 of a uint4. */
__device__ float max8(uint4 u)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
	float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
	float2 c = __bfloat1622float2(h[2]), d = __bfloat1622float2(h[3]);
	return fmaxf(fmaxf(fmaxf(a.x, a.y), fmaxf(b.x, b.y)), fmaxf(fmaxf(c.x, c.y), fmaxf(d.x, d.y)));
}

__device__ float block_max(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : -CUDART_INF_F;
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	return v;
}

/* The max of v over the row's G threads, in every one of them. */
__device__ float row_best(float v, float *scratch)
{
#if ROWS == 1
	return block_max(v, scratch);
#else
	for (int o = G / 2; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	return v;
#endif
}

/* The elements of a row of n bf16 at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
}

extern "C" __global__ void __launch_bounds__(THREADS)
row_max_bf16(const __nv_bfloat16 *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	/* a group past the last row takes the last row again (every lane of a
	   warp takes part in the shuffles) and writes nothing */
	const int r = blockIdx.x * ROWS + (int)threadIdx.x / G, t = threadIdx.x % G;
	const __nv_bfloat16 *row = x + (size_t)min(r, M - 1) * N;
	const int head = head_of(row, N), n8 = (N - head) / 8, tail = N - head - 8 * n8;
	const uint4 *r8 = (const uint4 *)(row + head);
	const float ninf = -CUDART_INF_F;
	const unsigned ninf2 = 0xff80ff80u; /* two bf16 -inf */
	float s[4] = {ninf, ninf, ninf, ninf};
	int i = t;
	for (; i + (INFLIGHT - 1) * G < n8; i += INFLIGHT * G) {
		uint4 v[INFLIGHT];
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			v[k] = __ldcs(r8 + i + k * G);
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			s[k % 4] = fmaxf(s[k % 4], max8(v[k]));
	}
	if (i < n8) { /* the rest, fewer than INFLIGHT each, in flight together */
		uint4 v[INFLIGHT];
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			v[k] = i + k * G < n8 ? __ldcs(r8 + i + k * G) : make_uint4(ninf2, ninf2, ninf2, ninf2);
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			s[k % 4] = fmaxf(s[k % 4], max8(v[k]));
	}
	if (t < head)
		s[1] = fmaxf(s[1], __bfloat162float(row[t]));
	if (t < tail)
		s[2] = fmaxf(s[2], __bfloat162float(row[head + 8 * n8 + t]));
	float best = row_best(fmaxf(fmaxf(s[0], s[1]), fmaxf(s[2], s[3])), scratch);
	if (t == 0 && r < M)
		y[r] = best;
}
