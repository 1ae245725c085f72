// Row sum of bf16 (f32 sums): 128-bit loads of 8 bf16, eight in flight
// per thread, as in 02_vec4.cu.  Rows whose length is not a multiple of 8
// take the scalar loop.
//
//! kernel  row_sum_bf16
//! arg     M = 32768
//! arg     N = 8192
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(256)
//! ref     sum(x, dim=1) -> y
//! tol     rtol=1e-3 atol=1e-2
//! sweep   N = 4096, 8192, 16384, 5003

#include <cuda_bf16.h>

/* The sum of the 8 bf16 of a uint4. */
__device__ float sum8(uint4 u)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
	float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
	float2 c = __bfloat1622float2(h[2]), d = __bfloat1622float2(h[3]);
	return ((a.x + a.y) + (b.x + b.y)) + ((c.x + c.y) + (d.x + d.y));
}

__device__ float block_sum(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : 0.0f;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

extern "C" __global__ void __launch_bounds__(256)
row_sum_bf16(const __nv_bfloat16 *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * N;
	float s[4] = {0, 0, 0, 0};
	if (N % 8 == 0) {
		const uint4 *r8 = (const uint4 *)row;
		int n8 = N / 8, i = threadIdx.x;
		for (; i + 7 * blockDim.x < n8; i += 8 * blockDim.x) {
			uint4 t[8];
#pragma unroll
			for (int k = 0; k < 8; k++)
				t[k] = __ldcs(r8 + i + k * blockDim.x);
#pragma unroll
			for (int k = 0; k < 8; k++)
				s[k % 4] += sum8(t[k]);
		}
		for (; i < n8; i += blockDim.x)
			s[0] += sum8(__ldcs(r8 + i));
	} else {
		for (int i = threadIdx.x; i < N; i += blockDim.x)
			s[i % 4] += __bfloat162float(row[i]);
	}
	float total = block_sum((s[0] + s[1]) + (s[2] + s[3]), scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = total;
}
