// (9) c = gelu(a b + bias), tanh form, by hand: kernels/gemm/03_pipeline.cu
// (swizzled cp.async pipeline, ldmatrix + mma.sync, 8 warps of 64 x 64)
// with the bias row and GELU applied to the accumulator in its epilogue,
// the bf16 pairs stored as there.  The reference kernel computes each
// element as a plain sum in double.
//
//! kernel  matmul_bias_gelu
//! arg     S = 4096
//! arg     M = S
//! arg     N = S
//! arg     K = S
//! in      a : bf16[M, K] = randn(seed=1)
//! in      b : bf16[K, N] = randn(0, 0.05, seed=2)
//! in      bias : f32[N] = randn(seed=3)
//! out     c : bf16[M, N]
//! launch  grid=(cdiv(M, BM) * cdiv(N, 32768 / BM)) block=(256) smem=(STAGES * (BM + 32768 / BM) * BK * 2)
//! ref     kernel matmul_bias_gelu_ref
//! tol     rtol=2e-2 atol=2e-2
//! flops   2*M*N*K
//! sweep   S = 4096, 1001
//! tune    BM = 128, 256
//! tune    BK = 64, 32
//! tune    STAGES = 4, 3

#include <cuda_bf16.h>

#ifndef BM
#define BM 128 /* the block tile is BM x BN; BN follows: 8 warps of 64 x 64 */
#endif
#define BN (32768 / BM)
#ifndef BK
#define BK 64
#endif
#ifndef STAGES
#define STAGES 4
#endif
#define GROUP 8 /* tile rows a group of blocks walks together (L2 reuse) */
#define THREADS 256
#define WN_WARPS (BN / 64) /* the warps as (BM / 64) x (BN / 64) */
#define MT 4 /* a warp's 64 x 64: MT x NT mma tiles of 16 x 8 */
#define NT 8
#define KSTEPS (BK / 16)
#define CHA (BK / 8) /* 16-byte chunks in a row of the A tile, of the B tile */
#define CHB (BN / 8)
#define A_BYTES (BM * BK * 2) /* one stage of A, of B */
#define B_BYTES (BK * BN * 2)

static_assert(BM == 128 || BM == 256, "8 warps of 64 x 64: BM x BN is 128 x 256 or 256 x 128");
static_assert(BK == 32 || BK == 64, "BK is 32 or 64 (the A swizzle takes 4 or 8 chunks a row)");
static_assert(STAGES >= 2, "a pipeline needs two stages");

/* The byte offset of chunk c of row r in a tile of CH 16-byte chunks a row:
 * the chunk index XORed with bits of the row so that 8 consecutive rows at
 * one chunk land in 8 different 16-byte bank groups (a 128-byte window). */
template <int CH> __device__ __forceinline__ unsigned swz(int r, int c)
{
	static_assert(CH == 4 || CH % 8 == 0, "4 or a multiple of 8 chunks a row");
	const int x = CH == 4 ? r / 2 % 4 : r % 8; /* CH == 4: two rows share a window */
	return (unsigned)(r * CH + (c ^ x)) * 16;
}

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* 16 bytes from src to shared dst, of which only the first `bytes` are
 * read; the rest are zeros (bytes = 0: a tile's edge, src is not read). */
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, int bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

__device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldsm_x4(unsigned *r, unsigned addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* Two B fragments (n tiles j and j + 1) from a k-major tile. */
__device__ __forceinline__ void ldsm_x4_trans(unsigned *b0, unsigned *b1, unsigned addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])
		     : "r"(addr));
}

/* d += a b for one m16n8k16 tile, f32 accumulate. */
__device__ __forceinline__ void mma_bf16(float *d, const unsigned *a, const unsigned *b)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
		     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* The R x C tile at (r0, c0) of the row-major rows x cols matrix g into the
 * swizzled tile at shared address s, one element at a time, zeros outside
 * g: for rows that are not 16-byte aligned. */
