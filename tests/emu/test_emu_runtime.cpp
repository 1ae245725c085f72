/*
 * test_emu_runtime.cpp - unit tests of the host emulator's runtime
 * (cuda_emu.cpp) on its own, without the tile compiler: the 16-bit float
 * conversions against their definitions, the warp collectives used the way
 * the PTX ISA describes them (an unswizzled ldmatrix + mma.sync product,
 * .x2 and .x4, shuffles), cp.async group accounting, mbarrier phases with
 * a bulk copy landing at the wait, named barriers (bar.sync, bar.arrive),
 * and the problems it must report.  Kernels here are written as the
 * emulator's driver rewrites
 * generated code (emu::Ptx with operands).
 */
#include "cuda_emu.h"

#include <stdio.h>

#include <type_traits>

extern "C" {
#include "t.h"
}

/* ===== kernels ===== */

static void (*kernel)(void **);

extern "C" void emu_kernel_entry(void **args) { kernel(args); }

static int launch(void (*k)(void **), unsigned threads, size_t smem, void **args,
		  int copies = EMU_COPY_AT_WAIT)
{
	kernel = k;
	emu_launch_cfg cfg = {{1, 1, 1}, {threads, 1, 1}, smem, copies, EMU_SCHED_SHUFFLE, 5,
			      nullptr, 0};
	return emu_launch(&cfg, args);
}

/* One object per statement, as the rewritten code has: a warp meets at it. */
static const emu::Ptx ldm_x4("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];");
static const emu::Ptx ldm_x2_trans("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];");
static const emu::Ptx mma_f16("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
			      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};");
static const emu::Ptx mma_bf16("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
			       "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};");

static void ldm(const emu::Ptx &insn, const void *p, unsigned *r, int n)
{
	unsigned a = (unsigned)__cvta_generic_to_shared(p);
	if (n == 2)
		insn.run({emu::out_r(r[0]), emu::out_r(r[1]), emu::in_r(a)}, __FILE__, __LINE__);
	else
		insn.run({emu::out_r(r[0]), emu::out_r(r[1]), emu::out_r(r[2]), emu::out_r(r[3]),
			  emu::in_r(a)}, __FILE__, __LINE__);
}

/* One warp: D = A B with A [16][16] and B [16][8] row-major in shared
 * memory (plain layout, no swizzle), the fragments loaded as NVIDIA's
 * documentation lays them out: A by ldmatrix.x4 (lane l: row l % 16,
 * columns l / 16 * 8), B by ldmatrix.x2.trans (lane l: row l % 16). */
template <class E> static void mma_kernel(void **args)
{
	E *a = (E *)emu::dyn_smem(), *b = a + 256;
	const E *ga = (const E *)args[0], *gb = (const E *)args[1];
	float *d = (float *)args[2];
	int l = (int)threadIdx.x;
	for (int i = l; i < 256; i += 32)
		a[i] = ga[i];
	for (int i = l; i < 128; i += 32)
		b[i] = gb[i];
	__syncthreads();
	unsigned fa[4], fb[2];
	ldm(ldm_x4, a + l % 16 * 16 + l / 16 * 8, fa, 4);
	ldm(ldm_x2_trans, b + l % 16 * 8, fb, 2);
	float c[4] = {1, 2, 3, 4};
	(std::is_same<E, __half>::value ? mma_f16 : mma_bf16).run({emu::inout_f(c[0]), emu::inout_f(c[1]), emu::inout_f(c[2]), emu::inout_f(c[3]),
		 emu::in_r(fa[0]), emu::in_r(fa[1]), emu::in_r(fa[2]), emu::in_r(fa[3]),
		 emu::in_r(fb[0]), emu::in_r(fb[1])}, __FILE__, __LINE__);
	int g = l / 4, t = l % 4; /* C/D: c0,c1 at (g, 2t..), c2,c3 at (g + 8, 2t..) */
	for (int i = 0; i < 4; i++)
		d[(g + i / 2 * 8) * 8 + 2 * t + i % 2] = c[i];
}

