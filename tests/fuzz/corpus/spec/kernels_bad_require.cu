// Three malformed require lines: each an error at its column with a caret
// (tests/cli/compile.sh).
//! arg     n = 4096
//! in      x : f32[n] = randn(seed=1)
//! out     y : f32[n]
//! launch  grid=(cdiv(n, 1024)) block=(256)
//! ref     copy(x) -> y
//! require n = 4096
//! require n <
//! require n <= 4 * BLOCK

extern "C" __global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n / 4)
		y[i] = x[i];
}
