// Transpose of bf16 at any width: transpose_bf16.cu, whose tiles all take
// its scalar path when C is no multiple of 4 (x's rows then start off an
// 8-byte boundary: 78.4% of copy at 32768 x 5003 on an H100, 65% on an
// H200), with a fast path for that case too.  Each warp reads whole 64-
// element row segments of the tile, lane l elements 2l and 2l + 1: one
// 4-byte load where the segment starts on a 4-byte boundary (every other
// row when C is odd), else two 2-byte loads; a warp's loads are 128
// contiguous bytes either way (coalesced), and go into shared memory as one
// 4-byte store (conflict-free: a row of the tile is 132 bytes).  The
// stores along y's rows (R a multiple of 4) stay 8-byte uint2.  Only edge
// tiles, R not a multiple of 4 and y off an 8-byte boundary take the
// scalar path.
//
//! kernel  transpose_bf16
//! arg     R = 32768
//! arg     C = 5003
//! in      x : bf16[R, C] = randn(seed=1)
//! out     y : bf16[C, R]
//! launch  grid=(cdiv(C, 64), cdiv(R, 64)) block=(16, 16)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! sweep   C = 5003, 8192, 4093, 50257

#include <cuda_bf16.h>

#define T 64

extern "C" __global__ void __launch_bounds__(256)
transpose_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int R, int C)
{
	/* moved as 16-bit patterns: a transpose never looks at the values */
	const unsigned short *xs = (const unsigned short *)x;
	unsigned short *ys = (unsigned short *)y;
	__shared__ __align__(4) unsigned short tile[T][T + 2];
	int c0 = blockIdx.x * T, r0 = blockIdx.y * T, tx = threadIdx.x, ty = threadIdx.y;
	bool fast = r0 + T <= R && c0 + T <= C && R % 4 == 0 && ((size_t)y & 7) == 0;
	if (fast) {
		if (C % 4 == 0 && ((size_t)x & 7) == 0) {
#pragma unroll
			for (int k = 0; k < 4; k++) {
				int rr = ty + 16 * k;
				uint2 v = __ldcs((const uint2 *)(xs + (size_t)(r0 + rr) * C + c0) + tx);
				tile[rr][4 * tx] = (unsigned short)v.x, tile[rr][4 * tx + 1] = (unsigned short)(v.x >> 16);
				tile[rr][4 * tx + 2] = (unsigned short)v.y, tile[rr][4 * tx + 3] = (unsigned short)(v.y >> 16);
			}
		} else { /* warp w: rows w, w + 8, ...; lane l: elements 2l, 2l + 1 */
			const int l = (16 * ty + tx) % 32, w = (16 * ty + tx) / 32;
#pragma unroll
			for (int k = 0; k < 8; k++) {
				int rr = w + 8 * k;
				const unsigned short *p = xs + (size_t)(r0 + rr) * C + c0 + 2 * l;
				unsigned v = ((size_t)p & 3) == 0 ? __ldcs((const unsigned *)p)
								 : __ldcs(p) | (unsigned)__ldcs(p + 1) << 16;
				*(unsigned *)&tile[rr][2 * l] = v;
			}
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
