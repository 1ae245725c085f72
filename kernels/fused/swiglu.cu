// (2) y = silu(a) * b by hand: as bias_gelu.cu, two float4 of a and b a
// thread; sigmoid with __expf (the tile kernel's approximation).
//! kernel  swiglu
//! arg     M = 4096
//! arg     N = 8192
//! in      a : f32[M, N] = randn(seed=1)
//! in      b : f32[M, N] = randn(seed=2)
//! out     y : f32[M, N]
//! launch  grid=(M, cdiv(N, 2048)) block=(256)
//! ref     kernel swiglu_ref
//! tol     rtol=1e-5 atol=1e-6
//! bytes   3*M*N*4
//! flops   5*M*N
//! sweep   N = 8192, 4099

__device__ __forceinline__ float silu_mul(float u, float g)
{
	return u / (1.0f + __expf(-u)) * g;
}

extern "C" __global__ void __launch_bounds__(256)
swiglu(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y, int M, int N)
{
	const size_t r = (size_t)blockIdx.x * N;
	const int c0 = blockIdx.y * 2048;
	if ((N & 3) == 0) {
#pragma unroll
		for (int k = 0; k < 2; k++) {
			const int c = c0 + (k * 256 + threadIdx.x) * 4;
			if (c < N) {
				float4 u = __ldcs((const float4 *)(a + r + c));
				const float4 g = __ldcs((const float4 *)(b + r + c));
				u.x = silu_mul(u.x, g.x), u.y = silu_mul(u.y, g.y);
				u.z = silu_mul(u.z, g.z), u.w = silu_mul(u.w, g.w);
				__stcs((float4 *)(y + r + c), u);
			}
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8; k++) {
			const int c = c0 + k * 256 + threadIdx.x;
			if (c < N)
				y[r + c] = silu_mul(a[r + c], b[r + c]);
		}
	}
}

extern "C" __global__ void swiglu_ref(const float *a, const float *b, float *y, int M, int N)
{
	const int c1 = min(N, (int)(blockIdx.y + 1) * 2048);
	const size_t r = (size_t)blockIdx.x * N;
	for (int c = blockIdx.y * 2048 + threadIdx.x; c < c1; c += blockDim.x) {
		const double u = a[r + c];
		y[r + c] = (float)(u / (1.0 + exp(-u)) * b[r + c]);
	}
}
