// Sum across rows of f32 at any width with 16-byte loads, as
// col_sum_bf16_vec.cu does for bf16.  col_sum_f32.cu loads 4 bytes a lane,
// so a warp reads 128 bytes of a row: five 32-byte sectors where the row
// starts off a 32-byte boundary (N = 5003, 50257), and 157 blocks of 32 KB
// in flight at N = 5003 (78.5% of copy on an H200, 2026-11-28).  Here a
// lane loads a float4, a warp 512 contiguous bytes of a row.  A row of N
// f32 starts 4 * N * m bytes into x, so rows m and m + 4 start at the same
// offset from a 16-byte boundary: warp w takes only rows m = w mod 4, each
// from s = (w * N) mod 4 elements before the row's start, and its lane l
// always adds the same 4 columns, 4 * l - s + k, of the block's strip; an
// element that lands outside the row adds to a column that is never
// written.  Strips are 124 columns wide (31 chunks): a warp's 32 chunks
// cover them whatever s is.  A cluster of CLUSTER blocks shares a strip,
// each taking every CLUSTER-th group of rows, and adds up in rank order as
// col_sum_bf16_vec.cu does (no atomics; CLUSTER = 1: a block a strip, no
// cluster, which the host emulator runs).  N = 5003: 41 strips x 8 = 328
// blocks of 32 KB in flight (10.5 MB), up to 4 an SM.  The last row, whose
// last chunk could pass the end of x, loads element by element.
//
//! kernel  col_sum_f32
//! arg     M = 32768
//! arg     N = 5003
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[N]
//! launch  grid=(cdiv(N, 124), CLUSTER) block=(THREADS)
//! ref     sum(x, dim=0) -> y
//! tol     rtol=1e-4 atol=1e-3
//! sweep   N = 5003, 8192, 50257, 4093, 7, 1
//! tune    CLUSTER = 8, 4, 16, 1
//! tune    THREADS = 512, 256, 1024
//! tune    U = 4, 2, 8

#ifndef CLUSTER
#define CLUSTER 8 /* blocks a strip */
#endif
#if CLUSTER > 1
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#endif
#ifndef THREADS
#define THREADS 512 /* a multiple of 128: THREADS / 128 warps for each row class */
#endif
#ifndef U
#define U 4 /* loads in flight a lane */
#endif
#define W (THREADS / 32)
#define STRIP 124
static_assert(THREADS % 128 == 0 && THREADS <= 1024, "THREADS: a multiple of 128, at most 1024");

/* Adds the 4 floats of v to a[0..3]. */
__device__ void add4(float *a, float4 v)
{
	a[0] += v.x, a[1] += v.y, a[2] += v.z, a[3] += v.w;
}

/* Elements between the 16-byte boundary before a row m = j mod 4 and its start. */
__device__ int shift_of(int j, int N)
{
	return j * (N % 4) % 4;
}

extern "C" __global__ void __cluster_dims__(1, CLUSTER, 1) __launch_bounds__(THREADS)
col_sum_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
#if CLUSTER > 1
	cg::cluster_group cluster = cg::this_cluster();
	const int rank = (int)cluster.block_rank();
#else
	const int rank = 0;
#endif
	__shared__ __align__(16) float part[W][128];
	__shared__ float mine[STRIP];
	const int lane = threadIdx.x % 32, w = threadIdx.x / 32, j = w % 4, s = shift_of(j, N);
	const int u = blockIdx.x * STRIP + 4 * lane; /* the chunk, in elements from the boundary */
	const bool live = u < N + s;                 /* it holds an element of the row */
	const int safe = M - (N + 2) / N;            /* rows whose chunks all lie inside x */
	const int step = 4 * CLUSTER * (W / 4);
	const size_t total = (size_t)M * N;
	int m = 4 * (rank * (W / 4) + w / 4) + j;
	float a[4] = {0, 0, 0, 0};
	const float4 zero = make_float4(0, 0, 0, 0);
	for (; m + (U - 1) * step < safe; m += U * step) {
		float4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = live ? __ldcs((const float4 *)(x + (size_t)(m + k * step) * N - s + u)) : zero;
#pragma unroll
		for (int k = 0; k < U; k++)
			add4(a, v[k]);
	}
	if (m < safe) { /* the rest of the safe rows, fewer than U, in flight together */
		float4 v[U];
#pragma unroll
		for (int k = 0; k < U; k++)
			v[k] = live && m + k * step < safe ? __ldcs((const float4 *)(x + (size_t)(m + k * step) * N - s + u))
							   : zero;
#pragma unroll
		for (int k = 0; k < U; k++)
			add4(a, v[k]);
		m += (safe - m + step - 1) / step * step;
	}
	for (; m < M; m += step) /* the last rows: a chunk may pass the end of x */
		if (live) {
			const size_t b = (size_t)m * N - s + u;
#pragma unroll
			for (int k = 0; k < 4; k++)
				if (b + k < total)
					a[k] += x[b + k];
		}
	*(float4 *)&part[w][4 * lane] = make_float4(a[0], a[1], a[2], a[3]);
	__syncthreads();
	/* column i of the strip: warp v holds it at i + its class's shift */
	for (int i = threadIdx.x; i < STRIP; i += THREADS) {
		float t = 0.0f;
		for (int v = 0; v < W; v++)
			t += part[v][i + shift_of(v % 4, N)];
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
