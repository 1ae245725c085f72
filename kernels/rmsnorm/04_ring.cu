// RMSNorm forward over long rows of f32 at any width, on the ring of
// softmax/softmax_bf16_ring.cu (its code written out below): a producer warp copies each
// block's slice of a row in 16 KiB chunks (cp.async.bulk) into NSLOT slots
// of shared memory, row after row, into whichever slots the consumers have
// released, so DRAM never waits on a row's sum, exchange or stores.
// 03_bulk.cu's one buffer a row, three deep, keeps one slice in flight an SM
// and pads an odd width's last one (77.8% of copy at 8192 x 50257 on an
// H200, 2026-11-28).  Per row, the consumers
//   1. add the squares of their part of each chunk (and the head and tail,
//      up to 3 elements each, which ride beside the last chunk);
//   2. add the block's sums and the cluster's (exchange(): st.async into
//      every peer, 07_cluster_async.cu's protocol);
//   3. read each chunk again and store x * rsqrt(mean + eps) * w (16-byte
//      streaming stores), releasing the slot.
// The weights are read through L1 (__ldg, one element at a time: they are
// aligned to their own start, not the row's, and the loads are cheap beside
// the row's bytes); NSLOT = 8 leaves more of L1 to them than 13 does.
// CLUSTER: the smallest with a slice of at most 8 chunks (2 at 50257 and
// 65536), or twice that at NSLOT = 8.
// PF = 1 (issue 31: 78% of copy at 8192 x 50257 on an H200, long_scoreboard
// first among the stalls): each chunk's w loaded during the chunk before,
// the row's first chunk's before its sum of squares, so the loads are in
// flight through the sum and the exchange.
//
//! kernel  rmsnorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! out     y : f32[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     rmsnorm(x, w, eps=1e-6) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   4*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! tune    CLUSTER = 2, 1, 4, 8, 16
//! tune    THREADS = 512, 256, 992   // plus the producer warp: at most 1024
//! tune    U = 2, 1
//! tune    NSLOT = 13, 8
//! tune    PF = 0, 1

#define F32 1
/* ===== the ring (written out in each ring kernel, as every kernels/ file is
 * whole: a session records one file a variant, so a variant must compile
 * from its own text; softmax/softmax_bf16_ring.cu, softmax/09_ring.cu and
 * rmsnorm/04_ring.cu hold the same code, changed in all three at once) ===== */
/*
 * The ring of bulk-copied chunks that the row kernels reading a row twice
 * (a statistic, then the output) share; what differs (the statistic and the
 * output) is each kernel's own loop.
 *
 * A cluster of CLUSTER blocks takes a row; each block's slice of it (the
 * row's whole uint4 from its first 16-byte boundary, split among the ranks)
 * is cut into chunks of THREADS * U uint4 (16 KiB at 512 x 2) that a
 * producer warp (warp WARPS, after the THREADS consumer threads) copies with
 * cp.async.bulk into a ring of NSLOT slots, chunk after chunk and row after
 * row, into whichever slots the consumers have released (mbarriers `full`,
 * one copy each, and `empty`, one arrival a consumer warp).  The head (up to
 * EPV - 1 elements before the first boundary, rank 0) and the tail (after the
 * last whole uint4, the last rank) are read by the producer's lanes 0..15
 * and left beside the row's last chunk (`edge`).  Rows come from a counter
 * in global memory: rank 0 takes the row after next each row and sends it
 * with its statistic (exchange()); thread 0 hands it to the producer two
 * rows ahead (rowid, rowbar).  A slice must fit the ring (the consumers hold
 * a row's chunks until its output is written): the kernels' `require`.
 *
 * The element: bf16, or f32 where F32 is defined nonzero.  The ring holds
 * bytes; a consumer's U uint4 of a chunk are 4U 32-bit words of EPW
 * elements, EPV to a uint4.
 */
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

#if F32
typedef float elem;
typedef unsigned bits; /* an element's bits */
#define EPW 1
#define PAD 0xff800000u /* -inf */
#else
typedef __nv_bfloat16 elem;
typedef unsigned short bits;
#define EPW 2
#define PAD 0xff80ff80u /* two -inf */
#endif
#define EPV (4 * EPW) /* elements a uint4 */

