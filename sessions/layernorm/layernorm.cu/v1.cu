// LayerNorm forward, step 1 of 2: one block of 256 threads per row and
// three passes over the row in global memory (mean, variance, normalise),
// f32 statistics, y = (x - mean) / sqrt(var + eps) * w + b.
//
//! kernel  layernorm_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(256)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
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

extern "C" __global__ void layernorm_f32(const float *__restrict__ x, const float *__restrict__ w,
					 const float *__restrict__ b, float *__restrict__ y, int M,
					 int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;
	float s = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		s += row[i];
	float mean = block_sum(s, scratch) / N;
	float q = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x) {
		float d = row[i] - mean;
		q += d * d;
	}
	float rstd = rsqrtf(block_sum(q, scratch) / N + 1e-5f);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		out[i] = (row[i] - mean) * rstd * w[i] + b[i];
}
