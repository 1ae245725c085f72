// Row sum of bf16 at any width (f32 sums): row_sum_bf16.cu's 128-bit loads
// of 8 bf16, eight in flight a thread, from each row's first 16-byte
// boundary, with a scalar head and tail of up to 7 elements (threads 0..6).
// A row of N bf16 starts 2 * N * row bytes into the buffer: when N is no
// multiple of 8 most rows start off a 16-byte boundary and row_sum_bf16.cu
// takes 2-byte loads (40% of copy at N = 5003 on an H100, 0.48x PyTorch).
// The last loads of a row (fewer than INFLIGHT a thread) go out together,
// predicated, not one after another: at N = 5003 a row is 625 uint4, fewer
// than one batch of 256 x 8, and the compiler's remainder loop (PTX: the
// trip count mod 4 one load at a time, then four at once) took the 2 or 3
// of each thread one at a time; at 8192 it was exactly the four.
// ROWS = THREADS / 32 gives each warp a row (ROWS rows a block, shuffles
// only, no barrier): a row of 5003 bf16 is 10 KB, and one block a row spent
// more on starting blocks and on the block-wide sum than on loading (75.7%
// of copy, 0.95x PyTorch on an H200, 2026-11-28).
//
//! kernel  row_sum_bf16
//! arg     M = 32768
//! arg     N = 5003
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : f32[M]
//! launch  grid=(cdiv(M, ROWS)) block=(THREADS)
//! ref     sum(x, dim=1) -> y
//! tol     rtol=1e-3 atol=1e-2
//! sweep   N = 5003, 4096, 8192, 50257, 4093, 7, 1
//! require min(ROWS - 1, THREADS / ROWS - 32) <= 0   // a block a row, or at most 32 threads a row
//! require THREADS / ROWS >= 8                         // a thread each for the head and tail
//! tune    THREADS = 256, 128, 512
//! tune    INFLIGHT = 8, 4, 16
//! tune    ROWS = 1, 8

#include <cuda_bf16.h>

#ifndef THREADS
#define THREADS 256
#endif
#ifndef INFLIGHT
#define INFLIGHT 8
#endif
#ifndef ROWS
#define ROWS 1 /* rows a block: 1, or THREADS / G for G = 8, 16 or 32 threads a row */
#endif
#define G (THREADS / ROWS) /* threads a row */
static_assert(ROWS == 1 || (G >= 8 && G <= 32 && (G & (G - 1)) == 0 && G * ROWS == THREADS),
	      "ROWS: 1, or G = 8, 16 or 32 threads a row");

/* The sum of the 8 bf16 of a uint4. */
__device__ float sum8(uint4 u)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
	float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
	float2 c = __bfloat1622float2(h[2]), d = __bfloat1622float2(h[3]);
	return ((a.x + a.y) + (b.x + b.y)) + ((c.x + c.y) + (d.x + d.y));
}

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

/* The sum of v over the row's G threads, in every one of them. */
__device__ float row_total(float v, float *scratch)
{
#if ROWS == 1
	return block_sum(v, scratch);
#else
	for (int o = G / 2; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
#endif
}

/* The elements of a row of n bf16 at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
}

extern "C" __global__ void __launch_bounds__(THREADS)
row_sum_bf16(const __nv_bfloat16 *__restrict__ x, float *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	/* a group past the last row sums the last row again (every lane of a
	   warp takes part in the shuffles) and writes nothing */
	const int r = blockIdx.x * ROWS + (int)threadIdx.x / G, t = threadIdx.x % G;
	const __nv_bfloat16 *row = x + (size_t)min(r, M - 1) * N;
	const int head = head_of(row, N), n8 = (N - head) / 8, tail = N - head - 8 * n8;
	const uint4 *r8 = (const uint4 *)(row + head);
	float s[4] = {0, 0, 0, 0};
	int i = t;
	for (; i + (INFLIGHT - 1) * G < n8; i += INFLIGHT * G) {
		uint4 v[INFLIGHT];
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			v[k] = __ldcs(r8 + i + k * G);
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			s[k % 4] += sum8(v[k]);
	}
	if (i < n8) { /* the rest, fewer than INFLIGHT each, in flight together */
		uint4 v[INFLIGHT];
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			v[k] = i + k * G < n8 ? __ldcs(r8 + i + k * G) : make_uint4(0, 0, 0, 0);
#pragma unroll
		for (int k = 0; k < INFLIGHT; k++)
			s[k % 4] += sum8(v[k]);
	}
	if (t < head)
		s[1] += __bfloat162float(row[t]);
	if (t < tail)
		s[2] += __bfloat162float(row[head + 8 * n8 + t]);
	float total = row_total((s[0] + s[1]) + (s[2] + s[3]), scratch);
	if (t == 0 && r < M)
		y[r] = total;
}
