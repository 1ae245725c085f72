// Transpose of bf16 at any width: transpose_bf16.cu, whose tiles all take
// its scalar path when C is no multiple of 4 (x's rows then start off an
// 8-byte boundary: 78.4% of copy at 32768 x 5003 on an H100, 65% on an
// H200), with a fast path for that case too.  Each warp reads whole 64-
// element row segments of the tile, lane l elements 2l and 2l + 1, as one
// 4-byte load: where the segment starts off a 4-byte boundary (every other
// row when C is odd) each lane loads the word before and takes its high
// half and the next lane's low half (a shuffle; lane 31 loads element 63
// alone).  A warp's loads are 128 contiguous bytes (coalesced); all eight
// rows' loads go out before the first store to shared memory (one 4-byte
// store, conflict-free: a row of the tile is 132 bytes).  They used to
// choose between one 4-byte and two 2-byte loads a row, and the branch (in
// the PTX) kept each row's load waiting on the row before's store: one load
// in flight a thread, 73% of copy at 32768 x 5003 and 8192 x 50257 on an H200
// (2026-11-28), against 88% at 8192.  The stores along y's rows (R a
// multiple of 4) stay 8-byte uint2.  Only edge tiles, R not a multiple of
// 4, y off an 8-byte boundary and x off a 4-byte one take the scalar path.
//
//! kernel  transpose_bf16
//! arg     R = 32768
//! arg     C = 5003
//! in      x : bf16[R, C] = randn(seed=1)
//! out     y : bf16[C, R]
//! launch  grid=(cdiv(C, 64), cdiv(R, 64)) block=(16, 16)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! sweep   C = 5003, 8192, 4093, 50257, 7, 1

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
	bool fast = r0 + T <= R && c0 + T <= C && R % 4 == 0 && ((size_t)y & 7) == 0 && ((size_t)x & 3) == 0;
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
			unsigned v[8], e[8];
			bool odd[8];
#pragma unroll
			for (int k = 0; k < 8; k++) { /* every load first, then the stores */
				const unsigned short *p = xs + (size_t)(r0 + w + 8 * k) * C + c0 + 2 * l;
				odd[k] = ((size_t)p & 2) != 0;
				v[k] = __ldcs((const unsigned *)(p - odd[k]));
				e[k] = odd[k] && l == 31 ? __ldcs(p + 1) : 0u;
			}
#pragma unroll
			for (int k = 0; k < 8; k++) {
				unsigned next = __shfl_down_sync(0xffffffff, v[k], 1);
				if (odd[k]) /* this word's high half, the next lane's low half */
					v[k] = v[k] >> 16 | (l == 31 ? e[k] : next) << 16;
				*(unsigned *)&tile[w + 8 * k][2 * l] = v[k];
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
