/*
 * profile_int.h - shared inside src/profile only: the driver API table
 * resolved by dlopen (cuda.c) and the check (KB_CU) every driver call
 * goes through.
 */
#ifndef KB_PROFILE_INT_H
#define KB_PROFILE_INT_H

#include "profile.h"

#include <pthread.h>

#include <cuda.h>

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
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuStreamBeginCapture) \
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
	CUdeviceptr check_parts;  /* kb_check's per-block results */
	CUdeviceptr counter;
	CUdeviceptr flush_buf;
	size_t flush_bytes;
	CUdeviceptr sink;
	struct kb_profile__devref *devrefs; /* KB_DEVREF_SLOTS of them */
	size_t devref_bytes;
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

/* compare.c: the steps both comparisons share. */
bool kb_profile__check_ints(kb_dtype t);
/* The value an all-poison element of integer dtype t reads as. */
double kb_profile__check_poison_value(kb_dtype t);
void kb_profile__check_begin(const kb_tensor *out, kb_check_stats *st);
/* Size mismatch, coordinate, rel L2 and the verdict. */
void kb_profile__check_end(const kb_tensor *out, kb_check_stats *st, int64_t ref_n, double sum_d2,
			   double sum_r2);

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
int kb_profile__launch(kb_device *d, const kb_profile__bound *bd, kb_err *err);
int kb_profile__sync(kb_device *d, kb_err *err);

/* cuptilib.c: libcupti's handle (dlopen'ed once), or NULL with why. */
void *kb_profile__cupti_lib(char *why, size_t n);
/* Fills err from CUPTI's result of `call` (`needs`: what wanted CUPTI, e.g.
 * "GPU performance counters") and returns what it maps to: KB_EPERM with
 * the fix, KB_EUNSUP (not on this device, or another profiler attached),
 * KB_EINVAL (a metric or chip name), else KB_ERROR. */
int kb_profile__cupti_fail(kb_err *err, int result, const char *call, const char *needs,
			   const char *file, int line);

/* refcache.c: reference results by the hash of everything they depend on.
 * get returns a borrowed array (valid until the next put) or NULL; put
 * takes ownership of outs (n entries) and returns it, borrowed. */
kb_ref_out *kb_profile__refcache_get(const char *key, int *n);
kb_ref_out *kb_profile__refcache_put(const char *key, kb_ref_out *outs, int n);
/* refstore.c: the same results in files shared by a machine's runners.
 * load: the outputs (the caller owns them) and *n, or NULL when absent or
 * damaged (then removed); save: keeps small ones, silently. */
kb_ref_out *kb_profile__refstore_load(const char *key, int *n);
void kb_profile__refstore_save(const char *key, const kb_ref_out *outs, int n);
/* Whether a result of that many bytes is kept in the files (worth a claim). */
bool kb_profile__refstore_keeps(size_t bytes);
/* The right to compute key's reference: a descriptor holding its lock, taken
 * after any other runner computing it is done (*waited: there was one; its
 * result is then in the files); -1 when no lock could be had (compute
 * anyway).  Give it back with kb_profile__refstore_release. */
int kb_profile__refstore_claim(const char *key, bool *waited);
/* Gives back *claim (a descriptor or -1) and sets it to -1. */
void kb_profile__refstore_release(int *claim);

/* device.c: poisons bd's outputs (enqueued on the run stream), as before
 * every checked and every timed launch; an output declared `= zeros` (an
 * accumulator) is zeroed instead. */
int kb_profile__reset_outputs(kb_device *d, const kb_profile__bound *bd, kb_err *err);
/* Enqueues kb_guard_diff: adds to *count the elements of out (n of dtype t)
 * not within tolerance of gold, and lowers *first to the first of them. */
int kb_profile__guard_diff(kb_device *d, CUdeviceptr out, CUdeviceptr gold, kb_dtype t, int64_t n,
			   double rtol, double atol, CUdeviceptr count, CUdeviceptr first,
			   kb_err *err);

/* guard.c: the timed launches as twins of the checked ones (its top says
 * how).  A set: one trial's inputs with the output its checked launch
 * wrote ("golden"), and outputs for the timed launches to write. */
typedef struct {
	kb_profile__bound bd;
	CUdeviceptr *golden;       /* per buffer: the checked output, or 0 */
	bool clone;                /* bd's buffers are the set's own, not the run's */
	uint64_t seed;             /* the trial whose inputs these are */
} kb_profile__tset;

