// RMSNorm forward, step 2 of 2: the row in registers.  One block per row;
// each thread keeps up to 16 elements (four float4, strided by the block so
// every access is a coalesced 16-byte one): one read of x, one write of y,
// and w (the same for every row) from L2.  The block grows with the row
// (256 threads at N = 4096, 1024 at N = 16384).
//
//! kernel  rmsnorm_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 512) * 32))
//! ref     rmsnorm(x, w, eps=1e-6) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   4*M*N
//! sweep   N = 4096, 8192, 16384, 5003
//! require N <= 1024 * 16   // a block of at most 1024 threads, 16 floats each

#define VPT 4 /* float4 per thread */

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
rmsnorm_f32(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y, int M,
	    int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;
	float v[4 * VPT];
	bool vec = N % 4 == 0;
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
	float q = 0.0f;
#pragma unroll
	for (int k = 0; k < 4 * VPT; k++)
		q += v[k] * v[k];
	float r = rsqrtf(block_sum(q, scratch) / N + 1e-6f);
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 4) {
				float4 g = __ldg((const float4 *)w + i);
				__stcs((float4 *)out + i, make_float4(v[4 * k] * r * g.x, v[4 * k + 1] * r * g.y,
								      v[4 * k + 2] * r * g.z, v[4 * k + 3] * r * g.w));
			}
		}
	} else {
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N)
				__stcs(out + i, v[k] * r * __ldg(w + i));
		}
	}
}
