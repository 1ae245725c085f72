// RMSNorm forward in two passes over the row, the second from cache (as
// torch.compile's Triton kernel does it: bench/norm_triton.py).  One block
// per row; the first pass reads the row with an L2 evict_last policy (the
// L1 too) and adds its squares, U float4 loads in flight a thread; the
// second reads it again, evict-first, for the output.  02_registers.cu
// holds the row in registers instead: one read, but up to 64 registers a
// thread and one barrier between all the row's loads and its stores.
// Here a thread holds U float4 whatever the row, so the block stays small
// and several rows of an SM overlap one's loads with another's stores; the
// second read costs L2 (or L1) bandwidth, not DRAM's, while the rows in
// flight fit in L2 (132 SMs x 2048 / THREADS blocks x N x 4 bytes).
//
//! kernel  rmsnorm_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(THREADS)
//! ref     rmsnorm(x, w, eps=1e-6) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   4*M*N
//! sweep   N = 4096, 8192, 16384, 4
//! require N % 4 == 0   // float4 rows (02_registers.cu takes any width)
//! tune    THREADS = 512, 256, 1024
//! tune    U = 4, 2, 8
//! tune    U2 = 1, 2

#ifndef THREADS
#define THREADS 512
#endif
#ifndef U
#define U 4 /* float4 loads in flight a thread */
#endif
#ifndef U2
#define U2 1 /* the second pass's loads in flight a thread (of x and of w) */
#endif
#ifndef EL
#define EL 1 /* the first pass keeps the row in cache (evict_last); 0: plain loads */
#endif

/* x[i] for the first pass: kept in L1 and L2 for the second (EL). */
__device__ __forceinline__ float4 load_keep(const float4 *p, unsigned long long pol)
{
	float4 v;
#if EL
	asm("ld.global.L1::evict_last.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
	    : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
#else
	(void)pol;
	v = __ldg(p);
#endif
	return v;
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

/* v r g, element by element. */
__device__ __forceinline__ float4 scale4(float4 v, float r, float4 g)
{
	return make_float4(v.x * r * g.x, v.y * r * g.y, v.z * r * g.z, v.w * r * g.w);
}

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_f32(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y, int M,
	    int N)
{
	__shared__ float scratch[32];
	const int n4 = N / 4;
	const float4 *row = (const float4 *)(x + (size_t)blockIdx.x * N);
	float4 *out = (float4 *)(y + (size_t)blockIdx.x * N);
	unsigned long long pol;
	asm("createpolicy.fractional.L2::evict_last.b64 %0;" : "=l"(pol)); /* fraction 1.0 */
	float q[U];
#pragma unroll
	for (int k = 0; k < U; k++)
		q[k] = 0.0f;
	int i = threadIdx.x;
	for (; i + (U - 1) * THREADS < n4; i += U * THREADS) {
		float4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = load_keep(row + i + k * THREADS, pol);
#pragma unroll
		for (int k = 0; k < U; k++)
			q[k] += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
	}
	for (; i < n4; i += THREADS) {
		const float4 v = load_keep(row + i, pol);
		q[0] += v.x * v.x + v.y * v.y + v.z * v.z + v.w * v.w;
	}
#pragma unroll
	for (int k = 1; k < U; k++)
		q[0] += q[k];
	const float r = rsqrtf(block_sum(q[0], scratch) / N + 1e-6f);
	const float4 *w4 = (const float4 *)w;
	for (i = threadIdx.x; i + (U2 - 1) * THREADS < n4; i += U2 * THREADS) {
		float4 v[U2], g[U2];
#pragma unroll
		for (int k = 0; k < U2; k++)
			v[k] = __ldcs(row + i + k * THREADS), g[k] = __ldg(w4 + i + k * THREADS);
#pragma unroll
		for (int k = 0; k < U2; k++)
			out[i + k * THREADS] = scale4(v[k], r, g[k]);
	}
	for (; i < n4; i += THREADS)
		out[i] = scale4(__ldcs(row + i), r, __ldg(w4 + i));
}
