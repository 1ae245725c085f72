/*
 * pcsample.c - hot spots: which SASS instructions the warps of a kernel sat
 * on, and why, through CUPTI PC sampling (cupti_pcsampling.h; libcupti is
 * loaded with dlopen, the header gives the types only).  Owns one sampling
 * session per kb_profile_pcsample call: enable on the device's context,
 * configure, Start, the caller's launches, Stop, read, Disable.  Does not
 * own the kernel, its module or the mapping of PCs to SASS and source
 * (compile/sass.c; pc_offset indexes nvdisasm's per-function listing).
 *
 * Invariants:
 *  - Stall reasons are looked up by name from cuptiPCSamplingGetStallReasons
 *    every session; no index is hard-coded.
 *  - Samples are the "<r>" reasons (names starting with
 *    smsp__pcsamp_warps_issue_stalled_, not ending in _not_issued): on the
 *    H100 they add up exactly to CUPTI's totalSamples, one reason per sample,
 *    "selected" being the issuing warp.  The "<r>_not_issued" counts are a
 *    subset of the same samples (nothing issued that cycle), not extra ones,
 *    so they are left out of records and shares; so are the two non-stall
 *    counters in the same list (smsp__pcsamp_sample_count,
 *    smsp__pcsamp_samples_data_dropped).  A PC's samples = the sum of its
 *    reasons; *total = the sum over all records (user kernels only).
 *  - Records are keyed by (function name, pcOffset), so launches through
 *    several module instances of one cubin add up.
 *  - Records CUPTI put in SAMPLING_DATA_BUFFER by the time Stop returns are
 *    read first, then GetData is drained (same buffer, as NVIDIA's sample
 *    does) until it returns no PC and none remain.  GetData is never called
 *    while sampling runs.
 *  - CUPTI's functionName strings are copied while read and never freed.
 *    The header says the user frees them once done, but CUPTI 13.0 caches
 *    them per cubin across sessions: on an H200, three sessions on fresh
 *    modules of one cubin got the same pointer, so freeing it after the
 *    first session handed freed memory to the second (garbage names, then
 *    heap corruption inside cuptiPCSamplingStop).  The cost is one short
 *    string per sampled function per module load (a module reloaded around
 *    every launch gave one pointer per load), CUPTI's to keep.
 *  - Every path out of a session after Enable calls Stop (when started) and
 *    Disable, so the next call in the process starts clean.
 *  - Permission refusals (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES and the
 *    virtualised variant) are KB_EPERM with the fix spelled out; another
 *    CUPTI client or an unsupported device is KB_EUNSUP.
 */
#include "counters.h"

#include <cupti_pcsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLING_PERIOD 9            /* 2^9 cycles: ~1 sample/SM/0.26 us at 1.98 GHz */
#define COLLECT_PCS 4096             /* records per read of the buffer */
#define SCRATCH_BYTES ((size_t)4 << 20) /* CUPTI's PC table: default 1 MB ~ 5500 PCs */
#define STALL_PREFIX "smsp__pcsamp_warps_issue_stalled_"
#define NOT_ISSUED "_not_issued"

/* ---- loading ------------------------------------------------------------------ */

typedef struct {
	__typeof__(&cuptiPCSamplingEnable) Enable;
	__typeof__(&cuptiPCSamplingDisable) Disable;
	__typeof__(&cuptiPCSamplingGetNumStallReasons) GetNumStallReasons;
	__typeof__(&cuptiPCSamplingGetStallReasons) GetStallReasons;
	__typeof__(&cuptiPCSamplingSetConfigurationAttribute) SetConfigurationAttribute;
	__typeof__(&cuptiPCSamplingStart) Start;
	__typeof__(&cuptiPCSamplingStop) Stop;
	__typeof__(&cuptiPCSamplingGetData) GetData;
	__typeof__(&cuptiProfilerInitialize) ProfilerInitialize; /* optional */
} pcs_api;

static pcs_api api;
static void *cupti_lib;
static int load_rc = 1; /* 1: not tried yet */
static char load_msg[512];

