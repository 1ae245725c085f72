// Softmax over long rows (65536 to 262144 f32 a row), a cluster of CLUSTER
// blocks a row as in 06_cluster.cu (each block's slice in registers: the row
// read once, written once), but with no cluster barrier between rows.
//
// Why: 06 exchanges the blocks' (max, sum) pairs across one
// barrier.cluster.arrive/wait a row.  The arrive has release semantics at
// cluster scope for every thread of every block, so each warp first waits
// for all its outstanding global stores (the previous row's output) to be
// acknowledged (membar stalls 12-15%), then all warps of the cluster wait
// for each other (barrier stalls 20-22%).
//
// Protocol (per block; b = the row's parity, two of everything):
//   slot[b][CLUSTER]  receive buffer, one float4 {max, sum, next row, 0} a
//                     sender rank; full[b]  a local mbarrier, arrival
//                     count 1, expecting (CLUSTER - 1) * 16 bytes a phase.
//   1. Load the slice (128-bit streaming loads), each thread reduces its
//      elements to (m_t, s_t = sum exp(v - m_t)); warp shuffles merge the
//      pairs, one __syncthreads, warp 0 merges the warps' pairs into the
//      block's (m, s).
//   2. Warp 0: lane `rank` writes the block's message into its own slot
//      (plain st.shared) and does mbarrier.arrive.expect_tx on full[b]
//      (release.cta: orders that store for the block's waiters); lane r
//      (r != rank, r < CLUSTER) sends the message to block r with
//      st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32, into
//      slot[b][rank] of block r, completing 16 bytes on block r's full[b].
//   3. Every thread waits on its own full[b] (try_wait.parity with
//      .acquire.cluster), merges the CLUSTER messages (lane r reads slot r),
//      scales its registers by exp(m_t - M) / S and writes them.
// The only release is st.async's complete_tx and the local arrive, done by
// warp 0 alone; no warp fences its global stores, so the row's stores drain
// while the block loads and reduces the next row.  Waiting is one-way: a
// block waits for the others' messages, never for the others to reach a
// point, so a fast block runs ahead to its next row's loads.
//
// Reuse of a slot and of full[b] two rows later is safe without a barrier:
// block P sends its row i+2 message to Q only after P has received Q's row
// i+1 message, which Q sends (warp 0, after the __syncthreads of row i+1)
// after all of Q's threads have finished waiting on full[b] for row i and
// read slot[b].  So full[b]'s phase for row i is complete before any row
// i+2 bytes land on it, and a byte that lands before Q's expect_tx only
// makes the tx-count negative (the phase cannot complete while Q's own
// arrival is pending).  The same chain orders the scratch array's reuse.
//
// Rows: rank 0 hands them out from a counter in global memory as in 06, but
// two ahead: its message for row i carries the cluster's row i + 2, so every
// block knows row i + 1 while it waits on row i and prefetches that slice
// into L2 (PREFETCH = 1), keeping DRAM busy through the wait.  The first two
// rows (taken together, published across the one cluster barrier at the
// start) come from the counter too, so a cluster that only starts once
// others have finished (more clusters launched than fit at once) finds the
// rows gone and leaves.  A cluster's rows only grow, and all its blocks see
// the same sequence, so they leave the loop together; every block has then
// received all messages meant for it (it waited for them), and one cluster
// barrier at the very end keeps every block (and its outgoing st.async)
// alive until all are done.
// CLUSTER = N / 16384 (4, 8, 16: kbench allows the non-portable 16); a
// cluster holds CLUSTER * THREADS * 32 floats, and a longer row is
// UNSUPPORTED (the require line), not half written.
//
//! kernel  softmax_f32
//! arg     M = 4096
//! arg     N = 131072
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(min(M, 256 / CLUSTER) * CLUSTER) block=(THREADS)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-8
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003, 100003
//! require N <= CLUSTER * THREADS * 32   // 4 * VPT floats a thread in registers (VPT = 8)
//! tune    CLUSTER = 8, 4, 16
//! tune    THREADS = 512, 1024
//! tune    PREFETCH = 0, 1

