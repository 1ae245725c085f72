// LayerNorm forward over long rows of f32 at any width (GPT-2's 50257 and past
// what one block holds in registers: 02_registers.cu stops at 16384):
// softmax/08_bulk.cu's scheme.  A cluster of CLUSTER blocks a row; each
// block's slice comes in by one bulk copy (cp.async.bulk on an mbarrier)
// into shared memory, three buffers deep (NBUF), the next row's copy in
// flight through this row's statistics, their exchange and the stores.
// The row's whole float4 from its first 16-byte boundary are split among
// the ranks; the head (rank 0) and the tail (the last rank), up to 3
// elements each, are read and written by threads 0..2.
// Statistics: each thread's (count, mean, M2) over its elements (two
// passes over shared memory), merged by Chan's formula in the warp, the
// block and across the cluster,
// exchanged with st.async into every peer's receive slots and a local
// mbarrier per row parity, 07_cluster_async.cu's protocol (no cluster
// barrier between rows).  The weights are aligned to their own start, not
// the row's: the 4 of a float4 group are two aligned float4 of w (L1 hits)
// shifted by the row's offset, or 4 scalar loads at w's ends.
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min(M, BLOCKS / CLUSTER) * CLUSTER) block=(THREADS) smem=(NBUF * ((N / 4 + CLUSTER - 1) / CLUSTER * 16 + 128))
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 65536, 32768, 20011
//! require N <= CLUSTER * THREADS * 4 * VPT   // VPT float4 a thread
//! tune    CLUSTER = 8, 4, 16, 2
//! tune    THREADS = 512, 1024
//! tune    VPT = 4, 8
//! tune    BLOCKS = 256, 384
//! tune    NBUF = 3, 2

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 8
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

/* (count, mean, M2) of a set of values; Chan's merge. */
__device__ float3 merge(float3 a, float3 b)
{
	float n = a.x + b.x;
	if (n == 0.0f)
		return make_float3(0.0f, 0.0f, 0.0f);
	float d = b.y - a.y, f = b.x / n;
	return make_float3(n, a.y + d * f, a.z + b.z + d * d * a.x * f);
}

