// A bandwidth-bound copy (16-byte loads and stores), for counter checks.
//! arg     n = 67108864
//! in      x : f32[n]
//! out     y : f32[n]
//! launch  grid=(cdiv(n, 1024)) block=(256)
//! ref     copy(x) -> y

__global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n / 4)
		y[i] = x[i];
}