#define PCS_SYM(field, name) (*(void **)(&api.field) = dlsym(cupti_lib, name))

static int load(kb_err *err)
{
	if (load_rc == 1) {
		cupti_lib = kb_profile__cupti_lib(load_msg, sizeof load_msg);
		load_rc = cupti_lib ? KB_OK : KB_EUNSUP;
	}
	if (load_rc == KB_OK && !api.Enable) {
		PCS_SYM(Enable, "cuptiPCSamplingEnable");
		PCS_SYM(Disable, "cuptiPCSamplingDisable");
		PCS_SYM(GetNumStallReasons, "cuptiPCSamplingGetNumStallReasons");
		PCS_SYM(GetStallReasons, "cuptiPCSamplingGetStallReasons");
		PCS_SYM(SetConfigurationAttribute, "cuptiPCSamplingSetConfigurationAttribute");
		PCS_SYM(Start, "cuptiPCSamplingStart");
		PCS_SYM(Stop, "cuptiPCSamplingStop");
		PCS_SYM(GetData, "cuptiPCSamplingGetData");
		PCS_SYM(ProfilerInitialize, "cuptiProfilerInitialize");
		if (!api.Enable || !api.Disable || !api.GetNumStallReasons ||
		    !api.GetStallReasons || !api.SetConfigurationAttribute || !api.Start ||
		    !api.Stop || !api.GetData) {
			snprintf(load_msg, sizeof load_msg,
				 "libcupti lacks the PC sampling API (cuptiPCSampling*)");
			api.Enable = NULL;
			load_rc = KB_EUNSUP;
		}
	}
	if (load_rc < 0)
		return kb_err_set(err, load_rc, KB_DOM_CUPTI, 0, "%s", load_msg);
	return KB_OK;
}

#define cupti_fail(err, r, call, file, line) \
	kb_profile__cupti_fail((err), (int)(r), (call), "PC sampling (it needs GPU performance counters)", \
			       (file), (line))

/* 0 for CUPTI_SUCCESS, else cupti_fail's code. */
static int pcs_check(kb_err *err, CUptiResult r, const char *call, const char *file, int line)
{
	return r == CUPTI_SUCCESS ? KB_OK : cupti_fail(err, r, call, file, line);
}

/* api.call(params): 0, or cupti_fail's code with err naming the call; the
 * caller jumps: if ((rc = PCS_CALL(err, Start, &sp)) < 0) goto out; */