template <int R, int C>
__device__ void load_tile_scalar(unsigned char *s, const __nv_bfloat16 *g, int r0, int c0, int rows,
				 int cols)
{
	for (int i = threadIdx.x; i < R * C; i += THREADS) {
		const int r = i / C, c = i % C;
		const bool in = r0 + r < rows && c0 + c < cols;
		*(__nv_bfloat16 *)(s + swz<C / 8>(r, c / 8) + c % 8 * 2) =
			in ? g[(size_t)(r0 + r) * cols + c0 + c] : __float2bfloat16_rn(0.0f);
	}
}

/* This thread's share of the copies of one stage: the A tile is BM rows of
 * CHA chunks, thread t copying chunk t % CHA of rows t / CHA + i * (THREADS
 * / CHA); likewise B.  What varies from trip to trip is only k0.  Offsets
 * are 32-bit (the vector path needs M K and K N below 2^31): registers are
 * what this kernel is short of. */
struct loader {
	unsigned a, b;		/* this thread's first element of A (k0 = 0), of B */
	unsigned a_dst, b_dst;	/* its offset in a stage of A, of B */
	unsigned a_rows_in;	/* bit i: copy i's row lies inside M */
	int a_k, b_k;		/* its chunk's k in the A tile, its first row's k in the B tile */
	bool b_col_in;		/* its chunk lies inside N */
};

#define A_COPIES (BM * CHA / THREADS)
#define B_COPIES (BK * CHB / THREADS)
#define A_STEP (THREADS / CHA) /* rows between one thread's copies */
#define B_STEP (THREADS / CHB)

__device__ __forceinline__ loader loader_init(int m0, int n0, int M, int N, int K)
{
	const int t = threadIdx.x, ar = t / CHA, ac = t % CHA, br = t / CHB, bc = t % CHB;
	loader l;
	l.a = (unsigned)(m0 + ar) * K + ac * 8;
	l.a_dst = swz<CHA>(ar, ac); /* A_STEP is a multiple of 8 rows: the same XOR for every copy */
	l.a_rows_in = 0;
	for (int i = 0; i < A_COPIES; i++)
		l.a_rows_in |= (unsigned)(m0 + ar + i * A_STEP < M) << i;
	l.a_k = ac * 8;
	l.b = (unsigned)br * N + n0 + bc * 8;
	l.b_dst = swz<CHB>(br, bc);
	l.b_k = br;
	l.b_col_in = n0 + bc * 8 < N;
	return l;
}

/* The copies of trip k0 into the stage at shared sa (A) and sb (B). */
__device__ __forceinline__ void loader_copy(const loader &l, const __nv_bfloat16 *a, const __nv_bfloat16 *b,
					    unsigned sa, unsigned sb, int k0, int N, int K)
{
	const bool k_in = k0 + l.a_k < K; /* K % 8 == 0: a chunk is all inside or all past */
#pragma unroll
	for (int i = 0; i < A_COPIES; i++) {
		const bool in = k_in && (l.a_rows_in >> i & 1);
		cp_async16(sa + l.a_dst + i * A_STEP * CHA * 16, a + (in ? l.a + i * A_STEP * K + k0 : 0),
			   in ? 16 : 0);
	}
#pragma unroll
	for (int i = 0; i < B_COPIES; i++) {
		const bool in = l.b_col_in && k0 + l.b_k + i * B_STEP < K;
		cp_async16(sb + l.b_dst + i * B_STEP * CHB * 16, b + (in ? l.b + (k0 + i * B_STEP) * N : 0),
			   in ? 16 : 0);
	}
}

/* acc += the A rows m0.. times the B columns n0.. of this block, K a trip
 * of BK at a time through the STAGES-deep pipeline.  VEC: cp.async copies
 * (rows 16-byte aligned), else element by element; two instantiations, so
 * that the fast path keeps no register for the slow one's needs. */
