// LayerNorm forward over long and odd-width rows of f32 with w and b
// resident in shared memory (issue 31): 06_cluster.cu's row split (a
// cluster of CLUSTER blocks a row, each block's slice in registers), made
// persistent.  06_cluster.cu and the rings read w and b from L2 for every
// row, as many bytes as x: with them the ring reaches 56-71% of copy, the
// same ring without them 90-95% (bench/layernorm_ring3_h200.txt,
// bench/layernorm_accounting.txt).  Here a block's columns are the same in
// every row it does, so it loads its slice of w and b into shared memory
// once and then loops over rows: L2 sees w and b once a cluster, not once
// a row.
//
// Grid: about as many clusters as fit at once (sm_count x MINB / CLUSTER),
// cluster c doing rows c, c + G, ... c + (AHEAD - 1) G (G the clusters
// launched, AHEAD = PF + 2), then rows from AHEAD x G on from a counter
// (rows_taken: rank 0 takes the row AHEAD on and sends it to its peers
// with its pairs; the last cluster to leave sets the counters back to 0),
// so a cluster the GPU only places once another leaves (a cluster of 16
// needs 16 SMs of one GPC) does AHEAD rows, not M / G.  PF = 1 or 2: each
// rank also prefetches into L2 its slice of the row PF + 1 on, so PF more
// rows' bytes are in flight beside the next row's loads into registers
// (the emulator has no prefetch: GPU only; the rows' order is the same).
// Loads (06_cluster.cu's): float4 from the row's first 16-byte boundary,
// the head (up to 3 elements) read by rank 0, the tail (up to 3) by the
// last rank; vector gi of the row in rank gi / PER, PER = ceil((N / 4) /
// CLUSTER).  The next row's slice is issued into a second VPT registers at
// the top of a row, so it is in flight through this row's sums, the
// cluster's barrier and the output.  NB = 3: a third set, two rows in
// flight; the sets are passed to the row's code (a lambda) in turn, since
// a copy of a register that a load is still writing waits for the load
// (at NB = 2 the copy is kept: it is needed next anyway, and calling with
// the sets swapped spills).  ptxas gives a warp at most 128 registers when
// a sub-partition holds 4 of the block's warps (416 threads: 13 warps), so
// NB = 3 wants 384 threads (168 registers at VPT = 9, no spills).
// w and b in shared memory: the rank's elements 4 PER rank on, 4 (PER + 1)
// of each (zero past N), so that vector gi of a row whose head is H
// (0..3: it changes from row to row at an odd N) is two aligned float4
// shifted by H, never past the slice.  The head and tail read w and b from
// global memory.
// Statistics: 04_ring.cu's SUMS = 1 (the shift K, the median of the row's
// elements 0, (N - 1) / 2 and twice that; sums of x - K and its square).
// Each WARP stores its pair into every block's part[row parity][rank x
// WARPS + warp] (DSMEM), so the row needs no block barrier, only the
// cluster's one phase (arrive.release / wait.acquire); every warp then
// adds the CLUSTER x WARPS pairs in the same order (the same mean and rstd
// in every block).  Two part[] slots, by row parity, are enough with one
// barrier a row: a block stores row i + 2's pairs into a peer only after
// its wait of row i + 1, which completes only once that peer has arrived
// at row i + 1, after its reads of row i's pairs (and row i + 1's pairs go
// to the other slot).  The same holds for after[] (the row rank 0 took).
// A peer's shared memory is written only once it has started (the first
// phase, arrived on at the top); after the last row no block writes into
// another, so each leaves on its own.
// The emulator has no clusters (CLUSTER = 1 there: the barrier is a
// __syncthreads, the pairs a block's own).
//
// Measured (H200, 2026-11-28, bench/layernorm_resident_h200.txt, two runs of
// scripts/gpu-lnres.sh): CORRECT at CLUSTER 2-16 and memcheck clean, but no
// configuration beats the gallery's best at any of the seven rows: f32
// 8192 x 50257 59% of copy at NB = 2 (67% at NB = 3 PF = 1) against 77%,
// 4096 x 200003 54-59% against 70%, 4096 x 262144 68-70% against 86%; bf16
// 8192 x 50257 54-61% against 77%, 4096 x 131072 78% (PF = 1) against 83%,
// 4096 x 262144 79% (PF = 1) against 79%, 4096 x 200003 49-53% against 67%.
// The weights' L2 stream is gone, but the persistent loop keeps half the
// bytes in flight an SM of the one-row-a-cluster kernels (the second
// register set holds the row being summed and stored: 416 x 8 x 16 B =
// 53 KB against 2 x 53 KB), and that costs more than the stream saved.
// A measured negative result: bench/gallery.py does not offer it.
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min(M, max(1, sm_count * MINB / CLUSTER)) * CLUSTER) block=(THREADS) smem=(2 * 16 * ((N / 4 + CLUSTER - 1) / CLUSTER + 1))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 32771
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= THREADS * VPT   // a rank's slice in registers
//! require 2 * 16 * ((N / 4 + CLUSTER - 1) / CLUSTER + 1) + CLUSTER * THREADS / 2 <= 232000   // w, b and part[] in shared memory
//! tune    CLUSTER = 8, 4, 16, 2
//! tune    THREADS = 416, 512, 256, 1024
//! tune    VPT = 4, 8, 2
//! tune    MINB = 2, 1
//! tune    PF = 0, 1, 2
//! tune    NB = 2, 3

