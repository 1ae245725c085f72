// LayerNorm forward over long and odd-width rows of f32: a cluster of CLUSTER
// blocks a row, each block's slice of the row in registers (issue 31), as
// layernorm_bf16_cluster.cu does for bf16 (its comment says why and how).
// 02_registers.cu holds a row in one block up to 16384; 04_ring.cu passes
// every chunk of a slice through shared memory and runs its statistics and
// output loops once a chunk (73.8% of copy at 8192 x 50257 and 68.2% at
// 4096 x 200003 on an H200).  Here a thread holds VPT float4 (4 or 8: 16 or
// 32 registers), sized so that two blocks share an SM (512 threads at 64
// registers, 416 at 72; MINB = 2): one cluster's loads are in flight
// through another's exchange and stores.  PF = 1 prefetches into L2 the
// slice of the row a wave of clusters later, PRE = 1 this thread's w and b
// into L1 through the cluster's wait (layernorm_bf16_cluster.cu's PF and
// PRE; GPU only).  Loads: float4 from the row's first 16-byte boundary, the
// head (up to 3 elements) read by rank 0, the tail (up to 3) by the last
// rank; vector gi of the row in rank gi / PER, PER = ceil((N / 4) /
// CLUSTER).
// Statistics: 04_ring.cu's SUMS = 1 (one shift K a row, the median of its
// elements 0, (N - 1) / 2 and twice that; sums of x - K and its square),
// each block's pair stored into every block's part[rank] (DSMEM), one
// cluster barrier phase, the pairs added in rank order in every block
// (f32 within 2e-5 of double at mean 100: bench/layernorm_sums_model.py).
// Output: w and b from L2, two aligned float4 shifted by the row's head at
// compile time (the loop once for each head 0..3), or load4 where w or b
// is off 16 bytes.
// PIPE = 1: WAVE persistent clusters, their rows after the first two from
// a counter, the next row's slice loaded into a second VPT registers
// before this row's sums, exchange and output (layernorm_bf16_cluster.cu's
// PIPE; VPT = 8 at MINB = 1 and 416 threads is 128 registers, no spills;
// VPT = 4 at MINB = 2 spills 20 bytes).  Slower on an H200: 52.9% of copy
// at 8192 x 50257, 47.7% at 4096 x 200003, against 77.6% and 69.7% for
// PIPE = 0 PF = 1 in the same run (bench/layernorm_cluster_h200.txt).
// LOOK = 0 (PIPE = 1): the next row's slice loaded after this row's output,
// not before its sums (no second VPT registers: MINB = 2 at VPT = 8).
// WSM = 1 (PIPE = 1): each block copies its window of w and b (the aligned
// vectors g0 .. g0 + PER of each, zero past N) into shared memory once, and
// every row's output reads them there, shifted by the row's head, instead
// of from L2 (at PIPE = 0 the window would be read from L2 once a row
// anyway).  The point: with w and b read from L2 every row, L2 carries
// twice the DRAM traffic (H200 profile: L2 86% busy at 68% of DRAM), and
// the output's loads are L2 round trips after the cluster's wait.
// Measured on the H200 (bench/layernorm_wsm_h200.txt): WSM = 1 at PF = 1
// beats PIPE = 0 at the odd rows (f32 8192 x 50257 77 -> 79% of copy,
// 4096 x 200003 69 -> 73%; bf16 77 -> 78%, 68 -> 71%) and loses at the
// powers of two, whose window at the best's cluster is 131 KB (one block
// an SM).  Tried and taken out (322461f has them): prefetching the row
// after the next, which the exchange names, instead of the row a wave on
// (3-10% slower), and every warp's pair to every peer with no block
// barrier (0-6% slower: its reads of the CLUSTER x WARPS pairs stall).
// Also taken out (941de34 has it): HINT = 1, persistent clusters without
// the window whose loads of x bypass L1 and of w and b are kept in it
// (L1::evict_last), at shapes whose slices of w and b fit L1: 42-80% of
// copy, under the best at every row (bench/layernorm_wsm_h200.txt, sixth
// run).  Its loads were inline asm without `volatile`, which the compiler
// took for pure arithmetic and hoisted out of the row loop and out of
// their guards: reads past w's end, 197 errors under memcheck.
// And TMAX = 1 (83a1464 has it): the next row's slice by one bulk copy
// into shared memory a row ahead (x once through the L2, no prefetch),
// with the window or without: 47-66% of copy, under the best at every
// row (bench/layernorm_wsm_h200.txt, eighth run).  membar stalls took
// 22-33% of the samples: the cluster barrier's arrive.release waits for
// the thread's earlier stores of y to land, which the best hides behind
// the next row's global loads and a copy from shared memory does not.
// The rings' exchange (st.async into the peers, an mbarrier each) has no
// such release; a copy a row ahead would need it.
// XA = 1: that exchange (softmax/07_cluster_async.cu's), the pairs by
// st.async into the peers' slots, an mbarrier a row parity, no cluster
// barrier a row.  One row a cluster (PIPE = 0) it leads at four rows (H200,
// bench/layernorm_wsm_h200.txt, ninth and tenth runs; the gallery at
// 23:40Z): bf16 8192 x 50257 78 -> 80-81% of copy, 4096 x 131072 86 ->
// 90%, 262144 80 -> 85%, and f32 8192 x 50257 at four blocks an SM 80 ->
// 85-86%.  With the window (PIPE = 1) it first spilled (its wait's
// "memory" clobber) and lost 7-11 points; without the clobber it leads at
// both 4096 x 200003 rows (f32 73 -> 78%, bf16 72 -> 76%, eleventh run).
// PFB = 1 (with PF = 1): the slice a wave ahead prefetched by bulk
// prefetches (cp.async.bulk.prefetch.L2, up to 16 KiB a lane of warp 0)
// instead of a prefetch.global.L2 a 128-byte line: equal or up to 1.7%
// faster at every row (H200, bench/layernorm_wsm_h200.txt, seventh run;
// bf16 4096 x 131072 85.1 -> 86.2% of copy), so the gallery takes it.  The
// L2 still sees x twice, prefetched and loaded: what holds these rows is
// the L2 at 84-88% of ncu's lts__throughput with DRAM at 64-72%.
// VPT = 7 with the window at 4096 x 200003 (16 ranks of 3126 float4): 448
// x 7 holds a slice with 10 vectors to spare where 416 x 8 has 202, and
// spills nothing where VPT = 8 spills 12 bytes at 72 registers: 78 -> 82%
// of copy on the H200 (1962 -> 1857 us, 2026-11-29, twelfth run of
// bench/layernorm_wsm_h200.txt); bench/gallery.py's wsm(4, vpt=7).
// EDGE = 1 (f51c91f has it; layernorm_bf16_cluster.cu says more): the
// head's and tail's loads off the path after the exchange, 1-2% slower.
// Four blocks an SM (MINB = 4 at twice the cluster, 224-256 threads) lead
// at two rows: with the window at f32 8192 x 50257 (80% of copy), without
// it at bf16 4096 x 131072 (85%).  LOOK = 1 with the window loses at every
// row (51-66%): twice the registers mean one block an SM or half the slice.
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min(M, PIPE * (WAVE + (1 - min(WAVE, 1)) * sm_count * MINB / CLUSTER) + (1 - PIPE) * M) * CLUSTER) block=(THREADS) smem=(WSM * 32 * ((N / 4 + CLUSTER - 1) / CLUSTER + 1))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 32771
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= THREADS * VPT   // a rank's slice in registers
//! tune    CLUSTER = 8, 4, 16, 2
//! tune    THREADS = 416, 512, 256
//! tune    VPT = 4, 8
//! tune    MINB = 2, 1
//! tune    PF = 0, 1
//! tune    PFB = 0, 1
//! tune    PRE = 0, 1
//! tune    PIPE = 0, 1
//! tune    WAVE = 66, 33, 16, 0
//! tune    LOOK = 1, 0
//! tune    WSM = 0, 1
//! tune    XA = 0, 1

