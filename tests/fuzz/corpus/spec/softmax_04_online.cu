// Softmax over rows, step 4 of 5: online statistics.  One read of the row
// gives both the max and the sum of exponentials: each lane keeps a
// running (max, sum) and rescales its sum when the max grows; lanes then
// merge their pairs with shuffles.  A second read writes the output: two
// reads and one write instead of three reads and one write.
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

/* Adds element v to the running (max m, sum s of exp(x - m)). */
__device__ void online(float v, float &m, float &s)
{
	if (v > m) {
		s = s * __expf(m - v) + 1.0f;
		m = v;
	} else {
		s += __expf(v - m);
	}
}

/* Merges the lanes' (max, sum) pairs; every lane gets the row's. */
__device__ void warp_merge(float &m, float &s)
{
	for (int o = 16; o > 0; o /= 2) {
		float mo = __shfl_xor_sync(0xffffffff, m, o), so = __shfl_xor_sync(0xffffffff, s, o);
		float mn = fmaxf(m, mo);
		s = (m == -CUDART_INF_F ? 0.0f : s * __expf(m - mn)) +
		    (mo == -CUDART_INF_F ? 0.0f : so * __expf(mo - mn));
		m = mn;
	}
}

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
		for (int i = lane; i < n4; i += 32) {
			float4 v = r4[i];
			online(v.x, m, s), online(v.y, m, s), online(v.z, m, s), online(v.w, m, s);
		}
		warp_merge(m, s);
		float inv = 1.0f / s;
		for (int i = lane; i < n4; i += 32) {
			float4 v = r4[i];
			o4[i] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
					    __expf(v.z - m) * inv, __expf(v.w - m) * inv);
		}
		return;
	}
	for (int i = lane; i < N; i += 32)
		online(row[i], m, s);
	warp_merge(m, s);
	float inv = 1.0f / s;
	for (int i = lane; i < N; i += 32)
		out[i] = __expf(row[i] - m) * inv;
}