typedef struct {
	kb_profile__tset *sets;    /* in trial order; the run's own buffers last */
	int nsets;
	int *out_buf;              /* the checked outputs' buffer indices */
	int nchecked;
	double rtol, atol;
	CUdeviceptr counts, firsts;/* per (timed launch, checked output) */
	int64_t capacity;          /* timed launches the slots hold */
	int64_t launches;          /* timed launches checked */
	int64_t unchecked;         /* timed launches beyond the slots */
	const kb_profile__bound *shape; /* the run's own (shapes and names) */
	const char *why_one_set;   /* why the inputs are not rotated, or NULL */
} kb_profile__guard;

/* checked[i]: buffer i is an output that the check compares. */
void kb_profile__guard_init(kb_profile__guard *g, const kb_profile__bound *bd, const bool *checked,
			    double rtol, double atol);
/* Whether another trial's inputs are worth keeping as a set: inputs drawn
 * from seeds, room in the set table and in GPU memory (else why_one_set
 * says why not). */
bool kb_profile__guard_wants(kb_profile__guard *g, const kb_spec *spec,
			     const kb_profile__bound *bd);
/* Keeps bd's state now (a checked launch just ran) as the next set: a copy,
 * or bd itself when is_run_bound (the last trial's). */
int kb_profile__guard_keep(kb_profile__guard *g, kb_device *d, kb_profile__bound *bd,
			   uint64_t seed, bool is_run_bound, kb_err *err);
/* Room for `launches` timed launches' verdicts (forgets earlier ones). */
int kb_profile__guard_slots(kb_profile__guard *g, kb_device *d, int64_t launches, kb_err *err);
/* Enqueues the check of the launch just made with bd against set's golden
 * outputs, as the next timed launch. */
int kb_profile__guard_check(kb_profile__guard *g, kb_device *d, const kb_profile__bound *bd,
			    const kb_profile__tset *set, kb_err *err);
/* The set timed launch number `launch` uses. */
const kb_profile__tset *kb_profile__guard_set(const kb_profile__guard *g, int64_t launch);
/* Reads the verdicts: check["timed_launches"], *ok false when a launch
 * wrote other than its checked twin. */
int kb_profile__guard_finish(kb_profile__guard *g, kb_device *d, json_t *check, bool *ok,
			     kb_err *err);
void kb_profile__guard_free(kb_profile__guard *g, bool sticky);
/* A copy of bd's buffers (contents too) with its parameters pointed at
 * them; freed by free_clone (buffers that are main_bd's stay). */
int kb_profile__clone_bound(kb_device *d, const kb_profile__bound *bd, kb_profile__bound *set,
			    kb_err *err);
void kb_profile__free_clone(kb_profile__bound *set, const kb_profile__bound *main_bd);
/* The bytes of bd's buffers (of its outputs only). */
size_t kb_profile__bound_bytes(const kb_profile__bound *bd, bool outputs_only);
/* Whether `bytes` fit in `share` of the GPU memory free now. */
bool kb_profile__fits(size_t bytes, double share);

/* timing.c: times the guard's sets (see the file's comment), checking every
 * timed launch; out gets the "timing" JSON. */
int kb_profile__time(kb_device *d, kb_profile__guard *g, const kb_run_opts *o, json_t **out,
		     kb_err *err);

/* activity.c: kernel durations from GPU timestamps (CUPTI Activity API,
 * dlopen'ed libcupti). start: 0, or KB_EUNSUP when CUPTI is missing or
 * refuses (ncu/nsys attached, privileges); timing then uses events only.
 * stop: flushes, disables, and fills durations_us (launch order, up to max)
 * with the kernels named symbol (mangled), others dropped; *n of them.
 * Returns 0, KB_ENOTFOUND (kernels ran, none so named) or KB_EUNSUP. */
int kb_profile__activity_start(kb_err *err);
int kb_profile__activity_stop(const char *symbol, double *durations_us, int max, int *n,
			      kb_err *err);

/* pcsample.c: what one PC sampling session saw and what each step cost
 * (wall ms), for tests and logs. */
