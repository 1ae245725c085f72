/*
 * cupti.c - hardware counters through CUPTI's Range Profiler (target side)
 * and Profiler Host API (names, config images, pass counts, evaluation), as
 * in gpu-apis.md section 1.2: auto range + user replay (kbench replays each
 * pass itself), one launch per collection.
 *
 * Why user replay: kernel replay restores device memory before each pass,
 * which leaves L2 full of dirty lines whose write-back lands in the pass's
 * counters (H200, against ncu --cache-control none on a launch after
 * kbench's L2 flush: dram__bytes_write.sum +19% for softmax, +8.8% for a
 * 256 MB copy; gpu__time_duration +2.3%).  Here each pass is
 *   L2 flush (kb_profile__flush_l2, synchronised, outside Start..Stop) ..
 *   Start .. [PushRange("kbench")] .. launch .. [PopRange] .. Stop
 * repeated until Stop says isAllPassSubmitted, so every pass starts after
 * kbench's L2 flush, like a timed launch.  Nothing is restored between
 * passes: the launch re-runs on the same inputs.  That is right for kbench's
 * kernels, whose specs have separate input and output tensors and which
 * overwrite their outputs completely; an in-place kernel would see its own
 * output in passes 2.. (its counters could then differ per pass), which we
 * accept.
 *
 * Measured (H200, CUDA 13.0, bench/profile_vs_ncu.sh): dram__bytes_write.sum
 * now within 1.6% of ncu (softmax) and 0.4% (copy), gpu__time_duration
 * within 2.2% / 0.7%.
 *
 * Range mode: auto range (each kernel its own range, bracketed by CUPTI
 * around the kernel) with user replay; SetConfig accepted it on an H200.
 * User range (Push/Pop) is kept as the fallback should SetConfig refuse
 * that combination (not seen; that path is untested).  A user range is
 * bracketed by the host calls, so its gpu__time_duration and everything
 * "elapsed" include the host's launch latency: on an H200 +34% (softmax,
 * 216 vs 161 us) and +46% (copy) against ncu, and pct_of_peak_sustained_
 * elapsed throughputs 25-31% low, while DRAM bytes agreed within 1.3%.  In
 * user range mode a launch of two kernels is summed and one of none gives
 * zero counters (neither can be told from the range count); in auto range
 * mode both are refused as before.  (User range + kernel replay is refused
 * by CUPTI.)
 *
 * libcupti.so.13 is loaded with dlopen (style rule 11) and never linked; its
 * headers give the types only.  cupti_profiler_host.h includes the C++
 * header <string> (and uses nothing from it): the build puts src/shim,
 * which holds an empty `string`, on the include path.  libcupti dlopens
 * libnvperf_host.so by name; we load it first from libcupti's own directory
 * so that it is found wherever libcupti was.
 *
 * Owns: the function table, the kb_cupti state (profiler initialised, chip
 * name, counter availability image, a host object for names, a reusable
 * counter data image), two process-wide caches: base metric names per chip
 * (for suggestions) and config images per (chip, availability image,
 * metric list), and two caches on disk: availability and config images.
 * Does not own the device, its context or what is launched.
 *
 * Invariants:
 *  - A host object accumulates every ConfigAddMetrics call, so each config
 *    image is built by a fresh host object; that object stays with the
 *    cached image and evaluates the counter data collected with it.  An
 *    image read from disk is built again beside its passes, and its data
 *    evaluated by that build's host object (config_check_start).
 *  - The range profiler is enabled only inside a collection (unless
 *    keep_enabled): timing (Activity API) and PC sampling run between
 *    collections, and CUPTI runs one profiling mode at a time.  The runner
 *    keeps it enabled through one request only, so that Disable (~13 ms)
 *    comes after the answer (kb_profile_cupti_release); left enabled
 *    longer, ncu and other processes get no counters.  Kept
 *    enabled, it is re-enabled whenever the metric list changes: SetConfig
 *    with another config image on an object that already ran gave only the
 *    first pass's metrics (the rest NaN, no error) on an H200.
 *  - Costs on an H200 (CUDA 13.0), the same with kernel and user replay:
 *    the first Start..Stop after Enable is ~145-165 ms for a 1-pass list
 *    (Enable itself ~0, Disable 10-12 ms); kept enabled, later ones are
 *    ~13 ms; 9 passes: 335 ms vs 194 ms (each pass includes the flush).
 *  - Native CUPTI codes stop here: 35/40 become KB_EPERM with the fix,
 *    39 and unsupported configurations KB_EUNSUP, bad names KB_EINVAL.
 *  - The caches are not locked: the prep thread fills them before it is
 *    joined, and a config check's thread builds into its own config, joined
 *    before anything reads it; everything else runs on the caller's thread.
 */
#define _GNU_SOURCE /* dlinfo */
#include "profile_int.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND, which the
 * AddressSanitizer runtime refuses by aborting the process. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#define CONFIG_CACHE_MAX 32
#define CHIPS_MAX 8
#define SUGGEST_MAX 5
#define NAME_MAX_LEN 160
#define REPLAY_MAX 64     /* Start..Stop iterations before giving up */
#define RANGE_NAME "kbench"

/* ===== loading ===================================================================== */

#define CUPTI_FUNCS(X) \
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

static struct {
#define CUPTI_MEMBER(f) __typeof__(&f) f;
	CUPTI_FUNCS(CUPTI_MEMBER)
#undef CUPTI_MEMBER
} api;

static void *cupti_lib, *nvperf_lib;
static pthread_once_t load_once = PTHREAD_ONCE_INIT; /* prep's thread loads too */
static int load_rc = 1; /* 1: not tried yet */
static bool auto_refused; /* SetConfig refused auto range + user replay */
static char load_msg[512];


/* libcupti has no RUNPATH and dlopens "libnvperf_host.so" by name; an object
 * already loaded under that soname satisfies it, wherever it came from. */
static void preload_nvperf(void)
{
	char dir[PATH_MAX];
	if (dlinfo(cupti_lib, RTLD_DI_ORIGIN, dir) != 0)
		return;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/libnvperf_host.so", dir);
	nvperf_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!nvperf_lib)
		dlerror(); /* libcupti will search for it itself */
}

