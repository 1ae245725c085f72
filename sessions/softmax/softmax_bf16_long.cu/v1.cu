// Softmax over long rows in bf16 (f32 arithmetic): as 06_cluster.cu (a
// cluster a row, the blocks' (max, sum) pairs merged through distributed
// shared memory after one barrier), with each slice kept packed: four uint4
// a thread (32 bf16 in 16 registers, 16384 a block of 512), unpacked on
// each use.  The exponential is computed twice (for the sum, then the
// output), which the SFUs afford at bf16's bandwidth.
// CLUSTER = N / 16384 (4, 8, 16: kbench allows the non-portable 16); a
// cluster holds CLUSTER * THREADS * 8 * VPT elements, and a longer row is
// UNSUPPORTED (the require line), not half written.
//
//! kernel  softmax_bf16
//! arg     M = 4096
//! arg     N = 131072
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(min(M, 256 / CLUSTER) * CLUSTER) block=(THREADS)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-9
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003, 100003
//! require N <= CLUSTER * THREADS * 8 * VPT   // VPT uint4 (8 bf16) a thread, in registers
//! tune    CLUSTER = 8, 4, 16
//! tune    THREADS = 512, 1024
//! tune    VPT = 4, 8
//! tune    MINB = 2, 3, 4

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 16
#endif
#ifndef THREADS
#define THREADS 512
#endif
#ifndef VPT
#define VPT 4 /* uint4 (8 bf16) per thread: 8 * VPT elements, 8 * VPT * THREADS per block */
#endif
#ifndef MINB
#define MINB (1024 / THREADS) /* blocks an SM holds at once (registers allowing) */
#endif

__device__ float warp_max(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
	return v;
}

__device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

/* The block's max (sum when add) of v, in every thread. */
__device__ float block_reduce(float v, bool add, float *scratch)
{
	v = add ? warp_sum(v) : warp_max(v);
	if (threadIdx.x % 32 == 0)
		scratch[threadIdx.x / 32] = v;
	__syncthreads();
	v = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : add ? 0.0f : -CUDART_INF_F;
	v = add ? warp_sum(v) : warp_max(v);
	__syncthreads();
	return v;
}

/* The row's (max, sum) from every block's pair: lane r of each warp reads
 * block r's (a cluster of up to 32), the warp merges them. */
__device__ float2 cluster_merge(cg::cluster_group &cluster, float2 *pair)
{
	const float ninf = -CUDART_INF_F;
	int lane = threadIdx.x % 32;
	float2 p = lane < CLUSTER ? *cluster.map_shared_rank(pair, lane) : make_float2(ninf, 0.0f);
	float m = warp_max(p.x);
	return make_float2(m, warp_sum(p.x == ninf ? 0.0f : p.y * __expf(p.x - m)));
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

/* Rows handed out by the running launch, and its clusters that are done
 * (the last one sets both back to 0 for the next launch). */
__device__ unsigned rows_taken, clusters_done;

/* Rank 0 takes the next row for the cluster (called by its thread 0). */
__device__ int take_row(void)
{
	return (int)atomicAdd(&rows_taken, 1u);
}

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

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, MINB)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float scratch[32];
	__shared__ float2 pair[2]; /* this block's (max, sum), by row parity */
	__shared__ int next[2];    /* rank 0: the row the cluster takes next */
	const float ninf = -CUDART_INF_F;
	const unsigned pad = 0xff80ff80u; /* two bf16 -inf */
	int rank = (int)cluster.block_rank(), parity = 0;
	int chunk = (N + CLUSTER * 8 - 1) / (CLUSTER * 8) * 8; /* a multiple of 8 */
	int begin = rank * chunk, len = max(0, min(N - begin, chunk));
	bool vec = N % 8 == 0;
	if (rank == 0 && threadIdx.x == 0)
		next[0] = take_row();
	cluster.sync();
	int row = *cluster.map_shared_rank(&next[0], 0);
	while (row < M) {
		if (rank == 0 && threadIdx.x == 0)
			next[parity ^ 1] = take_row(); /* published with this row's pairs */
		const __nv_bfloat16 *in = x + (size_t)row * N + begin;
		__nv_bfloat16 *out = y + (size_t)row * N + begin;
		unsigned u[4 * VPT]; /* bf16 pairs */
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * blockDim.x;
				uint4 t = i < len / 8 ? __ldcs((const uint4 *)in + i) : make_uint4(pad, pad, pad, pad);
				u[4 * k] = t.x, u[4 * k + 1] = t.y, u[4 * k + 2] = t.z, u[4 * k + 3] = t.w;
			}
		} else {
			const unsigned short *h = (const unsigned short *)in;
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) { /* pair k: elements 2p and 2p + 1 */
				int i = 2 * (threadIdx.x + k * blockDim.x);
				u[k] = (i < len ? h[i] : 0xff80u) | (i + 1 < len ? h[i + 1] : 0xff80u) << 16;
			}
		}
		float m = ninf;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			float2 f = bf2(u[k]);
			m = fmaxf(m, fmaxf(f.x, f.y));
		}
		m = block_reduce(m, false, scratch);
		float s = 0.0f;
		if (m != ninf) {
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				float2 f = bf2(u[k]);
				s += __expf(f.x - m) + __expf(f.y - m);
			}
		}
		s = block_reduce(s, true, scratch);
		if (threadIdx.x == 0)
			pair[parity] = make_float2(m, s);
		cluster.sync();
		float2 g = cluster_merge(cluster, &pair[parity]);
		int following = *cluster.map_shared_rank(&next[parity ^ 1], 0);
		float inv = 1.0f / g.y;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			float2 f = bf2(u[k]);
			u[k] = pack2(__expf(f.x - g.x) * inv, __expf(f.y - g.x) * inv);
		}
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * blockDim.x;
				if (i < len / 8)
					__stcs((uint4 *)out + i, make_uint4(u[4 * k], u[4 * k + 1], u[4 * k + 2], u[4 * k + 3]));
			}
		} else {
			unsigned short *h = (unsigned short *)out;
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				int i = 2 * (threadIdx.x + k * blockDim.x);
				if (i < len)
					h[i] = (unsigned short)u[k];
				if (i + 1 < len)
					h[i + 1] = (unsigned short)(u[k] >> 16);
			}
		}
		row = following;
		parity ^= 1;
	}
	cluster.sync(); /* no block leaves while another may still read its pairs */
	if (rank == 0 && threadIdx.x == 0)
		leave(gridDim.x / CLUSTER);
}