#ifndef CLUSTER
#define CLUSTER 8 /* blocks a row (16: kbench allows the non-portable size) */
#endif
#ifndef THREADS
#define THREADS 416 /* 13 warps x 4 float4 hold 50257 / 8 ranks */
#endif
#ifndef VPT
#define VPT 4 /* float4 a thread */
#endif
#ifndef MINB
#define MINB 2 /* blocks an SM the registers must leave room for */
#endif
#ifndef PF
#define PF 0 /* 1: the slice of the row a wave ahead prefetched into L2 */
#endif
#ifndef PFB
#define PFB 0 /* 1 (PF = 1): the slice prefetched by bulk prefetches of up to 16 KiB, not a line a thread */
#endif
#ifndef PRE
#define PRE 0 /* 1: this thread's w and b prefetched into L1 while the cluster's pairs are waited for */
#endif
#ifndef PIPE
#define PIPE 0 /* 1: WAVE clusters stride the rows, the next row's slice loaded before this one's exchange */
#endif
#ifndef WAVE
#define WAVE 66 /* PIPE = 1: clusters launched (as fit at once: 132 / CLUSTER x MINB on an H200; 0: sm_count x MINB / CLUSTER) */
#endif
#ifndef LOOK
#define LOOK 1 /* PIPE = 1: the next row's slice loaded before this row's sums (0: after its output) */
#endif
#ifndef XA
#define XA 0 /* 1 (CLUSTER > 1): the pairs by st.async into the peers' slots, an mbarrier a parity: no cluster barrier a row */
#endif
#ifndef WSM
#define WSM 0 /* 1 (PIPE = 1): this block's window of w and b in shared memory, read from L2 once */
#endif
static_assert(PIPE || (LOOK == 1 && WSM == 0), "LOOK and WSM: with PIPE = 1 (persistent clusters)");
#define WARPS (THREADS / 32)
#define PER(N) (((N) / 4 + CLUSTER - 1) / CLUSTER) /* float4 of a row a rank, at most */
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS: whole warps, at most 1024");

