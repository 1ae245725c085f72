/*
 * activity.c - each timed launch's kernel duration from GPU timestamps,
 * through the CUPTI Activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
 * records CUpti_ActivityKernel10 in CUDA 13.0, start/end in ns).  Unlike
 * device events, these exclude the GPU front end's launch latency, and
 * unlike counters they need no profiling permission.
 *
 * CUPTI is loaded with dlopen("libcupti.so.13") (style rule 11); cupti
 * headers are used for the types only.  Owns CUPTI's activity buffers and
 * the records collected between activity_start and activity_stop; does not
 * own devices, streams or what is timed (timing.c).
 *
 * Invariants:
 *  - The buffer callbacks are registered once per process; activity is
 *    enabled only between start and stop, so the runner (long-lived) can
 *    start and stop any number of times.  One session at a time.
 *  - CUPTI may call the callbacks on its own thread (or inside
 *    cuptiActivityFlushAll on ours): the pool of free buffers, the record
 *    array and the name table are only touched under `lock`, and `lock` is
 *    never held across a CUPTI call.
 *  - Buffers (8 MB, 8-byte aligned) are kept in a small pool and reused, so
 *    a session does not pay page faults on fresh memory.
 *  - Kernel names are copied (interned) while their record is read, so no
 *    CUPTI-owned string is used after its buffer went back.
 *  - CUPTI refusing anything (library missing, no driver, another
 *    subscriber such as ncu/nsys, privileges) is KB_EUNSUP: timing then
 *    goes on with events only.
 */
#include "counters.h"

#include <cupti_activity.h>
#include <cupti_result.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_BYTES ((size_t)8 << 20)
#define BUF_ALIGN 8                 /* ACTIVITY_RECORD_ALIGNMENT in CUPTI samples */
#define POOL_MAX 8
#define RECORDS_MAX (1 << 21)       /* per session; more count as dropped */
#define NAMES_MAX 256

/* ---- loading ------------------------------------------------------------------ */

typedef struct {
	__typeof__(&cuptiActivityEnable) Enable;
	__typeof__(&cuptiActivityDisable) Disable;
	__typeof__(&cuptiActivityRegisterCallbacks) RegisterCallbacks;
	__typeof__(&cuptiActivityFlushAll) FlushAll;
	__typeof__(&cuptiActivityGetNextRecord) GetNextRecord;
	__typeof__(&cuptiActivityGetNumDroppedRecords) GetNumDropped; /* optional */
} cupti_api;

static cupti_api api;
static void *cupti_lib;
static int load_rc = 1; /* 1: not tried yet */
static char load_msg[512];
static bool registered;

#define CUPTI_SYM(field, name) (*(void **)(&api.field) = dlsym(cupti_lib, name))

static int load(void)
{
	if (load_rc != 1)
		return load_rc;
	cupti_lib = kb_profile__cupti_lib(load_msg, sizeof load_msg);
	if (!cupti_lib)
		return load_rc = KB_EUNSUP;
	CUPTI_SYM(Enable, "cuptiActivityEnable");
	CUPTI_SYM(Disable, "cuptiActivityDisable");
	CUPTI_SYM(RegisterCallbacks, "cuptiActivityRegisterCallbacks");
	CUPTI_SYM(FlushAll, "cuptiActivityFlushAll");
	CUPTI_SYM(GetNextRecord, "cuptiActivityGetNextRecord");
	CUPTI_SYM(GetNumDropped, "cuptiActivityGetNumDroppedRecords");
	if (!api.Enable || !api.Disable || !api.RegisterCallbacks || !api.FlushAll ||
	    !api.GetNextRecord) {
		snprintf(load_msg, sizeof load_msg, "libcupti lacks the Activity API entry points");
		return load_rc = KB_EUNSUP;
	}
	return load_rc = KB_OK;
}

/* Fills err from a CUptiResult; always KB_EUNSUP (timing goes on without). */
static int cupti_err(kb_err *err, CUptiResult r, const char *call, const char *file, int line)
{
	kb_profile__cupti_fail(err, (int)r, call, "CUPTI kernel timestamps", file, line);
	return KB_EUNSUP;
}

/* 0 for CUPTI_SUCCESS, else cupti_err's KB_EUNSUP. */
static int cupti_check(kb_err *err, CUptiResult r, const char *call, const char *file, int line)
{
	return r == CUPTI_SUCCESS ? KB_OK : cupti_err(err, r, call, file, line);
}

/* api.call args: 0, or KB_EUNSUP with err naming the call; the caller
 * jumps: if ((rc = ACT_CALL(err, Flush, (0))) < 0) goto out; */
#define ACT_CALL(err, call, args) cupti_check((err), api.call args, "cupti" #call, __FILE__, __LINE__)

/* ---- collected state (under lock) ------------------------------------------ */

typedef struct {
	uint64_t start, end;
	int name;                   /* index into names */
} krec;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool[POOL_MAX];
static int npool;
static krec *recs;
static int nrecs, recs_cap;
static uint64_t dropped;
static char *names[NAMES_MAX];  /* kernel names seen this session, copied */
static int nnames;
static int active;              /* 0 none, else the activity kind enabled */

