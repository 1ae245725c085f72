/*
 * cuda_emu.h - the CUDA C that kbench's tile compiler writes, as C++17 that
 * g++ compiles for the CPU, so that a generated kernel can run here and be
 * checked against a reference without a GPU (tests/emu/README.md).
 *
 * What this header gives: the CUDA keywords (as nothing, or their host
 * meaning), the built-in variables (threadIdx is the running emulated
 * thread's), vector types, __half and __nv_bfloat16 as 16-bit storage with
 * round-to-nearest-even conversions, the math intrinsics, __syncthreads and
 * the warp shuffles, and the entry point for inline PTX: the driver
 * (tile_emu.c) rewrites each `asm volatile("ptx" : outs : ins)` statement of
 * the generated code into an emu::Ptx that cuda_emu.cpp interprets by the
 * PTX ISA's definition of the instruction.
 *
 * What it does not: the threads, barriers, warps, shared memory and the
 * PTX interpreter live in cuda_emu.cpp; nothing here knows the tile
 * compiler's helpers (kb_mma_tile and the rest are compiled as generated).
 *
 * Invariants: one OS thread runs every emulated thread of a block as a
 * fiber, so emu::cur is simply the running one; a fiber is only switched at
 * the calls into cuda_emu.cpp declared here.
 */
#ifndef KB_CUDA_EMU_H
#define KB_CUDA_EMU_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>

#include "emu.h"

/* ===== keywords ===== */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __cluster_dims__(...) /* one block a cluster: cooperative groups are not emulated */
#define __restrict__ __restrict
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
#define warpSize 32

/* ===== vector types ===== */

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };
struct __attribute__((aligned(8))) float2 { float x, y; };
struct float3 { float x, y, z; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };

inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline int2 make_int2(int x, int y) { return int2{x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

/* ===== 16-bit floats ===== */

namespace emu {
uint16_t f32_to_bf16(float f); /* round to nearest even; NaN stays NaN */
float bf16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);  /* round to nearest even, subnormals, overflow to inf */
float f16_to_f32(uint16_t h);
} // namespace emu

/* Storage of the 16 bits, converting to and from float as CUDA's types do
 * (without __CUDA_NO_*_CONVERSIONS__); trivially copyable, so the
 * generated code's uint4 <-> pairs reinterpretation works as on the GPU. */
struct __nv_bfloat16 {
	uint16_t bits;
	__nv_bfloat16() = default;
	__nv_bfloat16(float f) : bits(emu::f32_to_bf16(f)) {}
	operator float() const { return emu::bf16_to_f32(bits); }
};
struct __half {
	uint16_t bits;
	__half() = default;
	__half(float f) : bits(emu::f32_to_f16(f)) {}
	operator float() const { return emu::f16_to_f32(bits); }
};
struct __attribute__((aligned(4))) __nv_bfloat162 { __nv_bfloat16 x, y; };
struct __attribute__((aligned(4))) __half2 { __half x, y; };
typedef __half half;
typedef __half2 half2;

inline __nv_bfloat16 emu_bf16_bits(uint16_t b) { __nv_bfloat16 h; h.bits = b; return h; }
inline __half emu_f16_bits(uint16_t b) { __half h; h.bits = b; return h; }

inline __nv_bfloat16 __float2bfloat16_rn(float f) { return emu_bf16_bits(emu::f32_to_bf16(f)); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __float2bfloat16_rn(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return emu::bf16_to_f32(h.bits); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
	return __nv_bfloat162{__float2bfloat16_rn(a), __float2bfloat16_rn(b)};
}
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __floats2bfloat162_rn(f.x, f.y); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{__bfloat162float(h.x), __bfloat162float(h.y)}; }
inline float __low2float(__nv_bfloat162 h) { return __bfloat162float(h.x); }
inline float __high2float(__nv_bfloat162 h) { return __bfloat162float(h.y); }
/* The larger of each pair (a NaN loses to a number, as the instruction's). */
inline __nv_bfloat16 emu_bf16_max(__nv_bfloat16 a, __nv_bfloat16 b)
{
	float x = __bfloat162float(a), y = __bfloat162float(b);
	return x != x ? b : y != y ? a : x < y ? b : a;
}
inline __nv_bfloat162 __hmax2(__nv_bfloat162 a, __nv_bfloat162 b)
{
	return __nv_bfloat162{emu_bf16_max(a.x, b.x), emu_bf16_max(a.y, b.y)};
}
/* a * b + c of each pair, rounded once to bf16 (the product of two bf16 is
 * exact in double, and so is its sum with a third but for far exponents). */
inline __nv_bfloat16 emu_bf16_fma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c)
{
	double d = (double)__bfloat162float(a) * (double)__bfloat162float(b) + (double)__bfloat162float(c);
	float f = (float)d; /* to 24 bits; a tie for the bf16 rounding below is nudged off by what was dropped */
	if ((double)f != d) {
		uint32_t u;
		memcpy(&u, &f, 4);
		if ((u & 0xffff) == 0x8000)
			u += (d > (double)f) == (f > 0.0f) ? 1 : -1;
		memcpy(&f, &u, 4);
	}
	return __float2bfloat16_rn(f);
}
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c)
{
	return __nv_bfloat162{emu_bf16_fma(a.x, b.x, c.x), emu_bf16_fma(a.y, b.y, c.y)};
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return emu_bf16_bits(b); }

