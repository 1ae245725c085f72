// Transpose, step 2 of 3: a 32 x 32 tile through shared memory.  A block of
// 32 x 8 threads reads the tile row by row (coalesced) and writes it column
// by column as rows of y (coalesced); the extra column of padding keeps
// the column reads free of bank conflicts.
//
//! kernel  transpose_f32
//! arg     R = 32768
//! arg     C = 8192
//! in      x : f32[R, C] = randn(seed=1)
//! out     y : f32[C, R]
//! launch  grid=(cdiv(C, 32), cdiv(R, 32)) block=(32, 8)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! sweep   C = 8192, 4096, 5003

extern "C" __global__ void transpose_f32(const float *__restrict__ x, float *__restrict__ y, int R, int C)
{
	__shared__ float tile[32][33];
	int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
	for (int k = threadIdx.y; k < 32; k += 8) {
		int r = r0 + k, c = c0 + threadIdx.x;
		if (r < R && c < C)
			tile[k][threadIdx.x] = x[(size_t)r * C + c];
	}
	__syncthreads();
	for (int k = threadIdx.y; k < 32; k += 8) {
		int c = c0 + k, r = r0 + threadIdx.x;
		if (r < R && c < C)
			y[(size_t)c * R + r] = tile[threadIdx.x][k];
	}
}
