// LayerNorm forward in bf16 at any width (statistics in f32):
// layernorm_bf16.cu with 16-byte loads and stores from each row's first
// 16-byte boundary and a scalar head and tail of up to 7 elements (threads
// 0..6).  A row of N bf16 starts 2 * N * row bytes into the buffer, so when
// N is no multiple of 8 most rows start off a boundary and layernorm_bf16.cu
// falls back to 2-byte accesses (46.2% of copy at N = 5003 on an H200).
// The weight w and bias b are aligned to their own start, not to the row's:
// the 8 of a body group (e = head + 8i) are two aligned uint4 (L1 hits after
// the first row) shifted by e's offset, the same for every group of the row
// (rmsnorm_bf16_aligned.cu's load8).  The row stays packed in registers (VPT
// uint4 a thread), so VPT = 8 holds rows up to 65536.
// OUT = 1 (issue 31: 70% of copy at 32768 x 5003 on an H200, where the
// RMSNorm kernel with one weight gives 88%): the output loop written once
// for each head (0..7: w + head + 8i is uint4 i's element head, w 16-byte
// aligned), w and b two aligned uint4 shifted at compile time (the ring
// kernels' OUT = 1), not load8's run-time 4-way select and branch a
// vector of each.
// MAXR = 48 (issue 31: the row sat at 79.6-81.1% of copy in the H200 tables):
// NVRTC gives the kernel 55 registers, so 7 blocks of 160 threads an SM;
// capped at 48 (__maxnreg__, no spill), 8 fit: 183.1 -> 177.8 us at 32768 x
// 5003 (83 -> 86% of copy in that run, H200 2026-11-29T01:32Z,
// bench/layernorm_wsm_h200.txt's twelfth run).  FZ = 1: the output's
// arithmetic as two fmas (3 registers more uncapped: 6 blocks).  Tried and
// taken out (89e0e31 has it): one block reduction of shifted sums (K a
// median of three of the row's elements) in place of the mean's and the
// variance's, 5% slower: K's three loads from the row's far parts come
// before any sum.  Nor does the cluster kernel's UNP = 1 (bf16 unpacked by
// a shift or a mask) help here: it spills at 48 registers and needs 64
// without the cap, 2% slower either way (fb6c416 has it).
//
//! kernel  layernorm_bf16
//! arg     M = 32768
//! arg     N = 5003
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! in      b : bf16[N] = randn(seed=3)
//! out     y : bf16[M, N]
//! launch  grid=(M) block=(min(1024, cdiv(N, 256 * VPT) * 32))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   7*M*N
//! sweep   N = 5003, 4096, 8192, 16384, 4093
//! require N <= 1024 * 8 * VPT   // a block of at most 1024 threads, 8 * VPT bf16 each
//! tune    VPT = 4, 8, 2
//! tune    OUT = 0, 1
//! tune    FZ = 0, 1
//! tune    MAXR = 0, 48, 40

#include <cuda_bf16.h>

#ifndef VPT
#define VPT 4 /* uint4 (8 bf16) per thread */
#endif
#ifndef OUT
#define OUT 0 /* 1: the output loop specialised on the row's head (w and b aligned) */
#endif
#ifndef FZ
#define FZ 0 /* 1: (x - mean) * rstd as one fma, x * rstd + (-mean * rstd): 3 registers more */
#endif