inline __half __float2half_rn(float f) { return emu_f16_bits(emu::f32_to_f16(f)); }
inline __half __float2half(float f) { return __float2half_rn(f); }
inline float __half2float(__half h) { return emu::f16_to_f32(h.bits); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__float2half_rn(a), __float2half_rn(b)}; }
inline __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline __half __ushort_as_half(unsigned short b) { return emu_f16_bits(b); }

/* ===== loads and stores with cache hints ===== */

/* The hint changes where a line is cached, not what is read or written. */
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldca(const T *p) { return *p; }
template <class T> inline T __ldcg(const T *p) { return *p; }
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline T __ldlu(const T *p) { return *p; }
template <class T> inline T __ldcv(const T *p) { return *p; }
template <class T> inline void __stwb(T *p, T v) { *p = v; }
template <class T> inline void __stcg(T *p, T v) { *p = v; }
template <class T> inline void __stcs(T *p, T v) { *p = v; }
template <class T> inline void __stwt(T *p, T v) { *p = v; }

/* ===== math ===== */

#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_L2E_F 1.442695041f /* log2(e) */
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN __builtin_nan("")

/* The GPU's __expf is ex2.approx of x * log2(e) rounded to float: the
 * rounding of that product is most of its error, so it is kept. */
inline float __expf(float x) { return exp2f(x * 1.44269504088896341f); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
/* A product rounded on its own (never fused into an add). */
inline float __fmul_rn(float x, float y) { volatile float p = x * y; return p; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
/* Atomics: blocks and their fibers run on one OS thread, and a fiber is
 * never switched out inside one, so a plain read-modify-write is atomic. */
template <class T> inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
template <class T> inline T atomicMax(T *p, T v) { T old = *p; *p = old < v ? v : old; return old; }
template <class T> inline T atomicMin(T *p, T v) { T old = *p; *p = v < old ? v : old; return old; }
/* One OS thread: every write is seen by the next fiber in order, so a fence has nothing to do. */
inline void __threadfence() {}
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline unsigned int __float_as_uint(float f) { unsigned int i; memcpy(&i, &f, 4); return i; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float __int_as_float(int i) { float f; memcpy(&f, &i, sizeof f); return f; }
inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, sizeof f); return f; }
/* The 64 bits hi:lo shifted by shift % 32: the low word (right), the high word (left). */
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift)
{
	return (unsigned int)(((unsigned long long)hi << 32 | lo) >> (shift & 31));
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift)
{
	return (unsigned int)((((unsigned long long)hi << 32 | lo) << (shift & 31)) >> 32);
}
/* Byte i of the result is byte (s >> 4i) & 7 of the 8 bytes y:x (x's the low four). */
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
	unsigned long long b = (unsigned long long)y << 32 | x;
	unsigned int r = 0;
	for (int i = 0; i < 4; i++)
		r |= (unsigned int)(b >> 8 * (s >> 4 * i & 7) & 0xff) << 8 * i;
	return r;
}

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

/* ===== threads, barriers, warps (cuda_emu.cpp) ===== */

