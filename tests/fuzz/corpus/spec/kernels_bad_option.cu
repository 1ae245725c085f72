// A misspelt compiler option: the error points at it, with the spelling
// NVRTC takes.
//! arg     n = 1024
//! in      x : f32[n]
//! out     y : f32[n]
//! launch  grid=(cdiv(n, 256)) block=(256)
//! options -ftz=true -use_fast_mth

extern "C" __global__ void scale(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = 2.0f * x[i];
}
