// LayerNorm forward over long and odd-width rows of f32, ROWS rows a
// cluster: 06_cluster.cu (a cluster of CLUSTER blocks a row, each block's
// slice of the row in registers; its comment says how the slices, heads,
// tails and statistics go) with each vector of w and b read once for 2 or
// 4 rows (issue 31).  Past a block's slice every vector of w and b comes
// from L2 (a long row's weights do not stay in L1), so 06_cluster.cu moves
// a row's x from DRAM and twice as many bytes of w and b from L2.  With
// the weights' reads left out the same ring reads 90-95% of copy, with
// them 56-71% (bench/layernorm_ring3_h200.txt, W0 and W1), and the best
// LayerNorm kernels sit at 68-78% at the long odd rows where softmax's sit
// at 83-94%.  05_pair.cu tried two rows a pass on 04_ring.cu's ring when
// that ring was bound by its instruction stream (36-42%,
// bench/layernorm_accounting.txt); this is the same idea on the kernel
// that now leads.
// ROWS = 2 (or 4): cluster c normalises rows c / APART * ROWS APART + c %
// APART and every APART after it, ROWS of them.  Rows APART = 4 apart start
// at one offset from a 16-byte boundary whatever N (4 rows of f32 are 16 N
// bytes), so the rows meet w and b at the same head and one shifted pair
// of loads serves them all; a row past M is neither loaded nor stored.  A
// block holds VPT float4 of each row, so ROWS = 2 at CLUSTER = 2 C and VPT
// = V / 2 holds what ROWS = 1 at C and V does, at the same registers (L2
// then moves 2 bytes of x, w and b for each of x from DRAM, ROWS = 4 1.5,
// where ROWS = 1 moves 3); ROWS = 1 is 06_cluster.cu at PIPE = 0 (the same
// arithmetic, for comparison in one file).
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min((M + 4 * ROWS - 1) / (4 * ROWS) * 4, M) * CLUSTER) block=(THREADS)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 32771
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= THREADS * VPT   // a rank's slice in registers
//! tune    CLUSTER = 8, 16, 4, 2
//! tune    THREADS = 416, 512, 256
//! tune    ROWS = 2, 4, 1
//! tune    VPT = 4, 8
//! tune    MINB = 2, 1
//! tune    PF = 0, 1
//! tune    PRE = 0, 1

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
#ifndef PRE
#define PRE 0 /* 1: this thread's w and b prefetched into L1 while the cluster's pairs are waited for */
#endif
#ifndef ROWS
#define ROWS 2 /* rows a cluster (2: w and b read once for both) */
#endif
#define WARPS (THREADS / 32)
#define PER(N) (((N) / 4 + CLUSTER - 1) / CLUSTER) /* float4 of a row a rank, at most */
#define APART 4 /* ROWS = 2, 4: a cluster's rows r, r + APART, ... (one head) */
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS: whole warps, at most 1024");
static_assert(ROWS == 1 || ROWS == 2 || ROWS == 4, "ROWS: 1, 2 or 4");

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

/* This thread's vectors of the cluster's rows (row vector g0 + t + k *
 * THREADS, the first ng of the rank's) normalised and stored at obody[q],
 * the rows' head H: each vector of w and b loaded once for the rows (the
 * others where live has their bit). */
template <int H>
__device__ void out_body(const float4 (*v)[VPT], float4 *const *obody, unsigned live, const float *w, const float *b,
			 int g0, int ng, int N, const float *mean, const float *rstd)
{
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * THREADS, gi = g0 + i;
		if (i < ng) {
			const float4 wv = wvec<H>(w, gi, N), bv = wvec<H>(b, gi, N);
#pragma unroll
			for (int q = 0; q < ROWS; q++)
				if (q == 0 || (live >> q & 1)) /* (q = 0 known at compile time: fewer registers) */
					__stcs(obody[q] + gi, norm4(v[q][k], wv, bv, mean[q], rstd[q]));
		}
	}
}

/* Cluster c's row q (ROWS = 2, 4: rows APART apart, one head; ROWS = 1: c). */
__device__ size_t row_of(size_t c, int q)
{
	return c / APART * (APART * ROWS) + c % APART + (size_t)q * APART;
}

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

