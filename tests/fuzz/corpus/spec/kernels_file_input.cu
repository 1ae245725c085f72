// An input read from a .npy file (a ramp from -32 to 32, written by numpy).
//! arg     n = 4096
//! in      x : f32[n] = file("tests/fixtures/kernels/ramp_4096.npy")
//! out     y : f32[n]
//! launch  grid=(cdiv(n, 256)) block=(256)
//! ref     relu(x) -> y

__global__ void relu(const float *__restrict__ x, float *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = fmaxf(x[i], 0.0f);
}
