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
// The ring, the producer and the exchange are ../ring.cuh (shared with
// rmsnorm/04_ring.cu); the row's work below is for any element type: this
// file is the bf16 kernel, and 09_ring.cu includes it with F32 = 1 for f32.
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

#include "../ring.cuh" /* the ring, its producer and the row exchange */

/* (max, sum of exp(v - max)) pairs; a max of -inf means "empty" (sum 0). */
__device__ float2 merge(float2 a, float2 b)
{
	float m = fmaxf(a.x, b.x);
	if (m == -CUDART_INF_F)
		return make_float2(m, 0.0f);
	return make_float2(m, a.y * __expf(a.x - m) + b.y * __expf(b.x - m));
}

/* The sum of 2^(v log2 e - ml) over the EPW elements of word w. */
__device__ float word_exp(unsigned w, float ml)
{
	float f[EPW];
	unpack(w, f);
	float e = ex2(fmaf(f[0], CUDART_L2E_F, -ml));
#pragma unroll
	for (int j = 1; j < EPW; j++)
		e += ex2(fmaf(f[j], CUDART_L2E_F, -ml));
	return e;
}

/* The kernel of this file (bf16) and of 09_ring.cu (f32, F32 = 1). */
__device__ __forceinline__ void softmax_ring(const elem *__restrict__ x, elem *__restrict__ y, int M, int N)
{
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH uint4 */
	__shared__ Ring r;
	const float ninf = -CUDART_INF_F;
	const int rank = (int)cg::this_cluster().block_rank(), t = threadIdx.x;
	ring_rows(x, M, N, ring, r, [&](int row, const Split &s, unsigned q, unsigned it, int further) {
		/* 1. the running (max, sum) of this thread's part of each chunk */
		float m = ninf, sum = 0.0f, hv = ninf, tv = ninf;
		for (int c = 0; c < s.nc; c++) {
			unsigned u[4 * U];
			chunk_words(r, ring, q + c, c, s.ng, u);
			float cm = words_max(u);
			if (c == s.nc - 1 && t < 8) {
				hv = r.edge[(q + c) % NSLOT][t];
				tv = r.edge[(q + c) % NSLOT][8 + t];
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
				sum += word_exp(u[k], ml);
			}
			if (c == s.nc - 1)
				sum += ex2(fmaf(hv, CUDART_L2E_F, -ml)) + ex2(fmaf(tv, CUDART_L2E_F, -ml));
		}
		/* 2. the block's pair, then the cluster's */
		int next;
		const float2 g = exchange(r, make_float2(m, sum), make_float2(ninf, 0.0f), merge, further, rank, it, &next);
		/* 3. exp(v - max) / sum = 2^(v log2 e - (max log2 e + log2 sum)) */
		const float gl = fmaf(g.x, CUDART_L2E_F, __log2f(g.y));
#define OUT1(v) ex2(fmaf((v), CUDART_L2E_F, -gl))
		const elem *in = x + (size_t)row * N;
		elem *out = y + (size_t)row * N;
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		elem *o = out + s.head + EPV * s.g0;
		for (int c = 0; c < s.nc; c++) {
			const uint4 *buf = (const uint4 *)(ring + (q + c) % NSLOT * (CH * 16));
#pragma unroll
			for (int k = 0; k < U; k++) {
				const int i = t + k * THREADS, gi = c * CH + i;
				if (gi < s.ng) {
					uint4 v = buf[i];
					unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
					for (int j = 0; j < 4; j++) {
						float f[EPW];
						unpack(w[j], f);
#pragma unroll
						for (int e = 0; e < EPW; e++)
							f[e] = OUT1(f[e]);
						w[j] = pack(f);
					}
					store_words(o, gi, w, ovec);
				}
			}
			release(r, q + c); /* this warp has read the slot */
		}
		if (t < s.head && rank == 0)
			out[t] = (elem)OUT1(hv);
		if (t < s.tail && rank == CLUSTER - 1)
			out[s.head + EPV * s.nv + t] = (elem)OUT1(tv);
#undef OUT1
		return next;
	});
}

#ifndef F32 /* 09_ring.cu includes this file for f32, with its own kernel */
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	softmax_ring(x, y, M, N);
}
#endif
