// LayerNorm forward over long rows of bf16 at any width (statistics in f32):
// softmax/softmax_bf16_ring.cu's ring.  Each block's slice of a row comes
// in by bulk copies (cp.async.bulk) into a ring of NSLOT chunks of shared
// memory, fed by a producer warp that runs ahead of the rows, so DRAM never
// waits on a row's statistics, their exchange or the stores.
//
// Why a ring: layernorm_bf16_aligned.cu holds a row in registers, one block
// a row; at 8192 x 50257 (VPT = 8, 800 threads, one block an SM) the next
// row is not requested until this one's two block reductions and stores are
// done, 57% of copy on an H100 (2026-11-28, bench/gallery_new_kernels_h100.txt);
// 03_bulk.cu's one slice in flight gives the f32 rows 63%.  Here a slice is
// cut into chunks of THREADS * U uint4 (16 KiB at 512 x 2), only the last
// one part full, and the producer copies chunk after chunk, of this row and
// then the next, into whichever slots the consumers have released.  The
// chunk, not the row, is the unit of padding: a thread skips what is past
// the slice.
//
// Statistics: (count, mean, M2) a thread, Welford's update a chunk at a
// time: the chunk's U uint4 are in registers, so their mean and the squares
// about it are two passes over registers, merged into the thread's running
// triple by Chan's formula; then merged the same way in the warp, the block
// and across the cluster (03_bulk.cu's exchange: the triple and the next
// row in one float4, st.async into each peer's receive slots).  Not
// (sum, sum of squares): the variance would be their difference, which
// loses all its digits in f32 when |mean| is large beside the deviation
// (rows of activations with an offset, N = 200003 terms); Chan's merge
// costs a division a chunk a thread, nothing beside the copy.
//
// One block an SM (NSLOT * 16 KiB = 208 KiB of shared memory), THREADS
// consumer threads plus one producer warp.  Per row, the consumers
//   1. wait for each chunk (its mbarrier, `full`) and fold it into their
//      (count, mean, M2);
//   2. merge the triples in the block (named barrier 1: the producer warp
//      is not in it) and across the cluster (one mbarrier a parity);
//   3. read each chunk again for the output, (x - mean) * rstd * w + b with
//      w and b read from global memory (L2; 8 of them are two aligned uint4
//      shifted by the row's offset, layernorm_bf16_aligned.cu's load8),
//      16-byte streaming stores, and release the slot (mbarrier `empty`,
//      one arrival a consumer warp).
// Rows are taken from a counter in global memory (rank 0 takes the row
// after next each row and sends it with its triple), so clusters that do
// not fit on the GPU at once cost nothing; warp 0 hands each row number to
// the producer two rows ahead (a slot and an mbarrier a parity).
// Any width: a row's whole uint4 from its first 16-byte boundary are split
// among the ranks; the head (rank 0) and the tail of up to 7 elements (the
// last rank) are read by the producer warp's lanes when it starts the row
// and left beside the row's last chunk (`edge`).  Output rows aligned
// unlike the input are stored element by element.
// CLUSTER: the smallest with a slice of at most 8 chunks (1 at 50257 and
// 65536, 2 at 131072, 4 at 200003 and 262144); `require` says what fits.
// WS = 1: w and b come from shared memory instead of L2.  Reading them from
// L2 every row is twice the row's own bytes again (three bytes from L2 for
// each byte from DRAM, where RMSNorm's one weight makes it two); with
// WS = 1 each block keeps the window of w and b its slices can touch
// (PER + 1 uint4 of each, a rank's slice starting at the same uint4 in
// every row) after the ring, filled once, and a row's 8 weights are two
// uint4 of it shifted by the row's head.  The window must fit beside the
// ring: NSLOT = 9 and a cluster with PER <= 2048 (64 KiB of weights: 4 at
// 50257 and 65536, 8 at 131072, 16 at 200003 and 262144).  Which is faster
// is the GPU's to say: the gallery runs both.
// OUT = 1 and STATS = 1: 04_ring.cu's (issue 31, bench/layernorm_accounting.txt:
// this ring issues 45 instructions an element, 143% of what the copy time
// leaves an SM, where softmax_bf16_ring.cu issues 17).  OUT = 1 writes the
// output loop once for each head (0..7), w and b two aligned uint4 each
// shifted at compile time, every load issued before any is used (w and b
// 16-byte aligned, WS = 0); STATS = 1 sums x - K and its square a thread
// (K its first element of the row), the triple once a row.
// PF = 1 and WS = 1 with OUT = 1: 04_ring.cu's (w and b a chunk ahead in
// registers, the next row's first chunk's during this row's last; or the
// window at compile-time heads).
// SUMS = 1: 04_ring.cu's (one shift K a row from the producer, the median
// of three elements; sums added in the reductions, RMSNorm's protocol).
//
//! kernel  layernorm_bf16
//! arg     M = 8192
//! arg     N = 50257
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! in      b : bf16[N] = randn(seed=3)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16 + WS * 32 * ((N / 8 + CLUSTER - 1) / CLUSTER + 1))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require (N / 8 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! require NSLOT * THREADS * U * 16 + WS * 32 * ((N / 8 + CLUSTER - 1) / CLUSTER + 1) <= 225 * 1024   // with the weights
//! tune    CLUSTER = 1, 2, 4, 8, 16
//! tune    THREADS = 512, 256, 992   // plus the producer warp: at most 1024
//! tune    U = 2, 1
//! tune    NSLOT = 13, 12, 8, 9
//! tune    WS = 0, 1
//! tune    OUT = 0, 1
//! tune    STATS = 0, 1
//! tune    SUMS = 0, 1
//! tune    PF = 0, 1

#include <cooperative_groups.h>
#include <cuda_bf16.h>

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
#define CH (THREADS * U)     /* uint4 a chunk */
#define WARPS (THREADS / 32) /* consumer warps; the producer is warp WARPS */
#define PER(N) (((N) / 8 + CLUSTER - 1) / CLUSTER) /* uint4 of a row a rank, at most */

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

__device__ float2 bf2(unsigned u)
{
	return __bfloat1622float2(*(const __nv_bfloat162 *)&u);
}

__device__ unsigned pack2(float a, float b)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(a, b);
	return *(unsigned *)&h;
}

