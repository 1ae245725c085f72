// KernelBench level 1, problem 19 (ReLU) at its sizes, hand-written for kbench:
// y = max(x, 0), four elements a thread (float4), checked against PyTorch.
// The problem draws x with torch.rand (all positive, where ReLU is a copy);
// here it is randn, so the maximum is exercised.
//
//! arg     B = 4096
//! arg     D = 393216
//! in      x : f32[B, D] = randn()
//! out     y : f32[B, D]
//! require D % 4 == 0
//! launch  grid=(min(cdiv(B * D / 4, 256), 65536)) block=(256)
//! ref     torch device=cuda torch.relu(x) -> y
//! tol     rtol=1e-4 atol=1e-4

__global__ void relu(const float4 *__restrict__ x, float4 *__restrict__ y, int B, int D)
{
	long long n = (long long)B * D / 4;
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		float4 v = x[i];
		y[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
	}
}
