// (7) The column sum over [M, N] by hand, as colsum.tile does it: a block
// of 256 adds 64 rows of 1024 columns (a float4 a thread a row) and adds
// its sums into y with atomicAdd; y is zeroed before each run.
//! kernel  colsum
//! arg     M = 16384
//! arg     N = 4096
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[N] = zeros
//! launch  grid=(cdiv(M, 64), cdiv(N, 1024)) block=(256)
//! ref     sum(x, dim=0) -> y
//! tol     rtol=1e-4 atol=1e-3
//! bytes   M*N*4
//! flops   M*N
//! sweep   N = 4096, 4099

extern "C" __global__ void __launch_bounds__(256)
colsum(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	const int r0 = blockIdx.x * 64, r1 = min(r0 + 64, M);
	const int c = blockIdx.y * 1024 + threadIdx.x * 4;
	if (c >= N)
		return;
	float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	if ((N & 3) == 0) {
		for (int r = r0; r < r1; r++) {
			const float4 v = __ldcs((const float4 *)(x + (size_t)r * N + c));
			s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
		}
	} else {
		for (int r = r0; r < r1; r++) {
			const float *p = x + (size_t)r * N + c;
			s.x += p[0];
			s.y += c + 1 < N ? p[1] : 0.0f;
			s.z += c + 2 < N ? p[2] : 0.0f;
			s.w += c + 3 < N ? p[3] : 0.0f;
		}
	}
	atomicAdd(y + c, s.x);
	if (c + 1 < N)
		atomicAdd(y + c + 1, s.y);
	if (c + 2 < N)
		atomicAdd(y + c + 2, s.z);
	if (c + 3 < N)
		atomicAdd(y + c + 3, s.w);
}