template <class E> static void check_mma()
{
	E a[256], b[128];
	float d[128];
	for (int i = 0; i < 256; i++)
		a[i] = (float)((i * 7 % 13) - 6) / 4;
	for (int i = 0; i < 128; i++)
		b[i] = (float)((i * 5 % 11) - 5) / 2;
	void *args[] = {a, b, d};
	T_EQ_INT(launch(mma_kernel<E>, 32, 768, args), 0);
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			double s = 1 + (r >= 8) * 2 + n % 2; /* c as the kernel set it */
			for (int k = 0; k < 16; k++)
				s += (double)(float)a[r * 16 + k] * (float)b[k * 8 + n];
			T_NEAR(d[r * 8 + n], s, 1e-4);
		}
}

static void test_emu__mma_bf16(void) { check_mma<__nv_bfloat16>(); }
static void test_emu__mma_f16(void) { check_mma<__half>(); }

static void shfl_kernel(void **args)
{
	int *out = (int *)args[0], l = (int)threadIdx.x;
	int s = l;
	for (int o = 16; o > 0; o /= 2)
		s += __shfl_xor_sync(0xffffffff, s, o);
	out[l] = s * 1000 + __shfl_down_sync(0xffffffff, l, 3) * 10 + __shfl_sync(0xffffffff, l, 5) % 10;
}

static void test_emu__shuffles(void)
{
	int out[64];
	void *args[] = {out};
	T_EQ_INT(launch(shfl_kernel, 64, 0, args), 0);
	for (int l = 0; l < 64; l++) {
		int w = l / 32 * 32, lane = l % 32;
		T_EQ_INT(out[l], (32 * w + 496) * 1000 + (w + (lane + 3 < 32 ? lane + 3 : lane)) * 10 +
			 (w + 5) % 10);
	}
}

/* ===== cp.async ===== */

static void copies_kernel(void **args)
{
	const unsigned char *g = (const unsigned char *)args[0];
	int *seen = (int *)args[1];
	unsigned char *s = emu::dyn_smem();
	if (threadIdx.x == 0) {
		static emu::Ptx cp("cp.async.cg.shared.global [%0], [%1], 16, %2;");
		static emu::Ptx commit("cp.async.commit_group;"), wait("cp.async.wait_group %0;");
		for (int k = 0; k < 3; k++) {
			cp.run({emu::in_r((unsigned)__cvta_generic_to_shared(s + 16 * k)),
				emu::in_l((unsigned long long)(g + 16 * k)), emu::in_r(k == 2 ? 4u : 16u)},
			       __FILE__, __LINE__);
			commit.run({}, __FILE__, __LINE__);
		}
		seen[0] = s[0];             /* nothing completed: stale */
		wait.run({emu::in_n(1)}, __FILE__, __LINE__);
		seen[1] = s[16 + 15];      /* group 1 is in, group 2 not */
		seen[2] = s[32];
		wait.run({emu::in_n(0)}, __FILE__, __LINE__);
		seen[3] = s[32 + 3];
		seen[4] = s[32 + 4];       /* zero-filled past src-size */
	}
}

static void test_emu__cp_async_groups(void)
{
	alignas(16) unsigned char g[48];
	int seen[5];
	for (int i = 0; i < 48; i++)
		g[i] = (unsigned char)(i + 1);
	void *args[] = {g, seen};
	T_EQ_INT(launch(copies_kernel, 32, 64, args), 0);
	T_EQ_INT(seen[0], 0xa5);
	T_EQ_INT(seen[1], 32);
	T_EQ_INT(seen[2], 0xa5);
	T_EQ_INT(seen[3], 36);
	T_EQ_INT(seen[4], 0);
	T_EQ_INT(launch(copies_kernel, 32, 64, args, EMU_COPY_AT_ISSUE), 0);
	T_EQ_INT(seen[0], 1);
}

