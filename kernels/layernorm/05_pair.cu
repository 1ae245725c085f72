// LayerNorm forward over long rows of f32 at any width: 04_ring.cu's ring
// and producer warp, two rows a pass, so each load of w and b serves two
// rows (issue 31).  04_ring.cu reads w and b from L2 for every row: at
// 8192 x 50257 that is 402 KB of L2 -> SM traffic a row beside the row's
// 201 KB read and 201 KB write, L2 traffic twice the DRAM traffic
// (RMSNorm's one weight makes 1.5 times), and every LayerNorm kernel stopped
// at 45% of copy on an H200 whatever its structure (bench/layernorm_ring_h200.txt),
// where the same ring for softmax gives 88%.  WS = 1 (the weights in shared
// memory) needed slices four times smaller, and the per-row latency (the
// statistics, the cluster exchange, the stores) then cost more than L2 did.
// Here a pass takes rows r and r + 1 (the counter hands out pairs): the
// statistics of both (each a (count, mean, M2) by Welford's update a chunk
// at a time and Chan's merge, as in 04_ring.cu), one cluster exchange of
// two float4 a rank, then one output loop over the chunk index that loads
// w and b once and writes both rows: w and b cost the same bytes as one
// row, so L2 moves 3 bytes for each 2 from DRAM (RMSNorm's ratio; its f32
// 03_bulk.cu reaches 78%).  A row's 4 weights at any head are a thread's
// own aligned float4 of w (one 16-byte load, no second load for the shift)
// and the next lane's (a shuffle; lane 31 loads it), shifted by each row's
// head, and the next chunk's loads are in flight while this chunk is
// written (the first chunk's before the exchange wait).
// The ring: chunks of THREADS * U float4 (8 KiB at 512 x 1), NSLOT = 26 of
// them; both rows' slices must fit at once: 2 * ceil(PER / CH) <= NSLOT
// (CLUSTER 2 at 50257, 8 at 200003).
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min((M + 1) / 2, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require 2 * (((N / 4 + CLUSTER - 1) / CLUSTER + THREADS * U - 1) / (THREADS * U)) <= NSLOT   // two rows' slices fit the ring
//! require NSLOT * THREADS * U * 16 <= 220 * 1024
//! tune    CLUSTER = 2, 1, 4, 8, 16
//! tune    THREADS = 512, 256
//! tune    U = 1
//! tune    NSLOT = 26, 24, 13

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 2
#endif
#ifndef THREADS
#define THREADS 512 /* consumer threads; one producer warp more */
#endif
#ifndef U
#define U 1 /* float4 a consumer thread a chunk: a chunk is THREADS * U float4 */
#endif
#ifndef NSLOT
#define NSLOT 26 /* chunks in the ring: 26 * 8 KiB = 208 KiB */
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
			if (lane == 0) {
				const int n = min(CH, s.ng - c * CH);
				bulk_load(smem(ring + slot * (CH * 16)), in + s.head + 4 * (s.g0 + c * CH), 16 * max(n, 0),
					  smem(&full[slot]));
			}
		}
	}
}

/* w's aligned float4 j (elements 4j .. 4j + 3; 0 past N). */
__device__ float4 vec4(const float *w, int j, int N)
{
	if (4 * j + 4 <= N)
		return __ldg((const float4 *)w + j);
	const int e = 4 * j;
	return make_float4(e < N ? w[e] : 0.0f, e + 1 < N ? w[e + 1] : 0.0f, e + 2 < N ? w[e + 2] : 0.0f, 0.0f);
}

/* This thread's (count, mean, M2) of a row's slice, its chunks in slots
 * q .. q + s.nc - 1 (waiting for each); its head and tail element in hv, tv. */
__device__ float3 row_stats(const unsigned char *ring, unsigned long long *full, float (*edge)[16], const Split &s,
			    unsigned q, bool hok, bool tok, float &hv, float &tv)
{
	const int t = threadIdx.x;
	float3 p = make_float3(0.0f, 0.0f, 0.0f);
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
			sum += (v[k].x + v[k].y) + (v[k].z + v[k].w); /* the padding is 0 */
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
	return p;
}

/* The raw weights of chunk c for this thread: its own aligned float4 of w
 * and b at g0 + gi (lo) and, lane 31 only, the next ones (hi; the other
 * lanes take theirs from lane + 1). */
struct Wraw {
	float4 wl[U], bl[U], wh[U], bh[U];
};

