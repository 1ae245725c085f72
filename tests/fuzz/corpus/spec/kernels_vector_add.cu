// c = a + b over n elements, one element per thread.
//
//! arg     n = 64 * 1024 * 1024
//! in      a : f32[n] = randn(seed=1)
//! in      b : f32[n] = randn(seed=2)
//! out     c : f32[n]
//! launch  grid=(cdiv(n, 256)) block=(256)
//! ref     add(a, b) -> c
//! tol     rtol=1e-6 atol=1e-6

extern "C" __global__ void vector_add(const float *__restrict__ a, const float *__restrict__ b,
				      float *__restrict__ c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
