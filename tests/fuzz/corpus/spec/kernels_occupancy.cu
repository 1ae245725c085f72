// Occupancy cross-check: the offline calculator against the driver's
// cuOccupancyMaxActiveBlocksPerMultiprocessor, over block sizes (arg B),
// dynamic shared memory (arg S) and register pressure (-D R=...).
//! arg     n = 1048576
//! arg     B = 256
//! arg     S = 0
//! in      x : f32[n]
//! out     y : f32[n]
//! launch  grid=(cdiv(n, B)) block=(B) smem=S
//! ref     copy(x) -> y
//! tune    R = 4, 64

extern "C" __global__ void occ(const float *x, float *y, int n)
{
	extern __shared__ float dyn[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = i < n ? x[i] : 0.0f;
	float acc[R];
#pragma unroll
	for (int k = 0; k < R; k++)
		acc[k] = v * (k + 1);
#pragma unroll
	for (int it = 0; it < 4; it++)
#pragma unroll
		for (int k = 0; k < R; k++)
			acc[k] = acc[k] * acc[(k + 1) % R] + 1.0f;
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < R; k++)
		s += acc[k];
	if (threadIdx.x == 0 && s == 1234.5f)
		dyn[0] = s; /* never true; keeps acc alive */
	if (i < n)
		y[i] = v + (s == 1234.5f ? dyn[0] : 0.0f);
}
