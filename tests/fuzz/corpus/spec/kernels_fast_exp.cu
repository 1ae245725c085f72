// y = exp(x) / (1 + x*x), compiled with fast math: the division and exp
// become approximate, flush-to-zero instructions (div.approx.ftz.f32).
// For `kbench compile` tests (no reference: not for `kbench run`).
//
//! arg     n = 1024 * 1024
//! in      x : f32[n] = rand(-2, 2)
//! out     y : f32[n]
//! launch  grid=(cdiv(n, 256)) block=(256)
//! options -use_fast_math -maxrregcount=64

extern "C" __global__ void fast_exp(const float *__restrict__ x, float *__restrict__ y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = expf(x[i]) / (1.0f + x[i] * x[i]);
}
