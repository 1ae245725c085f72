// KernelBench level 1, problem 82 (depthwise Conv2d, 64 channels, kernel 3,
// stride 1, no padding, no bias) at its sizes: one thread an output element.
//
//! arg     N = 16
//! arg     C = 64
//! arg     H = 512
//! arg     W = 512
//! arg     K = 3
//! in      x : f32[N, C, H, W] = rand(0, 1)
//! in      w : f32[C, 1, K, K] = rand(-0.3333, 0.3333)
//! out     y : f32[N, C, H - K + 1, W - K + 1]
//! launch  grid=(cdiv(W - K + 1, 32), cdiv(H - K + 1, 8), N * C) block=(32, 8)
//! ref     torch device=cuda F.conv2d(x, w, groups=C) -> y
//! tol     rtol=1e-4 atol=1e-4

__global__ void depthwise_conv2d(const float *__restrict__ x, const float *__restrict__ w,
				 float *__restrict__ y, int N, int C, int H, int W, int K)
{
	int HO = H - K + 1, WO = W - K + 1;
	int ox = blockIdx.x * blockDim.x + threadIdx.x, oy = blockIdx.y * blockDim.y + threadIdx.y;
	if (ox >= WO || oy >= HO)
		return;
	int c = blockIdx.z % C;
	const float *plane = x + (long long)blockIdx.z * H * W, *f = w + (long long)c * K * K;
	float acc = 0;
	for (int i = 0; i < K; i++)
		for (int j = 0; j < K; j++)
			acc += plane[(long long)(oy + i) * W + ox + j] * __ldg(&f[i * K + j]);
	y[((long long)blockIdx.z * HO + oy) * WO + ox] = acc;
}
