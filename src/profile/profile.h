/*
 * profile.h - running a built kernel on the GPU and measuring it: host
 * tensors and CPU references (check.c), error statistics, timing statistics
 * (stats.c), input files (npy.c), and - in later sections - the driver,
 * launch, timing, calibration, NVML and CUPTI.
 *
 * Data flow (style rule 8): kb_build + kb_spec -> launch -> kb_result parts.
 */
#ifndef KB_PROFILE_H
#define KB_PROFILE_H

#include "../core/kb.h"
#include "../compile/compile.h"

/* ===== tensor.c ===== */

/* A dense row-major tensor in host memory, in its own dtype. */
typedef struct {
	char *name;
	kb_dtype dtype;
	int rank;
	int64_t dims[KB_MAX_RANK];
	int64_t n;          /* elements (1 for rank 0) */
	void *data;         /* n * kb_dtype_size(dtype) bytes, owned */
} kb_tensor;

/* Allocates (zeroed) a tensor of the given shape. */
void kb_tensor_init(kb_tensor *t, const char *name, kb_dtype dtype, int rank,
		    const int64_t *dims);
void kb_tensor_free(kb_tensor *t);
/* Element i converted to double (f16/bf16 decoded exactly). */
double kb_tensor_get(const kb_tensor *t, int64_t i);
/* Stores v into element i, rounded to the dtype (round-to-nearest-even). */
void kb_tensor_set(kb_tensor *t, int64_t i, double v);
/* "y[17, 4095]" for flat index i. */
void kb_tensor_coord(const kb_tensor *t, int64_t i, char *out, size_t n);
/* f16 / bf16 <-> float conversions (exact decode, RNE encode). */
float kb_half_to_float(uint16_t h);
uint16_t kb_float_to_half(float f);
float kb_bf16_to_float(uint16_t h);
uint16_t kb_float_to_bf16(float f);

/* ===== reference.c ===== */

/* A reference result: one double array per output, shaped like the output. */
typedef struct {
	char *name;
	int rank;
	int64_t dims[KB_MAX_RANK];
	int64_t n;
	double *v;
	char *ran;          /* outs[0] of a Python reference: which ran and how long it
			     * took ("python torch ref.py:fn, 812.0 ms (server started;
			     * imported torch, ref.py)"); NULL for a built-in */
	double ms;          /* with ran: the reference call's own time */
} kb_ref_out;

/* A reference element left uncomputed (the rows a sampled reference did not
 * draw, reference_attention.c): a NaN of its own bits.  Such an element is
 * checked only for being written and finite, and is not counted in
 * kb_check_stats.compared. */
#define KB_REF_UNCHECKED_BITS 0x7FF8A77E0000C0DEull
double kb_ref_unchecked(void);
bool kb_ref_is_unchecked(double r);

/* Computes the spec's built-in reference (`ref FN(args) -> outs`), or its
 * Python one (`ref numpy|torch ...`, pyref.c: errors in KB_DOM_PYTHON), in double
 * precision from the input tensors (looked up by name in ins) and scalar args
 * (from spec). Multithreaded over rows (nthreads <= 0: all cores).
 * Returns 0, or KB_EINVAL with err naming the problem. outs gets ref->nouts
 * entries, in the order of ref->outs (zeroed on failure), each shaped like
 * the spec's output tensor. */
int kb_profile_reference(const kb_spec *spec, const kb_source *src, const kb_tensor *ins,
			 int nins, kb_ref_out *outs, int nthreads, kb_err *err);
void kb_ref_out_free(kb_ref_out *o);
/* pyref.c: stops this process's warm Python reference server (it stops
 * by itself with the process too) and removes its shared-memory folder. */
void kb_profile_pyref_stop(void);
/* The Python that runs references: $KBENCH_PYTHON, else python3 on PATH;
 * *out a new string.  Returns 0, or KB_EUNSUP saying what to install. */
