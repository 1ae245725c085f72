// Transpose, step 1 of 3: one thread per element, y[c][r] = x[r][c].  The
// reads are coalesced along a row of x; the writes land a whole row of y
// apart from each other, so every 4-byte store is a 32-byte sector.
//
//! kernel  transpose_f32
//! arg     R = 32768
//! arg     C = 8192
//! in      x : f32[R, C] = randn(seed=1)
//! out     y : f32[C, R]
//! launch  grid=(cdiv(C, 32), cdiv(R, 8)) block=(32, 8)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! sweep   C = 8192, 4096, 5003

extern "C" __global__ void transpose_f32(const float *__restrict__ x, float *__restrict__ y, int R, int C)
{
	int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 8 + threadIdx.y;
	if (r < R && c < C)
		y[(size_t)c * R + r] = x[(size_t)r * C + c];
}
