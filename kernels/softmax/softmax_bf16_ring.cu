// Softmax over long rows of any width in bf16 (f32 arithmetic): each block's
// slice of a row comes in by bulk copies (cp.async.bulk) into a ring of
// NSLOT chunks of shared memory, fed by a producer warp that runs ahead of
// the rows, so DRAM never waits on a row's reduction, exchange or stores.
//
// Why a ring: softmax_bf16_bulk.cu gives each row a buffer the size of its
// longest slice, three deep, and the next row's copy is issued only at the
// top of this row; at odd widths a row fills 77% of that buffer (its
// threads' VPT uint4), and the bytes in flight an SM are one slice, so the
// row costs what the next power of two does (63% of copy at 8192 x 50257,
// 58% at 4096 x 200003 on an H200, 2026-11-28).  Here a slice is cut into
// chunks of THREADS * U uint4 (16 KiB at 512 x 2), only the last one part
// full, and the producer copies chunk after chunk, of this row and then the
// next, into whichever slots the consumers have released: while the
// consumers hold one row (at most 8 chunks at the gallery's cluster sizes),
// the other 5 slots (80 KiB) are loading the next.  The chunk, not the row,
// is the unit of padding: a thread skips what is past the slice.
//
// One block an SM (NSLOT * 16 KiB = 208 KiB of shared memory), THREADS
// consumer threads plus one producer warp.  Per row, the consumers
//   1. wait for each chunk (its mbarrier, `full`), fold it into a running
//      (max, sum) a thread: __hmax2 of the packed pairs, one rescale when
//      the max grows, each exp one FFMA into ex2;
//   2. merge the pairs in the block (named barrier 1: the producer warp is
//      not in it) and across the cluster (07_cluster_async.cu's st.async
//      into the peers' receive slots, one mbarrier a parity);
//   3. read each chunk again for the output (16-byte streaming stores) and
//      release its slot (mbarrier `empty`, one arrival a consumer warp).
// Rows are taken from a counter in global memory (rank 0 takes the row after
// next each row and sends it with its pair, as softmax_bf16_bulk.cu does), so
// clusters that do not fit on the GPU at once cost nothing; warp 0 hands each
// row number to the producer (a slot and an mbarrier a parity) two rows
// ahead, before the consumers release the slots it needs.
// Any width: a row of N bf16 starts 2 * N * row bytes into the buffer, so
// its first 16-byte boundary is `head` (0..7) elements in.  The whole uint4
// from there are split among the ranks; the head (rank 0) and the tail of up
// to 7 elements (the last rank) are read by the producer warp's lanes when it
// starts the row and left beside the row's last chunk (`edge`).  Output rows
// aligned unlike the input (buffers at different offsets) are stored element
// by element.
// CLUSTER: the smallest with a slice of at most 8 chunks (1 at 50257 and
// 65536, 2 at 131072, 4 at 200003 and 262144); `require` says what fits.
//
//! kernel  softmax_bf16
//! arg     M = 8192
//! arg     N = 50257
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-9
//! flops   5*M*N
//! sweep   N = 50257, 1, 7, 5003, 65536, 16384
//! require (N / 8 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! tune    CLUSTER = 1, 2, 4, 8, 16
//! tune    THREADS = 512, 256, 992   // plus the producer warp: at most 1024
//! tune    U = 2, 1
//! tune    NSLOT = 13, 12, 8

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 1
#endif
#ifndef THREADS
#define THREADS 512 /* consumer threads; one producer warp more */
#endif
#ifndef U
#define U 2 /* uint4 a consumer thread a chunk: a chunk is THREADS * U uint4 */
#endif
#ifndef NSLOT
#define NSLOT 13 /* chunks in the ring: 13 * 16 KiB = 208 KiB */
#endif
#define CH (THREADS * U)     /* uint4 a chunk */
#define WARPS (THREADS / 32) /* consumer warps; the producer is warp WARPS */

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