int kb_profile_pyref_interpreter(char **out, kb_err *err);
/* The warm server's process id, 0 when none runs. */
int kb_profile_pyref_pid(void);
/* The names of the built-in references, NULL-terminated. */
const char *const *kb_profile_reference_names(void);

/* ===== compare.c ===== */

/* Bit pattern the runner writes over outputs before every launch (0xFF
 * bytes: NaN for floats, -1 / 255 for integers). */
#define KB_POISON_BYTE 0xFF
/* How many elements around the first bad one a check reports. */
#define KB_CHECK_NEAR 9

typedef struct {
	int64_t n;
	int64_t compared;               /* elements with a reference value (n unless
					   the reference sampled rows) */
	int64_t rows, rows_compared;    /* rows (the last dim is a row) in all, and
					   those with a reference value */
	int64_t nan_count, inf_count;   /* NaN/Inf where the reference is finite */
	int64_t unwritten;              /* still bit-equal to the poison */
	int64_t mismatches;             /* |out-ref| > atol + rtol*|ref| */
	double max_abs, max_rel;        /* over finite, written elements */
	double rel_l2;                  /* ||out-ref|| / ||ref|| */
	int64_t first_bad;              /* flat index of the first bad element, -1 */
	char first_bad_coord[96];       /* "y[17, 4095]" */
	double first_bad_got, first_bad_want;
	/* The first bad element's neighbourhood: elements near_first ...
	 * (NaN got where unwritten). */
	int64_t near_first;
	int near_n;
	double near_got[KB_CHECK_NEAR], near_want[KB_CHECK_NEAR];
	bool near_unwritten[KB_CHECK_NEAR];
	bool ok;
} kb_check_stats;

/* Compares an output (as read back from the GPU) with its reference.
 * Unwritten elements, NaN/Inf and tolerance failures all make ok false. */
void kb_profile_compare(const kb_tensor *out, const kb_ref_out *ref, double rtol,
			double atol, kb_check_stats *st);
/* Same, against another tensor (a reference kernel's output). */
void kb_profile_compare_tensors(const kb_tensor *out, const kb_tensor *ref, double rtol,
				double atol, kb_check_stats *st);
/* The default (rtol, atol) of a dtype: f64 1e-7/1e-7, f32 1e-5/1e-6,
 * f16 1e-3/1e-5, bf16 1.6e-2/1e-5, integers 0/0 (exact); see compare.c. */
void kb_profile_default_tol(kb_dtype t, double *rtol, double *atol);

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

/* ===== npy.c ===== */

/* Loads a .npy file (v1/v2/v3 headers, little-endian, C order; dtypes <f8 <f4
 * <f2 <i8 <i4 <i2 |i1 |u1, and bf16 as raw) or, for other extensions, raw
 * binary of the expected size, into t (whose dtype and shape the spec set).
 * Checks that dtype and shape agree. Returns 0, or KB_EINVAL/KB_EIO/KB_ENOTFOUND
 * with err naming the file ("x.npy: shape (4, 5) but the spec says f32[4, 6]"). */
int kb_profile_load_file(const char *path, kb_tensor *t, kb_err *err);

/* NVML state (nvml.c); declared early for kb_run_opts. */
typedef struct kb_nvml kb_nvml;

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

/* ===== roofline.c ===== */

/* What a kernel's FLOPs run on: CUDA cores, or tensor cores through
 * mma.sync or wgmma (kb_profile_math_of tells from its PTX). */
typedef enum { KB_MATH_CUDA_CORES, KB_MATH_MMA, KB_MATH_WGMMA } kb_math;
kb_math kb_profile_math_of(const char *ptx);

/* Achieved bandwidth and FLOP/s of a run against the GPU's ceilings:
 * measured (ceilings JSON from calibrate, may be NULL) and datasheet (info);
 * a tensor-core kernel's FLOP/s also against the tensor-core peak (the
 * measured wgmma ceiling, else the datasheet's bf16 figure) and, for
 * mma.sync, the measured mma.sync ceiling; its ridge is the tensor peak's.
 * Flags IMPOSSIBLE a time under the physical floor (bytes / best measured
 * bandwidth, FLOPs / best measured rate).  flops < 0: unknown. A new ref. */
