// LayerNorm forward over long rows of f32 at any width: 04_ring.cu's ring
// and producer warp, ROWS rows a pass (2 or 4), so each load of w and b
// serves ROWS rows (issue 31).  04_ring.cu reads w and b from L2 for every row: at
// 8192 x 50257 that is 402 KB of L2 -> SM traffic a row beside the row's
// 201 KB read and 201 KB write, L2 traffic twice the DRAM traffic
// (RMSNorm's one weight makes 1.5 times), and every LayerNorm kernel stopped
// at 45% of copy on an H200 whatever its structure (bench/layernorm_ring_h200.txt),
// where the same ring for softmax gives 88%.  WS = 1 (the weights in shared
// memory) needed slices four times smaller, and the per-row latency (the
// statistics, the cluster exchange, the stores) then cost more than L2 did.
// Here a pass takes ROWS rows, r .. r + ROWS - 1 (the counter hands them out
// ROWS at a time): the statistics of each (a (count, mean, M2) by Welford's
// update a chunk at a time and Chan's merge, as in 04_ring.cu), one cluster
// exchange of ROWS float4 a rank, then one output loop over the chunk index
// that loads w and b once and writes every row: w and b cost one row's bytes
// a pass, so at ROWS = 2 L2 moves 3 bytes for each 2 from DRAM (RMSNorm's
// ratio; its f32 03_bulk.cu reaches 78%) and at ROWS = 4 5 for each 4.
// A row's 4 weights at any head are a thread's own aligned float4 of w (one
// 16-byte load, where load4 made two at a row off a boundary) and the next
// lane's (a shuffle; lane 31 loads it), shifted by each row's head; the next
// chunk's loads are in flight while this chunk is written (the first
// chunk's through the exchange wait).
// The ring: chunks of THREADS * U float4 (8 KiB at 512 x 1), NSLOT = 26 of
// them; a pass's slices must fit at once, ROWS * ceil(PER / CH) <= NSLOT:
// ROWS = 2 at CLUSTER 2 at 50257, 8 at 200003; ROWS = 4 with THREADS = 480
// (128 registers a thread where 544 threads get 96) and NSLOT = 28 at
// CLUSTER 4 at 50257, 16 at 200003.  ROWS = 1 is 04_ring.cu with these
// weight loads (one load and a shuffle, a chunk ahead): beside ROWS = 2 it
// says what the weights' L2 bytes cost, apart from how they were loaded.
//
//! kernel  layernorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! in      b : f32[N] = randn(seed=3)
//! out     y : f32[M, N]
//! launch  grid=(min((M + ROWS - 1) / ROWS, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require ROWS * (((N / 4 + CLUSTER - 1) / CLUSTER + THREADS * U - 1) / (THREADS * U)) <= NSLOT   // a pass's slices fit the ring
//! require NSLOT * THREADS * U * 16 <= 220 * 1024
//! tune    CLUSTER = 2, 1, 4, 8, 16
//! tune    THREADS = 512, 480, 256   // 480 (+ 32): 128 registers a thread, not 96
//! tune    U = 1
//! tune    NSLOT = 26, 28, 24, 13
//! tune    ROWS = 2, 4, 1   // 1: the ring with these weight loads, for comparison

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
#ifndef ROWS
#define ROWS 2 /* rows a pass: each load of w and b serves ROWS rows (1, 2 or 4) */
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
		if (i >= ROWS) { /* the consumers hand over each pass's rows */
			bar_wait(smem(&rowbar[i % ROWS]), (i / ROWS + 1) & 1);
			r = rowid[i % ROWS];
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

/* (v - m) * r * wi + bi */
#define NORM(v, wi, bi, m, r) fmaf(((v) - (m)) * (r), (wi), (bi))

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
layernorm_f32(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ b,
	      float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH vectors */
	__shared__ float edge[NSLOT][16];                      /* a row's head and tail, beside its last chunk */
	__shared__ float3 scratch[ROWS][32];                   /* the consumer warps' triples, a row each */
	__shared__ __align__(16) float4 slot[2][CLUSTER][ROWS]; /* messages by sender rank: a row each */
	__shared__ __align__(8) unsigned long long full[NSLOT], empty[NSLOT], msg[2], rowbar[ROWS];
	__shared__ int rowid[ROWS]; /* the rows of the next pass, for the producer */
	__shared__ int first;       /* rank 0: the cluster's first pass */
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
		for (int r = 0; r < ROWS; r++)
			bar_init(smem(&rowbar[r]), 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		if (rank == 0)
			first = (int)atomicAdd(&rows_taken, (unsigned)ROWS);
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
			int further = 0; /* rank 0's thread 0: the next pass's rows */
			if (rank == 0 && t == 0)
				further = (int)atomicAdd(&rows_taken, (unsigned)ROWS);
			/* rows row .. row + ROWS - 1, those past M empty (the producer stopped
			 * there); row r's chunks in slots q0[r] .. q0[r] + s[r].nc - 1 */
			Split s[ROWS];
			unsigned q0[ROWS];
			bool hok[ROWS], tok[ROWS];
			float hv[ROWS], tv[ROWS], mean[ROWS], rstd[ROWS];
			float3 p[ROWS];
			int nc = 0;
#pragma unroll
			for (int r = 0; r < ROWS; r++) {
				s[r] = split(x + (size_t)min(row + r, M - 1) * N, N, rank);
				if (row + r >= M)
					s[r].ng = s[r].nc = s[r].head = s[r].tail = 0;
				q0[r] = r ? q0[r - 1] + s[r - 1].nc : q;
				hok[r] = rank == 0 && t < s[r].head;
				tok[r] = rank == CLUSTER - 1 && t < s[r].tail;
				hv[r] = tv[r] = 0.0f;
				nc = max(nc, s[r].nc);
			}
			/* 1. the running (count, mean, M2) of this thread's part of each row */
#pragma unroll
			for (int r = 0; r < ROWS; r++)
				p[r] = row_stats(ring, full, edge, s[r], q0[r], hok[r], tok[r], hv[r], tv[r]);
			/* 2. the block's triples, then the cluster's */
#pragma unroll
			for (int r = 0; r < ROWS; r++) {
				p[r] = warp_merge(p[r]);
				if (lane == 0)
					scratch[r][warp] = p[r];
			}
			consumers_sync();
			if (warp == 0) {
				const float fv = __int_as_float(__shfl_sync(0xffffffff, further, 0));
#pragma unroll
				for (int r = 0; r < ROWS; r++) {
					p[r] = warp_merge(lane < WARPS ? scratch[r][lane] : none);
					const float4 m = make_float4(p[r].x, p[r].y, p[r].z, fv);
					if (lane == rank)
						slot[bp][rank][r] = m;
					else if (lane < CLUSTER) /* to block `lane` */
						send(mapa(smem(&slot[bp][rank][r]), lane), m, mapa(smem(&msg[bp]), lane));
				}
				if (lane == rank)
					bar_arrive_expect(smem(&msg[bp]), (CLUSTER - 1) * 16 * ROWS);
			}
			Wraw nx; /* chunk 0's weights in flight through the exchange */
			wload(nx, w, b, g0, 0, N);
			bar_wait(smem(&msg[bp]), phase);
			int next = 0;
#pragma unroll
			for (int r = 0; r < ROWS; r++) {
				const float4 qv = lane < CLUSTER ? slot[bp][lane][r] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
				const float3 g = warp_merge(make_float3(qv.x, qv.y, qv.z));
				if (r == 0)
					next = __float_as_int(__shfl_sync(0xffffffff, qv.w, 0)); /* rank 0's */
				mean[r] = g.y;
				rstd[r] = s[r].nc ? rsqrtf(g.z / N + 1e-5f) : 0.0f;
			}
			if (t == 0) { /* the producer's rows of the next pass */
				for (int r = 0; r < ROWS; r++) {
					rowid[r] = next + r;
					bar_arrive(smem(&rowbar[r]));
				}
			}
			/* 3. (x - mean) * rstd * w + b for every row, the weights loaded once */
			for (int c = 0; c < nc; c++) {
				const Wraw cur = nx;
				if (c + 1 < nc)
					wload(nx, w, b, g0, c + 1, N);
#pragma unroll
				for (int k = 0; k < U; k++) {
					const int i = t + k * THREADS, gi = c * CH + i;
					const float4 wn = next4(cur.wl[k], cur.wh[k]), bn = next4(cur.bl[k], cur.bh[k]);
#pragma unroll
					for (int r = 0; r < ROWS; r++) {
						if (gi >= s[r].ng)
							continue;
						const float *in = x + (size_t)(row + r) * N;
						float *out = y + (size_t)(row + r) * N, *o = out + s[r].head + 4 * g0;
						const float4 gw = shift4(cur.wl[k], wn, s[r].head), gb = shift4(cur.bl[k], bn, s[r].head);
						const float m = mean[r], rs = rstd[r];
						float4 v = ((const float4 *)(ring + (q0[r] + c) % NSLOT * (CH * 16)))[i];
						v = make_float4(NORM(v.x, gw.x, gb.x, m, rs), NORM(v.y, gw.y, gb.y, m, rs),
								NORM(v.z, gw.z, gb.z, m, rs), NORM(v.w, gw.w, gb.w, m, rs));
						if ((((size_t)in ^ (size_t)out) & 15) == 0) {
							__stcs((float4 *)o + gi, v);
						} else {
							__stcs(o + 4 * gi, v.x), __stcs(o + 4 * gi + 1, v.y);
							__stcs(o + 4 * gi + 2, v.z), __stcs(o + 4 * gi + 3, v.w);
						}
					}
				}
				__syncwarp();
				if (lane == 0) { /* this warp has read the slots */
#pragma unroll
					for (int r = 0; r < ROWS; r++)
						if (c < s[r].nc)
							bar_arrive(smem(&empty[(q0[r] + c) % NSLOT]));
				}
			}
#pragma unroll
			for (int r = 0; r < ROWS; r++) {
				float *out = y + (size_t)min(row + r, M - 1) * N;
				if (hok[r])
					__stcs(out + t, NORM(hv[r], w[t], b[t], mean[r], rstd[r]));
				if (tok[r]) {
					const int i = s[r].head + 4 * s[r].n4 + t;
					__stcs(out + i, NORM(tv[r], w[i], b[i], mean[r], rstd[r]));
				}
			}
			q = q0[ROWS - 1] + s[ROWS - 1].nc;
			row = next;
		}
	}
	cluster.sync(); /* no block leaves while a peer's st.async may target it */
	if (rank == 0 && t == 0)
		leave(clusters);
}
