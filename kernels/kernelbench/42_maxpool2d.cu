// KernelBench level 1, problem 42 (MaxPool2d, kernel 4, stride 1, padding 1,
// dilation 1) at its sizes: one thread an output element, padding as -inf.
//
//! arg     N = 32
//! arg     C = 64
//! arg     H = 512
//! arg     W = 512
//! arg     K = 4
//! arg     S = 1
//! arg     P = 1
//! arg     DIL = 1
//! in      x : f32[N, C, H, W] = randn()
//! out     y : f32[N, C, (H + 2 * P - DIL * (K - 1) - 1) / S + 1, (W + 2 * P - DIL * (K - 1) - 1) / S + 1]
//! launch  grid=(cdiv((W + 2 * P - DIL * (K - 1) - 1) / S + 1, 32), cdiv((H + 2 * P - DIL * (K - 1) - 1) / S + 1, 8), N * C) block=(32, 8)
//! ref     torch device=cuda F.max_pool2d(x, K, stride=S, padding=P, dilation=DIL) -> y
//! tol     rtol=1e-4 atol=1e-4

__global__ void maxpool2d(const float *__restrict__ x, float *__restrict__ y, int N, int C, int H,
			  int W, int K, int S, int P, int DIL)
{
	int HO = (H + 2 * P - DIL * (K - 1) - 1) / S + 1, WO = (W + 2 * P - DIL * (K - 1) - 1) / S + 1;
	int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y * blockDim.y + threadIdx.y;
	if (ox >= WO || oy >= HO)
		return;
	const float *plane = x + (long long)blockIdx.z * H * W;
	float m = -3.4e38f;
	for (int i = 0; i < K; i++) {
		int iy = oy * S - P + i * DIL;
		if (iy < 0 || iy >= H)
			continue;
		for (int j = 0; j < K; j++) {
			int ix = ox * S - P + j * DIL;
			if (ix >= 0 && ix < W)
				m = fmaxf(m, plane[(long long)iy * W + ix]);
		}
	}
	y[((long long)blockIdx.z * HO + oy) * WO + ox] = m;
}