/* (x - mean) * rstd * g + c, the output's arithmetic (FZ: two fmas). */
__device__ float norm1(float x, float mean, float rstd, float g, float c)
{
#if FZ
	return fmaf(fmaf(x, rstd, -mean * rstd), g, c);
#else
	return (x - mean) * rstd * g + c;
#endif
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

/* The 8 bf16 at p (any 2-byte alignment) of the array [lo, hi): two aligned
 * uint4 shifted by p's offset, or 8 scalar loads where those would reach
 * outside the array. */
__device__ uint4 load8(const __nv_bfloat16 *p, const __nv_bfloat16 *lo, const __nv_bfloat16 *hi)
{
	const unsigned mis = (unsigned)(size_t)p & 15u;
	const uint4 *q = (const uint4 *)((const char *)p - mis);
	if (mis == 0)
		return __ldg(q);
	if ((const char *)q >= (const char *)lo && (const char *)(q + 2) <= (const char *)hi) {
		uint4 a = __ldg(q), b = __ldg(q + 1);
		unsigned u[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}, o[5], r[4];
		const unsigned d = mis / 4; /* whole words, then half a word */
#pragma unroll
		for (int k = 0; k < 5; k++)
			o[k] = d == 0 ? u[k] : d == 1 ? u[k + 1] : d == 2 ? u[k + 2] : u[k + 3];
#pragma unroll
		for (int k = 0; k < 4; k++)
			r[k] = mis & 2 ? (o[k] >> 16) | (o[k + 1] << 16) : o[k];
		return make_uint4(r[0], r[1], r[2], r[3]);
	}
	uint4 v;
	__nv_bfloat16 *h = (__nv_bfloat16 *)&v;
#pragma unroll
	for (int j = 0; j < 8; j++)
		h[j] = p[j];
	return v;
}

#if OUT
/* The 8 bf16 from element H (a constant: a choice of registers, and a
 * funnel shift a word where H is odd, written as load8's shifts) of the 16
 * at a, c. */
template <int H>
__device__ uint4 shiftc(uint4 a, uint4 c)
{
	const unsigned u[8] = {a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w};
	unsigned r[4];
#pragma unroll
	for (int k = 0; k < 4; k++)
		r[k] = H % 2 ? (u[k + H / 2] >> 16) | (u[k + H / 2 + 1] << 16) : u[k + H / 2];
	return make_uint4(r[0], r[1], r[2], r[3]);
}

/* The 8 bf16 from w[8 * j + H] on (w 16-byte aligned): aligned uint4 j
 * and, where H > 0, j + 1, or only j + 1's first H elements where it would
 * reach past N (a row's last vector: those H are inside w). */
template <int H>
__device__ uint4 wvec(const __nv_bfloat16 *w, int j, int N)
{
	const uint4 a = __ldg((const uint4 *)w + j);
	if (H == 0)
		return a;
	const int e = 8 * j + 8;
	uint4 c = make_uint4(0, 0, 0, 0);
	if (e + 8 <= N) {
		c = __ldg((const uint4 *)w + j + 1);
	} else {
		const unsigned short *h = (const unsigned short *)w + e;
		unsigned v[4] = {0, 0, 0, 0};
#pragma unroll
		for (int k = 0; k < H; k++)
			v[k / 2] |= (unsigned)h[k] << (16 * (k % 2));
		c = make_uint4(v[0], v[1], v[2], v[3]);
	}
	return shiftc<H>(a, c);
}

/* The body of a row whose head is H: (v - mean) * rstd * w + b for this
 * thread's vectors, stored at obody.  Vector i of the row is w's uint4 i
 * from element H on. */
template <int H>
__device__ void out_body(const uint4 *v, uint4 *obody, const __nv_bfloat16 *w, const __nv_bfloat16 *b, int n8, int N,
			 float mean, float rstd)
{
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * blockDim.x;
		if (i < n8) {
			float f[8], g[8], c[8];
			unpack8(v[k], f);
			unpack8(wvec<H>(w, i, N), g);
			unpack8(wvec<H>(b, i, N), c);
#pragma unroll
			for (int j = 0; j < 8; j++)
				f[j] = norm1(f[j], mean, rstd, g[j], c[j]);
			__stcs(obody + i, pack8(f));
		}
	}
}
#endif

