// Row sum, step 2 of 2: 128-bit loads, and INFLIGHT of them (8 by
// default) in flight per thread (an unrolled loop with four independent
// partial sums), so every SM keeps enough bytes moving to cover DRAM's
// latency.  Rows whose length is not a multiple of 4 take the scalar loop.
// The tune lines sweep the block size against the loads in flight (16
// variants: bytes in flight per SM = blocks x THREADS x INFLIGHT x 16).
//
//! kernel  row_sum_f32
//! arg     M = 32768
//! arg     N = 8192
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(THREADS)
//! ref     sum(x, dim=1) -> y
//! tol     rtol=1e-4 atol=1e-3
//! sweep   N = 4096, 8192, 16384, 5003
//! tune    THREADS = 256, 128, 512, 1024
//! tune    INFLIGHT = 8, 2, 4, 16

#ifndef THREADS
#define THREADS 256
#endif
#ifndef INFLIGHT
#define INFLIGHT 8
#endif

__device__ float block_sum(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : 0.0f;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
row_sum_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	float s[4] = {0, 0, 0, 0};
	if (N % 4 == 0) {
		const float4 *r4 = (const float4 *)row;
		int n4 = N / 4, i = threadIdx.x;
		for (; i + (INFLIGHT - 1) * blockDim.x < n4; i += INFLIGHT * blockDim.x) {
			float4 t[INFLIGHT];
#pragma unroll
			for (int k = 0; k < INFLIGHT; k++)
				t[k] = __ldcs(r4 + i + k * blockDim.x);
#pragma unroll
			for (int k = 0; k < INFLIGHT; k++)
				s[k % 4] += (t[k].x + t[k].y) + (t[k].z + t[k].w);
		}
		for (; i < n4; i += blockDim.x) {
			float4 t = __ldcs(r4 + i);
			s[0] += (t.x + t.y) + (t.z + t.w);
		}
	} else {
		for (int i = threadIdx.x; i < N; i += blockDim.x)
			s[i % 4] += __ldcs(row + i);
	}
	float total = block_sum((s[0] + s[1]) + (s[2] + s[3]), scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = total;
}
