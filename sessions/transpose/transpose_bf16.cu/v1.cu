// Transpose of bf16: a 64 x 64 tile and 8-byte accesses (4 bf16 a load), as
// 03_tile64.cu for 2-byte elements: a block of 16 x 16 threads reads four
// uint2 a thread along rows of x and writes four uint2 along rows of y.
// Edge tiles and shapes not a multiple of 4 take the scalar path.
//
//! kernel  transpose_bf16
//! arg     R = 32768
//! arg     C = 8192
//! in      x : bf16[R, C] = randn(seed=1)
//! out     y : bf16[C, R]
//! launch  grid=(cdiv(C, 64), cdiv(R, 64)) block=(16, 16)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! sweep   C = 8192, 4096, 5003

#include <cuda_bf16.h>

#define T 64

extern "C" __global__ void __launch_bounds__(256)
transpose_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int R, int C)
{
	/* moved as 16-bit patterns: a transpose never looks at the values */
	const unsigned short *xs = (const unsigned short *)x;
	unsigned short *ys = (unsigned short *)y;
	__shared__ unsigned short tile[T][T + 2];
	int c0 = blockIdx.x * T, r0 = blockIdx.y * T, tx = threadIdx.x, ty = threadIdx.y;
	bool fast = r0 + T <= R && c0 + T <= C && R % 4 == 0 && C % 4 == 0;
	if (fast) {
#pragma unroll
		for (int k = 0; k < 4; k++) {
			int rr = ty + 16 * k;
			uint2 v = __ldcs((const uint2 *)(xs + (size_t)(r0 + rr) * C + c0) + tx);
			tile[rr][4 * tx] = (unsigned short)v.x, tile[rr][4 * tx + 1] = (unsigned short)(v.x >> 16);
			tile[rr][4 * tx + 2] = (unsigned short)v.y, tile[rr][4 * tx + 3] = (unsigned short)(v.y >> 16);
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < 4; k++) {
			int cc = ty + 16 * k;
			uint2 v = make_uint2(tile[4 * tx][cc] | (unsigned)tile[4 * tx + 1][cc] << 16,
					     tile[4 * tx + 2][cc] | (unsigned)tile[4 * tx + 3][cc] << 16);
			__stcs((uint2 *)(ys + (size_t)(c0 + cc) * R + r0) + tx, v);
		}
		return;
	}
	for (int rr = ty; rr < T; rr += 16)
		for (int cc = tx; cc < T; cc += 16)
			if (r0 + rr < R && c0 + cc < C)
				tile[rr][cc] = xs[(size_t)(r0 + rr) * C + c0 + cc];
	__syncthreads();
	for (int cc = ty; cc < T; cc += 16)
		for (int rr = tx; rr < T; rr += 16)
			if (r0 + rr < R && c0 + cc < C)
				ys[(size_t)(c0 + cc) * R + r0 + rr] = tile[rr][cc];
}
