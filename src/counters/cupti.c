/*
 * cupti.c - hardware counters through CUPTI's Range Profiler (target side)
 * and Profiler Host API (names, config images, pass counts, evaluation), as
 * in gpu-apis.md section 1.2: auto range + user replay (kbench replays each
 * pass itself), one launch per collection.  This file is the device side:
 * opening a device for counters and collecting them; libcupti, host objects
 * and names are cupti_host.c's, config images and the caches on disk
 * cupti_config.c's.
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
 * Owns: the kb_cupti state (profiler initialised, chip name, counter
 * availability image, a host object for names, a reusable counter data
 * image) and whether SetConfig refused auto range.  Does not own the
 * device, its context or what is launched, nor the process-wide caches
 * (cupti_host.c, cupti_config.c).
 *
 * Invariants:
 *  - Counter data is evaluated by the host object that built its config
 *    image (kb_profile__cupti_config; one read from disk is built again
 *    beside its passes and, when it differs, collected again).
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
 *  - A config check's thread (cupti_config.c) is joined on every path of a
 *    collection that started it.
 */
#include "counters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPLAY_MAX 64     /* Start..Stop iterations before giving up */
#define RANGE_NAME "kbench"

static bool auto_refused; /* SetConfig refused auto range + user replay */

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

/* See counters.h: keep the range profiler enabled between collections. */
void kb_profile_cupti_keep_enabled(kb_cupti *c, bool on)
{
	c->keep_enabled = on;
}