json_t *kb_profile_roofline(const kb_device_info *info, json_t *ceilings, double bytes,
			    double flops, double median_us, kb_math math);

/* ===== launch.c ===== */

/* Allocates and frees the host copies of the spec's tensors, so that their
 * pages are touched (~21 ms for softmax's 268 MB on 16 threads) while
 * something else waits, e.g. on a thread while the GPU opens: the run's
 * allocations of the same sizes then reuse the blocks (kb_big_alloc keeps
 * the last 6 freed).  Host memory only; no GPU. */
void kb_profile_host_warm(const kb_source *src, const kb_spec *spec);

/* ===== run.c ===== */

/* Called before each step that waits on the GPU, so a watchdog outside the
 * process knows what was running if it never returns. */
typedef void (*kb_progress_fn)(void *ctx, const char *phase, const char *kernel,
				const int64_t grid[3], const int64_t block[3]);

typedef struct {
	int trials;               /* correctness trials, fresh seeds each (default 3) */
	uint64_t seed;            /* base seed; trial t uses seed + t */
	bool time_it;             /* time after a correct check */
	double max_time_ms;       /* budget of the timed loop (default 1000) */
	int min_reps, max_reps;
	kb_progress_fn progress;
	void *progress_ctx;
	kb_nvml *nvml;            /* when set, clocks and power are sampled while timing */
	int timing_mode;          /* KB_TIMING_AUTO / _EVENTS / _GRAPH */
	struct kb_cupti *cupti;   /* with metrics: hardware counters after the checks */
	/* Or, when cupti is NULL: called once, just before the counters and hot
	 * spots, for a CUPTI handle opened as late as possible (so that its
	 * host-side preparation, ~250 ms on a fresh runner, runs on a thread
	 * through the checks and timing).  NULL back: neither runs. */
	struct kb_cupti *(*open_cupti)(void *ctx);
	void *open_cupti_ctx;
	const char *const *metrics;
	int nmetrics;
	bool hot;                 /* PC-sampling hot spots (needs cupti's library) */
	bool sass_metrics;        /* per-instruction counts (CUPTI SASS metrics): one
				   * instrumented launch after everything else */
	bool sass_metrics_only;   /* only that: the inputs filled, one instrumented launch,
				   * nothing checked or timed (the runner's fresh process) */
	json_t *sass_hot;         /* with it: the hot spots of the run it serves, annotated */
	bool passes_keep_l2;      /* counter passes after the first start without an L2
				   * flush (ncu --cache-control none) */
} kb_run_opts;

enum { KB_TIMING_AUTO, KB_TIMING_EVENTS, KB_TIMING_GRAPH, KB_TIMING_DIFF };

/* Runs the built kernel per its spec on dev: allocate, init, poison, launch,
 * check (trials), time, re-check; results as JSON (the "check", "timing",
 * "launch" parts of a Result).  Returns 0 (whatever the verdict), or a KB_E*
 * with err filled when the GPU failed (sticky: *sticky set, the context is
 * gone and the process must exit after reporting). */
int kb_profile_run(kb_device *dev, const kb_source *src, const kb_spec *spec,
		   const kb_kernels *all, const kb_kernel *kernel, const kb_build *build,
		   const kb_run_opts *opts, json_t **result, bool *sticky, kb_err *err);

/* ===== nvml.c ===== */

/* NVML, loaded with dlopen("libnvidia-ml.so.1"): what the GPU was doing. */
/* Opens the GPU at PCI bus id pci_bus (as cuDeviceGetPCIBusId gives it).
 * Returns 0, or KB_EUNSUP (no NVML) / KB_ENOTFOUND with err filled. */