static void load_once_now(void)
{
#ifdef UNDER_ASAN
	load_rc = KB_EUNSUP;
	snprintf(load_msg, sizeof load_msg, "CUPTI's profiler cannot run under AddressSanitizer "
		 "(libcupti loads libnvperf_host.so with RTLD_DEEPBIND)");
#endif
	if (load_rc == 1) {
		cupti_lib = kb_profile__cupti_lib(load_msg, sizeof load_msg);
		load_rc = cupti_lib ? KB_OK : KB_EUNSUP;
#define CUPTI_RESOLVE(f) \
		if (load_rc == KB_OK && !(*(void **)&api.f = dlsym(cupti_lib, #f))) { \
			snprintf(load_msg, sizeof load_msg, \
				 "libcupti.so.13 lacks %s (CUPTI older than 13.0?)", #f); \
			load_rc = KB_EUNSUP; \
		}
		CUPTI_FUNCS(CUPTI_RESOLVE)
#undef CUPTI_RESOLVE
		if (load_rc == KB_OK)
			preload_nvperf();
	}
}

static int load(kb_err *err)
{
	pthread_once(&load_once, load_once_now);
	if (load_rc < 0)
		return kb_err_set(err, load_rc, KB_DOM_CUPTI, 0, "%s", load_msg);
	return KB_OK;
}

/* ===== errors ====================================================================== */

#define counters_fail(err, r, call, file, line) \
	kb_profile__cupti_fail((err), (int)(r), (call), "GPU performance counters", (file), (line))


/* Calls api.fn(p); on failure sets rc from cupti_fail and jumps to out. */
#define KB_CUPTI(err, fn, p) \
	do { \
		CUptiResult r_ = api.fn(p); \
		if (r_ != CUPTI_SUCCESS) { \
			rc = counters_fail((err), r_, #fn, __FILE__, __LINE__); \
			goto out; \
		} \
	} while (0)

/* A params struct with its structSize set and everything else zero. */
#define PARAMS(T) {.structSize = T##_STRUCT_SIZE}

/* ===== host objects ================================================================ */

static int host_new(const char *chip, const uint8_t *avail, CUpti_Profiler_Host_Object **out,
		    kb_err *err)
{
	int rc = KB_OK;
	CUpti_Profiler_Host_Initialize_Params p = PARAMS(CUpti_Profiler_Host_Initialize_Params);
	p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = avail;
	*out = NULL;
	KB_CUPTI(err, cuptiProfilerHostInitialize, &p);
	*out = p.pHostObject;
out:
	return rc;
}

static void host_free(CUpti_Profiler_Host_Object *h)
{
	if (!h)
		return;
	CUpti_Profiler_Host_Deinitialize_Params p = PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
	p.pHostObject = h;
	api.cuptiProfilerHostDeinitialize(&p);
}

/* The host object for offline checks of `chip` (no availability image),
 * made once per chip. Unknown chips: KB_EINVAL listing the known ones. */
static int offline_host(const char *chip, CUpti_Profiler_Host_Object **out, kb_err *err)
{
	static struct {
		char chip[64];
		CUpti_Profiler_Host_Object *host;
	} hosts[CHIPS_MAX];
	static int nhosts;
	for (int i = 0; i < nhosts; i++)
		if (!strcmp(hosts[i].chip, chip))
			return *out = hosts[i].host, KB_OK;
	int rc = host_new(chip, NULL, out, err);
	if (rc == KB_EINVAL) {
		CUpti_Profiler_Host_GetSupportedChips_Params p =
			PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
		kb_buf b = KB_BUF_INIT;
		if (api.cuptiProfilerHostGetSupportedChips(&p) == CUPTI_SUCCESS)
			for (size_t i = 0; i < p.numChips; i++)
				kb_buf_catf(&b, "%s%s", i ? " " : "", p.ppChipNames[i]);
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_CUPTI, CUPTI_ERROR_INVALID_CHIP_NAME,
				"unknown chip '%s' (CUPTI knows: %s)", chip, b.s ? b.s : "?");
		kb_buf_free(&b);
	}
	if (rc == KB_OK && nhosts < CHIPS_MAX && strlen(chip) < sizeof hosts[0].chip) {
		snprintf(hosts[nhosts].chip, sizeof hosts[0].chip, "%s", chip);
		hosts[nhosts++].host = *out;
	}
	return rc;
}

/* ===== base metric names (suggestions) ============================================= */

typedef struct {
	char *name;               /* a base name without '.', copied */
	CUpti_MetricType type;
} base_metric;

typedef struct {
	char chip[64];
	base_metric *v;
	int n, cap;
} base_list;

static base_list bases[CHIPS_MAX];
static int nbases;

/* The base metrics of chip (COUNTER, RATIO, THROUGHPUT), enumerated once.
 * Names with a '.' (the Triage* groups) are left out. */
static const base_list *base_metrics(CUpti_Profiler_Host_Object *host, const char *chip)
{
	for (int i = 0; i < nbases; i++)
		if (!strcmp(bases[i].chip, chip))
			return &bases[i];
	static base_list scratch;
	base_list *l = nbases < CHIPS_MAX ? &bases[nbases++] : &scratch;
	for (int i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof *l);
	snprintf(l->chip, sizeof l->chip, "%s", chip);
	for (int t = CUPTI_METRIC_TYPE_COUNTER; t < CUPTI_METRIC_TYPE__COUNT; t++) {
		CUpti_Profiler_Host_GetBaseMetrics_Params p =
			PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
		p.pHostObject = host;
		p.metricType = (CUpti_MetricType)t;
		if (api.cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS)
			continue;
		for (size_t i = 0; i < p.numMetrics; i++) {
			const char *nm = p.ppMetricNames[i];
			if (!nm || strchr(nm, '.') || strlen(nm) >= NAME_MAX_LEN)
				continue;
			base_metric *m = KB_PUSH(l->v, l->n, l->cap);
			m->name = kb_xstrdup(nm);
			m->type = (CUpti_MetricType)t;
		}
	}
	return l;
}

/* Levenshtein distance of a and b (both shorter than NAME_MAX_LEN). */
static int edit_distance(const char *a, size_t na, const char *b)
{
	int row[NAME_MAX_LEN + 1];
	size_t nb = strlen(b);
	for (size_t j = 0; j <= nb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

/* GetMetricProperties of name: CUPTI_SUCCESS and its type, or the error. */
static CUptiResult properties(CUpti_Profiler_Host_Object *host, const char *name,
			      CUpti_MetricType *type)
{
	CUpti_Profiler_Host_GetMetricProperties_Params p =
		PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
	p.pHostObject = host;
	p.pMetricName = name;
	CUptiResult r = api.cuptiProfilerHostGetMetricProperties(&p);
	if (type)
		*type = p.metricType;
	return r;
}

static bool name_ok(CUpti_Profiler_Host_Object *host, const char *name)
{
	return properties(host, name, NULL) == CUPTI_SUCCESS;
}

/* Appends a full, valid name for base metric `base` of type t: with the
 * user's suffix when that is valid for it, else the type's usual rollup. */
static void cat_example(kb_buf *b, CUpti_Profiler_Host_Object *host, const char *base,
			CUpti_MetricType t, const char *suffix)
{
	static const char *const rollup[CUPTI_METRIC_TYPE__COUNT] = {
		[CUPTI_METRIC_TYPE_COUNTER] = ".sum",
		[CUPTI_METRIC_TYPE_RATIO] = ".ratio",
		[CUPTI_METRIC_TYPE_THROUGHPUT] = ".avg.pct_of_peak_sustained_elapsed",
	};
	char full[2 * NAME_MAX_LEN];
	if (*suffix) {
		snprintf(full, sizeof full, "%s%s", base, suffix);
		if (name_ok(host, full))
			return kb_buf_cat(b, full);
	}
	snprintf(full, sizeof full, "%s%s", base, rollup[t]);
	kb_buf_cat(b, name_ok(host, full) ? full : base);
}

/* Appends "; did you mean: a.sum, b.sum" for the unknown name, ranking the
 * chip's base metrics by edit distance to its base part (before the '.'). */
static void cat_suggestions(kb_buf *b, CUpti_Profiler_Host_Object *host, const base_list *l,
			    const char *name)
{
	const char *dot = strchr(name, '.');
	size_t nlen = dot ? (size_t)(dot - name) : strlen(name);
	const char *suffix = dot ? dot : "";
	if (nlen >= NAME_MAX_LEN || !l->n) {
		kb_buf_cat(b, "; no close match");
		return;
	}
	int best[SUGGEST_MAX], dist[SUGGEST_MAX], nbest = 0;
	int limit = nlen / 3 > 3 ? (int)nlen / 3 : 3;
	for (int i = 0; i < l->n; i++) {
		int d = edit_distance(name, nlen, l->v[i].name);
		if (d > limit)
			continue;
		int k = nbest < SUGGEST_MAX ? nbest++ : SUGGEST_MAX;
		if (k == SUGGEST_MAX && d >= dist[SUGGEST_MAX - 1])
			continue;
		if (k == SUGGEST_MAX)
			k = SUGGEST_MAX - 1;
		for (; k > 0 && dist[k - 1] > d; k--) {
			best[k] = best[k - 1];
			dist[k] = dist[k - 1];
		}
		best[k] = i;
		dist[k] = d;
	}
	if (!nbest) {
		kb_buf_catf(b, "; no close match among the %d base metrics of %s", l->n, l->chip);
		return;
	}
	kb_buf_cat(b, "; did you mean: ");
	for (int i = 0; i < nbest; i++) {
		if (i)
			kb_buf_cat(b, ", ");
		cat_example(b, host, l->v[best[i]].name, l->v[best[i]].type, suffix);
	}
}

/* ===== checking names ============================================================== */

/* Names Nsight Compute computes itself, and where kbench reports the same. */
static const struct {
	const char *prefix;
	const char *kbench;
} ncu_only[] = {
	{"sm__maximum_warps_per_active_cycle_pct",
	 "compile.kernel.occupancy.occupancy_pct (theoretical occupancy from the cubin's "
	 "resources)"},
	{"launch__registers_per_thread", "compile.kernel.resources.registers"},
	{"launch__occupancy_limit_", "compile.kernel.occupancy.blocks_allowed_by"},
	{"launch__occupancy_per_", "compile.kernel.occupancy"},
	{"launch__shared_mem_", "compile.kernel.resources.shared_static_bytes and "
	 "compile.kernel.occupancy.shared_per_block_bytes"},
	{"launch__", "the kernel's compile.kernel.resources / .occupancy and the run's launch "
	 "section"},
	{"device__attribute_", "the device info (`kbench devices`, \"device\" in each Result)"},
};

static const char *ncu_computed(const char *name)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(ncu_only); i++)
		if (!strncmp(name, ncu_only[i].prefix, strlen(ncu_only[i].prefix)))
			return ncu_only[i].kbench;
	return NULL;
}

/* Checks every name against host's chip. Returns 0, or KB_EINVAL with one
 * line per bad name (computed by ncu / no rollup / unknown + suggestions). */
static int check_names(CUpti_Profiler_Host_Object *host, const char *chip,
		       const char *const *metrics, int n, kb_err *err)
{
	if (n <= 0 || !metrics)
		return kb_err_set(err, KB_EINVAL, KB_DOM_CUPTI, 0, "no metrics asked for");
	kb_buf b = KB_BUF_INIT;
	int bad = 0, rc = KB_OK;
	for (int i = 0; i < n; i++) {
		const char *m = metrics[i], *as;
		const char *sep = bad ? "\n" : "";
		CUpti_MetricType type = CUPTI_METRIC_TYPE_COUNTER;
		CUptiResult r;
		if (!m || !*m) {
			kb_buf_catf(&b, "%smetric %d is empty", sep, i + 1);
		} else if ((as = ncu_computed(m))) {
			kb_buf_catf(&b, "%s%s is computed by Nsight Compute, not a hardware metric; "
				    "kbench reports it as %s", sep, m, as);
		} else if ((r = properties(host, m, &type)) == CUPTI_SUCCESS) {
			if (strchr(m, '.'))
				continue;
			/* A base name: GetMetricProperties takes it, ConfigAddMetrics not. */
			kb_buf_catf(&b, "%s%s needs a rollup, e.g. ", sep, m);
			cat_example(&b, host, m, type, "");
		} else if (r == CUPTI_ERROR_INVALID_METRIC_NAME) {
			kb_buf_catf(&b, "%sunknown metric %s for %s", sep, m, chip);
			cat_suggestions(&b, host, base_metrics(host, chip), m);
		} else {
			rc = counters_fail(err, r, "cuptiProfilerHostGetMetricProperties", __FILE__, __LINE__);
			goto out;
		}
		bad++;
	}
	if (bad)
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_CUPTI, CUPTI_ERROR_INVALID_METRIC_NAME, "%s",
				b.s);
out:
	kb_buf_free(&b);
	return rc;
}

/* ===== caches on disk: counter availability, config images ====================== */

/* A file under kb_cache_dir("cupti") for what depends on this driver and
 * these GPUs (kb_compile_driver_key) and CUPTI; NULL when
 * KBENCH_NO_CUPTI_CACHE=1 (for measuring what the caches save). */
static char *cache_path(const char *name)
{
	if (getenv("KBENCH_NO_CUPTI_CACHE") && *getenv("KBENCH_NO_CUPTI_CACHE"))
		return NULL;
	char *key = kb_compile_driver_key();
	if (!key)
		return NULL;
	char *dir = kb_cache_dir("cupti");
	char *path = kb_xasprintf("%s/%.32s-%d-%s", dir, key, (int)CUPTI_API_VERSION, name);
	free(dir);
	free(key);
	return path;
}

/* A cache file is "<magic> <word> <size>\n" and then size bytes.  Returns
 * whether path holds one with this magic (word and a new *data filled). */
static bool blob_read(const char *path, const char *magic, char *word, size_t word_size,
		      uint8_t **data, size_t *size)
{
	kb_buf b = KB_BUF_INIT;
	bool ok = false;
	char fmt[96], w[64];
	size_t n = 0;
	snprintf(fmt, sizeof fmt, "%s %%63s %%zu", magic);
	if (path && kb_file_read(path, &b, NULL) == 0) {
		const char *nl = memchr(b.s, '\n', b.len);
		if (nl && sscanf(b.s, fmt, w, &n) == 2 && n > 0 &&
		    (size_t)(b.s + b.len - (nl + 1)) == n && strlen(w) < word_size) {
			snprintf(word, word_size, "%s", w);
			*data = kb_xmalloc(n);
			memcpy(*data, nl + 1, n);
			*size = n;
			ok = true;
		}
	}
	kb_buf_free(&b);
	return ok;
}

/* Writes a cache file; failing to is no error (it is a cache). */
static void blob_write(const char *path, const char *magic, const char *word,
		       const uint8_t *data, size_t size)
{
	char *dir = kb_cache_dir("cupti");
	if (path && kb_mkdirs(dir, NULL) == 0) {
		kb_buf b = KB_BUF_INIT;
		kb_buf_catf(&b, "%s %s %zu\n", magic, word, size);
		kb_buf_catn(&b, data, size);
		kb_file_write(path, b.s, b.len, NULL);
		kb_buf_free(&b);
	}
	free(dir);
}

/* cuptiProfilerGetCounterAvailability costs ~125 ms in every new process
 * (H200, driver 580; 537 ms on a machine's first), and its image depends
 * only on the GPU, the driver and CUPTI.  So it is kept, with the chip name,
 * keyed by the device ordinal (and cache_path's driver key).  A stale image
 * would make SetConfig fail: the collection then reads it live, rewrites
 * the file and tries once more. */
#define AVAIL_MAGIC "kbench-cupti-availability 1"

static char *avail_path(int ordinal)
{
	char name[32];
	snprintf(name, sizeof name, "%d.avail", ordinal);
	return cache_path(name);
}

/* The cached image of GPU `ordinal` and its chip name; false when none. */
static bool avail_load(int ordinal, char *chip, size_t chip_size, uint8_t **image, size_t *size)
{
	char *path = avail_path(ordinal);
	bool ok = blob_read(path, AVAIL_MAGIC, chip, chip_size, image, size);
	free(path);
	return ok;
}

static void avail_save(int ordinal, const char *chip, const uint8_t *image, size_t size)
{
	char *path = avail_path(ordinal);
	blob_write(path, AVAIL_MAGIC, chip, image, size);
	free(path);
}

/* ===== config images =============================================================== */

typedef struct {
	char *key;                          /* chip, availability hash, names */
	uint8_t *image;
	size_t size;
	int passes;
	unsigned id;                        /* unique per image */
	CUpti_Profiler_Host_Object *host;   /* built the image; evaluates its data
					     * (NULL until one read from disk is
					     * checked: see config_check_start) */
	bool from_disk;
} config;

static config configs[CONFIG_CACHE_MAX];
static int nconfigs, next_evict;
static unsigned next_id = 1;

static char *config_key(const char *chip, const uint8_t *avail, size_t avail_size,
			const char *const *metrics, int n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the availability image */
	for (size_t i = 0; i < avail_size; i++)
		h = (h ^ avail[i]) * 1099511628211ull;
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "%s\x1f%016llx\x1f%zu", chip, (unsigned long long)h, avail_size);
	for (int i = 0; i < n; i++)
		kb_buf_catf(&b, "\x1e%s", metrics[i] ? metrics[i] : "");
	return kb_buf_detach(&b);
}

static void config_clear(config *c)
{
	host_free(c->host);
	free(c->key);
	free(c->image);
	memset(c, 0, sizeof *c);
}

/* Builds the config image of a checked metric list with a fresh host object. */
static int config_build(const char *chip, const uint8_t *avail, const char *const *metrics,
			int n, config *c, kb_err *err)
{
	int rc = host_new(chip, avail, &c->host, err);
	if (rc < 0)
		return rc;
	CUpti_Profiler_Host_ConfigAddMetrics_Params a =
		PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
	a.pHostObject = c->host;
	a.ppMetricNames = (const char **)metrics;
	a.numMetrics = (size_t)n;
	KB_CUPTI(err, cuptiProfilerHostConfigAddMetrics, &a);
	CUpti_Profiler_Host_GetConfigImageSize_Params s =
		PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
	s.pHostObject = c->host;
	KB_CUPTI(err, cuptiProfilerHostGetConfigImageSize, &s);
	c->size = s.configImageSize;
	c->image = kb_xcalloc(1, c->size ? c->size : 1);
	CUpti_Profiler_Host_GetConfigImage_Params g = PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
	g.pHostObject = c->host;
	g.configImageSize = c->size;
	g.pConfigImage = c->image;
	KB_CUPTI(err, cuptiProfilerHostGetConfigImage, &g);
	CUpti_Profiler_Host_GetNumOfPasses_Params q = PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
	q.configImageSize = c->size;
	q.pConfigImage = c->image;
	KB_CUPTI(err, cuptiProfilerHostGetNumOfPasses, &q);
	c->passes = (int)q.numOfPasses;
out:
	return rc;
}

/* Config images on disk.  ConfigAddMetrics costs 80-180 ms for the
 * default sections in every new process, on the prep thread that a fresh
 * runner's counters wait for (bench/profile_breakdown_h100.txt: 65-108 ms
 * of waiting on an H100).  An image depends on the chip, the availability
 * image and the metric list (the key), and on CUPTI: so it is kept by a
 * hash of the key and CUPTI's run-time version.  Only images of names that
 * passed the check are saved, and only for a device (with availability).
 *
 * One read from disk is never trusted alone: while its passes run, a
 * thread builds it again (config_check_start), and the collection then
 * evaluates with the host object that built it, as for any other image.
 * Were the two images to differ, the data is collected once more with the
 * new one (and the file rewritten), so the cache can make a collection
 * slower, never different. */
#define CONFIG_MAGIC "kbench-cupti-config-1"

static char *config_path(const char *key)
{
	uint32_t version = 0;
	api.cuptiGetVersion(&version);
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, key);
	char hex[KB_HASH_HEX], name[64];
	kb_hash_final(h, hex);
	snprintf(name, sizeof name, "%.32s-%u.config", hex, (unsigned)version);
	return cache_path(name);
}

