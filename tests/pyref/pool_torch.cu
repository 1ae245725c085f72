// Average pooling of rows in windows of K, checked against PyTorch's
// avg_pool1d through a function of ref.py (tests/cli/pyref.sh).
//
//! arg     M = 6
//! arg     N = 96
//! arg     K = 4
//! in      x : f32[M, N] = rand(0, 1)
//! out     y : f32[M, N / K]
//! launch  grid=(M) block=(32)
//! ref     torch ref.py:pool_ref -> y
//! tol     rtol=1e-5 atol=1e-6

__global__ void pool_rows(const float *x, float *y, int M, int N, int K)
{
	for (int j = threadIdx.x; j < N / K; j += blockDim.x) {
		float s = 0;
		for (int k = 0; k < K; k++)
			s += x[(long)blockIdx.x * N + j * K + k];
		y[(long)blockIdx.x * (N / K) + j] = s / K;
	}
}