static int intern(const char *name)
{
	if (!name)
		name = "";
	for (int i = nnames - 1; i >= 0; i--)
		if (!strcmp(names[i], name))
			return i;
	if (nnames == NAMES_MAX)
		return -1;
	names[nnames] = kb_xstrdup(name);
	return nnames++;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;
	pthread_mutex_lock(&lock);
	if (npool > 0)
		b = pool[--npool];
	pthread_mutex_unlock(&lock);
	if (!b)
		b = aligned_alloc(BUF_ALIGN, BUF_BYTES);
	*buffer = b;
	*size = b ? BUF_BYTES : 0;
	*max_records = 0;
}

static void take_record(const CUpti_Activity *r)
{
	if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && r->kind != CUPTI_ACTIVITY_KIND_KERNEL)
		return;
	const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
	if (nrecs >= RECORDS_MAX || k->end <= k->start) {
		dropped++;
		return;
	}
	krec *e = KB_PUSH(recs, nrecs, recs_cap);
	e->start = k->start;
	e->end = k->end;
	e->name = intern(k->name);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *r = NULL;
	size_t nd = 0;
	if (api.GetNumDropped && api.GetNumDropped(ctx, stream, &nd) != CUPTI_SUCCESS)
		nd = 0;
	pthread_mutex_lock(&lock);
	dropped += nd;
	if (active && buffer)
		while (api.GetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
			take_record(r);
	if (buffer && npool < POOL_MAX) {
		pool[npool++] = buffer;
		buffer = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(buffer);
}

static void reset_session(void)
{
	pthread_mutex_lock(&lock);
	nrecs = 0;
	dropped = 0;
	for (int i = 0; i < nnames; i++)
		free(names[i]);
	nnames = 0;
	pthread_mutex_unlock(&lock);
}

/* ---- sessions ------------------------------------------------------------------- */

/* Enables kernel activity records. Returns 0, or KB_EUNSUP with err saying
 * why (no CUPTI, another subscriber, privileges ...). */
int kb_profile__activity_start(kb_err *err)
{
	int rc = load();
	if (rc < 0)
		return kb_err_set(err, rc, KB_DOM_CUPTI, 0, "%s", load_msg);
	if (active)
		return kb_err_set(err, KB_EINVAL, KB_DOM_CUPTI, 0, "CUPTI activity already started");
	reset_session();
	if (!registered) {
		if ((rc = ACT_CALL(err, RegisterCallbacks, (buffer_requested, buffer_completed))) < 0)
			goto out;
		registered = true;
	}
	CUptiResult r = api.Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	int kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
	    r != CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
		kind = CUPTI_ACTIVITY_KIND_KERNEL; /* serialises kernels: timing does anyway */
		r = api.Enable(CUPTI_ACTIVITY_KIND_KERNEL);
	}
	if (r != CUPTI_SUCCESS)
		return cupti_err(err, r, "cuptiActivityEnable", __FILE__, __LINE__);
	pthread_mutex_lock(&lock);
	active = kind;
	pthread_mutex_unlock(&lock);
out:
	return rc;
}

static int by_start(const void *a, const void *b)
{
	const krec *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

/* Copies the durations of records named `symbol`, in start order. Under lock. */
static int collect(const char *symbol, double *durations_us, int max, int *n, kb_err *err)
{
	int want = -1;
	for (int i = 0; i < nnames && want < 0; i++)
		if (!strcmp(names[i], symbol))
			want = i;
	qsort(recs, (size_t)nrecs, sizeof *recs, by_start);
	for (int i = 0; i < nrecs && want >= 0; i++)
		if (recs[i].name == want && *n < max)
			durations_us[(*n)++] = (double)(recs[i].end - recs[i].start) * 1e-3;
	if (*n > 0 || nrecs == 0)
		return KB_OK;
	return kb_err_set(err, KB_ENOTFOUND, KB_DOM_CUPTI, 0,
			  "CUPTI saw %d kernel(s), none named %s (first: %s; %llu dropped)", nrecs,
			  symbol, nnames > 0 ? names[0] : "?", (unsigned long long)dropped);
}

/* Flushes and disables activity, then returns in durations_us (up to max,
 * launch order) the durations of the kernels named symbol (mangled, as the
 * cubin has it); others are dropped. The caller has synchronised the work.
 * Returns 0 (*n may be 0 when CUPTI saw no kernel), KB_ENOTFOUND when
 * kernels ran but none had that name, or KB_EUNSUP (no session / CUPTI
 * failed). */
int kb_profile__activity_stop(const char *symbol, double *durations_us, int max, int *n,
			      kb_err *err)
{
	*n = 0;
	int rc = KB_OK;
	pthread_mutex_lock(&lock);
	int kind = active;
	pthread_mutex_unlock(&lock);
	if (!kind)
		return kb_err_set(err, KB_EUNSUP, KB_DOM_CUPTI, 0, "CUPTI activity not started");
	CUptiResult r = api.Disable((CUpti_ActivityKind)kind);
	CUptiResult f = api.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&lock);
	active = 0;
	if (r != CUPTI_SUCCESS || f != CUPTI_SUCCESS) {
		rc = cupti_err(err, r != CUPTI_SUCCESS ? r : f,
			       r != CUPTI_SUCCESS ? "cuptiActivityDisable" : "cuptiActivityFlushAll",
			       __FILE__, __LINE__);
	} else {
		rc = collect(symbol ? symbol : "", durations_us, max, n, err);
	}
	nrecs = 0;
	pthread_mutex_unlock(&lock);
	return rc;
}