#if CLUSTER == 1
#undef XA
#define XA 0 /* no peers */
#endif
#if CLUSTER > 1
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ void cluster_arrive_relaxed(void)
{
	asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}

__device__ void cluster_arrive(void)
{
	asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

__device__ void cluster_wait(void)
{
	asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

#if XA
/* XA = 1: the exchange of softmax/07_cluster_async.cu.  Each block's pair
 * goes to every peer as a float4 {S1, S2, the row after next, 0} by
 * st.async into the peer's slot[b][rank], completing 16 bytes on the
 * peer's mbarrier full[b] (b the row's parity; count 1, the block's own
 * arrival, expecting (CLUSTER - 1) x 16 bytes).  No warp releases its
 * stores of y to the cluster, as barrier.cluster.arrive.release makes
 * every warp do: those drain while the next row loads.  A slot and full[b]
 * are reused two rows on, which a peer reaches only after this block's
 * next pair, sent after every thread here waited on full[b] and read the
 * slots (07_cluster_async.cu says why in full). */
__device__ unsigned saddr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

__device__ void xa_init(unsigned long long *full)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(saddr(full)) : "memory");
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(saddr(full + 1)) : "memory");
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); /* before the peers' first st.async */
}

/* Lane q of warp 0 (q < CLUSTER): the block's message into its own slot
 * (q = rank: with the block's arrival, expecting the peers' bytes) or into
 * block q's. */
__device__ void xa_send(float4 *slot, unsigned long long *full, float4 msg, int rank, int q)
{
	if (q == rank) {
		slot[rank] = msg;
		asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(saddr(full)),
			     "r"(16u * (CLUSTER - 1))
			     : "memory");
	} else {
		unsigned a, f;
		asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(saddr(slot + rank)), "r"(q));
		asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(f) : "r"(saddr(full)), "r"(q));
		asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(a),
			     "r"(__float_as_uint(msg.x)), "r"(__float_as_uint(msg.y)), "r"(__float_as_uint(msg.z)),
			     "r"(__float_as_uint(msg.w)), "r"(f)
			     : "memory");
	}
}

