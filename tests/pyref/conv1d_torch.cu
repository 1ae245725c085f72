// A 1-D convolution, stride 2, no padding: one thread per output element,
// checked against a PyTorch expression (tests/cli/pyref.sh).
//
//! arg     B = 2
//! arg     C = 3
//! arg     O = 4
//! arg     L = 50
//! arg     KW = 5
//! in      x : f32[B, C, L] = randn(seed=5)
//! in      w : f32[O, C, KW] = randn(seed=6)
//! out     y : f32[B, O, (L - KW) / 2 + 1]
//! launch  grid=(cdiv(B * O * ((L - KW) / 2 + 1), 64)) block=(64)
//! ref     torch F.conv1d(x, w, stride=2) -> y
//! tol     rtol=1e-4 atol=1e-5

__global__ void conv1d(const float *x, const float *w, float *y, int B, int C, int O, int L, int KW)
{
	int LO = (L - KW) / 2 + 1;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= B * O * LO)
		return;
	int t = i % LO, o = (i / LO) % O, b = i / (LO * O);
	float s = 0;
	for (int c = 0; c < C; c++)
		for (int k = 0; k < KW; k++)
			s += x[((long)b * C + c) * L + t * 2 + k] * w[((long)o * C + c) * KW + k];
	y[i] = s;
}