/* Arrive once on the local barrier (releasing this thread's writes). */
__device__ void bar_arrive(unsigned bar)
{
	asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
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

/* The consumer threads' barrier (the producer warp is not in it). */
__device__ void consumers_sync()
{
	asm volatile("bar.sync 1, %0;" ::"n"(THREADS) : "memory");
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

/* Where a row of N at p splits: head elements to its first 16-byte boundary,
 * n8 whole uint4 and tail elements after them; this rank's share of the
 * uint4, ng from g0, in nc chunks (at least one, which carries the edges). */
struct Split {
	int head, n8, tail, g0, ng, nc;
};

__device__ Split split(const __nv_bfloat16 *p, int N, int rank)
{
	Split s;
	s.head = min(N, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
	s.n8 = (N - s.head) / 8;
	s.tail = N - s.head - 8 * s.n8;
	int per = (s.n8 + CLUSTER - 1) / CLUSTER;
	s.g0 = rank * per;
	s.ng = max(0, min(s.n8 - s.g0, per));
	s.nc = max(1, (s.ng + CH - 1) / CH);
	return s;
}

/* The producer warp: row after row (the first two from `first`, then as
 * warp 0 hands them over in rowid), each chunk of this rank's slice into the
 * next slot once the consumers have released it; lanes 0..15 read the head
 * (rank 0) and the tail (the last rank), which lane 0 leaves beside the last. */
__device__ void produce(const __nv_bfloat16 *x, int M, int N, int rank, int first, unsigned char *ring,
			unsigned long long *full, unsigned long long *empty, unsigned long long *rowbar,
			volatile int *rowid, float (*edge)[16])
{
	const int lane = threadIdx.x % 32;
	unsigned q = 0; /* chunks issued */
	for (int i = 0;; i++) {
		int r = first + i;
		if (i >= 2) {
			bar_wait(smem(&rowbar[i & 1]), ((i >> 1) + 1) & 1);
			r = rowid[i & 1];
		}
		if (r >= M)
			break;
		const __nv_bfloat16 *in = x + (size_t)r * N;
		const Split s = split(in, N, rank);
		float e = -CUDART_INF_F; /* in flight while the chunks are issued */
		if (lane < 8 && rank == 0 && lane < s.head)
			e = __bfloat162float(__ldcs(in + lane));
		if (lane >= 8 && lane < 16 && rank == CLUSTER - 1 && lane - 8 < s.tail)
			e = __bfloat162float(__ldcs(in + s.head + 8 * s.n8 + lane - 8));
		for (int c = 0; c < s.nc; c++, q++) {
			const unsigned slot = q % NSLOT;
			bar_wait(smem(&empty[slot]), ((q / NSLOT) & 1) ^ 1); /* the first round: free */
			if (c == s.nc - 1) { /* lane 0 stores them, so its arrive releases them */
#pragma unroll
				for (int j = 0; j < 16; j++) {
					const float ej = __shfl_sync(0xffffffff, e, j);
					if (lane == 0)
						edge[slot][j] = ej;
				}
			}
			if (lane == 0) {
				const int n = min(CH, s.ng - c * CH);
				bulk_load(smem(ring + slot * (CH * 16)), in + s.head + 8 * (s.g0 + c * CH), 16 * max(n, 0),
					  smem(&full[slot]));
			}
		}
	}
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH uint4 */
	__shared__ float edge[NSLOT][16];                      /* a row's head and tail, beside its last chunk */
	__shared__ float2 scratch[32];                         /* the consumer warps' pairs */
	__shared__ __align__(16) float4 slot[2][CLUSTER];      /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[NSLOT], empty[NSLOT], msg[2], rowbar[2];
	__shared__ int rowid[2]; /* the rows of iterations it + 2, for the producer */
	__shared__ int first;    /* rank 0: the cluster's first row (and the one after) */
	const float ninf = -CUDART_INF_F;
	const unsigned pad = 0xff80ff80u; /* two bf16 -inf */
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int t = threadIdx.x, clusters = gridDim.x / CLUSTER;
	if (t == 0) {
		for (int i = 0; i < NSLOT; i++) {
			bar_init(smem(&full[i]), 1);
			bar_init(smem(&empty[i]), WARPS);
		}
		bar_init(smem(&msg[0]), 1);
		bar_init(smem(&msg[1]), 1);
		bar_init(smem(&rowbar[0]), 1);
		bar_init(smem(&rowbar[1]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			first = (int)atomicAdd(&rows_taken, 2u);
	}
	cluster.sync(); /* every block's barriers initialised before anyone sends */
	int row = *cluster.map_shared_rank(&first, 0), after = row + 1;
	if (warp == WARPS) {
		produce(x, M, N, rank, row, ring, full, empty, rowbar, rowid, edge);
	} else {
		unsigned q = 0; /* chunks consumed */
		for (unsigned it = 0; row < M; it++) {
			const unsigned b = it & 1, phase = (it >> 1) & 1;
			int further = 0; /* rank 0's thread 0: the row after `after` */
			if (rank == 0 && t == 0)
				further = (int)atomicAdd(&rows_taken, 1u);
			const __nv_bfloat16 *in = x + (size_t)row * N;
			const Split s = split(in, N, rank);
			/* 1. the running (max, sum) of this thread's part of each chunk */
			float m = ninf, sum = 0.0f, hv = ninf, tv = ninf;
			for (int c = 0; c < s.nc; c++) {
				const unsigned sl = (q + c) % NSLOT;
				bar_wait(smem(&full[sl]), ((q + c) / NSLOT) & 1);
				const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
				unsigned u[4 * U];
#pragma unroll
				for (int k = 0; k < U; k++) {
					const int i = t + k * THREADS;
					uint4 v = c * CH + i < s.ng ? buf[i] : make_uint4(pad, pad, pad, pad);
					u[4 * k] = v.x, u[4 * k + 1] = v.y, u[4 * k + 2] = v.z, u[4 * k + 3] = v.w;
				}
				__nv_bfloat162 m2 = *(const __nv_bfloat162 *)&u[0];
#pragma unroll
				for (int k = 1; k < 4 * U; k++)
					m2 = __hmax2(m2, *(const __nv_bfloat162 *)&u[k]);
				float cm = fmaxf(__low2float(m2), __high2float(m2));
				if (c == s.nc - 1 && t < 8) {
					hv = edge[sl][t];
					tv = edge[sl][8 + t];
					cm = fmaxf(cm, fmaxf(hv, tv));
				}
				if (cm > m) { /* exp(v - m) = exp(v - cm) * exp(cm - m) */
					sum *= ex2((m - cm) * CUDART_L2E_F);
					m = cm;
				}
				if (m == ninf)
					continue;
				const float ml = m * CUDART_L2E_F; /* exp(v - m) = 2^(v log2 e - ml) */
#pragma unroll
				for (int k = 0; k < 4 * U; k++) {
					if (c * CH + t + k / 4 * THREADS >= s.ng)
						continue;
					float2 f = bf2(u[k]);
					sum += ex2(fmaf(f.x, CUDART_L2E_F, -ml)) + ex2(fmaf(f.y, CUDART_L2E_F, -ml));
				}
				if (c == s.nc - 1)
					sum += ex2(fmaf(hv, CUDART_L2E_F, -ml)) + ex2(fmaf(tv, CUDART_L2E_F, -ml));
			}
			/* 2. the block's pair, then the cluster's */
			float2 p = warp_merge(make_float2(m, sum));
			if (lane == 0)
				scratch[warp] = p;
			consumers_sync();
			if (warp == 0) {
				p = warp_merge(lane < WARPS ? scratch[lane] : make_float2(ninf, 0.0f));
				float4 mv = make_float4(p.x, p.y, __int_as_float(__shfl_sync(0xffffffff, further, 0)), 0.0f);
				if (lane == rank) {
					slot[b][rank] = mv;
					bar_arrive_expect(smem(&msg[b]), (CLUSTER - 1) * 16);
				} else if (lane < CLUSTER) { /* to block `lane` */
					send(mapa(smem(&slot[b][rank]), lane), mv, mapa(smem(&msg[b]), lane));
				}
			}
			bar_wait(smem(&msg[b]), phase);
			float4 qv = lane < CLUSTER ? slot[b][lane] : make_float4(ninf, 0.0f, 0.0f, 0.0f);
			float2 g = warp_merge(make_float2(qv.x, qv.y));
			const int next_after = __float_as_int(__shfl_sync(0xffffffff, qv.z, 0)); /* rank 0's */
			if (t == 0) { /* the producer's row of iteration it + 2 */
				rowid[b] = next_after;
				bar_arrive(smem(&rowbar[b]));
			}
			/* 3. exp(v - max) / sum = 2^(v log2 e - (max log2 e + log2 sum)) */
			const float gl = fmaf(g.x, CUDART_L2E_F, __log2f(g.y));
#define OUT1(v) ex2(fmaf((v), CUDART_L2E_F, -gl))
			__nv_bfloat16 *out = y + (size_t)row * N;
			const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
			__nv_bfloat16 *o = out + s.head + 8 * s.g0;
			for (int c = 0; c < s.nc; c++) {
				const unsigned sl = (q + c) % NSLOT;
				const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
#pragma unroll
				for (int k = 0; k < U; k++) {
					const int i = t + k * THREADS, gi = c * CH + i;
					if (gi < s.ng) {
						uint4 v = buf[i];
						unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
						for (int j = 0; j < 4; j++) {
							float2 f = bf2(w[j]);
							w[j] = pack2(OUT1(f.x), OUT1(f.y));
						}
						if (ovec) {
							__stcs((uint4 *)o + gi, make_uint4(w[0], w[1], w[2], w[3]));
						} else {
#pragma unroll
							for (int j = 0; j < 8; j++)
								((unsigned short *)o)[8 * gi + j] = (unsigned short)(w[j / 2] >> (16 * (j % 2)));
						}
					}
				}
				__syncwarp();
				if (lane == 0) /* this warp has read the slot */
					bar_arrive(smem(&empty[sl]));
			}
			if (t < s.head && rank == 0)
				out[t] = __float2bfloat16_rn(OUT1(hv));
			if (t < s.tail && rank == CLUSTER - 1)
				out[s.head + 8 * s.n8 + t] = __float2bfloat16_rn(OUT1(tv));
#undef OUT1
			q += s.nc;
			row = after;
			after = next_after;
		}
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