/* Until full's phase of this parity is complete (every peer's message in).
 * No "memory" clobber: with one, the persistent kernel spills (NVRTC 13.0,
 * 72 registers at 416 threads); the caller's __syncwarp() after it keeps
 * the slots' reads below the wait instead. */
__device__ void xa_wait(unsigned long long *full, unsigned parity)
{
	unsigned done;
	do {
		asm volatile("{\n\t.reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n\t}"
			     : "=r"(done)
			     : "r"(saddr(full)), "r"(parity));
	} while (!done);
}
#endif
#endif

/* The elements of a row of n f32 at p before its first 16-byte boundary. */
__device__ int head_of(const void *p, int n)
{
	return min(n, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 4);
}

/* The 4 floats from element h (0..3) of the 8 at a, c. */
__device__ float4 shift4(float4 a, float4 c, unsigned h)
{
	return h == 0 ? a
	     : h == 1 ? make_float4(a.y, a.z, a.w, c.x)
	     : h == 2 ? make_float4(a.z, a.w, c.x, c.y) : make_float4(a.w, c.x, c.y, c.z);
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

/* The 4 floats from w[4 * j + H] on (w 16-byte aligned; H a constant):
 * aligned float4 j and, where H > 0, j + 1 (or only its first H floats
 * where it would reach past N), shifted by H. */
template <int H>
__device__ float4 wvec(const float *w, int j, int N)
{
	const float4 a = __ldg((const float4 *)w + j);
	if (H == 0)
		return a;
	const int e = 4 * j + 4;
	float4 c = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	if (e + 4 <= N) {
		c = __ldg((const float4 *)w + j + 1);
	} else {
		c.x = __ldg(w + e);
		if (H > 1)
			c.y = __ldg(w + e + 1);
		if (H > 2)
			c.z = __ldg(w + e + 2);
	}
	return shift4(a, c, H);
}

/* (x - mean) * rstd * w + b of a float4. */
__device__ float4 norm4(float4 x, float4 w, float4 b, float mean, float rstd)
{
	return make_float4((x.x - mean) * rstd * w.x + b.x, (x.y - mean) * rstd * w.y + b.y,
			   (x.z - mean) * rstd * w.z + b.z, (x.w - mean) * rstd * w.w + b.w);
}

/* This thread's vectors of the row (row vector g0 + t + k * THREADS, the
 * first ng of the rank's) normalised and stored at obody, the row's head H;
 * WSM = 1: w and b from the block's windows ww and bw (fill_window). */
template <int H>
__device__ void out_body(const float4 *v, float4 *obody, const float *w, const float *b, const float4 *ww,
			 const float4 *bw, int g0, int ng, int N, float mean, float rstd)
{
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * THREADS, gi = g0 + i;
		if (i < ng)
#if WSM
			__stcs(obody + gi, norm4(v[k], shift4(ww[i], ww[i + 1], H), shift4(bw[i], bw[i + 1], H), mean, rstd));
#else
			__stcs(obody + gi, norm4(v[k], wvec<H>(w, gi, N), wvec<H>(b, gi, N), mean, rstd));
#endif
	}
}

#if WSM
/* Vectors g0 .. g0 + PER of the array a (N floats) into win (PER + 1
 * float4), zero past N: a row's vector g0 + i, whatever its head, finds its
 * w in win[i] and win[i + 1].  Whole float4 where a is 16-byte aligned. */
__device__ void fill_window(float4 *win, const float *a, int g0, int N)
{
	for (int i = threadIdx.x; i <= PER(N); i += THREADS) {
		const int e = 4 * (g0 + i);
		if (((size_t)a & 15) == 0 && e + 4 <= N) {
			win[i] = __ldg((const float4 *)a + g0 + i);
		} else {
			float f[4];
#pragma unroll
			for (int c = 0; c < 4; c++)
				f[c] = e + c < N ? a[e + c] : 0.0f;
			win[i] = make_float4(f[0], f[1], f[2], f[3]);
		}
	}
}
#endif

