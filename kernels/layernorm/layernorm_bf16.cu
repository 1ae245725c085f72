// LayerNorm forward in bf16 (x, w, b, y in bf16; statistics in f32): the
// row in registers, as in 02_registers.cu, with 16-byte loads of 8 bf16.
// One block per row, up to 32 elements a thread (128 threads at N = 4096,
// 512 at N = 16384).
//
//! kernel  layernorm_bf16
//! arg     M = 32768
//! arg     N = 8192
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! in      b : bf16[N] = randn(seed=3)
//! out     y : bf16[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 1024) * 32))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   7*M*N
//! sweep   N = 4096, 8192, 16384, 5003
//! require N <= 1024 * 32   // a block of at most 1024 threads, 32 bf16 each

#include <cuda_bf16.h>

#define VPT 4 /* uint4 (8 bf16) per thread */

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
layernorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	       const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * N;
	__nv_bfloat16 *out = y + (size_t)blockIdx.x * N;
	float v[8 * VPT];
	bool vec = N % 8 == 0;
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 8)
				unpack8(__ldcs((const uint4 *)row + i), &v[8 * k]);
			else
				for (int j = 0; j < 8; j++)
					v[8 * k + j] = 0.0f;
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			v[k] = i < N ? __bfloat162float(row[i]) : 0.0f;
		}
	}
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		s += v[k];
	float mean = block_sum(s, scratch) / N;
	float q = 0.0f;
#pragma unroll
	for (int k = 0; k < VPT; k++) {
#pragma unroll
		for (int j = 0; j < 8; j++) {
			bool here = vec ? threadIdx.x + k * blockDim.x < N / 8
					: threadIdx.x + (8 * k + j) * blockDim.x < N;
			float d = here ? v[8 * k + j] - mean : 0.0f;
			q += d * d;
		}
	}
	float rstd = rsqrtf(block_sum(q, scratch) / N + 1e-5f);
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N / 8) {
				float g[8], c[8];
				unpack8(__ldg((const uint4 *)w + i), g);
				unpack8(__ldg((const uint4 *)b + i), c);
#pragma unroll
				for (int j = 0; j < 8; j++)
					g[j] = (v[8 * k + j] - mean) * rstd * g[j] + c[j];
				__stcs((uint4 *)out + i, pack8(g));
			}
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < N)
				out[i] = __float2bfloat16_rn((v[k] - mean) * rstd * __bfloat162float(w[i]) +
							     __bfloat162float(b[i]));
		}
	}
}
