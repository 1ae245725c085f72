// Attention forward, step 1 of 3: the plain way.  o = softmax(q k^T /
// sqrt(D)) v for every (batch, head) of [B, H, N, D] bf16 tensors, causal
// (query i sees keys 0..i) when CAUSAL is 1; f32 arithmetic, bf16 out.
//
// One block per query row: its 128 threads compute the row's N scores
// (each thread a key at a time, reading the key's D values straight from
// global memory) and write them to s, a [B, H, N, N] f32 output that
// nothing checks: the scores in global memory, N^2 floats per head, which
// is what FlashAttention exists to avoid.  Then the row's max and sum over
// s (block reductions), the scores turned into weights in place, and each
// thread one output dim: the weighted sum of v's column, divided by the sum.
//
// What to look at in kbench: the time goes to s (written once, read
// twice: bytes far above the 4*B*H*N*D*2 of q, k, v and o that //! bytes
// counts, so the memory roofline shows how far), and the key reads (a
// thread per key: each warp touches 32 rows of k at once, uncoalesced).
// No tensor cores: FFMA in SASS, nothing of HMMA.  Step 2 keeps the
// scores on chip (online softmax) and multiplies on the tensor cores.
//
// D is a compile-time constant: `--define D=64` for the other head size.
//
//! kernel  attn_naive
//! arg     B = 1
//! arg     H = 4
//! arg     N = 1024
//! arg     CAUSAL = 0
//! tune    D = 128
//! in      q : bf16[B, H, N, D] = randn(seed=1)
//! in      k : bf16[B, H, N, D] = randn(seed=2)
//! in      v : bf16[B, H, N, D] = randn(seed=3)
//! out     o : bf16[B, H, N, D]
//! out     s : f32[B, H, N, N]
//! launch  grid=(N, B * H) block=(128)
//! ref     attention(q, k, v, causal=CAUSAL) -> o
//! tol     rtol=2e-2 atol=1e-3
//! bytes   4*B*H*N*D*2
//! flops   4*B*H*N*N*D / (1 + CAUSAL)
//! sweep   N = 1024, 4096, 1000, 4097

#include <cuda_bf16.h>

#ifndef D
#define D 128
#endif
#define THREADS 128
#define NEG_INF __int_as_float(0xff800000) /* -inf (NVRTC has no math.h) */

typedef __nv_bfloat16 bf16;

/* The block's max (is_max) or sum of x; every thread gets it. */
__device__ float block_reduce(float x, bool is_max)
{
	__shared__ float part[THREADS / 32];
	for (int o = 16; o > 0; o /= 2) {
		float y = __shfl_xor_sync(~0u, x, o);
		x = is_max ? fmaxf(x, y) : x + y;
	}
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = x;
	__syncthreads();
	x = part[0];
	for (int w = 1; w < THREADS / 32; w++)
		x = is_max ? fmaxf(x, part[w]) : x + part[w];
	__syncthreads(); /* part is reused by the next reduction */
	return x;
}

extern "C" __global__ void attn_naive(const bf16 *q, const bf16 *k, const bf16 *v, bf16 *o,
				      float *s, int N, int CAUSAL)
{
	__shared__ float qs[D];
	int i = blockIdx.x;
	size_t bh = blockIdx.y;
	const bf16 *kb = k + bh * N * D, *vb = v + bh * N * D;
	float *sr = s + (bh * N + i) * (size_t)N;
	for (int x = threadIdx.x; x < D; x += THREADS)
		qs[x] = __bfloat162float(q[(bh * N + i) * D + x]);
	__syncthreads();
	int nk = CAUSAL ? i + 1 : N;
	float scale = rsqrtf((float)D), mx = NEG_INF;
	for (int j = threadIdx.x; j < nk; j += THREADS) {
		float acc = 0;
		for (int x = 0; x < D; x++)
			acc += qs[x] * __bfloat162float(kb[(size_t)j * D + x]);
		sr[j] = acc * scale;
		mx = fmaxf(mx, acc * scale);
	}
	mx = block_reduce(mx, true);
	float sum = 0;
	for (int j = threadIdx.x; j < nk; j += THREADS) {
		float p = __expf(sr[j] - mx);
		sr[j] = p;
		sum += p;
	}
	sum = block_reduce(sum, false); /* its barrier also makes sr visible */
	for (int x = threadIdx.x; x < D; x += THREADS) {
		float acc = 0;
		for (int j = 0; j < nk; j++)
			acc += sr[j] * __bfloat162float(vb[(size_t)j * D + x]);
		o[(bh * N + i) * D + x] = __float2bfloat16(acc / sum);
	}
}
