// Softmax over rows in bf16 (f32 arithmetic): the row in registers, as in
// 05_registers.cu.  One block per row; each thread loads up to four uint4
// (8 bf16 each, 32 elements), strided by the block so loads and stores are
// coalesced 16-byte accesses; the block grows with the row (128 threads at
// N = 4096, 512 at N = 16384; up to 32768 elements a row).
//
//! kernel  softmax_bf16
//! arg     M = 32768
//! arg     N = 8192
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 1024) * 32))
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-7
//! flops   5*M*N
//! sweep   N = 4096, 8192, 16384, 5003
//! require N <= 1024 * 32   // a block of at most 1024 threads, 32 bf16 each

#include <cuda_bf16.h>
#include <math_constants.h>

#define VPT 4 /* uint4 (8 bf16) per thread: a row of up to 32 * blockDim */

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

/* 8 bf16 of a uint4 as floats, and back. */
__device__ void unpack8(uint4 u, float *f)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++) {
		float2 t = __bfloat1622float2(h[j]);
		f[2 * j] = t.x, f[2 * j + 1] = t.y;
	}
}

__device__ uint4 pack8(const float *f)
{
	uint4 u;
	__nv_bfloat162 *h = (__nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++)
		h[j] = __floats2bfloat162_rn(f[2 * j], f[2 * j + 1]);
	return u;
}

extern "C" __global__ void __launch_bounds__(1024)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * N;
	__nv_bfloat16 *out = y + (size_t)blockIdx.x * N;
	const float ninf = -CUDART_INF_F;
	float v[8 * VPT];
	bool vec = N % 8 == 0; /* else rows are not 16-byte aligned */
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 8)
				unpack8(__ldcs((const uint4 *)row + i), &v[8 * k]);
			else
				for (int j = 0; j < 8; j++)
					v[8 * k + j] = ninf;
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			v[k] = i < N ? __bfloat162float(row[i]) : ninf;
		}
	}
	float m = ninf;
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		m = fmaxf(m, v[k]);
	m = block_max(m, scratch);
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		s += (v[k] = __expf(v[k] - m));
	float inv = 1.0f / block_sum(s, scratch);
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		v[k] *= inv;
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 8)
				__stcs((uint4 *)out + i, pack8(&v[8 * k]));
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N)
				out[i] = __float2bfloat16_rn(v[k]);
		}
	}
}
