// Hot-spot check: one deliberately slow line - a strided, uncoalesced load
// (each thread of a warp reads a different 16 KiB-apart element: a naive
// transpose) - among cheap arithmetic; the store is coalesced. Profiling must
// put line 20 first (a load's stall shows at the instruction that uses it).
//! arg     n = 4096
//! in      x : f32[n, n]
//! out     y : f32[n, n]
//! launch  grid=(cdiv(n * n, 256)) block=(256)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0

__global__ void hot_strided(const float *__restrict__ x, float *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n * n)
		return;
	/* y[r][c] = x[c][r]: consecutive threads read addresses 16 KiB apart */
	int j = (i % n) * n + i / n;
	float scale = 1.0f + (float)(i & 1) * 0.0f;
	y[i] = x[j] * scale;
}
