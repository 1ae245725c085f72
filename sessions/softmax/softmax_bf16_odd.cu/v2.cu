// Softmax over rows in bf16 at any width: softmax_bf16.cu's 16-byte loads
// and stores from each row's first 16-byte boundary, with a scalar head and
// tail.  A row of N bf16 starts 2 * N * row bytes into the buffer, so when N
// is no multiple of 8 most rows start off a 16-byte boundary and
// softmax_bf16.cu falls back to 2-byte loads (57.7% of copy at N = 5003 on
// an H200).  Here each row splits into a head of up to 7 elements (to its
// first 16-byte boundary), a body of whole uint4 (8 bf16 each) and a tail of
// up to 7: threads 0..6 hold the head and the tail in one register each,
// and the body is loaded and stored 16 bytes at a time, strided by the
// block (coalesced).
// The row stays packed in registers (VPT uint4 a thread, 4 registers each)
// and is unpacked for the max, the sum and the output, so VPT = 8 (64 bf16 a
// thread, rows up to 65536) fits GPT-2's vocabulary (50257) in one block.
// Where the input and output rows are not equally aligned (buffers that
// start at different offsets) the row takes a plain scalar loop.
//
//! kernel  softmax_bf16
//! arg     M = 32768
//! arg     N = 5003
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 256 * VPT) * 32))
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-7
//! flops   5*M*N
//! sweep   N = 5003, 4096, 8192, 16384, 4093
//! require N <= 1024 * 8 * VPT   // a block of at most 1024 threads, 8 * VPT bf16 each
//! tune    VPT = 4, 8, 2

#include <cuda_bf16.h>
#include <math_constants.h>

#ifndef VPT
#define VPT 4 /* uint4 (8 bf16) per thread: a row of up to 8 * VPT * blockDim */
#endif

__device__ float block_max(float v, float *scratch)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : -CUDART_INF_F;
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	__syncthreads();
	return v;
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
	__syncthreads();
	return v;
}

/* 8 bf16 of a uint4 as floats, and back. */
__device__ void unpack8(uint4 u, float *f)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++) {
		float2 t = __bfloat1622float2(h[j]);
		f[2 * j] = t.x, f[2 * j + 1] = t.y;
	}
}

__device__ uint4 pack8(const float *f)
{
	uint4 u;
	__nv_bfloat162 *h = (__nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++)
		h[j] = __floats2bfloat162_rn(f[2 * j], f[2 * j + 1]);
	return u;
}

/* The elements of a row of n bf16 at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
}

/* Three passes over global memory, for rows whose input and output are
 * aligned differently. */
__device__ void softmax_scalar(const __nv_bfloat16 *row, __nv_bfloat16 *out, int N, float *scratch)
{
	float m = -CUDART_INF_F, s = 0.0f;
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		m = fmaxf(m, __bfloat162float(row[i]));
	m = block_max(m, scratch);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		s += __expf(__bfloat162float(row[i]) - m);
	float inv = 1.0f / block_sum(s, scratch);
	for (int i = threadIdx.x; i < N; i += blockDim.x)
		out[i] = __float2bfloat16_rn(__expf(__bfloat162float(row[i]) - m) * inv);
}

extern "C" __global__ void __launch_bounds__(1024)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * N;
	__nv_bfloat16 *out = y + (size_t)blockIdx.x * N;
	const float ninf = -CUDART_INF_F;
	if (((size_t)row ^ (size_t)out) & 15) {
		softmax_scalar(row, out, N, scratch);
		return;
	}
	const int head = head_of(row, N), n8 = (N - head) / 8, tail = N - head - 8 * n8;
	const uint4 *body = (const uint4 *)(row + head);
	const int t = threadIdx.x;
	/* the body, packed; past its end, -inf (0xff80) */
	uint4 v[VPT];
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int i = t + k * blockDim.x;
		v[k] = i < n8 ? __ldcs(body + i) : make_uint4(0xff80ff80u, 0xff80ff80u, 0xff80ff80u, 0xff80ff80u);
	}
	float hv = t < head ? __bfloat162float(row[t]) : ninf;
	float tv = t < tail ? __bfloat162float(row[head + 8 * n8 + t]) : ninf;
	float m = fmaxf(hv, tv);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		float f[8];
		unpack8(v[k], f);
#pragma unroll
		for (int j = 0; j < 8; j++)
			m = fmaxf(m, f[j]);
	}
	m = block_max(m, scratch);
	float s = __expf(hv - m) + __expf(tv - m); /* exp(-inf) = 0 for the padding */
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		float f[8];
		unpack8(v[k], f);
#pragma unroll
		for (int j = 0; j < 8; j++)
			s += __expf(f[j] - m);
	}
	float inv = 1.0f / block_sum(s, scratch);
	uint4 *obody = (uint4 *)(out + head);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int i = t + k * blockDim.x;
		if (i < n8) {
			float f[8];
			unpack8(v[k], f);
#pragma unroll
			for (int j = 0; j < 8; j++)
				f[j] = __expf(f[j] - m) * inv;
			__stcs(obody + i, pack8(f));
		}
	}
	if (t < head)
		out[t] = __float2bfloat16_rn(__expf(hv - m) * inv);
	if (t < tail)
		out[head + 8 * n8 + t] = __float2bfloat16_rn(__expf(tv - m) * inv);
}
