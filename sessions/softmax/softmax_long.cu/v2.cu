// Softmax over long rows (65536 to 262144 elements, 256 KB to 1 MB of f32
// a row): more than one SM holds.  A cluster of CLUSTER thread blocks
// (Hopper: distributed shared memory) shares each row; every block keeps
// its slice in registers (512 threads, up to 32 elements each: 16384 a
// block), so the row is read once and written once whatever its length.
// Each block reduces its slice to a (max, sum of exponentials) pair and
// publishes it in its shared memory; after one cluster barrier every block
// reads the others' pairs directly (ld.shared::cluster) and merges them as
// the online softmax merges lanes, then writes.  Two blocks fit an SM (64
// registers a thread), so one cluster's loads run while another reduces.
// CLUSTER = N / 16384 (4, 8, 16: kbench allows the non-portable 16); a
// cluster holds CLUSTER * THREADS * 32 floats, and a longer row is
// UNSUPPORTED (the require line), not half written.
//
//! kernel  softmax_f32
//! arg     M = 4096
//! arg     N = 131072
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(min(M, 256 / CLUSTER) * CLUSTER) block=(THREADS)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-8
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003, 100003
//! require N <= CLUSTER * THREADS * 32   // 4 * VPT floats a thread in registers (VPT = 8)
//! tune    CLUSTER = 8, 4, 16
//! tune    THREADS = 512, 1024

#include <cooperative_groups.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 16
#endif
#ifndef THREADS
#define THREADS 512 /* two blocks an SM (64 registers a thread) */
#endif
#define VPT 8 /* float4 per thread: 32 elements, 32 * THREADS per block */

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

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS, 1024 / THREADS)
softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float scratch[32];
	__shared__ float2 pair[2]; /* this block's (max, sum), by row parity */
	__shared__ int next[2];    /* rank 0: the row the cluster takes next */
	const float ninf = -CUDART_INF_F;
	int rank = (int)cluster.block_rank(), parity = 0;
	int chunk = (N + CLUSTER * 4 - 1) / (CLUSTER * 4) * 4; /* a multiple of 4 */
	int begin = rank * chunk, len = max(0, min(N - begin, chunk));
	bool vec = N % 4 == 0;
	if (rank == 0 && threadIdx.x == 0)
		next[0] = take_row();
	cluster.sync();
	int row = *cluster.map_shared_rank(&next[0], 0);
	while (row < M) {
		if (rank == 0 && threadIdx.x == 0)
			next[parity ^ 1] = take_row(); /* published with this row's pairs */
		const float *in = x + (size_t)row * N + begin;
		float *out = y + (size_t)row * N + begin;
		float v[4 * VPT];
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * blockDim.x;
				float4 t = i < len / 4 ? __ldcs((const float4 *)in + i) : make_float4(ninf, ninf, ninf, ninf);
				v[4 * k] = t.x, v[4 * k + 1] = t.y, v[4 * k + 2] = t.z, v[4 * k + 3] = t.w;
			}
		} else {
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				int i = threadIdx.x + k * blockDim.x;
				v[k] = i < len ? __ldcs(in + i) : ninf;
			}
		}
		float m = ninf;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++)
			m = fmaxf(m, v[k]);
		m = block_reduce(m, false, scratch);
		float s = 0.0f;
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++)
			s += (v[k] = m == ninf ? 0.0f : __expf(v[k] - m));
		s = block_reduce(s, true, scratch);
		if (threadIdx.x == 0)
			pair[parity] = make_float2(m, s);
		cluster.sync();
		float2 g = cluster_merge(cluster, &pair[parity]);
		int following = *cluster.map_shared_rank(&next[parity ^ 1], 0);
		float scale = m == ninf ? 0.0f : __expf(m - g.x) / g.y;
		if (vec) {
#pragma unroll
			for (int k = 0; k < VPT; k++) {
				int i = threadIdx.x + k * blockDim.x;
				if (i < len / 4)
					__stcs((float4 *)out + i, make_float4(v[4 * k] * scale, v[4 * k + 1] * scale,
									      v[4 * k + 2] * scale, v[4 * k + 3] * scale));
			}
		} else {
#pragma unroll
			for (int k = 0; k < 4 * VPT; k++) {
				int i = threadIdx.x + k * blockDim.x;
				if (i < len)
					__stcs(out + i, v[k] * scale);
			}
		}
		row = following;
		parity ^= 1;
	}
	cluster.sync(); /* no block leaves while another may still read its pairs */
	if (rank == 0 && threadIdx.x == 0)
		leave(gridDim.x / CLUSTER);
}
