// Softmax over long rows of f32 at any width: softmax_bf16_bulk.cu for 4-byte
// elements (after 07_cluster_async.cu, whose rows take 4-byte loads when N
// is no multiple of 4: 67.3% of copy at 4096 x 200003 on an H100).  A
// cluster of CLUSTER blocks a row; each block's slice comes in by one bulk
// copy (cp.async.bulk on an mbarrier) into shared memory, three buffers
// deep, the next row's copy issued at the top of this row so it is in
// flight through the reduction, the (max, sum) exchange (st.async into
// every peer, 07's protocol) and the stores.  The row's whole float4 from
// its first 16-byte boundary are split among the ranks; the head (rank 0)
// and the tail (the last rank), up to 3 elements each, are read and written
// by threads 0..2.  Each thread reads its float4 of the slice from shared
// memory twice (the (max, sum), then the output), so no register holds the
// row through the exchange.
// CLUSTER = the smallest of 2, 4, 8, 16 with N <= CLUSTER * THREADS * 4 *
// VPT (8192 a block at 512 threads, VPT = 4: a slice of 32 KiB, three
// buffers and two blocks an SM); N = 262144 needs VPT = 8 at CLUSTER = 16
// (one block an SM).  NBUF = 2 keeps two slices and issues the next row's
// copy after the row's __syncthreads (when the last row's buffer has been
// read by all): in flight through the exchange and the stores only, but
// 200003 at VPT = 8 then fits two blocks an SM (2 x 100 KiB).
//
//! kernel  softmax_f32
//! arg     M = 4096
//! arg     N = 131072
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(min(M, BLOCKS / CLUSTER) * CLUSTER) block=(THREADS) smem=(NBUF * ((N / 4 + CLUSTER - 1) / CLUSTER * 16 + 128))
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-8
//! flops   5*M*N
//! sweep   N = 65536, 131072, 200003, 50257
//! require N <= CLUSTER * THREADS * 4 * VPT   // VPT float4 a thread
//! tune    CLUSTER = 16, 8, 4, 2
//! tune    THREADS = 512, 1024
//! tune    VPT = 4, 8
//! tune    BLOCKS = 256, 384
//! tune    NBUF = 3, 2

#include <cooperative_groups.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 16
#endif
#ifndef THREADS
#define THREADS 512
#endif
#ifndef BLOCKS
#define BLOCKS 256 /* blocks launched (two an SM on 132 SMs) */
#endif
#ifndef VPT
#define VPT 4 /* float4 per thread: 4 * VPT elements, 4 * VPT * THREADS per block */
#endif
#ifndef NBUF
#define NBUF 3 /* slices in shared memory: 3, the next copy issued at the top of a row; 2, after its __syncthreads */
#endif
#if NBUF != 2 && NBUF != 3
#error NBUF is 2 or 3
#endif
#ifndef MINB
#define MINB (1024 / THREADS)
#endif

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

/* 16 bytes into another block's shared memory (shared::cluster addresses),
 * completing 16 bytes on that block's barrier. */
__device__ void send(unsigned addr, float4 v, unsigned bar)
{
	asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr),
		     "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)),
		     "r"(__float_as_uint(v.w)), "r"(bar)
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

/* Where a row of N at p splits: head elements to its first 16-byte boundary,
 * n8 whole float4, and this rank's share of them: g0 and ng. */
struct Split {
	int head, n8, g0, ng;
};

__device__ Split split(const float *p, int N, int rank)
{
	Split s;
	s.head = min(N, (int)((16u - ((unsigned)(size_t)p & 15u)) & 15u) / 4);
	s.n8 = (N - s.head) / 4;
	int per = (s.n8 + CLUSTER - 1) / CLUSTER;
	s.g0 = rank * per;
	s.ng = max(0, min(s.n8 - s.g0, per));
	return s;
}

