// A kernel with a C++ syntax error: line 11 lacks its semicolon, which the
// compiler reports at line 13, column 1.
//! arg     N = 1024
//! in      x : f32[N]
//! out     y : f32[N]
//! launch  grid=(cdiv(N, 256)) block=(256)
//! ref     copy(x) -> y

__global__ void copy(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N) y[i] = x[i]
}
