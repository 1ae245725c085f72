// (8) y = x^T by hand: the classic shared-memory transpose, a 32 x 32 tile
// a block of 32 x 8 threads, each thread 4 rows of it; the tile padded to
// 33 columns so the column reads hit 32 different banks; reads and writes
// both coalesced.
//! kernel  transpose
//! arg     M = 8192
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[N, M]
//! launch  grid=(cdiv(N, 32), cdiv(M, 32)) block=(32, 8)
//! ref     transpose(x) -> y
//! tol     rtol=0 atol=0
//! bytes   2*M*N*4
//! sweep   N = 8192, 4099

extern "C" __global__ void __launch_bounds__(256)
transpose(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float t[32][33];
	const int c = blockIdx.x * 32 + threadIdx.x;
	const int r0 = blockIdx.y * 32;
#pragma unroll
	for (int k = 0; k < 32; k += 8) {
		const int r = r0 + threadIdx.y + k;
		if (r < M && c < N)
			t[threadIdx.y + k][threadIdx.x] = __ldcs(x + (size_t)r * N + c);
	}
	__syncthreads();
	const int yr0 = blockIdx.x * 32, yc = r0 + threadIdx.x;
#pragma unroll
	for (int k = 0; k < 32; k += 8) {
		const int yr = yr0 + threadIdx.y + k;
		if (yr < N && yc < M)
			__stcs(y + (size_t)yr * M + yc, t[threadIdx.x][threadIdx.y + k]);
	}
}
