// RMSNorm forward, step 1 of 2: one block of 256 threads per row, two
// passes over the row in global memory (the mean of squares, then
// y = x / sqrt(mean(x^2) + eps) * w), f32 statistics.
//
//! kernel  rmsnorm_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(256)
//! ref     rmsnorm(x, w, eps=1e-6) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   4*M*N
//! sweep   N = 4096, 8192, 16384, 5003

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

extern "C" __global__ void rmsnorm_f32(const float *__restrict__ x, const float *__restrict__ w,
				       float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;
	float q = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		q += row[i] * row[i];
	float r = rsqrtf(block_sum(q, scratch) / N + 1e-6f);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		out[i] = row[i] * r * w[i];
}
