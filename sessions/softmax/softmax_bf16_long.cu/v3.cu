// Softmax over long rows in bf16 (f32 arithmetic), a cluster of CLUSTER
// blocks a row as in softmax_bf16_cluster_async.cu (the blocks' (max, sum)
// pairs exchanged with st.async and a local mbarrier per row parity: see
// 07_cluster_async.cu for the protocol), but each block's slice comes in by
// one bulk copy (cp.async.bulk, the TMA engine) into shared memory, three
// buffers deep: the copy of the cluster's next row is issued at the top of
// this row, so it is in flight through this row's reduction, exchange, wait
// and stores, and DRAM never waits on the exchange (the third buffer: the
// one being filled was last read by the row before last, whose readers all
// passed the last row's __syncthreads).  bf16 moves half the
// bytes of f32 between the same synchronisations, so the register-only
// kernels left the exchange exposed (softmax_bf16_cluster_async.cu: 83.0 /
// 80.4 / 73.2% of copy at 65536 / 131072 / 262144 on an H100); a bulk copy
// also costs one thread one instruction where loads cost every thread VPT.
//
// Any width: a row of N bf16 starts 2 * N * row bytes into the buffer, so
// its first 16-byte boundary is `head` (0..7) elements in.  The row's whole
// uint4 from there are split among the ranks (each a multiple of 16 bytes,
// as a bulk copy needs); the head (rank 0) and the tail of up to 7 elements
// (the last rank) are read and written by threads 0..6 with scalar accesses.
// The output row is written with 16-byte stores where it is aligned as the
// input (equal offsets: buffers from cudaMalloc), else element by element.
// Each thread reads its VPT uint4 of the slice from shared memory
// (consecutive threads, consecutive 16 bytes: no bank conflicts) for the
// (max, sum), and again for the output, so no register holds the row
// through the exchange.
// CLUSTER = the smallest of 2, 4, 8, 16 with N <= CLUSTER * THREADS * 8 *
// VPT (16384 a block at 512 threads); shared memory: three slices a block
// (96 KiB at 16384), two blocks an SM.  NBUF = 2 keeps two slices and
// issues the next row's copy after the row's __syncthreads (when the last
// row's buffer has been read by all): in flight through the exchange and
// the stores only, for slices too large for three.
// LEAN = 1 (a --define) is for odd widths, where a row fills its slices
// only in part (77% at 50257, CLUSTER = 4, and at 200003, CLUSTER = 16) and
// LEAN = 0 costs what the next power of two does (73% / 67% of copy on an
// H100, 2026-11-28, against 89% / 82% at 65536 / 262144): the next row's
// head and tail are read when its bulk copy is issued, a row ahead, instead
// of each row waiting on two scalar loads from DRAM; the (max, sum) pass
// skips the padding past the slice (LEAN = 0 takes exp(-inf) of it); the
// max is taken of packed pairs (__hmax2, one instruction for two); and each
// exp is one FFMA into ex2, the output's with log2 of the sum folded in.  VPT = 3 with THREADS = 32 * cdiv(slice, 96) (544 at both widths,
// MINB = 2) fits a slice with 4% of padding where 4 x 512 leaves 23%.
//
//! kernel  softmax_bf16
//! arg     M = 4096
//! arg     N = 131072
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, BLOCKS / CLUSTER) * CLUSTER) block=(THREADS) smem=(NBUF * ((N / 8 + CLUSTER - 1) / CLUSTER * 16 + 128))
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-9
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003, 50257
//! require N <= CLUSTER * THREADS * 8 * VPT   // VPT uint4 (8 * VPT bf16) a thread in registers
//! tune    CLUSTER = 8, 4, 16, 2
//! tune    THREADS = 512, 256, 1024
//! tune    BLOCKS = 256, 384
//! tune    NBUF = 3, 2, 512
//! tune    VPT = 4, 3

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 8
#endif
#ifndef THREADS
#define THREADS 512
#endif
#ifndef BLOCKS
#define BLOCKS 256 /* blocks launched (two an SM on 132 SMs) */
#endif
#ifndef VPT
#define VPT 4 /* uint4 (8 bf16) per thread: 8 * VPT elements, 8 * VPT * THREADS per block */
#endif
#ifndef NBUF
#define NBUF 3 /* slices in shared memory: 3, the next copy issued at the top of a row; 2, after its __syncthreads */
#endif
#if NBUF != 2 && NBUF != 3
#error NBUF is 2 or 3
#endif
#ifndef MINB
#define MINB (1024 / THREADS)
#endif
#ifndef LEAN
#define LEAN 0 /* 1: edges a row ahead, no arithmetic on padding, exp as one FFMA into ex2 */
#endif

