/*
 * sassmetrics.c - per-instruction counts through CUPTI's SASS metrics API
 * (cupti_sass_metrics.h; libcupti loaded with dlopen through cuptilib.c,
 * the header gives the types only): CUPTI patches the kernel's SASS so
 * that every instruction counts its own executions and, for shared-memory
 * instructions, the wavefronts they took.  Owns one session per
 * kb_profile_sassm_collect call: names -> metric ids, SetConfig (device),
 * Enable (context, lazy patching), one launch, GetDataProperties,
 * FlushData, Disable, UnsetConfig.  Does not own the kernel, its module
 * (the caller loads a fresh one, as for PC sampling) or the mapping of
 * pc offsets to SASS (the runner's).  Records are sassm.c's.
 *
 * Invariants:
 *  - Metric names are never assumed: each role has candidate names
 *    (kb_profile_sassm_candidates) tried with cuptiSassMetricsGetProperties
 *    on this chip; the first CUPTI knows is used and named in the Result.
 *    Executions are required; a shared-memory role none of whose names the
 *    chip knows is n/a with the reason.
 *  - One launch per session, synchronised before Enable (patching applies
 *    to launches made after it, none in flight) and before the flush, so
 *    the counts are one launch's.  CUPTI 13.0 is reported (third-party) to
 *    collect only the first function launched after Enable: the session
 *    launches nothing else.
 *  - Every path after SetConfig calls UnsetConfig, and after Enable,
 *    Disable, so the next profiling mode in the process starts clean.
 *  - Output granularity GPU: one instance per record; finer ones would add
 *    up the same (sassm.c sums instances).
 */
#include "counters.h"

#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ------------------------------------------------------------------ */

typedef struct {
	__typeof__(&cuptiSassMetricsGetNumOfMetrics) GetNumOfMetrics;
	__typeof__(&cuptiSassMetricsGetMetrics) GetMetrics;
	__typeof__(&cuptiSassMetricsGetProperties) GetProperties;
	__typeof__(&cuptiSassMetricsSetConfig) SetConfig;
	__typeof__(&cuptiSassMetricsUnsetConfig) UnsetConfig;
	__typeof__(&cuptiSassMetricsEnable) Enable;
	__typeof__(&cuptiSassMetricsDisable) Disable;
	__typeof__(&cuptiSassMetricsGetDataProperties) GetDataProperties;
	__typeof__(&cuptiSassMetricsFlushData) FlushData;
	__typeof__(&cuptiProfilerInitialize) ProfilerInitialize;
	__typeof__(&cuptiDeviceGetChipName) GetChipName;
} sassm_api;

static sassm_api api;
static int load_rc = 1; /* 1: not tried yet */
static char load_msg[512];

#define SM_SYM(lib, field, name) (*(void **)(&api.field) = dlsym((lib), (name)))

static void resolve(void *lib)
{
	SM_SYM(lib, GetNumOfMetrics, "cuptiSassMetricsGetNumOfMetrics");
	SM_SYM(lib, GetMetrics, "cuptiSassMetricsGetMetrics");
	SM_SYM(lib, GetProperties, "cuptiSassMetricsGetProperties");
	SM_SYM(lib, SetConfig, "cuptiSassMetricsSetConfig");
	SM_SYM(lib, UnsetConfig, "cuptiSassMetricsUnsetConfig");
	SM_SYM(lib, Enable, "cuptiSassMetricsEnable");
	SM_SYM(lib, Disable, "cuptiSassMetricsDisable");
	SM_SYM(lib, GetDataProperties, "cuptiSassMetricsGetDataProperties");
	SM_SYM(lib, FlushData, "cuptiSassMetricsFlushData");
	SM_SYM(lib, ProfilerInitialize, "cuptiProfilerInitialize");
	SM_SYM(lib, GetChipName, "cuptiDeviceGetChipName");
}

static int load(kb_err *err)
{
	if (load_rc == 1) {
		void *lib = kb_profile__cupti_lib(load_msg, sizeof load_msg);
		load_rc = lib ? KB_OK : KB_EUNSUP;
		if (lib) {
			resolve(lib);
			if (!api.GetNumOfMetrics || !api.GetMetrics || !api.GetProperties ||
			    !api.SetConfig || !api.UnsetConfig || !api.Enable || !api.Disable ||
			    !api.GetDataProperties || !api.FlushData || !api.ProfilerInitialize ||
			    !api.GetChipName) {
				snprintf(load_msg, sizeof load_msg,
					 "libcupti lacks the SASS metrics API (cuptiSassMetrics*, CUPTI 12.4+)");
				load_rc = KB_EUNSUP;
			}
		}
	}
	if (load_rc < 0)
		return kb_err_set(err, load_rc, KB_DOM_CUPTI, 0, "%s", load_msg);
	return KB_OK;
}

