// Row max of bf16 at any width (an f32 result): row_sum_bf16_aligned.cu with
// max for +: 128-bit loads of 8 bf16, eight in flight a thread, from each
// row's first 16-byte boundary, with a scalar head and tail of up to 7
// elements (threads 0..6).
//
//! kernel  row_max_bf16
//! arg     M = 32768
//! arg     N = 5003
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(THREADS)
//! ref     max(x, dim=1) -> y
//! tol     rtol=0 atol=0
//! sweep   N = 5003, 4096, 8192, 50257, 4093
//! tune    THREADS = 256, 128, 512
//! tune    INFLIGHT = 8, 4, 16

#include <cuda_bf16.h>
#include <math_constants.h>

#ifndef THREADS
#define THREADS 256
#endif
#ifndef INFLIGHT
#define INFLIGHT 8
#endif

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

/* The elements of a row of n bf16 at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
}

extern "C" __global__ void __launch_bounds__(THREADS)
row_max_bf16(const __nv_bfloat16 *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * N;
	const int head = head_of(row, N), n8 = (N - head) / 8, tail = N - head - 8 * n8;
	const uint4 *r8 = (const uint4 *)(row + head);
	const float ninf = -CUDART_INF_F;
	float s[4] = {ninf, ninf, ninf, ninf};
	int i = threadIdx.x;
	for (; i + (INFLIGHT - 1) * THREADS < n8; i += INFLIGHT * THREADS) {
		uint4 t[INFLIGHT];
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			t[k] = __ldcs(r8 + i + k * THREADS);
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			s[k % 4] = fmaxf(s[k % 4], max8(t[k]));
	}
	for (; i < n8; i += THREADS)
		s[0] = fmaxf(s[0], max8(__ldcs(r8 + i)));
	if (threadIdx.x < head)
		s[1] = fmaxf(s[1], __bfloat162float(row[threadIdx.x]));
	if (threadIdx.x < tail)
		s[2] = fmaxf(s[2], __bfloat162float(row[head + 8 * n8 + threadIdx.x]));
	float best = block_max(fmaxf(fmaxf(s[0], s[1]), fmaxf(s[2], s[3])), scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = best;
}