static bool config_load(config *c)
{
	char *path = config_path(c->key), passes[16];
	bool ok = blob_read(path, CONFIG_MAGIC, passes, sizeof passes, &c->image, &c->size);
	free(path);
	c->passes = ok ? atoi(passes) : 0;
	if (ok && c->passes <= 0) {
		free(c->image);
		c->image = NULL;
		ok = false;
	}
	c->from_disk = ok;
	return ok;
}

static void config_save(const config *c)
{
	char *path = config_path(c->key), passes[16];
	snprintf(passes, sizeof passes, "%d", c->passes);
	blob_write(path, CONFIG_MAGIC, passes, c->image, c->size);
	free(path);
}

/* Deletes c's file, so that the next config_get builds the image. */
static void config_unlink(const config *c)
{
	char *path = config_path(c->key);
	if (path)
		unlink(path);
	free(path);
}

/* The cached config of (chip, availability, metrics): one built in this
 * process, else (with from_disk) one on disk, else one built after checking
 * the names with `names` (a host object of the chip). Borrowed. */
static int config_get(CUpti_Profiler_Host_Object *names, const char *chip, const uint8_t *avail,
		      size_t avail_size, const char *const *metrics, int n, bool from_disk,
		      config **out, kb_err *err)
{
	*out = NULL;
	if (n <= 0 || !metrics)
		return kb_err_set(err, KB_EINVAL, KB_DOM_CUPTI, 0, "no metrics asked for");
	char *key = config_key(chip, avail, avail_size, metrics, n);
	for (int i = 0; i < nconfigs; i++)
		if (!strcmp(configs[i].key, key)) {
			free(key);
			*out = &configs[i];
			return KB_OK;
		}
	config c = {.key = key, .id = next_id++};
	if (!(from_disk && avail && config_load(&c))) {
		int rc = check_names(names, chip, metrics, n, err);
		if (rc == KB_OK)
			rc = config_build(chip, avail, metrics, n, &c, err);
		if (rc < 0) {
			config_clear(&c);
			return rc;
		}
		if (avail)
			config_save(&c);
	}
	int slot = nconfigs < CONFIG_CACHE_MAX ? nconfigs++ : next_evict++ % CONFIG_CACHE_MAX;
	config_clear(&configs[slot]);
	configs[slot] = c;
	*out = &configs[slot];
	return KB_OK;
}

