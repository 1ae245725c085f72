// Sum across rows (y[n] = sum over m of x[m, n]) at any width: a block of
// 32 x 32 threads owns 32 columns; thread (tx, ty) adds rows ty, ty + 32,
// ... of column tx, UNROLL loads in flight, so each warp reads 128
// contiguous bytes of a row (coalesced whatever the row's alignment: no
// vector loads, so widths that are no multiple of 4 cost nothing), and the
// 32 partial sums of a column meet in shared memory in a fixed order (the
// same result every launch, no atomics).  1024 threads x UNROLL loads keep
// 32 KB in flight a block; N = 5003 makes 157 blocks, one or two an SM.
//
//! kernel  col_sum_f32
//! arg     M = 32768
//! arg     N = 5003
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[N]
//! launch  grid=(cdiv(N, 32)) block=(32, 32)
//! ref     sum(x, dim=0) -> y
//! tol     rtol=1e-4 atol=1e-3
//! sweep   N = 5003, 8192, 50257, 4093
//! tune    UNROLL = 8, 4, 16

#ifndef UNROLL
#define UNROLL 8
#endif

extern "C" __global__ void __launch_bounds__(1024)
col_sum_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float part[32][33];
	const int tx = threadIdx.x, ty = threadIdx.y, c = blockIdx.x * 32 + tx;
	float s[4] = {0, 0, 0, 0};
	if (c < N) {
		const float *p = x + c;
		int m = ty;
		for (; m + 32 * (UNROLL - 1) < M; m += 32 * UNROLL) {
			float t[UNROLL];
#pragma unroll
			for (int k = 0; k < UNROLL; k++)
				t[k] = __ldcs(p + (size_t)(m + 32 * k) * N);
#pragma unroll
			for (int k = 0; k < UNROLL; k++)
				s[k % 4] += t[k];
		}
		for (; m < M; m += 32)
			s[0] += __ldcs(p + (size_t)m * N);
	}
	part[ty][tx] = (s[0] + s[1]) + (s[2] + s[3]);
	__syncthreads();
	if (ty == 0 && c < N) {
		float total = 0.0f;
		for (int k = 0; k < 32; k++)
			total += part[k][tx];
		y[c] = total;
	}
}