#if PF
/* The rank's slices of the rows of the cluster one wave after cluster c
 * (as many as fit at once: MINB blocks on each SM, %nsmid's count), a
 * 128-byte line a thread, into L2: that cluster is launched when one of
 * this wave's leaves, and finds its loads in L2, so DRAM stays busy
 * through this wave's exchange and stores (a slice is PER vectors from the
 * rank's first, give or take the row's head and tail: 32 bytes more each
 * side). */
__device__ void prefetch_ahead(const void *x, size_t c, int M, int N, int rank)
{
	unsigned nsm;
	asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
	for (int q = 0; q < ROWS; q++) {
		const size_t ahead = row_of(c + nsm * MINB / CLUSTER, q);
		if (ahead >= (size_t)M)
			return;
		const char *row = (const char *)x + ahead * N * 4;
		const char *lo = row + (size_t)rank * PER(N) * 16, *hi = row + (size_t)N * 4;
		lo = lo - 32 > row ? lo - 32 : row;
		hi = lo + (size_t)PER(N) * 16 + 64 < hi ? lo + (size_t)PER(N) * 16 + 64 : hi;
		const char *a = (const char *)((size_t)lo & ~(size_t)127);
		for (const char *p = a + 128 * threadIdx.x; p < hi; p += 128 * THREADS)
			asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
	}
}
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	__shared__ float2 scratch[ROWS][WARPS];
	__shared__ float2 part[ROWS][CLUSTER]; /* each rank's (S1, S2) of each row, by rank */
#if CLUSTER > 1
	cg::cluster_group cluster = cg::this_cluster();
	const int rank = (int)cluster.block_rank();
	cluster_arrive_relaxed(); /* phase 1: this block has started */
#else
	const int rank = 0;
#endif
	const int t = threadIdx.x, lane = t % 32, warp = t / 32;
	const size_t c = blockIdx.x / CLUSTER;
	const size_t r = row_of(c, 0);
	if (r >= (size_t)M)
		return; /* (every block of the cluster: phase 1 has no waiter) */
	unsigned live = 1; /* bit q: the cluster's row q is before M (row 0, r, is) */
#pragma unroll
	for (int q = 1; q < ROWS; q++)
		live |= (unsigned)(row_of(c, q) < (size_t)M) << q;
	float4 v[ROWS][VPT];
	float k3[ROWS][3];
#if PF
	prefetch_ahead(x, c, M, N, rank); /* before the loads: nothing of them live yet */
#endif
#pragma unroll
	for (int q = 0; q < ROWS; q++)
		if (q == 0 || (live >> q & 1)) /* (q = 0 known at compile time: fewer registers) */
			load_slice(x, y, row_of(c, q), N, rank, v[q], k3[q]);
	const float *row[ROWS];
	float *out[ROWS];
#pragma unroll
	for (int q = 0; q < ROWS; q++) /* rows r, r + APART, ... */
		row[q] = x + (r + (size_t)q * APART) * N, out[q] = y + (r + (size_t)q * APART) * N;
	/* the rows' slices alike: rows APART apart start at one offset from 16 bytes */
	const slice s = slice_of(row[0], out[0], N, rank);
	const int head = s.head, n4 = s.nv, tail = N - head - 4 * n4, g0 = s.g0, ng = s.ng;
	const bool mytail = rank == CLUSTER - 1 && t < tail;
	float K[ROWS], tv[ROWS], s1[ROWS], s2[ROWS];
#pragma unroll
	for (int q = 0; q < ROWS; q++) {
		const float ka = k3[q][0], kb = k3[q][1], kc = k3[q][2];
		K[q] = fmaxf(fminf(ka, kb), fminf(fmaxf(ka, kb), kc)); /* the median of the three */
		s1[q] = 0.0f, s2[q] = 0.0f, tv[q] = 0.0f;
		if (q > 0 && !(live >> q & 1))
			continue;
		if (rank == 0)
			for (int i = t; i < head; i += THREADS) { /* up to 3, or the row */
				const float d = row[q][i] - K[q];
				s1[q] += d, s2[q] += d * d;
			}
		tv[q] = mytail ? row[q][head + 4 * n4 + t] : 0.0f;
		if (mytail)
			s1[q] += tv[q] - K[q], s2[q] += (tv[q] - K[q]) * (tv[q] - K[q]);
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			if (t + k * THREADS < ng) {
				const float d0 = v[q][k].x - K[q], d1 = v[q][k].y - K[q];
				const float d2 = v[q][k].z - K[q], d3 = v[q][k].w - K[q];
				s1[q] += (d0 + d1) + (d2 + d3);
				s2[q] += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
			}
		}
	}