/* Building an image read from disk again, beside its passes. */
typedef struct {
	pthread_t thread;
	bool started;
	const char *chip;
	const uint8_t *avail;
	const char *const *metrics;
	int n;
	config built;
	int rc;
	kb_err err;
	double ms;
} config_check;

static void *config_check_main(void *arg)
{
	config_check *k = arg;
	double t = kb_now_ms();
	k->rc = config_build(k->chip, k->avail, k->metrics, k->n, &k->built, &k->err);
	k->ms = kb_now_ms() - t;
	return NULL;
}

/* Starts building cfg (read from disk) again on a thread of its own: a
 * host object of its own, nothing shared with the caller but read-only
 * inputs that outlive config_check_finish. */
static void config_check_start(config_check *k, const config *cfg, const char *chip,
			       const uint8_t *avail, const char *const *metrics, int n)
{
	memset(k, 0, sizeof *k);
	if (!cfg->from_disk)
		return;
	k->chip = chip, k->avail = avail, k->metrics = metrics, k->n = n;
	k->started = pthread_create(&k->thread, NULL, config_check_main, k) == 0;
	if (!k->started) /* no thread: build it here, before the passes */
		config_check_main(k);
}

/* Waits for the build; cfg then has its own host object.  Returns 0 when
 * the image from disk was the one CUPTI builds now, 1 when it was not (cfg
 * now holds the new image, saved: collect again), or a KB_E* when the build
 * failed (the file is deleted). */
