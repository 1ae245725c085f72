// LayerNorm forward over long rows of bf16 at any width (statistics in
// f32): layernorm_bf16_ring.cu's ring and producer warp, ROWS rows a pass, so
// each load of w and b serves ROWS rows (issue 31; 05_pair.cu is the f32
// version, and says why).  layernorm_bf16_ring.cu reads w and b from L2 for
// every row, twice the row's own bytes again: L2 moves 2 bytes for each
// byte from DRAM, and it stopped at 38% of copy at 8192 x 50257 on an H200
// (bench/layernorm_ring_h200.txt) where softmax_bf16_ring.cu, the same ring
// without weights, gives 88%.  Here a pass takes ROWS rows (2 or 4): each
// row's statistics (Welford a chunk at a time, Chan's merge), one cluster
// exchange of ROWS float4 a rank, then one output loop that loads each
// thread's w and b once for every row: at ROWS = 2, 1.5 bytes through L2
// for each byte from DRAM (RMSNorm's ratio), at ROWS = 4, 1.25.  A row's
// 8 weights at any head are the thread's own aligned uint4 of w and the
// next lane's (a shuffle; lane 31 loads it) shifted by that row's head; the
// next chunk's loads are in flight while this chunk is written, the first
// chunk's through the exchange.  Chunks of THREADS * U uint4 (8 KiB at
// 512 x 1), NSLOT = 26: a pass's slices must fit at once (ROWS = 2: CLUSTER
// 1 at 50257, 4 at 200003; ROWS = 4 with THREADS = 480 and NSLOT = 28, 128
// registers a thread: 2 and 8).  ROWS = 1: layernorm_bf16_ring.cu with
// these weight loads, to compare.
//
//! kernel  layernorm_bf16
//! arg     M = 8192
//! arg     N = 50257
//! in      x : bf16[M, N] = randn(seed=1)
//! in      w : bf16[N] = rand(0.5, 1.5)
//! in      b : bf16[N] = randn(seed=3)
//! out     y : bf16[M, N]
//! launch  grid=(min((M + ROWS - 1) / ROWS, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     layernorm(x, w, b, eps=1e-5) -> y
//! tol     rtol=1e-2 atol=1e-2
//! bytes   2*M*N*2
//! flops   7*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require ROWS * (((N / 8 + CLUSTER - 1) / CLUSTER + THREADS * U - 1) / (THREADS * U)) <= NSLOT   // a pass's slices fit the ring
//! require NSLOT * THREADS * U * 16 <= 220 * 1024
//! require ROWS * THREADS < 2048   // ROWS = 4 at THREADS = 480: 119 registers; at 512 (96 a thread) it spills
//! tune    CLUSTER = 1, 2, 4, 8, 16
//! tune    THREADS = 512, 480, 256   // 480 (+ 32): 128 registers a thread, not 96
//! tune    U = 1
//! tune    NSLOT = 26, 28, 24, 13
//! tune    ROWS = 2, 4, 1   // 1: the ring with these weight loads, for comparison

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
#define U 1 /* uint4 a consumer thread a chunk: a chunk is THREADS * U uint4 */
#endif
#ifndef NSLOT
#define NSLOT 26 /* chunks in the ring: 26 * 8 KiB = 208 KiB */
#endif
#ifndef ROWS
#define ROWS 2 /* rows a pass: each load of w and b serves ROWS rows (1, 2 or 4) */
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
		if (i >= ROWS) { /* the consumers hand over each pass's rows */
			bar_wait(smem(&rowbar[i % ROWS]), (i / ROWS + 1) & 1);
			r = rowid[i % ROWS];
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
				bulk_load(smem(ring + slot * (CH * 16)), in + s.head + 8 * (s.g0 + c * CH), 16 * max(n, 0),
					  smem(&full[slot]));
			}
		}
	}
}

/* w's aligned uint4 j (elements 8j .. 8j + 7; 0 past N). */
__device__ uint4 vec8(const __nv_bfloat16 *w, int j, int N)
{
	if (8 * j + 8 <= N)
		return __ldg((const uint4 *)w + j);
	uint4 v = make_uint4(0, 0, 0, 0);
	unsigned short *h = (unsigned short *)&v;
#pragma unroll
	for (int k = 0; k < 8; k++)
		if (8 * j + k < N)
			h[k] = ((const unsigned short *)w)[8 * j + k];
	return v;
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
	return p;
}

/* The raw weights of chunk c for this thread: its own aligned uint4 of w
 * and b at g0 + gi (lo) and, lane 31 only, the next ones (hi; the other
 * lanes take theirs from lane + 1). */