/* The EPW elements of word w as f32. */
__device__ void unpack(unsigned w, float *f)
{
#if F32
	f[0] = __uint_as_float(w);
#else
	float2 p = __bfloat1622float2(*(const __nv_bfloat162 *)&w);
	f[0] = p.x, f[1] = p.y;
#endif
}

/* EPW f32 as one word of elements (rounded to nearest). */
__device__ unsigned pack(const float *f)
{
#if F32
	return __float_as_uint(f[0]);
#else
	__nv_bfloat162 h = __floats2bfloat162_rn(f[0], f[1]);
	return *(unsigned *)&h;
#endif
}

/* The largest element of a thread's 4U words (bf16: __hmax2 of the pairs). */
__device__ float words_max(const unsigned *u)
{
#if F32
	float m = __uint_as_float(u[0]);
#pragma unroll
	for (int k = 1; k < 4 * U; k++)
		m = fmaxf(m, __uint_as_float(u[k]));
	return m;
#else
	__nv_bfloat162 m2 = *(const __nv_bfloat162 *)&u[0];
#pragma unroll
	for (int k = 1; k < 4 * U; k++)
		m2 = __hmax2(m2, *(const __nv_bfloat162 *)&u[k]);
	return fmaxf(__low2float(m2), __high2float(m2));
#endif
}

__device__ float to_f32(elem v)
{
	return (float)v;
}

/* 2^x, the instruction __expf ends in. */
__device__ float ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
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

/* Where a row of N at p splits: head elements to its first 16-byte boundary,
 * nv whole uint4 and tail elements after them; this rank's share of the
 * uint4, ng from g0, in nc chunks (at least one, which carries the edges). */
struct Split {
	int head, nv, tail, g0, ng, nc;
};

__device__ Split split(const elem *p, int N, int rank)
{
	Split s;
	s.head = min(N, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / (int)sizeof(elem));
	s.nv = (N - s.head) / EPV;
	s.tail = N - s.head - EPV * s.nv;
	int per = (s.nv + CLUSTER - 1) / CLUSTER;
	s.g0 = rank * per;
	s.ng = max(0, min(s.nv - s.g0, per));
	s.nc = max(1, (s.ng + CH - 1) / CH);
	return s;
}

/* A block's shared state beside the ring (which is the dynamic shared memory). */
struct Ring {
	float edge[NSLOT][16];              /* a row's head (0..7) and tail (8..15), beside its last chunk */
	float2 scratch[32];                 /* the consumer warps' pairs */
	__align__(16) float4 slot[2][CLUSTER]; /* messages by sender rank */
	__align__(8) unsigned long long full[NSLOT], empty[NSLOT], msg[2], rowbar[2];
	int rowid[2]; /* the rows of iterations it + 2, for the producer */
	int first;    /* rank 0: the cluster's first row (and the one after) */
};

/* Thread 0 sets up the barriers and rank 0's takes the cluster's first two
 * rows; returns the first, once every block of the cluster is ready. */
