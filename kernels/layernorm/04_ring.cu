// LayerNorm forward over long rows of f32 at any width: layernorm_bf16_ring.cu
// (softmax/softmax_bf16_ring.cu's ring) for f32 rows, in place of 03_bulk.cu
// past 16384.  03_bulk.cu gives each row a slice buffer, three deep, the
// next row's copy issued at the top of this row: one slice in flight an SM,
// and at odd widths a slice that fills part of its buffer (63% of copy at
// 8192 x 50257, 69% at 1024 x 200003 on an H100, 2026-11-28,
// bench/gallery_new_kernels_h100.txt).  Here a producer warp copies each
// block's slice in chunks of THREADS * U float4 (16 KiB at 512 x 2) into a
// ring of NSLOT slots, row after row, into whichever slots the consumers
// have released, so the next row loads through this one's statistics,
// exchange and stores; only a slice's last chunk is part full.
//
// Statistics as in layernorm_bf16_ring.cu: (count, mean, M2) a thread,
// Welford's update a chunk at a time (the chunk's U float4 in registers:
// their mean, then the squares about it, merged by Chan's formula), then
// Chan's merge in the warp, the block and across the cluster (the triple
// and the next row in one float4 by st.async).  Not (sum, sum of squares):
// their difference loses the variance's digits in f32 when |mean| is large
// beside the deviation, and kbench's f32 tolerance (rtol 1e-4) leaves no
// room for that at N = 200003.
//
// One block an SM (NSLOT * 16 KiB = 208 KiB of shared memory), THREADS
// consumer threads plus one producer warp; per row the consumers fold each
// chunk into their triple as it lands (mbarrier `full`), merge the triples
// (named barrier 1, then the cluster's st.async exchange on an mbarrier a
// parity), and read the chunks again for (x - mean) * rstd * w + b (w and b
// from L2, aligned to their own start: two aligned float4 shifted by the
// row's offset, 03_bulk.cu's load4), releasing each slot (mbarrier `empty`).
// Rows come from a counter in global memory; warp 0 hands each to the
// producer two rows ahead.  Any width: the head (rank 0) and the tail (the
// last rank), up to 3 elements each, are read by the producer's lanes and
// left beside the row's last chunk (`edge`).
// CLUSTER: the smallest with a slice of at most 8 chunks (2 at 50257 and
// 65536, 4 at 131072, 8 at 200003 and 262144); `require` says what fits.
// WS = 1: w and b from shared memory, layernorm_bf16_ring.cu's window (PER
// + 1 float4 of each after the ring, filled once; NSLOT = 9 and a cluster
// with PER <= 2048: 8 at 50257 and 65536, 16 at 131072; none past that).
// OUT = 1 and STATS = 1 (issue 31, bench/layernorm_accounting.txt): on an
// H200 this ring runs at 46% of copy where RMSNorm's runs at 78%, and it
// issues 2.5x their instructions an element (SASS, every path of the chunk
// loops: 57 a float against 17; at copy rate an SM has 63 a float to spend,
// with 16 consumer warps).  OUT = 1 writes the output loop once for each
// head (0..3: a row's offset from its first 16-byte boundary, one a row),
// so w and b are one aligned float4 and the next, shifted at compile time:
// no 4-way branch a vector whose register moves wait on each load before
// the next is issued (w and b 16-byte aligned, WS = 0; else the loop below).
// STATS = 1 sums (x - K) and its square a thread (K its first vector
// element of the row) and makes the triple once a row: no division or
// merge a chunk (a CPU model in f32 of that order, N = 200003 with mean
// 100: the variance within 8e-8 of double's, relative).
// PF = 1 (with OUT = 1; issue 31: at OUT = 1 STATS = 1 this ring waits on
// the output pass's L2 loads of w and b, long_scoreboard, 62% of copy on an
// H200): a rank's slice starts at the same float4 in every row, so the
// aligned vectors of w and b a thread reads are the same in every row (only
// the shift, the head, changes): each chunk's are loaded during the chunk
// before, the next row's first chunk's during this row's last, in flight
// through the statistics and the exchange (92 registers).  WS = 1 with
// OUT = 1: the window at compile-time heads, no L2 in the output pass, at
// the smaller slices the window leaves room for (bench/gallery.py ws_of()).
// SUMS = 1, WN = 1 (issue 31: OUT = 1 STATS = 1 62% of copy at 8192 x 50257
// on an H200, rmsnorm/04_ring.cu 85% on the same ring and occupancy): what a
// row costs here and not there is on the consumers' path, which sets the pace
// (a slice is 7 of the 13 slots at 50257, so the producer is most of a row
// ahead; every consumer warp runs a row's statistics, exchange and output
// pass one after another): Chan's merge (a division, a branch) at each of the
// 15 levels of the warp, block and cluster reductions, each thread's triple's
// division, the head's and tail's w and b loaded after the output pass.  SUMS
// = 1 is RMSNorm's protocol: one shift K a row (the median of its elements 0,
// (N - 1) / 2 and twice that, loaded by every rank's producer, left in
// edge[][7] beside the first chunk: near the mean even where element 0 is an
// outlier channel), sums of x - K and its square added in the warp, block and
// cluster; mean = K + S1 / N, var = S2 / N - (S1 / N)^2 (f32 within 2e-5 of
// double at mean 100: bench/layernorm_sums_model.py); the edges' weights load
// at the row's start.  WN = 1 (OUT = 1): one aligned float4 of w and b a
// vector, not two, at a head off a boundary; the next lane's by a shuffle
// (lane 31 and the slice's last load theirs).  Not yet measured on a GPU.
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16 + WS * 32 * ((N / 4 + CLUSTER - 1) / CLUSTER + 1))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! require NSLOT * THREADS * U * 16 + WS * 32 * ((N / 4 + CLUSTER - 1) / CLUSTER + 1) <= 225 * 1024   // with the weights
//! tune    CLUSTER = 2, 1, 4, 8, 16
//! tune    THREADS = 512, 256, 992   // plus the producer warp: at most 1024
//! tune    U = 2, 1
//! tune    NSLOT = 13, 12, 8, 9
//! tune    WS = 0, 1
//! tune    OUT = 0, 1
//! tune    STATS = 0, 1
//! tune    PF = 0, 1
//! tune    SUMS = 0, 1
//! tune    WN = 0, 1

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 2
#endif
#ifndef THREADS
#define THREADS 512 /* consumer threads; one producer warp more */
#endif
#ifndef U
#define U 2 /* float4 a consumer thread a chunk: a chunk is THREADS * U float4 */
#endif
#ifndef NSLOT
#define NSLOT 13 /* chunks in the ring: 13 * 16 KiB = 208 KiB */
#endif
#ifndef WS
#define WS 0 /* 1: the block's window of w and b in shared memory, after the ring */
#endif
#ifndef OUT
#define OUT 0 /* 1: the output loop specialised on the row's head (w and b aligned) */
#endif
#ifndef STATS
#define STATS 0 /* 1: shifted sums a thread, the triple once a row (no merge a chunk) */
#endif
#ifndef PF
#define PF 0 /* 1 (OUT = 1, WS = 0): w and b loaded a chunk ahead, the next row's first during this row's statistics */
#endif
#ifndef SUMS
#define SUMS 0 /* 1: sums of x - K (K one a row, from the producer), added like RMSNorm's */
#endif
#ifndef WN
#define WN 0 /* 1 (OUT = 1, WS = 0, PF = 0): w and b one aligned float4 a vector, the next by a shuffle */
#endif
#define CH (THREADS * U)     /* float4 a chunk */
#define WARPS (THREADS / 32) /* consumer warps; the producer is warp WARPS */
#define PER(N) (((N) / 4 + CLUSTER - 1) / CLUSTER) /* float4 of a row a rank, at most */