__device__ float3 warp_merge(float3 p)
{
	for (int o = 16; o > 0; o /= 2)
		p = merge(p, make_float3(__shfl_xor_sync(0xffffffff, p.x, o), __shfl_xor_sync(0xffffffff, p.y, o),
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

/* The 4 floats at p (any 4-byte alignment) of the array [lo, hi): two
 * aligned float4 shifted by p's offset, or 4 scalar loads where those would
 * reach outside the array. */
__device__ float4 load4(const float *p, const float *lo, const float *hi)
{
	const unsigned mis = (unsigned)(size_t)p & 15u;
	const float4 *q = (const float4 *)((const char *)p - mis);
	if (mis == 0)
		return __ldg(q);
	if ((const char *)q >= (const char *)lo && (const char *)(q + 2) <= (const char *)hi) {
		float4 a = __ldg(q), b = __ldg(q + 1);
		return mis == 4 ? make_float4(a.y, a.z, a.w, b.x)
		     : mis == 8 ? make_float4(a.z, a.w, b.x, b.y) : make_float4(a.w, b.x, b.y, b.z);
	}
	return make_float4(p[0], p[1], p[2], p[3]);
}

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
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char dyn[]; /* NBUF slices */
	__shared__ float3 scratch[32];                        /* the warps' (count, mean, M2) */
	__shared__ __align__(16) float4 slot[2][CLUSTER];     /* messages by sender rank */
	__shared__ __align__(8) unsigned long long full[2], loaded[NBUF];
	__shared__ int first; /* rank 0: the cluster's first row (and the one after) */
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
		const unsigned bp = it & 1, phase = (it >> 1) & 1, lb = it % NBUF, lnext = (it + 1) % NBUF;
		int further = 0; /* rank 0's thread 0: the row after `after` */
		if (rank == 0 && t == 0)
			further = (int)atomicAdd(&rows_taken, 1u);
#if NBUF == 3
		if (t == 0 && after < M)
			load_row(x, after, N, rank, dyn + lnext * cap, &loaded[lnext]);
#endif
		const float *in = x + (size_t)row * N;
		const Split s = split(in, N, rank);
		const int tail = N - s.head - 4 * s.n8, ti = s.head + 4 * s.n8 + t;
		/* the head (rank 0) and the tail (the last rank), element by element */
		const bool hv_ok = rank == 0 && t < s.head, tv_ok = rank == CLUSTER - 1 && t < tail;
		const float hv = hv_ok ? __ldcs(in + t) : 0.0f, tv = tv_ok ? __ldcs(in + ti) : 0.0f;
		bar_wait(smem(&loaded[lb]), (it / NBUF) & 1);
		const float4 *buf = (const float4 *)(dyn + lb * cap);
		/* this thread's (count, mean, M2): two passes over its elements */
		float cnt = (hv_ok ? 1.0f : 0.0f) + (tv_ok ? 1.0f : 0.0f), sum = (hv_ok ? hv : 0.0f) + (tv_ok ? tv : 0.0f);
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			if (i < s.ng) {
				float4 v = buf[i];
				cnt += 4.0f;
				sum += (v.x + v.y) + (v.z + v.w);
			}
		}
		const float mt = cnt > 0.0f ? sum / cnt : 0.0f;
		float m2 = (hv_ok ? (hv - mt) * (hv - mt) : 0.0f) + (tv_ok ? (tv - mt) * (tv - mt) : 0.0f);
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			if (i < s.ng) {
				float4 v = buf[i];
				m2 += ((v.x - mt) * (v.x - mt) + (v.y - mt) * (v.y - mt)) + ((v.z - mt) * (v.z - mt) + (v.w - mt) * (v.w - mt));
			}
		}
		float3 p = warp_merge(make_float3(cnt, mt, m2));
		if (lane == 0)
			scratch[warp] = p;
		__syncthreads();
#if NBUF == 2
		if (t == 0 && after < M)
			load_row(x, after, N, rank, dyn + lnext * cap, &loaded[lnext]);
#endif
		if (warp == 0) {
			p = warp_merge(lane < THREADS / 32 ? scratch[lane] : make_float3(0.0f, 0.0f, 0.0f));
			float4 msg = make_float4(p.x, p.y, p.z, __int_as_float(__shfl_sync(0xffffffff, further, 0)));
			if (lane == rank) {
				slot[bp][rank] = msg;
				bar_arrive_expect(smem(&full[bp]), (CLUSTER - 1) * 16);
			} else if (lane < CLUSTER) { /* to block `lane` */
				send(mapa(smem(&slot[bp][rank]), lane), msg, mapa(smem(&full[bp]), lane));
			}
		}
		bar_wait(smem(&full[bp]), phase);
		float4 q = lane < CLUSTER ? slot[bp][lane] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
		float3 g = warp_merge(make_float3(q.x, q.y, q.z));
		int next_after = __float_as_int(__shfl_sync(0xffffffff, q.w, 0)); /* rank 0's */
		const float mean = g.y, rstd = rsqrtf(g.z / N + 1e-5f);
#define NORM(v, i) (((v) - mean) * rstd * w[i] + b[i])
#define NORM4(v, g4, c4) make_float4(((v).x - mean) * rstd * (g4).x + (c4).x, ((v).y - mean) * rstd * (g4).y + (c4).y, \
				      ((v).z - mean) * rstd * (g4).z + (c4).z, ((v).w - mean) * rstd * (g4).w + (c4).w)
		float *out = y + (size_t)row * N;
		if (hv_ok)
			__stcs(out + t, NORM(hv, t));
		if (tv_ok)
			__stcs(out + ti, NORM(tv, ti));
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		float *o = out + s.head + 4 * s.g0;
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = t + k * THREADS;
			if (i < s.ng) {
				float4 v = buf[i];
				const int e = s.head + 4 * (s.g0 + i);
				float4 g4 = load4(w + e, w, w + N), c4 = load4(b + e, b, b + N);
				v = NORM4(v, g4, c4);
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
