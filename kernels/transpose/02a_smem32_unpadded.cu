// Transpose, step 2 without its padding: the same 32 x 32 shared-memory
// tile as 02_smem32.cu, but 32 floats a row.  The stores (a row of the
// tile per warp) are conflict-free; the column reads tile[threadIdx.x][k]
// put all 32 threads of a warp in one bank, a 32-way bank conflict: the
// LDS takes 32 wavefronts where one would do.  `kbench profile --hot` (or
// --sass-metrics) shows it per instruction; 02_smem32.cu's extra column
// brings the conflicts to zero.
//
//! kernel  transpose_f32
//! arg     R = 32768
//! arg     C = 8192
//! in      x : f32[R, C] = randn(seed=1)
//! out     y : f32[C, R]
//! launch  grid=(cdiv(C, 32), cdiv(R, 32)) block=(32, 8)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0

extern "C" __global__ void transpose_f32(const float *__restrict__ x, float *__restrict__ y, int R, int C)
{
	__shared__ float tile[32][32];
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
			y[(size_t)c * R + r] = tile[threadIdx.x][k]; // 32-way bank conflict
	}
}