typedef struct {
	double ms_enable, ms_config, ms_run, ms_getdata, ms_disable; /* run: Start..Stop */
	uint64_t cupti_total;     /* CUPTI's totalSamples (incl. non-user kernels) */
	uint64_t dropped, non_user;
	bool hw_buffer_full;
	int nreasons, nbase;      /* stall reasons listed / counted (see pcsample.c) */
	int pcs_at_stop, pcs_read, getdata_calls;
} kb_profile__pcs_stats;
/* kb_profile_pcsample with the session's stats in st (may be NULL). */
int kb_profile__pcsample(kb_device *d, kb_launch_fn launch, void *ctx, int repeats,
			 kb_pc_record **recs, int *n, uint64_t *total,
			 kb_profile__pcs_stats *st, kb_err *err);

/* ===== hardware counters: cupti_host.c (libcupti, the Profiler Host API:
 * names and host objects), cupti_config.c (config images, the caches on
 * disk, preparing a collection) and cupti.c (the Range Profiler on a
 * device); how they fit is at the top of cupti.c ===== */

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>

#define KB_CUPTI_FUNCS(X) \
	X(cuptiProfilerInitialize) X(cuptiProfilerDeInitialize) \
	X(cuptiProfilerDeviceSupported) X(cuptiDeviceGetChipName) \
	X(cuptiProfilerGetCounterAvailability) X(cuptiProfilerHostInitialize) \
	X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostGetSupportedChips) \
	X(cuptiProfilerHostGetBaseMetrics) X(cuptiProfilerHostGetMetricProperties) \
	X(cuptiProfilerHostConfigAddMetrics) X(cuptiProfilerHostGetConfigImageSize) \
	X(cuptiProfilerHostGetConfigImage) X(cuptiProfilerHostGetNumOfPasses) \
	X(cuptiProfilerHostEvaluateToGpuValues) X(cuptiRangeProfilerEnable) \
	X(cuptiRangeProfilerDisable) X(cuptiRangeProfilerGetCounterDataSize) \
	X(cuptiRangeProfilerCounterDataImageInitialize) X(cuptiRangeProfilerSetConfig) \
	X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop) X(cuptiRangeProfilerPushRange) \
	X(cuptiRangeProfilerPopRange) X(cuptiRangeProfilerDecodeData) \
	X(cuptiRangeProfilerGetCounterDataInfo) X(cuptiGetVersion)

typedef struct {
#define KB_CUPTI_MEMBER(f) __typeof__(&f) f;
	KB_CUPTI_FUNCS(KB_CUPTI_MEMBER)
#undef KB_CUPTI_MEMBER
} kb_profile__cupti_fns;

/* cupti_host.c: the resolved table; valid after kb_profile__cupti_load()
 * returned 0. */
extern kb_profile__cupti_fns kb_profile__cupti;
/* Loads libcupti (once per process, from any thread) and resolves the
 * table: 0, or KB_EUNSUP with why (missing, older than 13.0, under ASan). */
int kb_profile__cupti_load(kb_err *err);

#define KB_CUPTI_COUNTERS_FAIL(err, r, call, file, line) \
	kb_profile__cupti_fail((err), (int)(r), (call), "GPU performance counters", (file), (line))

/* Calls kb_profile__cupti.fn(p): 0, or the code kb_profile__cupti_fail
 * makes of a failure (err names fn and this file and line).  The jump
 * stays at the call site:
 *	if ((rc = KB_CUPTI(err, cuptiRangeProfilerStart, &s)) < 0)
 *		goto out; */