/* (count, mean, M2) of a set of values; Chan's merge. */
__device__ float3 merge(float3 a, float3 b)
{
	float n = a.x + b.x;
	if (n == 0.0f)
		return make_float3(0.0f, 0.0f, 0.0f);
	float d = b.y - a.y, f = b.x / n;
	return make_float3(n, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

/* How two threads' statistics combine: Chan's merge, or (SUMS = 1) the
 * sums added (z unused). */
__device__ float3 comb(float3 a, float3 b)
{
#if SUMS
	return make_float3(a.x + b.x, a.y + b.y, 0.0f);
#else
	return merge(a, b);
#endif
}

__device__ float3 warp_merge(float3 p)
{
	for (int o = 16; o > 0; o /= 2)
		p = comb(p, make_float3(__shfl_xor_sync(0xffffffff, p.x, o), __shfl_xor_sync(0xffffffff, p.y, o),
					 __shfl_xor_sync(0xffffffff, p.z, o)));
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

/* The 4 floats from element h (0..3) of the 8 at a, b. */
__device__ float4 shift4(float4 a, float4 b, unsigned h)
{
	return h == 0 ? a
	     : h == 1 ? make_float4(a.y, a.z, a.w, b.x)
	     : h == 2 ? make_float4(a.z, a.w, b.x, b.y) : make_float4(a.w, b.x, b.y, b.z);
}

/* The 4 floats at p (any 4-byte alignment) of the array [lo, hi): two
 * aligned float4 shifted by p's offset, or 4 scalar loads where those would
 * reach outside the array. */
__device__ float4 load4(const float *p, const float *lo, const float *hi)
{
	const unsigned mis = (unsigned)(size_t)p & 15u;
	const float4 *q = (const float4 *)((const char *)p - mis);
	if (mis == 0)
		return __ldg(q);
	if ((const char *)q >= (const char *)lo && (const char *)(q + 2) <= (const char *)hi)
		return shift4(__ldg(q), __ldg(q + 1), mis / 4);
	return make_float4(p[0], p[1], p[2], p[3]);
}

/* Where a row of N at p splits: head elements to its first 16-byte boundary,
 * n4 whole float4 and tail elements after them; this rank's share of the
 * float4, ng from g0, in nc chunks (at least one, which carries the edges).
 * Every row's g0 is the same (rank * PER(N)), whatever its head. */
struct Split {
	int head, n4, tail, g0, ng, nc;
};

__device__ Split split(const float *p, int N, int rank)
{
	Split s;
	s.head = min(N, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 4);
	s.n4 = (N - s.head) / 4;
	s.tail = N - s.head - 4 * s.n4;
	const int per = PER(N);
	s.g0 = rank * per;
	s.ng = max(0, min(s.n4 - s.g0, per));
	s.nc = max(1, (s.ng + CH - 1) / CH);
	return s;
}

/* The producer warp: row after row (the first two from `first`, then as
 * warp 0 hands them over in rowid), each chunk of this rank's slice into the
 * next slot once the consumers have released it; lanes 0..3 read the head
 * (rank 0) and lanes 8..11 the tail (the last rank), which lane 0 leaves
 * beside the last (0 where there is none: the consumers know which are there
 * from split). */
__device__ void produce(const float *x, int M, int N, int rank, int first, unsigned char *ring,
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
		const float *in = x + (size_t)r * N;
		const Split s = split(in, N, rank);
		float e = 0.0f; /* in flight while the chunks are issued */
		if (lane < 8 && rank == 0 && lane < s.head)
			e = __ldcs(in + lane);
		if (lane >= 8 && lane < 16 && rank == CLUSTER - 1 && lane - 8 < s.tail)
			e = __ldcs(in + s.head + 4 * s.n4 + lane - 8);
#if SUMS
		if (lane >= 16 && lane < 19) /* K's candidates: elements 0, (N - 1) / 2 and twice that */
			e = __ldg(in + (lane - 16) * ((N - 1) / 2));
#endif
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
#if SUMS
			if (c == 0) { /* K (after the edges: at one chunk a row, the same slot) */
				const float ka = __shfl_sync(0xffffffff, e, 16), kb = __shfl_sync(0xffffffff, e, 17);
				const float kc = __shfl_sync(0xffffffff, e, 18);
				if (lane == 0)
					edge[slot][7] = fmaxf(fminf(ka, kb), fminf(fmaxf(ka, kb), kc));
			}
#endif
			if (lane == 0) {
				const int n = min(CH, s.ng - c * CH);
				bulk_load(smem(ring + slot * (CH * 16)), in + s.head + 4 * (s.g0 + c * CH), 16 * max(n, 0),
					  smem(&full[slot]));
			}
		}
	}
}

#if OUT
/* The 4 floats from element H (a constant: a choice of registers, no moves)
 * of the 8 at a, c. */
template <int H>
__device__ float4 shiftc(float4 a, float4 c)
{
	return H == 0 ? a
	     : H == 1 ? make_float4(a.y, a.z, a.w, c.x)
	     : H == 2 ? make_float4(a.z, a.w, c.x, c.y) : make_float4(a.w, c.x, c.y, c.z);
}

/* The 4 floats from w[4 * j + H] on (w 16-byte aligned): aligned float4 j
 * and, where H > 0, j + 1, or only j + 1's first H floats where it would
 * reach past N (a row's last vector: those H are inside w). */
template <int H>
__device__ float4 wnext(const float *w, int j, int N)
{
	const int e = 4 * j + 4;
	if (e + 4 <= N)
		return __ldg((const float4 *)w + j + 1);
	return make_float4(w[e], H > 1 ? w[e + 1] : 0.0f, H > 2 ? w[e + 2] : 0.0f, 0.0f);
}

template <int H>
__device__ float4 wvec(const float *w, int j, int N)
{
	const float4 a = __ldg((const float4 *)w + j);
	if (H == 0)
		return a;
	return shiftc<H>(a, wnext<H>(w, j, N));
}

#if WN
/* The 4 floats from element H of aligned float4 a (this lane's j) and the
 * next lane's (j + 1 where !own: its first H floats by a shuffle; the lane
 * itself loaded c where own: lane 31, or the slice's last vector). */
template <int H>
__device__ float4 wshift(float4 a, float4 c, bool own)
{
	const float x = __shfl_down_sync(0xffffffff, a.x, 1);
	const float y = H > 1 ? __shfl_down_sync(0xffffffff, a.y, 1) : 0.0f;
	const float z = H > 2 ? __shfl_down_sync(0xffffffff, a.z, 1) : 0.0f;
	return shiftc<H>(a, own ? c : make_float4(x, y, z, 0.0f));
}
#endif

#if WS
#define OUT_EXTRA , const float4 *ww, const float4 *wb
#define OUT_ARGS , ww, wb
#elif PF
/* A vector's weights before the shift: aligned float4 j of w and of b and
 * the next (where it would reach past N, its floats inside w, 0 past N):
 * the same in every row, whatever its head. */
struct Wt {
	float4 wa, wc, ba, bc;
};

__device__ float4 next4(const float *w, int j, int N)
{
	const int e = 4 * j + 4;
	if (e + 4 <= N)
		return __ldg((const float4 *)w + j + 1);
	return make_float4(e < N ? w[e] : 0.0f, e + 1 < N ? w[e + 1] : 0.0f, e + 2 < N ? w[e + 2] : 0.0f, 0.0f);
}

__device__ Wt wt_load(const float *w, const float *b, int j, int N)
{
	Wt r;
	r.wa = __ldg((const float4 *)w + j);
	r.ba = __ldg((const float4 *)b + j);
	r.wc = next4(w, j, N);
	r.bc = next4(b, j, N);
	return r;
}
#define OUT_EXTRA , Wt *pw, int jlim
#define OUT_ARGS , pw, jlim
#else
#define OUT_EXTRA
#define OUT_ARGS
#endif

/* The output pass of a row whose head is H (s.head == H): chunks q ..
 * q + s.nc - 1, (v - mean) * rstd * w + b into o (the slice's first
 * element), releasing each slot.  Element head + 4 * (g0 + gi) of w is
 * float4 g0 + gi's element H.  WS = 1: w and b from the window (ww, wb);
 * PF = 1: from pw, each chunk's as loaded during the one before (the
 * first's during the statistics), the next chunk's (or the next row's
 * first) loaded in their place. */
template <int H>
__device__ void out_pass(const unsigned char *ring, unsigned q, const Split &s, float mean, float rstd,
			 const float *w, const float *b, float *o, bool ovec, int N, unsigned long long *empty OUT_EXTRA)
{
	const int t = threadIdx.x;
	for (int c = 0; c < s.nc; c++) {
		const unsigned sl = (q + c) % NSLOT;
		const float4 *buf = (const float4 *)(ring + sl * (CH * 16));
		float4 gw[U], gb[U], v[U];
#if WS
#pragma unroll
		for (int k = 0; k < U; k++) { /* the window: float4 gi and gi + 1 of w and of b */
			const int gi = min(c * CH + t + k * THREADS, s.ng - 1);
			gw[k] = shiftc<H>(ww[gi], ww[gi + 1]);
			gb[k] = shiftc<H>(wb[gi], wb[gi + 1]);
			v[k] = buf[t + k * THREADS];
		}
#elif PF
		const int cn = c + 1 < s.nc ? c + 1 : 0; /* the chunk whose weights load now (0: the next row's first) */
#pragma unroll
		for (int k = 0; k < U; k++) {
			const Wt cur = pw[k];
			pw[k] = wt_load(w, b, min(s.g0 + cn * CH + t + k * THREADS, jlim), N);
			gw[k] = shiftc<H>(cur.wa, cur.wc);
			gb[k] = shiftc<H>(cur.ba, cur.bc);
			v[k] = buf[t + k * THREADS];
		}
#elif WN
		/* one aligned float4 of w and of b a vector (past ng: the slice's last
		 * again), all issued before any is used; a row off a boundary (H > 0)
		 * takes the next lane's too (its vector j + 1, a shuffle), where lane
		 * 31 and the slice's last vector load their own next (wnext) */
		float4 cw[U], cb[U];
		bool own[U];
#pragma unroll
		for (int k = 0; k < U; k++) {
			const int gi = c * CH + t + k * THREADS, j = s.g0 + min(gi, s.ng - 1);
			own[k] = t % 32 == 31 || gi + 1 >= s.ng;
			gw[k] = __ldg((const float4 *)w + j);
			gb[k] = __ldg((const float4 *)b + j);
			cw[k] = cb[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			if (H > 0 && own[k])
				cw[k] = wnext<H>(w, j, N), cb[k] = wnext<H>(b, j, N);
			v[k] = buf[t + k * THREADS];
		}
#pragma unroll
		for (int k = 0; k < U && H > 0; k++) {
			gw[k] = wshift<H>(gw[k], cw[k], own[k]);
			gb[k] = wshift<H>(gb[k], cb[k], own[k]);
		}
#else
#pragma unroll
		for (int k = 0; k < U; k++) { /* every load issued before any is used (past ng: the slice's last vector again) */
			const int gi = c * CH + t + k * THREADS, j = s.g0 + min(gi, s.ng - 1);
			gw[k] = wvec<H>(w, j, N);
			gb[k] = wvec<H>(b, j, N);
			v[k] = buf[t + k * THREADS];
		}
#endif
#pragma unroll
		for (int k = 0; k < U; k++) {
			const int gi = c * CH + t + k * THREADS;
			if (gi >= s.ng)
				continue;
			const float4 r = make_float4(fmaf((v[k].x - mean) * rstd, gw[k].x, gb[k].x),
						     fmaf((v[k].y - mean) * rstd, gw[k].y, gb[k].y),
						     fmaf((v[k].z - mean) * rstd, gw[k].z, gb[k].z),
						     fmaf((v[k].w - mean) * rstd, gw[k].w, gb[k].w));
			if (ovec) {
				__stcs((float4 *)o + gi, r);
			} else {
				__stcs(o + 4 * gi, r.x), __stcs(o + 4 * gi + 1, r.y);
				__stcs(o + 4 * gi + 2, r.z), __stcs(o + 4 * gi + 3, r.w);
			}
		}
		__syncwarp();
		if (t % 32 == 0) /* this warp has read the slot */
			bar_arrive(smem(&empty[sl]));
	}
}
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH float4 */
	__shared__ float edge[NSLOT][16];                      /* a row's head and tail, beside its last chunk */
	__shared__ float3 scratch[32];                         /* the consumer warps' triples */
	__shared__ __align__(16) float4 slot[2][CLUSTER];      /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[NSLOT], empty[NSLOT], msg[2], rowbar[2];
	__shared__ int rowid[2]; /* the rows of iterations it + 2, for the producer */
	__shared__ int first;    /* rank 0: the cluster's first row (and the one after) */
	const float3 none = make_float3(0.0f, 0.0f, 0.0f);
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int t = threadIdx.x, clusters = gridDim.x / CLUSTER;
#if OUT
	const bool wal = WS || (((size_t)w | (size_t)b) & 15) == 0; /* out_pass's vector loads (the window's are) */
#endif
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
#if WS
		/* this rank's window of w and b, elements 4 * g0 .. 4 * (g0 + PER + 1) of
		 * each (0 past N): a row's float4 gi has its 4 weights in window float4
		 * gi and gi + 1, from element `head` on */
		float4 *ww = (float4 *)(ring + NSLOT * (CH * 16)), *wb = ww + PER(N) + 1;
		{
			const int e0 = 4 * rank * PER(N), n = 4 * (PER(N) + 1);
			for (int i = t; i < n; i += THREADS) {
				((float *)ww)[i] = e0 + i < N ? w[e0 + i] : 0.0f;
				((float *)wb)[i] = e0 + i < N ? b[e0 + i] : 0.0f;
			}
			consumers_sync();
		}
#elif OUT && PF
		/* the weights of the first chunk of every row (the same vectors: a
		 * rank's slice starts at float4 g0 whatever the row's head), each
		 * vector clamped to jlim, the last whole float4 of w in the slice */
		const int jlim = min(rank * PER(N) + PER(N), N / 4) - 1;
		Wt pw[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			pw[k] = wal && jlim >= 0 ? wt_load(w, b, min(rank * PER(N) + t + k * THREADS, jlim), N) : Wt{};
#endif
		unsigned q = 0; /* chunks consumed */
		for (unsigned it = 0; row < M; it++) {
			const unsigned bp = it & 1, phase = (it >> 1) & 1;
			int further = 0; /* rank 0's thread 0: the row after `after` */
			if (rank == 0 && t == 0)
				further = (int)atomicAdd(&rows_taken, 1u);
			const float *in = x + (size_t)row * N;
			const Split s = split(in, N, rank);
			/* this thread's head and tail element, if it has them */
			const bool hok = rank == 0 && t < s.head, tok = rank == CLUSTER - 1 && t < s.tail;
			float hv = 0.0f, tv = 0.0f;
			/* 1. the running (count, mean, M2) of this thread's part of each chunk */
			float3 p = none;
#if SUMS
			/* the head's and tail's w and b, in flight through the statistics */
			const int ti = s.head + 4 * s.n4 + t;
			const float wh = hok ? w[t] : 0.0f, bh = hok ? b[t] : 0.0f;
			const float wt = tok ? w[ti] : 0.0f, bt = tok ? b[ti] : 0.0f;
			float kk = 0.0f; /* the row's K */
#endif
#if STATS || SUMS
			/* or: the count, the sum of x - k and of its square (k the thread's
			 * first vector element of the row, 0 if it has none), the triple
			 * once at the end; the padding is left out by ok.  SUMS = 1
			 * (RMSNorm's protocol): k the row's K, the same in every rank (the
			 * producer's, beside the first chunk), the sums added as they are
			 * in the warp, the block and the cluster (comb) */
			{
				float n1 = 0.0f, s1 = 0.0f, s2 = 0.0f, k0 = 0.0f;
				for (int c = 0; c < s.nc; c++) {
					const unsigned sl = (q + c) % NSLOT;
					bar_wait(smem(&full[sl]), ((q + c) / NSLOT) & 1);
					const float4 *buf = (const float4 *)(ring + sl * (CH * 16));
#if SUMS
					if (c == 0)
						k0 = edge[sl][7];
#else
					if (c == 0 && t < s.ng)
						k0 = buf[t].x;
#endif
#pragma unroll
					for (int k = 0; k < U; k++) {
						if (c * CH + t + k * THREADS >= s.ng)
							continue;
						const float4 v = buf[t + k * THREADS];
						const float d0 = v.x - k0, d1 = v.y - k0, d2 = v.z - k0, d3 = v.w - k0;
						n1 += 4.0f;
						s1 += (d0 + d1) + (d2 + d3);
						s2 = fmaf(d0, d0, fmaf(d1, d1, fmaf(d2, d2, fmaf(d3, d3, s2))));
					}
					if (c == s.nc - 1) {
						hv = hok ? edge[sl][t] : 0.0f;
						tv = tok ? edge[sl][8 + t] : 0.0f;
						if (hok)
							n1 += 1.0f, s1 += hv - k0, s2 = fmaf(hv - k0, hv - k0, s2);
						if (tok)
							n1 += 1.0f, s1 += tv - k0, s2 = fmaf(tv - k0, tv - k0, s2);
					}
				}
#if SUMS
				p = make_float3(s1, s2, 0.0f), kk = k0;
#else
				if (n1 > 0.0f) {
					const float d = s1 / n1;
					p = make_float3(n1, k0 + d, fmaxf(s2 - s1 * d, 0.0f));
				}
#endif
			}
#else
			for (int c = 0; c < s.nc; c++) {
				const unsigned sl = (q + c) % NSLOT;
				bar_wait(smem(&full[sl]), ((q + c) / NSLOT) & 1);
				const float4 *buf = (const float4 *)(ring + sl * (CH * 16));
				float4 v[U];
				float cnt = 0.0f, sum = 0.0f;
#pragma unroll
				for (int k = 0; k < U; k++) {
					const bool ok = c * CH + t + k * THREADS < s.ng;
					v[k] = ok ? buf[t + k * THREADS] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
					cnt += ok ? 4.0f : 0.0f;
					sum += (v[k].x + v[k].y) + (v[k].z + v[k].w); /* the padding is 0: it adds nothing */
				}
				if (c == s.nc - 1) {
					hv = hok ? edge[sl][t] : 0.0f;
					tv = tok ? edge[sl][8 + t] : 0.0f;
					cnt += (hok ? 1.0f : 0.0f) + (tok ? 1.0f : 0.0f);
					sum += hv + tv;
				}
				if (cnt == 0.0f)
					continue;
				const float mc = sum / cnt;
				float m2 = 0.0f;
#pragma unroll
				for (int k = 0; k < U; k++) {
					if (c * CH + t + k * THREADS >= s.ng)
						continue;
					m2 = fmaf(v[k].x - mc, v[k].x - mc, m2);
					m2 = fmaf(v[k].y - mc, v[k].y - mc, m2);
					m2 = fmaf(v[k].z - mc, v[k].z - mc, m2);
					m2 = fmaf(v[k].w - mc, v[k].w - mc, m2);
				}
				if (c == s.nc - 1) {
					if (hok)
						m2 = fmaf(hv - mc, hv - mc, m2);
					if (tok)
						m2 = fmaf(tv - mc, tv - mc, m2);
				}
				p = merge(p, make_float3(cnt, mc, m2));
			}
#endif
			/* 2. the block's triple, then the cluster's */
			p = warp_merge(p);
			if (lane == 0)
				scratch[warp] = p;
			consumers_sync();
			if (warp == 0) {
				p = warp_merge(lane < WARPS ? scratch[lane] : none);
				float4 mv = make_float4(p.x, p.y, p.z, __int_as_float(__shfl_sync(0xffffffff, further, 0)));
				if (lane == rank) {
					slot[bp][rank] = mv;
					bar_arrive_expect(smem(&msg[bp]), (CLUSTER - 1) * 16);
				} else if (lane < CLUSTER) { /* to block `lane` */
					send(mapa(smem(&slot[bp][rank]), lane), mv, mapa(smem(&msg[bp]), lane));
				}
			}
			bar_wait(smem(&msg[bp]), phase);
			float4 qv = lane < CLUSTER ? slot[bp][lane] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			const float3 g = warp_merge(make_float3(qv.x, qv.y, qv.z));
			const int next_after = __float_as_int(__shfl_sync(0xffffffff, qv.w, 0)); /* rank 0's */
			if (t == 0) { /* the producer's row of iteration it + 2 */
				rowid[bp] = next_after;
				bar_arrive(smem(&rowbar[bp]));
			}
			/* 3. (x - mean) * rstd * w + b */
#if SUMS
			const float dm = g.x / N, mean = kk + dm, rstd = rsqrtf(fmaxf(g.y / N - dm * dm, 0.0f) + 1e-5f);
#else
			const float mean = g.y, rstd = rsqrtf(g.z / N + 1e-5f);
#endif
			float *out = y + (size_t)row * N;
			const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
			float *o = out + s.head + 4 * s.g0;
#define NORM(v, wi, bi) fmaf(((v) - mean) * rstd, (wi), (bi))
#if OUT
			if (wal && s.ng > 0) {
				if (s.head == 0)
					out_pass<0>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS);
				else if (s.head == 1)
					out_pass<1>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS);
				else if (s.head == 2)
					out_pass<2>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS);
				else
					out_pass<3>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS);
			} else
