// Softmax over rows, step 5 of 5: the row held in registers.  One block per
// row, each thread keeps up to 16 elements (four float4, strided by the
// block so every load and store is coalesced): one read of the row, one
// write, nothing in between goes to memory.  The block grows with the row
// (256 threads at N = 4096, 1024 at N = 16384, the limit of this step).
// Streaming loads and stores (__ldcs/__stcs) keep the L2 for what is reused.
//
//! kernel  softmax_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 128 * VPT) * 32))
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-7
//! flops   5*M*N
//! sweep   N = 4096, 8192, 16384, 5003
//! tune    VPT = 4, 8
//! require N <= 1024 * 4 * VPT   // a block of at most 1024 threads, 4 * VPT floats each

#include <math_constants.h>

#ifndef VPT
#define VPT 4 /* float4 per thread: a row of up to 4 * VPT * blockDim elements */
#endif

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

extern "C" __global__ void __launch_bounds__(1024)
softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float *out = y + (size_t)blockIdx.x * N;
	const float ninf = -CUDART_INF_F;
	float v[4 * VPT];
	bool vec = N % 4 == 0; /* else rows are not 16-byte aligned */
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			float4 t = i < N / 4 ? __ldcs((const float4 *)row + i) : make_float4(ninf, ninf, ninf, ninf);
			v[4 * k] = t.x, v[4 * k + 1] = t.y, v[4 * k + 2] = t.z, v[4 * k + 3] = t.w;
		}
	} else {
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			v[k] = i < N ? __ldcs(row + i) : ninf;
		}
	}
	float m = ninf;
#pragma unroll
	for (int k = 0; k < 4 * VPT; k++)
		m = fmaxf(m, v[k]);
	m = block_max(m, scratch);
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < 4 * VPT; k++)
		s += (v[k] = __expf(v[k] - m)); /* exp(-inf) = 0 for the padding */
	float inv = 1.0f / block_sum(s, scratch);
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 4)
				__stcs((float4 *)out + i, make_float4(v[4 * k] * inv, v[4 * k + 1] * inv,
								      v[4 * k + 2] * inv, v[4 * k + 3] * inv));
		}
	} else {
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N)
				__stcs(out + i, v[k] * inv);
		}
	}
}