#define SASSM_NEEDS "SASS metrics (they need GPU performance counters)"

/* 0 for CUPTI_SUCCESS, else kb_profile__cupti_fail's code. */
static int sm_check(kb_err *err, CUptiResult r, const char *call, const char *file, int line)
{
	return r == CUPTI_SUCCESS ? KB_OK
				  : kb_profile__cupti_fail(err, (int)r, call, SASSM_NEEDS, file, line);
}

/* api.call(params): 0, or kb_profile__cupti_fail's code with err naming
 * the call; the caller jumps: if ((rc = SM_CALL(err, Enable, &ep)) < 0)
 * goto out; */
#define SM_CALL(err, call, params) \
	sm_check((err), api.call(params), "cuptiSassMetrics" #call, __FILE__, __LINE__)

/* ---- names ---------------------------------------------------------------------- */

/* Nsight Compute's source-view names first (its "L1 Wavefronts Shared" and
 * "... Ideal" columns), then the data-stage spellings other tools print. */
static const char *const exec_names[] = {"smsp__sass_inst_executed", NULL};
static const char *const wavefront_names[] = {
	"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared",
	"smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared", NULL};
static const char *const ideal_names[] = {
	"smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal",
	"smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_ideal", NULL};
static const char *const conflict_names[] = {
	"smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared",
	"smsp__sass_data_bank_conflicts_pipe_lsu_mem_shared", NULL};

const char *const *kb_profile_sassm_candidates(int role)
{
	switch (role) {
	case KB_SASSM_EXEC: return exec_names;
	case KB_SASSM_WAVEFRONTS: return wavefront_names;
	case KB_SASSM_IDEAL: return ideal_names;
	case KB_SASSM_CONFLICTS: return conflict_names;
	default: return NULL;
	}
}

/* This device's chip name ("GH100"), the profiler initialised first. */
static int chip_name(kb_device *d, char *chip, size_t n, kb_err *err)
{
	int rc = KB_OK;
	CUpti_Profiler_Initialize_Params ip = KB_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
	CUptiResult r = api.ProfilerInitialize(&ip);
	if (r != CUPTI_SUCCESS)
		return kb_profile__cupti_fail(err, (int)r, "cuptiProfilerInitialize", SASSM_NEEDS,
					      __FILE__, __LINE__);
	CUpti_Device_GetChipName_Params cp = KB_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
	cp.deviceIndex = (size_t)d->info.ordinal;
	r = api.GetChipName(&cp);
	if (r != CUPTI_SUCCESS)
		return kb_profile__cupti_fail(err, (int)r, "cuptiDeviceGetChipName", SASSM_NEEDS,
					      __FILE__, __LINE__);
	snprintf(chip, n, "%s", cp.pChipName ? cp.pChipName : "");
	return rc;
}

/* Resolves each role's first known name; ids[role] valid when name set. */
static int resolve_roles(const char *chip, kb_sassm *s, uint64_t *ids, kb_err *err)
{
	for (int k = 0; k < KB_SASSM_NROLES; k++) {
		const char *const *cand = kb_profile_sassm_candidates(k);
		CUptiResult last = CUPTI_SUCCESS;
		for (int i = 0; cand[i] && !s->name[k][0]; i++) {
			CUpti_SassMetrics_GetProperties_Params p =
				KB_CUPTI_PARAMS(CUpti_SassMetrics_GetProperties_Params);
			p.pChipName = chip;
			p.pMetricName = cand[i];
			last = api.GetProperties(&p);
			if (last == CUPTI_SUCCESS) {
				snprintf(s->name[k], sizeof s->name[k], "%s", cand[i]);
				ids[k] = p.metric.metricId;
			}
		}
		if (!s->name[k][0]) {
			snprintf(s->why[k], sizeof s->why[k], "%s has no SASS metric %s%s", chip, cand[0],
				 cand[1] ? " (nor its other spellings)" : "");
			if (last == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || last == CUPTI_ERROR_NOT_SUPPORTED ||
			    last == CUPTI_ERROR_NOT_INITIALIZED)
				return kb_profile__cupti_fail(err, (int)last, "cuptiSassMetricsGetProperties",
							      SASSM_NEEDS, __FILE__, __LINE__);
		}
	}
	if (!s->name[KB_SASSM_EXEC][0])
		return kb_err_set(err, KB_EUNSUP, KB_DOM_CUPTI, 0, "SASS metrics: %s",
				  s->why[KB_SASSM_EXEC]);
	return KB_OK;
}

/* ---- the session ------------------------------------------------------------------ */

/* The role of a metric id, or -1. */
static int role_of(const kb_sassm *s, const uint64_t *ids, uint64_t id)
{
	for (int k = 0; k < KB_SASSM_NROLES; k++)
		if (s->name[k][0] && ids[k] == id)
			return k;
	return -1;
}

/* GetDataProperties, FlushData, and the records into s. */
static int flush(CUcontext ctx, kb_sassm *s, const uint64_t *ids, kb_err *err)
{
	int rc = KB_OK;
	CUpti_SassMetrics_Data *data = NULL;
	CUpti_SassMetrics_InstanceValue *vals = NULL;
	CUpti_SassMetricsGetDataProperties_Params dp =
		KB_CUPTI_PARAMS(CUpti_SassMetricsGetDataProperties_Params);
	dp.ctx = ctx;
	if ((rc = SM_CALL(err, GetDataProperties, &dp)) < 0)
		goto out;
	size_t nrec = dp.numOfPatchedInstructionRecords, ninst = dp.numOfInstances;
	if (nrec == 0 || ninst == 0) {
		rc = kb_err_set(err, KB_ERROR, KB_DOM_CUPTI, 0,
				"SASS metrics: CUPTI patched no instruction of the launch (0 records)");
		goto out;
	}
	data = kb_xcalloc(nrec, sizeof *data);
	vals = kb_xcalloc(nrec * ninst, sizeof *vals);
	/* structSize left 0, as NVIDIA's sample leaves it (the header's
	 * comment names another struct's size for it) */
	for (size_t i = 0; i < nrec; i++)
		data[i].pInstanceValues = vals + i * ninst;
	CUpti_SassMetricsFlushData_Params fp = KB_CUPTI_PARAMS(CUpti_SassMetricsFlushData_Params);
	fp.ctx = ctx;
	fp.numOfPatchedInstructionRecords = nrec;
	fp.numOfInstances = ninst;
	fp.pMetricsData = data;
	if ((rc = SM_CALL(err, FlushData, &fp)) < 0)
		goto out;
	for (size_t i = 0; i < nrec; i++)
		for (size_t k = 0; k < ninst; k++) {
			const CUpti_SassMetrics_InstanceValue *v = &data[i].pInstanceValues[k];
			kb_profile_sassm_add(s, data[i].functionName, data[i].pcOffset,
					     role_of(s, ids, v->metricId), v->value);
		}
out:
	free(data);
	free(vals);
	return rc;
}

/* Enable .. launch .. sync .. flush .. Disable (always, once enabled). */
static int enabled_launch(kb_device *d, kb_launch_fn launch, void *ctx, kb_sassm *s,
			  const uint64_t *ids, kb_err *err)
{
	int rc = KB_OK;
	bool enabled = false;
	CUpti_SassMetricsEnable_Params ep = KB_CUPTI_PARAMS(CUpti_SassMetricsEnable_Params);
	ep.ctx = d->ctx;
	ep.enableLazyPatching = 1;
	if ((rc = SM_CALL(err, Enable, &ep)) < 0)
		goto out;
	enabled = true;
	if ((rc = launch(ctx, err)) < 0)
		goto out;
	s->launches = 1;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
	rc = flush(d->ctx, s, ids, err);
out:
	if (enabled) {
		CUpti_SassMetricsDisable_Params xp = KB_CUPTI_PARAMS(CUpti_SassMetricsDisable_Params);
		xp.ctx = d->ctx;
		CUptiResult r = api.Disable(&xp);
		if (r != CUPTI_SUCCESS && rc == KB_OK)
			rc = kb_profile__cupti_fail(err, (int)r, "cuptiSassMetricsDisable", SASSM_NEEDS,
						    __FILE__, __LINE__);
	}
	return rc;
}

int kb_profile_sassm_collect(kb_device *d, kb_launch_fn launch, void *ctx, kb_sassm *out,
			     kb_err *err)
{
	memset(out, 0, sizeof *out);
	if (!d || !d->ctx)
		return kb_err_set(err, KB_ENODEV, KB_DOM_CUDA, 0, "SASS metrics need an open GPU");
	if (!launch)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "SASS metrics need a launch function");
	int rc = load(err);
	if (rc < 0)
		return rc;
	double t0 = kb_now_ms();
	char chip[64];
	uint64_t ids[KB_SASSM_NROLES] = {0};
	bool configured = false;
	if ((rc = KB_CU(err, cuCtxSetCurrent(d->ctx))) < 0)
		goto out;
	/* nothing in flight at Enable */
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
	if ((rc = chip_name(d, chip, sizeof chip, err)) < 0 ||
	    (rc = resolve_roles(chip, out, ids, err)) < 0)
		goto out;
	CUpti_SassMetrics_Config cfg[KB_SASSM_NROLES];
	size_t ncfg = 0;
	for (int k = 0; k < KB_SASSM_NROLES; k++)
		if (out->name[k][0])
			cfg[ncfg++] = (CUpti_SassMetrics_Config){
				.metricId = ids[k],
				.outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU};
	CUpti_SassMetricsSetConfig_Params sp = KB_CUPTI_PARAMS(CUpti_SassMetricsSetConfig_Params);
	sp.numOfMetricConfig = ncfg;
	sp.pConfigs = cfg;
	sp.deviceIndex = (uint32_t)d->info.ordinal;
	if ((rc = SM_CALL(err, SetConfig, &sp)) < 0)
		goto out;
	configured = true;
	rc = enabled_launch(d, launch, ctx, out, ids, err);
out:
	if (configured) {
		CUpti_SassMetricsUnsetConfig_Params up =
			KB_CUPTI_PARAMS(CUpti_SassMetricsUnsetConfig_Params);
		up.deviceIndex = (uint32_t)d->info.ordinal;
		CUptiResult r = api.UnsetConfig(&up);
		if (r != CUPTI_SUCCESS && rc == KB_OK)
			rc = kb_profile__cupti_fail(err, (int)r, "cuptiSassMetricsUnsetConfig",
						    SASSM_NEEDS, __FILE__, __LINE__);
	}
	out->ms = kb_now_ms() - t0;
	if (rc < 0)
		kb_profile_sassm_free(out);
	return rc;
}

