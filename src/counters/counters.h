/*
 * counters.h - hardware counters through CUPTI, loaded with dlopen
 * (cuptilib.c): the Range Profiler's metrics (cupti_host.c: the Profiler
 * Host API, names and host objects; cupti_config.c: config images and
 * their caches on disk; cupti.c: collecting on a device), kernel durations
 * from GPU timestamps (activity.c), PC-sampling hot spots (pcsample.c),
 * per-instruction SASS metrics (sassmetrics.c collects, sassm.c holds
 * them) and what the counters mean (sections.c).  Built on src/gpu/;
 * knows nothing of references.
 */
#ifndef KB_COUNTERS_H
#define KB_COUNTERS_H

#include "../gpu/gpu.h"

#include <pthread.h>

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

/* cuptilib.c: libcupti's handle (dlopen'ed once), or NULL with why. */
void *kb_profile__cupti_lib(char *why, size_t n);
/* Fills err from CUPTI's result of `call` (`needs`: what wanted CUPTI, e.g.
 * "GPU performance counters") and returns what it maps to: KB_EPERM with
 * the fix, KB_EUNSUP (not on this device, or another profiler attached),
 * KB_EINVAL (a metric or chip name), else KB_ERROR. */
int kb_profile__cupti_fail(kb_err *err, int result, const char *call, const char *needs,
			   const char *file, int line);

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

#endif
