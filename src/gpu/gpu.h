/*
 * gpu.h - the GPU as kbench drives it, under everything that runs there
 * (src/measure/, src/counters/, src/ceilings/): the driver API resolved by
 * dlopen and the check (KB_CU) every driver call goes through (cuda.c), an open
 * device with kbench's own utility kernels (device.c, util_kernels.c), a
 * kernel bound to buffers and launched (launch.c, tensormap.c), an output
 * compared with a reference copied to the device (devcheck.c), and the
 * statistics of repeated measurements (stats.c).
 */
#ifndef KB_GPU_H
#define KB_GPU_H

#include "../tensor/tensor.h"

#include <cuda.h>

/* ===== cuda.c: the driver API ===== */

/* Every driver entry point kbench uses.  The names go through cuda.h's
 * macros (cuMemAlloc -> cuMemAlloc_v2 ...), so the member names, the
 * prototypes and the dlsym'd symbols are the versioned ones cuda.h means. */
#define KB_CU_FUNCS(X) \
	X(cuGetErrorName) X(cuGetErrorString) X(cuInit) X(cuDriverGetVersion) \
	X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetUuid) \
	X(cuDeviceGetAttribute) X(cuDeviceGetPCIBusId) X(cuDeviceTotalMem) \
	X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) \
	X(cuCtxResetPersistingL2Cache) X(cuModuleLoadData) X(cuModuleUnload) \
	X(cuModuleGetFunction) X(cuMemGetInfo) X(cuMemAlloc) X(cuMemFree) \
	X(cuMemcpyHtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoH) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoD) X(cuMemcpyDtoDAsync) \
	X(cuMemsetD8) X(cuMemsetD8Async) X(cuLaunchKernel) X(cuStreamCreate) \
	X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate) \
	X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuEventElapsedTime) \
	X(cuEventDestroy) X(cuFuncGetAttribute) X(cuFuncSetAttribute) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuOccupancyMaxActiveClusters) X(cuStreamBeginCapture) \
	X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) \
	X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuLaunchHostFunc) X(cuTensorMapEncodeTiled)

typedef struct {
#define KB_CU_MEMBER(f) __typeof__(&f) f;
	KB_CU_FUNCS(KB_CU_MEMBER)
#undef KB_CU_MEMBER
} kb_cu_api;

/* The resolved table; valid after kb_profile__cuda_load() returned 0. */
extern kb_cu_api kb_cu;

/* Loads libcuda.so.1 and resolves every entry point. Returns 0, or
 * KB_ENODEV with err saying why (no driver, stub library ...). */
int kb_profile__cuda_load(kb_err *err);

/* Fills err from a CUresult: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory
 * access was encountered (cuStreamSynchronize at launch.c:88)". Returns
 * KB_ERROR (KB_ENODEV for no device / stub). */
int kb_profile__cu_err(kb_err *err, CUresult r, const char *call, const char *file, int line);

/* A driver call through the table: 0, or kb_profile__cu_err's code with err
 * naming the call and this file and line.  The jump stays at the call site:
 *	if ((rc = KB_CU(err, cuMemAlloc(&p, n))) < 0)
 *		goto out; */
#define KB_CU(err, call) kb_profile__cu_check((err), kb_cu.call, #call, __FILE__, __LINE__)
/* KB_CU's half: 0 for CUDA_SUCCESS, else kb_profile__cu_err(...). */
int kb_profile__cu_check(kb_err *err, CUresult r, const char *call, const char *file, int line);

/* True for errors after which the context is unusable (sticky errors). */
bool kb_profile__cu_sticky(int code);

/* ===== device.c ===== */

/* What the driver says about one GPU (recorded in every Result). */
typedef struct {
	int ordinal;
	char name[128];
	char uuid[48];            /* "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it */
	char pci_bus[32];
	int sm;                   /* 90 */
	int sm_count;
	int l2_bytes;
	int persisting_l2_max;
	int clock_khz, mem_clock_khz, bus_width_bits;
	int smem_per_sm, smem_per_block_optin, regs_per_sm, max_blocks_per_sm;
	int driver_version;       /* 13000 */
	size_t total_mem;
	double dram_peak_Bps;     /* from memory clock and bus width (DDR) */
	double fp32_peak_flops;   /* SMs x FP32 lanes x 2 x boost clock */
	double bf16_peak_flops;   /* dense tensor-core datasheet figure, 0 unknown */
} kb_device_info;

