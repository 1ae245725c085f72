/*
 * device.c - opening a GPU for the runner: driver init, the primary
 * context, one stream, the device's limits and datasheet-style peaks, the
 * utility module (fills, flush) and the L2 flush buffer.
 */
#include "gpu.h"

#include <stddef.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int attr(kb_device *d, CUdevice_attribute a, kb_err *err)
{
	int v = 0;
	if (kb_cu.cuDeviceGetAttribute(&v, a, d->cu_dev) != CUDA_SUCCESS)
		return 0;
	return v;
}

/* FP32 lanes per SM and dense bf16 tensor FLOP/clk/SM by architecture
 * (CUDA C Programming Guide throughput tables; Hopper whitepaper: H100 SXM
 * 989.4 TFLOP/s dense bf16 at 1.83 GHz boost over 132 SMs = 4096/clk/SM). */
static void peaks(kb_device_info *i)
{
	int fp32_lanes = i->sm >= 100 ? 128 : i->sm == 90 ? 128 : i->sm >= 86 ? 128 : 64;
	int tc_per_clk = i->sm >= 100 ? 8192 : i->sm == 90 ? 4096 : i->sm >= 80 ? 2048 : 0;
	double hz = i->clock_khz * 1e3;
	i->fp32_peak_flops = (double)i->sm_count * fp32_lanes * 2.0 * hz;
	/* NVIDIA quotes Hopper's tensor peak at 1830 MHz (989.4 TFLOP/s dense
	 * bf16 on H100 SXM), below the 1980 MHz maximum the driver reports. */
	double tc_hz = i->sm == 90 && hz > 1.83e9 ? 1.83e9 : hz;
	i->bf16_peak_flops = (double)i->sm_count * tc_per_clk * tc_hz;
	i->dram_peak_Bps = 2.0 * i->mem_clock_khz * 1e3 * (i->bus_width_bits / 8.0);
}

static void format_uuid(const CUuuid *u, char *out, size_t n)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static int read_info(kb_device *d, kb_err *err)
{
	kb_device_info *i = &d->info;
	int rc = KB_OK;
	CUuuid uuid;
	if ((rc = KB_CU(err, cuDeviceGetName(i->name, sizeof i->name, d->cu_dev))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuDeviceGetUuid(&uuid, d->cu_dev))) < 0)
		goto out;
	format_uuid(&uuid, i->uuid, sizeof i->uuid);
	if ((rc = KB_CU(err, cuDeviceGetPCIBusId(i->pci_bus, sizeof i->pci_bus, d->cu_dev))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuDeviceTotalMem(&i->total_mem, d->cu_dev))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuDriverGetVersion(&i->driver_version))) < 0)
		goto out;
	i->sm = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, err) * 10 +
		attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, err);
	i->sm_count = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, err);
	i->l2_bytes = attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, err);
	i->persisting_l2_max = attr(d, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, err);
	i->clock_khz = attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, err);
	i->mem_clock_khz = attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, err);
	i->bus_width_bits = attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, err);
	i->smem_per_sm = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, err);
	i->smem_per_block_optin = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, err);
	i->regs_per_sm = attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, err);
	i->max_blocks_per_sm = attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, err);
	peaks(i);
out:
	return rc;
}

/* Compiles kbench's own CUDA source `text` for the device (through the
 * compile cache) and loads it into *mod. */
static int load_own_module(kb_device *d, const char *name, const char *text, kb_src_kind kind,
			   CUmodule *mod, kb_err *err)
{
	kb_source src;
	kb_compile_source_init(&src, name, text, kind);
	char *arch = kb_xasprintf("sm_%d", d->info.sm);
	kb_build_opts o = {.arch = arch};
	kb_build b;
	int rc = kb_compile_build(&src, NULL, NULL, &o, &b, err);
	if (rc < 0)
		goto out;
	if ((rc = KB_CU(err, cuModuleLoadData(mod, b.cubin))) < 0)
		goto out;
out:
	kb_compile_build_free(&b);
	kb_compile_source_free(&src);
	free(arch);
	return rc;
}

/* The utility kernels a device uses, by name, and the handle each fills
 * (the fills by dtype are apart); tests/unit/test_gpu_util.c compiles
 * kb_profile__util_src and finds every name here in its PTX. */
static const struct {
	const char *name;
	size_t at;                /* offsetof the CUfunction in kb_device */
} util_fns[] = {
	{"kb_flush_read", offsetof(kb_device, flush)},
	{"kb_flush_read_cs", offsetof(kb_device, flush_cs)},
	{"kb_l2_discard", offsetof(kb_device, l2_discard)},
	{"kb_l2_discard_all", offsetof(kb_device, l2_discard_all)},
	{"kb_count_diff", offsetof(kb_device, count_diff)},
	{"kb_empty", offsetof(kb_device, empty)},
	{"kb_spin", offsetof(kb_device, spin)},
	{"kb_tlb_sweep", offsetof(kb_device, tlb_sweep)},
	{"kb_check", offsetof(kb_device, check)},
	{"kb_guard_diff", offsetof(kb_device, guard_diff)},
};

