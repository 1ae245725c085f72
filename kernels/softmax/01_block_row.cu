// Softmax over rows, step 1 of 5: one block of 256 threads per row and
// three passes over the row in global memory (max, sum of exponentials,
// normalise), each a strided loop with a block reduction.  Correct and
// simple; it reads the row three times and writes it once.
//
//! kernel  softmax_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(256)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-7
//! flops   5*M*N
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
	__syncthreads();
	return v;
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
	__syncthreads();
	return v;
}

extern "C" __global__ void softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;
	float m = -CUDART_INF_F;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		m = fmaxf(m, row[i]);
	m = block_max(m, scratch);
	float s = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		s += __expf(row[i] - m);
	s = block_sum(s, scratch);
	float inv = 1.0f / s;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		out[i] = __expf(row[i] - m) * inv;
}