#pragma unroll
	for (int q = 0; q < ROWS; q++) {
		for (int o = 16; o > 0; o /= 2) {
			s1[q] += __shfl_xor_sync(0xffffffff, s1[q], o);
			s2[q] += __shfl_xor_sync(0xffffffff, s2[q], o);
		}
		if (lane == 0)
			scratch[q][warp] = make_float2(s1[q], s2[q]);
	}
	__syncthreads();
#if CLUSTER > 1
	cluster_wait(); /* phase 1: every peer has started */
#endif
	if (warp == 0) {
		float2 p[ROWS];
#pragma unroll
		for (int q = 0; q < ROWS; q++) {
			p[q] = lane < WARPS ? scratch[q][lane] : make_float2(0.0f, 0.0f);
			for (int o = 16; o > 0; o /= 2) {
				p[q].x += __shfl_xor_sync(0xffffffff, p[q].x, o);
				p[q].y += __shfl_xor_sync(0xffffffff, p[q].y, o);
			}
		}
#if CLUSTER > 1
		if (lane < CLUSTER) { /* into block lane's part[rank] */
#pragma unroll
			for (int q = 0; q < ROWS; q++)
				*cluster.map_shared_rank(&part[q][rank], lane) = p[q];
		}
#else
		if (lane == 0) {
#pragma unroll
			for (int q = 0; q < ROWS; q++)
				part[q][0] = p[q];
		}
#endif
	}
#if CLUSTER > 1
	cluster_arrive(); /* phase 2: this block's pairs are in every peer */
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
	cluster_wait();
#else
	__syncthreads();
#endif
	float mean[ROWS], rstd[ROWS];
	float4 *obody[ROWS];
#pragma unroll
	for (int q = 0; q < ROWS; q++) {
		float S1 = 0.0f, S2 = 0.0f;
#pragma unroll
		for (int j = 0; j < CLUSTER; j++)
			S1 += part[q][j].x, S2 += part[q][j].y;
		const float m1 = S1 / N;
		mean[q] = K[q] + m1, rstd[q] = rsqrtf(fmaxf(S2 / N - m1 * m1, 0.0f) + 1e-5f);
		obody[q] = (float4 *)(out[q] + head);
	}
	if (ng > 0 && (((size_t)w | (size_t)b) & 15) == 0) {
		switch (head) {
		case 0: out_body<0>(v, obody, live, w, b, g0, ng, N, mean, rstd); break;
		case 1: out_body<1>(v, obody, live, w, b, g0, ng, N, mean, rstd); break;
		case 2: out_body<2>(v, obody, live, w, b, g0, ng, N, mean, rstd); break;
		default: out_body<3>(v, obody, live, w, b, g0, ng, N, mean, rstd); break;
		}
	} else {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			const int i = t + k * THREADS, gi = g0 + i;
			if (i < ng) {
				const float4 wv = load4(w + head + 4 * gi, w, w + N);
				const float4 bv = load4(b + head + 4 * gi, b, b + N);
#pragma unroll
				for (int q = 0; q < ROWS; q++)
					if (q == 0 || (live >> q & 1)) /* (q = 0 known at compile time: fewer registers) */
						__stcs(obody[q] + gi, norm4(v[q][k], wv, bv, mean[q], rstd[q]));
			}
		}
	}
#pragma unroll
	for (int q = 0; q < ROWS; q++) {
		if (q > 0 && !(live >> q & 1))
			continue;
		if (rank == 0)
			for (int i = t; i < head; i += THREADS)
				out[q][i] = (row[q][i] - mean[q]) * rstd[q] * w[i] + b[i];
		if (mytail) {
			const int i = head + 4 * n4 + t;
			out[q][i] = (tv[q] - mean[q]) * rstd[q] * w[i] + b[i];
		}
	}
}