#endif
			for (int c = 0; c < s.nc; c++) {
				const unsigned sl = (q + c) % NSLOT;
				const float4 *buf = (const float4 *)(ring + sl * (CH * 16));
#pragma unroll
				for (int k = 0; k < U; k++) {
					const int i = t + k * THREADS, gi = c * CH + i;
					if (gi < s.ng) {
#if WS
						const float4 gw = shift4(ww[gi], ww[gi + 1], s.head), gb = shift4(wb[gi], wb[gi + 1], s.head);
#else
						const int e = s.head + 4 * (s.g0 + gi);
						const float4 gw = load4(w + e, w, w + N), gb = load4(b + e, b, b + N);
#endif
						float4 v = buf[i];
						v = make_float4(NORM(v.x, gw.x, gb.x), NORM(v.y, gw.y, gb.y), NORM(v.z, gw.z, gb.z),
								NORM(v.w, gw.w, gb.w));
						if (ovec) {
							__stcs((float4 *)o + gi, v);
						} else {
							__stcs(o + 4 * gi, v.x), __stcs(o + 4 * gi + 1, v.y);
							__stcs(o + 4 * gi + 2, v.z), __stcs(o + 4 * gi + 3, v.w);
						}
					}
				}
				__syncwarp();
				if (lane == 0) /* this warp has read the slot */
					bar_arrive(smem(&empty[sl]));
			}
#if SUMS
			if (hok)
				__stcs(out + t, NORM(hv, wh, bh));
			if (tok)
				__stcs(out + ti, NORM(tv, wt, bt));
#else
			if (hok)
				__stcs(out + t, NORM(hv, w[t], b[t]));
			if (tok) {
				const int i = s.head + 4 * s.n4 + t;
				__stcs(out + i, NORM(tv, w[i], b[i]));
			}
#endif
#undef NORM
			q += s.nc;
			row = after;
			after = next_after;
		}
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
