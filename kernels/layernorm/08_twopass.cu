// LayerNorm forward in two passes over the row, the second from cache (as
// torch.compile's Triton kernel does it: bench/norm_triton.py), as
// rmsnorm/05_twopass.cu does RMSNorm (its comment says why).  The first
// pass reads the row with an L2 evict_last policy and adds x - K and its
// square, K the row's first element (a shift that keeps the variance's
// cancellation small when the mean is large, as 04_ring.cu's SUMS = 1);
// the second reads the row again, evict-first, with w and b, for the
// output.
//
//! kernel  layernorm_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(THREADS)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 4096, 8192, 16384, 4
//! require N % 4 == 0   // float4 rows (02_registers.cu takes any width)
//! tune    THREADS = 512, 256, 1024
//! tune    U = 4, 2, 8
//! tune    U2 = 2, 1

#ifndef THREADS
#define THREADS 512
#endif
#ifndef U
#define U 4 /* float4 loads in flight a thread */
#endif
#ifndef U2
#define U2 2 /* the second pass's loads in flight a thread (of x, w and b) */
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

/* The block's sums of s and q (every thread gets both). */
__device__ float2 block_sum2(float s, float q, float2 *scratch)
{
	for (int o = 16; o > 0; o /= 2) {
		s += __shfl_xor_sync(0xffffffff, s, o);
		q += __shfl_xor_sync(0xffffffff, q, o);
	}
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = make_float2(s, q);
	__syncthreads();
	float2 t = threadIdx.x % 32 < THREADS / 32 ? scratch[threadIdx.x % 32] : make_float2(0.0f, 0.0f);
	for (int o = 16; o > 0; o /= 2) {
		t.x += __shfl_xor_sync(0xffffffff, t.x, o);
		t.y += __shfl_xor_sync(0xffffffff, t.y, o);
	}
	return t;
}

/* (v - mean) r g + h, element by element. */
__device__ __forceinline__ float4 norm4(float4 v, float mean, float r, float4 g, float4 h)
{
	return make_float4((v.x - mean) * r * g.x + h.x, (v.y - mean) * r * g.y + h.y,
			   (v.z - mean) * r * g.z + h.z, (v.w - mean) * r * g.w + h.w);
}

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	__shared__ float2 scratch[32];
	const int n4 = N / 4;
	const float4 *row = (const float4 *)(x + (size_t)blockIdx.x * N);
	float4 *out = (float4 *)(y + (size_t)blockIdx.x * N);
	unsigned long long pol;
	asm("createpolicy.fractional.L2::evict_last.b64 %0;" : "=l"(pol)); /* fraction 1.0 */
	const float K = __ldg(x + (size_t)blockIdx.x * N);
	float s[U], q[U];
#pragma unroll
	for (int k = 0; k < U; k++)
		s[k] = q[k] = 0.0f;
	int i = threadIdx.x;
	for (; i + (U - 1) * THREADS < n4; i += U * THREADS) {
		float4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = load_keep(row + i + k * THREADS, pol);
#pragma unroll
		for (int k = 0; k < U; k++) {
			const float a = v[k].x - K, c = v[k].y - K, d = v[k].z - K, e = v[k].w - K;
			s[k] += (a + c) + (d + e);
			q[k] += a * a + c * c + d * d + e * e;
		}
	}
	for (; i < n4; i += THREADS) {
		const float4 v = load_keep(row + i, pol);
		const float a = v.x - K, c = v.y - K, d = v.z - K, e = v.w - K;
		s[0] += (a + c) + (d + e);
		q[0] += a * a + c * c + d * d + e * e;
	}
#pragma unroll
	for (int k = 1; k < U; k++)
		s[0] += s[k], q[0] += q[k];
	const float2 t = block_sum2(s[0], q[0], scratch);
	const float ms = t.x / N, mean = K + ms;
	const float r = rsqrtf(fmaxf(t.y / N - ms * ms, 0.0f) + 1e-5f);
	const float4 *w4 = (const float4 *)w, *b4 = (const float4 *)b;
	for (i = threadIdx.x; i + (U2 - 1) * THREADS < n4; i += U2 * THREADS) {
		float4 v[U2], g[U2], h[U2];
#pragma unroll
		for (int k = 0; k < U2; k++)
			v[k] = __ldcs(row + i + k * THREADS), g[k] = __ldg(w4 + i + k * THREADS),
			h[k] = __ldg(b4 + i + k * THREADS);
#pragma unroll
		for (int k = 0; k < U2; k++)
			out[i + k * THREADS] = norm4(v[k], mean, r, g[k], h[k]);
	}
	for (; i < n4; i += THREADS)
		out[i] = norm4(__ldcs(row + i), mean, r, __ldg(w4 + i), __ldg(b4 + i));
}
