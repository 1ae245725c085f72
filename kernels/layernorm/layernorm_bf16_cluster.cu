// LayerNorm forward in bf16 over long and odd-width rows (statistics in f32):
// a cluster of CLUSTER blocks a row, each block's slice of the row held in
// registers (issue 31).  layernorm_bf16_aligned.cu holds a whole row in one
// block and spills at VPT = 8 (50257 needs 64 registers of row a thread);
// the rings (layernorm_bf16_ring.cu) pass every chunk through shared memory
// and run the statistics and output loops once a chunk.  Here the row is
// read once into registers, as RMSNorm's one-block kernel does (81% of copy
// at 8192 x 50257 on an H200), but cut among the cluster's blocks so that a
// thread holds VPT uint4 (4 or 8: 16 or 32 registers) at 64 registers.
//
// Loads: 16-byte vectors from the row's first 16-byte boundary (the head,
// up to 7 elements, read by rank 0's threads; the tail, up to 7, by the last
// rank's), vector gi of the row in rank gi / PER, PER = ceil((N / 8) /
// CLUSTER) the same in every row whatever its head.
// Statistics: SUMS = 1 of layernorm/04_ring.cu (RMSNorm's protocol): one
// shift K a row, the median of its elements 0, (N - 1) / 2 and twice that
// (every thread loads the three), sums of x - K and its square a thread,
// added in the warp and the block; each block stores its pair into every
// block's part[rank] (DSMEM) and the cluster meets once (barrier.cluster
// arrive.release / wait.acquire); every block then adds the CLUSTER pairs in
// rank order (the same mean and rstd in every block): mean = K + S1 / N,
// var = S2 / N - (S1 / N)^2 (within 2e-5 of double at mean 100:
// bench/layernorm_sums_model.py).  A peer's shared memory is only written
// once it has started: the cluster's first barrier phase is arrived on at
// the top (relaxed) and waited on before the stores, behind the loads.
// No block touches a peer after the second phase, so each leaves on its
// own once its stores are issued: no barrier at the end.
// Overlap: one row a cluster, M clusters; 512 threads at 64 registers or
// 416 at 72 (MINB = 2) so two blocks share an SM and one cluster's loads
// are in flight while another adds, exchanges and stores.  PF = 1: each
// rank also prefetches into L2 its slice of the row one wave of clusters
// later (%nsmid x MINB / CLUSTER rows on), whose cluster starts as one of
// this wave leaves: DRAM busy through this wave's exchange and stores (a
// slice at VPT = 8 is 53-64 KB a block, 2 a SM, where an H200 needs about
// 55 KB in flight an SM at copy rate).  PRE = 1: each thread prefetches
// its aligned vectors of w and b into L1 between the cluster's arrive and
// wait, so the output pass's loads (L2 hits: the same columns every row)
// are not one L2 round trip after the wait (loading them into registers
// there spills at every configuration).  The emulator has no %nsmid or
// prefetch: PF = 1 and PRE = 1 run on a GPU only.
// PIPE = 1, the rows pipelined through a persistent cluster: WAVE clusters
// are launched (as many as fit at once: 132 / CLUSTER x MINB on an H200,
// give or take its GPCs), cluster c taking rows c and c + WAVE, then rows
// from 2 x WAVE on from a counter (rows_taken: rank 0 takes the row after
// the next and sends it with its pair; the last cluster to leave sets the
// counter back to 0), so a cluster that only starts once another leaves
// does 2 rows, not M / WAVE.  Each thread issues the next row's slice
// (and its three candidates for K) into a second VPT registers before this
// row's sums, exchange and output, so a block's loads stay in flight
// through every phase, where at PIPE = 0 a block reads nothing from its
// sums to its exit (two blocks an SM only half cover that).  The pairs are
// double-buffered by the row's parity: a block stores row i + 1's pair
// into a peer only after the cluster's wait of row i, which the peer
// arrived at after reading row i - 1's: still one barrier a row.  2 x VPT
// x 4 registers of row a thread: VPT = 8 at MINB = 1 (128 registers, no
// spills at 512 threads) or VPT = 4 at MINB = 2 (72).  PF is not used
// there (the next row is in registers already).  Measured, it loses
// every row: 42.7-56.9% of copy against PIPE = 0's 65-82% (H200,
// 2026-11-28T11:26Z, bench/layernorm_cluster_h200.txt): one block an SM
// (MINB = 1) or a cluster of 16 is worse than what the overlap gains, so
// bench/gallery.py does not run it.
// LOOK = 0 (PIPE = 1): the next row's slice loaded after this row's output,
// not before its sums (no second VPT registers: MINB = 2 at VPT = 8).
// WSM = 1 (PIPE = 1): each block copies its window of w and b (the aligned
// vectors g0 .. g0 + PER of each, zero past N) into shared memory once, and
// every row's output reads them there, shifted by the row's head, instead
// of from L2 (at PIPE = 0 the window would be read from L2 once a row
// anyway).  The point: with w and b read from L2 every row, L2 carries
// twice the DRAM traffic (H200 profile at 4096 x 200003: L2 80% busy at
// 60% of DRAM), and the output's loads are L2 round trips after the
// cluster's wait.
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
// Four blocks an SM (MINB = 4 at twice the cluster, 224-256 threads) lead
// at two rows: with the window at f32 8192 x 50257 (80% of copy), without
// it at bf16 4096 x 131072 (85%).  LOOK = 1 with the window loses at every
// row (51-66%): twice the registers mean one block an SM or half the slice.
// Tried and taken out (f51c91f has it): EDGE = 1, the head's and tail's
// x loaded with the slice and their w and b from a block copy of the first
// and last columns, so ranks 0 and CLUSTER - 1 make no L2 round trip after
// the exchange: CORRECT (36 checks, two memchecks clean) and 1-2% slower
// at every odd row (H200, 2026-11-29T01:20Z: 4096 x 200003 f32 1866 ->
// 1902 us, bf16 985 -> 995; the 8192 x 50257 rows alike).
// So was XW = 1 (0d750ca has it): the wait on the peers' messages at cta
// scope (no CCTL.IVALL, the L1 invalidation .acquire.cluster costs) with a
// suspend-time hint (kbench profile --hot counts about 60 polls a warp a
// row without it): within 0.7% either way at six rows (2026-11-29T01:25Z).
// What the hot spots show at 4096 x 200003 (H200, --hot, 01:22Z and
// 01:28Z): 16% of stall samples (23% in f32, 16 ranks) wait for the peers'
// messages and 13% (14%) at the block barrier before the exchange; the
// rest is the loads' latency.  Both blocks of an SM wait at once that
// often: the row is exchanged in lock step, and two blocks an SM cannot
// always cover each other's wait.
// UNP = 1 (the default): each bf16 unpacked as its word shifted left 16
// or masked to its upper half (a bf16 is a float's upper half), where
// cuda_bf16.h's __bfloat1622float2 is inline asm on 16-bit registers that
// costs a PRMT to split each word before the shift.  The kernel issues 23
// instructions a bf16 element at 4096 x 200003 (kbench profile --hot), and
// two blocks an SM are 62% of the issue slots with not_selected the second
// stall: fewer instructions are time here.  H200, 2026-11-29T01:36Z
// (bench/layernorm_wsm_h200.txt, twelfth run): 4096 x 200003 980 -> 944 us
// (78 -> 81% of copy, twice), 8192 x 50257 473 -> 458 (81 -> 84%),
// 131072 and 262144 0.7% and 1.2% faster.
// FZ = 1 (the default): the output's (x - mean) * rstd as one fma, x *
// rstd + (-mean * rstd), then * w + b as another: two float instructions
// an element, not three (7.6% fewer PTX instructions at the window's
// shape).  On the H200 (2026-11-29T01:05Z, bench/layernorm_wsm_h200.txt,
// twelfth run) it is faster at every row timed: 4096 x 200003 with the
// window 1004 -> 985 us (76 -> 77% of copy; 979 us, 78%, at VPT = 7 x
// 448), 0.2-0.7% at 8192 x 50257, 4096 x 131072 and 262144.  Rounding
// -mean * rstd costs |mean| * rstd * 2^-24 in the normalised value, which
// a bf16 output keeps to 2^-8 (see norm8); FZ = 0 is the three-step form.
// Output: (x - mean) * rstd * w + b, w and b from L2 (a block's columns are
// the same in every row: L2 hits after the first cluster), two aligned
// uint4 shifted by the row's head at compile time (the loop written once
// for each head 0..7, layernorm_bf16_aligned.cu's OUT = 1), or load8's
// run-time shift where w or b is off 16 bytes.
//
//! kernel  layernorm_bf16
//! arg     M = 8192
//! arg     N = 50257
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! in      b : bf16[N] = randn(seed=3)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, PIPE * (WAVE + (1 - min(WAVE, 1)) * sm_count * MINB / CLUSTER) + (1 - PIPE) * M) * CLUSTER) block=(THREADS) smem=(WSM * 32 * ((N / 8 + CLUSTER - 1) / CLUSTER + 1))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 32771
//! require (N / 8 + CLUSTER - 1) / CLUSTER <= THREADS * VPT   // a rank's slice in registers
//! tune    CLUSTER = 4, 2, 8, 16
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
//! tune    FZ = 1, 0
//! tune    UNP = 1, 0

