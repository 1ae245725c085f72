// A copy whose spec says which sizes it takes: a multiple of 4 (float4
// loads) and no more than its grid covers (BLOCKS blocks of 256 threads, 4
// floats each).  tests/cli/run_gpu.sh: a violating --arg is UNSUPPORTED
// (exit 1, nothing launched); the sweep's violating point (1002) and the
// tune's (BLOCKS=2) are UNSUPPORTED rows, and the run still exits 0.
//! arg     n = 4096
//! in      x : f32[n] = randn(seed=1)
//! out     y : f32[n]
//! launch  grid=(BLOCKS) block=(256)
//! ref     copy(x) -> y
//! sweep   n = 1024, 1002, 2048
//! tune    BLOCKS = 4, 8, 2
//! require n % 4 == 0
//! require n <= BLOCKS * 256 * 4

extern "C" __global__ void copy4(const float4 *__restrict__ x, float4 *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n / 4)
		y[i] = x[i];
}
