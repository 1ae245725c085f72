// (7) The column sum over [M, N] by hand, as colsum.tile does it: a block
// of 256 adds ROWS rows of 1024 columns (a float4 a thread a row, RB rows'
// loads in flight) and adds its sums into y with atomicAdd; y is zeroed
// before each run.
//! kernel  colsum
//! arg     M = 16384
//! arg     N = 4096
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[N] = zeros
//! launch  grid=(cdiv(M, ROWS), cdiv(N, 1024)) block=(256)
//! ref     sum(x, dim=0) -> y
//! tol     rtol=1e-4 atol=1e-3
//! bytes   M*N*4
//! flops   M*N
//! sweep   N = 4096, 4099
//! tune    ROWS = 128, 64, 256
//! tune    RB = 4, 2, 8

#ifndef ROWS
#define ROWS 128
#endif
#ifndef RB
#define RB 4 /* rows a step: RB float4 loads in flight a thread */
#endif

extern "C" __global__ void __launch_bounds__(256)
colsum(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	const int r0 = blockIdx.x * ROWS, r1 = min(r0 + ROWS, M);
	const int c = blockIdx.y * 1024 + threadIdx.x * 4;
	if (c >= N)
		return;
	float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	if ((N & 3) == 0) {
		int r = r0;
		for (; r + RB <= r1; r += RB) {
			float4 v[RB];
#pragma unroll
			for (int k = 0; k < RB; k++)
				v[k] = __ldcs((const float4 *)(x + (size_t)(r + k) * N + c));
#pragma unroll
			for (int k = 0; k < RB; k++)
				s.x += v[k].x, s.y += v[k].y, s.z += v[k].z, s.w += v[k].w;
		}
		for (; r < r1; r++) {
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