#ifndef CLUSTER
#define CLUSTER 8 /* blocks a row (16: kbench allows the non-portable size) */
#endif
#ifndef THREADS
#define THREADS 416 /* 13 warps x 4 float4 hold 50257 / 8 ranks */
#endif
#ifndef VPT
#define VPT 4 /* float4 a thread, twice (this row's and the next's) */
#endif
#ifndef MINB
#define MINB 2 /* blocks an SM: the registers must leave room for them, the grid is sm_count x MINB */
#endif
#ifndef PF
#define PF 0 /* 1, 2: the rank's slice of the row PF + 1 on prefetched into L2 */
#endif
#ifndef NB
#define NB 2 /* register sets of a row's slice: this row's, the next NB - 1 rows' in flight */
#endif
#define AHEAD (NB + PF) /* the rows a cluster knows: this one, the NB - 1 in registers, PF more */
#define WARPS (THREADS / 32)
#define PER(N) (((N) / 4 + CLUSTER - 1) / CLUSTER) /* float4 of a row a rank, at most */
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS: whole warps, at most 1024");
static_assert(CLUSTER <= 32, "CLUSTER: a lane a peer");

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

/* (x - mean) * rstd * w + b of a float4. */
__device__ float4 norm4(float4 x, float4 w, float4 b, float mean, float rstd)
{
	return make_float4((x.x - mean) * rstd * w.x + b.x, (x.y - mean) * rstd * w.y + b.y,
			   (x.z - mean) * rstd * w.z + b.z, (x.w - mean) * rstd * w.w + b.w);
}

/* This thread's vectors of the row (the rank's vector t + k * THREADS, the
 * first ng of its) normalised and stored at obody + g0, the row's head H:
 * w and b from the rank's slices ws and bs (float4 li and li + 1 shifted
 * by H). */
