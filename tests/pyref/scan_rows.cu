// Inclusive prefix sum of each row, one thread per row: a kernel of our own
// checked against a NumPy expression (tests/cli/pyref.sh).
//
//! arg     M = 7
//! arg     N = 300
//! in      x : f32[M, N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(cdiv(M, 32)) block=(32)
//! ref     numpy np.cumsum(x, axis=1) -> y
//! tol     rtol=1e-4 atol=1e-4

__global__ void scan_rows(const float *x, float *y, int M, int N)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= M)
		return;
	float s = 0;
	for (int j = 0; j < N; j++) {
		s += x[(long)r * N + j];
		y[(long)r * N + j] = s;
	}
}