#define KB_CUPTI(err, fn, p) \
	kb_profile__cupti_check((err), kb_profile__cupti.fn(p), #fn, __FILE__, __LINE__)
/* KB_CUPTI's half (cuptilib.c): 0 for CUPTI_SUCCESS, else
 * KB_CUPTI_COUNTERS_FAIL(...). */
int kb_profile__cupti_check(kb_err *err, CUptiResult r, const char *call, const char *file,
			    int line);

/* A params struct with its structSize set and everything else zero. */
#define KB_CUPTI_PARAMS(T) {.structSize = T##_STRUCT_SIZE}

/* A host object of chip with the availability image avail (NULL: for
 * offline checks); 0, or the KB_E* of kb_profile__cupti_fail. */
int kb_profile__cupti_host_new(const char *chip, const uint8_t *avail,
			       CUpti_Profiler_Host_Object **out, kb_err *err);
/* Frees h; NULL ok. */
void kb_profile__cupti_host_free(CUpti_Profiler_Host_Object *h);
/* The host object for offline checks of chip (no availability image),
 * made once per chip, borrowed. Unknown chips: KB_EINVAL listing the known
 * ones. */
int kb_profile__cupti_offline_host(const char *chip, CUpti_Profiler_Host_Object **out,
				   kb_err *err);
/* Checks every name against host's chip. Returns 0, or KB_EINVAL with one
 * line per bad name (computed by ncu / no rollup / unknown + suggestions). */
int kb_profile__cupti_check_names(CUpti_Profiler_Host_Object *host, const char *chip,
				  const char *const *metrics, int n, kb_err *err);

/* cupti_config.c: the counter availability image of GPU `ordinal` and its
 * chip name from the disk cache (false when none), and saving them there. */
bool kb_profile__cupti_avail_load(int ordinal, char *chip, size_t chip_size, uint8_t **image,
				  size_t *size);
void kb_profile__cupti_avail_save(int ordinal, const char *chip, const uint8_t *image,
				  size_t size);

/* A config image: what a metric list asks of a chip. */
typedef struct {
	char *key;                          /* chip, availability hash, names */
	uint8_t *image;
	size_t size;
	int passes;
	unsigned id;                        /* unique per image */
	CUpti_Profiler_Host_Object *host;   /* built the image; evaluates its data
					     * (NULL until one read from disk is
					     * checked: see
					     * kb_profile__cupti_config_check_start) */
	bool from_disk;
} kb_profile__cupti_config;

/* The cache key of (chip, availability image, metric list), a new string. */
char *kb_profile__cupti_config_key(const char *chip, const uint8_t *avail, size_t avail_size,
				   const char *const *metrics, int n);
/* Frees what c holds and zeroes it. */
void kb_profile__cupti_config_clear(kb_profile__cupti_config *c);
/* Builds the config image of a checked metric list with a fresh host
 * object into c: 0, or a KB_E*. */
int kb_profile__cupti_config_build(const char *chip, const uint8_t *avail,
				   const char *const *metrics, int n, kb_profile__cupti_config *c,
				   kb_err *err);
/* Writes c's image to the disk cache under c's key; failing to is no error. */
void kb_profile__cupti_config_save(const kb_profile__cupti_config *c);
/* The cached config of (chip, availability, metrics): one built in this
 * process, else (with from_disk) one on disk, else one built after checking
 * the names with `names` (a host object of the chip). Borrowed. */
int kb_profile__cupti_config_get(CUpti_Profiler_Host_Object *names, const char *chip,
				 const uint8_t *avail, size_t avail_size,
				 const char *const *metrics, int n, bool from_disk,
				 kb_profile__cupti_config **out, kb_err *err);

/* Building an image read from disk again, beside its passes. */
typedef struct {
	pthread_t thread;
	bool started;
	const char *chip;
	const uint8_t *avail;
	const char *const *metrics;
	int n;
	kb_profile__cupti_config built;
	int rc;
	kb_err err;
	double ms;
} kb_profile__cupti_config_check;

/* Starts building cfg (read from disk) again on a thread of its own: a
 * host object of its own, nothing shared with the caller but read-only
 * inputs that outlive kb_profile__cupti_config_check_finish.  Does nothing
 * for an image not read from disk. */
void kb_profile__cupti_config_check_start(kb_profile__cupti_config_check *k,
					  const kb_profile__cupti_config *cfg, const char *chip,
					  const uint8_t *avail, const char *const *metrics, int n);
/* Waits for the build; cfg then has its own host object.  Returns 0 when
 * the image from disk was the one CUPTI builds now, 1 when it was not (cfg
 * now holds the new image, saved: collect again), or a KB_E* when the build
 * failed (the file is deleted). */
int kb_profile__cupti_config_check_finish(kb_profile__cupti_config_check *k,
					  kb_profile__cupti_config *cfg, kb_err *err);

/* cupti.c: flush L2 before every pass (the default, ncu's --cache-control
 * all) or before the first only (--cache-control none: a later pass starts
 * with what the previous one left in L2). */
void kb_profile__cupti_flush_every_pass(kb_cupti *c, bool on);
/* What the last kb_profile_cupti_collect cost, wall ms per step. */
typedef struct {
	double ms_check;          /* names + config image (cached after the first) */
	double ms_enable;         /* cuptiRangeProfilerEnable (0 when kept enabled) */
	double ms_config;         /* counter data image + SetConfig */
	double ms_run;            /* all passes: flush .. Start .. launch .. Stop */
	double ms_eval;           /* DecodeData .. EvaluateToGpuValues */
	double ms_disable;
	int passes;               /* the config image's pass count */
	int replays;              /* Start..Stop iterations run (user replay) */
	bool user_range;          /* Push/Pop range (auto range refused) */
	bool enabled;             /* this collection enabled the range profiler */
	bool config_from_disk;    /* its config image was read from the disk cache */
	bool config_stale;        /* ... and was not CUPTI's: collected again */
	double ms_config_build;   /* building an image from disk again (beside the passes) */
	double ms_config_wait;    /* waiting for that build after the passes */
} kb_profile__cupti_stats;
const kb_profile__cupti_stats *kb_profile__cupti_last(const kb_cupti *c);
/* Tests (cupti_config.c): forgets the config images built or read in this
 * process, so that the next collection reads them from disk (or builds
 * them). */
void kb_profile__cupti_drop_configs(void);
/* Tests: saves the config image of `other` on disk under the key of
 * `metrics` for c's device: a stale image that the check must catch. */
int kb_profile__cupti_plant_config(kb_cupti *c, const char *const *metrics, int n,
				   const char *const *other, int nother, kb_err *err);
/* What kb_profile_cupti_open cost, wall ms per step. */
typedef struct {
	double ms_load;           /* dlopen of libcupti and libnvperf_host */
	double ms_init;           /* cuptiProfilerInitialize .. chip name */
	double ms_avail;          /* counter availability image */
	double ms_host;           /* host object for names */
} kb_profile__cupti_open_stats;
const kb_profile__cupti_open_stats *kb_profile__cupti_opened(const kb_cupti *c);

/* nvml.c: the names of the clock-event reason bits set in mask ("gpu_idle",
 * "sw_power_cap" ...; unknown bits as one "0x.." string). A new array. */
json_t *kb_profile__nvml_reasons_json(unsigned long long mask);

/* calibrate.c: the micro-kernels' CUDA source (static storage). */
const char *kb_profile__calibrate_source(void);
/* Compiles it for arch ("sm_90") through the compile cache. Returns 0, or a
 * KB_E* with err filled; b is always initialised (free it either way). */
int kb_profile__calibrate_build(const char *arch, kb_build *b, kb_err *err);
/* The same for any of its sources (name as diagnostics show it). */
int kb_profile__calibrate_compile(const char *name, const char *text, const char *arch, kb_build *b,
				  kb_err *err);
/* The sm_90a wgmma probe (calibrate_wgmma.c's source) built for sm_90a, as
 * above. */
int kb_profile__calibrate_wgmma_build(kb_build *b, kb_err *err);
/* calibrate_wgmma.c: the sm_90a wgmma probe's source (made once). */
const char *kb_profile__calibrate_wgmma_source(void);


/* run.c and check.c: one run in progress. */
typedef struct kb_profile__run kb_profile__run;

/* A trial's built-in reference and what obtaining it and comparing with it
 * cost.  The run has its own (kb_profile__run.ref), which only the main
 * thread touches; the reference thread works on its own
 * (kb_profile__pending.ref), merged into the run's once it is joined. */
typedef struct {
	kb_ref_out *outs;          /* results per output (borrowed from the reference
				      cache) */
	int nouts;
	int claim;                 /* refstore's lock while computing it, or -1 */
	bool claim_tried;          /* for the current trial's reference */
	/* wall ms, summed over trials */
	double ms_reference, ms_compare, ms_devcheck;
} kb_profile__refwork;

/* The last trial's CPU reference and host comparison, on a thread of their
 * own beside the timing.  The thread reads the run and writes only here:
 * into the JSON of trial and outs, and ok, rc, err and ref, all of which the
 * main thread reads after the join; thread and running are the main
 * thread's. */
typedef struct {
	const kb_profile__run *run;
	json_t *trial, *outs;      /* where its verdict goes */
	kb_profile__refwork ref;
	bool ok;
	int rc;
	kb_err err;
	pthread_t thread;
	bool running;
} kb_profile__pending;

struct kb_profile__run {
	kb_device *d;
	const kb_source *src;
	const kb_spec *spec;
	const kb_kernel *k;
	const kb_build *b;
	const kb_run_opts *o;
	struct kb_cupti *cupti;    /* o->cupti, or what o->open_cupti gave */
	kb_profile__bound bd;      /* the kernel under test */
	kb_profile__bound ref_bd;  /* a reference kernel, when `ref kernel` */
	kb_profile__buf *ref_bufs; /* its own outputs (inputs shared) */
	kb_profile__refwork ref;   /* the built-in reference (main thread only) */
	char ref_key[KB_HASH_HEX]; /* what the current trial's reference depends on */
	int ref_cached;            /* trials whose reference came from a cache */
	double rtol, atol;
	bool gpu_compare;          /* compare on the GPU (not $KBENCH_COMPARE=cpu) */
	bool ref_too_big;          /* the reference did not fit on the GPU */
	bool *sticky;
	kb_profile__pending pending; /* the last trial's reference, beside the timing */
	kb_profile__guard guard;   /* the trials' sets the timed launches rotate over */
	/* Where the checking time goes, summed over trials (ms; the rest in ref). */
	double ms_gpu, ms_readback, ms_upload;
};

/* progress.c: a phase on the GPU (bd's launch) or, for host work, on the
 * host. */
void kb_profile__progress(kb_profile__run *c, const kb_profile__bound *bd, const char *phase);
void kb_profile__host_progress(kb_profile__run *c, const char *phase);
/* Records a GPU failure: sticky errors poison the context for good. Returns rc. */
int kb_profile__gpu_fail(kb_profile__run *c, int rc, kb_err *err);

/* check.c: the trials, the reference, the re-checks (rules at its top). */
int kb_profile__setup_ref_kernel(kb_profile__run *c, const kb_kernel *rk, kb_err *err);
/* Runs the correctness trials; *correct says whether all passed so far.
 * The last trial's CPU work may be left pending (c->pending). */
int kb_profile__check_trials(kb_profile__run *c, json_t *check, bool *correct, kb_err *err);
/* The inputs filled as the first trial fills them, nothing checked. */
int kb_profile__fill_inputs(kb_profile__run *c, kb_err *err);
/* Waits for a pending check and folds its verdict into *correct. */
int kb_profile__check_join(kb_profile__run *c, bool *correct, kb_err *err);
/* The guard's table of outputs to check (run.c calls it once rtol and
 * atol are known, before the trials). */
void kb_profile__check_guard_init(kb_profile__run *c);
/* After the timed loop: poison, launch, compare, several times over. */
int kb_profile__recheck(kb_profile__run *c, json_t *check, bool *correct, kb_err *err);
/* Joins what is pending and frees the references of the run. */
void kb_profile__check_free(kb_profile__run *c);

/* ===== the built-in CPU references: reference.c (the table, the entry
 * point), reference_call.c (a call bound to its spec), reference_parallel.c
 * (threads, conversion to doubles) and the references by family,
 * reference_rows.c, reference_elementwise.c, reference_matmul.c,
 * reference_attention.c ===== */

#define KB_REF_MAXPOS 4      /* positional arguments of a reference call */
#define KB_REF_MAXKW 8       /* keyword arguments of a reference call */
#define KB_REF_EW_CHUNK 4096 /* elements per elementwise work item */

/* One call of a built-in reference: the spec, its inputs, the arguments
 * split into positional and keyword ones, the output being made. */
typedef struct {
	const kb_spec *spec;
	const kb_source *src;
	const kb_spec_ref *ref;
	const kb_tensor *ins;
	int nins;
	const kb_ref_arg *pos[KB_REF_MAXPOS];
	int npos;
	const kb_ref_arg *kw[KB_REF_MAXKW];
	bool kw_used[KB_REF_MAXKW];
	int nkw;
	const char *out_name;
	kb_ref_out *out;
	int nthreads;
	kb_err *err;
} kb_profile__refcall;

/* reference_parallel.c */
/* Work items [lo, hi) of a parallel for, with the thread's scratch. */
typedef void (*kb_profile__ref_range_fn)(void *ctx, int64_t lo, int64_t hi, double *scratch);
/* Runs fn over [0, nitems) split into contiguous shares, each thread with
 * its own scratch of scratch_n doubles.  cost: element operations per item. */
void kb_profile__ref_parallel_for(int64_t nitems, double cost, int nthreads, size_t scratch_n,
				  kb_profile__ref_range_fn fn, void *ctx);
/* Elements [i, i+n) of t as doubles into dst. */
void kb_profile__ref_get_run(const kb_tensor *t, int64_t i, int64_t n, double *dst);
/* A new double copy of the whole tensor (kb_big_free it), converted in
 * parallel. */
double *kb_profile__ref_to_doubles(const kb_tensor *t, int nthreads);

/* reference_call.c */
/* Fails with "file:line:col: ref FN: message"; returns KB_EINVAL. */
int kb_profile__ref_fail(kb_profile__refcall *c, const char *fmt, ...) KB_PRINTF(2, 3);
/* "[4, 6]" into buf (n bytes); returns buf. */
const char *kb_profile__ref_shape_str(int rank, const int64_t *dims, char *buf, size_t n);
/* A number, true/false, or a spec arg's value.  Returns 0 or -1. */
int kb_profile__ref_scalar_value(const kb_profile__refcall *c, const char *text, double *v);
/* The keyword argument `key`, marked as used, or NULL. */
const kb_ref_arg *kb_profile__ref_kw_find(kb_profile__refcall *c, const char *key);
/* A scalar given at position pos (when there are that many positional
 * arguments) or as key=...; def when absent.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_param(kb_profile__refcall *c, int pos, const char *key, double def, double *v);
/* An integer dim (position pos or dim=) normalised against x's rank
 * (negative from the end).  Returns 0 or KB_EINVAL. */
int kb_profile__ref_dim_param(kb_profile__refcall *c, int pos, const kb_tensor *x, int def,
			      int *dim);
/* The input tensor at position pos or key=NAME; NULL (and 0) when optional
 * and absent.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_tensor_arg(kb_profile__refcall *c, int pos, const char *key, bool required,
			       const kb_tensor **t);
/* Checks leftover keywords and the natural shape against the spec's output,
 * then allocates the (zeroed) result.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_alloc_out(kb_profile__refcall *c, int rank, const int64_t *dims);

/* The rank and dims of the spec's tensor name: its rank, -1 when the spec
 * has no such tensor, -2 when a dim does not evaluate. */
int kb_profile__ref_spec_dims(const kb_profile__refcall *c, const char *name, int64_t *dims);

/* pyref.c: c's Python reference (c->ref->py) into c->out, one per ref
 * output, outs[0].ran saying what ran.  Returns 0, or in KB_DOM_PYTHON:
 * KB_EUNSUP (no interpreter, NumPy, torch or GPU: what to install),
 * KB_ESPEC (the reference raised, or gave a wrong count, shape or dtype),
 * KB_ETIMEOUT (no answer in time: the server is stopped), KB_EIO/KB_ERROR. */
int kb_profile__pyref_run(kb_profile__refcall *c);
/* A Python reference file's absolute path: as written when absolute, else
 * from the kernel file's folder; a new string. */
char *kb_profile__pyref_file(const kb_source *src, const char *file);
/* pyref_server.py, embedded by the Makefile. */
extern const char kb_pyref_server_py[];

/* The references (reference_rows.c, reference_elementwise.c,
 * reference_matmul.c): each computes c->ref's built-in into c->out.
 * Return 0 or KB_EINVAL. */
int kb_profile__ref_softmax(kb_profile__refcall *c);   /* softmax, log_softmax */
int kb_profile__ref_reduce(kb_profile__refcall *c);    /* sum, max */
int kb_profile__ref_norm(kb_profile__refcall *c);      /* layernorm, rmsnorm */
int kb_profile__ref_cross_entropy(kb_profile__refcall *c);
int kb_profile__ref_binary(kb_profile__refcall *c);    /* add, mul */
int kb_profile__ref_axpy(kb_profile__refcall *c);
int kb_profile__ref_unary(kb_profile__refcall *c);     /* relu, gelu, silu, copy */
int kb_profile__ref_transpose(kb_profile__refcall *c);
int kb_profile__ref_matmul(kb_profile__refcall *c);
int kb_profile__ref_attention(kb_profile__refcall *c); /* reference_attention.c */
/* The environment variable that sets how much of attention a check computes
 * (which rows it samples): part of every reference's key. */
#define KB_REF_BUDGET_ENV "KBENCH_ATTENTION_BUDGET"

#endif
