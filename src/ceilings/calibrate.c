/*
 * calibrate.c - this GPU's ceilings, measured with kbench's own
 * micro-kernels rather than taken from a datasheet: copy bandwidth, read
 * bandwidth, FP32 FMA rate, the bf16 mma.sync rate (and on sm_90 the wgmma
 * rate, calibrate_wgmma.c), and a device-to-device
 * cuMemcpy of the same buffers for comparison; and the per-GPU cache of
 * those ceilings (one JSON file per GPU UUID under kb_cache_dir("ceilings")).
 *
 * Owns the micro-kernel source (compiled through kb_compile_build for the
 * device's arch, like the utility kernels) and the timing loop used here.
 * Does not own devices, streams or the L2 flush (device.c), nor timing of
 * user kernels (timing.c).
 *
 * Invariants:
 *  - Every figure is timed with driver events on d->stream, after two
 *    untimed warm-up runs; each of REPS runs has its own event pair; the
 *    best (minimum time) is the ceiling and the median is given beside it.
 *  - Bandwidth counts bytes read + bytes written (a copy of B bytes moves
 *    2B), for the kernels and for cuMemcpyDtoD alike, so the two compare.
 *  - Buffers are 1 GiB each (or 1/8 of the memory, or what free memory
 *    allows): far beyond the L2, so no flush is needed.
 *  - A datasheet figure the driver cannot give (0) is left out, never 0.
 */
#include "ceilings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAL_BUF_MAX ((size_t)1 << 30)
#define CAL_BUF_MIN ((size_t)64 << 20)
#define CAL_BLOCK 256
#define CAL_WARMUP 2
#define CAL_REPS_MEM 20
#define CAL_REPS_COMPUTE 10
#define CAL_FMA_ITERS 4096      /* x 8 chains x 16 unrolled FMAs per thread */
#define CAL_FMA_PER_ITER (8 * 16)
#define CAL_MMA_ITERS 16384     /* x 8 independent mma per warp */
#define CAL_MMA_PER_ITER 8
#define CAL_MMA_FLOPS (2.0 * 16 * 8 * 16)
#define CAL_WGMMA_ITERS 8192    /* x 4 m64n256k16 per warpgroup */
#define CAL_WGMMA_BLOCK 256     /* two warpgroups */

/* ---- the micro-kernels -------------------------------------------------------- */

