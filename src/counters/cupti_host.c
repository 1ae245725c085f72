/*
 * cupti_host.c - libcupti and what its Profiler Host API says without a
 * GPU: loading the library and the function table the counter files share
 * (kb_profile__cupti), host objects (one per chip for offline checks), and
 * metric names: checked against the chip, with the base metrics ranked by
 * edit distance as suggestions for an unknown one, a rollup proposed for a
 * bare base name, and the names Nsight Compute computes itself pointed to
 * where kbench reports the same.
 *
 * libcupti.so.13 is loaded with dlopen (style rule 11) and never linked; its
 * headers give the types only.  cupti_profiler_host.h includes the C++
 * header <string> (and uses nothing from it): the build puts src/shim,
 * which holds an empty `string`, on the include path.  libcupti dlopens
 * libnvperf_host.so by name; we load it first from libcupti's own directory
 * so that it is found wherever libcupti was.
 *
 * It owns the function table and the load state, the offline host objects
 * per chip and the base metric names per chip (for suggestions); config
 * images are cupti_config.c's, the device and its collections cupti.c's.
 * Invariants: the library is loaded once per process (pthread_once: the
 * prep thread may come first); the per-chip tables are not locked: the
 * prep thread fills them before it is joined, everything else runs on the
 * caller's thread; bad metric names are one KB_EINVAL with a line per name,
 * an unknown chip KB_EINVAL listing the chips CUPTI knows.
 */
#define _GNU_SOURCE /* dlinfo */
#include "counters.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND, which the
 * AddressSanitizer runtime refuses by aborting the process. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#define CHIPS_MAX 8
#define SUGGEST_MAX 5
#define NAME_MAX_LEN 160

/* ===== loading ===================================================================== */

kb_profile__cupti_fns kb_profile__cupti;

static void *cupti_lib, *nvperf_lib;
static pthread_once_t load_once = PTHREAD_ONCE_INIT; /* prep's thread loads too */
static int load_rc = 1; /* 1: not tried yet */
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
		if (load_rc == KB_OK && !(*(void **)&kb_profile__cupti.f = dlsym(cupti_lib, #f))) { \
			snprintf(load_msg, sizeof load_msg, \
				 "libcupti.so.13 lacks %s (CUPTI older than 13.0?)", #f); \
			load_rc = KB_EUNSUP; \
		}
		KB_CUPTI_FUNCS(CUPTI_RESOLVE)
#undef CUPTI_RESOLVE
		if (load_rc == KB_OK)
			preload_nvperf();
	}
}

int kb_profile__cupti_load(kb_err *err)
{
	pthread_once(&load_once, load_once_now);
	if (load_rc < 0)
		return kb_err_set(err, load_rc, KB_DOM_CUPTI, 0, "%s", load_msg);
	return KB_OK;
}

/* ===== host objects ================================================================ */

int kb_profile__cupti_host_new(const char *chip, const uint8_t *avail,
			       CUpti_Profiler_Host_Object **out, kb_err *err)
{
	int rc = KB_OK;
	CUpti_Profiler_Host_Initialize_Params p =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
	p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	p.pChipName = chip;
	p.pCounterAvailabilityImage = avail;
	*out = NULL;
	if ((rc = KB_CUPTI(err, cuptiProfilerHostInitialize, &p)) < 0)
		goto out;
	*out = p.pHostObject;
out:
	return rc;
}

void kb_profile__cupti_host_free(CUpti_Profiler_Host_Object *h)
{
	if (!h)
		return;
	CUpti_Profiler_Host_Deinitialize_Params p =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
	p.pHostObject = h;
	kb_profile__cupti.cuptiProfilerHostDeinitialize(&p);
}

/* The host object for offline checks of `chip` (no availability image),
 * made once per chip. Unknown chips: KB_EINVAL listing the known ones. */
int kb_profile__cupti_offline_host(const char *chip, CUpti_Profiler_Host_Object **out,
				   kb_err *err)
{
	static struct {
		char chip[64];
		CUpti_Profiler_Host_Object *host;
	} hosts[CHIPS_MAX];
	static int nhosts;
	for (int i = 0; i < nhosts; i++)
		if (!strcmp(hosts[i].chip, chip))
			return *out = hosts[i].host, KB_OK;
	int rc = kb_profile__cupti_host_new(chip, NULL, out, err);
	if (rc == KB_EINVAL) {
		CUpti_Profiler_Host_GetSupportedChips_Params p =
			KB_CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
		kb_buf b = KB_BUF_INIT;
		if (kb_profile__cupti.cuptiProfilerHostGetSupportedChips(&p) == CUPTI_SUCCESS)
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
			KB_CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
		p.pHostObject = host;
		p.metricType = (CUpti_MetricType)t;
		if (kb_profile__cupti.cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS)
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

/* GetMetricProperties of name: CUPTI_SUCCESS and its type, or the error. */
static CUptiResult properties(CUpti_Profiler_Host_Object *host, const char *name,
			      CUpti_MetricType *type)
{
	CUpti_Profiler_Host_GetMetricProperties_Params p =
		KB_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
	p.pHostObject = host;
	p.pMetricName = name;
	CUptiResult r = kb_profile__cupti.cuptiProfilerHostGetMetricProperties(&p);
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
		int d = kb_edit_distance(name, nlen, l->v[i].name, strlen(l->v[i].name));
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
int kb_profile__cupti_check_names(CUpti_Profiler_Host_Object *host, const char *chip,
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
			rc = KB_CUPTI_COUNTERS_FAIL(err, r, "cuptiProfilerHostGetMetricProperties",
						    __FILE__, __LINE__);
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