/* Row r's slice of this rank into dst, completing on bar. */
__device__ void load_row(const float *x, int r, int N, int rank, unsigned char *dst, unsigned long long *bar)
{
	const float *in = x + (size_t)r * N;
	Split s = split(in, N, rank);
	bulk_load(smem(dst), in + s.head + 4 * s.g0, 16 * s.ng, smem(bar));
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char dyn[]; /* NBUF slices */
	__shared__ float2 scratch[32];                        /* the warps' pairs */
	__shared__ __align__(16) float4 slot[2][CLUSTER];     /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[2], loaded[NBUF];
	__shared__ int first; /* rank 0: the cluster's first row (and the one after) */
	const float ninf = -CUDART_INF_F;
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int t = threadIdx.x, clusters = gridDim.x / CLUSTER;
	const unsigned cap = ((N / 4 + CLUSTER - 1) / CLUSTER * 16 + 127) / 128 * 128; /* bytes a slice */
	if (t == 0) {
		bar_init(smem(&full[0]), 1);
		bar_init(smem(&full[1]), 1);
		for (int i = 0; i < NBUF; i++)
			bar_init(smem(&loaded[i]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			first = (int)atomicAdd(&rows_taken, 2u);
	}
	cluster.sync(); /* every block's barriers initialised before anyone sends */
	int row = *cluster.map_shared_rank(&first, 0), after = row + 1;
	if (t == 0 && row < M)
		load_row(x, row, N, rank, dyn, &loaded[0]);
	for (unsigned it = 0; row < M; it++) {
		const unsigned b = it & 1, phase = (it >> 1) & 1, lb = it % NBUF, lnext = (it + 1) % NBUF;
		int further = 0; /* rank 0's thread 0: the row after `after` */
		if (rank == 0 && t == 0)
			further = (int)atomicAdd(&rows_taken, 1u);
#if NBUF == 3
		/* the next row's slice into the buffer of the row before last (read
		 * by all threads before the last row's __syncthreads) */
		if (t == 0 && after < M)
			load_row(x, after, N, rank, dyn + lnext * cap, &loaded[lnext]);
#endif
		const float *in = x + (size_t)row * N;
		const Split s = split(in, N, rank);
		const int tail = N - s.head - 4 * s.n8;
		/* the head (rank 0) and the tail (the last rank), element by element */
		const float hv = rank == 0 && t < s.head ? __ldcs(in + t) : ninf;
		const float tv = rank == CLUSTER - 1 && t < tail ? __ldcs(in + s.head + 4 * s.n8 + t) : ninf;
		bar_wait(smem(&loaded[lb]), (it / NBUF) & 1);
		const float4 *buf = (const float4 *)(dyn + lb * cap);
		float mt = fmaxf(hv, tv);
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			if (i < s.ng) {
				float4 v = buf[i];
				mt = fmaxf(mt, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
			}
		}
		float st = 0.0f;
		if (mt != ninf) {
			st = __expf(hv - mt) + __expf(tv - mt);
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = t + k * THREADS;
				if (i < s.ng) {
					float4 v = buf[i];
					st += (__expf(v.x - mt) + __expf(v.y - mt)) + (__expf(v.z - mt) + __expf(v.w - mt));
				}
			}
		}
		float2 p = warp_merge(make_float2(mt, st));
		if (lane == 0)
			scratch[warp] = p;
		__syncthreads();
#if NBUF == 2
		/* the next row's slice into the last row's buffer, which every
		 * thread has now finished reading */
		if (t == 0 && after < M)
			load_row(x, after, N, rank, dyn + lnext * cap, &loaded[lnext]);
#endif
		if (warp == 0) {
			p = warp_merge(lane < THREADS / 32 ? scratch[lane] : make_float2(ninf, 0.0f));
			float4 msg = make_float4(p.x, p.y, __int_as_float(__shfl_sync(0xffffffff, further, 0)), 0.0f);
			if (lane == rank) {
				slot[b][rank] = msg;
				bar_arrive_expect(smem(&full[b]), (CLUSTER - 1) * 16);
			} else if (lane < CLUSTER) { /* to block `lane` */
				send(mapa(smem(&slot[b][rank]), lane), msg, mapa(smem(&full[b]), lane));
			}
		}
		bar_wait(smem(&full[b]), phase);
		float4 q = lane < CLUSTER ? slot[b][lane] : make_float4(ninf, 0.0f, 0.0f, 0.0f);
		float2 g = warp_merge(make_float2(q.x, q.y));
		int next_after = __float_as_int(__shfl_sync(0xffffffff, q.z, 0)); /* rank 0's */
		float inv = 1.0f / g.y;
		float *out = y + (size_t)row * N;
		if (t < s.head && rank == 0)
			__stcs(out + t, __expf(hv - g.x) * inv);
		if (t < tail && rank == CLUSTER - 1)
			__stcs(out + s.head + 4 * s.n8 + t, __expf(tv - g.x) * inv);
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		float *o = out + s.head + 4 * s.g0;
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			if (i < s.ng) {
				float4 v = buf[i];
				v = make_float4(__expf(v.x - g.x) * inv, __expf(v.y - g.x) * inv, __expf(v.z - g.x) * inv,
						__expf(v.w - g.x) * inv);
				if (ovec) {
					__stcs((float4 *)o + i, v);
				} else {
					__stcs(o + 4 * i, v.x), __stcs(o + 4 * i + 1, v.y);
					__stcs(o + 4 * i + 2, v.z), __stcs(o + 4 * i + 3, v.w);
				}
			}
		}
		row = after;
		after = next_after;
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