/* Where this rank's slice of a row lies (input row at row, output at out):
 * the row's head (elements before its first 16-byte boundary, or the whole
 * row where input and output are aligned differently), its whole vectors,
 * the rank's first vector and how many it holds. */
struct slice {
	int head, nv, g0, ng;
};

__device__ slice slice_of(const float *row, const float *out, int N, int rank)
{
	slice s;
	s.head = ((size_t)row ^ (size_t)out) & 15 ? N : head_of(row, N);
	s.nv = (N - s.head) / 4;
	s.g0 = rank * PER(N);
	s.ng = max(0, min(s.nv - s.g0, PER(N)));
	return s;
}

/* Row r's slice of this rank into v (its vectors g0 + t + k * THREADS,
 * zero past the slice) and the row's elements 0, (N - 1) / 2 and twice that
 * (the shift K's candidates) into k3. */
__device__ void load_slice(const float *x, const float *y, size_t r, int N, int rank, float4 *v, float *k3)
{
	const float *row = x + r * N;
	const slice s = slice_of(row, y + r * N, N, rank);
	const float4 *body = (const float4 *)(row + s.head);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * THREADS;
		v[k] = i < s.ng ? __ldcs(body + s.g0 + i) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	}
	k3[0] = row[0], k3[1] = row[(N - 1) / 2], k3[2] = row[(N - 1) / 2 * 2];
}

#if PIPE
/* PIPE = 1: rows handed out past each cluster's first two (2 x WAVE on),
 * and the clusters that are done (the last one sets both back to 0 for
 * the next launch). */
__device__ unsigned rows_taken, clusters_done;

/* The cluster leaves: the last one to leave resets the counters. */
__device__ void leave(unsigned clusters)
{
	__threadfence();
	if (atomicAdd(&clusters_done, 1u) == clusters - 1) {
		rows_taken = 0;
		clusters_done = 0;
		__threadfence();
	}
}
#endif

#if PF
/* The rank's slice of the row one wave of clusters after row r (as many
 * as fit at once: MINB blocks on each SM, %nsmid's count), a 128-byte line
 * a thread, into L2: its cluster is launched when one of this wave's
 * leaves, and finds its loads in L2, so DRAM stays busy through this
 * wave's exchange and stores (a slice is PER vectors from the rank's first,
 * give or take the row's head and tail: 32 bytes more each side). */