struct Wraw {
	uint4 wl[U], bl[U], wh[U], bh[U];
};

__device__ void wload(Wraw &r, const __nv_bfloat16 *w, const __nv_bfloat16 *b, int g0, int c, int N)
{
	const bool last = threadIdx.x % 32 == 31;
#pragma unroll
	for (int k = 0; k < U; k++) {
		const int j = g0 + c * CH + (int)threadIdx.x + k * THREADS;
		r.wl[k] = vec8(w, j, N);
		r.bl[k] = vec8(b, j, N);
		r.wh[k] = last ? vec8(w, j + 1, N) : make_uint4(0, 0, 0, 0);
		r.bh[k] = last ? vec8(b, j + 1, N) : make_uint4(0, 0, 0, 0);
	}
}

/* lo's next uint4: lane + 1's lo, lane 31's own hi. */
__device__ uint4 next8(uint4 lo, uint4 hi)
{
	const bool last = threadIdx.x % 32 == 31;
	const uint4 n = make_uint4(__shfl_down_sync(0xffffffff, lo.x, 1), __shfl_down_sync(0xffffffff, lo.y, 1),
				   __shfl_down_sync(0xffffffff, lo.z, 1), __shfl_down_sync(0xffffffff, lo.w, 1));
	return last ? hi : n;
}

/* 8 bf16 of x at (x - mean) * rstd * w + b, packed. */
__device__ uint4 norm8(uint4 v, uint4 gw, uint4 gb, float mean, float rstd)
{
	unsigned xv[4] = {v.x, v.y, v.z, v.w}, wv[4] = {gw.x, gw.y, gw.z, gw.w}, bv[4] = {gb.x, gb.y, gb.z, gb.w};
#pragma unroll
	for (int j = 0; j < 4; j++) {
		const float2 f = bf2(xv[j]), fw = bf2(wv[j]), fb = bf2(bv[j]);
		xv[j] = pack2(fmaf((f.x - mean) * rstd, fw.x, fb.x), fmaf((f.y - mean) * rstd, fw.y, fb.y));
	}
	return make_uint4(xv[0], xv[1], xv[2], xv[3]);
}

/* uint4 gi of a row's slice from o: one 16-byte store, or 8 of 2 bytes
 * where the output row is aligned unlike the input. */
__device__ void store8(__nv_bfloat16 *o, int gi, uint4 v, bool vec)
{
	if (vec) {
		__stcs((uint4 *)o + gi, v);
	} else {
		const unsigned xv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
		for (int j = 0; j < 8; j++)
			((unsigned short *)o)[8 * gi + j] = (unsigned short)(xv[j / 2] >> (16 * (j % 2)));
	}
}

/* One element: (v - mean) * rstd * w[i] + b[i]. */
__device__ __nv_bfloat16 norm1(float v, const __nv_bfloat16 *w, const __nv_bfloat16 *b, int i, float mean, float rstd)
{
	return __float2bfloat16_rn(fmaf((v - mean) * rstd, __bfloat162float(w[i]), __bfloat162float(b[i])));
}


extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
layernorm_bf16(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
	       const __nv_bfloat16 *__restrict__ b, __nv_bfloat16 *__restrict__ y, int M, int N)
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
					const uint4 wn = next8(cur.wl[k], cur.wh[k]), bn = next8(cur.bl[k], cur.bh[k]);
#pragma unroll
					for (int r = 0; r < ROWS; r++) {
						if (gi >= s[r].ng)
							continue;
						const __nv_bfloat16 *in = x + (size_t)(row + r) * N;
						__nv_bfloat16 *out = y + (size_t)(row + r) * N, *o = out + s[r].head + 8 * g0;
						const uint4 v = ((const uint4 *)(ring + (q0[r] + c) % NSLOT * (CH * 16)))[i];
						const uint4 gw = shift8(cur.wl[k], wn, s[r].head), gb = shift8(cur.bl[k], bn, s[r].head);
						store8(o, gi, norm8(v, gw, gb, mean[r], rstd[r]), (((size_t)in ^ (size_t)out) & 15) == 0);
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
				__nv_bfloat16 *out = y + (size_t)min(row + r, M - 1) * N;
				if (hok[r])
					out[t] = norm1(hv[r], w, b, t, mean[r], rstd[r]);
				if (tok[r]) {
					const int i = s[r].head + 8 * s[r].n8 + t;
					out[i] = norm1(tv[r], w, b, i, mean[r], rstd[r]);
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