static const char cal_src[] =
	"typedef unsigned long long u64;\n"
	"/* (a) copy: 16-byte loads and stores, 4 in flight per thread, grid-stride. */\n"
	"extern \"C\" __global__ void kb_cal_copy(const float4 *__restrict__ x,\n"
	"                                       float4 *__restrict__ y, u64 n) {\n"
	"  u64 s = (u64)gridDim.x * blockDim.x, i = blockIdx.x * (u64)blockDim.x + threadIdx.x;\n"
	"  for (; i + 3 * s < n; i += 4 * s) {\n"
	"    float4 a = x[i], b = x[i + s], c = x[i + 2 * s], d = x[i + 3 * s];\n"
	"    y[i] = a; y[i + s] = b; y[i + 2 * s] = c; y[i + 3 * s] = d; }\n"
	"  for (; i < n; i += s) y[i] = x[i];\n"
	"}\n"
	"/* (a') copy: one float4 per thread, a grid that covers n. */\n"
	"extern \"C\" __global__ void kb_cal_copy1(const float4 *__restrict__ x,\n"
	"                                        float4 *__restrict__ y, u64 n) {\n"
	"  u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = x[i];\n"
	"}\n"
	"/* (b) read: 16-byte loads xor-reduced; the store never happens, but the\n"
	"   compiler cannot know that, so every load stays. */\n"
	"extern \"C\" __global__ void kb_cal_read(const uint4 *__restrict__ x, u64 n,\n"
	"                                       unsigned *sink) {\n"
	"  u64 s = (u64)gridDim.x * blockDim.x, i = blockIdx.x * (u64)blockDim.x + threadIdx.x;\n"
	"  unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;\n"
	"  for (; i + 3 * s < n; i += 4 * s) {\n"
	"    uint4 p = x[i], q = x[i + s], r = x[i + 2 * s], t = x[i + 3 * s];\n"
	"    a0 ^= p.x ^ p.y ^ p.z ^ p.w; a1 ^= q.x ^ q.y ^ q.z ^ q.w;\n"
	"    a2 ^= r.x ^ r.y ^ r.z ^ r.w; a3 ^= t.x ^ t.y ^ t.z ^ t.w; }\n"
	"  for (; i < n; i += s) { uint4 p = x[i]; a0 ^= p.x ^ p.y ^ p.z ^ p.w; }\n"
	"  unsigned acc = a0 ^ a1 ^ a2 ^ a3;\n"
	"  if (acc == 0x9E3779B9u && sink) *sink = acc;\n"
	"}\n"
	"extern \"C\" __global__ void kb_cal_read1(const uint4 *__restrict__ x, u64 n,\n"
	"                                        unsigned *sink) {\n"
	"  u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;\n"
	"  if (i >= n) return;\n"
	"  uint4 p = x[i]; unsigned acc = p.x ^ p.y ^ p.z ^ p.w;\n"
	"  if (acc == 0x9E3779B9u && sink) *sink = acc;\n"
	"}\n"
	"/* (c) FP32: 8 independent FFMA chains per thread, 16 steps unrolled per\n"
	"   iteration; a and b are parameters, the start depends on threadIdx, so\n"
	"   nothing folds; values converge to b / (1 - a) (no overflow, no denormals). */\n"
	"#define KB_F8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)\n"
	"extern \"C\" __global__ void kb_cal_fma(float *sink, int iters, float a, float b) {\n"
	"  float base = threadIdx.x * 1e-3f;\n"
	"#define KB_INIT(k) float x##k = base + 0.1f * k;\n"
	"  KB_F8(KB_INIT)\n"
	"#pragma unroll 1\n"
	"  for (int i = 0; i < iters; i++) {\n"
	"#pragma unroll\n"
	"    for (int u = 0; u < 16; u++) {\n"
	"#define KB_STEP(k) x##k = fmaf(x##k, a, b);\n"
	"      KB_F8(KB_STEP) } }\n"
	"  float sum = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));\n"
	"  if (sum == -1.0f) *sink = sum;\n"
	"}\n"
	"/* (d) bf16 tensor cores: 8 independent m16n8k16 accumulators per warp over\n"
	"   register fragments (bf16 bit patterns near 2^-7); accumulators stay\n"
	"   positive, so the store never happens. */\n"
	"extern \"C\" __global__ void kb_cal_mma(float *sink, int iters) {\n"
	"  unsigned v = (threadIdx.x & 7u) * 0x00010001u;\n"
	"  unsigned a0 = 0x3C003C00u + v, a1 = 0x3C013C01u + v, a2 = 0x3C023C02u + v,\n"
	"           a3 = 0x3C033C03u + v, b0 = 0x3C043C04u + v, b1 = 0x3C053C05u + v;\n"
	"  float d[8][4];\n"
	"#pragma unroll\n"
	"  for (int k = 0; k < 8; k++)\n"
	"#pragma unroll\n"
	"    for (int j = 0; j < 4; j++) d[k][j] = 0.25f * k + 0.0625f * j + threadIdx.x * 1e-3f;\n"
	"#pragma unroll 1\n"
	"  for (int i = 0; i < iters; i++) {\n"
	"#pragma unroll\n"
	"    for (int k = 0; k < 8; k++)\n"
	"      asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 \"\n"
	"                   \"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\"\n"
	"                   : \"+f\"(d[k][0]), \"+f\"(d[k][1]), \"+f\"(d[k][2]), \"+f\"(d[k][3])\n"
	"                   : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"r\"(b0), \"r\"(b1));\n"
	"  }\n"
	"  float sum = 0.0f;\n"
	"#pragma unroll\n"
	"  for (int k = 0; k < 8; k++)\n"
	"#pragma unroll\n"
	"    for (int j = 0; j < 4; j++) sum += d[k][j];\n"
	"  if (sum == -1.0f) *sink = sum;\n"
	"}\n";

const char *kb_profile__calibrate_source(void)
{
	return cal_src;
}

int kb_profile__calibrate_compile(const char *name, const char *text, const char *arch, kb_build *b,
				  kb_err *err)
{
	kb_source src;
	kb_compile_source_init(&src, name, text, KB_SRC_CUDA);
	kb_build_opts o = {.arch = (char *)arch};
	int rc = kb_compile_build(&src, NULL, NULL, &o, b, err);
	if (rc == KB_ECOMPILE)
		kb_err_set(err, rc, KB_DOM_NVRTC, 0, "calibration kernels (%s) failed to compile: %s",
			   name, b->log ? b->log : "(no log)");
	kb_compile_source_free(&src);
	return rc;
}

