// (3) h = x + r and y = rmsnorm(h) * w by hand: one block of 512 threads a
// row; a row of up to 8192 (N % 4 == 0) stays in registers as 4 float4 a
// thread between the sum of squares and the scaling, so x and r are read
// once; other rows take a loop that reads h back.
//! kernel  add_rmsnorm
//! arg     M = 4096
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! in      r : f32[M, N] = randn(seed=2)
//! in      w : f32[N] = rand(0.5, 1.5)
//! out     h : f32[M, N]
//! out     y : f32[M, N]
//! launch  grid=(M) block=(512)
//! ref     kernel add_rmsnorm_ref
//! tol     rtol=1e-5 atol=1e-5
//! bytes   4*M*N*4
//! flops   6*M*N
//! sweep   N = 8192, 4099

#define T 512
#define V 4

__device__ float block_sum(float v, float *red)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	if (threadIdx.x % 32 == 0)
		red[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < T / 32 ? red[threadIdx.x % 32] : 0.0f;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

extern "C" __global__ void __launch_bounds__(T)
add_rmsnorm(const float *__restrict__ x, const float *__restrict__ r, const float *__restrict__ w,
	    float *__restrict__ h, float *__restrict__ y, int M, int N)
{
	__shared__ float red[32];
	const size_t o = (size_t)blockIdx.x * N;
	float ss = 0.0f;
	if ((N & 3) == 0 && N <= 4 * V * T) {
		float4 v[V];
#pragma unroll
		for (int k = 0; k < V; k++) {
			const int c = (k * T + threadIdx.x) * 4;
			v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			if (c < N) {
				const float4 a = __ldcs((const float4 *)(x + o + c));
				const float4 b = __ldcs((const float4 *)(r + o + c));
				v[k] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
				__stcs((float4 *)(h + o + c), v[k]);
			}
			ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
		}
		const float q = rsqrtf(block_sum(ss, red) / N + 1e-6f);
#pragma unroll
		for (int k = 0; k < V; k++) {
			const int c = (k * T + threadIdx.x) * 4;
			if (c < N) {
				const float4 g = __ldg((const float4 *)(w + c));
				__stcs((float4 *)(y + o + c), make_float4(v[k].x * q * g.x, v[k].y * q * g.y,
									  v[k].z * q * g.z, v[k].w * q * g.w));
			}
		}
		return;
	}
	for (int c = threadIdx.x; c < N; c += T) {
		const float t = x[o + c] + r[o + c];
		h[o + c] = t;
		ss += t * t;
	}
	const float q = rsqrtf(block_sum(ss, red) / N + 1e-6f);
	for (int c = threadIdx.x; c < N; c += T)
		y[o + c] = h[o + c] * q * w[c];
}

extern "C" __global__ void add_rmsnorm_ref(const float *x, const float *r, const float *w, float *h,
					   float *y, int M, int N)
{
	__shared__ double red[T];
	const size_t o = (size_t)blockIdx.x * N;
	double ss = 0;
	for (int c = threadIdx.x; c < N; c += blockDim.x) {
		const double t = (double)x[o + c] + r[o + c];
		h[o + c] = (float)t;
		ss += t * t;
	}
	red[threadIdx.x] = ss;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int i = 1; i < blockDim.x; i++)
			ss += red[i];
		red[0] = 1.0 / sqrt(ss / N + 1e-6);
	}
	__syncthreads();
	const double q = red[0];
	for (int c = threadIdx.x; c < N; c += blockDim.x)
		y[o + c] = (float)(((double)x[o + c] + r[o + c]) * q * w[c]);
}