static const char *const fill_fns[KB_DT_COUNT] = {
	[KB_DT_F64] = "kb_fill_f64", [KB_DT_F32] = "kb_fill_f32", [KB_DT_F16] = "kb_fill_f16",
	[KB_DT_BF16] = "kb_fill_bf16", [KB_DT_I64] = "kb_fill_i64", [KB_DT_I32] = "kb_fill_i32",
	[KB_DT_I16] = "kb_fill_i16", [KB_DT_I8] = "kb_fill_i8", [KB_DT_U8] = "kb_fill_u8",
};

const char *kb_profile__util_kernel(int i)
{
	int n = (int)(sizeof util_fns / sizeof util_fns[0]);
	if (i < 0)
		return NULL;
	if (i < n)
		return util_fns[i].name;
	return i - n < KB_DT_COUNT ? fill_fns[i - n] : NULL;
}

static int load_util(kb_device *d, kb_err *err)
{
	int rc = load_own_module(d, "<kbench util>.cu", kb_profile__util_src, KB_SRC_CUDA, &d->util, err);
	if (rc < 0)
		return rc;
	for (int t = 0; t < KB_DT_COUNT && rc == 0; t++)
		rc = KB_CU(err, cuModuleGetFunction(&d->fill[t], d->util, fill_fns[t]));
	for (size_t i = 0; i < sizeof util_fns / sizeof util_fns[0] && rc == 0; i++)
		rc = KB_CU(err, cuModuleGetFunction((CUfunction *)((char *)d + util_fns[i].at),
						    d->util, util_fns[i].name));
	return rc;
}

int kb_profile_device_count(kb_err *err)
{
	int rc = kb_profile__cuda_load(err), n = 0;
	if (rc < 0)
		return rc;
	if ((rc = KB_CU(err, cuInit(0))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuDeviceGetCount(&n))) < 0)
		goto out;
	return n;
out:
	return rc;
}

int kb_profile_device_open(kb_device **out_dev, int ordinal, kb_err *err)
{
	*out_dev = NULL;
	double t = kb_now_ms();
	int rc = kb_profile_device_count(err);
	kb_log("device: cuInit %.1f ms", kb_now_ms() - t);
	if (rc < 0)
		return rc;
	if (ordinal >= rc)
		return kb_err_set(err, KB_ENODEV, KB_DOM_CUDA, 0,
				  rc ? "no GPU %d (the driver sees %d)" : "no GPU: the driver sees none",
				  ordinal, rc);
	kb_device *d = kb_xcalloc(1, sizeof *d);
	d->info.ordinal = ordinal;
	rc = KB_OK;
	if ((rc = KB_CU(err, cuDeviceGet(&d->cu_dev, ordinal))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuDevicePrimaryCtxRetain(&d->ctx, d->cu_dev))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuCtxSetCurrent(d->ctx))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuStreamCreate(&d->stream, CU_STREAM_NON_BLOCKING))) < 0)
		goto out;
	kb_log("device: context %.1f ms", kb_now_ms() - t);
	if ((rc = read_info(d, err)) < 0 || (rc = load_util(d, err)) < 0)
		goto out;
	kb_log("device: utility kernels %.1f ms", kb_now_ms() - t);
	/* Twice the L2: reading it evicts every line a kernel could reuse. */
	d->flush_bytes = (size_t)(d->info.l2_bytes > 0 ? d->info.l2_bytes : 64 << 20) * 2;
	if ((rc = KB_CU(err, cuMemAlloc(&d->flush_buf, d->flush_bytes))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8(d->flush_buf, 0x5A, d->flush_bytes))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&d->sink, 16))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&d->counter, 8))) < 0)
		goto out;
	kb_log("device: flush buffer %.1f ms", kb_now_ms() - t);
	*out_dev = d;
	return KB_OK;
out:
	kb_profile_device_close(d);
	return rc;
}

void kb_profile_device_close(kb_device *d)
{
	if (!d)
		return;
	kb_profile__devcheck_close(d);
	if (d->flush_buf)
		kb_cu.cuMemFree(d->flush_buf);
	if (d->sink)
		kb_cu.cuMemFree(d->sink);
	if (d->counter)
		kb_cu.cuMemFree(d->counter);
	if (d->util)
		kb_cu.cuModuleUnload(d->util);
	if (d->tlb_buf)
		kb_cu.cuMemFree(d->tlb_buf);
	if (d->icache_mod)
		kb_cu.cuModuleUnload(d->icache_mod);
	if (d->stream)
		kb_cu.cuStreamDestroy(d->stream);
	if (d->ctx)
		kb_cu.cuDevicePrimaryCtxRelease(d->cu_dev);
	free(d);
}

