// Softmax over long rows in bf16 (f32 arithmetic): a cluster of CLUSTER
// blocks shares each row (distributed shared memory), every block keeping
// its slice in registers (1024 threads, four uint4 = 32 elements each) and
// reading the other blocks' partial max and sum from their shared memory:
// one read, one write.  As 06_cluster.cu, with 16-byte loads of 8 bf16.
//
//! kernel  softmax_bf16
//! arg     M = 4096
//! arg     N = 131072
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : bf16[M, N]
//! launch  grid=(M * CLUSTER) block=(1024)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=8e-3 atol=1e-9
//! flops   5*M*N
//! sweep   N = 65536, 131072, 262144, 200003
//! tune    CLUSTER = 2, 4, 8

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <math_constants.h>

namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 8
#endif
#define VPT 4 /* uint4 (8 bf16) per thread: 32 elements, 32768 per block */

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

/* 8 bf16 of a uint4 as floats, and back. */
__device__ void unpack8(uint4 u, float *f)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++) {
		float2 t = __bfloat1622float2(h[j]);
		f[2 * j] = t.x, f[2 * j + 1] = t.y;
	}
}

__device__ uint4 pack8(const float *f)
{
	uint4 u;
	__nv_bfloat162 *h = (__nv_bfloat162 *)&u;
#pragma unroll
	for (int j = 0; j < 4; j++)
		h[j] = __floats2bfloat162_rn(f[2 * j], f[2 * j + 1]);
	return u;
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(1024, 1)
softmax_bf16(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ y, int M, int N)
{
	cg::cluster_group cluster = cg::this_cluster();
	__shared__ float scratch[32], part_max, part_sum;
	const float ninf = -CUDART_INF_F;
	int rank = (int)cluster.block_rank();
	size_t row = blockIdx.x / CLUSTER;
	int chunk = (N + CLUSTER * 8 - 1) / (CLUSTER * 8) * 8; /* a multiple of 8 */
	int begin = rank * chunk, len = max(0, min(N - begin, chunk));
	const __nv_bfloat16 *in = x + row * N + begin;
	__nv_bfloat16 *out = y + row * N + begin;
	bool vec = N % 8 == 0;
	float v[8 * VPT];
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < len / 8)
				unpack8(__ldcs((const uint4 *)in + i), &v[8 * k]);
			else
				for (int j = 0; j < 8; j++)
					v[8 * k + j] = ninf;
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			v[k] = i < len ? __bfloat162float(in[i]) : ninf;
		}
	}
	float m = ninf;
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		m = fmaxf(m, v[k]);
	m = block_reduce(m, false, scratch);
	if (threadIdx.x == 0)
		part_max = m;
	cluster.sync();
	m = cluster_reduce(cluster, &part_max, false);
	float s = 0.0f;
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		s += (v[k] = __expf(v[k] - m));
	s = block_reduce(s, true, scratch);
	if (threadIdx.x == 0)
		part_sum = s;
	cluster.sync();
	float inv = 1.0f / cluster_reduce(cluster, &part_sum, true);
	cluster.sync(); /* no block leaves while another still reads its shared memory */
#pragma unroll
	for (int k = 0; k < 8 * VPT; k++)
		v[k] *= inv;
	if (vec) {
#pragma unroll
		for (int k = 0; k < VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < len / 8)
				__stcs((uint4 *)out + i, pack8(&v[8 * k]));
		}
	} else {
#pragma unroll
		for (int k = 0; k < 8 * VPT; k++) {
			int i = threadIdx.x + k * blockDim.x;
			if (i < len)
				out[i] = __float2bfloat16_rn(v[k]);
		}
	}
}