int kb_profile_nvml_open(const char *pci_bus, kb_nvml **out, kb_err *err);
/* Loads NVML and initialises it on a thread, so that a later
 * kb_profile_nvml_open finds the costly part done (~10 ms, run beside the
 * GPU's opening).  The preload's own NVML reference lasts as long as the
 * process.  Join with kb_profile_nvml_preload_join before the open. */
typedef struct kb_nvml_preload kb_nvml_preload;
kb_nvml_preload *kb_profile_nvml_preload(void);
void kb_profile_nvml_preload_join(kb_nvml_preload *p);
void kb_profile_nvml_close(kb_nvml *n);
/* The environment fingerprint NVML knows: driver version, ECC mode, current
 * and max SM/memory clocks, clock-event (throttle) reasons decoded, power
 * limit, persistence mode, whether clocks are locked. Fields NVML refuses
 * are absent (never 0). A new reference. */
json_t *kb_profile_nvml_env(kb_nvml *n);
/* Starts a thread sampling SM/memory clock and power every ~10 ms, and
 * reads the energy counter. Returns 0 or a KB_E*. */
int kb_profile_nvml_sample_start(kb_nvml *n);
/* Stops it; JSON with min/median/max SM and memory clock, mean power,
 * energy over the interval and per launch (only when the interval was long
 * enough for the ~100 ms energy counter to move; else absent with a reason),
 * and throttle reasons seen. A new reference; NULL when no sampler runs. */
json_t *kb_profile_nvml_sample_stop(kb_nvml *n, int launches);

/* ===== cupti.c: hardware counters (Range Profiler + Host API) ===== */

/* One launch of the kernel under test, made by the caller (the profiler
 * replays it as many times as its passes need). Returns 0 or a KB_E*. */
typedef int (*kb_launch_fn)(void *ctx, kb_err *err);

typedef struct kb_cupti kb_cupti;

/* Opens CUPTI's profiler for the device: dlopen("libcupti.so.13"),
 * cuptiProfilerInitialize, the chip name, the counter availability image
 * (from the disk cache when this driver and GPU already gave it).
 * Returns 0; KB_EUNSUP when CUPTI is missing or refuses (err says why);
 * KB_EPERM when counters are not permitted (ERR_NVGPUCTRPERM: err holds the
 * explanation and the exact fix). */
int kb_profile_cupti_open(kb_device *d, kb_cupti **out, kb_err *err);
void kb_profile_cupti_close(kb_cupti *c);
/* Validates metric names (full names as Nsight Compute takes them, e.g.
 * dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed)
 * and counts the replay passes they need. Unknown names: KB_EINVAL with a
 * message naming each and listing close matches. */
int kb_profile_cupti_check(kb_cupti *c, const char *const *metrics, int n, int *passes,
			   kb_err *err);
/* The same without a GPU, by chip name ("GH100"): the Host API works
 * offline. For tests and for checking a metric list before a run. */
int kb_profile_cupti_host_check(const char *chip, const char *const *metrics, int n,
				int *passes, kb_err *err);
/* Collects the metrics for one launch with auto range + user replay: each
 * pass starts after kbench's L2 flush (outside the range) and re-runs the
 * kernel on the same inputs (no memory restore, whose dirty lines would be
 * counted as the kernel's DRAM writes). values[i] gets metrics[i] (NAN when
 * CUPTI gave no value). Returns 0, KB_EPERM, or a KB_E*. */
int kb_profile_cupti_collect(kb_cupti *c, const char *const *metrics, int n, kb_launch_fn launch,
			     void *ctx, double *values, kb_err *err);

/* Keeps the range profiler enabled after each collection (default off: it
 * is enabled and disabled around each one, so that the Activity API, PC
 * sampling, ncu and other processes can profile between them).  Kept
 * enabled, a repeated 1-pass collection costs ~15 ms instead of ~160 ms
 * (H200); it is re-enabled when the metric list changes.  The runner keeps
 * it through one request so that the ~13 ms Disable comes after the answer
 * (kb_profile_cupti_release). */
