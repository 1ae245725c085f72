// Row max: 128-bit loads, eight in flight per thread, as the row sum of
// 02_vec4.cu with max for +.
//
//! kernel  row_max_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(256)
//! ref     max(x, dim=1) -> y
//! tol     rtol=0 atol=0
//! sweep   N = 4096, 8192, 16384, 5003

#include <math_constants.h>

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

extern "C" __global__ void __launch_bounds__(256)
row_max_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float s[4] = {-CUDART_INF_F, -CUDART_INF_F, -CUDART_INF_F, -CUDART_INF_F};
	if (N % 4 == 0) {
		const float4 *r4 = (const float4 *)row;
		int n4 = N / 4, i = threadIdx.x;
		for (; i + 7 * blockDim.x < n4; i += 8 * blockDim.x) {
			float4 t[8];
#pragma unroll
			for (int k = 0; k < 8; k++)
				t[k] = __ldcs(r4 + i + k * blockDim.x);
#pragma unroll
			for (int k = 0; k < 8; k++)
				s[k % 4] = fmaxf(s[k % 4], max4(t[k]));
		}
		for (; i < n4; i += blockDim.x)
			s[0] = fmaxf(s[0], max4(__ldcs(r4 + i)));
	} else {
		for (int i = threadIdx.x; i < N; i += blockDim.x)
			s[i % 4] = fmaxf(s[i % 4], __ldcs(row + i));
	}
	float best = block_max(fmaxf(fmaxf(s[0], s[1]), fmaxf(s[2], s[3])), scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = best;
}