int kb_profile_sassm_list(kb_device *d, kb_buf *out, kb_err *err)
{
	if (!d || !d->ctx)
		return kb_err_set(err, KB_ENODEV, KB_DOM_CUDA, 0, "SASS metrics need an open GPU");
	int rc = load(err);
	if (rc < 0)
		return rc;
	char chip[64];
	CUpti_SassMetrics_MetricDetails *m = NULL;
	if ((rc = KB_CU(err, cuCtxSetCurrent(d->ctx))) < 0)
		goto out;
	if ((rc = chip_name(d, chip, sizeof chip, err)) < 0)
		goto out;
	CUpti_SassMetrics_GetNumOfMetrics_Params np =
		KB_CUPTI_PARAMS(CUpti_SassMetrics_GetNumOfMetrics_Params);
	np.pChipName = chip;
	if ((rc = SM_CALL(err, GetNumOfMetrics, &np)) < 0)
		goto out;
	m = kb_xcalloc(np.numOfMetrics + 1, sizeof *m);
	CUpti_SassMetrics_GetMetrics_Params gp = KB_CUPTI_PARAMS(CUpti_SassMetrics_GetMetrics_Params);
	gp.pChipName = chip;
	gp.numOfMetrics = np.numOfMetrics;
	gp.pMetricsList = m;
	if ((rc = SM_CALL(err, GetMetrics, &gp)) < 0)
		goto out;
	kb_buf_catf(out, "%s: %zu SASS metrics\n", chip, np.numOfMetrics);
	for (size_t i = 0; i < np.numOfMetrics; i++)
		kb_buf_catf(out, "%s: %s\n", m[i].pMetricName ? m[i].pMetricName : "?",
			    m[i].pMetricDescription ? m[i].pMetricDescription : "");
out:
	free(m);
	return rc;
}
