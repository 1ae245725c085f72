// KernelBench level 1, problem 23 (Softmax over dim 1) at its sizes: one block
// a row, three passes (max, sum of exponentials, normalise) with warp-shuffle
// block reductions, checked against PyTorch.
//
//! arg     B = 4096
//! arg     D = 393216
//! in      x : f32[B, D] = rand(0, 1)
//! out     y : f32[B, D]
//! launch  grid=(B) block=(1024)
//! ref     torch device=cuda torch.softmax(x, dim=1) -> y
//! tol     rtol=1e-4 atol=1e-4

__device__ float block_reduce(float v, bool is_max, float *s)
{
	for (int o = 16; o > 0; o /= 2) {
		float w = __shfl_xor_sync(0xffffffff, v, o);
		v = is_max ? fmaxf(v, w) : v + w;
	}
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	__syncthreads();
	if (lane == 0)
		s[warp] = v;
	__syncthreads();
	v = lane < blockDim.x / 32 ? s[lane] : (is_max ? -3.0e38f : 0.f);
	for (int o = 16; o > 0; o /= 2) {
		float w = __shfl_xor_sync(0xffffffff, v, o);
		v = is_max ? fmaxf(v, w) : v + w;
	}
	return v;
}

__global__ void softmax(const float *__restrict__ x, float *__restrict__ y, int B, int D)
{
	__shared__ float s[32];
	const float *r = x + (long long)blockIdx.x * D;
	float *o = y + (long long)blockIdx.x * D;
	float m = -3.0e38f, t = 0;
	for (int j = threadIdx.x; j < D; j += blockDim.x)
		m = fmaxf(m, r[j]);
	m = block_reduce(m, true, s);
	for (int j = threadIdx.x; j < D; j += blockDim.x)
		t += __expf(r[j] - m);
	t = block_reduce(t, false, s);
	float inv = 1.f / t;
	for (int j = threadIdx.x; j < D; j += blockDim.x)
		o[j] = __expf(r[j] - m) * inv;
}