/* A warp reads (ldmatrix) bytes another thread is still copying into. */
static void race_kernel(void **args)
{
	const unsigned char *g = (const unsigned char *)args[0];
	unsigned char *s = emu::dyn_smem();
	static emu::Ptx cp("cp.async.ca.shared.global [%0], [%1], 16;");
	cp.run({emu::in_r((unsigned)__cvta_generic_to_shared(s + 16 * threadIdx.x)),
		emu::in_l((unsigned long long)(g + 16 * threadIdx.x))}, __FILE__, __LINE__);
	unsigned r[4];
	ldm(ldm_x4, s + 16 * threadIdx.x, r, 4);
	static emu::Ptx all("cp.async.wait_all;");
	all.run({}, __FILE__, __LINE__);
}

static void test_emu__race_reported(void)
{
	alignas(16) unsigned char g[512] = {0};
	void *args[] = {g};
	T_OK(launch(race_kernel, 32, 512, args) > 0);
}

/* ===== mbarriers and bulk copies (mbar_emu.cpp) ===== */

static const emu::Ptx mb_init("mbarrier.init.shared::cta.b64 [%0], %1;");
static const emu::Ptx mb_expect("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;");
static const emu::Ptx mb_wait("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
			      "selp.u32 %0, 1, 0, p;\n\t}");
static const emu::Ptx bulk("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];");
static const emu::Ptx named("bar.sync 1, %0;");

static unsigned try_wait(unsigned bar, unsigned parity)
{
	unsigned done;
	mb_wait.run({emu::out_r(done), emu::in_r(bar), emu::in_r(parity)}, __FILE__, __LINE__);
	return done;
}

/* Thread 32 copies 32 bytes into shared memory on a barrier (a static
 * __shared__ variable, as the rings' are) that thread 0 waits on: a fresh
 * barrier's parity-1 wait passes at once, the bytes are stale until the
 * parity-0 wait passes, then that phase is complete and parity 1 waits
 * again; the two warps meet at named barrier 1. */
static void mbar_kernel(void **args)
{
	const unsigned char *g = (const unsigned char *)args[0];
	int *seen = (int *)args[1];
	unsigned char *s = emu::dyn_smem();
	static unsigned long long bar; /* what `__shared__` becomes here */
	unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
	if (threadIdx.x == 0) {
		mb_init.run({emu::in_r(b), emu::in_r(1u)}, __FILE__, __LINE__);
		seen[0] = (int)try_wait(b, 1);
	}
	named.run({emu::in_n(64)}, __FILE__, __LINE__);
	if (threadIdx.x == 32) {
		mb_expect.run({emu::in_r(b), emu::in_r(32u)}, __FILE__, __LINE__);
		bulk.run({emu::in_r((unsigned)__cvta_generic_to_shared(s + 16)), emu::in_l((unsigned long long)g),
			  emu::in_r(32u), emu::in_r(b)}, __FILE__, __LINE__);
	}
	named.run({emu::in_n(64)}, __FILE__, __LINE__);
	if (threadIdx.x == 0) {
		seen[1] = s[16];
		int spins = 0;
		while (!try_wait(b, 0))
			spins++;
		seen[2] = s[16] + s[47];
		seen[3] = spins;
		seen[4] = (int)try_wait(b, 1);
	}
}

static void test_emu__mbarrier_bulk(void)
{
	alignas(16) unsigned char g[32];
	int seen[5];
	for (int i = 0; i < 32; i++)
		g[i] = (unsigned char)(i + 1);
	void *args[] = {g, seen};
	T_EQ_INT(launch(mbar_kernel, 64, 64, args), 0);
	T_EQ_INT(seen[0], 1);
	T_EQ_INT(seen[1], 0xa5);      /* landed at the wait, not at issue */
	T_EQ_INT(seen[2], 1 + 32);
	T_EQ_INT(seen[3], 0);         /* the wait completed the phase */
	T_EQ_INT(seen[4], 0);
	T_EQ_INT(launch(mbar_kernel, 64, 64, args, EMU_COPY_AT_ISSUE), 0);
	T_EQ_INT(seen[1], 1);
}

/* ===== named barriers ===== */

/* Warp 1 writes shared memory and passes (bar.arrive 1, 64); warp 0 waits
 * (bar.sync 1, 64) and reads it; args[1] (when set) makes warp 1 arrive at
 * bar 3 too, where no one waits.  Then all meet at bar 2 of 64. */
