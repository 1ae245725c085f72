// (6) Rotary embedding (NeoX halves) on [B*H*T, 128] by hand: a warp a row
// (two warps a block, 8 rows a block), each
// lane two columns of each half as a float2.
//! kernel  rope
//! arg     BH = 256
//! arg     T = 1024
//! arg     R = BH * T
//! in      x : f32[R, 128] = randn(seed=1)
//! in      cs : f32[T, 64] = rand(-1, 1)
//! in      sn : f32[T, 64] = rand(-1, 1)
//! out     y : f32[R, 128]
//! launch  grid=(cdiv(R, 8)) block=(64)
//! ref     kernel rope_ref
//! tol     rtol=1e-5 atol=1e-6
//! bytes   2*R*128*4
//! flops   3*R*128
//! sweep   T = 1024, 1001

extern "C" __global__ void __launch_bounds__(64)
rope(const float *__restrict__ x, const float *__restrict__ cs, const float *__restrict__ sn,
     float *__restrict__ y, int BH, int T, int R)
{
	const int lane = threadIdx.x % 32;
	for (int row = (int)blockIdx.x * 8 + (int)threadIdx.x / 32; row < min((int)blockIdx.x * 8 + 8, R); row += 2) {
		const int p = row % T;
		const float2 a = __ldcs((const float2 *)(x + (size_t)row * 128) + lane);
		const float2 b = __ldcs((const float2 *)(x + (size_t)row * 128 + 64) + lane);
		const float2 c = __ldg((const float2 *)(cs + (size_t)p * 64) + lane);
		const float2 s = __ldg((const float2 *)(sn + (size_t)p * 64) + lane);
		__stcs((float2 *)(y + (size_t)row * 128) + lane,
		       make_float2(a.x * c.x - b.x * s.x, a.y * c.y - b.y * s.y));
		__stcs((float2 *)(y + (size_t)row * 128 + 64) + lane,
		       make_float2(b.x * c.x + a.x * s.x, b.y * c.y + a.y * s.y));
	}
}

extern "C" __global__ void rope_ref(const float *x, const float *cs, const float *sn, float *y, int BH,
				    int T, int R)
{
	for (int row = (int)blockIdx.x * 8; row < min((int)blockIdx.x * 8 + 8, R); row++)
		for (int j = threadIdx.x; j < 64; j += blockDim.x) {
			const int p = row % T;
			const double a = x[(size_t)row * 128 + j], b = x[(size_t)row * 128 + 64 + j];
			const double c = cs[(size_t)p * 64 + j], s = sn[(size_t)p * 64 + j];
			y[(size_t)row * 128 + j] = (float)(a * c - b * s);
			y[(size_t)row * 128 + 64 + j] = (float)(b * c + a * s);
		}
}