int kb_profile__calibrate_build(const char *arch, kb_build *b, kb_err *err)
{
	return kb_profile__calibrate_compile("<kbench calibrate>.cu", cal_src, arch, b, err);
}

int kb_profile__calibrate_wgmma_build(kb_build *b, kb_err *err)
{
	return kb_profile__calibrate_compile("<kbench calibrate wgmma>.cu",
					     kb_profile__calibrate_wgmma_source(), "sm_90a", b, err);
}

/* ---- state and timing ----------------------------------------------------------- */

typedef struct {
	CUmodule mod, mod_wgmma;
	CUfunction copy, copy1, read, read1, fma, mma, wgmma;
	CUdeviceptr x, y, sink;
	size_t bytes;             /* per buffer */
} cal_ctx;

/* One thing to time: a kernel launch, or (fn NULL) cuMemcpyDtoDAsync y <- x. */
typedef struct {
	CUfunction fn;
	unsigned grid, block;
	void **args;
} cal_op;

static int enqueue(kb_device *d, const cal_ctx *c, const cal_op *op, kb_err *err)
{
	if (op->fn)
		return KB_CU(err, cuLaunchKernel(op->fn, op->grid, 1, 1, op->block, 1, 1, 0, d->stream,
						 op->args, NULL));
	return KB_CU(err, cuMemcpyDtoDAsync(c->y, c->x, c->bytes, d->stream));
}

/* Times op reps times (after CAL_WARMUP untimed runs); *st gets ms stats. */
static int time_op(kb_device *d, const cal_ctx *c, const cal_op *op, int reps, kb_stats *st,
		   kb_err *err)
{
	CUevent ev[2 * CAL_REPS_MEM] = {0};
	double ms[CAL_REPS_MEM];
	int rc = KB_OK;
	if (reps > CAL_REPS_MEM)
		reps = CAL_REPS_MEM;
	for (int i = 0; i < CAL_WARMUP; i++)
		if ((rc = enqueue(d, c, op, err)) < 0)
			goto out;
	for (int i = 0; i < 2 * reps; i++)
		if ((rc = KB_CU(err, cuEventCreate(&ev[i], CU_EVENT_DEFAULT))) < 0)
			goto out;
	for (int i = 0; i < reps; i++) {
		if ((rc = KB_CU(err, cuEventRecord(ev[2 * i], d->stream))) < 0)
			goto out;
		if ((rc = enqueue(d, c, op, err)) < 0)
			goto out;
		if ((rc = KB_CU(err, cuEventRecord(ev[2 * i + 1], d->stream))) < 0)
			goto out;
	}
	if ((rc = KB_CU(err, cuEventSynchronize(ev[2 * reps - 1]))) < 0)
		goto out;
	for (int i = 0; i < reps; i++) {
		float f = 0;
		if ((rc = KB_CU(err, cuEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1]))) < 0)
			goto out;
		ms[i] = f;
	}
	kb_stats_compute(ms, reps, st);
out:
	for (int i = 0; i < 2 * CAL_REPS_MEM; i++)
		if (ev[i])
			kb_cu.cuEventDestroy(ev[i]);
	return rc;
}

/* Blocks of CAL_BLOCK threads that fill every SM once (occupancy-derived). */
static int full_grid(kb_device *d, CUfunction fn, unsigned *grid, kb_err *err)
{
	int rc = KB_OK, per_sm = 0;
	if ((rc = KB_CU(err, cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, CAL_BLOCK,
									 0))) < 0)
		goto out;
	if (per_sm < 1)
		per_sm = 1;
	*grid = (unsigned)(d->info.sm_count > 0 ? d->info.sm_count : 1) * (unsigned)per_sm;
out:
	return rc;
}

/* ---- setup ------------------------------------------------------------------------ */

