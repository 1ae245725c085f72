/*
 * calibrate_wgmma.c - the bf16 tensor-core ceiling of an sm_90 GPU as its
 * datasheet counts it: wgmma (sm_90a), which mma.sync does not reach.
 *
 * The probe: blocks of two warpgroups; each warpgroup multiplies a 64x16
 * tile of A by a 16x256 tile of B, both in shared memory, into 128 f32
 * accumulators a thread (wgmma.mma_async m64n256k16), four in a row per
 * commit, with one group left in flight while the next is issued (as a
 * GEMM main loop runs).  The tiles hold bf16 bit patterns near 1 and the
 * values are never looked at (one store, never taken), so only the rate
 * counts.  The source is made here (128 accumulator operands are written
 * out; calibrate.c compiles it for sm_90a beside its own kernels).
 *
 * Shared-memory layout: no swizzle, "interleaved" core matrices of 8 rows
 * x 16 bytes; core matrix (r, k) of a tile at (r * 2 + k) * 128 bytes,
 * so the leading-dimension (K) offset is 128 bytes and the stride (M or N)
 * offset 256: A takes 2 KiB, B 8 KiB.
 */
#include "ceilings.h"

#include <stdio.h>
#include <string.h>

#define WG_ACC 128 /* f32 accumulators a thread for m64n256 */

/* The kernel's source: the wgmma statement with its 128 "+f" operands. */
static void wgmma_source(kb_buf *b)
{
	kb_buf_cat(b,
		   "typedef unsigned long long u64;\n"
		   "/* A matrix descriptor: start, leading and stride byte offsets (>> 4), no swizzle. */\n"
		   "__device__ __forceinline__ u64 kb_desc(const void *p, unsigned lbo, unsigned sbo) {\n"
		   "  unsigned a = (unsigned)__cvta_generic_to_shared(p);\n"
		   "  return (u64)((a & 0x3FFFF) >> 4) | (u64)(lbo >> 4) << 16 | (u64)(sbo >> 4) << 32;\n"
		   "}\n"
		   "extern \"C\" __global__ void __launch_bounds__(256) kb_cal_wgmma(float *sink, int iters) {\n"
		   "  __shared__ __align__(1024) unsigned tiles[(64 * 16 + 16 * 256) / 2];\n"
		   "  for (int i = threadIdx.x; i < (64 * 16 + 16 * 256) / 2; i += blockDim.x)\n"
		   "    tiles[i] = 0x3F803F80u + (i & 7u) * 0x00010001u;\n"
		   "  __syncthreads();\n"
		   "  asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
		   "  const u64 da = kb_desc(tiles, 128, 256), db = kb_desc(tiles + 64 * 16 / 2, 128, 256);\n"
		   "  float d[128];\n"
		   "#pragma unroll\n"
		   "  for (int j = 0; j < 128; j++) d[j] = 0.0f;\n"
		   "#pragma unroll 1\n"
		   "  for (int i = 0; i < iters; i++) {\n"
		   "    /* the accumulators stay where the wgmmas left them: no move reads them */\n"
		   "#pragma unroll\n"
		   "    for (int j = 0; j < 128; j++) asm volatile(\"\" : \"+f\"(d[j]) :: \"memory\");\n"
		   "    asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
		   "#pragma unroll\n"
		   "    for (int k = 0; k < 4; k++)\n"
		   "      asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %130, 0;\\n\"\n"
		   "        \"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {");
	for (int i = 0; i < WG_ACC; i++)
		kb_buf_catf(b, "%s%%%d", i ? (i % 16 ? ", " : ",\"\n        \"") : "", i);
	kb_buf_catf(b, "}, %%%d, %%%d, p, 1, 1, 0, 0;\\n}\\n\"\n        : ", WG_ACC, WG_ACC + 1);
	for (int i = 0; i < WG_ACC; i++)
		kb_buf_catf(b, "%s\"+f\"(d[%d])", i ? (i % 8 ? ", " : ",\n          ") : "", i);
	kb_buf_cat(b,
		   "\n        : \"l\"(da), \"l\"(db), \"r\"(1));\n"
		   "    asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
		   "#pragma unroll\n"
		   "    for (int j = 0; j < 128; j++) asm volatile(\"\" : \"+f\"(d[j]) :: \"memory\");\n"
		   "    asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: \"memory\");\n"
		   "  }\n"
		   "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
		   "  float sum = 0.0f;\n"
		   "#pragma unroll\n"
		   "  for (int j = 0; j < 128; j++) sum += d[j];\n"
		   "  if (sum == -1.0f) *sink = sum;\n"
		   "}\n");
}

const char *kb_profile__calibrate_wgmma_source(void)
{
	static char *text;
	if (!text) {
		kb_buf b = KB_BUF_INIT;
		wgmma_source(&b);
		text = kb_buf_detach(&b);
	}
	return text;
}
