// KernelBench level 1, problem 89 (cumsum over dim 1) at its sizes: one block a
// row, the row in chunks of 4 x 1024: each thread scans its four elements,
// a block scan of the threads' totals (warp shuffles, then the warps'
// totals), plus the carry of the chunks before.  Checked against PyTorch.
//
//! arg     B = 32768
//! arg     D = 32768
//! in      x : f32[B, D] = rand(0, 1)
//! out     y : f32[B, D]
//! launch  grid=(B) block=(1024)
//! ref     torch device=cuda torch.cumsum(x, dim=1) -> y
//! tol     rtol=1e-4 atol=1e-4

__global__ void cumsum_rows(const float *__restrict__ x, float *__restrict__ y, int B, int D)
{
	__shared__ float warps[32];
	__shared__ float carry_s;
	const float *r = x + (long long)blockIdx.x * D;
	float *o = y + (long long)blockIdx.x * D;
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	float carry = 0;
	for (int base = 0; base < D; base += 4 * blockDim.x) {
		int j = base + 4 * threadIdx.x;
		float v[4], s = 0;
		for (int k = 0; k < 4; k++) {
			v[k] = j + k < D ? r[j + k] : 0.f;
			s += v[k];
			v[k] = s; /* inclusive within the thread */
		}
		float incl = s; /* inclusive scan of the threads' totals, in the warp */
		for (int o2 = 1; o2 < 32; o2 *= 2) {
			float t = __shfl_up_sync(0xffffffff, incl, o2);
			if (lane >= o2)
				incl += t;
		}
		if (lane == 31)
			warps[warp] = incl;
		__syncthreads();
		if (warp == 0) {
			float w = lane < blockDim.x / 32 ? warps[lane] : 0.f, wi = w;
			for (int o2 = 1; o2 < 32; o2 *= 2) {
				float t = __shfl_up_sync(0xffffffff, wi, o2);
				if (lane >= o2)
					wi += t;
			}
			warps[lane] = wi - w; /* exclusive: the warps before */
			if (lane == 31)
				carry_s = wi;
		}
		__syncthreads();
		float before = carry + warps[warp] + incl - s;
		for (int k = 0; k < 4; k++)
			if (j + k < D)
				o[j + k] = before + v[k];
		carry += carry_s;
		__syncthreads(); /* warps[] and carry_s are rewritten by the next chunk */
	}
}