static int config_check_finish(config_check *k, config *cfg, kb_err *err)
{
	if (!cfg->from_disk)
		return KB_OK;
	if (k->started)
		pthread_join(k->thread, NULL);
	if (k->rc < 0) {
		config_unlink(cfg);
		config_clear(&k->built);
		*err = k->err;
		return k->rc;
	}
	bool same = k->built.size == cfg->size && k->built.passes == cfg->passes &&
		    !memcmp(k->built.image, cfg->image, cfg->size);
	cfg->host = k->built.host, k->built.host = NULL;
	cfg->from_disk = false;
	if (same) {
		config_clear(&k->built);
		return KB_OK;
	}
	kb_log("cupti: the config image on disk differs from CUPTI's (%zu vs %zu bytes, %d vs %d "
	       "passes): collecting again", cfg->size, k->built.size, cfg->passes, k->built.passes);
	free(cfg->image);
	cfg->image = k->built.image, k->built.image = NULL;
	cfg->size = k->built.size;
	cfg->passes = k->built.passes;
	cfg->id = next_id++;
	config_save(cfg);
	config_clear(&k->built);
	return 1;
}

/* Offline check by chip name; see profile.h. */
int kb_profile_cupti_host_check(const char *chip, const char *const *metrics, int n,
				int *passes, kb_err *err)
{
	CUpti_Profiler_Host_Object *host;
	config *c;
	int rc = load(err);
	if (rc == KB_OK)
		rc = offline_host(chip, &host, err);
	if (rc == KB_OK)
		rc = config_get(host, chip, NULL, 0, metrics, n, false, &c, err);
	if (passes)
		*passes = rc == KB_OK ? c->passes : 0;
	return rc;
}

/* ===== preparing a collection while the GPU opens ================================== */

struct kb_cupti_prep {
	pthread_t thread;
	bool started;
	char **metrics;
	int n;
	double ms;
};

static void *prep_main(void *arg)
{
	kb_cupti_prep *p = arg;
	double t = kb_now_ms();
	char chip[64];
	uint8_t *avail = NULL;
	size_t avail_size = 0;
	CUpti_Profiler_Host_Object *names;
	config *cfg;
	kb_err ignored = {0};
	double t_load = 0, t_host = 0, t_config = 0;
	if (load(&ignored) == KB_OK && (t_load = kb_now_ms()) && p->n > 0 &&
	    avail_load(0, chip, sizeof chip, &avail, &avail_size) &&
	    offline_host(chip, &names, &ignored) == KB_OK) {
		t_host = kb_now_ms();
		config_get(names, chip, avail, avail_size, (const char *const *)p->metrics, p->n, true,
			   &cfg, &ignored);
		t_config = kb_now_ms();
	}
	free(avail);
	p->ms = kb_now_ms() - t;
	kb_log("cupti prep: load %.1f  host %.1f  config %.1f ms", t_load ? t_load - t : 0,
	       t_host ? t_host - t_load : 0, t_config ? t_config - t_host : 0);
	return NULL;
}

kb_cupti_prep *kb_profile_cupti_prep_start(const char *const *metrics, int n)
{
	kb_cupti_prep *p = kb_xcalloc(1, sizeof *p);
	p->metrics = kb_xcalloc((size_t)n + 1, sizeof *p->metrics);
	for (int i = 0; i < n; i++)
		p->metrics[p->n++] = kb_xstrdup(metrics[i] ? metrics[i] : "");
	p->started = pthread_create(&p->thread, NULL, prep_main, p) == 0;
	return p;
}

double kb_profile_cupti_prep_join(kb_cupti_prep *p)
{
	if (!p)
		return 0;
	if (p->started)
		pthread_join(p->thread, NULL);
	double ms = p->ms;
	for (int i = 0; i < p->n; i++)
		free(p->metrics[i]);
	free(p->metrics);
	free(p);
	return ms;
}

/* ===== the device side ============================================================= */

struct kb_cupti {
	kb_device *d;
	bool initialized;           /* cuptiProfilerInitialize succeeded */
	char chip[64];
	uint8_t *avail;             /* counter availability image */
	size_t avail_size;
	bool avail_cached;          /* read from the disk cache, not the driver */
	CUpti_Profiler_Host_Object *host;   /* names and suggestions, with avail */
	CUpti_RangeProfiler_Object *rp;     /* non-NULL while enabled */
	unsigned rp_config;                 /* id of the config last set on rp */
	bool keep_enabled;
	bool flush_first_only;              /* --cache-control none */
	bool user_range;                    /* of the current collection */
	kb_profile__cupti_stats st;         /* of the last collection */
	kb_profile__cupti_open_stats open;  /* of kb_profile_cupti_open */
	uint8_t *data;              /* counter data image, reused */
	size_t data_size;
};

