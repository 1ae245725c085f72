// KernelBench level 1, problem 97 (scaled_dot_product_attention, no mask) at
// its sizes: one warp a query row, the head dim E split over the lanes (E/32
// values each, kept in registers), an online softmax over the keys (the
// running maximum and sum rescaled as FlashAttention does), in float.
//
//! arg     B = 32
//! arg     NH = 32
//! arg     L = 512
//! arg     E = 1024
//! in      Q : f32[B, NH, L, E] = rand(0, 1)
//! in      K : f32[B, NH, L, E] = rand(0, 1)
//! in      V : f32[B, NH, L, E] = rand(0, 1)
//! out     y : f32[B, NH, L, E]
//! require E % 32 == 0
//! require E <= 1024
//! launch  grid=(cdiv(B * NH * L, 4)) block=(128)
//! ref     torch device=cuda F.scaled_dot_product_attention(Q, K, V) -> y
//! tol     rtol=1e-4 atol=1e-4

#define MAXV 32 /* E / 32 values a lane, E <= 1024 */

__global__ void sdpa(const float *__restrict__ Q, const float *__restrict__ K,
		     const float *__restrict__ V, float *__restrict__ y, int B, int NH, int L, int E)
{
	long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32, per = E / 32;
	if (row >= (long long)B * NH * L)
		return;
	long long head = row / L;
	const float *q = Q + row * E, *k = K + head * L * E, *v = V + head * L * E;
	float qr[MAXV], acc[MAXV];
	float scale = rsqrtf((float)E);
#pragma unroll
	for (int t = 0; t < MAXV; t++) {
		qr[t] = t < per ? q[t * 32 + lane] * scale : 0.f;
		acc[t] = 0;
	}
	float m = -3.4e38f, s = 0;
	for (int j = 0; j < L; j++) {
		const float *kj = k + (long long)j * E, *vj = v + (long long)j * E;
		float d = 0;
#pragma unroll
		for (int t = 0; t < MAXV; t++)
			if (t < per)
				d += qr[t] * kj[t * 32 + lane];
		for (int o = 16; o > 0; o /= 2)
			d += __shfl_xor_sync(0xffffffff, d, o);
		float mn = fmaxf(m, d), c = __expf(m - mn), p = __expf(d - mn);
		s = s * c + p;
#pragma unroll
		for (int t = 0; t < MAXV; t++)
			if (t < per)
				acc[t] = acc[t] * c + p * vj[t * 32 + lane];
		m = mn;
	}
	float inv = 1.f / s;
#pragma unroll
	for (int t = 0; t < MAXV; t++)
		if (t < per)
			y[row * E + t * 32 + lane] = acc[t] * inv;
}