static int load_module(kb_device *d, cal_ctx *c, kb_err *err)
{
	char arch[16];
	snprintf(arch, sizeof arch, "sm_%d", d->info.sm);
	kb_build b;
	int rc = kb_profile__calibrate_build(arch, &b, err);
	if (rc < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleLoadData(&c->mod, b.cubin))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->copy, c->mod, "kb_cal_copy"))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->copy1, c->mod, "kb_cal_copy1"))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->read, c->mod, "kb_cal_read"))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->read1, c->mod, "kb_cal_read1"))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->fma, c->mod, "kb_cal_fma"))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->mma, c->mod, "kb_cal_mma"))) < 0)
		goto out;
out:
	kb_compile_build_free(&b);
	return rc;
}

/* 1 GiB per buffer, or 1/8 of the memory, or ~45 % of what is free each. */
static int alloc_buffers(kb_device *d, cal_ctx *c, kb_err *err)
{
	int rc = KB_OK;
	size_t free_b = 0, total_b = 0;
	if ((rc = KB_CU(err, cuMemGetInfo(&free_b, &total_b))) < 0)
		goto out;
	size_t want = CAL_BUF_MAX;
	if (d->info.total_mem / 8 < want)
		want = d->info.total_mem / 8;
	if (want > free_b / 100 * 45)
		want = free_b / 100 * 45;
	want &= ~(((size_t)1 << 20) - 1);
	if (want < CAL_BUF_MIN)
		return kb_err_set(err, KB_ERROR, KB_DOM_CUDA, 0,
				  "calibration needs 2 x %zu MiB of device memory; %zu MiB free",
				  CAL_BUF_MIN >> 20, free_b >> 20);
	c->bytes = want;
	if ((rc = KB_CU(err, cuMemAlloc(&c->x, c->bytes))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&c->y, c->bytes))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&c->sink, 16))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8Async(c->x, 0x3F, c->bytes, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8Async(c->y, 0, c->bytes, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8Async(c->sink, 0, 16, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
out:
	return rc;
}

/* sm_90: the wgmma probe (calibrate_wgmma.c), built for sm_90a. */
static int load_wgmma(cal_ctx *c, kb_err *err)
{
	kb_build b;
	int rc = kb_profile__calibrate_wgmma_build(&b, err);
	if (rc < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleLoadData(&c->mod_wgmma, b.cubin))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleGetFunction(&c->wgmma, c->mod_wgmma, "kb_cal_wgmma"))) < 0)
		goto out;
out:
	kb_compile_build_free(&b);
	return rc;
}

static void free_ctx(cal_ctx *c)
{
	if (c->sink)
		kb_cu.cuMemFree(c->sink);
	if (c->y)
		kb_cu.cuMemFree(c->y);
	if (c->x)
		kb_cu.cuMemFree(c->x);
	if (c->mod)
		kb_cu.cuModuleUnload(c->mod);
	if (c->mod_wgmma)
		kb_cu.cuModuleUnload(c->mod_wgmma);
}

/* ---- the measurements ------------------------------------------------------------ */

/* A figure: best and median of rate = work / time. */
typedef struct {
	double best, median;
	const char *variant;
} cal_fig;

static void to_rate(const kb_stats *st, double work, double unit, cal_fig *f, const char *v)
{
	double best = work / (st->min * 1e-3) / unit, median = work / (st->median * 1e-3) / unit;
	if (best > f->best)
		f->best = best, f->median = median, f->variant = v;
}

/* Copy (or read, when read is true): the grid-stride kernel at one full
 * wave and the one-element-per-thread kernel; the faster one counts. */
static int measure_stream(kb_device *d, const cal_ctx *c, bool read, cal_fig *f, kb_err *err)
{
	unsigned long long n = c->bytes / 16;
	void *copy_args[] = {(void *)&c->x, (void *)&c->y, &n};
	void *read_args[] = {(void *)&c->x, &n, (void *)&c->sink};
	cal_op ops[2] = {
		{.fn = read ? c->read : c->copy, .block = CAL_BLOCK},
		{.fn = read ? c->read1 : c->copy1, .block = CAL_BLOCK,
		 .grid = (unsigned)((n + CAL_BLOCK - 1) / CAL_BLOCK)},
	};
	static const char *names[2][2] = {
		{"kb_cal_copy: grid-stride, 4 float4 in flight per thread, one full wave",
		 "kb_cal_copy1: one float4 per thread"},
		{"kb_cal_read: grid-stride, 4 uint4 in flight per thread, one full wave",
		 "kb_cal_read1: one uint4 per thread"},
	};
	int rc = full_grid(d, ops[0].fn, &ops[0].grid, err);
	double bytes = (double)c->bytes * (read ? 1.0 : 2.0);
	for (int v = 0; v < 2 && rc == KB_OK; v++) {
		kb_stats st;
		ops[v].args = read ? read_args : copy_args;
		if ((rc = time_op(d, c, &ops[v], CAL_REPS_MEM, &st, err)) == KB_OK)
			to_rate(&st, bytes, 1e9, f, names[read][v]);
	}
	return rc;
}

