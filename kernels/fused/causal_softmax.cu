// (4) softmax(scale * x) with a causal mask by hand: one block of 256 a
// row, q = row % T; only columns 0..q are read (4 float4 a thread, the row
// in registers up to 4096), the rest written as 0; __expf.  Rows longer
// than 4096 or not a multiple of 4 take a three-pass loop.
//! kernel  causal_softmax
//! arg     T = 4096
//! arg     M = 4 * T
//! arg     N = T
//! arg     scale = 0.125
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(256)
//! ref     kernel causal_softmax_ref
//! tol     rtol=1e-5 atol=1e-7
//! bytes   4*M*N + 2*M*(T+1)
//! flops   5*M*N
//! sweep   T = 4096, 2050

#include <math_constants.h>

#define TH 256
#define INFINITY CUDART_INF_F

__device__ float block_red(float v, float *red, bool is_max)
{
	for (int o = 16; o > 0; o /= 2) {
		const float u = __shfl_xor_sync(0xffffffff, v, o);
		v = is_max ? fmaxf(v, u) : v + u;
	}
	if (threadIdx.x % 32 == 0)
		red[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < TH / 32 ? red[threadIdx.x % 32] : (is_max ? -INFINITY : 0.0f);
	for (int o = 16; o > 0; o /= 2) {
		const float u = __shfl_xor_sync(0xffffffff, v, o);
		v = is_max ? fmaxf(v, u) : v + u;
	}
	__syncthreads();
	return v;
}

extern "C" __global__ void __launch_bounds__(TH)
causal_softmax(const float *__restrict__ x, float *__restrict__ y, float scale, int M, int N)
{
	__shared__ float red[32];
	const size_t o = (size_t)blockIdx.x * N;
	const int q = blockIdx.x % N;
	if ((N & 3) == 0 && N <= 16 * TH) {
		float v[16];
		float m = -INFINITY;
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const int c = (k * TH + threadIdx.x) * 4;
			float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			if (c <= q)
				a = __ldcs((const float4 *)(x + o + c));
			v[4 * k] = c <= q ? scale * a.x : -INFINITY;
			v[4 * k + 1] = c + 1 <= q ? scale * a.y : -INFINITY;
			v[4 * k + 2] = c + 2 <= q ? scale * a.z : -INFINITY;
			v[4 * k + 3] = c + 3 <= q ? scale * a.w : -INFINITY;
#pragma unroll
			for (int j = 0; j < 4; j++)
				m = fmaxf(m, v[4 * k + j]);
		}
		m = block_red(m, red, true);
		float s = 0.0f;
#pragma unroll
		for (int i = 0; i < 16; i++) {
			v[i] = __expf(v[i] - m);
			s += v[i];
		}
		const float inv = 1.0f / block_red(s, red, false);
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const int c = (k * TH + threadIdx.x) * 4;
			if (c < N)
				__stcs((float4 *)(y + o + c), make_float4(v[4 * k] * inv, v[4 * k + 1] * inv,
									  v[4 * k + 2] * inv, v[4 * k + 3] * inv));
		}
		return;
	}
	float m = -INFINITY, s = 0.0f;
	for (int c = threadIdx.x; c <= q; c += TH)
		m = fmaxf(m, scale * x[o + c]);
	m = block_red(m, red, true);
	for (int c = threadIdx.x; c <= q; c += TH)
		s += __expf(scale * x[o + c] - m);
	const float inv = 1.0f / block_red(s, red, false);
	for (int c = threadIdx.x; c < N; c += TH)
		y[o + c] = c <= q ? __expf(scale * x[o + c] - m) * inv : 0.0f;
}

extern "C" __global__ void causal_softmax_ref(const float *x, float *y, float scale, int M, int N)
{
	__shared__ double red[TH];
	const size_t o = (size_t)blockIdx.x * N;
	const int q = blockIdx.x % N;
	double m = -CUDART_INF, s = 0;
	for (int c = threadIdx.x; c <= q; c += blockDim.x)
		m = fmax(m, (double)x[o + c]);
	red[threadIdx.x] = m;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int i = 1; i < blockDim.x; i++)
			m = fmax(m, red[i]);
		red[0] = m;
	}
	__syncthreads();
	m = red[0];
	__syncthreads();
	for (int c = threadIdx.x; c <= q; c += blockDim.x)
		s += exp(scale * ((double)x[o + c] - m));
	red[threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int i = 1; i < blockDim.x; i++)
			s += red[i];
		red[0] = s;
	}
	__syncthreads();
	s = red[0];
	for (int c = threadIdx.x; c < N; c += blockDim.x)
		y[o + c] = c <= q ? (float)(exp(scale * ((double)x[o + c] - m)) / s) : 0.0f;
}