namespace emu {

/* The running emulated thread, as the kernel sees it. */
struct Lane {
	uint3 tid;
	int lane, warp;   /* linear thread index % 32 and / 32 */
};
extern Lane *cur;
extern uint3 block_idx;
extern dim3 block_dim, grid_dim;

enum { SHFL_XOR, SHFL_DOWN, SHFL_UP, SHFL_IDX };

/* __syncthreads(): waits until every thread of the block has reached this
 * barrier (the same one: a different line is a divergent barrier). */
void syncthreads(const char *file, int line);
/* The __shfl_*_sync family on 64 bits: every lane of mask must come. */
uint64_t shfl(int kind, unsigned mask, uint64_t v, int arg, int width, const char *file, int line);
void syncwarp(unsigned mask, const char *file, int line);
/* __syncwarp() and __syncwarp(mask) at file:line (a call object: an empty
 * __VA_ARGS__ needs no comma elision) */
struct SyncwarpAt {
	const char *file;
	int line;
	void operator()(unsigned mask = 0xffffffffu) const { syncwarp(mask, file, line); }
};
inline SyncwarpAt syncwarp_at(const char *file, int line) { return SyncwarpAt{file, line}; }
/* The shared-window address of p, which must point into the dynamic
 * shared memory (the only shared memory PTX operands here address). */
unsigned long long cvta_shared(const void *p, const char *file, int line);
/* The block's dynamic shared memory (NaNs of every float type at block
 * start: 16-bit units 0x7fa5, not the outputs' 0xff poison). */
unsigned char *dyn_smem();
/* A cluster rank other than 0 asked for (the emulator's cluster is one block): fatal. */
[[noreturn]] void fatal_rank(unsigned rank);

template <class T> T shfl_t(int kind, const char *file, int line, unsigned mask, T v, int arg,
			    int width = 32)
{
	static_assert(sizeof(T) <= 8, "__shfl of more than 64 bits");
	uint64_t b = 0;
	memcpy(&b, &v, sizeof v);
	b = shfl(kind, mask, b, arg, width, file, line);
	T r;
	memcpy(&r, &b, sizeof r);
	return r;
}

/* ===== inline PTX ===== */

/* One operand of an asm statement: its constraint letter ('r' 32-bit,
 * 'l' 64-bit, 'f' float, 'd' double, 'h' 16-bit, 'n' immediate), where an
 * output goes, and an input's bits. */
struct Operand {
	char kind;
	bool out, in;
	void *ptr;
	uint64_t bits;
};

template <class T> Operand make_in(char kind, T v)
{
	Operand o{kind, false, true, nullptr, 0};
	memcpy(&o.bits, &v, sizeof v < 8 ? sizeof v : 8);
	return o;
}
inline Operand in_r(unsigned v) { return make_in('r', v); }
inline Operand in_l(unsigned long long v) { return make_in('l', v); }
inline Operand in_f(float v) { return make_in('f', v); }
inline Operand in_d(double v) { return make_in('d', v); }
inline Operand in_h(unsigned short v) { return make_in('h', v); }
inline Operand in_n(long long v) { return make_in('n', v); }
template <class T> Operand out_(char kind, T &x, bool read)
{
	Operand o{kind, true, read, &x, 0};
	memcpy(&o.bits, &x, sizeof x < 8 ? sizeof x : 8);
	return o;
}
template <class T> Operand out_r(T &x) { static_assert(sizeof x == 4, "=r"); return out_('r', x, false); }
template <class T> Operand out_l(T &x) { static_assert(sizeof x == 8, "=l"); return out_('l', x, false); }
template <class T> Operand out_f(T &x) { static_assert(sizeof x == 4, "=f"); return out_('f', x, false); }
template <class T> Operand out_d(T &x) { static_assert(sizeof x == 8, "=d"); return out_('d', x, false); }
template <class T> Operand out_h(T &x) { static_assert(sizeof x == 2, "=h"); return out_('h', x, false); }
template <class T> Operand inout_r(T &x) { static_assert(sizeof x == 4, "+r"); return out_('r', x, true); }
template <class T> Operand inout_l(T &x) { static_assert(sizeof x == 8, "+l"); return out_('l', x, true); }
template <class T> Operand inout_f(T &x) { static_assert(sizeof x == 4, "+f"); return out_('f', x, true); }
template <class T> Operand inout_d(T &x) { static_assert(sizeof x == 8, "+d"); return out_('d', x, true); }

/* The text of one asm statement, parsed once (a static object at the
 * statement), run with its operands each time the statement runs. */
class Ptx {
public:
	explicit Ptx(const char *text);
	void run(std::initializer_list<Operand> ops, const char *file, int line) const;
private:
	const char *text_;
	void *parsed_;
};

} // namespace emu

#define threadIdx (emu::cur->tid)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define __syncthreads() emu::syncthreads(__FILE__, __LINE__)
#define __syncwarp(...) emu::syncwarp_at(__FILE__, __LINE__)(__VA_ARGS__)
#define __shfl_xor_sync(...) emu::shfl_t(emu::SHFL_XOR, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) emu::shfl_t(emu::SHFL_DOWN, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) emu::shfl_t(emu::SHFL_UP, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_sync(...) emu::shfl_t(emu::SHFL_IDX, __FILE__, __LINE__, __VA_ARGS__)
#define __cvta_generic_to_shared(p) emu::cvta_shared((p), __FILE__, __LINE__)

#endif
