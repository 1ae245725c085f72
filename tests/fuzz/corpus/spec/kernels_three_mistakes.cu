// A spec with three mistakes: an unknown dtype, an undefined name, and an
// unknown directive.
//! arg     N = 1024
//! in      x : f31[N]
//! out     y : f32[M]
//! lanch   grid=(N) block=(256)

__global__ void scale(const float *x, float *y, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < N)
		y[i] = 2.0f * x[i];
}
