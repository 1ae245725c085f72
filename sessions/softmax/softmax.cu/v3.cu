// Softmax over rows, step 3 of 5: one warp per row with 128-bit loads and
// stores (float4: a quarter of the load instructions, whole 32-byte
// sectors per request).  Rows whose length is not a multiple of 4 are not
// 16-byte aligned and take the scalar loop.  Still three passes.
//
//! kernel  softmax_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(cdiv(M, 8)) block=(256)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-7
//! flops   5*M*N
//! sweep   N = 4096, 8192, 16384, 5003

#include <math_constants.h>

__device__ float warp_max(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	return v;
}

__device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

__device__ float max4(float4 v) { return fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)); }

extern "C" __global__ void softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	int lane = threadIdx.x % 32, r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	if (r >= M)
		return;
	const float *row = x + (size_t)r * N;
	float *out = y + (size_t)r * N;
	float m = -CUDART_INF_F, s = 0.0f;
	if (N % 4 == 0) {
		const float4 *r4 = (const float4 *)row;
		float4 *o4 = (float4 *)out;
		int n4 = N / 4;
		for (int i = lane; i < n4; i += 32)
			m = fmaxf(m, max4(r4[i]));
		m = warp_max(m);
		for (int i = lane; i < n4; i += 32) {
			float4 v = r4[i];
			s += __expf(v.x - m) + __expf(v.y - m) + __expf(v.z - m) + __expf(v.w - m);
		}
		float inv = 1.0f / warp_sum(s);
		for (int i = lane; i < n4; i += 32) {
			float4 v = r4[i];
			o4[i] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
					    __expf(v.z - m) * inv, __expf(v.w - m) * inv);
		}
		return;
	}
	for (int i = lane; i < N; i += 32)
		m = fmaxf(m, row[i]);
	m = warp_max(m);
	for (int i = lane; i < N; i += 32)
		s += __expf(row[i] - m);
	float inv = 1.0f / warp_sum(s);
	for (int i = lane; i < N; i += 32)
		out[i] = __expf(row[i] - m) * inv;
}
