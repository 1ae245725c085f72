// RMSNorm forward over long rows of f32 at any width, on the ring of
// ../ring.cuh (softmax/softmax_bf16_ring.cu's): a producer warp copies each
// block's slice of a row in 16 KiB chunks (cp.async.bulk) into NSLOT slots
// of shared memory, row after row, into whichever slots the consumers have
// released, so DRAM never waits on a row's sum, exchange or stores.
// 03_bulk.cu's one buffer a row, three deep, keeps one slice in flight an SM
// and pads an odd width's last one (77.8% of copy at 8192 x 50257 on an
// H200, 2026-11-28).  Per row, the consumers
//   1. add the squares of their part of each chunk (and the head and tail,
//      up to 3 elements each, which ride beside the last chunk);
//   2. add the block's sums and the cluster's (exchange(): st.async into
//      every peer, 07_cluster_async.cu's protocol);
//   3. read each chunk again and store x * rsqrt(mean + eps) * w (16-byte
//      streaming stores), releasing the slot.
// The weights are read through L1 (__ldg, one element at a time: they are
// aligned to their own start, not the row's, and the loads are cheap beside
// the row's bytes); NSLOT = 8 leaves more of L1 to them than 13 does.
// CLUSTER: the smallest with a slice of at most 8 chunks (2 at 50257 and
// 65536), or twice that at NSLOT = 8.
//
//! kernel  rmsnorm_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! in      w : f32[N] = rand(0.5, 1.5)
//! out     y : f32[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     rmsnorm(x, w, eps=1e-6) -> y
//! tol     rtol=1e-4 atol=1e-5
//! bytes   2*M*N*4
//! flops   4*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! tune    CLUSTER = 2, 1, 4, 8, 16
//! tune    THREADS = 512, 256, 992   // plus the producer warp: at most 1024
//! tune    U = 2, 1
//! tune    NSLOT = 13, 8

#define F32 1
#include "../ring.cuh" /* the ring, its producer and the row exchange */

__device__ float2 add(float2 a, float2 b)
{
	return make_float2(a.x + b.x, a.y + b.y);
}

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
rmsnorm_f32(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y, int M, int N)
{
	extern __shared__ __align__(128) unsigned char ring[]; /* NSLOT chunks of CH uint4 */
	__shared__ Ring r;
	const int rank = (int)cg::this_cluster().block_rank(), t = threadIdx.x;
	ring_rows(x, M, N, ring, r, [&](int row, const Split &s, unsigned q, unsigned it, int further) {
		const bool has_h = rank == 0 && t < s.head, has_t = rank == CLUSTER - 1 && t < s.tail;
		/* 1. this thread's sum of squares */
		float q2 = 0.0f, hv = 0.0f, tv = 0.0f;
		for (int c = 0; c < s.nc; c++) {
			unsigned u[4 * U];
			chunk_words(r, ring, q + c, c, s.ng, u);
#pragma unroll
			for (int k = 0; k < 4 * U; k++) {
				const float v = __uint_as_float(u[k]);
				if (c * CH + t + k / 4 * THREADS < s.ng)
					q2 = fmaf(v, v, q2);
			}
			if (c == s.nc - 1 && t < 8) {
				hv = has_h ? r.edge[(q + c) % NSLOT][t] : 0.0f;
				tv = has_t ? r.edge[(q + c) % NSLOT][8 + t] : 0.0f;
				q2 = fmaf(hv, hv, fmaf(tv, tv, q2));
			}
		}
		/* 2. the block's sum, then the cluster's */
		int next;
		const float2 g = exchange(r, make_float2(q2, 0.0f), make_float2(0.0f, 0.0f), add, further, rank, it, &next);
		const float rs = rsqrtf(g.x / N + 1e-6f);
		/* 3. x * rs * w */
		const float *in = x + (size_t)row * N;
		float *out = y + (size_t)row * N;
		const bool ovec = (((size_t)in ^ (size_t)out) & 15) == 0;
		float *o = out + s.head + 4 * s.g0;
		const float *wo = w + s.head + 4 * s.g0;
		for (int c = 0; c < s.nc; c++) {
			const float4 *buf = (const float4 *)(ring + (q + c) % NSLOT * (CH * 16));
#pragma unroll
			for (int k = 0; k < U; k++) {
				const int i = t + k * THREADS, gi = c * CH + i;
				if (gi < s.ng) {
					const float4 v = buf[i];
					const float *wi = wo + 4 * gi;
					unsigned ow[4] = {__float_as_uint(v.x * rs * __ldg(wi)), __float_as_uint(v.y * rs * __ldg(wi + 1)),
							  __float_as_uint(v.z * rs * __ldg(wi + 2)), __float_as_uint(v.w * rs * __ldg(wi + 3))};
					store_words(o, gi, ow, ovec);
				}
			}
			release(r, q + c); /* this warp has read the slot */
		}
		if (has_h)
			out[t] = hv * rs * w[t];
		if (has_t)
			out[s.head + 4 * s.nv + t] = tv * rs * w[s.head + 4 * s.nv + t];
		return next;
	});
}
