// LayerNorm forward as training codebases write it (GPT-2 sizes: 8192 rows
// of 768): one warp per row, 8 rows per block, streaming loads and stores,
// the row's mean and 1/std kept for the backward pass.  A 10-40 us kernel
// for comparing kbench's times with Nsight Compute's (bench/ncu_short.sh).
//
//! kernel  layernorm_fwd
//! arg     M = 8192
//! arg     C = 768
//! in      x : f32[M, C] = randn(seed=1)
//! in      w : f32[C] = rand(0.5, 1.5)
//! in      b : f32[C] = randn(seed=3)
//! out     y : f32[M, C]
//! out     mean : f32[M]
//! out     rstd : f32[M]
//! launch  grid=(cdiv(M, 8)) block=(256)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5

__device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

extern "C" __global__ void layernorm_fwd(const float *__restrict__ x, const float *__restrict__ w,
					 const float *__restrict__ b, float *__restrict__ y,
					 float *__restrict__ mean, float *__restrict__ rstd, int M,
					 int C)
{
	int lane = threadIdx.x % 32;
	int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
	if (row >= M)
		return;
	const float *xr = x + (size_t)row * C;
	float s = 0.0f;
	for (int i = lane; i < C; i += 32)
		s += xr[i];
	float m = warp_sum(s) / C;
	float v = 0.0f;
	for (int i = lane; i < C; i += 32) {
		float d = xr[i] - m;
		v += d * d;
	}
	float r = rsqrtf(warp_sum(v) / C + 1e-5f);
	if (lane == 0) {
		__stcs(mean + row, m);
		__stcs(rstd + row, r);
	}
	float *yr = y + (size_t)row * C;
	for (int i = lane; i < C; i += 32)
		__stcs(yr + i, (__ldcs(xr + i) - m) * r * w[i] + b[i]);
}