/* See counters.h. */
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
	CUpti_Profiler_DeviceSupported_Params p =
		KB_CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
	p.cuDevice = c->d->cu_dev;
	p.api = CUPTI_PROFILER_RANGE_PROFILING;
	if ((rc = KB_CUPTI(err, cuptiProfilerDeviceSupported, &p)) < 0)
		goto out;
	if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		goto out;
	if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED) {
		rc = KB_CUPTI_COUNTERS_FAIL(err, CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
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
		KB_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
	p.ctx = c->d->ctx;
	if ((rc = KB_CUPTI(err, cuptiProfilerGetCounterAvailability, &p)) < 0)
		goto out;
	c->avail_size = p.counterAvailabilityImageSize;
	c->avail = kb_xcalloc(1, c->avail_size ? c->avail_size : 1);
	p.pCounterAvailabilityImage = c->avail;
	if ((rc = KB_CUPTI(err, cuptiProfilerGetCounterAvailability, &p)) < 0)
		goto out;
	c->avail_size = p.counterAvailabilityImageSize;
	kb_profile__cupti_avail_save(c->d->info.ordinal, c->chip, c->avail, c->avail_size);
out:
	return rc;
}

/* The cached image when it is this chip's, else the live one. */
static int availability(kb_cupti *c, kb_err *err)
{
	char chip[64];
	uint8_t *image;
	size_t size;
	if (kb_profile__cupti_avail_load(c->d->info.ordinal, chip, sizeof chip, &image, &size)) {
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
	int rc = kb_profile__cupti_load(err);
	if (rc < 0)
		return rc;
	kb_cupti *c = kb_xcalloc(1, sizeof *c);
	c->d = d;
	c->open.ms_load = kb_now_ms() - t;
	t = kb_now_ms();
	if ((rc = KB_CU(err, cuCtxSetCurrent(d->ctx))) < 0)
		goto out;
	CUpti_Profiler_Initialize_Params ip = KB_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
	if ((rc = KB_CUPTI(err, cuptiProfilerInitialize, &ip)) < 0)
		goto out;
	c->initialized = true;
	if ((rc = device_supported(c, err)) < 0)
		goto out;
	CUpti_Device_GetChipName_Params cp = KB_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
	cp.deviceIndex = (size_t)d->info.ordinal;
	if ((rc = KB_CUPTI(err, cuptiDeviceGetChipName, &cp)) < 0)
		goto out;
	snprintf(c->chip, sizeof c->chip, "%s", cp.pChipName ? cp.pChipName : "");
	c->open.ms_init = kb_now_ms() - t;
	t = kb_now_ms();
	/* Live, this is the first call that needs counter permission; cached,
	 * a missing permission shows at the first collection instead. */
	if ((rc = availability(c, err)) < 0)
		goto out;
	c->open.ms_avail = kb_now_ms() - t;
	t = kb_now_ms();
	rc = kb_profile__cupti_host_new(c->chip, c->avail, &c->host, err);
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
	CUpti_RangeProfiler_Disable_Params p = KB_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
	p.pRangeProfilerObject = c->rp;
	kb_profile__cupti.cuptiRangeProfilerDisable(&p);
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
	kb_profile__cupti_host_free(c->host);
	if (c->initialized) {
		CUpti_Profiler_DeInitialize_Params p =
			KB_CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
		kb_profile__cupti.cuptiProfilerDeInitialize(&p);
	}
	free(c->avail);
	free(c->data);
	free(c);
}

/* Checks names and counts passes with the device's availability image. */
int kb_profile_cupti_check(kb_cupti *c, const char *const *metrics, int n, int *passes,
			   kb_err *err)
{
	kb_profile__cupti_config *cfg;
	int rc = kb_profile__cupti_config_get(c->host, c->chip, c->avail, c->avail_size, metrics, n,
					      false, &cfg, err);
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
		KB_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
	s.pRangeProfilerObject = c->rp;
	s.pMetricNames = (const char **)metrics;
	s.numMetrics = (size_t)n;
	s.maxNumOfRanges = 2;
	s.maxNumRangeTreeNodes = 2;
	if ((rc = KB_CUPTI(err, cuptiRangeProfilerGetCounterDataSize, &s)) < 0)
		goto out;
	if (s.counterDataSize != c->data_size) {
		free(c->data);
		c->data_size = s.counterDataSize;
		c->data = kb_xmalloc(c->data_size ? c->data_size : 1);
	}
	memset(c->data, 0, c->data_size);
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip =
		KB_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
	ip.pRangeProfilerObject = c->rp;
	ip.counterDataSize = c->data_size;
	ip.pCounterData = c->data;
	if ((rc = KB_CUPTI(err, cuptiRangeProfilerCounterDataImageInitialize, &ip)) < 0)
		goto out;
out:
	return rc;
}

/* Enable (unless kept), counter data image, SetConfig for user replay
 * with auto range, or one user range (no nesting) once auto is refused. */
static int arm(kb_cupti *c, const kb_profile__cupti_config *cfg, const char *const *metrics, int n,
	       kb_err *err)
{
	int rc = KB_OK;
	if (c->rp && c->rp_config != cfg->id)
		disable(c); /* kept enabled, but for another metric list */
	double t = kb_now_ms();
	if (!c->rp) {
		CUpti_RangeProfiler_Enable_Params e =
			KB_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
		e.ctx = c->d->ctx;
		if ((rc = KB_CUPTI(err, cuptiRangeProfilerEnable, &e)) < 0)
			goto out;
		c->rp = e.pRangeProfilerObject;
		c->st.enabled = true;
	}
	c->rp_config = cfg->id;
	c->st.ms_enable = kb_now_ms() - t;
	t = kb_now_ms();
	if ((rc = data_image(c, metrics, n, err)) < 0)
		goto out;
	CUpti_RangeProfiler_SetConfig_Params p =
		KB_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
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
	CUptiResult r = kb_profile__cupti.cuptiRangeProfilerSetConfig(&p);
	if (r != CUPTI_SUCCESS && !c->user_range && r != CUPTI_ERROR_INSUFFICIENT_PRIVILEGES &&
	    r != CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
		/* Refused: user range from now on, on a freshly enabled object. */
		auto_refused = true;
		disable(c);
		return arm(c, cfg, metrics, n, err);
	}
	if (r != CUPTI_SUCCESS)
		rc = KB_CUPTI_COUNTERS_FAIL(err, r, "cuptiRangeProfilerSetConfig", __FILE__, __LINE__);
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
	if ((rc = KB_CU(err, cuStreamSynchronize(c->d->stream))) < 0)
		goto out;
	double t1 = kb_now_ms(), user1, sys1, user2, sys2;
	kb_thread_cpu_ms(&user1, &sys1);
	CUpti_RangeProfiler_Start_Params s = KB_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
	s.pRangeProfilerObject = c->rp;
	if ((rc = KB_CUPTI(err, cuptiRangeProfilerStart, &s)) < 0)
		goto out;
	double t2 = kb_now_ms();
	kb_thread_cpu_ms(&user2, &sys2);
	CUptiResult r = CUPTI_SUCCESS;
	const char *failed = NULL;
	if (c->user_range) {
		CUpti_RangeProfiler_PushRange_Params pu =
			KB_CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
		pu.pRangeProfilerObject = c->rp;
		pu.pRangeName = RANGE_NAME;
		if ((r = kb_profile__cupti.cuptiRangeProfilerPushRange(&pu)) != CUPTI_SUCCESS)
			failed = "cuptiRangeProfilerPushRange";
	}
	if (!failed)
		rc = launch(ctx, err);
	double t3 = kb_now_ms();
	if (!failed && c->user_range) {
		CUpti_RangeProfiler_PopRange_Params po =
			KB_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
		po.pRangeProfilerObject = c->rp;
		if ((r = kb_profile__cupti.cuptiRangeProfilerPopRange(&po)) != CUPTI_SUCCESS)
			failed = "cuptiRangeProfilerPopRange";
	}
	CUpti_RangeProfiler_Stop_Params p = KB_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
	p.pRangeProfilerObject = c->rp;
	CUptiResult r3 = kb_profile__cupti.cuptiRangeProfilerStop(&p);
	kb_log("pass %d: flush %.1f  start %.1f (cpu: user %.1f, kernel %.1f)  launch %.1f  stop %.1f ms",
	       c->st.replays, t1 - t0, t2 - t1, user2 - user1, sys2 - sys1, t3 - t2, kb_now_ms() - t3);
	if (!failed && r3 != CUPTI_SUCCESS)
		r = r3, failed = "cuptiRangeProfilerStop";
	if (rc < 0) /* the launch's own error first */
		goto out;
	if (failed) {
		rc = KB_CUPTI_COUNTERS_FAIL(err, r, failed, __FILE__, __LINE__);
		goto out;
	}
	*all = p.isAllPassSubmitted != 0;
out:
	return rc;
}

/* User replay: passes until CUPTI has all it needs (cfg->passes of them). */
static int run_passes(kb_cupti *c, const kb_profile__cupti_config *cfg, kb_launch_fn launch, void *ctx,
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
static int evaluate(kb_cupti *c, const kb_profile__cupti_config *cfg, const char *const *metrics, int n,
		    double *values, kb_err *err)
{
	int rc = KB_OK;
	double t = kb_now_ms();
	CUpti_RangeProfiler_DecodeData_Params dp =
		KB_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
	dp.pRangeProfilerObject = c->rp;
	if ((rc = KB_CUPTI(err, cuptiRangeProfilerDecodeData, &dp)) < 0)
		goto out;
	CUpti_RangeProfiler_GetCounterDataInfo_Params ip =
		KB_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
	ip.pCounterDataImage = c->data;
	ip.counterDataImageSize = c->data_size;
	if ((rc = KB_CUPTI(err, cuptiRangeProfilerGetCounterDataInfo, &ip)) < 0)
		goto out;
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
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
	ep.pHostObject = cfg->host;
	ep.pCounterDataImage = c->data;
	ep.counterDataImageSize = c->data_size;
	ep.rangeIndex = 0;
	ep.ppMetricNames = (const char **)metrics;
	ep.numMetrics = (size_t)n;
	ep.pMetricValues = values;
	if ((rc = KB_CUPTI(err, cuptiProfilerHostEvaluateToGpuValues, &ep)) < 0)
		goto out;
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
		kb_profile__cupti_host_free(c->host);
		c->host = NULL;
		rc = kb_profile__cupti_host_new(c->chip, c->avail, &c->host, err);
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
	kb_profile__cupti_config *cfg;
	int rc = kb_profile__cupti_config_get(c->host, c->chip, c->avail, c->avail_size, metrics, n,
					      true, &cfg, err);
	c->st.ms_check = kb_now_ms() - t;
	if (rc < 0)
		return rc;
	c->st.passes = cfg->passes;
	c->st.config_from_disk = cfg->from_disk;
	if ((rc = KB_CU(err, cuCtxSetCurrent(c->d->ctx))) < 0)
		goto out;
	/* from here every path joins it (kb_profile__cupti_config_check_finish) */
	kb_profile__cupti_config_check check;
	kb_profile__cupti_config_check_start(&check, cfg, c->chip, c->avail, metrics, n);
	if ((rc = arm(c, cfg, metrics, n, err)) < 0 && rc != KB_EPERM &&
	    (c->avail_cached || cfg->from_disk)) {
		/* refused with something from a disk cache: the config image if
		 * it was not CUPTI's, else the availability image */
		disable(c);
		kb_err ignored;
		bool stale = kb_profile__cupti_config_check_finish(&check, cfg, &ignored) == 1;
		if (stale || (c->avail_cached && refresh_availability(c, err) == KB_OK)) {
			c->st.config_stale = stale;
			return collect_again(c, metrics, n, launch, ctx, values, err);
		}
	}
	if (rc == KB_OK)
		rc = run_passes(c, cfg, launch, ctx, err);
	t = kb_now_ms();
	kb_err check_err = {0};
	int checked = kb_profile__cupti_config_check_finish(&check, cfg, &check_err);
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

/* See counters.h. */
int kb_profile__cupti_plant_config(kb_cupti *c, const char *const *metrics, int n,
				   const char *const *other, int nother, kb_err *err)
{
	kb_profile__cupti_config wrong = {0};
	int rc = kb_profile__cupti_config_build(c->chip, c->avail, other, nother, &wrong, err);
	if (rc == KB_OK) {
		wrong.key = kb_profile__cupti_config_key(c->chip, c->avail, c->avail_size, metrics, n);
		kb_profile__cupti_config_save(&wrong);
	}
	kb_profile__cupti_config_clear(&wrong);
	return rc;
}
