// Sum across rows of bf16 (f32 sums) at any width with 16-byte loads.
// col_sum_bf16.cu loads 2 bytes a lane, so a warp reads 64 bytes of a row
// (two sectors, three when the row starts off a 32-byte boundary): 77% of
// copy at 32768 x 8192, 59% at 32768 x 5003 on an H200 (2026-11-28).
// Here a lane loads 8 bf16, a warp 512 contiguous bytes of a row.  A row of
// N bf16 starts 2 * N * m bytes into x, so rows m and m + 8 start at the
// same offset from a 16-byte boundary: warp w takes only rows m = w mod 8,
// each from s = (w * N) mod 8 elements before the row's start (the 16-byte
// boundary there), and its lane l always adds the same 8 columns,
// 8 * l - s + k, of the block's strip; an element that lands outside the
// row (it belongs to the row before or after) adds to a column that is
// never written.  Strips are 248 columns wide (31 chunks): a warp's 32
// chunks cover them whatever s is.  A cluster of CLUSTER blocks shares a
// strip, each taking every CLUSTER-th group of rows; the block sums its
// warps in shared memory and each block of the cluster adds up its share
// of the strip's columns from every block's shared memory, in rank order
// (the same result every launch, no atomics; CLUSTER = 1: a block a strip,
// no cluster, which the host emulator runs).  Rows whose last chunk could
// pass the end of x (the last one, or 7 / N of them) load element by
// element.
//
//! kernel  col_sum_bf16
//! arg     M = 32768
//! arg     N = 5003
//! in      x : bf16[M, N] = randn(seed=1)
//! out     y : f32[N]
//! launch  grid=(cdiv(N, 248), CLUSTER) block=(THREADS)
//! ref     sum(x, dim=0) -> y
//! tol     rtol=1e-3 atol=1e-2
//! sweep   N = 5003, 8192, 50257, 4093, 7, 1
//! tune    CLUSTER = 16, 8, 4, 1
//! tune    THREADS = 256, 512
//! tune    U = 4, 2, 8

#include <cuda_bf16.h>

#ifndef CLUSTER
#define CLUSTER 16 /* blocks a strip (more than 8: kbench allows the non-portable 16) */
#endif
#if CLUSTER > 1
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#endif
#ifndef THREADS
#define THREADS 256 /* a multiple of 256: THREADS / 256 warps for each row class */
#endif
#ifndef U
#define U 4 /* loads in flight a lane */
#endif
#define W (THREADS / 32)
#define STRIP 248
static_assert(THREADS % 256 == 0 && THREADS <= 1024, "THREADS: 256, 512, 768 or 1024");

/* Adds the 8 bf16 of v to a[0..7]. */
__device__ void add8(float *a, uint4 v)
{
	const __nv_bfloat162 *h = (const __nv_bfloat162 *)&v;
#pragma unroll
	for (int k = 0; k < 4; k++) {
		float2 f = __bfloat1622float2(h[k]);
		a[2 * k] += f.x, a[2 * k + 1] += f.y;
	}
}

/* Elements between the 16-byte boundary before a row m = j mod 8 and its start. */
__device__ int shift_of(int j, int N)
{
	return j * (N % 8) % 8;
}

extern "C" __global__ void __cluster_dims__(1, CLUSTER, 1) __launch_bounds__(THREADS)
col_sum_bf16(const __nv_bfloat16 *__restrict__ x, float *__restrict__ y, int M, int N)
{
#if CLUSTER > 1
	cg::cluster_group cluster = cg::this_cluster();
	const int rank = (int)cluster.block_rank();
#else
	const int rank = 0;
#endif
	__shared__ __align__(16) float part[W][256];
	__shared__ float mine[STRIP];
	const int lane = threadIdx.x % 32, w = threadIdx.x / 32, j = w % 8, s = shift_of(j, N);
	const int u = blockIdx.x * STRIP + 8 * lane; /* the chunk, in elements from the boundary */
	const bool live = u < N + s;                 /* it holds an element of the row */
	const int safe = M - (N + 6) / N;            /* rows whose chunks all lie inside x */
	const int step = 8 * CLUSTER * (W / 8);
	const size_t total = (size_t)M * N;
	int m = 8 * (rank * (W / 8) + w / 8) + j;
	float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
	const uint4 zero = make_uint4(0, 0, 0, 0);
	for (; m + (U - 1) * step < safe; m += U * step) {
		uint4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = live ? __ldcs((const uint4 *)(x + (size_t)(m + k * step) * N - s + u)) : zero;
#pragma unroll
		for (int k = 0; k < U; k++)
			add8(a, v[k]);
	}
	if (m < safe) { /* the rest of the safe rows, fewer than U, in flight together */
		uint4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = live && m + k * step < safe ? __ldcs((const uint4 *)(x + (size_t)(m + k * step) * N - s + u))
							   : zero;
#pragma unroll
		for (int k = 0; k < U; k++)
			add8(a, v[k]);
		m += (safe - m + step - 1) / step * step;
	}
	for (; m < M; m += step) /* the last rows: a chunk may pass the end of x */
		if (live) {
			const size_t b = (size_t)m * N - s + u;
#pragma unroll
			for (int k = 0; k < 8; k++)
				if (b + k < total)
					a[k] += __bfloat162float(x[b + k]);
		}
	float4 *p = (float4 *)&part[w][8 * lane];
	p[0] = make_float4(a[0], a[1], a[2], a[3]);
	p[1] = make_float4(a[4], a[5], a[6], a[7]);
	__syncthreads();
	/* column i of the strip: warp v holds it at i + its class's shift */
	for (int i = threadIdx.x; i < STRIP; i += THREADS) {
		float t = 0.0f;
		for (int v = 0; v < W; v++)
			t += part[v][i + shift_of(v % 8, N)];
		mine[i] = t;
	}
#if CLUSTER > 1
	cluster.sync();
#else
	__syncthreads();
#endif
	for (int i = threadIdx.x; i < STRIP; i += THREADS) {
		int c = blockIdx.x * STRIP + i;
		if (i % CLUSTER == rank && c < N) {
			float t = 0.0f;
#if CLUSTER > 1
			for (int r = 0; r < CLUSTER; r++)
				t += *cluster.map_shared_rank(&mine[i], r);
#else
			t = mine[i];
#endif
			y[c] = t;
		}
	}
#if CLUSTER > 1
	cluster.sync(); /* the others may still read this block's mine[] */
#endif
}