/* The 8 bf16 from element h (0..7) of the 16 at a, b. */
__device__ uint4 shift8(uint4 a, uint4 b, unsigned h)
{
	unsigned u[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}, o[5], r[4];
	const unsigned d = h / 2; /* whole words, then half a word */
#pragma unroll
	for (int k = 0; k < 5; k++)
		o[k] = d == 0 ? u[k] : d == 1 ? u[k + 1] : d == 2 ? u[k + 2] : u[k + 3];
#pragma unroll
	for (int k = 0; k < 4; k++)
		r[k] = h & 1 ? (o[k] >> 16) | (o[k + 1] << 16) : o[k];
	return make_uint4(r[0], r[1], r[2], r[3]);
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
	if ((const char *)q >= (const char *)lo && (const char *)(q + 2) <= (const char *)hi)
		return shift8(__ldg(q), __ldg(q + 1), mis / 2);
	uint4 v;
	__nv_bfloat16 *h = (__nv_bfloat16 *)&v;
#pragma unroll
	for (int j = 0; j < 8; j++)
		h[j] = p[j];
	return v;
}

/* Where a row of N at p splits: head elements to its first 16-byte boundary,
 * n8 whole uint4 and tail elements after them; this rank's share of the
 * uint4, ng from g0, in nc chunks (at least one, which carries the edges).
 * Every row's g0 is the same (rank * PER(N)), whatever its head. */
struct Split {
	int head, n8, tail, g0, ng, nc;
};

__device__ Split split(const __nv_bfloat16 *p, int N, int rank)
{
	Split s;
	s.head = min(N, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 2);
	s.n8 = (N - s.head) / 8;
	s.tail = N - s.head - 8 * s.n8;
	const int per = PER(N);
	s.g0 = rank * per;
	s.ng = max(0, min(s.n8 - s.g0, per));
	s.nc = max(1, (s.ng + CH - 1) / CH);
	return s;
}

/* The producer warp: row after row (the first two from `first`, then as
 * warp 0 hands them over in rowid), each chunk of this rank's slice into the
 * next slot once the consumers have released it; lanes 0..15 read the head
 * (rank 0) and the tail (the last rank), which lane 0 leaves beside the last
 * (0 where there is none: the consumers know which are there from split). */
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
		float e = 0.0f; /* in flight while the chunks are issued */
		if (lane < 8 && rank == 0 && lane < s.head)
			e = __bfloat162float(__ldcs(in + lane));
		if (lane >= 8 && lane < 16 && rank == CLUSTER - 1 && lane - 8 < s.tail)
			e = __bfloat162float(__ldcs(in + s.head + 8 * s.n8 + lane - 8));
