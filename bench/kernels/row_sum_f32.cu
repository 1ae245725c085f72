// Row sums, one warp per row, 4 floats per load: 16384 x 1024 f32 (64 MB
// read), about 25 us on an H100.
//
//! kernel  row_sum
//! arg     M = 16384
//! arg     N = 1024
//! in      x : f32[M, N] = randn(seed=1)
//! out     s : f32[M]
//! launch  grid=(cdiv(M, 8)) block=(256)
//! ref     sum(x, dim=1) -> s
//! tol     rtol=1e-4 atol=1e-4

extern "C" __global__ void row_sum(const float *__restrict__ x, float *__restrict__ s, int M, int N)
{
	int lane = threadIdx.x % 32, row = blockIdx.x * 8 + threadIdx.x / 32;
	if (row >= M)
		return;
	const float4 *xr = (const float4 *)(x + (size_t)row * N);
	float acc = 0.0f;
	for (int i = lane; i < N / 4; i += 32) {
		float4 v = xr[i];
		acc += (v.x + v.y) + (v.z + v.w);
	}
	for (int o = 16; o > 0; o /= 2)
		acc += __shfl_xor_sync(0xffffffff, acc, o);
	if (lane == 0)
		s[row] = acc;
}