static void named_kernel(void **args)
{
	int *out = (int *)args[0], l = (int)threadIdx.x;
	bool twice = args[1] != nullptr;
	int *s = (int *)emu::dyn_smem();
	static emu::Ptx sync("bar.sync %0, %1;"), pass("bar.arrive %0, 64;");
	if (l >= 32) {
		s[l - 32] = 100 + l;
		pass.run({emu::in_n(1)}, __FILE__, __LINE__);
		if (twice)
			pass.run({emu::in_n(3)}, __FILE__, __LINE__);
	} else {
		sync.run({emu::in_n(1), emu::in_n(64)}, __FILE__, __LINE__);
		out[l] = s[l];
	}
	sync.run({emu::in_n(2), emu::in_n(64)}, __FILE__, __LINE__);
}

static void test_emu__named_barriers(void)
{
	int out[32], one = 1;
	void *args[] = {out, nullptr};
	T_EQ_INT(launch(named_kernel, 64, 128, args), 0);
	for (int l = 0; l < 32; l++)
		T_EQ_INT(out[l], 132 + l);
	args[1] = &one; /* an arrival no one waits for: reported at the block's end */
	T_OK(launch(named_kernel, 64, 128, args) > 0);
}

/* ===== 16-bit floats ===== */

/* Every f16 and bf16 value converts to float and back unchanged (NaNs stay
 * NaNs). */
static void test_emu__half_round_trip(void)
{
	int bad = 0;
	for (unsigned h = 0; h < 65536; h++) {
		float f = emu::f16_to_f32((uint16_t)h), b = emu::bf16_to_f32((uint16_t)h);
		bad += isnan(f) ? !isnan(emu::f16_to_f32(emu::f32_to_f16(f))) : emu::f32_to_f16(f) != h;
		bad += isnan(b) ? !isnan(emu::bf16_to_f32(emu::f32_to_bf16(b))) : emu::f32_to_bf16(b) != h;
	}
	T_EQ_INT(bad, 0);
}

/* f32 -> f16 rounds to nearest, ties to even: against the neighbours. */
static void test_emu__half_rounding(void)
{
	uint64_t s = 1;
	int bad = 0;
	for (int i = 0; i < 200000; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		float x = (float)((double)(s >> 11) * 0x1p-52) * (float)(1u << (i % 32)) / 65536.0f;
		x = s & 1 ? -x : x;
		uint16_t h = emu::f32_to_f16(x);
		double v = emu::f16_to_f32(h), e = fabs((double)x - v);
		if (fabs(x) >= 65520.0f) { /* overflow to infinity */
			bad += !isinf(v);
			continue;
		}
		for (int d = -1; d <= 1; d += 2) {
			double w = emu::f16_to_f32((uint16_t)(h + d)), ew = fabs((double)x - w);
			if (isfinite(w) && (ew < e || (ew == e && (h & 1))))
				bad++;
		}
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(emu::f32_to_f16(65519.0f), 0x7bff);
	T_EQ_INT(emu::f32_to_f16(65520.0f), 0x7c00);
	T_EQ_INT(emu::f32_to_f16(0x1p-25f), 0);       /* a tie to the even 0 */
	T_EQ_INT(emu::f32_to_f16(0x1.8p-24f), 2);     /* a tie to the even 2 */
	T_EQ_INT(emu::f32_to_bf16(1.00390625f), 0x3f80); /* a tie to even */
	T_EQ_INT(emu::f32_to_bf16(1.01171875f), 0x3f82);
}

int main(void)
{
	T_RUN(test_emu__half_round_trip);
	T_RUN(test_emu__half_rounding);
	T_RUN(test_emu__shuffles);
	T_RUN(test_emu__mma_bf16);
	T_RUN(test_emu__mma_f16);
	T_RUN(test_emu__cp_async_groups);
	T_RUN(test_emu__race_reported);
	T_RUN(test_emu__mbarrier_bulk);
	T_RUN(test_emu__named_barriers);
	return t_report();
}