const kb_device_info *kb_profile_device_info(const kb_device *d)
{
	return &d->info;
}

json_t *kb_profile_device_json(const kb_device_info *i)
{
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(i->name));
	json_object_set_new(j, "uuid", json_string(i->uuid));
	json_object_set_new(j, "pci_bus", json_string(i->pci_bus));
	json_object_set_new(j, "arch", json_sprintf("sm_%d", i->sm));
	json_object_set_new(j, "sm_count", json_integer(i->sm_count));
	json_object_set_new(j, "l2_bytes", json_integer(i->l2_bytes));
	json_object_set_new(j, "memory_bytes", json_integer((json_int_t)i->total_mem));
	json_object_set_new(j, "max_sm_clock_mhz", json_integer(i->clock_khz / 1000));
	json_object_set_new(j, "max_mem_clock_mhz", json_integer(i->mem_clock_khz / 1000));
	json_object_set_new(j, "bus_width_bits", json_integer(i->bus_width_bits));
	json_object_set_new(j, "driver_cuda_version", json_sprintf("%d.%d", i->driver_version / 1000,
								    (i->driver_version % 1000) / 10));
	json_object_set_new(j, "dram_peak_GBps", json_real(i->dram_peak_Bps / 1e9));
	json_object_set_new(j, "fp32_peak_TFLOPs", json_real(i->fp32_peak_flops / 1e12));
	json_object_set_new(j, "bf16_peak_TFLOPs", json_real(i->bf16_peak_flops / 1e12));
	return j;
}

int kb_profile__fill(kb_device *d, CUdeviceptr p, kb_dtype t, int64_t n, const kb_init *init,
		     uint64_t seed, kb_err *err)
{
	int rc = KB_OK;
	int dist = 0;
	double a = 0, b = 1;
	switch (init->kind) {
	case KB_INIT_NONE:
	case KB_INIT_RANDN:
		dist = 0, a = init->lo, b = (init->lo == 0 && init->hi == 0) ? 1.0 : init->hi;
		break;
	case KB_INIT_RAND:
		dist = 1, a = init->lo, b = (init->lo == 0 && init->hi == 0) ? 1.0 : init->hi;
		break;
	case KB_INIT_ARANGE: dist = 2, a = 0, b = 1; break;
	case KB_INIT_ONES: dist = 3, a = 1; break;
	case KB_INIT_ZEROS: dist = 3, a = 0; break;
	case KB_INIT_FILE: return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "file() is not a fill");
	}
	unsigned long long un = (unsigned long long)n, useed = seed;
	void *args[] = {&p, &un, &dist, &useed, &a, &b};
	unsigned grid = (unsigned)((n + 255) / 256);
	if (grid > 65535u * 8)
		grid = 65535u * 8;
	if (grid == 0)
		grid = 1;
	if ((rc = KB_CU(err, cuLaunchKernel(d->fill[t], grid, 1, 1, 256, 1, 1, 0, d->stream, args,
					    NULL))) < 0)
		goto out;
out:
	return rc;
}

/* Reads the flush buffer with f (kb_flush_read or kb_flush_read_cs). */
static int flush_with(kb_device *d, CUfunction f, kb_err *err)
{
	unsigned long long n16 = d->flush_bytes / 16;
	void *args[] = {&d->flush_buf, &n16, &d->sink};
	unsigned grid = (unsigned)d->info.sm_count * 8;
	return KB_CU(err, cuLaunchKernel(f, grid ? grid : 1, 1, 1, 512, 1, 1, 0, d->stream, args, NULL));
}

int kb_profile__flush_l2(kb_device *d, kb_err *err)
{
	return flush_with(d, d->flush, err);
}

int kb_profile__flush_l2_cs(kb_device *d, kb_err *err)
{
	return flush_with(d, d->flush_cs, err);
}

int kb_profile__l2_discard_all(kb_device *d, kb_err *err)
{
	unsigned long long lines = d->flush_bytes / 128;
	void *args[] = {&d->flush_buf, &lines};
	unsigned grid = (unsigned)d->info.sm_count * 2;
	return KB_CU(err, cuLaunchKernel(d->l2_discard_all, grid ? grid : 1, 1, 1, 1024, 1, 1, 0,
					 d->stream, args, NULL));
}