/* See profile.h: keep the range profiler enabled between collections. */
void kb_profile_cupti_keep_enabled(kb_cupti *c, bool on)
{
	c->keep_enabled = on;
}

/* See profile_int.h. */
void kb_profile__cupti_flush_every_pass(kb_cupti *c, bool on)
{
	c->flush_first_only = !on;
}

/* The step timings of the last collection (borrowed). */
const kb_profile__cupti_stats *kb_profile__cupti_last(const kb_cupti *c)
{
	return &c->st;
}

/* The step timings of kb_profile_cupti_open (borrowed). */
const kb_profile__cupti_open_stats *kb_profile__cupti_opened(const kb_cupti *c)
{
	return &c->open;
}

static const char *level_name(CUpti_Profiler_Support_Level l)
{
	return l == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ? "unsupported"
	       : l == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled" : "unknown";
}

/* cuptiProfilerDeviceSupported: KB_EUNSUP naming each cause, KB_EPERM when
 * the hypervisor disabled profiling of a vGPU. */
static int device_supported(kb_cupti *c, kb_err *err)
{
	int rc = KB_OK;
	CUpti_Profiler_DeviceSupported_Params p = PARAMS(CUpti_Profiler_DeviceSupported_Params);
	p.cuDevice = c->d->cu_dev;
	p.api = CUPTI_PROFILER_RANGE_PROFILING;
	KB_CUPTI(err, cuptiProfilerDeviceSupported, &p);
	if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		goto out;
	if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
		rc = counters_fail(err, CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
				"cuptiProfilerDeviceSupported", __FILE__, __LINE__);
		goto out;
	}
	const struct {
		const char *what;
		CUpti_Profiler_Support_Level l;
	} f[] = {{"architecture (needs sm_70+)", p.architecture}, {"SLI", p.sli},
		 {"vGPU", p.vGpu}, {"confidential computing", p.confidentialCompute},
		 {"CMP (mining) device", p.cmp}, {"WSL", p.wsl}};
	kb_buf b = KB_BUF_INIT;
	for (size_t i = 0; i < KB_ARRAY_LEN(f); i++)
		if (f[i].l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
			kb_buf_catf(&b, "%s%s: %s", b.len ? ", " : "", f[i].what,
				    level_name(f[i].l));
	rc = KB_ERR(err, KB_EUNSUP, KB_DOM_CUPTI, 0,
		    "hardware counters are not supported on %s (%s)", c->d->info.name,
		    b.s ? b.s : "no reason given");
	kb_buf_free(&b);
out:
	return rc;
}

/* The live image from the driver (the first call that needs counter
 * permission); saved to the disk cache. */
static int read_availability(kb_cupti *c, kb_err *err)
{
	int rc = KB_OK;
	free(c->avail);
	c->avail = NULL;
	c->avail_cached = false;
	CUpti_Profiler_GetCounterAvailability_Params p =
		PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
	p.ctx = c->d->ctx;
	KB_CUPTI(err, cuptiProfilerGetCounterAvailability, &p);
	c->avail_size = p.counterAvailabilityImageSize;
	c->avail = kb_xcalloc(1, c->avail_size ? c->avail_size : 1);
	p.pCounterAvailabilityImage = c->avail;
	KB_CUPTI(err, cuptiProfilerGetCounterAvailability, &p);
	c->avail_size = p.counterAvailabilityImageSize;
	avail_save(c->d->info.ordinal, c->chip, c->avail, c->avail_size);
out:
	return rc;
}

/* The cached image when it is this chip's, else the live one. */
static int availability(kb_cupti *c, kb_err *err)
{
	char chip[64];
	uint8_t *image;
	size_t size;
	if (avail_load(c->d->info.ordinal, chip, sizeof chip, &image, &size)) {
		if (!strcmp(chip, c->chip)) {
			c->avail = image, c->avail_size = size, c->avail_cached = true;
			return KB_OK;
		}
		free(image);
	}
	return read_availability(c, err);
}

/* Returns 0, KB_EPERM (counters not permitted), KB_EUNSUP, or a KB_E*. */
int kb_profile_cupti_open(kb_device *d, kb_cupti **out, kb_err *err)
{
	*out = NULL;
	double t = kb_now_ms();
	int rc = load(err);
	if (rc < 0)
		return rc;
	kb_cupti *c = kb_xcalloc(1, sizeof *c);
	c->d = d;
	c->open.ms_load = kb_now_ms() - t;
	t = kb_now_ms();
	KB_CU_CALL(err, cuCtxSetCurrent(d->ctx));
	CUpti_Profiler_Initialize_Params ip = PARAMS(CUpti_Profiler_Initialize_Params);
	KB_CUPTI(err, cuptiProfilerInitialize, &ip);
	c->initialized = true;
	if ((rc = device_supported(c, err)) < 0)
		goto out;
	CUpti_Device_GetChipName_Params cp = PARAMS(CUpti_Device_GetChipName_Params);
	cp.deviceIndex = (size_t)d->info.ordinal;
	KB_CUPTI(err, cuptiDeviceGetChipName, &cp);
	snprintf(c->chip, sizeof c->chip, "%s", cp.pChipName ? cp.pChipName : "");
	c->open.ms_init = kb_now_ms() - t;
	t = kb_now_ms();
	/* Live, this is the first call that needs counter permission; cached,
	 * a missing permission shows at the first collection instead. */
	if ((rc = availability(c, err)) < 0)
		goto out;
	c->open.ms_avail = kb_now_ms() - t;
	t = kb_now_ms();
	rc = host_new(c->chip, c->avail, &c->host, err);
	c->open.ms_host = kb_now_ms() - t;
out:
	if (rc < 0)
		kb_profile_cupti_close(c);
	else
		*out = c;
	return rc;
}

static void disable(kb_cupti *c)
{
	if (!c->rp)
		return;
	double t = kb_now_ms();
	CUpti_RangeProfiler_Disable_Params p = PARAMS(CUpti_RangeProfiler_Disable_Params);
	p.pRangeProfilerObject = c->rp;
	api.cuptiRangeProfilerDisable(&p);
	c->rp = NULL;
	c->st.ms_disable += kb_now_ms() - t;
}

void kb_profile_cupti_release(kb_cupti *c)
{
	if (c)
		disable(c);
}

/* Disables, frees the host object, cuptiProfilerDeInitialize; NULL ok. */
void kb_profile_cupti_close(kb_cupti *c)
{
	if (!c)
		return;
	disable(c);
	host_free(c->host);
	if (c->initialized) {
		CUpti_Profiler_DeInitialize_Params p = PARAMS(CUpti_Profiler_DeInitialize_Params);
		api.cuptiProfilerDeInitialize(&p);
	}
	free(c->avail);
	free(c->data);
	free(c);
}

/* Checks names and counts passes with the device's availability image. */
int kb_profile_cupti_check(kb_cupti *c, const char *const *metrics, int n, int *passes,
			   kb_err *err)
{
	config *cfg;
	int rc = config_get(c->host, c->chip, c->avail, c->avail_size, metrics, n, false, &cfg, err);
	if (passes)
		*passes = rc == KB_OK ? cfg->passes : 0;
	return rc;
}