template <int H>
__device__ void out_body(const float4 *v, float4 *obody, const float4 *ws, const float4 *bs, int ng, float mean,
			 float rstd)
{
#pragma unroll
	for (int k = 0; k < VPT; k++) {
		const int i = threadIdx.x + k * THREADS;
		if (i < ng) {
			const float4 wv = H ? shift4(ws[i], ws[i + 1], H) : ws[i];
			const float4 bv = H ? shift4(bs[i], bs[i + 1], H) : bs[i];
			__stcs(obody + i, norm4(v[k], wv, bv, mean, rstd));
		}
	}
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
/* The rank's slice of row r (PER vectors from the rank's first, give or
 * take the row's head and tail: 32 bytes more each side), a 128-byte line
 * a thread, into L2. */
__device__ void prefetch_slice(const void *x, size_t r, int N, int rank)
{
	const char *row = (const char *)x + r * N * 4;
	const char *lo = row + (size_t)rank * PER(N) * 16, *hi = row + (size_t)N * 4;
	lo = lo - 32 > row ? lo - 32 : row;
	hi = lo + (size_t)PER(N) * 16 + 64 < hi ? lo + (size_t)PER(N) * 16 + 64 : hi;
	const char *a = (const char *)((size_t)lo & ~(size_t)127);
	for (const char *p = a + 128 * threadIdx.x; p < hi; p += 128 * THREADS)
		asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
#endif

/* Rows handed out past each cluster's first three (3G on), and the clusters
 * that are done (the last one sets both back to 0 for the next launch). */
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

/* The sum of the CLUSTER x WARPS pairs p, in the same order in every warp
 * of every block (lane l adds l, l + 32, ..., then the butterfly). */
__device__ float2 add_pairs(const float2 *p)
{
	const int lane = threadIdx.x % 32;
	float2 s = make_float2(0.0f, 0.0f);
	for (int i = lane; i < CLUSTER * WARPS; i += 32)
		s.x += p[i].x, s.y += p[i].y;
	for (int o = 16; o > 0; o /= 2) {
		s.x += __shfl_xor_sync(0xffffffff, s.x, o);
		s.y += __shfl_xor_sync(0xffffffff, s.y, o);
	}
	return s;
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	extern __shared__ float4 wb[]; /* the rank's w (PER + 1 float4), then its b */
	__shared__ float2 part[2][CLUSTER * WARPS]; /* each warp's (S1, S2), by row parity, rank x WARPS + warp */
	__shared__ unsigned after[2];               /* the row rank 0 took (AHEAD on), by row parity */
#if CLUSTER > 1
	cg::cluster_group cluster = cg::this_cluster();
	const int rank = (int)cluster.block_rank();
	cluster_arrive_relaxed(); /* the first phase: this block has started */
#else
	const int rank = 0;
#endif
	const int t = threadIdx.x, lane = t % 32, warp = t / 32;
	const size_t G = gridDim.x / CLUSTER; /* the clusters launched */
	unsigned q[AHEAD]; /* this row, the next, ... (a cluster's first AHEAD its own, the others from rows_taken) */
#pragma unroll
	for (int j = 0; j < AHEAD; j++)
		q[j] = blockIdx.x / CLUSTER + j * (unsigned)G;
	float4 va[VPT], vb[VPT];
	float k3a[3], k3b[3] = {0.0f, 0.0f, 0.0f};
	if (q[0] < (unsigned)M)
		load_slice(x, y, q[0], N, rank, va, k3a);
#if NB > 2
	float4 vc[VPT];
	float k3c[3] = {0.0f, 0.0f, 0.0f};
	if (q[1] < (unsigned)M)
		load_slice(x, y, q[1], N, rank, vb, k3b);
#endif
	/* the rank's w and b, once: elements 4 PER rank on, zero past N */
	float4 *ws = wb, *bs = wb + PER(N) + 1;
	{
		float *wf = (float *)ws, *bf = (float *)bs;
		const int e0 = 4 * PER(N) * rank;
		for (int j = t; j < 4 * (PER(N) + 1); j += THREADS) {
			const int e = e0 + j;
			wf[j] = e < N ? w[e] : 0.0f;
			bf[j] = e < N ? b[e] : 0.0f;
		}
	}
	__syncthreads();
	int it = 0;
	/* Row q[0], its slice in v and its K candidates in k3: row q[NB - 1]'s
	 * slice issued into nv (the set the last row was in), to be in flight
	 * through this row's sums, barrier and output; returns whether the
	 * cluster has a row after it.  Called with the sets in turn (no
	 * copies: a copy of a register a load is still writing waits for it). */
	auto step = [&](const float4 (&v)[VPT], const float (&k3)[3], float4 (&nv)[VPT], float (&nk3)[3]) -> bool {
		const size_t r = q[0];
		const float *row = x + r * N;
		float *out = y + r * N;
		const slice s = slice_of(row, out, N, rank);
		const int head = s.head, n4 = s.nv, tail = N - head - 4 * n4, ng = s.ng;
		if (q[NB - 1] < (unsigned)M)
			load_slice(x, y, q[NB - 1], N, rank, nv, nk3);
#if PF
		if (q[NB - 1 + PF] < (unsigned)M)
			prefetch_slice(x, q[NB - 1 + PF], N, rank);
#endif
		unsigned grab = 0; /* row AHEAD on, sent with rank 0's pairs */
		if (rank == 0 && t == 0)
			grab = AHEAD * (unsigned)G + atomicAdd(&rows_taken, 1u);
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
		grab = __shfl_sync(0xffffffff, grab, 0);
		float2 *pp = part[it & 1];
#if CLUSTER > 1
		if (it == 0)
			cluster_wait(); /* the first phase: every peer has started */
		if (lane < CLUSTER) { /* into block lane's pp[rank x WARPS + warp] */
			*cluster.map_shared_rank(&pp[rank * WARPS + warp], lane) = make_float2(s1, s2);
			if (rank == 0 && warp == 0)
				*cluster.map_shared_rank(&after[it & 1], lane) = grab;
		}
		cluster_arrive(); /* this row's phase: this block's pairs are in every peer */
		cluster_wait();
#else
		if (lane == 0) {
			pp[warp] = make_float2(s1, s2);
			if (warp == 0)
				after[it & 1] = grab;
		}
		__syncthreads();
#endif
		const float2 S = add_pairs(pp);
		const float m1 = S.x / N, mean = K + m1, rstd = rsqrtf(fmaxf(S.y / N - m1 * m1, 0.0f) + 1e-5f);
		if (ng > 0) {
			float4 *obody = (float4 *)(out + head) + s.g0;
			switch (head) {
			case 0: out_body<0>(v, obody, ws, bs, ng, mean, rstd); break;
			case 1: out_body<1>(v, obody, ws, bs, ng, mean, rstd); break;
			case 2: out_body<2>(v, obody, ws, bs, ng, mean, rstd); break;
			default: out_body<3>(v, obody, ws, bs, ng, mean, rstd); break;
			}
		}
		if (rank == 0)
			for (int i = t; i < head; i += THREADS)
				out[i] = (row[i] - mean) * rstd * w[i] + b[i];
		if (mytail) {
			const int i = head + 4 * n4 + t;
			out[i] = (tv - mean) * rstd * w[i] + b[i];
		}
#pragma unroll
		for (int j = 0; j < AHEAD - 1; j++)
			q[j] = q[j + 1];
		q[AHEAD - 1] = after[it & 1];
		it++;
		return q[0] < (unsigned)M;
	};
#if NB > 2
	while (q[0] < (unsigned)M && step(va, k3a, vc, k3c) && step(vb, k3b, va, k3a) && step(vc, k3c, vb, k3b))
		;
#else
	/* (the next row's set copied into this row's once it has landed: the
	 * same registers as calling step with the sets swapped, fewer spilled) */
	while (q[0] < (unsigned)M && step(va, k3a, vb, k3b)) {
#pragma unroll
		for (int k = 0; k < VPT; k++)
			va[k] = vb[k];
		k3a[0] = k3b[0], k3a[1] = k3b[1], k3a[2] = k3b[2];
	}
#endif
	if (rank == 0 && t == 0)
		leave((unsigned)G);
}
