// The reference is another kernel of the file (`ref kernel`): softmax_rows
// (fast exp) checked against softmax_naive (one thread per row, expf).
//! kernel  softmax_rows
//! arg     M = 512
//! arg     N = 1024
//! in      x : f32[M, N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(M) block=(256)
//! ref     kernel softmax_naive
//! tol     rtol=1e-4 atol=1e-6

__global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float red[256];
	const float *row = x + (size_t)blockIdx.x * N;
	float m = -3.0e38f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		m = fmaxf(m, row[i]);
	red[threadIdx.x] = m;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();
	float sum = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		sum += __expf(row[i] - m);
	red[threadIdx.x] = sum;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s /= 2) {
		if (threadIdx.x < s)
			red[threadIdx.x] += red[threadIdx.x + s];
		__syncthreads();
	}
	float inv = 1.0f / red[0];
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		y[(size_t)blockIdx.x * N + i] = __expf(row[i] - m) * inv;
}

__global__ void softmax_naive(const float *x, float *y, int M, int N)
{
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= M)
		return;
	float m = -3.0e38f, s = 0.0f;
	for (int i = 0; i < N; i++)
		m = fmaxf(m, x[(size_t)r * N + i]);
	for (int i = 0; i < N; i++)
		s += expf(x[(size_t)r * N + i] - m);
	for (int i = 0; i < N; i++)
		y[(size_t)r * N + i] = expf(x[(size_t)r * N + i] - m) / s;
}