#include <cuda_bf16.h>

#ifndef CLUSTER
#define CLUSTER 4 /* blocks a row (16: kbench allows the non-portable size) */
#endif
#ifndef THREADS
#define THREADS 416 /* 13 warps x 4 uint4 hold 50257 / 4 ranks */
#endif
#ifndef VPT
#define VPT 4 /* uint4 (8 bf16) a thread */
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
#ifndef UNP
#define UNP 1 /* 1: bf16 unpacked by a shift or a mask of its word, not cuda_bf16.h's conversion */
#endif
#ifndef FZ
#define FZ 1 /* 1: (x - mean) * rstd as one fma, x * rstd + (-mean * rstd): two float ops an element, not three */
#endif
static_assert(PIPE || (LOOK == 1 && WSM == 0), "LOOK and WSM: with PIPE = 1 (persistent clusters)");
#define WARPS (THREADS / 32)
#define PER(N) (((N) / 8 + CLUSTER - 1) / CLUSTER) /* uint4 of a row a rank, at most */
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

/* The 8 bf16 of u as floats.  UNP = 1: a bf16 is a float's upper half, so
 * each is one shift or one mask of its word (cuda_bf16.h's conversion is
 * inline asm on a 16-bit register: a PRMT to split the word, then the
 * shift, two instructions an element the compiler cannot merge). */
