// KernelBench level 1, problem 50 (Conv2d 3 -> 96 channels, kernel 11,
// stride 4, padding 2, with bias: AlexNet's first layer) at its sizes: one
// thread an output element, the filter read through the read-only cache.
//
//! arg     N = 256
//! arg     CI = 3
//! arg     H = 224
//! arg     W = 224
//! arg     CO = 96
//! arg     K = 11
//! arg     S = 4
//! arg     P = 2
//! in      x : f32[N, CI, H, W] = rand(0, 1)
//! in      w : f32[CO, CI, K, K] = rand(-0.1741, 0.1741)
//! in      b : f32[CO] = rand(-0.1741, 0.1741)
//! out     y : f32[N, CO, (H + 2 * P - K) / S + 1, (W + 2 * P - K) / S + 1]
//! launch  grid=(cdiv(((H + 2 * P - K) / S + 1) * ((W + 2 * P - K) / S + 1), 128), CO, N) block=(128)
//! ref     torch device=cuda F.conv2d(x, w, b, stride=S, padding=P) -> y
//! tol     rtol=1e-4 atol=1e-4

__global__ void conv2d(const float *__restrict__ x, const float *__restrict__ w,
		       const float *__restrict__ b, float *__restrict__ y, int N, int CI, int H, int W,
		       int CO, int K, int S, int P)
{
	int HO = (H + 2 * P - K) / S + 1, WO = (W + 2 * P - K) / S + 1;
	int idx = blockIdx.x * blockDim.x + threadIdx.x, co = blockIdx.y, n = blockIdx.z;
	if (idx >= HO * WO)
		return;
	int oy = idx / WO, ox = idx % WO;
	float acc = __ldg(&b[co]);
	for (int ci = 0; ci < CI; ci++) {
		const float *plane = x + ((long long)n * CI + ci) * H * W;
		const float *f = w + ((long long)co * CI + ci) * K * K;
		for (int i = 0; i < K; i++) {
			int iy = oy * S - P + i;
			if (iy < 0 || iy >= H)
				continue;
			for (int j = 0; j < K; j++) {
				int ix = ox * S - P + j;
				if (ix >= 0 && ix < W)
					acc += plane[(long long)iy * W + ix] * __ldg(&f[i * K + j]);
			}
		}
	}
	y[(((long long)n * CO + co) * HO + oy) * WO + ox] = acc;
}