#if SUMS
		if (lane >= 16 && lane < 19) /* K's candidates: elements 0, (N - 1) / 2 and twice that */
			e = __bfloat162float(__ldg(in + (lane - 16) * ((N - 1) / 2)));
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
				bulk_load(smem(ring + slot * (CH * 16)), in + s.head + 8 * (s.g0 + c * CH), 16 * max(n, 0),
					  smem(&full[slot]));
			}
		}
	}
}

#if OUT
/* (v - mean) * rstd * w + b for the 8 bf16 of v, w and b, stored at uint4
 * gi of o: one 16-byte streaming store, or element by element where the
 * output row is aligned unlike the input (ovec false): the loop in the
 * kernel's step 3, written out there so that OUT = 0 compiles as before. */
__device__ void norm_store(__nv_bfloat16 *o, int gi, uint4 v, uint4 gw, uint4 gb, float mean, float rstd, bool ovec)
{
	unsigned xv[4] = {v.x, v.y, v.z, v.w};
	const unsigned wv[4] = {gw.x, gw.y, gw.z, gw.w}, bv[4] = {gb.x, gb.y, gb.z, gb.w};
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const float2 f = bf2(xv[j]), fw = bf2(wv[j]), fb = bf2(bv[j]);
		xv[j] = pack2(fmaf((f.x - mean) * rstd, fw.x, fb.x), fmaf((f.y - mean) * rstd, fw.y, fb.y));
	}
	if (ovec) {
		__stcs((uint4 *)o + gi, make_uint4(xv[0], xv[1], xv[2], xv[3]));
	} else {
#pragma unroll
		for (int j = 0; j < 8; j++)
			((unsigned short *)o)[8 * gi + j] = (unsigned short)(xv[j / 2] >> (16 * (j % 2)));
	}
}

/* The 8 bf16 from element H (a constant: a choice of registers, and a
 * funnel shift a word where H is odd) of the 16 at a, c. */