#ifndef MAXR
#define MAXR 0 /* > 0: at most MAXR registers a thread (more blocks an SM: 160 threads at 48 fit 8) */
#endif
#if MAXR /* (not with __launch_bounds__, NVRTC says) */
extern "C" __global__ void __maxnreg__(MAXR)
#else
extern "C" __global__ void __launch_bounds__(1024)
#endif
layernorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	       const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	__shared__ float scratch[32];
	const __nv_bfloat16 *row = x + (size_t)blockIdx.x * N;
	__nv_bfloat16 *out = y + (size_t)blockIdx.x * N;
	const int t = threadIdx.x;
	/* input and output rows aligned alike (else all scalar: head = N) */
	const int head = ((size_t)row ^ (size_t)out) & 15 ? N : head_of(row, N);
	const int n8 = (N - head) / 8, tail = N - head - 8 * n8;
	const uint4 *body = (const uint4 *)(row + head);
	uint4 v[VPT];
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int i = t + k * blockDim.x;
		v[k] = i < n8 ? __ldcs(body + i) : make_uint4(0, 0, 0, 0);
	}
	const float tv = t < tail ? __bfloat162float(row[head + 8 * n8 + t]) : 0.0f;
	float s = 0.0f;
	for (int i = t; i < head; i += blockDim.x) /* up to 7, or the row */
		s += __bfloat162float(row[i]);
	s += tv;
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		float f[8];
		unpack8(v[k], f);
#pragma unroll
		for (int j = 0; j < 8; j++)
			s += f[j];
	}
	const float mean = block_sum(s, scratch) / N;
	float q = 0.0f;
	for (int i = t; i < head; i += blockDim.x) {
		float d = __bfloat162float(row[i]) - mean;
		q += d * d;
	}
	if (t < tail)
		q += (tv - mean) * (tv - mean);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		if (t + k * blockDim.x < n8) {
			float f[8];
			unpack8(v[k], f);
#pragma unroll
			for (int j = 0; j < 8; j++)
				q += (f[j] - mean) * (f[j] - mean);
		}
	}
	const float rstd = rsqrtf(block_sum(q, scratch) / N + 1e-5f);
	uint4 *obody = (uint4 *)(out + head);
#if OUT
	if (n8 > 0 && (((size_t)w | (size_t)b) & 15) == 0) {
		switch (head) {
		case 0: out_body<0>(v, obody, w, b, n8, N, mean, rstd); break;
		case 1: out_body<1>(v, obody, w, b, n8, N, mean, rstd); break;
		case 2: out_body<2>(v, obody, w, b, n8, N, mean, rstd); break;
		case 3: out_body<3>(v, obody, w, b, n8, N, mean, rstd); break;
		case 4: out_body<4>(v, obody, w, b, n8, N, mean, rstd); break;
		case 5: out_body<5>(v, obody, w, b, n8, N, mean, rstd); break;
		case 6: out_body<6>(v, obody, w, b, n8, N, mean, rstd); break;
		default: out_body<7>(v, obody, w, b, n8, N, mean, rstd); break;
		}
	} else
#endif
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		int i = t + k * blockDim.x;
		if (i < n8) {
			float f[8], g[8], c[8];
			unpack8(v[k], f);
			unpack8(load8(w + head + 8 * i, w, w + N), g);
			unpack8(load8(b + head + 8 * i, b, b + N), c);
#pragma unroll
			for (int j = 0; j < 8; j++)
				f[j] = norm1(f[j], mean, rstd, g[j], c[j]);
			__stcs(obody + i, pack8(f));
		}
	}
	for (int i = t; i < head; i += blockDim.x)
		out[i] = __float2bfloat16_rn((__bfloat162float(row[i]) - mean) * rstd * __bfloat162float(w[i]) +
					     __bfloat162float(b[i]));
	if (t < tail) {
		int i = head + 8 * n8 + t;
		out[i] = __float2bfloat16_rn((tv - mean) * rstd * __bfloat162float(w[i]) + __bfloat162float(b[i]));
	}
}