__device__ void wload(Wraw &r, const float *w, const float *b, int g0, int c, int N)
{
	const bool last = threadIdx.x % 32 == 31;
#pragma unroll
	for (int k = 0; k < U; k++) {
		const int j = g0 + c * CH + (int)threadIdx.x + k * THREADS;
		r.wl[k] = vec4(w, j, N);
		r.bl[k] = vec4(b, j, N);
		r.wh[k] = last ? vec4(w, j + 1, N) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
		r.bh[k] = last ? vec4(b, j + 1, N) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	}
}

/* lo's next float4 (the first 3 floats of it are all a shift uses): lane + 1's lo, lane 31's own hi. */
__device__ float4 next4(float4 lo, float4 hi)
{
	const bool last = threadIdx.x % 32 == 31;
	const float a = __shfl_down_sync(0xffffffff, lo.x, 1), b = __shfl_down_sync(0xffffffff, lo.y, 1),
		    c = __shfl_down_sync(0xffffffff, lo.z, 1);
	return last ? hi : make_float4(a, b, c, 0.0f);
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH float4 */
	__shared__ float edge[NSLOT][16];                      /* a row's head and tail, beside its last chunk */
	__shared__ float3 scratch[2][32];                      /* the consumer warps' triples, a row each */
	__shared__ __align__(16) float4 slot[2][CLUSTER][2];   /* messages by sender rank: a row each */
	__shared__ __align__(8) unsigned long long full[NSLOT], empty[NSLOT], msg[2], rowbar[2];
	__shared__ int rowid[2]; /* the rows of the next pass, for the producer */
	__shared__ int first;    /* rank 0: the cluster's first pair */
	const float3 none = make_float3(0.0f, 0.0f, 0.0f);
	const int rank = (int)cluster.block_rank(), lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	const int t = threadIdx.x, clusters = gridDim.x / CLUSTER;
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
	int row = *cluster.map_shared_rank(&first, 0);
	if (warp == WARPS) {
		produce(x, M, N, rank, row, ring, full, empty, rowbar, rowid, edge);
	} else {
		const int g0 = rank * PER(N); /* every row's slice of this rank starts here */
		unsigned q = 0;               /* chunks consumed */
		for (unsigned it = 0; row < M; it++) {
			const unsigned bp = it & 1, phase = (it >> 1) & 1;
			int further = 0; /* rank 0's thread 0: the next pass's pair */
			if (rank == 0 && t == 0)
				further = (int)atomicAdd(&rows_taken, 2u);
			const int rb = row + 1;
			const float *ia = x + (size_t)row * N, *ib = x + (size_t)min(rb, M - 1) * N;
			const Split sa = split(ia, N, rank);
			Split sb = split(ib, N, rank);
			if (rb >= M) /* no second row: the producer stopped */
				sb.ng = sb.nc = sb.head = sb.tail = 0;
			const bool hoka = rank == 0 && t < sa.head, toka = rank == CLUSTER - 1 && t < sa.tail;
			const bool hokb = rank == 0 && t < sb.head, tokb = rank == CLUSTER - 1 && t < sb.tail;
			float hva = 0.0f, tva = 0.0f, hvb = 0.0f, tvb = 0.0f;
			/* 1. the running (count, mean, M2) of this thread's part of each row */
			float3 pa = row_stats(ring, full, edge, sa, q, hoka, toka, hva, tva);
			float3 pb = row_stats(ring, full, edge, sb, q + sa.nc, hokb, tokb, hvb, tvb);
			/* 2. the block's triples, then the cluster's */
			pa = warp_merge(pa);
			pb = warp_merge(pb);
			if (lane == 0) {
				scratch[0][warp] = pa;
				scratch[1][warp] = pb;
			}
			consumers_sync();
			if (warp == 0) {
				pa = warp_merge(lane < WARPS ? scratch[0][lane] : none);
				pb = warp_merge(lane < WARPS ? scratch[1][lane] : none);
				const float4 ma = make_float4(pa.x, pa.y, pa.z, __int_as_float(__shfl_sync(0xffffffff, further, 0)));
				const float4 mb = make_float4(pb.x, pb.y, pb.z, 0.0f);
				if (lane == rank) {
					slot[bp][rank][0] = ma;
					slot[bp][rank][1] = mb;
					bar_arrive_expect(smem(&msg[bp]), (CLUSTER - 1) * 32);
				} else if (lane < CLUSTER) { /* to block `lane` */
					send(mapa(smem(&slot[bp][rank][0]), lane), ma, mapa(smem(&msg[bp]), lane));
					send(mapa(smem(&slot[bp][rank][1]), lane), mb, mapa(smem(&msg[bp]), lane));
				}
			}
			const int nc = max(sa.nc, sb.nc);
			Wraw nx; /* chunk 0's weights in flight through the exchange */
			wload(nx, w, b, g0, 0, N);
			bar_wait(smem(&msg[bp]), phase);
			const float4 qa = lane < CLUSTER ? slot[bp][lane][0] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			const float4 qb = lane < CLUSTER ? slot[bp][lane][1] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
			const float3 ga = warp_merge(make_float3(qa.x, qa.y, qa.z)), gb = warp_merge(make_float3(qb.x, qb.y, qb.z));
			const int next = __float_as_int(__shfl_sync(0xffffffff, qa.w, 0)); /* rank 0's */
			if (t == 0) { /* the producer's rows of the next pass */
				rowid[0] = next;
				rowid[1] = next + 1;
				bar_arrive(smem(&rowbar[0]));
				bar_arrive(smem(&rowbar[1]));
			}
			/* 3. (x - mean) * rstd * w + b for both rows, the weights loaded once */
			const float ma = ga.y, ra = rsqrtf(ga.z / N + 1e-5f);
			const float mb = gb.y, rb_ = sb.nc ? rsqrtf(gb.z / N + 1e-5f) : 0.0f;
			float *outa = y + (size_t)row * N, *outb = y + (size_t)min(rb, M - 1) * N;
			const bool veca = (((size_t)ia ^ (size_t)outa) & 15) == 0, vecb = (((size_t)ib ^ (size_t)outb) & 15) == 0;
			float *oa = outa + sa.head + 4 * g0, *ob = outb + sb.head + 4 * g0;
#define NORM(v, wi, bi, m, r) fmaf(((v) - (m)) * (r), (wi), (bi))
			for (int c = 0; c < nc; c++) {
				const Wraw cur = nx;
				if (c + 1 < nc)
					wload(nx, w, b, g0, c + 1, N);
				const unsigned sla = (q + c) % NSLOT, slb = (q + sa.nc + c) % NSLOT;
				const float4 *bufa = (const float4 *)(ring + sla * (CH * 16));
				const float4 *bufb = (const float4 *)(ring + slb * (CH * 16));
#pragma unroll
				for (int k = 0; k < U; k++) {
					const int i = t + k * THREADS, gi = c * CH + i;
					const float4 wn = next4(cur.wl[k], cur.wh[k]), bn = next4(cur.bl[k], cur.bh[k]);
					if (gi < sa.ng) {
						const float4 gw = shift4(cur.wl[k], wn, sa.head), gbb = shift4(cur.bl[k], bn, sa.head);
						float4 v = bufa[i];
						v = make_float4(NORM(v.x, gw.x, gbb.x, ma, ra), NORM(v.y, gw.y, gbb.y, ma, ra),
								NORM(v.z, gw.z, gbb.z, ma, ra), NORM(v.w, gw.w, gbb.w, ma, ra));
						if (veca) {
							__stcs((float4 *)oa + gi, v);
						} else {
							__stcs(oa + 4 * gi, v.x), __stcs(oa + 4 * gi + 1, v.y);
							__stcs(oa + 4 * gi + 2, v.z), __stcs(oa + 4 * gi + 3, v.w);
						}
					}
					if (gi < sb.ng) {
						const float4 gw = shift4(cur.wl[k], wn, sb.head), gbb = shift4(cur.bl[k], bn, sb.head);
						float4 v = bufb[i];
						v = make_float4(NORM(v.x, gw.x, gbb.x, mb, rb_), NORM(v.y, gw.y, gbb.y, mb, rb_),
								NORM(v.z, gw.z, gbb.z, mb, rb_), NORM(v.w, gw.w, gbb.w, mb, rb_));
						if (vecb) {
							__stcs((float4 *)ob + gi, v);
						} else {
							__stcs(ob + 4 * gi, v.x), __stcs(ob + 4 * gi + 1, v.y);
							__stcs(ob + 4 * gi + 2, v.z), __stcs(ob + 4 * gi + 3, v.w);
						}
					}
				}
				__syncwarp();
				if (lane == 0) { /* this warp has read the slots */
					if (c < sa.nc)
						bar_arrive(smem(&empty[sla]));
					if (c < sb.nc)
						bar_arrive(smem(&empty[slb]));
				}
			}
			if (hoka)
				__stcs(outa + t, NORM(hva, w[t], b[t], ma, ra));
			if (toka) {
				const int i = sa.head + 4 * sa.n4 + t;
				__stcs(outa + i, NORM(tva, w[i], b[i], ma, ra));
			}
			if (hokb)
				__stcs(outb + t, NORM(hvb, w[t], b[t], mb, rb_));
			if (tokb) {
				const int i = sb.head + 4 * sb.n4 + t;
				__stcs(outb + i, NORM(tvb, w[i], b[i], mb, rb_));
			}
#undef NORM
			q += sa.nc + sb.nc;
			row = next;
		}
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
