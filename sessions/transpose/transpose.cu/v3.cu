// Transpose, step 3 of 3: a 64 x 64 tile and 128-bit accesses.  A block of
// 16 x 16 threads reads four float4 a thread (rows of x) and writes four
// float4 (rows of y, gathered from a column of the tile): a quarter of the
// memory instructions of step 2, 256-byte runs on both sides.  Tiles on
// the edge, and shapes not a multiple of 4, take the scalar path.
//
//! kernel  transpose_f32
//! arg     R = 32768
//! arg     C = 8192
//! in      x : f32[R, C] = randn(seed=1)
//! out     y : f32[C, R]
//! launch  grid=(cdiv(C, 64), cdiv(R, 64)) block=(16, 16)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! sweep   C = 8192, 4096, 5003

#define T 64

extern "C" __global__ void __launch_bounds__(256)
transpose_f32(const float *__restrict__ x, float *__restrict__ y, int R, int C)
{
	__shared__ float tile[T][T + 1];
	int c0 = blockIdx.x * T, r0 = blockIdx.y * T, tx = threadIdx.x, ty = threadIdx.y;
	bool fast = r0 + T <= R && c0 + T <= C && R % 4 == 0 && C % 4 == 0;
	if (fast) {
#pragma unroll
		for (int k = 0; k < 4; k++) {
			int rr = ty + 16 * k;
			float4 v = __ldcs((const float4 *)(x + (size_t)(r0 + rr) * C + c0) + tx);
			tile[rr][4 * tx] = v.x, tile[rr][4 * tx + 1] = v.y;
			tile[rr][4 * tx + 2] = v.z, tile[rr][4 * tx + 3] = v.w;
		}
		__syncthreads();
#pragma unroll
		for (int k = 0; k < 4; k++) {
			int cc = ty + 16 * k;
			float4 v = make_float4(tile[4 * tx][cc], tile[4 * tx + 1][cc], tile[4 * tx + 2][cc],
					       tile[4 * tx + 3][cc]);
			__stcs((float4 *)(y + (size_t)(c0 + cc) * R + r0) + tx, v);
		}
		return;
	}
	for (int rr = ty; rr < T; rr += 16)
		for (int cc = tx; cc < T; cc += 16)
			if (r0 + rr < R && c0 + cc < C)
				tile[rr][cc] = x[(size_t)(r0 + rr) * C + c0 + cc];
	__syncthreads();
	for (int cc = ty; cc < T; cc += 16)
		for (int rr = tx; rr < T; rr += 16)
			if (r0 + rr < R && c0 + cc < C)
				y[(size_t)(c0 + cc) * R + r0 + rr] = tile[rr][cc];
}
