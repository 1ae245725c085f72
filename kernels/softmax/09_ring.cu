// Softmax over long rows of f32 at any width: softmax_bf16_ring.cu's kernel
// for 4-byte elements (that file is included with F32 = 1; the ring itself
// is ../ring.cuh).  08_bulk.cu gives each row one buffer the size of its
// slice, three deep, and issues the next row's copy at the top of this row:
// the bytes in flight an SM are one slice, and an odd width pads its last
// one (67% of copy at 8192 x 50257, 71% at 4096 x 262144 on an H200,
// 2026-11-28).  Here a producer warp copies each block's slice in 16 KiB
// chunks (4096 floats) into a ring of NSLOT = 13 slots, row after row,
// into whichever slots the 512 consumer threads have released; a thread's
// part of a chunk is U = 2 float4, folded into a running (max, sum) and read
// again for the output.  A row's head and tail (up to 3 elements each) ride
// beside its last chunk.
// CLUSTER: the smallest with a slice of at most 8 chunks (32768 floats):
// 2 at 50257 and 65536, 4 at 131072, 8 at 200003 and 262144 (f32 rows are
// twice the bf16 kernel's bytes, so twice its cluster); `require` says what
// fits at all (a slice of at most NSLOT chunks).
//
//! kernel  softmax_f32
//! arg     M = 8192
//! arg     N = 50257
//! in      x : f32[M, N] = randn(seed=1)
//! out     y : f32[M, N]
//! launch  grid=(min(M, sm_count / CLUSTER) * CLUSTER) block=(THREADS + 32) smem=(NSLOT * THREADS * U * 16)
//! ref     softmax(x, dim=1) -> y
//! tol     rtol=1e-5 atol=1e-8
//! flops   5*M*N
//! sweep   N = 50257, 1, 7, 13, 5003, 65536
//! require (N / 4 + CLUSTER - 1) / CLUSTER <= NSLOT * THREADS * U   // a slice fits the ring
//! tune    CLUSTER = 2, 1, 4, 8, 16
//! tune    THREADS = 512, 256, 992   // plus the producer warp: at most 1024
//! tune    U = 2, 1
//! tune    NSLOT = 13, 12, 8

#define F32 1
#include "softmax_bf16_ring.cu" /* softmax_ring(), for elem = float */

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS + 32, 1)
softmax_f32(const float *__restrict__ x, float *__restrict__ y, int M, int N)
{
	softmax_ring(x, y, M, N);
}