/* An open GPU: the primary context, one stream, kbench's utility kernels
 * (fill, flush) and an L2 flush buffer.  One per runner process. */
typedef struct kb_device kb_device;

/* Opens GPU `ordinal`. Returns 0, or KB_ENODEV (no driver / no GPU) / KB_ERROR. */
int kb_profile_device_open(kb_device **dev, int ordinal, kb_err *err);
void kb_profile_device_close(kb_device *dev);
const kb_device_info *kb_profile_device_info(const kb_device *dev);
/* Whether err is a CUDA error after which the context is unusable (an
 * illegal address, a launch failure ...): the runner must be restarted. */
bool kb_profile_sticky(const kb_err *err);
/* The number of GPUs the driver sees (0 without a driver); fills err. */
int kb_profile_device_count(kb_err *err);
/* JSON of the info (environment fingerprint part). A new reference. */
json_t *kb_profile_device_json(const kb_device_info *info);

/* devcheck.c: a device copy of a CPU reference (its outputs, by name). */
typedef struct kb_profile__devref kb_profile__devref;
#define KB_DEVREF_SLOTS 16

/* device.c: what run.c needs of an open device. */
struct kb_device {
	kb_device_info info;
	CUdevice cu_dev;
	CUcontext ctx;
	CUstream stream;
	CUmodule util;
	CUfunction fill[KB_DT_COUNT];
	CUfunction flush;
	CUfunction count_diff;
	CUfunction empty;
	CUfunction spin;
	CUmodule icache_mod;      /* loaded on first use (span program 'I') */
	CUfunction icache;
	CUfunction tlb_sweep;
	CUdeviceptr tlb_buf;      /* allocated on first use (span program 'T') */
	size_t tlb_bytes;
	CUfunction check;
	CUfunction guard_diff;    /* kb_guard_diff: a timed launch's output vs the checked one */
	CUfunction l2_discard;    /* kb_l2_discard: the flush buffer's lines invalidated */
	CUfunction flush_cs;      /* kb_flush_read_cs: the flush read, evict-first lines */
	CUfunction l2_discard_all; /* kb_l2_discard_all: every line discarded by every block */
	CUdeviceptr check_parts;  /* kb_check's per-block results */
	CUdeviceptr counter;
	CUdeviceptr flush_buf;
	size_t flush_bytes;
	CUdeviceptr sink;
	struct kb_profile__devref *devrefs; /* KB_DEVREF_SLOTS of them */
	size_t devref_bytes;
	size_t devref_budget; /* 0: a quarter of the GPU's memory (tests set less) */
	uint64_t devref_tick;
};

/* Fills n elements of dtype t at p per init (trial seed mixed in). */
int kb_profile__fill(kb_device *d, CUdeviceptr p, kb_dtype t, int64_t n, const kb_init *init,
		     uint64_t seed, kb_err *err);
/* Counts differing 4-byte words (bytes for a tail) between two device
 * buffers of `bytes` bytes; synchronises. Returns 0 or a KB_E*. */
int kb_profile__count_diff(kb_device *d, CUdeviceptr a, CUdeviceptr b, size_t bytes,
			   uint64_t *ndiff, kb_err *err);
/* Enqueues the instruction-cache thrash (kb_icache, compiled and loaded on
 * first use) on the device's stream. Returns 0 or a KB_E*. */
int kb_profile__icache_thrash(kb_device *d, kb_err *err);
/* Enqueues a read of one word per 64 KB of a buffer larger than the
 * TLBs reach (allocated on first use). Returns 0 or a KB_E*. */
