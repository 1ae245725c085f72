// Row max at any width: row_max_f32.cu with 03_aligned.cu's split of each
// row into a scalar head (to its first 16-byte boundary), a float4 body
// (eight loads in flight a thread) and a scalar tail, so rows that start off
// a 16-byte boundary (N no multiple of 4) keep 16-byte loads (row_max_f32.cu
// falls to 4-byte loads there: 70.7% of copy at N = 5003 on an H100, 0.80x
// PyTorch).
//
//! kernel  row_max_f32
//! arg     M = 32768
//! arg     N = 5003
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(THREADS)
//! ref     max(x, dim=1) -> y
//! tol     rtol=0 atol=0
//! sweep   N = 5003, 4096, 8192, 50257, 4093
//! tune    THREADS = 256, 128, 512

#include <math_constants.h>

#ifndef THREADS
#define THREADS 256
#endif

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

__device__ float max4(float4 t) { return fmaxf(fmaxf(t.x, t.y), fmaxf(t.z, t.w)); }

/* The elements of a row of n floats at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 4);
}

extern "C" __global__ void __launch_bounds__(THREADS)
row_max_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	const int head = head_of(row, N), n4 = (N - head) / 4, tail = N - head - 4 * n4;
	const float4 *r4 = (const float4 *)(row + head);
	const float ninf = -CUDART_INF_F;
	float s[4] = {ninf, ninf, ninf, ninf};
	int i = threadIdx.x;
	for (; i + 7 * THREADS < n4; i += 8 * THREADS) {
		float4 t[8];
#pragma unroll
		for (int k = 0; k < 8; k++)
			t[k] = __ldcs(r4 + i + k * THREADS);
#pragma unroll
		for (int k = 0; k < 8; k++)
			s[k % 4] = fmaxf(s[k % 4], max4(t[k]));
	}
	for (; i < n4; i += THREADS)
		s[0] = fmaxf(s[0], max4(__ldcs(r4 + i)));
	if (threadIdx.x < head)
		s[1] = fmaxf(s[1], __ldcs(row + threadIdx.x));
	if (threadIdx.x < tail)
		s[2] = fmaxf(s[2], __ldcs(row + head + 4 * n4 + threadIdx.x));
	float best = block_max(fmaxf(fmaxf(s[0], s[1]), fmaxf(s[2], s[3])), scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = best;
}