static int measure_memcpy(kb_device *d, const cal_ctx *c, cal_fig *f, kb_err *err)
{
	cal_op op = {0};
	kb_stats st;
	int rc = time_op(d, c, &op, CAL_REPS_MEM, &st, err);
	if (rc == KB_OK)
		to_rate(&st, 2.0 * (double)c->bytes, 1e9, f, "cuMemcpyDtoDAsync");
	return rc;
}

static int measure_fma(kb_device *d, const cal_ctx *c, cal_fig *f, kb_err *err)
{
	int iters = CAL_FMA_ITERS;
	float a = 0.999999f, b = 1e-6f;
	void *args[] = {(void *)&c->sink, &iters, &a, &b};
	cal_op op = {.fn = c->fma, .block = CAL_BLOCK, .args = args};
	kb_stats st;
	int rc = full_grid(d, c->fma, &op.grid, err);
	if (rc == KB_OK && (rc = time_op(d, c, &op, CAL_REPS_COMPUTE, &st, err)) == KB_OK) {
		double flops = 2.0 * CAL_FMA_PER_ITER * iters * (double)op.grid * CAL_BLOCK;
		to_rate(&st, flops, 1e12, f, "kb_cal_fma");
	}
	return rc;
}

static int measure_mma(kb_device *d, const cal_ctx *c, cal_fig *f, kb_err *err)
{
	int iters = CAL_MMA_ITERS;
	void *args[] = {(void *)&c->sink, &iters};
	cal_op op = {.fn = c->mma, .block = CAL_BLOCK, .args = args};
	kb_stats st;
	int rc = full_grid(d, c->mma, &op.grid, err);
	if (rc == KB_OK && (rc = time_op(d, c, &op, CAL_REPS_COMPUTE, &st, err)) == KB_OK) {
		double warps = (double)op.grid * (CAL_BLOCK / 32);
		double flops = CAL_MMA_FLOPS * CAL_MMA_PER_ITER * iters * warps;
		to_rate(&st, flops, 1e12, f, "kb_cal_mma");
	}
	return rc;
}

/* Blocks of two warpgroups, as many as fit an SM, one wave; each warpgroup
 * issues 4 m64n256k16 wgmmas (2 x 64 x 256 x 16 FLOPs each) an iteration. */
static int measure_wgmma(kb_device *d, const cal_ctx *c, cal_fig *f, kb_err *err)
{
	int iters = CAL_WGMMA_ITERS, rc = KB_OK, per_sm = 0;
	void *args[] = {(void *)&c->sink, &iters};
	cal_op op = {.fn = c->wgmma, .block = CAL_WGMMA_BLOCK, .args = args};
	kb_stats st;
	if ((rc = KB_CU(err, cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, c->wgmma,
									 CAL_WGMMA_BLOCK, 0))) < 0)
		goto out;
	op.grid = (unsigned)(d->info.sm_count > 0 ? d->info.sm_count : 1) * (unsigned)(per_sm > 0 ? per_sm : 1);
	if ((rc = time_op(d, c, &op, CAL_REPS_COMPUTE, &st, err)) == KB_OK) {
		double warpgroups = (double)op.grid * (CAL_WGMMA_BLOCK / 128);
		double flops = 2.0 * 64 * 256 * 16 * 4 * (double)iters * warpgroups;
		to_rate(&st, flops, 1e12, f, "kb_cal_wgmma");
	}
out:
	return rc;
}

/* ---- the result ------------------------------------------------------------------ */

static void set_fig(json_t *j, const char *key, const cal_fig *f)
{
	char med[64];
	snprintf(med, sizeof med, "%s_median", key);
	json_object_set_new(j, key, json_real(f->best));
	json_object_set_new(j, med, json_real(f->median));
}

