// LayerNorm forward, step 2 of 2: the row in registers.  One block per row;
// each thread keeps up to 16 elements (four float4, strided by the block so
// every access is a coalesced 16-byte one): one read of x, one write of y;
// the mean and the variance (two-pass, from the registers) need no second
// read, and w and b (the same for every row) come from L2.  The block
// grows with the row (256 threads at N = 4096, 1024 at N = 16384).
// VPT = 8 (issue 31): eight float4 a thread, half the threads.  At N = 16384
// VPT = 4's block of 1024 at 44 registers is one block an SM (two need 32,
// softmax's and RMSNorm's count), so no row loads while one is reduced and
// stored: 83.7% of copy on an H200.  512 threads at VPT = 8 (at most 64
// registers) are two blocks an SM, two rows in flight.
//
//! kernel  layernorm_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 128 * VPT) * 32))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 4096, 8192, 16384, 5003
//! require N <= 1024 * 4 * VPT   // a block of at most 1024 threads, 4 * VPT floats each
//! tune    VPT = 4, 8

#ifndef VPT
#define VPT 4 /* float4 per thread */
#endif

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

extern "C" __global__ void __launch_bounds__(1024)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w,
	      const float *__restrict__ b, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;
	float v[4 * VPT];
	bool vec = N % 4 == 0;
	float s = 0.0f;
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			float4 t = i < N / 4 ? __ldcs((const float4 *)row + i) : make_float4(0, 0, 0, 0);
			v[4 * k] = t.x, v[4 * k + 1] = t.y, v[4 * k + 2] = t.z, v[4 * k + 3] = t.w;
		}
	} else {
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			v[k] = i < N ? __ldcs(row + i) : 0.0f;
		}
	}
#pragma unroll
	for (int k = 0; k < 4 * VPT; k++)
		s += v[k];
	float mean = block_sum(s, scratch) / N;
	float q = 0.0f;
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		bool in = vec ? threadIdx.x + k * blockDim.x < N / 4 : true;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			bool here = vec ? in : threadIdx.x + (4 * k + j) * blockDim.x < N;
			float d = here ? v[4 * k + j] - mean : 0.0f;
			q += d * d;
		}
	}
	float rstd = rsqrtf(block_sum(q, scratch) / N + 1e-5f);
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 4) {
				float4 g = __ldg((const float4 *)w + i), c = __ldg((const float4 *)b + i);
				__stcs((float4 *)out + i, make_float4((v[4 * k] - mean) * rstd * g.x + c.x,
								      (v[4 * k + 1] - mean) * rstd * g.y + c.y,
								      (v[4 * k + 2] - mean) * rstd * g.z + c.z,
								      (v[4 * k + 3] - mean) * rstd * g.w + c.w));
			}
		}
	} else {
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N)
				__stcs(out + i, (v[k] - mean) * rstd * __ldg(w + i) + __ldg(b + i));
		}
	}
}