int kb_profile__flush_l2_write(kb_device *d, kb_err *err)
{
	return KB_CU(err, cuMemsetD8Async(d->flush_buf, 0x5A, d->flush_bytes, d->stream));
}

/* Two blocks an SM, so that every SM number takes part; about 8 SMs a
 * line (kb_l2_discard says why). */
int kb_profile__l2_discard(kb_device *d, kb_err *err)
{
	unsigned long long lines = d->flush_bytes / 128;
	unsigned groups = d->info.sm_count >= 16 ? (unsigned)d->info.sm_count / 8 : 1;
	void *args[] = {&d->flush_buf, &lines, &groups};
	unsigned grid = (unsigned)d->info.sm_count * 2;
	return KB_CU(err, cuLaunchKernel(d->l2_discard, grid ? grid : 1, 1, 1, 1024, 1, 1, 0, d->stream,
					 args, NULL));
}

int kb_profile__reset_outputs(kb_device *d, const kb_profile__bound *bd, kb_err *err)
{
	int rc = KB_OK;
	for (int i = 0; i < bd->nbufs; i++)
		if (bd->bufs[i].spec->is_out && /* `= zeros`: an accumulator (atomics add into it) */
		    (rc = KB_CU(err, cuMemsetD8Async(bd->bufs[i].dev, bd->bufs[i].spec->init.kind ==
						     KB_INIT_ZEROS ? 0 : KB_POISON_BYTE,
						     bd->bufs[i].bytes, d->stream))) < 0)
			goto out;
out:
	return rc;
}

int kb_profile__guard_diff(kb_device *d, CUdeviceptr out, CUdeviceptr gold, kb_dtype t, int64_t n,
			   double rtol, double atol, CUdeviceptr count, CUdeviceptr first,
			   kb_err *err)
{
	int rc = KB_OK;
	int dt = (int)t;
	unsigned long long un = (unsigned long long)n;
	void *args[] = {&out, &gold, &dt, &un, &rtol, &atol, &count, &first};
	if ((rc = KB_CU(err, cuLaunchKernel(d->guard_diff, (unsigned)d->info.sm_count * 4, 1, 1, 256, 1, 1,
				            0, d->stream, args, NULL))) < 0)
		goto out;
out:
	return rc;
}

int kb_profile__icache_thrash(kb_device *d, kb_err *err)
{
	int rc = KB_OK;
	if (!d->icache) {
		char *ptx = kb_profile__icache_ptx();
		rc = load_own_module(d, "<kbench icache>.ptx", ptx, KB_SRC_PTX, &d->icache_mod, err);
		free(ptx);
		if (rc < 0)
			return rc;
		if ((rc = KB_CU(err, cuModuleGetFunction(&d->icache, d->icache_mod,
							 "kb_icache"))) < 0)
			goto out;
	}
	float m = 1.0f, c = 0.0f;
	void *args[] = {&d->sink, &m, &c};
	unsigned grid = (unsigned)d->info.sm_count * 2;
	if ((rc = KB_CU(err, cuLaunchKernel(d->icache, grid ? grid : 1, 1, 1, 128, 1, 1, 0, d->stream,
				            args, NULL))) < 0)
		goto out;
out:
	return rc;
}

int kb_profile__tlb_sweep(kb_device *d, kb_err *err)
{
	int rc = KB_OK;
	unsigned long long stride = 64 << 10;
	if (!d->tlb_buf) {
		d->tlb_bytes = (size_t)8 << 30;
		if ((rc = KB_CU(err, cuMemAlloc(&d->tlb_buf, d->tlb_bytes))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuMemsetD8(d->tlb_buf, 0x5A, d->tlb_bytes))) < 0)
			goto out;
	}
	unsigned long long n = d->tlb_bytes / stride;
	void *args[] = {&d->tlb_buf, &n, &stride, &d->sink};
	if ((rc = KB_CU(err, cuLaunchKernel(d->tlb_sweep, (unsigned)(n / 256), 1, 1, 256, 1, 1, 0, d->stream,
				            args, NULL))) < 0)
		goto out;
out:
	return rc;
}

int kb_profile__count_diff(kb_device *d, CUdeviceptr a, CUdeviceptr b, size_t bytes,
			   uint64_t *ndiff, kb_err *err)
{
	int rc = KB_OK;
	unsigned long long n = bytes;
	void *args[] = {&a, &b, &n, &d->counter};
	if ((rc = KB_CU(err, cuMemsetD8Async(d->counter, 0, 8, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuLaunchKernel(d->count_diff, (unsigned)d->info.sm_count * 4, 1, 1, 256, 1, 1,
				            0, d->stream, args, NULL))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemcpyDtoH(ndiff, d->counter, 8))) < 0)
		goto out;
out:
	return rc;
}
