// Row softmax, one warp per row, checked against a NumPy function in ref.py
// (tests/cli/pyref.sh).
//
//! arg     M = 5
//! arg     N = 333
//! in      x : f32[M, N] = randn(seed=2)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(32)
//! ref     numpy ref.py:softmax_ref -> y
//! tol     rtol=1e-5 atol=1e-6

__global__ void softmax_rows(const float *x, float *y, int M, int N)
{
	const float *row = x + (long)blockIdx.x * N;
	float m = -1e30f, s = 0;
	for (int j = threadIdx.x; j < N; j += 32)
		m = fmaxf(m, row[j]);
	for (int o = 16; o > 0; o /= 2)
		m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
	for (int j = threadIdx.x; j < N; j += 32)
		s += __expf(row[j] - m);
	for (int o = 16; o > 0; o /= 2)
		s += __shfl_xor_sync(0xffffffff, s, o);
	for (int j = threadIdx.x; j < N; j += 32)
		y[(long)blockIdx.x * N + j] = __expf(row[j] - m) / s;
}
