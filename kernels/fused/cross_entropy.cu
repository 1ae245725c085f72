// (5) Cross-entropy forward over a 50257-wide vocabulary by hand: one
// block of 512 a row, one pass: each thread keeps its own running max and
// sum of exponentials (float4 loads from the row's first 16-byte boundary,
// elements before and after it one at a time: a row of 50257 floats is
// aligned only every fourth row), then the pairs are combined across the
// block; the loss is log(sum) + max - x[row, t[row]].
//! kernel  cross_entropy
//! arg     M = 1024
//! arg     V = 50257
//! in      x : f32[M, V] = randn(seed=5)
//! in      t : i32[M] = rand(0, 32000)
//! out     y : f32[M]
//! launch  grid=(M) block=(512)
//! ref     cross_entropy(x, t) -> y
//! tol     rtol=1e-5 atol=1e-5
//! bytes   M*V*4
//! flops   4*M*V
//! sweep   V = 50257, 32001

#include <math_constants.h>

#define TH 512

struct ms {
	float m, s;
};

__device__ __forceinline__ void add(ms &a, float v)
{
	if (v > a.m) {
		a.s = a.s * __expf(a.m - v) + 1.0f;
		a.m = v;
	} else {
		a.s += __expf(v - a.m);
	}
}

__device__ __forceinline__ ms combine(ms a, ms b)
{
	const float m = fmaxf(a.m, b.m);
	if (m == -CUDART_INF_F)
		return a;
	return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

extern "C" __global__ void __launch_bounds__(TH)
cross_entropy(const float *__restrict__ x, const int *__restrict__ t, float *__restrict__ y, int M, int V)
{
	__shared__ ms red[32];
	const float *p = x + (size_t)blockIdx.x * V;
	int head = (int)((16 - ((unsigned long long)p & 15)) / 4 & 3);
	head = head < V ? head : V;
	const int n4 = (V - head) / 4;
	ms a = {-CUDART_INF_F, 0.0f};
	for (int i = threadIdx.x; i < head; i += TH)
		add(a, p[i]);
	const float4 *p4 = (const float4 *)(p + head);
	for (int i = threadIdx.x; i < n4; i += TH) {
		const float4 v = __ldcs(p4 + i);
		add(a, v.x), add(a, v.y), add(a, v.z), add(a, v.w);
	}
	for (int i = head + 4 * n4 + threadIdx.x; i < V; i += TH)
		add(a, p[i]);
	for (int o = 16; o > 0; o /= 2)
		a = combine(a, {__shfl_xor_sync(0xffffffff, a.m, o), __shfl_xor_sync(0xffffffff, a.s, o)});
	if (threadIdx.x % 32 == 0)
		red[threadIdx.x / 32] = a;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < TH / 32; w++)
			a = combine(a, red[w]);
		const int c = t[blockIdx.x];
		y[blockIdx.x] = logf(a.s) + a.m - (c >= 0 && c < V ? p[c] : 0.0f);
	}
}