__device__ void unpack8(uint4 u, float *f)
{
#if UNP
	const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
	for (int j = 0; j < 4; j++)
		f[2 * j] = __uint_as_float(w[j] << 16), f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
#else
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++) {
		float2 t = __bfloat1622float2(h[j]);
		f[2 * j] = t.x, f[2 * j + 1] = t.y;
	}
#endif
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

/* The 8 bf16 from element H (a constant, 0..7) of the 16 at a, c. */
template <int H>
__device__ uint4 shift8(uint4 a, uint4 c)
{
	const unsigned u[8] = {a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w};
	unsigned r[4];
#pragma unroll
	for (int k = 0; k < 4; k++)
		r[k] = H % 2 ? (u[k + H / 2] >> 16) | (u[k + H / 2 + 1] << 16) : u[k + H / 2];
	return make_uint4(r[0], r[1], r[2], r[3]);
}

/* The 8 bf16 from w[8 * j + H] on (w 16-byte aligned; H a constant):
 * aligned uint4 j and, where H > 0, j + 1 (or only its first H elements
 * where it would reach past N), shifted by H elements. */
template <int H>
__device__ uint4 wvec(const __nv_bfloat16 *w, int j, int N)
{
	const uint4 a = __ldg((const uint4 *)w + j);
	if (H == 0)
		return a;
	const int e = 8 * j + 8;
	uint4 c;
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
	return shift8<H>(a, c);
}