/* 2^x, the instruction __expf ends in. */
__device__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

/* (max, sum of exp(v - max)) pairs; a max of -inf means "empty" (sum 0). */
__device__ float2 merge(float2 a, float2 b)
{
	float m = fmaxf(a.x, b.x);
	if (m == -CUDART_INF_F)
		return make_float2(m, 0.0f);
	return make_float2(m, a.y * __expf(a.x - m) + b.y * __expf(b.x - m));
}

__device__ float2 warp_merge(float2 p)
{
	for (int o = 16; o > 0; o /= 2)
		p = merge(p, make_float2(__shfl_xor_sync(0xffffffff, p.x, o), __shfl_xor_sync(0xffffffff, p.y, o)));
	return p;
}

__device__ unsigned smem(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* The shared::cluster address of local address a in block rank r. */
__device__ unsigned mapa(unsigned a, unsigned r)
{
	unsigned d;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(r));
	return d;
}

__device__ void bar_init(unsigned bar, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Arrive once on the local barrier and expect bytes more this phase. */
__device__ void bar_arrive_expect(unsigned bar, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
		     : "memory");
}

/* Wait until the local barrier's phase of this parity has completed; what
 * any thread of the cluster released to it is visible afterwards. */
__device__ void bar_wait(unsigned bar, unsigned parity)
{
	unsigned done;
	do {
		asm volatile("{\n\t.reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n\t}"
			     : "=r"(done)
			     : "r"(bar), "r"(parity)
			     : "memory");
	} while (!done);
}

/* 16 bytes into another block's shared memory (shared::cluster addresses),
 * completing 16 bytes on that block's barrier. */
__device__ void send(unsigned addr, float4 v, unsigned bar)
{
	asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr),
		     "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)),
		     "r"(__float_as_uint(v.w)), "r"(bar)
		     : "memory");
}

/* Rows handed out by the running launch, and its clusters that are done
 * (the last one sets both back to 0 for the next launch). */
__device__ unsigned rows_taken, clusters_done;

/* The cluster leaves: the last one to leave resets the counters. */
__device__ void leave(int clusters)
{
	__threadfence();
	if (atomicAdd(&clusters_done, 1u) == (unsigned)clusters - 1) {
		rows_taken = 0;
		clusters_done = 0;
		__threadfence();
	}
}

__device__ float2 bf2(unsigned u)
{
	return __bfloat1622float2(*(const __nv_bfloat162 *)&u);
}

__device__ unsigned pack2(float a, float b)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(a, b);
	return *(unsigned *)&h;
}

/* One bulk copy of bytes (a multiple of 16) from global src (16-byte
 * aligned) into this block's shared dst, completing on the local barrier
 * bar (which this thread arrives on, expecting the bytes). */
__device__ void bulk_load(unsigned dst, const void *src, unsigned bytes, unsigned bar)
{
	bar_arrive_expect(bar, bytes);
	if (bytes)
		asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
			     "l"(src), "r"(bytes), "r"(bar)
			     : "memory");
}

/* Where a row of N at p splits: head elements to its first 16-byte boundary,
 * n8 whole uint4, and this rank's share of them: g0 and ng. */
struct Split {
	int head, n8, g0, ng;
};