__device__ void prefetch_ahead(const void *x, size_t r, int M, int N, int rank)
{
	unsigned nsm;
	asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
	const size_t ahead = r + nsm * MINB / CLUSTER;
	if (ahead >= (size_t)M)
		return;
	const char *row = (const char *)x + ahead * N * 4;
	const char *lo = row + (size_t)rank * PER(N) * 16, *hi = row + (size_t)N * 4;
	lo = lo - 32 > row ? lo - 32 : row;
	hi = lo + (size_t)PER(N) * 16 + 64 < hi ? lo + (size_t)PER(N) * 16 + 64 : hi;
#if PFB
	/* whole 16-byte units inside [lo, hi): a bulk prefetch takes nothing less */
	const char *a = (const char *)(((size_t)lo + 15) & ~(size_t)15), *e = (const char *)((size_t)hi & ~(size_t)15);
	if (threadIdx.x < 32)
		for (const char *p = a + 16384 * threadIdx.x; p < e; p += 16384 * 32) {
			const unsigned n = (unsigned)(e - p < 16384 ? e - p : 16384);
			asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
		}
#else
	const char *a = (const char *)((size_t)lo & ~(size_t)127);
	for (const char *p = a + 128 * threadIdx.x; p < hi; p += 128 * THREADS)
		asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	__shared__ float2 scratch[WARPS];
#if XA
	__shared__ float4 slot[2][CLUSTER];     /* the peers' messages, by row parity and sender */
	__shared__ unsigned long long full[2]; /* their bytes (and this block's arrival), by row parity */
#else
	__shared__ float2 part[PIPE + 1][CLUSTER]; /* each rank's (S1, S2), by rank (PIPE: by row parity) */
#if PIPE
	__shared__ unsigned after[2]; /* rank 0's row after the next, by row parity */
#endif
#endif
#if CLUSTER > 1
	cg::cluster_group cluster = cg::this_cluster();
	const int rank = (int)cluster.block_rank();
#if XA
	if (threadIdx.x == 0)
		xa_init(full);
#endif
	cluster_arrive_relaxed(); /* phase 1: this block has started */
#else
	const int rank = 0;
#endif
	const int t = threadIdx.x, lane = t % 32, warp = t / 32;
	size_t r = blockIdx.x / CLUSTER;
#if PIPE
	const size_t G = gridDim.x / CLUSTER; /* the clusters launched */
	size_t rn = r + G; /* the next row (a cluster's first two its own, the others from rows_taken) */
#endif
	float4 v[VPT];
	float k3[3];
	load_slice(x, y, r, N, rank, v, k3);
#if WSM
	/* this block's windows of w and b, read after the loop's first __syncthreads */
	extern __shared__ float4 win[];
	const float4 *ww = win, *bw = win + PER(N) + 1;
	fill_window(win, w, rank * PER(N), N);
	fill_window(win + PER(N) + 1, b, rank * PER(N), N);
#else
	const float4 *ww = NULL, *bw = NULL;
#endif
	for (int it = 0; r < (size_t)M; it++) {
		const float *row = x + r * N;
		float *out = y + r * N;
		const slice s = slice_of(row, out, N, rank);
		const int head = s.head, n4 = s.nv, tail = N - head - 4 * n4, g0 = s.g0, ng = s.ng;
#if PIPE && LOOK
		/* the next row's slice, in flight through this row's sums, exchange and output */
		float4 nv[VPT];
		float nk3[3];
		if (rn < (size_t)M)
			load_slice(x, y, rn, N, rank, nv, nk3);
#elif PF
		prefetch_ahead(x, r, M, N, rank);
#endif
#if PIPE
		unsigned grab = 0; /* the row after rn, sent with rank 0's pair */
		if (rank == 0 && t == 0)
			grab = 2 * (unsigned)G + atomicAdd(&rows_taken, 1u);
#endif
		const float ka = k3[0], kb = k3[1], kc = k3[2];
		const float K = fmaxf(fminf(ka, kb), fminf(fmaxf(ka, kb), kc)); /* the median of the three */
		float s1 = 0.0f, s2 = 0.0f;
		if (rank == 0)
			for (int i = t; i < head; i += THREADS) { /* up to 3, or the row */
				const float d = row[i] - K;
				s1 += d, s2 += d * d;
			}
		const bool mytail = rank == CLUSTER - 1 && t < tail;
		const float tv = mytail ? row[head + 4 * n4 + t] : 0.0f;
		if (mytail)
			s1 += tv - K, s2 += (tv - K) * (tv - K);
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			if (t + k * THREADS < ng) {
				const float d0 = v[k].x - K, d1 = v[k].y - K, d2 = v[k].z - K, d3 = v[k].w - K;
				s1 += (d0 + d1) + (d2 + d3);
				s2 += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
			}
		}
		for (int o = 16; o > 0; o /= 2) {
			s1 += __shfl_xor_sync(0xffffffff, s1, o);
			s2 += __shfl_xor_sync(0xffffffff, s2, o);
		}
		if (lane == 0)
			scratch[warp] = make_float2(s1, s2);
		__syncthreads();
#if CLUSTER > 1
		if (it == 0)
			cluster_wait(); /* phase 1: every peer has started */
#endif
		if (warp == 0) {
			float2 p = lane < WARPS ? scratch[lane] : make_float2(0.0f, 0.0f);
			for (int o = 16; o > 0; o /= 2) {
				p.x += __shfl_xor_sync(0xffffffff, p.x, o);
				p.y += __shfl_xor_sync(0xffffffff, p.y, o);
			}
#if PIPE
			grab = __shfl_sync(0xffffffff, grab, 0);
#endif
#if XA
#if PIPE
			const unsigned after_next = grab;
#else
			const unsigned after_next = 0; /* one row a cluster */
#endif
			if (lane < CLUSTER)
				xa_send(slot[it & 1], full + (it & 1), make_float4(p.x, p.y, __uint_as_float(after_next), 0.0f),
					rank, lane);
#elif CLUSTER > 1
			if (lane < CLUSTER) { /* into block lane's part[rank] */
				*cluster.map_shared_rank(&part[it & PIPE][rank], lane) = p;
#if PIPE
				if (rank == 0)
					*cluster.map_shared_rank(&after[it & 1], lane) = grab;
#endif
			}
#else
			if (lane == 0) {
				part[it & PIPE][0] = p;
#if PIPE
				after[it & 1] = grab;
#endif
			}
#endif
		}
#if CLUSTER > 1
#if !XA
		cluster_arrive(); /* phase 2: this block's pair is in every peer */
#endif
#if PRE
		/* the aligned vectors of w and b the output pass reads first (the
		 * second of a shifted pair is the next thread's), from L2 into L1 */
#pragma unroll
		for (int k = 0; k < VPT; k++)
			if (t + k * THREADS < ng) {
				asm volatile("prefetch.global.L1 [%0];" ::"l"((const float4 *)w + g0 + t + k * THREADS));
				asm volatile("prefetch.global.L1 [%0];" ::"l"((const float4 *)b + g0 + t + k * THREADS));
			}
#endif
#if XA
		xa_wait(full + (it & 1), (unsigned)(it >> 1) & 1u);
		__syncwarp(); /* the slots are read after the wait (xa_wait has no memory clobber) */
#else
		cluster_wait();
#endif
#else
		__syncthreads();
#endif
		float S1 = 0.0f, S2 = 0.0f;
#pragma unroll
		for (int q = 0; q < CLUSTER; q++)
#if XA
			S1 += slot[it & 1][q].x, S2 += slot[it & 1][q].y;
#else
			S1 += part[it & PIPE][q].x, S2 += part[it & PIPE][q].y;
#endif
		const float m1 = S1 / N, mean = K + m1, rstd = rsqrtf(fmaxf(S2 / N - m1 * m1, 0.0f) + 1e-5f);
		float4 *obody = (float4 *)(out + head);
		if (ng > 0 && (WSM || (((size_t)w | (size_t)b) & 15) == 0)) {
			switch (head) {
			case 0: out_body<0>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 1: out_body<1>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 2: out_body<2>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			default: out_body<3>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			}
		} else {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				const int i = t + k * THREADS, gi = g0 + i;
				if (i < ng)
					__stcs(obody + gi, norm4(v[k], load4(w + head + 4 * gi, w, w + N),
								 load4(b + head + 4 * gi, b, b + N), mean, rstd));
			}
		}
		if (rank == 0)
			for (int i = t; i < head; i += THREADS)
				out[i] = (row[i] - mean) * rstd * w[i] + b[i];
		if (mytail) {
			const int i = head + 4 * n4 + t;
			out[i] = (tv - mean) * rstd * w[i] + b[i];
		}
#if PIPE
#if LOOK
#pragma unroll
		for (int k = 0; k < VPT; k++)
			v[k] = nv[k];
		k3[0] = nk3[0], k3[1] = nk3[1], k3[2] = nk3[2];
#else
		if (rn < (size_t)M)
			load_slice(x, y, rn, N, rank, v, k3);
#endif
		r = rn;
#if XA
		rn = __float_as_uint(slot[it & 1][0].z); /* rank 0's row after the next */
#else
		rn = after[it & 1];
#endif
#else
		break; /* one row a cluster */
#endif
	}
#if PIPE
	if (rank == 0 && t == 0)
		leave((unsigned)G);
#endif
}
