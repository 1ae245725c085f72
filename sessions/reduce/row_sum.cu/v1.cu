// Row sum, step 1 of 2: one block of 256 threads per row, each thread
// summing a strided share of the row with 4-byte loads, then a block
// reduction.  One load in flight per thread at a time.
//
//! kernel  row_sum_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(256)
//! ref     sum(x, dim=1) -> y
//! tol     rtol=1e-4 atol=1e-3
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
	return v;
}

extern "C" __global__ void row_sum_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float s = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		s += row[i];
	s = block_sum(s, scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = s;
}
