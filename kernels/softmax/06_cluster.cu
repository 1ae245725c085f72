// Softmax over long rows (65536 to 262144 elements, 256 KB to 1 MB of f32
// a row): more than one SM holds.  A cluster of CLUSTER thread blocks
// (Hopper: distributed shared memory) shares each row; every block keeps
// its slice in registers (1024 threads, up to 32 elements each), reduces
// it, and reads the other blocks' partial max and sum straight from their
// shared memory, so the row is read once and written once whatever its
// length.  CLUSTER = N / 32768 keeps 32 elements a thread (the tune line;
// the default 8 covers every swept N).
//
//! kernel  softmax_f32
//! arg     M = 4096
//! arg     N = 131072
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(M * CLUSTER) block=(1024)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-8
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003
//! tune    CLUSTER = 2, 4, 8

#include <cooperative_groups.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 8
#endif
#define VPT 8 /* float4 per thread: 32 elements, 32768 per block */

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

/* The cluster's max (sum) of each block's `mine`: lane r of every warp
 * reads block r's value from its shared memory, then the warp reduces. */
__device__ float cluster_reduce(cg::cluster_group &cluster, float *mine, bool add)
{
	int lane = threadIdx.x % 32;
	float v = add ? 0.0f : -CUDART_INF_F;
	if (lane < CLUSTER)
		v = *cluster.map_shared_rank(mine, lane);
	return add ? warp_sum(v) : warp_max(v);
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(1024, 1)
softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float scratch[32], part_max, part_sum;
	const float ninf = -CUDART_INF_F;
	int rank = (int)cluster.block_rank();
	size_t row = blockIdx.x / CLUSTER;
	int chunk = (N + CLUSTER * 4 - 1) / (CLUSTER * 4) * 4; /* a multiple of 4 */
	int begin = rank * chunk, len = max(0, min(N - begin, chunk));
	const float *in = x + row * N + begin;
	float *out = y + row * N + begin;
	bool vec = N % 4 == 0;
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
	if (threadIdx.x == 0)
		part_max = m;
	cluster.sync();
	m = cluster_reduce(cluster, &part_max, false);
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < 4 * VPT; k++)
		s += (v[k] = __expf(v[k] - m));
	s = block_reduce(s, true, scratch);
	if (threadIdx.x == 0)
		part_sum = s;
	cluster.sync();
	float inv = 1.0f / cluster_reduce(cluster, &part_sum, true);
	cluster.sync(); /* no block leaves while another still reads its shared memory */
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < len / 4)
				__stcs((float4 *)out + i, make_float4(v[4 * k] * inv, v[4 * k + 1] * inv,
								      v[4 * k + 2] * inv, v[4 * k + 3] * inv));
		}
	} else {
#pragma unroll
		for (int k = 0; k < 4 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < len)
				__stcs(out + i, v[k] * inv);
		}
	}
}
