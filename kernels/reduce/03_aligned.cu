// Row sum, step 3: 02_vec4.cu at any width.  A row of N floats starts
// 4 * N * row bytes into the buffer, so when N is no multiple of 4 three
// rows in four start off a 16-byte boundary and 02 takes its scalar loop
// (71% of copy at N = 5003 on an H100, 0.81x PyTorch).  Here each row
// splits into a head of up to 3 floats (to its first 16-byte boundary),
// a body of float4 loaded INFLIGHT at a time as in 02, and a tail of up to
// 3; threads 0..2 add the head and the tail.
//
//! kernel  row_sum_f32
//! arg     M = 32768
//! arg     N = 5003
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(M) block=(THREADS)
//! ref     sum(x, dim=1) -> y
//! tol     rtol=1e-4 atol=1e-3
//! sweep   N = 5003, 4096, 8192, 50257, 4093
//! tune    THREADS = 256, 128, 512
//! tune    INFLIGHT = 8, 4, 16

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

/* The elements of a row of n floats at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 4);
}

extern "C" __global__ void __launch_bounds__(THREADS)
row_sum_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const float *row = x + (size_t)blockIdx.x * N;
	const int head = head_of(row, N), n4 = (N - head) / 4, tail = N - head - 4 * n4;
	const float4 *r4 = (const float4 *)(row + head);
	float s[4] = {0, 0, 0, 0};
	int i = threadIdx.x;
	for (; i + (INFLIGHT - 1) * THREADS < n4; i += INFLIGHT * THREADS) {
		float4 t[INFLIGHT];
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			t[k] = __ldcs(r4 + i + k * THREADS);
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			s[k % 4] += (t[k].x + t[k].y) + (t[k].z + t[k].w);
	}
	for (; i < n4; i += THREADS) {
		float4 t = __ldcs(r4 + i);
		s[0] += (t.x + t.y) + (t.z + t.w);
	}
	if (threadIdx.x < head)
		s[1] += __ldcs(row + threadIdx.x);
	if (threadIdx.x < tail)
		s[2] += __ldcs(row + head + 4 * n4 + threadIdx.x);
	float total = block_sum((s[0] + s[1]) + (s[2] + s[3]), scratch);
	if (threadIdx.x == 0)
		y[blockIdx.x] = total;
}