int kb_profile__tlb_sweep(kb_device *d, kb_err *err);
/* Enqueues the L2 flush (a read of 2x L2) on the device's stream. */
int kb_profile__flush_l2(kb_device *d, kb_err *err);
/* Enqueues the invalidation of the flush buffer's L2 lines (after a flush:
 * an L2 with no valid line, as after ncu's flush and invalidate). */
int kb_profile__l2_discard(kb_device *d, kb_err *err);
/* The CUDA source of kbench's own kernels (fills, flush, checks, guard). */
extern const char kb_profile__util_src[];
/* The PTX of kb_icache, the instruction-cache thrash (a new string). */
char *kb_profile__icache_ptx(void);
/* The i-th name of the utility kernels a device loads from
 * kb_profile__util_src (NULL past the last): what a test compiles for. */
const char *kb_profile__util_kernel(int i);

/* Experiments' flushes (span programs G, X and Q): the read with streaming
 * loads, a write of the flush buffer (dirty lines, for D to drop), the
 * discard issued from every block for every line. */
int kb_profile__flush_l2_cs(kb_device *d, kb_err *err);
int kb_profile__flush_l2_write(kb_device *d, kb_err *err);
int kb_profile__l2_discard_all(kb_device *d, kb_err *err);

/* ===== devcheck.c ===== */

/* devcheck.c: an output or a reference where kb_check reads it. */
typedef struct {
	CUdeviceptr ptr;
	kb_dtype dtype;
} kb_profile__devside;

/* The device reference of key, or NULL (marks it recently used). */
const kb_profile__devref *kb_profile__devref_get(kb_device *d, const char *key);
/* The buffer of output `name` of a device reference (*n elements), or 0. */
CUdeviceptr kb_profile__devref_buf(const kb_profile__devref *r, const char *name, int64_t *n);
/* Uploads a CPU reference under key (least recently used ones make room).
 * Returns 0, KB_ENOMEM when it does not fit (compare on the CPU then), or
 * a sticky CUDA error. */
int kb_profile__devref_put(kb_device *d, const char *key, const kb_ref_out *outs, int n,
			   kb_err *err);
/* Frees what devcheck.c holds on the device (the device is closing). */
void kb_profile__devcheck_close(kb_device *d);
/* Compares out with ref on the GPU, shape giving out's dtype, shape and
 * name; fills st exactly as kb_profile_compare does (figures equal up to the
 * order of the sums).  Synchronises.  Returns 0 or a KB_E* (CUDA). */
int kb_profile__devcheck(kb_device *d, const kb_tensor *shape, const kb_profile__devside *out,
			 const kb_profile__devside *ref, int64_t ref_n, double rtol, double atol,
			 kb_check_stats *st, kb_err *err);

/* ===== launch.c and tensormap.c ===== */

/* Allocates and frees the host copies of the spec's tensors, so that their
 * pages are touched (~21 ms for softmax's 268 MB on 16 threads) while
 * something else waits, e.g. on a thread while the GPU opens: the run's
 * allocations of the same sizes then reuse the blocks (kb_big_alloc keeps
 * the last 6 freed).  Host memory only; no GPU. */
void kb_profile_host_warm(const kb_source *src, const kb_spec *spec);

/* launch.c: one kernel bound to device buffers, ready to launch. */
typedef struct {
	const kb_spec_tensor *spec;
	kb_tensor host;           /* host copy, shaped per the spec */
	CUdeviceptr dev;
	size_t bytes;
} kb_profile__buf;

/* A kernel parameter bound to a `//! tensormap` line (tensormap.c). */
typedef struct {
	int param, buf;           /* kernel parameter index; the tensor's index in bufs */
	const kb_spec_tmap *spec;
	int rank;
	cuuint64_t dims[KB_MAX_RANK];    /* the tensor's, innermost first, as the driver wants them */
	cuuint64_t strides[KB_MAX_RANK]; /* bytes, of dims 1 .. rank-1 */
	cuuint32_t box[KB_MAX_RANK];
	bool zero;                       /* unaligned=zero and TMA cannot describe it: 128 zero bytes */
} kb_profile__tmap;