/* (x - mean) * rstd * w + b of 8 packed bf16, w and b packed.  FZ = 1
 * rounds -mean * rstd once a row: an error of |mean| * rstd * 2^-24 in
 * (x - mean) * rstd, where a bf16 output keeps 2^-8 of it (a bf16 input
 * whose |mean| / std passes 2^8 no longer resolves its deviations). */
__device__ uint4 norm8(uint4 x, uint4 w, uint4 b, float mean, float rstd)
{
	float f[8], g[8], c[8];
	unpack8(x, f);
	unpack8(w, g);
	unpack8(b, c);
#pragma unroll
	for (int j = 0; j < 8; j++)
#if FZ
		f[j] = fmaf(fmaf(f[j], rstd, -mean * rstd), g[j], c[j]);
#else
		f[j] = (f[j] - mean) * rstd * g[j] + c[j];
#endif
	return pack8(f);
}

/* This thread's vectors of the row (row vector g0 + t + k * THREADS, the
 * first ng of the rank's) normalised and stored at obody, the row's head H;
 * WSM = 1: w and b from the block's windows ww and bw (fill_window). */
template <int H>
__device__ void out_body(const uint4 *v, uint4 *obody, const __nv_bfloat16 *w, const __nv_bfloat16 *b,
			 const uint4 *ww, const uint4 *bw, int g0, int ng, int N, float mean, float rstd)
{
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * THREADS, gi = g0 + i;
		if (i < ng)
#if WSM
			__stcs(obody + gi, norm8(v[k], shift8<H>(ww[i], ww[i + 1]), shift8<H>(bw[i], bw[i + 1]), mean, rstd));
#else
			__stcs(obody + gi, norm8(v[k], wvec<H>(w, gi, N), wvec<H>(b, gi, N), mean, rstd));
#endif
	}
}

#if WSM
/* Vectors g0 .. g0 + PER of the array a (N bf16) into win (PER + 1 uint4),
 * zero past N: a row's vector g0 + i, whatever its head, finds its w in
 * win[i] and win[i + 1].  Whole uint4 where a is 16-byte aligned. */
