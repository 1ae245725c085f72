// Softmax over long rows in bf16 (f32 arithmetic) with 07_cluster_async.cu's
// protocol: a cluster of CLUSTER blocks a row, each block's slice kept packed
// in registers (four uint4 a thread: 32 bf16 in 16 registers, 16384 a block
// of 512), the blocks' (max, sum) pairs exchanged with st.async into every
// peer's receive slots and a local mbarrier per row parity, so no cluster
// barrier and no fence over the row's global stores between rows (see
// 07_cluster_async.cu for the protocol and why the slots' and barriers'
// reuse two rows later needs no barrier).
//
// bf16 moves half the bytes of f32 between the same synchronisations, so
// hiding the exchange matters more here.  With PIPE = 1 each thread issues
// the loads of the cluster's next row (known one row ahead: rank 0's message
// for row i names row i + 2) into a second set of 16 registers right after
// sending its pair, before waiting: the loads are in flight through the
// wait, the merge and this row's stores.  PIPE = 0 loads at the top of the
// loop and may prefetch the next slice into L2 instead (PREFETCH = 1).
// The exponential is computed twice (for the sum, then the output).
// CLUSTER = N / 16384 (4, 8, 16: kbench allows the non-portable 16); a
// cluster holds CLUSTER * THREADS * 32 elements (VPT = 4 uint4 a thread),
// and a longer row is UNSUPPORTED (the require line), not half written.
//
//! kernel  softmax_bf16
//! arg     M = 4096
//! arg     N = 131072
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, 256 / CLUSTER) * CLUSTER) block=(THREADS)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-9
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003, 100003
//! require N <= CLUSTER * THREADS * 32   // 8 * VPT bf16 a thread in registers (VPT = 4)
//! tune    CLUSTER = 8, 4, 16
//! tune    THREADS = 512, 1024
//! tune    PIPE = 0, 1
//! tune    PREFETCH = 0, 1

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 16
#endif
#ifndef THREADS
#define THREADS 512
#endif
#ifndef VPT
#define VPT 4 /* uint4 (8 bf16) per thread: 8 * VPT elements, 8 * VPT * THREADS per block */
#endif
#ifndef PIPE
#define PIPE 0 /* 1: load the next row into registers before waiting (spills a little at 64 registers) */
#endif
#ifndef PREFETCH
#define PREFETCH 0 /* PIPE 0: prefetch the next row's slice into L2 before waiting */
#endif
#ifndef MINB
#define MINB (1024 / THREADS)
#endif

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

/* This thread's part of a slice of len elements at in (bf16 pairs, -inf
 * past the end). */
__device__ __forceinline__ void load(unsigned (&u)[4 * VPT], const __nv_bfloat16 *in, int len, bool vec)
{
	const unsigned pad = 0xff80ff80u; /* two bf16 -inf */
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * THREADS;
			uint4 t = i < len / 8 ? __ldcs((const uint4 *)in + i) : make_uint4(pad, pad, pad, pad);
			u[4 * k] = t.x, u[4 * k + 1] = t.y, u[4 * k + 2] = t.z, u[4 * k + 3] = t.w;
		}
	} else {
		const unsigned short *h = (const unsigned short *)in;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) { /* pair k: elements 2p and 2p + 1 */
			int i = 2 * (threadIdx.x + k * THREADS);
			u[k] = (i < len ? __ldcs(h + i) : 0xff80u) | (i + 1 < len ? __ldcs(h + i + 1) : 0xff80u) << 16;
		}
	}
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float2 scratch[32];                    /* the warps' pairs */
	__shared__ __align__(16) float4 slot[2][CLUSTER]; /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[2];
	__shared__ int first; /* rank 0: the cluster's first row (and the one after) */
	const float ninf = -CUDART_INF_F;
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int clusters = gridDim.x / CLUSTER;
	const int chunk = (N + CLUSTER * 8 - 1) / (CLUSTER * 8) * 8; /* a multiple of 8 */
	const int begin = rank * chunk, len = max(0, min(N - begin, chunk));
	const bool vec = N % 8 == 0;
	if (threadIdx.x == 0) {
		bar_init(smem(&full[0]), 1);
		bar_init(smem(&full[1]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			first = (int)atomicAdd(&rows_taken, 2u);
	}
	cluster.sync(); /* every block's barriers initialised before anyone sends */
	int row = *cluster.map_shared_rank(&first, 0), after = row + 1;
	unsigned u[4 * VPT]; /* this row's bf16 pairs */
#if PIPE
	if (row < M)
		load(u, x + (size_t)row * N + begin, len, vec);
#endif
	for (unsigned it = 0; row < M; it++) {
		const unsigned b = it & 1, phase = (it >> 1) & 1;
		int further = 0; /* rank 0's thread 0: the row after `after` */
		if (rank == 0 && threadIdx.x == 0)
			further = (int)atomicAdd(&rows_taken, 1u);
#if !PIPE
		load(u, x + (size_t)row * N + begin, len, vec);
#endif
		float mt = ninf;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			float2 f = bf2(u[k]);
			mt = fmaxf(mt, fmaxf(f.x, f.y));
		}
		float st = 0.0f;
		if (mt != ninf) {
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				float2 f = bf2(u[k]);
				st += __expf(f.x - mt) + __expf(f.y - mt);
			}
		}
		float2 p = warp_merge(make_float2(mt, st));
		if (lane == 0)
			scratch[warp] = p;
		__syncthreads();
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
#if PIPE
		unsigned un[4 * VPT]; /* the next row's, in flight through the wait */
		if (after < M)
			load(un, x + (size_t)after * N + begin, len, vec);
#elif PREFETCH
		/* The next row's slice into L2, a 128-byte line (64 bf16) a thread. */
		for (int l = threadIdx.x; l * 64 < len; l += THREADS)
			if (after < M)
				asm volatile("prefetch.global.L2 [%0];" ::"l"(x + (size_t)after * N + begin + 64 * l));
#endif
		bar_wait(smem(&full[b]), phase);
		float4 q = lane < CLUSTER ? slot[b][lane] : make_float4(ninf, 0.0f, 0.0f, 0.0f);
		float2 g = warp_merge(make_float2(q.x, q.y));
		int next_after = __float_as_int(__shfl_sync(0xffffffff, q.z, 0)); /* rank 0's */
		float inv = 1.0f / g.y;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			float2 f = bf2(u[k]);
			u[k] = pack2(__expf(f.x - g.x) * inv, __expf(f.y - g.x) * inv);
		}
		__nv_bfloat16 *out = y + (size_t)row * N + begin;
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * THREADS;
				if (i < len / 8)
					__stcs((uint4 *)out + i, make_uint4(u[4 * k], u[4 * k + 1], u[4 * k + 2], u[4 * k + 3]));
			}
		} else {
			unsigned short *h = (unsigned short *)out;
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				int i = 2 * (threadIdx.x + k * THREADS);
				if (i < len)
					__stcs(h + i, (unsigned short)u[k]);
				if (i + 1 < len)
					__stcs(h + i + 1, (unsigned short)(u[k] >> 16));
			}
		}
#if PIPE
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++)
			u[k] = un[k];
#endif
		row = after;
		after = next_after;
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && threadIdx.x == 0)
		leave(clusters);
}