typedef struct {
	CUmodule mod;
	CUfunction fn;
	const char *name, *symbol;
	kb_launch_dims dims;
	kb_profile__buf *bufs;    /* one per spec tensor, spec order */
	int nbufs;
	uint64_t *scalars;        /* storage of scalar parameters */
	void **params;            /* kernel parameter pointers, kernel order */
	int nparams;
	kb_profile__tmap *tmaps;  /* the tensormap parameters */
	int ntmaps;
	CUtensorMap *tmap_store;  /* their encodings (for these bufs), 64-byte aligned */
} kb_profile__bound;

/* Loads the module (cached per build key), allocates buffers per the spec,
 * binds parameters by name. Returns 0 or a KB_E* with err/diags. */
int kb_profile__bind(kb_device *d, const kb_source *src, const kb_spec *spec,
		     const kb_kernel *k, const kb_build *b, kb_profile__bound *out, kb_err *err);
/* Same module and buffers, another kernel of the file (a reference kernel):
 * parameters are bound to `bufs`, which must outlive it. */
int kb_profile__bind_other(kb_device *d, const kb_spec *spec, const kb_kernel *k,
			   const kb_build *b, kb_profile__buf *bufs, int nbufs,
			   const kb_launch_dims *dims, kb_profile__bound *out, kb_err *err);
void kb_profile__unbind(kb_profile__bound *bd, bool free_bufs);
/* tensormap.c: whether p is bound by a `//! tensormap` line; binding them
 * (after the buffers: plans and encodes each, pointing bd->params at the
 * encodings); re-encoding for bd->bufs (another buffer set) into fresh
 * storage, which the caller frees. */
bool kb_profile__is_tmap_param(const kb_spec *spec, const kb_param *p);
int kb_profile__tmaps_bind(const kb_source *src, const kb_spec *spec, const kb_kernel *k,
			   kb_profile__bound *bd, kb_err *err);
int kb_profile__tmaps_encode(kb_profile__bound *bd, kb_err *err);
/* What a loaded function needs before its launch: a non-portable cluster
 * size where its cluster passes 8 blocks, and dims' dynamic shared memory
 * past 48 KiB (every module instance of a kernel: the bound one and the
 * hot-spot launches' fresh one). */
int kb_profile__fn_attrs(CUfunction fn, const kb_launch_dims *dims, kb_err *err);
/* The blocks of the cluster fn was compiled for (__cluster_dims__), 1 when
 * none. */
int kb_profile__cluster_blocks(CUfunction fn);
int kb_profile__launch(kb_device *d, const kb_profile__bound *bd, kb_err *err);
int kb_profile__sync(kb_device *d, kb_err *err);

/* device.c: poisons bd's outputs (enqueued on the run stream), as before
 * every checked and every timed launch; an output declared `= zeros` (an
 * accumulator) is zeroed instead. */
int kb_profile__reset_outputs(kb_device *d, const kb_profile__bound *bd, kb_err *err);
/* Enqueues kb_guard_diff: adds to *count the elements of out (n of dtype t)
 * not within tolerance of gold, and lowers *first to the first of them. */
int kb_profile__guard_diff(kb_device *d, CUdeviceptr out, CUdeviceptr gold, kb_dtype t, int64_t n,
			   double rtol, double atol, CUdeviceptr count, CUdeviceptr first,
			   kb_err *err);

/* ===== stats.c ===== */

typedef struct {
	int n;
	double median, min, max, mean, stdev, cv; /* cv = stdev / mean */
	double p10, p90;
} kb_stats;

/* Summary statistics of n samples (the array is not modified). */
void kb_stats_compute(const double *v, int n, kb_stats *st);
/* The repetition policy: after each new sample, says whether to stop.
 * Stops when n >= max_reps, or time spent >= max_ms, or n >= min_reps and
 * the median of the last half moved less than rel_tol against the median
 * of all samples. */
typedef struct {
	int min_reps, max_reps;
	double max_ms;
	double rel_tol;
} kb_rep_policy;
bool kb_stats_should_stop(const kb_rep_policy *p, const double *v, int n, double spent_ms);

#endif