template <bool VEC>
__device__ __forceinline__ void mainloop(float (&acc)[MT][NT][4], unsigned char *smem,
					 const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
					 int m0, int n0, int wm, int wn, int M, int N, int K)
{
	const int lane = threadIdx.x % 32;
	const unsigned sa = smem_addr(smem), sb = sa + STAGES * A_BYTES;
	const loader ld = loader_init(m0, n0, M, N, K);
	const int trips = (K + BK - 1) / BK;
	auto copy = [&](int stage, int k0) {
		if (VEC) {
			loader_copy(ld, a, b, sa + stage * A_BYTES, sb + stage * B_BYTES, k0, N, K);
		} else {
			load_tile_scalar<BM, BK>(smem + stage * A_BYTES, a, m0, k0, M, K);
			load_tile_scalar<BK, BN>(smem + STAGES * A_BYTES + stage * B_BYTES, b, k0, n0, K, N);
		}
	};

	/* ldmatrix addresses.  A: lanes 0-15 name rows wm + 0..15 at chunk 2 kk,
	 * lanes 16-31 the same rows at 2 kk + 1; the XOR of a row depends on
	 * lane % 8 only (wm and 16 i are multiples of 8), so its chunk is (2 kk)
	 * ^ xa.  B: lanes 0-15 name k rows 16 kk + 0..15 at the chunk of n tile
	 * j, lanes 16-31 at j + 1: chunk wn / 8 + (j ^ xb).  Rows are multiples
	 * of 64 bytes (128 for B, and A at BK = 64) and a stage of 128, so the
	 * chunk bits of an address are free and the XOR applies to the address. */
	const int xa = (lane / 16) ^ (CHA == 4 ? lane % 8 / 2 : lane % 8), xb = (lane / 16) ^ (lane % 8);
	const unsigned a_lane = (unsigned)(wm + lane % 16) * CHA * 16 + xa * 16;
	const unsigned b_lane = (unsigned)(lane % 16) * CHB * 16 + wn / 8 * 16 + xb * 16;
	unsigned fa[2][MT][4], fb[2][NT][2];
	auto frags = [&](int buf, int stage, int kk) {
		const unsigned as = (sa + stage * A_BYTES + a_lane) ^ (kk * 32);
		const unsigned bs = sb + stage * B_BYTES + b_lane + kk * 16 * CHB * 16;
#pragma unroll
		for (int i = 0; i < MT; i++)
			ldsm_x4(fa[buf][i], as + i * 16 * CHA * 16);
#pragma unroll
		for (int j = 0; j < NT; j += 2)
			ldsm_x4_trans(fb[buf][j], fb[buf][j + 1], bs ^ (j * 16));
	};

	for (int s = 0; s < STAGES - 1; s++) { /* the first STAGES - 1 trips' copies */
		if (s < trips)
			copy(s, s * BK);
		cp_async_commit();
	}
	cp_async_wait<STAGES - 2>(); /* trip 0 is in */
	__syncthreads();
	int rd = 0, wr = STAGES - 1; /* the stage read, the stage written next */
	if (trips > 0)
		frags(0, 0, 0);
	for (int t = 0; t < trips; t++) {
#pragma unroll
		for (int kk = 0; kk < KSTEPS; kk++) {
			if (kk == KSTEPS - 1) {
				/* Trip t + 1 is in (at most STAGES - 2 groups newer than it
				 * pending), and every warp has read its last fragments of
				 * trip t - 1's stage, which the next trip's copies refill. */
				cp_async_wait<STAGES - 2>();
				__syncthreads();
				rd = rd == STAGES - 1 ? 0 : rd + 1;
			}
			if (kk < KSTEPS - 1 || t + 1 < trips)
				frags((kk + 1) % 2, rd, (kk + 1) % KSTEPS);
			if (kk == 0) {
				if (t + STAGES - 1 < trips)
					copy(wr, (t + STAGES - 1) * BK);
				cp_async_commit(); /* a group every trip, empty or not: the counts stay right */
				wr = wr == STAGES - 1 ? 0 : wr + 1;
			}
#pragma unroll
			for (int i = 0; i < MT; i++)
#pragma unroll
				for (int jj = 0; jj < NT; jj++) {
					const int j = i % 2 ? NT - 1 - jj : jj; /* a serpentine: B reused across rows */
					mma_bf16(acc[i][j], fa[kk % 2][i], fb[kk % 2][j]);
				}
		}
	}
	cp_async_wait<0>(); /* only empty groups are left */
}