/* Sizes (re)initialises the counter data image for one launch; up to two
 * ranges so that a launch function starting two kernels is caught (auto
 * range; a user range is one). */
static int data_image(kb_cupti *c, const char *const *metrics, int n, kb_err *err)
{
	int rc = KB_OK;
	CUpti_RangeProfiler_GetCounterDataSize_Params s =
		PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
	s.pRangeProfilerObject = c->rp;
	s.pMetricNames = (const char **)metrics;
	s.numMetrics = (size_t)n;
	s.maxNumOfRanges = 2;
	s.maxNumRangeTreeNodes = 2;
	KB_CUPTI(err, cuptiRangeProfilerGetCounterDataSize, &s);
	if (s.counterDataSize != c->data_size) {
		free(c->data);
		c->data_size = s.counterDataSize;
		c->data = kb_xmalloc(c->data_size ? c->data_size : 1);
	}
	memset(c->data, 0, c->data_size);
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip =
		PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
	ip.pRangeProfilerObject = c->rp;
	ip.counterDataSize = c->data_size;
	ip.pCounterData = c->data;
	KB_CUPTI(err, cuptiRangeProfilerCounterDataImageInitialize, &ip);
out:
	return rc;
}

/* Enable (unless kept), counter data image, SetConfig for user replay
 * with auto range, or one user range (no nesting) once auto is refused. */
static int arm(kb_cupti *c, const config *cfg, const char *const *metrics, int n, kb_err *err)
{
	int rc = KB_OK;
	if (c->rp && c->rp_config != cfg->id)
		disable(c); /* kept enabled, but for another metric list */
	double t = kb_now_ms();
	if (!c->rp) {
		CUpti_RangeProfiler_Enable_Params e = PARAMS(CUpti_RangeProfiler_Enable_Params);
		e.ctx = c->d->ctx;
		KB_CUPTI(err, cuptiRangeProfilerEnable, &e);
		c->rp = e.pRangeProfilerObject;
		c->st.enabled = true;
	}
	c->rp_config = cfg->id;
	c->st.ms_enable = kb_now_ms() - t;
	t = kb_now_ms();
	if ((rc = data_image(c, metrics, n, err)) < 0)
		goto out;
	CUpti_RangeProfiler_SetConfig_Params p = PARAMS(CUpti_RangeProfiler_SetConfig_Params);
	p.pRangeProfilerObject = c->rp;
	p.configSize = cfg->size;
	p.pConfig = cfg->image;
	p.counterDataImageSize = c->data_size;
	p.pCounterDataImage = c->data;
	c->user_range = c->st.user_range = auto_refused;
	p.range = c->user_range ? CUPTI_UserRange : CUPTI_AutoRange;
	p.replayMode = CUPTI_UserReplay;
	p.maxRangesPerPass = 1;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 1;
	CUptiResult r = api.cuptiRangeProfilerSetConfig(&p);
	if (r != CUPTI_SUCCESS && !c->user_range && r != CUPTI_ERROR_INSUFFICIENT_PRIVILEGES &&
	    r != CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
		/* Refused: user range from now on, on a freshly enabled object. */
		auto_refused = true;
		disable(c);
		return arm(c, cfg, metrics, n, err);
	}
	if (r != CUPTI_SUCCESS)
		rc = counters_fail(err, r, "cuptiRangeProfilerSetConfig", __FILE__, __LINE__);
out:
	c->st.ms_config = kb_now_ms() - t;
	return rc;
}

/* One pass: L2 flush (outside Start..Stop and finished before Start, so
 * that none of it is counted), Start, [PushRange], the caller's launch,
 * [PopRange], Stop; Pop and Stop always run once Push / Start succeeded.
 * *all gets Stop's isAllPassSubmitted. */
static int run_pass(kb_cupti *c, kb_launch_fn launch, void *ctx, bool *all, kb_err *err)
{
	int rc = KB_OK;
	*all = false;
	double t0 = kb_now_ms();
	if ((c->st.replays == 1 || !c->flush_first_only) && (rc = kb_profile__flush_l2(c->d, err)) < 0)
		goto out;
	KB_CU_CALL(err, cuStreamSynchronize(c->d->stream));
	double t1 = kb_now_ms(), user1, sys1, user2, sys2;
	kb_thread_cpu_ms(&user1, &sys1);
	CUpti_RangeProfiler_Start_Params s = PARAMS(CUpti_RangeProfiler_Start_Params);
	s.pRangeProfilerObject = c->rp;
	KB_CUPTI(err, cuptiRangeProfilerStart, &s);
	double t2 = kb_now_ms();
	kb_thread_cpu_ms(&user2, &sys2);
	CUptiResult r = CUPTI_SUCCESS;
	const char *failed = NULL;
	if (c->user_range) {
		CUpti_RangeProfiler_PushRange_Params pu =
			PARAMS(CUpti_RangeProfiler_PushRange_Params);
		pu.pRangeProfilerObject = c->rp;
		pu.pRangeName = RANGE_NAME;
		if ((r = api.cuptiRangeProfilerPushRange(&pu)) != CUPTI_SUCCESS)
			failed = "cuptiRangeProfilerPushRange";
	}
	if (!failed)
		rc = launch(ctx, err);
	double t3 = kb_now_ms();
	if (!failed && c->user_range) {
		CUpti_RangeProfiler_PopRange_Params po = PARAMS(CUpti_RangeProfiler_PopRange_Params);
		po.pRangeProfilerObject = c->rp;
		if ((r = api.cuptiRangeProfilerPopRange(&po)) != CUPTI_SUCCESS)
			failed = "cuptiRangeProfilerPopRange";
	}
	CUpti_RangeProfiler_Stop_Params p = PARAMS(CUpti_RangeProfiler_Stop_Params);
	p.pRangeProfilerObject = c->rp;
	CUptiResult r3 = api.cuptiRangeProfilerStop(&p);
	kb_log("pass %d: flush %.1f  start %.1f (cpu: user %.1f, kernel %.1f)  launch %.1f  stop %.1f ms",
	       c->st.replays, t1 - t0, t2 - t1, user2 - user1, sys2 - sys1, t3 - t2, kb_now_ms() - t3);
	if (!failed && r3 != CUPTI_SUCCESS)
		r = r3, failed = "cuptiRangeProfilerStop";
	if (rc < 0) /* the launch's own error first */
		goto out;
	if (failed) {
		rc = counters_fail(err, r, failed, __FILE__, __LINE__);
		goto out;
	}
	*all = p.isAllPassSubmitted != 0;
out:
	return rc;
}