void kb_profile_cupti_keep_enabled(kb_cupti *c, bool on);
/* Disables the range profiler when a collection left it enabled; NULL ok. */
void kb_profile_cupti_release(kb_cupti *c);

/* The host-side work of a collection done on a thread while the caller
 * opens the GPU: load libcupti, and, when this GPU's counter availability
 * is cached on disk, check the names and build the config image (~100 ms
 * of the Host API's ConfigAddMetrics for the full sections) into the
 * in-process cache that kb_profile_cupti_check then hits.  Purely a cache
 * warmer: errors are found again (and reported) by the calls that follow.
 * Until kb_profile_cupti_prep_join returns, call nothing else of cupti.c.
 * metrics are copied; n may be 0 (just the load). */
typedef struct kb_cupti_prep kb_cupti_prep;
kb_cupti_prep *kb_profile_cupti_prep_start(const char *const *metrics, int n);
/* Waits for the thread and frees p (NULL ok); wall ms it ran, for logs. */
double kb_profile_cupti_prep_join(kb_cupti_prep *p);

/* ===== pcsample.c: hot spots (CUPTI PC sampling) ===== */

typedef struct {
	char *name;             /* stall reason without the smsp__pcsamp_warps_issue_stalled_ prefix */
	uint64_t samples;
} kb_stall;

typedef struct {
	char *function;         /* mangled name */
	uint64_t pc_offset;     /* function-relative byte offset, as nvdisasm prints it */
	uint64_t samples;       /* all samples at this PC */
	kb_stall *stalls;       /* per reason, most first (issued ones included as "selected") */
	int nstalls;
} kb_pc_record;

/* Samples PCs while launch(ctx) runs `repeats` times (the launch must use a
 * module loaded after sampling was enabled: CUPTI does not sample kernels
 * already launched before - see gpu-apis.md). Records sorted by samples,
 * most first; *total = all samples. Returns 0, KB_EPERM, or a KB_E*. */
int kb_profile_pcsample(kb_device *d, kb_launch_fn launch, void *ctx, int repeats,
			kb_pc_record **recs, int *n, uint64_t *total, kb_err *err);
void kb_profile_pc_records_free(kb_pc_record *recs, int n);

/* ===== sassmetrics.c and sassm.c: per-instruction counts (CUPTI SASS metrics) ===== */

/* What a SASS metric counts for kbench, per instruction per launch. */
enum {
	KB_SASSM_EXEC,          /* warp-level executions (smsp__sass_inst_executed) */
	KB_SASSM_WAVEFRONTS,    /* shared-memory wavefronts the instruction took */
	KB_SASSM_IDEAL,         /* ... had no two threads hit one bank (the ideal) */
	KB_SASSM_CONFLICTS,     /* a bank-conflict count of CUPTI's own, when it has one */
	KB_SASSM_NROLES
};

/* One instruction's counts; v[role] is valid when bit (1 << role) is set
 * in valid (style rule 12: a metric CUPTI lacks is n/a, never 0). */
typedef struct {
	char *function;         /* mangled name */
	uint64_t pc_offset;     /* function-relative, as nvdisasm prints it */
	uint64_t v[KB_SASSM_NROLES];
	unsigned valid;
} kb_sassm_record;

/* A collection: the records (sorted by function, then pc), the metric name
 * used for each role ("" when none of its candidates is supported, why[]
 * then says so) and what it cost. */
typedef struct {
	kb_sassm_record *recs;
	int n, cap;
	char name[KB_SASSM_NROLES][96];
	char why[KB_SASSM_NROLES][160];
	int launches;
	double ms;
} kb_sassm;

