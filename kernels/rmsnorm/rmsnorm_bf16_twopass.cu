// RMSNorm forward over bf16 rows in two passes, the second from cache:
// 05_twopass.cu's scheme (its comment says why) with 16-byte loads of 8
// bf16 and f32 arithmetic.
//
//! kernel  rmsnorm_bf16
//! arg     M = 32768
//! arg     N = 8192
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! out     y : bf16[M, N]
//! launch  grid=(M) block=(THREADS)
//! ref     rmsnorm(x, w, eps=1e-6) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   4*M*N
//! sweep   N = 4096, 8192, 16384, 8
//! require N % 8 == 0   // 16-byte rows (rmsnorm_bf16_aligned.cu takes any width)
//! tune    THREADS = 512, 256, 1024
//! tune    U = 4, 2, 8
//! tune    U2 = 1, 2

#include <cuda_bf16.h>

#ifndef THREADS
#define THREADS 512
#endif
#ifndef U
#define U 4 /* 16-byte loads in flight a thread */
#endif
#ifndef U2
#define U2 1 /* the second pass's loads in flight a thread (of x and of w) */
#endif
#ifndef EL
#define EL 1 /* the first pass keeps the row in cache (evict_last); 0: plain loads */
#endif

/* x[i] for the first pass: kept in L1 and L2 for the second (EL). */
__device__ __forceinline__ uint4 load_keep(const uint4 *p, unsigned long long pol)
{
	uint4 v;
#if EL
	asm("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
	    : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
#else
	(void)pol;
	v = __ldg(p);
#endif
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

__device__ float block_sum(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < THREADS / 32 ? scratch[threadIdx.x % 32] : 0.0f;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

/* The sum of the squares of 8 bf16. */
__device__ float squares8(uint4 u)
{
	float f[8], q = 0.0f;
	unpack8(u, f);
#pragma unroll
	for (int j = 0; j < 8; j++)
		q += f[j] * f[j];
	return q;
}

/* 8 bf16 v r g, element by element. */
__device__ uint4 scale8(uint4 vu, float r, uint4 gu)
{
	float v[8], g[8];
	unpack8(vu, v);
	unpack8(gu, g);
#pragma unroll
	for (int j = 0; j < 8; j++)
		v[j] = v[j] * r * g[j];
	return pack8(v);
}

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	     __nv_bfloat16 *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const int n8 = N / 8;
	const uint4 *row = (const uint4 *)(x + (size_t)blockIdx.x * N);
	uint4 *out = (uint4 *)(y + (size_t)blockIdx.x * N);
	unsigned long long pol;
	asm("createpolicy.fractional.L2::evict_last.b64 %0;" : "=l"(pol)); /* fraction 1.0 */
	float q[U];
#pragma unroll
	for (int k = 0; k < U; k++)
		q[k] = 0.0f;
	int i = threadIdx.x;
	for (; i + (U - 1) * THREADS < n8; i += U * THREADS) {
		uint4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = load_keep(row + i + k * THREADS, pol);
#pragma unroll
		for (int k = 0; k < U; k++)
			q[k] += squares8(v[k]);
	}
	for (; i < n8; i += THREADS)
		q[0] += squares8(load_keep(row + i, pol));
#pragma unroll
	for (int k = 1; k < U; k++)
		q[0] += q[k];
	const float r = rsqrtf(block_sum(q[0], scratch) / N + 1e-6f);
	const uint4 *w8 = (const uint4 *)w;
	for (i = threadIdx.x; i + (U2 - 1) * THREADS < n8; i += U2 * THREADS) {
		uint4 v[U2], g[U2];
#pragma unroll
		for (int k = 0; k < U2; k++)
			v[k] = __ldcs(row + i + k * THREADS), g[k] = __ldg(w8 + i + k * THREADS);
#pragma unroll
		for (int k = 0; k < U2; k++)
			out[i + k * THREADS] = scale8(v[k], r, g[k]);
	}
	for (; i < n8; i += THREADS)
		out[i] = scale8(__ldcs(row + i), r, __ldg(w8 + i));
}
