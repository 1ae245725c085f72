// Softmax over rows, step 2 of 5: one warp per row (8 rows per block), so
// every reduction is five shuffles and no block barrier.  Still three
// passes over the row; the second and third mostly hit L1 and L2.
//
//! kernel  softmax_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(cdiv(M, 8)) block=(256)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-7
//! flops   5*M*N
//! sweep   N = 4096, 8192, 16384, 5003

#include <math_constants.h>

__device__ float warp_max(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	return v;
}

__device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

extern "C" __global__ void softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	int lane = threadIdx.x % 32, r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	if (r >= M)
		return;
	const float *row = x + (size_t)r * N;
	float *out = y + (size_t)r * N;
	float m = -CUDART_INF_F;
	for (int i = lane; i < N; i += 32)
		m = fmaxf(m, row[i]);
	m = warp_max(m);
	float s = 0.0f;
	for (int i = lane; i < N; i += 32)
		s += __expf(row[i] - m);
	s = warp_sum(s);
	float inv = 1.0f / s;
	for (int i = lane; i < N; i += 32)
		out[i] = __expf(row[i] - m) * inv;
}