/* The SASS metric names tried for a role, in order, NULL-terminated. */
const char *const *kb_profile_sassm_candidates(int role);
/* Collects the SASS metrics of one launch(ctx) (launched once, patched by
 * CUPTI: its duration means nothing) on d into out.  The executions metric
 * is required; a role none of whose names this chip has is left invalid
 * with why[role] set.  Nothing else may profile meanwhile (range
 * profiler, PC sampling, Activity API).  Returns 0; KB_EUNSUP (no CUPTI, no
 * executions metric, not supported on this device), KB_EPERM with the fix,
 * or a KB_E* (a CUDA error from the launch: check kb_profile_sticky). */
int kb_profile_sassm_collect(kb_device *d, kb_launch_fn launch, void *ctx, kb_sassm *out,
			     kb_err *err);
/* The SASS metrics CUPTI lists for GPU d's chip, as "name: description"
 * lines into out (for checking names on a new GPU).  Returns 0 or a KB_E*. */
int kb_profile_sassm_list(kb_device *d, kb_buf *out, kb_err *err);
/* Adds value to role of the record (function, pc), creating it (records
 * stay sorted).  The raw CUPTI flush goes through this, once per instance. */
void kb_profile_sassm_add(kb_sassm *s, const char *function, uint64_t pc, int role, uint64_t value);
/* The record of (function, pc), or NULL. */
const kb_sassm_record *kb_profile_sassm_find(const kb_sassm *s, const char *function, uint64_t pc);
/* Bank conflicts of a record: wavefronts beyond the ideal when both are
 * valid, else CUPTI's own count; false (n/a) when neither is known. */
bool kb_profile_sassm_conflicts(const kb_sassm_record *r, uint64_t *out);
void kb_profile_sassm_free(kb_sassm *s);
/* The "sass_metrics" part of a Result: metric names, totals, and every
 * instruction that touched shared memory (most conflicts first, at most
 * max). A new reference. */
json_t *kb_profile_sassm_json(const kb_sassm *s, int max);
/* Adds executions, shared wavefronts and bank conflicts to each entry of a
 * "hot" array ({function, pc, ...}) that s has a record of. */
void kb_profile_sassm_annotate(const kb_sassm *s, json_t *hot);

/* ===== sections.c: what the counters mean ===== */

/* A named table built from counters (Nsight Compute's metric names). */
typedef struct {
	const char *name;          /* "sol", "memory", "compute", "occupancy", "stalls", "roofline", "quick" */
	const char *title;
	const char *const *metrics;
	int nmetrics;
} kb_section;

/* The section called name, or NULL. "quick" is the single-pass tier. */
const kb_section *kb_profile_section(const char *name);
/* Every section (the full set, without "quick"), NULL-terminated. */
const kb_section *const *kb_profile_sections(void);
/* The union of the sections' metrics, without duplicates (borrowed names,
 * a new array). */
const char **kb_profile_section_metrics(const kb_section *const *secs, int nsecs, int *n);
/* Derived figures from collected counters (values by metric name in
 * `counters`): the bottleneck, sectors per request, FLOP counts by precision
 * (FMA = 2), achieved occupancy, top stall reasons with their share, the
 * roofline point from measured DRAM bytes and FLOPs against ceilings (may be
 * NULL) and the device's datasheet. A new object keyed by section name. */
json_t *kb_profile_sections_derive(json_t *counters, const kb_device_info *info, json_t *ceilings,
				   json_t *occupancy);

/* ===== calibrate.c ===== */

/* Measures this GPU's ceilings with kbench's own micro-kernels: copy
 * bandwidth (read+write bytes), read-only bandwidth, FP32 FMA rate, bf16
 * tensor-core rate, plus a device-to-device cuMemcpy for comparison.
 * JSON with each figure, its method, and the datasheet figure beside it. */
int kb_profile_calibrate(kb_device *d, json_t **out, kb_err *err);
/* Cached ceilings of the GPU with this UUID (under the XDG cache dir), or
 * KB_ENOTFOUND; KB_EINVAL for a UUID that is not a plain file name or a
 * corrupt file. */
int kb_profile_ceilings_load(const char *uuid, json_t **out);
int kb_profile_ceilings_save(const char *uuid, json_t *ceilings, kb_err *err);

#endif