__device__ __forceinline__ float gelu_t(float u)
{
	return 0.5f * u * (1.0f + tanhf(0.7978845608f * (u + 0.044715f * u * u * u)));
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_bias_gelu(const __nv_bfloat16 *__restrict__ a, const __nv_bfloat16 *__restrict__ b,
		 const float *__restrict__ bias, __nv_bfloat16 *__restrict__ c, int M, int N, int K)
{
	extern __shared__ __align__(128) unsigned char smem[]; /* STAGES x A tile, then STAGES x B tile */
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

	/* The raster: block ids run down GROUP tile rows, then to the next tile column. */
	const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, per = GROUP * tiles_n;
	const int first = blockIdx.x / per * GROUP, rows = min(tiles_m - first, GROUP);
	const int m0 = (first + blockIdx.x % per % rows) * BM, n0 = blockIdx.x % per / rows * BN;
	const int wm = warp / WN_WARPS * 64, wn = warp % WN_WARPS * 64; /* this warp's block */

	const bool vec = K % 8 == 0 && N % 8 == 0 && ((size_t)a & 15) == 0 && ((size_t)b & 15) == 0 &&
			 (size_t)M * K < 1u << 31 && (size_t)K * N < 1u << 31;
	float acc[MT][NT][4] = {};
	if (vec)
		mainloop<true>(acc, smem, a, b, m0, n0, wm, wn, M, N, K);
	else
		mainloop<false>(acc, smem, a, b, m0, n0, wm, wn, M, N, K);

	/* acc[i][j] holds rows g and g + 8 (g = lane / 4), columns 2 (lane % 4) and + 1, of tile (i, j). */
	const bool pairs = N % 2 == 0 && ((size_t)c & 3) == 0;
#pragma unroll
	for (int i = 0; i < MT; i++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int r = m0 + wm + i * 16 + lane / 4 + h * 8;
			if (r >= M)
				continue;
#pragma unroll
			for (int j = 0; j < NT; j++) {
				const int n = n0 + wn + j * 8 + lane % 4 * 2;
				const float v0 = gelu_t(acc[i][j][2 * h] + (n < N ? bias[n] : 0.0f));
				const float v1 = gelu_t(acc[i][j][2 * h + 1] + (n + 1 < N ? bias[n + 1] : 0.0f));
				__nv_bfloat16 *p = c + (size_t)r * N + n;
				if (pairs && n + 1 < N)
					*(__nv_bfloat162 *)p = __floats2bfloat162_rn(v0, v1);
				else if (n < N) {
					p[0] = __float2bfloat16_rn(v0);
					if (n + 1 < N)
						p[1] = __float2bfloat16_rn(v1);
				}
			}
		}
}

/* The reference: this block's BM x BN tile (the same raster), each element
 * a plain sum over k in double, then the bias and GELU in double. */
extern "C" __global__ void matmul_bias_gelu_ref(const __nv_bfloat16 *a, const __nv_bfloat16 *b,
						const float *bias, __nv_bfloat16 *c, int M, int N, int K)
{
	const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, per = GROUP * tiles_n;
	const int first = blockIdx.x / per * GROUP, rows = min(tiles_m - first, GROUP);
	const int m0 = (first + blockIdx.x % per % rows) * BM, n0 = blockIdx.x % per / rows * BN;
	for (int e = threadIdx.x; e < BM * BN; e += blockDim.x) {
		const int r = m0 + e / BN, n = n0 + e % BN;
		if (r >= M || n >= N)
			continue;
		double s = 0;
		for (int k = 0; k < K; k++)
			s += (double)__bfloat162float(a[(size_t)r * K + k]) * __bfloat162float(b[(size_t)k * N + n]);
		const double u = s + bias[n];
		c[(size_t)r * N + n] = __float2bfloat16_rn(
			(float)(0.5 * u * (1.0 + tanh(0.7978845608028654 * (u + 0.044715 * u * u * u)))));
	}
}
