/*
 * util_kernels.c - the source of kbench's own device code: input fills
 * (a counter-based generator, so a value depends only on seed and index
 * and any element can be recomputed) and the L2 flush.  Compiled once per
 * arch through the compile cache when a device opens.
 */
#include "profile_int.h"

const char kb_profile__util_src[] =
	"#include <cuda_fp16.h>\n"
	"#include <cuda_bf16.h>\n"
	"typedef unsigned long long u64;\n"
	"/* splitmix64: a well-mixed 64-bit hash of (seed, index). */\n"
	"__device__ u64 kb_mix(u64 z) {\n"
	"  z += 0x9E3779B97F4A7C15ull; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;\n"
	"  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }\n"
	"/* uniform in (0, 1], 53 bits */\n"
	"__device__ double kb_u01(u64 seed, u64 i, u64 k) {\n"
	"  return ((kb_mix(seed * 0x2545F4914F6CDD1Dull ^ kb_mix(2 * i + k)) >> 11) + 1) * 0x1.0p-53; }\n"
	"__device__ double kb_value(int dist, u64 seed, u64 i, double a, double b) {\n"
	"  switch (dist) {\n"
	"  case 0: { double u1 = kb_u01(seed, i, 0), u2 = kb_u01(seed, i, 1);\n"
	"            return a + b * sqrt(-2.0 * log(u1)) * cospi(2.0 * u2); }\n"
	"  case 1: return a + (b - a) * (kb_u01(seed, i, 0) - 0x1.0p-53);\n"
	"  case 2: return a + b * (double)i;\n"
	"  default: return a; }\n"
	"}\n"
	"#define KB_FILL(NAME, T, CONV) \\\n"
	"extern \"C\" __global__ void NAME(T *out, u64 n, int dist, u64 seed, double a, double b) { \\\n"
	"  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) \\\n"
	"    out[i] = CONV(kb_value(dist, seed, i, a, b)); }\n"
	"KB_FILL(kb_fill_f64, double, (double))\n"
	"KB_FILL(kb_fill_f32, float, (float))\n"
	"KB_FILL(kb_fill_f16, __half, __double2half)\n"
	"KB_FILL(kb_fill_bf16, __nv_bfloat16, __double2bfloat16)\n"
	"KB_FILL(kb_fill_i64, long long, (long long))\n"
	"KB_FILL(kb_fill_i32, int, (int))\n"
	"KB_FILL(kb_fill_i16, short, (short))\n"
	"KB_FILL(kb_fill_i8, signed char, (signed char))\n"
	"KB_FILL(kb_fill_u8, unsigned char, (unsigned char))\n"
	"/* Reads the whole buffer (so L2 holds only clean lines of it afterwards);\n"
	"   the store never happens but the compiler cannot know that. */\n"
	"extern \"C\" __global__ void kb_flush_read(const uint4 *buf, u64 n, unsigned *sink) {\n"
	"  unsigned acc = 0;\n"
	"  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {\n"
	"    uint4 v = __ldcg(buf + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }\n"
	"  if (acc == 0x9E3779B9u && sink) *sink = acc;\n"
	"}\n";