__device__ Split split(const __nv_bfloat16 *p, int N, int rank)
{
	Split s;
	s.head = min(N, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
	s.n8 = (N - s.head) / 8;
	int per = (s.n8 + CLUSTER - 1) / CLUSTER;
	s.g0 = rank * per;
	s.ng = max(0, min(s.n8 - s.g0, per));
	return s;
}

/* The head (rank 0) and tail (the last rank) element of row r that thread
 * t reads, element by element, as floats (-inf where it reads none). */
__device__ void edges(const __nv_bfloat16 *x, int r, int N, int rank, int t, float &hv, float &tv)
{
	const __nv_bfloat16 *in = x + (size_t)r * N;
	const Split s = split(in, N, rank);
	const int tail = N - s.head - 8 * s.n8;
	hv = rank == 0 && t < s.head ? __bfloat162float(in[t]) : -CUDART_INF_F;
	tv = rank == CLUSTER - 1 && t < tail ? __bfloat162float(in[s.head + 8 * s.n8 + t]) : -CUDART_INF_F;
}

/* Row r's slice of this rank into dst, completing on bar. */
__device__ void load_row(const __nv_bfloat16 *x, int r, int N, int rank, unsigned char *dst, unsigned long long *bar)
{
	const __nv_bfloat16 *in = x + (size_t)r * N;
	Split s = split(in, N, rank);
	bulk_load(smem(dst), in + s.head + 8 * s.g0, 16 * s.ng, smem(bar));
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char dyn[]; /* NBUF slices */
	__shared__ float2 scratch[32];                        /* the warps' pairs */
	__shared__ __align__(16) float4 slot[2][CLUSTER];     /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[2], loaded[NBUF];
	__shared__ int first; /* rank 0: the cluster's first row (and the one after) */
	const float ninf = -CUDART_INF_F;
	const unsigned pad = 0xff80ff80u; /* two bf16 -inf */
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int t = threadIdx.x, clusters = gridDim.x / CLUSTER;
	const unsigned cap = ((N / 8 + CLUSTER - 1) / CLUSTER * 16 + 127) / 128 * 128; /* bytes a slice */
	if (t == 0) {
		bar_init(smem(&full[0]), 1);
		bar_init(smem(&full[1]), 1);
		for (int i = 0; i < NBUF; i++)
			bar_init(smem(&loaded[i]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			first = (int)atomicAdd(&rows_taken, 2u);
	}
	cluster.sync(); /* every block's barriers initialised before anyone sends */
	int row = *cluster.map_shared_rank(&first, 0), after = row + 1;
	if (t == 0 && row < M)
		load_row(x, row, N, rank, dyn, &loaded[0]);
	float hv = ninf, tv = ninf; /* this row's head and tail element of this thread */
#if LEAN
	if (row < M)
		edges(x, row, N, rank, t, hv, tv);
#endif
	for (unsigned it = 0; row < M; it++) {
		const unsigned b = it & 1, phase = (it >> 1) & 1, lb = it % NBUF, lnext = (it + 1) % NBUF;
		int further = 0; /* rank 0's thread 0: the row after `after` */
		if (rank == 0 && t == 0)
			further = (int)atomicAdd(&rows_taken, 1u);
#if NBUF == 3
		/* the next row's slice into the buffer of the row before last (read
		 * by all threads before the last row's __syncthreads) */
		if (t == 0 && after < M)
			load_row(x, after, N, rank, dyn + lnext * cap, &loaded[lnext]);
#endif
		const __nv_bfloat16 *in = x + (size_t)row * N;
		const Split s = split(in, N, rank);
		const int tail = N - s.head - 8 * s.n8;
		/* the head (rank 0) and the tail (the last rank), element by element:
		 * LEAN reads the next row's now and holds them through this one */
#if LEAN
		float hn = ninf, tn = ninf;
		if (after < M)
			edges(x, after, N, rank, t, hn, tn);
#else
		edges(x, row, N, rank, t, hv, tv);
#endif
		bar_wait(smem(&loaded[lb]), (it / NBUF) & 1);
		const uint4 *buf = (const uint4 *)(dyn + lb * cap);
		unsigned u[4 * VPT]; /* this row's bf16 pairs */
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			uint4 v = i < s.ng ? buf[i] : make_uint4(pad, pad, pad, pad);
			u[4 * k] = v.x, u[4 * k + 1] = v.y, u[4 * k + 2] = v.z, u[4 * k + 3] = v.w;
		}
#if LEAN
		/* the max of the packed pairs (the padding is -inf), then of its two */
		__nv_bfloat162 m2 = *(const __nv_bfloat162 *)&u[0];
#pragma unroll
		for (int k = 1; k < 4 * VPT; k++)
			m2 = __hmax2(m2, *(const __nv_bfloat162 *)&u[k]);
		float mt = fmaxf(fmaxf(hv, tv), fmaxf(__low2float(m2), __high2float(m2)));
#else
		float mt = fmaxf(hv, tv);
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			float2 f = bf2(u[k]);
			mt = fmaxf(mt, fmaxf(f.x, f.y));
		}
#endif
		float st = 0.0f;
		if (mt != ninf) {
#if LEAN
			const float ml = mt * CUDART_L2E_F; /* exp(v - mt) = 2^(v log2 e - ml) */
			st = ex2(fmaf(hv, CUDART_L2E_F, -ml)) + ex2(fmaf(tv, CUDART_L2E_F, -ml));
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				if (t + k / 4 * THREADS >= s.ng)
					continue;
				float2 f = bf2(u[k]);
				st += ex2(fmaf(f.x, CUDART_L2E_F, -ml)) + ex2(fmaf(f.y, CUDART_L2E_F, -ml));
			}
#else
			st = __expf(hv - mt) + __expf(tv - mt);
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				float2 f = bf2(u[k]);
				st += __expf(f.x - mt) + __expf(f.y - mt);
			}
#endif
		}
		float2 p = warp_merge(make_float2(mt, st));
		if (lane == 0)
			scratch[warp] = p;
		__syncthreads();
#if NBUF == 2
		/* the next row's slice into the last row's buffer, which every
		 * thread has now finished reading */
		if (t == 0 && after < M)
			load_row(x, after, N, rank, dyn + lnext * cap, &loaded[lnext]);
#endif
		if (warp == 0) {
			p = warp_merge(lane < THREADS / 32 ? scratch[lane] : make_float2(ninf, 0.0f));
			float4 msg = make_float4(p.x, p.y, __int_as_float(__shfl_sync(0xffffffff, further, 0)), 0.0f);
			if (lane == rank) {
				slot[b][rank] = msg;
				bar_arrive_expect(smem(&full[b]), (CLUSTER - 1) * 16);
			} else if (lane < CLUSTER) { /* to block `lane` */
				send(mapa(smem(&slot[b][rank]), lane), msg, mapa(smem(&full[b]), lane));
			}
		}
		bar_wait(smem(&full[b]), phase);
		float4 q = lane < CLUSTER ? slot[b][lane] : make_float4(ninf, 0.0f, 0.0f, 0.0f);
		float2 g = warp_merge(make_float2(q.x, q.y));
		int next_after = __float_as_int(__shfl_sync(0xffffffff, q.z, 0)); /* rank 0's */
#if LEAN
		/* exp(v - max) / sum = 2^(v log2 e - (max log2 e + log2 sum)) */
		const float gl = fmaf(g.x, CUDART_L2E_F, __log2f(g.y));
#define OUT1(v) ex2(fmaf((v), CUDART_L2E_F, -gl))
#else
		const float inv = 1.0f / g.y;
#define OUT1(v) (__expf((v) - g.x) * inv)
#endif
		__nv_bfloat16 *out = y + (size_t)row * N;
		if (t < s.head && rank == 0)
			out[t] = __float2bfloat16_rn(OUT1(hv));
		if (t < tail && rank == CLUSTER - 1)
			out[s.head + 8 * s.n8 + t] = __float2bfloat16_rn(OUT1(tv));
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		__nv_bfloat16 *o = out + s.head + 8 * s.g0;
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			if (i < s.ng) {
				uint4 v = buf[i];
				unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
				for (int j = 0; j < 4; j++) {
					float2 f = bf2(w[j]);
					w[j] = pack2(OUT1(f.x), OUT1(f.y));
				}
				if (ovec) {
					__stcs((uint4 *)o + i, make_uint4(w[0], w[1], w[2], w[3]));
				} else {
#pragma unroll
					for (int j = 0; j < 8; j++)
						((unsigned short *)o)[8 * i + j] = (unsigned short)(w[j / 2] >> (16 * (j % 2)));
				}
			}
		}
		row = after;
		after = next_after;
#undef OUT1
#if LEAN
		hv = hn, tv = tn;
#endif
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