static void set_pct(json_t *j, const char *key, double got, double peak)
{
	if (peak > 0)
		json_object_set_new(j, key, json_real(100.0 * got / peak));
}

static json_t *datasheet_json(const kb_device_info *i, const cal_fig f[6])
{
	json_t *ds = json_object(), *pct = json_object();
	if (i->dram_peak_Bps > 0)
		json_object_set_new(ds, "dram_GBps", json_real(i->dram_peak_Bps / 1e9));
	if (i->fp32_peak_flops > 0)
		json_object_set_new(ds, "fp32_TFLOPs", json_real(i->fp32_peak_flops / 1e12));
	if (i->bf16_peak_flops > 0)
		json_object_set_new(ds, "bf16_TFLOPs", json_real(i->bf16_peak_flops / 1e12));
	set_pct(pct, "copy", f[0].best, i->dram_peak_Bps / 1e9);
	set_pct(pct, "read", f[1].best, i->dram_peak_Bps / 1e9);
	set_pct(pct, "fp32", f[2].best, i->fp32_peak_flops / 1e12);
	set_pct(pct, "bf16_mma", f[3].best, i->bf16_peak_flops / 1e12);
	if (f[5].best > 0)
		set_pct(pct, "bf16_wgmma", f[5].best, i->bf16_peak_flops / 1e12);
	json_object_set_new(ds, "pct_measured_of_datasheet", pct);
	json_object_set_new(ds, "source", json_string("kb_device_info: DRAM from memory clock x bus "
						      "width x 2; FP32 and bf16 from SM count x "
						      "per-SM rate x max SM clock"));
	return ds;
}

static json_t *method_json(const cal_ctx *c, const cal_fig f[6])
{
	json_t *m = json_object();
	json_object_set_new(m, "timing", json_sprintf("driver events per run on one stream, %d "
						      "warm-ups, best of %d (memory) / %d (compute);"
						      " *_median beside each", CAL_WARMUP,
						      CAL_REPS_MEM, CAL_REPS_COMPUTE));
	json_object_set_new(m, "buffer_bytes", json_integer((json_int_t)c->bytes));
	json_object_set_new(m, "copy", json_sprintf("%s; bytes = read + write", f[0].variant));
	json_object_set_new(m, "read", json_sprintf("%s; xor-reduced, bytes = read", f[1].variant));
	json_object_set_new(m, "fp32", json_sprintf("kb_cal_fma: 8 independent FFMA chains x 16 "
						    "unrolled x %d iterations per thread, one full "
						    "wave; 2 FLOPs per FMA", CAL_FMA_ITERS));
	json_object_set_new(m, "bf16_mma", json_sprintf("kb_cal_mma: mma.sync.aligned.m16n8k16.row."
							"col.f32.bf16.bf16.f32, 8 independent "
							"accumulators x %d iterations per warp, "
							"one full wave; 4096 FLOPs per mma",
							CAL_MMA_ITERS));
	json_object_set_new(m, "bf16_mma_note",
			    json_string("this is the mma.sync ceiling: on sm_90 the datasheet "
					"bf16 figure needs wgmma (sm_90a), which mma.sync does not "
					"reach"));
	json_object_set_new(m, "memcpy_dtod", json_string("cuMemcpyDtoDAsync of the same buffers; "
							  "bytes = read + write"));
	if (f[5].best > 0)
		json_object_set_new(m, "bf16_wgmma", json_sprintf("kb_cal_wgmma (sm_90a): wgmma.mma_async "
								  "m64n256k16.f32.bf16.bf16 from shared "
								  "memory, 4 a commit, one group in flight, "
								  "%d iterations per warpgroup, two "
								  "warpgroups a block, one full wave; "
								  "524288 FLOPs per wgmma", CAL_WGMMA_ITERS));
	return m;
}

