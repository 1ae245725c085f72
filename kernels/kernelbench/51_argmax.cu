// KernelBench level 1, problem 51 (argmax over dim 1) at its sizes: one thread
// an output column, reading down the reduced dim (neighbouring threads read
// neighbouring addresses), the first maximum kept as torch.argmax does.
//
//! arg     B = 128
//! arg     D1 = 4096
//! arg     D2 = 4095
//! in      x : f32[B, D1, D2] = rand(0, 1)
//! out     y : i64[B, D2]
//! launch  grid=(cdiv(D2, 256), B) block=(256)
//! ref     torch device=cuda torch.argmax(x, dim=1) -> y
//! tol     rtol=0 atol=0

__global__ void argmax_dim1(const float *__restrict__ x, long long *__restrict__ y, int B, int D1,
			    int D2)
{
	int k = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y;
	if (k >= D2)
		return;
	const float *p = x + (long long)b * D1 * D2 + k;
	float best = p[0];
	int at = 0;
	for (int i = 1; i < D1; i++) {
		float v = p[(long long)i * D2];
		if (v > best)
			best = v, at = i;
	}
	y[(long long)b * D2 + k] = at;
}
