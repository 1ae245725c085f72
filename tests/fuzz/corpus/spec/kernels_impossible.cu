// A spec that claims far more bytes than the kernel moves: the measured time
// is under the physical floor, so the result must say IMPOSSIBLE, not fast.
//! arg     n = 16777216
//! in      x : f32[n]
//! out     y : f32[n]
//! launch  grid=(cdiv(n, 256)) block=(256)
//! ref     copy(x) -> y
//! bytes   100 * 2 * n * 4

__global__ void copy(const float *__restrict__ x, float *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i];
}