static json_t *result_json(kb_device *d, const cal_ctx *c, const cal_fig f[6])
{
	const kb_device_info *i = &d->info;
	json_t *j = json_object();
	char date[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(j, "gpu", json_string(i->name));
	json_object_set_new(j, "uuid", json_string(i->uuid));
	json_object_set_new(j, "arch", json_sprintf("sm_%d", i->sm));
	json_object_set_new(j, "date", json_string(date));
	set_fig(j, "copy_GBps", &f[0]);
	set_fig(j, "read_GBps", &f[1]);
	set_fig(j, "fp32_TFLOPs", &f[2]);
	set_fig(j, "bf16_mma_TFLOPs", &f[3]);
	set_fig(j, "memcpy_dtod_GBps", &f[4]);
	if (f[5].best > 0)
		set_fig(j, "bf16_wgmma_TFLOPs", &f[5]);
	if (f[4].best > 0)
		json_object_set_new(j, "copy_vs_memcpy_pct", json_real(100.0 * f[0].best / f[4].best));
	json_object_set_new(j, "datasheet", datasheet_json(i, f));
	json_object_set_new(j, "method", method_json(c, f));
	return j;
}

int kb_profile_calibrate(kb_device *d, json_t **out, kb_err *err)
{
	cal_ctx c = {0};
	cal_fig f[6] = {{0}};     /* copy, read, fp32, bf16 mma, memcpy, bf16 wgmma (sm_90) */
	int rc = KB_OK;
	bool wgmma = d->info.sm == 90; /* wgmma needs sm_90a code, which only sm_90 runs */
	*out = NULL;
	if ((rc = KB_CU(err, cuCtxSetCurrent(d->ctx))) < 0)
		goto out;
	if ((rc = load_module(d, &c, err)) < 0 || (wgmma && (rc = load_wgmma(&c, err)) < 0) ||
	    (rc = alloc_buffers(d, &c, err)) < 0)
		goto out;
	kb_progress_start(wgmma ? 6 : 5);
	if ((rc = measure_stream(d, &c, false, &f[0], err)) < 0)
		goto out;
	kb_progress_add(1);
	if ((rc = measure_stream(d, &c, true, &f[1], err)) < 0)
		goto out;
	kb_progress_add(1);
	if ((rc = measure_memcpy(d, &c, &f[4], err)) < 0)
		goto out;
	kb_progress_add(1);
	if ((rc = measure_fma(d, &c, &f[2], err)) < 0)
		goto out;
	kb_progress_add(1);
	if ((rc = measure_mma(d, &c, &f[3], err)) < 0)
		goto out;
	kb_progress_add(1);
	if (wgmma && (rc = measure_wgmma(d, &c, &f[5], err)) < 0)
		goto out;
	if (wgmma)
		kb_progress_add(1);
	*out = result_json(d, &c, f);
out:
	free_ctx(&c);
	return rc;
}

/* ---- the ceilings cache ------------------------------------------------------------ */

/* $XDG_CACHE_HOME/kbench/ceilings/<uuid>.json, or NULL for a uuid that is
 * not a plain file name ([A-Za-z0-9_-] only). A new string. */
static char *ceilings_path(const char *uuid)
{
	if (!uuid || !*uuid)
		return NULL;
	for (const char *p = uuid; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return NULL;
	char *dir = kb_cache_dir("ceilings");
	char *path = kb_xasprintf("%s/%s.json", dir, uuid);
	free(dir);
	return path;
}

int kb_profile_ceilings_load(const char *uuid, json_t **out)
{
	*out = NULL;
	char *path = ceilings_path(uuid);
	if (!path)
		return KB_EINVAL;
	kb_buf b = KB_BUF_INIT;
	int rc = kb_file_read(path, &b, NULL);
	if (rc < 0) {
		rc = rc == KB_ENOTFOUND ? KB_ENOTFOUND : KB_EIO;
		goto out;
	}
	json_error_t je;
	*out = json_loadb(b.s, b.len, 0, &je);
	if (!*out || !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		rc = KB_EINVAL;
	}
out:
	kb_buf_free(&b);
	free(path);
	return rc;
}

int kb_profile_ceilings_save(const char *uuid, json_t *ceilings, kb_err *err)
{
	char *path = ceilings_path(uuid), *dir = kb_cache_dir("ceilings"), *text = NULL;
	int rc = KB_OK;
	if (!path || !ceilings) {
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "bad GPU UUID '%s' for the ceilings "
				"cache", uuid ? uuid : "(null)");
		goto out;
	}
	if ((rc = kb_mkdirs(dir, err)) < 0)
		goto out;
	text = json_dumps(ceilings, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(8));
	if (!text) {
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_JSON, 0, "ceilings are not serialisable");
		goto out;
	}
	rc = kb_file_write(path, text, strlen(text), err);
out:
	free(text);
	free(dir);
	free(path);
	return rc;
}