#define PCS_CALL(err, call, params) \
	pcs_check((err), api.call(params), "cuptiPCSampling" #call, __FILE__, __LINE__)

/* ---- one session's state ------------------------------------------------------ */

enum { R_SKIP, R_BASE }; /* what a stall-reason slot counts for */

typedef struct {
	CUcontext ctx;
	/* stall reasons, as CUPTI listed them */
	size_t nreasons;
	uint32_t *index;          /* CUPTI's index of slot i */
	char **name;              /* slot i's full name (128 bytes each) */
	int *base;                /* slot i -> base reason number, or -1 (skipped) */
	char **base_name;         /* base reason number -> short name (into name[]) */
	int nbase;
	/* the buffer CUPTI fills */
	CUpti_PCSamplingData buf;
	/* accumulated (function, pc) entries, counts nbase per entry */
	char **funcs;             /* distinct function names, copied */
	int nfuncs, funcs_cap;
	struct pc_key { int func; uint64_t pc; int at; } *keys;
	int nkeys, keys_cap;
	uint64_t *counts;         /* keys_cap * nbase */
	kb_profile__pcs_stats *st;
} session;

static void session_free(session *s)
{
	for (size_t i = 0; s->name && i < s->nreasons; i++)
		free(s->name[i]);
	free(s->name);
	free(s->index);
	free(s->base);
	free(s->base_name);
	for (size_t i = 0; s->buf.pPcData && i < s->buf.collectNumPcs; i++)
		free(s->buf.pPcData[i].stallReason);
	free(s->buf.pPcData);
	for (int i = 0; i < s->nfuncs; i++)
		free(s->funcs[i]);
	free(s->funcs);
	free(s->keys);
	free(s->counts);
}

/* Reads the stall-reason table and classifies each slot. */
static int read_reasons(session *s, kb_err *err)
{
	int rc = KB_OK;
	CUpti_PCSamplingGetNumStallReasonsParams np = {
		.size = CUpti_PCSamplingGetNumStallReasonsParamsSize, .ctx = s->ctx,
		.numStallReasons = &s->nreasons};
	if ((rc = PCS_CALL(err, GetNumStallReasons, &np)) < 0)
		goto out;
	if (s->nreasons == 0)
		return kb_err_set(err, KB_EUNSUP, KB_DOM_CUPTI, 0,
				  "CUPTI lists no PC sampling stall reasons for this device");
	s->index = kb_xcalloc(s->nreasons, sizeof *s->index);
	s->name = kb_xcalloc(s->nreasons, sizeof *s->name);
	for (size_t i = 0; i < s->nreasons; i++)
		s->name[i] = kb_xcalloc(1, CUPTI_STALL_REASON_STRING_SIZE);
	CUpti_PCSamplingGetStallReasonsParams gp = {
		.size = CUpti_PCSamplingGetStallReasonsParamsSize, .ctx = s->ctx,
		.numStallReasons = s->nreasons, .stallReasonIndex = s->index,
		.stallReasons = s->name};
	if ((rc = PCS_CALL(err, GetStallReasons, &gp)) < 0)
		goto out;
	s->base = kb_xcalloc(s->nreasons, sizeof *s->base);
	s->base_name = kb_xcalloc(s->nreasons, sizeof *s->base_name);
	size_t plen = strlen(STALL_PREFIX), nlen = strlen(NOT_ISSUED);
	for (size_t i = 0; i < s->nreasons; i++) {
		char *nm = s->name[i];
		nm[CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
		size_t len = strlen(nm);
		s->base[i] = -1;
		if (len <= plen || strncmp(nm, STALL_PREFIX, plen) != 0 ||
		    (len >= nlen && strcmp(nm + len - nlen, NOT_ISSUED) == 0))
			continue;
		s->base_name[s->nbase] = nm + plen;
		s->base[i] = s->nbase++;
	}
	if (s->st)
		s->st->nreasons = (int)s->nreasons, s->st->nbase = s->nbase;
	if (s->nbase == 0)
		return kb_err_set(err, KB_EUNSUP, KB_DOM_CUPTI, 0,
				  "CUPTI lists no " STALL_PREFIX "* stall reasons (first: %s)",
				  s->name[0]);
out:
	return rc;
}

static void alloc_buffer(session *s)
{
	s->buf.size = sizeof s->buf;
	s->buf.collectNumPcs = COLLECT_PCS;
	s->buf.pPcData = kb_xcalloc(COLLECT_PCS, sizeof *s->buf.pPcData);
	for (size_t i = 0; i < COLLECT_PCS; i++) {
		s->buf.pPcData[i].size = sizeof *s->buf.pPcData;
		s->buf.pPcData[i].stallReason =
			kb_xcalloc(s->nreasons, sizeof *s->buf.pPcData[i].stallReason);
	}
}

/* Sets every attribute and checks each one's status. */
static int configure(session *s, kb_err *err)
{
	CUpti_PCSamplingConfigurationInfo a[8];
	memset(a, 0, sizeof a);
	int n = 0;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
	a[n++].attributeData.collectionModeData.collectionMode =
		CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
	a[n++].attributeData.enableStartStopControlData.enableStartStopControl = 1;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
	a[n++].attributeData.samplingPeriodData.samplingPeriod = SAMPLING_PERIOD;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
	a[n].attributeData.stallReasonData.stallReasonCount = s->nreasons;
	a[n++].attributeData.stallReasonData.pStallReasonIndex = s->index;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
	a[n++].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BYTES;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
	a[n++].attributeData.outputDataFormatData.outputDataFormat =
		CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
	a[n].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
	a[n++].attributeData.samplingDataBufferData.samplingDataBuffer = &s->buf;
	static const char *const what[] = {
		"collection mode", "start/stop control", "sampling period", "stall reasons",
		"scratch buffer size", "output format", "sampling data buffer"};
	CUpti_PCSamplingConfigurationInfoParams p = {
		.size = CUpti_PCSamplingConfigurationInfoParamsSize, .ctx = s->ctx,
		.numAttributes = (size_t)n, .pPCSamplingConfigurationInfo = a};
	int rc = KB_OK;
	if ((rc = PCS_CALL(err, SetConfigurationAttribute, &p)) < 0)
		goto out;
	for (int i = 0; i < n; i++)
		if (a[i].attributeStatus != CUPTI_SUCCESS) {
			char call[96];
			snprintf(call, sizeof call, "cuptiPCSamplingSetConfigurationAttribute(%s)",
				 what[i]);
			return cupti_fail(err, a[i].attributeStatus, call, __FILE__, __LINE__);
		}
out:
	return rc;
}

/* The number of a function name in s->funcs (copied on first sight: CUPTI's
 * string is only read here, never kept or freed - see the top comment). */
static int intern_func(session *s, const char *cupti_name)
{
	const char *nm = cupti_name ? cupti_name : "?";
	for (int i = s->nfuncs - 1; i >= 0; i--)
		if (!strcmp(s->funcs[i], nm))
			return i;
	*KB_PUSH(s->funcs, s->nfuncs, s->funcs_cap) = kb_xstrdup(nm);
	return s->nfuncs - 1;
}

/* Adds the buffer's totalNumPcs records to the entries. */
static void take_buffer(session *s)
{
	const CUpti_PCSamplingData *b = &s->buf;
	size_t npcs = b->totalNumPcs < b->collectNumPcs ? b->totalNumPcs : b->collectNumPcs;
	if (s->st) {
		s->st->cupti_total += b->totalSamples;
		s->st->dropped += b->droppedSamples;
		s->st->non_user += b->nonUsrKernelsTotalSamples;
		s->st->hw_buffer_full |= b->hardwareBufferFull != 0;
		s->st->pcs_read += (int)npcs;
	}
	for (size_t i = 0; i < npcs; i++) {
		const CUpti_PCSamplingPCData *pc = &b->pPcData[i];
		int oldcap = s->keys_cap;
		struct pc_key *k = KB_PUSH(s->keys, s->nkeys, s->keys_cap);
		if (s->keys_cap != oldcap) {
			s->counts = kb_xrealloc(s->counts, (size_t)s->keys_cap * (size_t)s->nbase *
							   sizeof *s->counts);
		}
		k->func = intern_func(s, pc->functionName);
		k->pc = pc->pcOffset;
		k->at = s->nkeys - 1;
		uint64_t *c = s->counts + (size_t)k->at * (size_t)s->nbase;
		memset(c, 0, (size_t)s->nbase * sizeof *c);
		size_t nr = pc->stallReasonCount < s->nreasons ? pc->stallReasonCount : s->nreasons;
		for (size_t j = 0; j < nr; j++) {
			uint32_t idx = pc->stallReason[j].pcSamplingStallReasonIndex;
			for (size_t r = 0; r < s->nreasons; r++)
				if (s->index[r] == idx) {
					if (s->base[r] >= 0)
						c[s->base[r]] += pc->stallReason[j].samples;
					break;
				}
		}
	}
}

/* GetData until CUPTI has nothing left. */
static int drain(session *s, kb_err *err)
{
	int rc = KB_OK;
	for (int guard = 0; guard < 1 << 20; guard++) {
		s->buf.totalNumPcs = 0;
		s->buf.remainingNumPcs = 0;
		CUpti_PCSamplingGetDataParams gp = {
			.size = CUpti_PCSamplingGetDataParamsSize, .ctx = s->ctx,
			.pcSamplingData = &s->buf};
		if ((rc = PCS_CALL(err, GetData, &gp)) < 0)
			goto out;
		if (s->st)
			s->st->getdata_calls++;
		take_buffer(s);
		if (s->buf.totalNumPcs == 0 && s->buf.remainingNumPcs == 0)
			break;
	}
out:
	return rc;
}

/* ---- results ------------------------------------------------------------------ */

static int by_func_pc(const void *a, const void *b)
{
	const struct pc_key *x = a, *y = b;
	if (x->func != y->func)
		return x->func - y->func;
	return (x->pc > y->pc) - (x->pc < y->pc);
}

static int by_samples(const void *a, const void *b)
{
	const kb_pc_record *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	int c = strcmp(x->function, y->function);
	return c ? c : (x->pc_offset > y->pc_offset) - (x->pc_offset < y->pc_offset);
}

static int stall_by_samples(const void *a, const void *b)
{
	const kb_stall *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void record_clear(kb_pc_record *r)
{
	for (int j = 0; j < r->nstalls; j++)
		free(r->stalls[j].name);
	free(r->stalls);
	free(r->function);
	memset(r, 0, sizeof *r);
}

/* One record from merged counts c (nbase of them); samples 0 when none. */
static void make_record(const session *s, int func, uint64_t pc, const uint64_t *c,
			kb_pc_record *r)
{
	memset(r, 0, sizeof *r);
	r->function = kb_xstrdup(s->funcs[func]);
	r->pc_offset = pc;
	r->stalls = kb_xcalloc((size_t)s->nbase, sizeof *r->stalls);
	for (int i = 0; i < s->nbase; i++) {
		if (!c[i])
			continue;
		r->stalls[r->nstalls].name = kb_xstrdup(s->base_name[i]);
		r->stalls[r->nstalls++].samples = c[i];
		r->samples += c[i];
	}
	qsort(r->stalls, (size_t)r->nstalls, sizeof *r->stalls, stall_by_samples);
}

/* Merges the entries per (function, pc) into sorted records. */
static void build_records(session *s, kb_pc_record **recs, int *n, uint64_t *total)
{
	qsort(s->keys, (size_t)s->nkeys, sizeof *s->keys, by_func_pc);
	kb_pc_record *out = s->nkeys ? kb_xcalloc((size_t)s->nkeys, sizeof *out) : NULL;
	uint64_t *sum = kb_xcalloc((size_t)s->nbase + 1, sizeof *sum);
	int nout = 0;
	for (int i = 0; i < s->nkeys;) {
		int j = i;
		memset(sum, 0, (size_t)s->nbase * sizeof *sum);
		for (; j < s->nkeys && s->keys[j].func == s->keys[i].func &&
		       s->keys[j].pc == s->keys[i].pc; j++) {
			const uint64_t *c = s->counts + (size_t)s->keys[j].at * (size_t)s->nbase;
			for (int r = 0; r < s->nbase; r++)
				sum[r] += c[r];
		}
		make_record(s, s->keys[i].func, s->keys[i].pc, sum, &out[nout]);
		if (out[nout].samples > 0) {
			*total += out[nout].samples;
			nout++;
		} else {
			record_clear(&out[nout]);
		}
		i = j;
	}
	free(sum);
	if (nout)
		qsort(out, (size_t)nout, sizeof *out, by_samples);
	if (!nout) {
		free(out);
		out = NULL;
	}
	*recs = out;
	*n = nout;
}

/* ---- the session ---------------------------------------------------------------- */

/* Enable, retried once after cuptiProfilerInitialize when CUPTI wants it. */
static int enable(session *s, kb_err *err)
{
	CUpti_PCSamplingEnableParams p = {.size = CUpti_PCSamplingEnableParamsSize,
					  .ctx = s->ctx};
	CUptiResult r = api.Enable(&p);
	if (r == CUPTI_ERROR_NOT_INITIALIZED && api.ProfilerInitialize) {
		CUpti_Profiler_Initialize_Params ip = {
			.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
		if (api.ProfilerInitialize(&ip) == CUPTI_SUCCESS)
			r = api.Enable(&p);
	}
	if (r != CUPTI_SUCCESS)
		return cupti_fail(err, r, "cuptiPCSamplingEnable", __FILE__, __LINE__);
	return KB_OK;
}

/* Start, the launches, sync, Stop (always, once started), then the reads. */
static int sample(session *s, kb_device *d, kb_launch_fn launch, void *ctx, int repeats,
		  kb_err *err)
{
	int rc = KB_OK;
	bool started = false;
	double t = kb_now_ms();
	CUpti_PCSamplingStartParams sp = {.size = CUpti_PCSamplingStartParamsSize, .ctx = s->ctx};
	if ((rc = PCS_CALL(err, Start, &sp)) < 0)
		goto out;
	started = true;
	for (int i = 0; i < repeats && rc == KB_OK; i++)
		rc = launch(ctx, err);
	if (rc < 0)
		goto out;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
out:
	if (started) {
		CUpti_PCSamplingStopParams tp = {.size = CUpti_PCSamplingStopParamsSize,
						 .ctx = s->ctx};
		CUptiResult r = api.Stop(&tp);
		if (r != CUPTI_SUCCESS && rc == KB_OK)
			rc = cupti_fail(err, r, "cuptiPCSamplingStop", __FILE__, __LINE__);
	}
	if (s->st)
		s->st->ms_run = kb_now_ms() - t;
	if (rc < 0)
		return rc;
	t = kb_now_ms();
	take_buffer(s);             /* what Stop left in SAMPLING_DATA_BUFFER */
	if (s->st)
		s->st->pcs_at_stop = s->st->pcs_read;
	rc = drain(s, err);
	if (s->st)
		s->st->ms_getdata = kb_now_ms() - t;
	return rc;
}

/* Like kb_profile_pcsample; st (may be NULL) gets what the session saw and
 * the wall time of each step. */
int kb_profile__pcsample(kb_device *d, kb_launch_fn launch, void *ctx, int repeats,
			 kb_pc_record **recs, int *n, uint64_t *total,
			 kb_profile__pcs_stats *st, kb_err *err)
{
	*recs = NULL;
	*n = 0;
	*total = 0;
	if (st)
		memset(st, 0, sizeof *st);
	if (!d || !d->ctx)
		return kb_err_set(err, KB_ENODEV, KB_DOM_CUDA, 0, "PC sampling needs an open GPU");
	if (!launch || repeats < 1)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "PC sampling needs a launch function and repeats >= 1");
	int rc = load(err);
	if (rc < 0)
		return rc;
	session s = {.ctx = d->ctx, .st = st};
	bool enabled = false;
	if ((rc = KB_CU(err, cuCtxSetCurrent(d->ctx))) < 0)
		goto out;
	double t = kb_now_ms();
	if ((rc = enable(&s, err)) < 0)
		goto out;
	enabled = true;
	if (st)
		st->ms_enable = kb_now_ms() - t;
	t = kb_now_ms();
	if ((rc = read_reasons(&s, err)) < 0)
		goto out;
	alloc_buffer(&s);
	if ((rc = configure(&s, err)) < 0)
		goto out;
	if (st)
		st->ms_config = kb_now_ms() - t;
	rc = sample(&s, d, launch, ctx, repeats, err);
out:
	if (enabled) {
		t = kb_now_ms();
		CUpti_PCSamplingDisableParams dp = {.size = CUpti_PCSamplingDisableParamsSize,
						    .ctx = s.ctx};
		CUptiResult r = api.Disable(&dp);
		if (r != CUPTI_SUCCESS && rc == KB_OK)
			rc = cupti_fail(err, r, "cuptiPCSamplingDisable", __FILE__, __LINE__);
		if (st)
			st->ms_disable = kb_now_ms() - t;
	}
	if (rc == KB_OK)
		build_records(&s, recs, n, total);
	session_free(&s);
	return rc;
}

int kb_profile_pcsample(kb_device *d, kb_launch_fn launch, void *ctx, int repeats,
			kb_pc_record **recs, int *n, uint64_t *total, kb_err *err)
{
	return kb_profile__pcsample(d, launch, ctx, repeats, recs, n, total, NULL, err);
}

/* Frees the records and the array itself (NULL is fine). */
void kb_profile_pc_records_free(kb_pc_record *recs, int n)
{
	for (int i = 0; recs && i < n; i++)
		record_clear(&recs[i]);
	free(recs);
}