/* User replay: passes until CUPTI has all it needs (cfg->passes of them). */
static int run_passes(kb_cupti *c, const config *cfg, kb_launch_fn launch, void *ctx,
		      kb_err *err)
{
	int rc = KB_OK;
	bool all = false;
	double t = kb_now_ms();
	while (!all) {
		if (c->st.replays == REPLAY_MAX) {
			rc = KB_ERR(err, KB_ERROR, KB_DOM_CUPTI, 0,
				    "user replay: CUPTI still wants passes after %d (the metric "
				    "list needs %d)%s", REPLAY_MAX, cfg->passes,
				    c->user_range ? "" : "; no kernel ran while profiling?");
			break;
		}
		c->st.replays++;
		if ((rc = run_pass(c, launch, ctx, &all, err)) < 0)
			break;
	}
	c->st.ms_run = kb_now_ms() - t;
	return rc;
}

/* Decodes, checks that exactly one range (auto: one kernel) was recorded,
 * evaluates range 0. */
static int evaluate(kb_cupti *c, const config *cfg, const char *const *metrics, int n,
		    double *values, kb_err *err)
{
	int rc = KB_OK;
	double t = kb_now_ms();
	CUpti_RangeProfiler_DecodeData_Params dp = PARAMS(CUpti_RangeProfiler_DecodeData_Params);
	dp.pRangeProfilerObject = c->rp;
	KB_CUPTI(err, cuptiRangeProfilerDecodeData, &dp);
	CUpti_RangeProfiler_GetCounterDataInfo_Params ip =
		PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
	ip.pCounterDataImage = c->data;
	ip.counterDataImageSize = c->data_size;
	KB_CUPTI(err, cuptiRangeProfilerGetCounterDataInfo, &ip);
	if (ip.numTotalRanges == 0) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_CUPTI, 0,
			    "no kernel ran while profiling (the launch started none)");
		goto out;
	}
	if (!c->user_range && (ip.numTotalRanges > 1 || dp.numOfRangeDropped)) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_CUPTI, 0,
			    "the launch started %zu kernels; counters are collected for one "
			    "kernel launch at a time", ip.numTotalRanges + dp.numOfRangeDropped);
		goto out;
	}
	if (ip.numTotalRanges > 1 || dp.numOfRangeDropped) {
		rc = KB_ERR(err, KB_ERROR, KB_DOM_CUPTI, 0,
			    "CUPTI recorded %zu ranges (%zu dropped) for the one range \""
			    RANGE_NAME "\"", ip.numTotalRanges, dp.numOfRangeDropped);
		goto out;
	}
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ep =
		PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
	ep.pHostObject = cfg->host;
	ep.pCounterDataImage = c->data;
	ep.counterDataImageSize = c->data_size;
	ep.rangeIndex = 0;
	ep.ppMetricNames = (const char **)metrics;
	ep.numMetrics = (size_t)n;
	ep.pMetricValues = values;
	KB_CUPTI(err, cuptiProfilerHostEvaluateToGpuValues, &ep);
out:
	c->st.ms_eval = kb_now_ms() - t;
	return rc;
}

/* A collection with the cached availability image failed at SetConfig:
 * the image may be stale (a new GPU board behind the same key, say), so it
 * is read live again, with a host object to match. */
static int refresh_availability(kb_cupti *c, kb_err *err)
{
	int rc = read_availability(c, err);
	if (rc == KB_OK) {
		host_free(c->host);
		c->host = NULL;
		rc = host_new(c->chip, c->avail, &c->host, err);
	}
	return rc;
}

/* The collection once more, after a disk cache misled the first try; the
 * stats say so (config_stale) and count both tries' passes. */
static int collect_again(kb_cupti *c, const char *const *metrics, int n, kb_launch_fn launch,
			 void *ctx, double *values, kb_err *err)
{
	kb_profile__cupti_stats first = c->st;
	int rc = kb_profile_cupti_collect(c, metrics, n, launch, ctx, values, err);
	c->st.config_stale = first.config_stale || c->st.config_stale;
	c->st.replays += first.replays;
	c->st.ms_run += first.ms_run;
	return rc;
}

/* One launch under user replay, each pass after an L2 flush (see the top of
 * the file); values NAN on failure. */
int kb_profile_cupti_collect(kb_cupti *c, const char *const *metrics, int n, kb_launch_fn launch,
			     void *ctx, double *values, kb_err *err)
{
	for (int i = 0; i < n; i++)
		values[i] = NAN;
	memset(&c->st, 0, sizeof c->st);
	double t = kb_now_ms();
	config *cfg;
	int rc = config_get(c->host, c->chip, c->avail, c->avail_size, metrics, n, true, &cfg, err);
	c->st.ms_check = kb_now_ms() - t;
	if (rc < 0)
		return rc;
	c->st.passes = cfg->passes;
	c->st.config_from_disk = cfg->from_disk;
	KB_CU_CALL(err, cuCtxSetCurrent(c->d->ctx));
	/* from here every path joins it (config_check_finish) */
	config_check check;
	config_check_start(&check, cfg, c->chip, c->avail, metrics, n);
	if ((rc = arm(c, cfg, metrics, n, err)) < 0 && rc != KB_EPERM &&
	    (c->avail_cached || cfg->from_disk)) {
		/* refused with something from a disk cache: the config image if
		 * it was not CUPTI's, else the availability image */
		disable(c);
		kb_err ignored;
		bool stale = config_check_finish(&check, cfg, &ignored) == 1;
		if (stale || (c->avail_cached && refresh_availability(c, err) == KB_OK)) {
			c->st.config_stale = stale;
			return collect_again(c, metrics, n, launch, ctx, values, err);
		}
	}
	if (rc == KB_OK)
		rc = run_passes(c, cfg, launch, ctx, err);
	t = kb_now_ms();
	kb_err check_err = {0};
	int checked = config_check_finish(&check, cfg, &check_err);
	if (rc == KB_OK && checked < 0)
		*err = check_err, rc = checked;
	c->st.ms_config_wait = kb_now_ms() - t;
	c->st.ms_config_build = check.ms;
	if (checked == 1 && rc == KB_OK) {
		c->st.config_stale = true;
		disable(c);
		return collect_again(c, metrics, n, launch, ctx, values, err);
	}
	if (rc < 0 || (rc = evaluate(c, cfg, metrics, n, values, err)) < 0) {
		for (int i = 0; i < n; i++)
			values[i] = NAN;
		goto out;
	}
	for (int i = 0; i < n; i++)
		if (!isfinite(values[i]))
			values[i] = NAN;
out:
	/* (kept enabled, the same multi-pass list again starts at pass 0:
	 * test_profile_cupti.c, "kept enabled, same list") */
	if (!c->keep_enabled || rc < 0)
		disable(c);
	return rc;
}

/* See profile_int.h. */
void kb_profile__cupti_drop_configs(void)
{
	for (int i = 0; i < nconfigs; i++)
		config_clear(&configs[i]);
	nconfigs = next_evict = 0;
}

/* See profile_int.h. */
int kb_profile__cupti_plant_config(kb_cupti *c, const char *const *metrics, int n,
				   const char *const *other, int nother, kb_err *err)
{
	config wrong = {0};
	int rc = config_build(c->chip, c->avail, other, nother, &wrong, err);
	if (rc == KB_OK) {
		wrong.key = config_key(c->chip, c->avail, c->avail_size, metrics, n);
		config_save(&wrong);
	}
	config_clear(&wrong);
	return rc;
}