__device__ void fill_window(uint4 *win, const __nv_bfloat16 *a, int g0, int N)
{
	for (int i = threadIdx.x; i <= PER(N); i += THREADS) {
		const int e = 8 * (g0 + i);
		if (((size_t)a & 15) == 0 && e + 8 <= N) {
			win[i] = __ldg((const uint4 *)a + g0 + i);
		} else {
			const unsigned short *h = (const unsigned short *)a;
			unsigned u[4] = {0, 0, 0, 0};
#pragma unroll
			for (int c = 0; c < 8; c++)
				if (e + c < N)
					u[c / 2] |= (unsigned)h[e + c] << (16 * (c % 2));
			win[i] = make_uint4(u[0], u[1], u[2], u[3]);
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

__device__ slice slice_of(const __nv_bfloat16 *row, const __nv_bfloat16 *out, int N, int rank)
{
	slice s;
	s.head = ((size_t)row ^ (size_t)out) & 15 ? N : head_of(row, N);
	s.nv = (N - s.head) / 8;
	s.g0 = rank * PER(N);
	s.ng = max(0, min(s.nv - s.g0, PER(N)));
	return s;
}

/* Row r's slice of this rank into v (its vectors g0 + t + k * THREADS,
 * zero past the slice) and the row's elements 0, (N - 1) / 2 and twice that
 * (the shift K's candidates) into k3. */
__device__ void load_slice(const __nv_bfloat16 *x, const __nv_bfloat16 *y, size_t r, int N, int rank, uint4 *v, float *k3)
{
	const __nv_bfloat16 *row = x + r * N;
	const slice s = slice_of(row, y + r * N, N, rank);
	const uint4 *body = (const uint4 *)(row + s.head);
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * THREADS;
		v[k] = i < s.ng ? __ldcs(body + s.g0 + i) : make_uint4(0, 0, 0, 0);
	}
	k3[0] = __bfloat162float(row[0]), k3[1] = __bfloat162float(row[(N - 1) / 2]), k3[2] = __bfloat162float(row[(N - 1) / 2 * 2]);
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
	const char *row = (const char *)x + ahead * N * 2;
	const char *lo = row + (size_t)rank * PER(N) * 16, *hi = row + (size_t)N * 2;
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
layernorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	       const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y, int M, int N)
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
	uint4 v[VPT];
	float k3[3];
	load_slice(x, y, r, N, rank, v, k3);
#if WSM
	/* this block's windows of w and b, read after the loop's first __syncthreads */
	extern __shared__ uint4 win[];
	const uint4 *ww = win, *bw = win + PER(N) + 1;
	fill_window(win, w, rank * PER(N), N);
	fill_window(win + PER(N) + 1, b, rank * PER(N), N);
#else
	const uint4 *ww = NULL, *bw = NULL;
#endif
	for (int it = 0; r < (size_t)M; it++) {
		const __nv_bfloat16 *row = x + r * N;
		__nv_bfloat16 *out = y + r * N;
		const slice s = slice_of(row, out, N, rank);
		const int head = s.head, n8 = s.nv, tail = N - head - 8 * n8, g0 = s.g0, ng = s.ng;
#if PIPE && LOOK
		/* the next row's slice, in flight through this row's sums, exchange and output */
		uint4 nv[VPT];
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
			for (int i = t; i < head; i += THREADS) { /* up to 7, or the row */
				const float d = __bfloat162float(row[i]) - K;
				s1 += d, s2 += d * d;
			}
		const bool mytail = rank == CLUSTER - 1 && t < tail;
		const float tv = mytail ? __bfloat162float(row[head + 8 * n8 + t]) : 0.0f;
		if (mytail)
			s1 += tv - K, s2 += (tv - K) * (tv - K);
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			if (t + k * THREADS < ng) {
				float f[8];
				unpack8(v[k], f);
#pragma unroll
				for (int j = 0; j < 8; j++) {
					const float d = f[j] - K;
					s1 += d, s2 += d * d;
				}
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
				asm volatile("prefetch.global.L1 [%0];" ::"l"((const uint4 *)w + g0 + t + k * THREADS));
				asm volatile("prefetch.global.L1 [%0];" ::"l"((const uint4 *)b + g0 + t + k * THREADS));
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
		uint4 *obody = (uint4 *)(out + head);
		if (ng > 0 && (WSM || (((size_t)w | (size_t)b) & 15) == 0)) {
			switch (head) {
			case 0: out_body<0>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 1: out_body<1>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 2: out_body<2>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 3: out_body<3>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 4: out_body<4>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 5: out_body<5>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			case 6: out_body<6>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			default: out_body<7>(v, obody, w, b, ww, bw, g0, ng, N, mean, rstd); break;
			}
		} else {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				const int i = t + k * THREADS, gi = g0 + i;
				if (i < ng)
					__stcs(obody + gi, norm8(v[k], load8(w + head + 8 * gi, w, w + N),
								 load8(b + head + 8 * gi, b, b + N), mean, rstd));
			}
		}
		if (rank == 0)
			for (int i = t; i < head; i += THREADS)
				out[i] = __float2bfloat16_rn((__bfloat162float(row[i]) - mean) * rstd * __bfloat162float(w[i]) +
							     __bfloat162float(b[i]));
		if (mytail) {
			const int i = head + 8 * n8 + t;
			out[i] = __float2bfloat16_rn((tv - mean) * rstd * __bfloat162float(w[i]) + __bfloat162float(b[i]));
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
