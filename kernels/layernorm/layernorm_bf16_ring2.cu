// LayerNorm forward over long rows of bf16 at any width (f32 arithmetic), on
// softmax's ring: softmax/softmax_bf16_ring.cu with only LayerNorm's
// arithmetic changed; 07_ring.cu is this file's code with F32 = 1, and its
// header says why and what differs from the LayerNorm ring of issue 31
// (layernorm_bf16_ring.cu, 04_ring.cu for bf16: 65.5-83.7% of copy where
// softmax's ring reaches 83.0-93.4% at the same rows on an H200,
// bench/gallery_h200.txt, 2026-11-28T11:49Z).  The same here: each block's
// shift K from its first chunk, sums of x - K and its square, the rank's
// (mean, M2) sent and merged about one shift; softmax's output loop written
// once a head (0..7: w and b as aligned uint4 j and j + 1, a byte permute a
// word at an odd head), chunk 0's weights in flight through the exchange,
// WPF = 1 a chunk ahead.  (HF2, w and b by packed bf16x2 fma, is gone: it
// failed the tolerance on the H200 at 8192 x 50257 and up, 13:38Z.)
// WS = 1 / 2: the rank's window of w and b in shared memory after the ring,
// loaded once a launch (as bf16 / as f32, so that the output loop reads
// 2-3 float4 of each and unpacks nothing): 07_ring.cu's header says why.
// The window is 32 / 64 bytes a uint4 of the slice, so it needs the slice
// small: WS = 1 CLUSTER = 2 NSLOT = 7 at 50257 (93 registers, 210 KiB),
// WS = 2 CLUSTER = 4 NSLOT = 7 (72 registers, 210 KiB; the f32 window, no
// byte permutes nor unpacking), CLUSTER = 8 NSLOT = 5 at 131072, 16 at
// 200003 and 262144 (non-portable).  kbench compile --arch sm_90a, CPU VM,
// 2026-11-28; W = 1's default 96 registers, no spills anywhere.
// W = 0 reads no w or b (CORRECT only against w =
// ones, b = zeros: scripts/gpu-lnring4.sh runs a copy whose spec says so).
// CLUSTER: softmax_bf16_ring.cu's: 1 at 50257 and 65536, 2 at 131072, 4 at
// 200003 and 262144.
//
//! kernel  layernorm_bf16
//! arg     M = 8192
//! arg     N = 50257
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! in      b : bf16[N] = randn(seed=3)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(min(NSLOT * THREADS * U * 16 + WS * 32 * ((N / 8 + CLUSTER - 1) / CLUSTER + CLUSTER), 225 * 1024))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require (N / 8 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! require NSLOT * THREADS * U * 16 + WS * 32 * ((N / 8 + CLUSTER - 1) / CLUSTER + CLUSTER) <= 225 * 1024   // the window fits
//! tune    CLUSTER = 1, 2, 4, 8, 16
//! tune    THREADS = 512, 480, 256, 992   // plus the producer warp: at most 1024 (480: 16 warps, 128 registers)
//! tune    U = 2, 4, 1
//! tune    NSLOT = 13, 14, 7, 12, 8
//! tune    W = 1, 0
//! tune    WPF = 0, 1
//! tune    WS = 0, 1, 2
/* ===== the ring: softmax/softmax_bf16_ring.cu's, byte for byte but for
 * exchange()'s two maps (written out in each ring kernel, as every kernels/
 * file is whole: a session records one file a variant, so a variant must
 * compile from its own text; layernorm/07_ring.cu and
 * layernorm_bf16_ring2.cu hold the same code) ===== */
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
 * hands it to the producer.  (The one change from softmax's ring: warp 0
 * sends out(block's pair), and every lane of every warp adds in(rank lane's
 * message, lane) by f, lanes past CLUSTER included (in gives them none):
 * softmax's out and in keep the pair, LayerNorm's turn a rank's sums about
 * its own shift into its (mean, M2) and back into sums about one shift.) */
template <class F, class O, class I>
__device__ float2 exchange(Ring &r, float2 p, float2 none, F f, O out, I in, int further, int rank, unsigned it,
			   int *next)
{
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const unsigned b = it & 1, phase = (it >> 1) & 1;
	p = warp_reduce(p, f);
	if (lane == 0)
		r.scratch[warp] = p;
	consumers_sync();
	if (warp == 0) {
		p = out(warp_reduce(lane < WARPS ? r.scratch[lane] : none, f));
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
	float2 g = warp_reduce(in(make_float2(qv.x, qv.y), lane), f);
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

#ifndef W
#define W 1 /* 0: no w or b read (w = 1, b = 0 in registers): what the weights cost */
#endif
#ifndef WPF
#define WPF 0 /* 1: a chunk's w and b loaded during the chunk before (0: at its top) */
#endif
#ifndef WS
#define WS 0 /* 1: the rank's window of w and b in shared memory, loaded once; 2 (bf16): as f32 */
#endif
#if WS == 2 && F32
#error "WS = 2 is bf16's window as f32: f32's WS = 1 is that"
#endif

__device__ float2 add2(float2 a, float2 b)
{
	return make_float2(a.x + b.x, a.y + b.y);
}

/* The elements of rank r's share of a row split as s: its whole uint4, the
 * head on rank 0 and the tail on the last. */
__device__ int count(const Split &s, int r)
{
	const int per = (s.nv + CLUSTER - 1) / CLUSTER;
	return EPV * max(0, min(s.nv - r * per, per)) + (r == 0 ? s.head : 0) + (r == CLUSTER - 1 ? s.tail : 0);
}

__device__ float med3(float a, float b, float c)
{
	return fmaxf(fminf(a, b), fminf(fmaxf(a, b), c));
}

/* This block's shift K for row s, once chunk 0 (slot sl) has landed: the
 * median of its slice's first three elements (the same for every thread,
 * near the rank's mean even where one of them is an outlier channel), or
 * where the rank has no uint4 its head or tail element (then chunk 0 is the
 * row's last, beside which the edges are). */
__device__ float shift_of(const Ring &r, const unsigned char *ring, unsigned sl, const Split &s, int rank)
{
	if (s.ng > 0) {
		const unsigned *v = (const unsigned *)(ring + sl * (CH * 16));
		float a[EPW], b[EPW], c[EPW];
		unpack(v[0], a);
		unpack(v[1], b);
		unpack(v[2], c);
		return EPW == 1 ? med3(a[0], b[0], c[0]) : med3(a[0], a[EPW - 1], b[0]);
	}
	if (rank == 0 && s.head > 0)
		return r.edge[sl][0];
	if (rank == CLUSTER - 1 && s.tail > 0)
		return r.edge[sl][8];
	return 0.0f;
}

/* uint4 j of a (n elements; 16-byte aligned where al): one load, or
 * element by element where it reaches past n (0 there) or a is not aligned. */
__device__ uint4 vec_at(const elem *a, int j, int n, bool al = true)
{
	if (al && EPV * (j + 1) <= n)
		return __ldg((const uint4 *)a + j);
	unsigned v[4] = {0u, 0u, 0u, 0u};
#pragma unroll
	for (int k = 0; k < EPV; k++)
		if (EPV * j + k < n)
			v[k / EPW] |= (unsigned)__ldg((const bits *)a + EPV * j + k) << (16 * (k % EPW));
	return make_uint4(v[0], v[1], v[2], v[3]);
}

/* WS = 1: the uint4 of w and of b that rank `rank` reads in any row, in
 * shared memory (after the ring), loaded once a launch.  A rank's slice
 * starts at uint4 g0 = rank * per, per from the row's head (0..EPV - 1, the
 * row's alignment): over the heads g0 and per move by at most 1 and rank,
 * so the window from the least g0 is at most WSPAN uint4 (the last slice's
 * uint4 j + 1 included, which a head off a boundary reads). */
#define WSPAN(n) (((n) / EPV + CLUSTER - 1) / CLUSTER + CLUSTER)
struct Win {
	const uint4 *w, *b; /* the window's uint4 lo .. lo + WSPAN(N) - 1 (WS = 2: float4 pairs) */
	int lo;
};

/* Fill the window from w and b (any alignment; past N: 0) with every thread
 * of the block; ring_start's cluster sync orders it before the first row. */
__device__ Win win_load(unsigned char *at, const elem *w, const elem *b, int N, int rank)
{
	int lo = 1 << 30;
	for (int h = 0; h < EPV; h++) {
		const int nv = (N - min(N, h)) / EPV;
		lo = min(lo, rank * ((nv + CLUSTER - 1) / CLUSTER));
	}
	const int n = WSPAN(N);
	const bool al = ((((size_t)w | (size_t)b) & 15) == 0);
	uint4 *sw = (uint4 *)at, *sb = sw + n * WS;
	for (int i = threadIdx.x; i < n; i += blockDim.x) {
		const uint4 vw = vec_at(w, lo + i, N, al), vb = vec_at(b, lo + i, N, al);
#if WS == 2 /* each uint4's 8 bf16 as 8 f32, two float4 */
		const unsigned uw[4] = {vw.x, vw.y, vw.z, vw.w}, ub[4] = {vb.x, vb.y, vb.z, vb.w};
		float fw[EPV], fb[EPV];
#pragma unroll
		for (int k = 0; k < 4; k++)
			unpack(uw[k], fw + EPW * k), unpack(ub[k], fb + EPW * k);
		((float4 *)sw)[2 * i] = make_float4(fw[0], fw[1], fw[2], fw[3]);
		((float4 *)sw)[2 * i + 1] = make_float4(fw[4], fw[5], fw[6], fw[7]);
		((float4 *)sb)[2 * i] = make_float4(fb[0], fb[1], fb[2], fb[3]);
		((float4 *)sb)[2 * i + 1] = make_float4(fb[4], fb[5], fb[6], fb[7]);
#else
		sw[i] = vw, sb[i] = vb;
#endif
	}
	return Win{sw, sb, lo};
}

/* A thread's weights for one uint4 of its chunk: aligned uint4 j of w and
 * of b, and j + 1 where the row is off a boundary (its EPV weights start
 * `head` elements into j).  A rank's slice starts at the same uint4 g0 in
 * every row, so these are the same vectors in every row: only the shift
 * changes. */
struct Wv {
	uint4 wa, wc, ba, bc;
};

/* The weights of chunk c (of this thread's U uint4) into v. */
__device__ void wload(Wv *v, const elem *w, const elem *b, const Split &s, int c, int N, const Win &win)
{
#pragma unroll
	for (int k = 0; k < U; k++) {
		const int gi = c * CH + threadIdx.x + k * THREADS, j = s.g0 + gi;
		if (gi >= s.ng)
			continue;
#if WS == 2
		continue; /* read in the output loop, as f32 */
#elif WS
		v[k].wa = win.w[j - win.lo], v[k].ba = win.b[j - win.lo];
		if (s.head > 0)
			v[k].wc = win.w[j + 1 - win.lo], v[k].bc = win.b[j + 1 - win.lo];
		continue;
#endif
		v[k].wa = __ldg((const uint4 *)w + j); /* whole: the row's uint4 j is, and w's starts no later */
		v[k].ba = __ldg((const uint4 *)b + j);
		if (s.head > 0) { /* only its first head elements are used, and they are inside w */
			v[k].wc = vec_at(w, j + 1, N);
			v[k].bc = vec_at(b, j + 1, N);
		}
	}
}

/* The EPV elements from element H (a constant: a choice of registers, or
 * one byte permute a word in bf16 at an odd H) of the 2 EPV at a, c. */
template <int H>
__device__ uint4 shiftv(uint4 a, uint4 c)
{
	const unsigned v[8] = {a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w};
	const int o = H / EPW;
	if (EPW == 1 || H % 2 == 0)
		return make_uint4(v[o], v[o + 1], v[o + 2], v[o + 3]);
	return make_uint4(__byte_perm(v[o], v[o + 1], 0x5432), __byte_perm(v[o + 1], v[o + 2], 0x5432),
			  __byte_perm(v[o + 2], v[o + 3], 0x5432), __byte_perm(v[o + 3], v[o + 4], 0x5432));
}

/* The output pass of a row whose head is H (s.head == H; H < 0: any head,
 * w and b element by element, where they are not 16-byte aligned): chunks
 * q .. q + s.nc - 1 as softmax's ring writes them, (v - mean) * rstd * w +
 * b into o (the slice's first element), releasing each slot.  cur: chunk
 * 0's weights, loaded during the statistics' exchange. */
template <int H>
__device__ void out_pass(Ring &r, const unsigned char *ring, unsigned q, const Split &s, float mean, float rstd,
			 const elem *w, const elem *b, elem *o, bool ovec, int N, Wv *cur, const Win &win)
{
	const int t = threadIdx.x;
	for (int c = 0; c < s.nc; c++) {
		const uint4 *buf = (const uint4 *)(ring + (q + c) % NSLOT * (CH * 16));
#if W && WPF
		Wv nxt[U];
		if (H >= 0 && c + 1 < s.nc)
			wload(nxt, w, b, s, c + 1, N, win);
#elif W
		if (H >= 0 && c > 0)
			wload(cur, w, b, s, c, N, win);
#endif
#pragma unroll
		for (int k = 0; k < U; k++) {
			const int i = t + k * THREADS, gi = c * CH + i;
			if (gi >= s.ng)
				continue;
			const uint4 v = buf[i];
			unsigned x[4] = {v.x, v.y, v.z, v.w};
#if W
			const int e0 = s.head + EPV * (s.g0 + gi); /* w's element of x's first */
#if WS == 2 /* its EPV weights as f32 from float H % 4 of the window's float4 2 (j - lo) + H / 4 on */
			constexpr int h = H < 0 ? 0 : H;
			float ww4[12], bb4[12];
#pragma unroll
			for (int m = 0; m < (h % 4 ? 3 : 2); m++) {
				const float4 a = ((const float4 *)win.w)[2 * (s.g0 + gi - win.lo) + h / 4 + m];
				const float4 c4 = ((const float4 *)win.b)[2 * (s.g0 + gi - win.lo) + h / 4 + m];
				ww4[4 * m] = a.x, ww4[4 * m + 1] = a.y, ww4[4 * m + 2] = a.z, ww4[4 * m + 3] = a.w;
				bb4[4 * m] = c4.x, bb4[4 * m + 1] = c4.y, bb4[4 * m + 2] = c4.z, bb4[4 * m + 3] = c4.w;
			}
#else
			const uint4 gw = shiftv<(H < 0 ? 0 : H)>(cur[k].wa, cur[k].wc);
			const uint4 gb = shiftv<(H < 0 ? 0 : H)>(cur[k].ba, cur[k].bc);
			const unsigned ww[4] = {gw.x, gw.y, gw.z, gw.w}, bb[4] = {gb.x, gb.y, gb.z, gb.w};
#endif
#endif
#pragma unroll
			for (int j = 0; j < 4; j++) {
				float f[EPW];
				unpack(x[j], f);
#if W
				float fw[EPW], fb[EPW];
				if (H >= 0) {
#if WS == 2
#pragma unroll
					for (int e = 0; e < EPW; e++)
						fw[e] = ww4[h % 4 + EPW * j + e], fb[e] = bb4[h % 4 + EPW * j + e];
#else
					unpack(ww[j], fw);
					unpack(bb[j], fb);
#endif
				} else {
#pragma unroll
					for (int e = 0; e < EPW; e++)
						fw[e] = to_f32(w[e0 + EPW * j + e]), fb[e] = to_f32(b[e0 + EPW * j + e]);
				}
#pragma unroll
				for (int e = 0; e < EPW; e++)
					f[e] = fmaf((f[e] - mean) * rstd, fw[e], fb[e]);
#else
#pragma unroll
				for (int e = 0; e < EPW; e++)
					f[e] = (f[e] - mean) * rstd;
#endif
				x[j] = pack(f);
			}
			store_words(o, gi, x, ovec);
		}
		release(r, q + c); /* this warp has read the slot */
#if W && WPF
#pragma unroll
		for (int k = 0; k < U; k++)
			cur[k] = nxt[k];
#endif
	}
}

/* The kernel of this file (bf16) and of 07_ring.cu (f32, F32 = 1). */
__device__ __forceinline__ void layernorm_ring(const elem *__restrict__ x, const elem *__restrict__ w,
					       const elem *__restrict__ b, elem *__restrict__ y, int M, int N)
{
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH uint4 */
	__shared__ Ring r;
	const int rank = (int)cg::this_cluster().block_rank(), t = threadIdx.x;
	/* the output pass's vector loads of w and b (else element by element) */
	const bool wal = WS || ((((size_t)w | (size_t)b) & 15) == 0);
#if W && WS
	const Win win = win_load(ring + NSLOT * CH * 16, w, b, N, rank);
#else
	const Win win = {nullptr, nullptr, 0};
#endif
	ring_rows(x, M, N, ring, r, [&](int row, const Split &s, unsigned q, unsigned it, int further) {
		const elem *in = x + (size_t)row * N;
		elem *out = y + (size_t)row * N;
		/* this thread's head and tail element, if it has them, and their weights */
		const bool hok = rank == 0 && t < s.head, tok = rank == CLUSTER - 1 && t < s.tail;
		const int ti = s.head + EPV * s.nv + t;
#if W
		const float wh = hok ? to_f32(w[t]) : 0.0f, bh = hok ? to_f32(b[t]) : 0.0f;
		const float wt = tok ? to_f32(w[ti]) : 0.0f, bt = tok ? to_f32(b[ti]) : 0.0f;
#else
		const float wh = 1.0f, bh = 0.0f, wt = 1.0f, bt = 0.0f;
#endif
		/* 1. the sums of v - K and of its square over this thread's part of
		 * each chunk (K this block's shift, from its first chunk) */
		float k0 = 0.0f, s1 = 0.0f, s2 = 0.0f, hv = 0.0f, tv = 0.0f;
		for (int c = 0; c < s.nc; c++) {
			const unsigned sl = (q + c) % NSLOT;
			unsigned u[4 * U];
			chunk_words(r, ring, q + c, c, s.ng, u);
			if (c == 0)
				k0 = shift_of(r, ring, sl, s, rank);
#pragma unroll
			for (int k = 0; k < 4 * U; k++) {
				if (c * CH + t + k / 4 * THREADS >= s.ng)
					continue;
				float f[EPW];
				unpack(u[k], f);
#pragma unroll
				for (int e = 0; e < EPW; e++) {
					const float d = f[e] - k0;
					s1 += d;
					s2 = fmaf(d, d, s2);
				}
			}
			if (c == s.nc - 1 && t < 8) {
				hv = r.edge[sl][t];
				tv = r.edge[sl][8 + t];
				if (hok)
					s1 += hv - k0, s2 = fmaf(hv - k0, hv - k0, s2);
				if (tok)
					s1 += tv - k0, s2 = fmaf(tv - k0, tv - k0, s2);
			}
		}
		/* chunk 0's weights, in flight through the exchange */
		Wv cur[U];
#if W
		if (wal)
			wload(cur, w, b, s, 0, N, win);
#endif
		/* 2. the block's sums, the rank's (mean, M2) sent, the cluster's sums
		 * about one shift g (rank 0's mean, or the last rank's where rank 0
		 * has no element: a row shorter than a uint4) */
		const int nb = count(s, rank), gsrc = count(s, 0) > 0 ? 0 : CLUSTER - 1;
		float g0 = 0.0f;
		auto rank_pair = [&](float2 p) {
			const float d = nb > 0 ? p.x / nb : 0.0f;
			return make_float2(k0 + d, fmaxf(p.y - p.x * d, 0.0f));
		};
		auto about_g = [&](float2 m, int lane) {
			g0 = __shfl_sync(0xffffffff, m.x, gsrc);
			const float n = lane < CLUSTER ? (float)count(s, lane) : 0.0f, d = m.x - g0;
			return lane < CLUSTER ? make_float2(n * d, fmaf(n * d, d, m.y)) : make_float2(0.0f, 0.0f);
		};
		int next;
		const float2 g = exchange(r, make_float2(s1, s2), make_float2(0.0f, 0.0f), add2, rank_pair, about_g, further,
					  rank, it, &next);
		/* 3. (v - mean) * rstd * w + b */
		const float dm = g.x / N, mean = g0 + dm, rstd = rsqrtf(fmaxf(g.y / N - dm * dm, 0.0f) + 1e-5f);
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		elem *o = out + s.head + EPV * s.g0;
		if (W && !wal)
			out_pass<-1>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else if (!W || s.head == 0)
			out_pass<0>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else if (s.head == 1)
			out_pass<1>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else if (s.head == 2)
			out_pass<2>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else if (s.head == 3 || EPV == 4)
			out_pass<3>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
#if !F32
		else if (s.head == 4)
			out_pass<4>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else if (s.head == 5)
			out_pass<5>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else if (s.head == 6)
			out_pass<6>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
		else
			out_pass<7>(r, ring, q, s, mean, rstd, w, b, o, ovec, N, cur, win);
#endif
		if (hok)
			out[t] = (elem)fmaf((hv - mean) * rstd, wh, bh);
		if (tok)
			out[ti] = (elem)fmaf((tv - mean) * rstd, wt, bt);
		return next;
	});
}

#ifndef F32 /* (07_ring.cu has this file's code with F32 = 1, and its own kernel) */
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
layernorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	       const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	layernorm_ring(x, w, b, y, M, N);
}
#endif