#include <cooperative_groups.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 16
#endif
#ifndef THREADS
#define THREADS 512 /* two blocks an SM (64 registers a thread) */
#endif
#ifndef PREFETCH
#define PREFETCH 1 /* prefetch the next row's slice into L2 before waiting */
#endif
#define VPT 8 /* float4 per thread: 32 elements, 32 * THREADS per block */

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

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1024 / THREADS)
softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float2 scratch[32];                    /* the warps' pairs */
	__shared__ __align__(16) float4 slot[2][CLUSTER]; /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[2];
	__shared__ int first; /* rank 0: the cluster's first row (and the one after) */
	const float ninf = -CUDART_INF_F;
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int clusters = gridDim.x / CLUSTER;
	const int chunk = (N + CLUSTER * 4 - 1) / (CLUSTER * 4) * 4; /* a multiple of 4 */
	const int begin = rank * chunk, len = max(0, min(N - begin, chunk));
	const bool vec = N % 4 == 0;
	if (threadIdx.x == 0) {
		bar_init(smem(&full[0]), 1);
		bar_init(smem(&full[1]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			first = (int)atomicAdd(&rows_taken, 2u);
	}
	cluster.sync(); /* every block's barriers initialised before anyone sends */
	int row = *cluster.map_shared_rank(&first, 0), after = row + 1;
	for (unsigned it = 0; row < M; it++) {
		const unsigned b = it & 1, phase = (it >> 1) & 1;
		int further = 0; /* rank 0's thread 0: the row after `after` */
		if (rank == 0 && threadIdx.x == 0)
			further = (int)atomicAdd(&rows_taken, 1u);
		const float *in = x + (size_t)row * N + begin;
		float v[4 * VPT];
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * THREADS;
				float4 t = i < len / 4 ? __ldcs((const float4 *)in + i) : make_float4(ninf, ninf, ninf, ninf);
				v[4 * k] = t.x, v[4 * k + 1] = t.y, v[4 * k + 2] = t.z, v[4 * k + 3] = t.w;
			}
		} else {
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				int i = threadIdx.x + k * THREADS;
				v[k] = i < len ? __ldcs(in + i) : ninf;
			}
		}
		/* This thread's (m_t, s_t); v becomes exp(v - m_t). */
		float mt = ninf;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++)
			mt = fmaxf(mt, v[k]);
		float st = 0.0f;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++)
			st += (v[k] = mt == ninf ? 0.0f : __expf(v[k] - mt));
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
#if PREFETCH
		/* The next row's slice into L2, a 128-byte line a thread (a slice
		 * holds at most 32 * THREADS floats: THREADS lines). */
		if (after < M && (int)threadIdx.x * 32 < len)
			asm volatile("prefetch.global.L2 [%0];" ::"l"(x + (size_t)after * N + begin + 32 * threadIdx.x));
#endif
		bar_wait(smem(&full[b]), phase);
		float4 q = lane < CLUSTER ? slot[b][lane] : make_float4(ninf, 0.0f, 0.0f, 0.0f);
		float2 g = warp_merge(make_float2(q.x, q.y));
		int next_after = __float_as_int(__shfl_sync(0xffffffff, q.z, 0)); /* rank 0's */
		float scale = mt == ninf ? 0.0f : __expf(mt - g.x) / g.y;
		float *out = y + (size_t)row * N + begin;
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * THREADS;
				if (i < len / 4)
					__stcs((float4 *)out + i, make_float4(v[4 * k] * scale, v[4 * k + 1] * scale,
									      v[4 * k + 2] * scale, v[4 * k + 3] * scale));
			}
		} else {
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				int i = threadIdx.x + k * THREADS;
				if (i < len)
					__stcs(out + i, v[k] * scale);
			}
		}
		row = after;
		after = next_after;
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && threadIdx.x == 0)
		leave(clusters);
}