template <int H>
__device__ uint4 shiftc(uint4 a, uint4 c)
{
	const unsigned u[8] = {a.x, a.y, a.z, a.w, c.x, c.y, c.z, c.w};
	unsigned r[4];
#pragma unroll
	for (int k = 0; k < 4; k++)
		r[k] = H % 2 ? __funnelshift_r(u[k + H / 2], u[k + H / 2 + 1], 16) : u[k + H / 2];
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

#if WS
#define OUT_EXTRA , const uint4 *ww, const uint4 *wb
#define OUT_ARGS , ww, wb
#elif PF
/* A vector's weights before the shift: aligned uint4 j of w and of b and
 * the next (where it would reach past N, its elements inside w, 0 past N):
 * the same in every row, whatever its head. */
struct Wt {
	uint4 wa, wc, ba, bc;
};

__device__ uint4 next8(const __nv_bfloat16 *w, int j, int N)
{
	const int e = 8 * j + 8;
	if (e + 8 <= N)
		return __ldg((const uint4 *)w + j + 1);
	const unsigned short *h = (const unsigned short *)w + e;
	unsigned v[4] = {0, 0, 0, 0};
#pragma unroll
	for (int k = 0; k < 7; k++)
		if (e + k < N)
			v[k / 2] |= (unsigned)h[k] << (16 * (k % 2));
	return make_uint4(v[0], v[1], v[2], v[3]);
}

__device__ Wt wt_load(const __nv_bfloat16 *w, const __nv_bfloat16 *b, int j, int N)
{
	Wt r;
	r.wa = __ldg((const uint4 *)w + j);
	r.ba = __ldg((const uint4 *)b + j);
	r.wc = next8(w, j, N);
	r.bc = next8(b, j, N);
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
 * element), releasing each slot.  Element head + 8 * (g0 + gi) of w is
 * uint4 g0 + gi's element H.  WS = 1: w and b from the window (ww, wb);
 * PF = 1: from pw, each chunk's as loaded during the one before (the
 * first's during the statistics), the next chunk's (or the next row's
 * first) loaded in their place. */
template <int H>
__device__ void out_pass(const unsigned char *ring, unsigned q, const Split &s, float mean, float rstd,
			 const __nv_bfloat16 *w, const __nv_bfloat16 *b, __nv_bfloat16 *o, bool ovec, int N,
			 unsigned long long *empty OUT_EXTRA)
{
	const int t = threadIdx.x;
	for (int c = 0; c < s.nc; c++) {
		const unsigned sl = (q + c) % NSLOT;
		const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
		uint4 gw[U], gb[U], v[U];
#if WS
#pragma unroll
		for (int k = 0; k < U; k++) { /* the window: uint4 gi and gi + 1 of w and of b */
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
			if (gi < s.ng)
				norm_store(o, gi, v[k], gw[k], gb[k], mean, rstd, ovec);
		}
		__syncwarp();
		if (t % 32 == 0) /* this warp has read the slot */
			bar_arrive(smem(&empty[sl]));
	}
}
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
layernorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	       const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH uint4 */
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
		/* this rank's window of w and b, elements 8 * g0 .. 8 * (g0 + PER + 1) of
		 * each (0 past N): a row's uint4 gi has its 8 weights in window uint4 gi
		 * and gi + 1, from element `head` on */
		uint4 *ww = (uint4 *)(ring + NSLOT * (CH * 16)), *wb = ww + PER(N) + 1;
		{
			const int e0 = 8 * rank * PER(N), n = 8 * (PER(N) + 1);
			const __nv_bfloat16 zero = __float2bfloat16(0.0f);
			for (int i = t; i < n; i += THREADS) {
				((__nv_bfloat16 *)ww)[i] = e0 + i < N ? w[e0 + i] : zero;
				((__nv_bfloat16 *)wb)[i] = e0 + i < N ? b[e0 + i] : zero;
			}
			consumers_sync();
		}
#elif OUT && PF
		/* the weights of the first chunk of every row (the same vectors: a
		 * rank's slice starts at uint4 g0 whatever the row's head), each
		 * vector clamped to jlim, the last whole uint4 of w in the slice */
		const int jlim = min(rank * PER(N) + PER(N), N / 8) - 1;
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
			const __nv_bfloat16 *in = x + (size_t)row * N;
			const Split s = split(in, N, rank);
			/* this thread's head and tail element, if it has them */
			const bool hok = rank == 0 && t < s.head, tok = rank == CLUSTER - 1 && t < s.tail;
			float hv = 0.0f, tv = 0.0f;
			/* 1. the running (count, mean, M2) of this thread's part of each chunk */
			float3 p = none;
#if SUMS
			/* the head's and tail's w and b, in flight through the statistics */
			const int ti = s.head + 8 * s.n8 + t;
			const float wh = hok ? __bfloat162float(w[t]) : 0.0f, bh = hok ? __bfloat162float(b[t]) : 0.0f;
			const float wt = tok ? __bfloat162float(w[ti]) : 0.0f, bt = tok ? __bfloat162float(b[ti]) : 0.0f;
			float kk = 0.0f; /* the row's K */
#endif
#if STATS || SUMS
			/* or: the count, the sum of x - k and of its square (k the thread's
			 * first vector element of the row, 0 if it has none), the triple
			 * once at the end; the padding is left out.  SUMS = 1 (RMSNorm's
			 * protocol, 04_ring.cu's): k the row's K, the same in every rank
			 * (the producer's, beside the first chunk), the sums added as they
			 * are in the warp, the block and the cluster (comb) */
			{
				float n1 = 0.0f, s1 = 0.0f, s2 = 0.0f, k0 = 0.0f;
				for (int c = 0; c < s.nc; c++) {
					const unsigned sl = (q + c) % NSLOT;
					bar_wait(smem(&full[sl]), ((q + c) / NSLOT) & 1);
					const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
#if SUMS
					if (c == 0)
						k0 = edge[sl][7];
#else
					if (c == 0 && t < s.ng)
						k0 = bf2(buf[t].x).x;
#endif
#pragma unroll
					for (int k = 0; k < U; k++) {
						if (c * CH + t + k * THREADS >= s.ng)
							continue;
						const uint4 v = buf[t + k * THREADS];
						const unsigned u[4] = {v.x, v.y, v.z, v.w};
						float a1 = 0.0f;
#pragma unroll
						for (int j = 0; j < 4; j++) {
							const float2 f = bf2(u[j]);
							const float d0 = f.x - k0, d1 = f.y - k0;
							a1 += d0 + d1;
							s2 = fmaf(d0, d0, fmaf(d1, d1, s2));
						}
						n1 += 8.0f;
						s1 += a1;
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
				const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
				unsigned u[4 * U];
				float cnt = 0.0f, sum = 0.0f;
#pragma unroll
				for (int k = 0; k < U; k++) {
					const bool ok = c * CH + t + k * THREADS < s.ng;
					uint4 v = ok ? buf[t + k * THREADS] : make_uint4(0, 0, 0, 0);
					u[4 * k] = v.x, u[4 * k + 1] = v.y, u[4 * k + 2] = v.z, u[4 * k + 3] = v.w;
					cnt += ok ? 8.0f : 0.0f;
				}
#pragma unroll
				for (int k = 0; k < 4 * U; k++) { /* the padding is 0: it adds nothing */
					const float2 f = bf2(u[k]);
					sum += f.x + f.y;
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
				for (int k = 0; k < 4 * U; k++) {
					if (c * CH + t + k / 4 * THREADS >= s.ng)
						continue;
					const float2 f = bf2(u[k]);
					m2 = fmaf(f.x - mc, f.x - mc, m2);
					m2 = fmaf(f.y - mc, f.y - mc, m2);
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
			__nv_bfloat16 *out = y + (size_t)row * N;
			const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
			__nv_bfloat16 *o = out + s.head + 8 * s.g0;
#if OUT
			if (wal && s.ng > 0) {
				switch (s.head) {
				case 0: out_pass<0>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				case 1: out_pass<1>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				case 2: out_pass<2>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				case 3: out_pass<3>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				case 4: out_pass<4>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				case 5: out_pass<5>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				case 6: out_pass<6>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				default: out_pass<7>(ring, q, s, mean, rstd, w, b, o, ovec, N, empty OUT_ARGS); break;
				}
			} else
#endif
			for (int c = 0; c < s.nc; c++) {
				const unsigned sl = (q + c) % NSLOT;
				const uint4 *buf = (const uint4 *)(ring + sl * (CH * 16));
#pragma unroll
				for (int k = 0; k < U; k++) {
					const int i = t + k * THREADS, gi = c * CH + i;
					if (gi < s.ng) {
#if WS
						const uint4 gw = shift8(ww[gi], ww[gi + 1], s.head), gb = shift8(wb[gi], wb[gi + 1], s.head);
#else
						const int e = s.head + 8 * (s.g0 + gi);
						const uint4 gw = load8(w + e, w, w + N), gb = load8(b + e, b, b + N);
#endif
						const uint4 v = buf[i];
						unsigned xv[4] = {v.x, v.y, v.z, v.w}, wv[4] = {gw.x, gw.y, gw.z, gw.w};
						unsigned bv[4] = {gb.x, gb.y, gb.z, gb.w};
#pragma unroll
						for (int j = 0; j < 4; j++) {
							const float2 f = bf2(xv[j]), fw = bf2(wv[j]), fb = bf2(bv[j]);
							xv[j] = pack2(fmaf((f.x - mean) * rstd, fw.x, fb.x),
								      fmaf((f.y - mean) * rstd, fw.y, fb.y));
						}
						if (ovec) {
							__stcs((uint4 *)o + gi, make_uint4(xv[0], xv[1], xv[2], xv[3]));
						} else {
#pragma unroll
							for (int j = 0; j < 8; j++)
								((unsigned short *)o)[8 * gi + j] = (unsigned short)(xv[j / 2] >> (16 * (j % 2)));
						}
					}
				}
				__syncwarp();
				if (lane == 0) /* this warp has read the slot */
					bar_arrive(smem(&empty[sl]));
			}
#if SUMS
			if (hok)
				out[t] = __float2bfloat16_rn(fmaf((hv - mean) * rstd, wh, bh));
			if (tok)
				out[ti] = __float2bfloat16_rn(fmaf((tv - mean) * rstd, wt, bt));
#else
			if (hok)
				out[t] = __float2bfloat16_rn(
					fmaf((hv - mean) * rstd, __bfloat162float(w[t]), __bfloat162float(b[t])));
			if (tok) {
				const int i = s.head + 8 * s.n8 + t;
				out[i] = __float2bfloat16_rn(
					fmaf((tv - mean) * rstd, __bfloat162float(w[i]), __bfloat162float(b[i])));
			}
#endif
			q += s.nc;
			row = after;
			after = next_after;
		}
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
