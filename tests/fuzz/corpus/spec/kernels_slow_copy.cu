// A copy that first waits 1.5 s on the GPU clock: a phase long enough for
// the runner's progress ticks (tests/cli/run_gpu.sh progress_ticks).
//! arg     n = 1024
//! in      x : f32[n]
//! out     y : f32[n]
//! launch  grid=(1) block=(256)
//! ref     copy(x) -> y

extern "C" __global__ void slow_copy(const float *x, float *y, int n)
{
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < 1500000000ull);
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		y[i] = x[i];
}