__device__ int ring_start(Ring &r, int rank)
{
	if (threadIdx.x == 0) {
		for (int i = 0; i < NSLOT; i++) {
			bar_init(smem(&r.full[i]), 1);
			bar_init(smem(&r.empty[i]), WARPS);
		}
		bar_init(smem(&r.msg[0]), 1);
		bar_init(smem(&r.msg[1]), 1);
		bar_init(smem(&r.rowbar[0]), 1);
		bar_init(smem(&r.rowbar[1]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			r.first = (int)atomicAdd(&rows_taken, 2u);
	}
	cg::cluster_group cluster = cg::this_cluster();
	cluster.sync(); /* every block's barriers initialised before anyone sends */
	return *cluster.map_shared_rank(&r.first, 0);
}

/* The producer warp: row after row (the first two from `first`, then as
 * thread 0 hands them over in rowid), each chunk of this rank's slice into
 * the next slot once the consumers have released it; lanes 0..15 read the
 * head (rank 0) and the tail (the last rank), which lane 0 leaves beside the
 * last chunk. */
__device__ void produce(const elem *x, int M, int N, int rank, int first, unsigned char *ring, Ring &r)
{
	const int lane = threadIdx.x % 32;
	unsigned q = 0; /* chunks issued */
	for (int i = 0;; i++) {
		int row = first + i;
		if (i >= 2) {
			bar_wait(smem(&r.rowbar[i & 1]), ((i >> 1) + 1) & 1);
			row = ((volatile int *)r.rowid)[i & 1];
		}
		if (row >= M)
			break;
		const elem *in = x + (size_t)row * N;
		const Split s = split(in, N, rank);
		float e = -CUDART_INF_F; /* in flight while the chunks are issued */
		if (lane < 8 && rank == 0 && lane < s.head)
			e = to_f32(__ldcs(in + lane));
		if (lane >= 8 && lane < 16 && rank == CLUSTER - 1 && lane - 8 < s.tail)
			e = to_f32(__ldcs(in + s.head + EPV * s.nv + lane - 8));
		for (int c = 0; c < s.nc; c++, q++) {
			const unsigned slot = q % NSLOT;
			bar_wait(smem(&r.empty[slot]), ((q / NSLOT) & 1) ^ 1); /* the first round: free */
			if (c == s.nc - 1) { /* lane 0 stores them, so its arrive releases them */
#pragma unroll
				for (int j = 0; j < 16; j++) {
					const float ej = __shfl_sync(0xffffffff, e, j);
					if (lane == 0)
						r.edge[slot][j] = ej;
				}
			}
			if (lane == 0) {
				const int n = min(CH, s.ng - c * CH);
				bulk_load(smem(ring + slot * (CH * 16)), in + s.head + EPV * (s.g0 + c * CH),
					  16 * max(n, 0), smem(&r.full[slot]));
			}
		}
	}
}

/* Chunk number q (its c-th of the row) once it has landed: this thread's U
 * uint4 of it as 4U words, PAD where past the slice's ng uint4. */
__device__ void chunk_words(Ring &r, const unsigned char *ring, unsigned q, int c, int ng, unsigned *u)
{
	const unsigned sl = q % NSLOT;
	bar_wait(smem(&r.full[sl]), (q / NSLOT) & 1);
	const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
#pragma unroll
	for (int k = 0; k < U; k++) {
		const int i = threadIdx.x + k * THREADS;
		uint4 v = c * CH + i < ng ? buf[i] : make_uint4(PAD, PAD, PAD, PAD);
		u[4 * k] = v.x, u[4 * k + 1] = v.y, u[4 * k + 2] = v.z, u[4 * k + 3] = v.w;
	}
}

/* The output words w of uint4 gi of a slice starting at o: one 16-byte
 * streaming store, or element by element where the output row is aligned
 * unlike the input (ovec false). */
__device__ void store_words(elem *o, int gi, const unsigned *w, bool ovec)
{
	if (ovec) {
		__stcs((uint4 *)o + gi, make_uint4(w[0], w[1], w[2], w[3]));
		return;
	}
#pragma unroll
	for (int j = 0; j < EPV; j++)
		((bits *)o)[EPV * gi + j] = (bits)(w[j / EPW] >> (16 * (j % EPW)));
}

/* The consumers are done with chunk number q: one arrival a warp. */
__device__ void release(Ring &r, unsigned q)
{
	__syncwarp();
	if (threadIdx.x % 32 == 0)
		bar_arrive(smem(&r.empty[q % NSLOT]));
}

template <class F>
__device__ float2 warp_reduce(float2 p, F f)
{
	for (int o = 16; o > 0; o /= 2)
		p = f(p, make_float2(__shfl_xor_sync(0xffffffff, p.x, o), __shfl_xor_sync(0xffffffff, p.y, o)));
	return p;
}

/* Row it's statistic: the consumers' pairs p reduced by f in the block
 * (named barrier 1) and across the cluster (each rank's sent into every
 * peer's receive slot with st.async, one mbarrier a parity: 07_cluster_async.cu's
 * protocol); none is f's identity.  Rank 0's thread 0 sends `further` (the
 * row after next) with its pair; every thread gets it in *next, and thread 0
 * hands it to the producer. */
template <class F>
__device__ float2 exchange(Ring &r, float2 p, float2 none, F f, int further, int rank, unsigned it, int *next)
{
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const unsigned b = it & 1, phase = (it >> 1) & 1;
	p = warp_reduce(p, f);
	if (lane == 0)
		r.scratch[warp] = p;
	consumers_sync();
	if (warp == 0) {
		p = warp_reduce(lane < WARPS ? r.scratch[lane] : none, f);
		float4 mv = make_float4(p.x, p.y, __int_as_float(__shfl_sync(0xffffffff, further, 0)), 0.0f);
		if (lane == rank) {
			r.slot[b][rank] = mv;
			bar_arrive_expect(smem(&r.msg[b]), (CLUSTER - 1) * 16);
		} else if (lane < CLUSTER) { /* to block `lane` */
			send(mapa(smem(&r.slot[b][rank]), lane), mv, mapa(smem(&r.msg[b]), lane));
		}
	}
	bar_wait(smem(&r.msg[b]), phase);
	float4 qv = lane < CLUSTER ? r.slot[b][lane] : make_float4(none.x, none.y, 0.0f, 0.0f);
	float2 g = warp_reduce(make_float2(qv.x, qv.y), f);
	*next = __float_as_int(__shfl_sync(0xffffffff, qv.z, 0)); /* rank 0's */
	if (threadIdx.x == 0) { /* the producer's row of iteration it + 2 */
		r.rowid[b] = *next;
		bar_arrive(smem(&r.rowbar[b]));
	}
	return g;
}

/* A kernel's rows: the producer warp feeds the ring; the consumers take the
 * cluster's rows one after another and call body(row, s, q, it, further) on
 * each (its split s, its first chunk number q, the iteration it, and for
 * rank 0's thread 0 the row after next, `further`), which returns what
 * exchange() gave it as the next row after.  At the end the cluster leaves
 * together (no block while a peer's st.async may target it), and the last
 * cluster to leave resets the counters for the next launch. */
template <class Body>
__device__ __forceinline__ void ring_rows(const elem *x, int M, int N, unsigned char *ring, Ring &r, Body body)
{
	const int rank = (int)cg::this_cluster().block_rank();
	int row = ring_start(r, rank), after = row + 1;
	if (threadIdx.x / 32 == WARPS) {
		produce(x, M, N, rank, row, ring, r);
	} else {
		unsigned q = 0; /* chunks consumed */
		for (unsigned it = 0; row < M; it++) {
			int further = 0; /* rank 0's thread 0: the row after `after` */
			if (rank == 0 && threadIdx.x == 0)
				further = (int)atomicAdd(&rows_taken, 1u);
			const Split s = split(x + (size_t)row * N, N, rank);
			const int next = body(row, s, q, it, further);
			q += s.nc;
			row = after;
			after = next;
		}
	}
	cg::this_cluster().sync();
	if (rank != 0 || threadIdx.x != 0)
		return;
	__threadfence();
	if (atomicAdd(&clusters_done, 1u) == gridDim.x / CLUSTER - 1) {
		rows_taken = 0;
		clusters_done = 0;
		__threadfence();
	}
}
/* ===== end of the ring ===== */

#ifndef PF
#define PF 0 /* 1: w loaded a chunk ahead, the row's first chunk's before its sum of squares */
#endif

__device__ float2 add(float2 a, float2 b)
{
	return make_float2(a.x + b.x, a.y + b.y);
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
rmsnorm_f32(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y, int M, int N)
{
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH uint4 */
	__shared__ Ring r;
	const int rank = (int)cg::this_cluster().block_rank(), t = threadIdx.x;
	ring_rows(x, M, N, ring, r, [&](int row, const Split &s, unsigned q, unsigned it, int further) {
		const bool has_h = rank == 0 && t < s.head, has_t = rank == CLUSTER - 1 && t < s.tail;
#if PF
		const float *wo = w + s.head + 4 * s.g0;
		/* w of this thread's vectors of chunk c (past ng: the slice's last
		 * vector again; none where the slice is empty) */
		auto wload = [&](int c, int k) {
			const float *wi = wo + 4 * min(c * CH + t + k * THREADS, s.ng - 1);
			return s.ng > 0 ? make_float4(__ldg(wi), __ldg(wi + 1), __ldg(wi + 2), __ldg(wi + 3))
					: make_float4(0.0f, 0.0f, 0.0f, 0.0f);
		};
		float4 pw[U]; /* chunk 0's, in flight through the sum and the exchange */
#pragma unroll
		for (int k = 0; k < U; k++)
			pw[k] = wload(0, k);
#endif
		/* 1. this thread's sum of squares */
		float q2 = 0.0f, hv = 0.0f, tv = 0.0f;
		for (int c = 0; c < s.nc; c++) {
			unsigned u[4 * U];
			chunk_words(r, ring, q + c, c, s.ng, u);
#pragma unroll
			for (int k = 0; k < 4 * U; k++) {
				const float v = __uint_as_float(u[k]);
				if (c * CH + t + k / 4 * THREADS < s.ng)
					q2 = fmaf(v, v, q2);
			}
			if (c == s.nc - 1 && t < 8) {
				hv = has_h ? r.edge[(q + c) % NSLOT][t] : 0.0f;
				tv = has_t ? r.edge[(q + c) % NSLOT][8 + t] : 0.0f;
				q2 = fmaf(hv, hv, fmaf(tv, tv, q2));
			}
		}
		/* 2. the block's sum, then the cluster's */
		int next;
		const float2 g = exchange(r, make_float2(q2, 0.0f), make_float2(0.0f, 0.0f), add, further, rank, it, &next);
		const float rs = rsqrtf(g.x / N + 1e-6f);
		/* 3. x * rs * w */
		const float *in = x + (size_t)row * N;
		float *out = y + (size_t)row * N;
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		float *o = out + s.head + 4 * s.g0;
#if !PF
		const float *wo = w + s.head + 4 * s.g0;
#endif
		for (int c = 0; c < s.nc; c++) {
			const float4 *buf = (const float4 *)(ring + (q + c) % NSLOT * (CH * 16));
#if PF
			float4 cw[U]; /* this chunk's; the next chunk's load in their place */
#pragma unroll
			for (int k = 0; k < U; k++) {
				cw[k] = pw[k];
				if (c + 1 < s.nc)
					pw[k] = wload(c + 1, k);
			}
#pragma unroll
			for (int k = 0; k < U; k++) {
				const int i = t + k * THREADS, gi = c * CH + i;
				if (gi < s.ng) {
					const float4 v = buf[i];
					unsigned ow[4] = {__float_as_uint(v.x * rs * cw[k].x), __float_as_uint(v.y * rs * cw[k].y),
							  __float_as_uint(v.z * rs * cw[k].z), __float_as_uint(v.w * rs * cw[k].w)};
					store_words(o, gi, ow, ovec);
				}
			}
#else
#pragma unroll
			for (int k = 0; k < U; k++) {
				const int i = t + k * THREADS, gi = c * CH + i;
				if (gi < s.ng) {
					const float4 v = buf[i];
					const float *wi = wo + 4 * gi;
					unsigned ow[4] = {__float_as_uint(v.x * rs * __ldg(wi)), __float_as_uint(v.y * rs * __ldg(wi + 1)),
							  __float_as_uint(v.z * rs * __ldg(wi + 2)), __float_as_uint(v.w * rs * __ldg(wi + 3))};
					store_words(o, gi, ow, ovec);
				}
			}
#endif
			release(r, q + c); /* this warp has read the slot */
		}
		if (has_h)
			out[t] = hv * rs * w[t];
		if (has_t)
			out[s.head + 4 * s.nv + t] = tv * rs * w[s.head + 4 * s.nv + t];
		return next;
	});
}
