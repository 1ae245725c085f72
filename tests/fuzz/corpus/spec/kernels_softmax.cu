// Row softmax: one block of 256 threads per row, three passes over the row
// (max, sum of exponentials, normalise) with warp-shuffle block reductions.
// A straightforward baseline to tune from; softmax_naive below is the
// reference kernel: one thread per row, no tricks.
//
//! kernel  softmax_rows
//! arg     M = 4096
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(256)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-6
//! bytes   2*M*N*4
//! flops   5*M*N
//! sweep   N = 1000, 4096, 32768

#include <math_constants.h> /* CUDART_INF_F: NVRTC has no <math.h> */

__device__ float block_reduce_max(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	if (lane == 0)
		scratch[warp] = v;
	__syncthreads();
	v = lane < blockDim.x / 32 ? scratch[lane] : -CUDART_INF_F;
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	__syncthreads();
	return v;
}

__device__ float block_reduce_sum(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	if (lane == 0)
		scratch[warp] = v;
	__syncthreads();
	v = lane < blockDim.x / 32 ? scratch[lane] : 0.0f;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	__syncthreads();
	return v;
}

__global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;

	float m = -CUDART_INF_F;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		m = fmaxf(m, row[i]);
	m = block_reduce_max(m, scratch);

	float s = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		s += __expf(row[i] - m);
	s = block_reduce_sum(s, scratch);

	float inv = 1.0f / s;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		out[i] = __expf(row[i] - m) * inv;
}

__global__ void softmax_naive(const float *x, float *y, int M, int N)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= M)
		return;
	float m = -CUDART_INF_F, s = 0.0f;
	for (int i = 0; i < N; i++)
		m = fmaxf(m, x[(size_t)r * N + i]);
	for (int i = 0; i < N; i++)
		s += expf(x[(size_t)r * N + i] - m);
	for (int i = 0; i < N; i++)
		y[(size_t)r * N + i] = expf(x[(size_t)r * N + i] - m) / s;
}
