/*
 * timing.c - how long one launch takes, measured so the number can be
 * trusted: device events, warm-up first, the L2 flushed (a read of twice
 * its size) before every timed launch, repetitions until the median is
 * stable.  By default each sample is a difference of two event spans from
 * the same cache state, (flush, idle, kernel) minus (flush, idle), which
 * leaves the event's own launch latency out and starts the kernel on a
 * quiet memory system, as under ncu (the span programs below); plain event
 * pairs are --timing events.  Kernels shorter than KB_GRAPH_BELOW_US are
 * timed as a CUDA graph of many launches instead, so launch gaps do not dominate;
 * their inputs are not flushed but rotated: each launch of the graph uses
 * its own copy of the buffers, and the copies together exceed the L2.
 * Every timed launch starts as a checked one does (guard.c): its outputs
 * poisoned first, outside the timed span, its inputs one of the trials'
 * sets in turn, and its output compared afterwards with what the checked
 * launch of that set wrote, also outside the span.
 * With KBENCH_CUPTI=1, CUPTI kernel activity (activity.c) around the timed
 * loop records each launch's GPU start/end too: "kernel_us" beside the
 * event figures; otherwise (and without CUPTI, or under ncu) the JSON says
 * why and the event figures stand alone.
 */
#include "measure.h"

#include <time.h>
#include <stdlib.h>
#include <string.h>

#define KB_GRAPH_BELOW_US 10.0
#define BATCH 8

/* ---- span programs ----------------------------------------------------------
 * A sample is the time between two event records, or the difference of two
 * such spans, each span a short program of stream operations:
 *   P  the outputs of the launch to come poisoned, as before a checked one
 *   F  the L2 flush (a read of twice the L2: only clean lines stay)
 *   D  the flush buffer's L2 lines invalidated (after F: an empty L2)
 *   G  the flush read with streaming loads (evict-first lines)
 *   X  the flush buffer written (memset: the L2 full of dirty lines of it)
 *   R  persisting L2 lines reset to normal (cuCtxResetPersistingL2Cache)
 *   Q  D issued by every block for every line (2 blocks an SM): no copy of a
 *      flush line left in any L2 partition
 *   W  an idle wait of KB_IDLE_NS on the GPU (one thread spinning on
 *      %globaltimer), so the memory system is quiet when what follows starts
 *   Z  an empty kernel
 *   H  the GPU idle for 1 ms (the stream waits for a host function)
 *   T  a read of one word per 64 KB of an 8 GB buffer (allocated on first
 *      use), which leaves the TLBs without the kernel's pages
 *   I  a kernel of ~12k straight-line instructions on every SM, which
 *      leaves the kernel's code out of the SMs' instruction caches
 *   K  the kernel under test
 *   e  an event record (the first and second e bound the span)
 * "A-B" samples span(A) - span(B); "A" samples span(A).  After A, outside
 * both spans, the launch's output is checked (guard.c); a program without
 * P gets one in front of A, so no timed launch finds its last output.
 *
 * The default (KB_DIFF_PROG) is (flush, wait, kernel) - (flush, wait), each
 * flush followed by the invalidation of the flush buffer's lines (D): a read
 * flush alone leaves the L2 full of clean lines, and kernels with streaming
 * hints (__ldcs/__stcs: evict-first lines) then read 0.8-1.4% slower than
 * under ncu, whose flush leaves an empty L2 (H100, bench/ncu_gallery_h100.txt).
 * On an H200 they still read 4-5% slower until each line was discarded from
 * SMs spread over the GPU, not from one (the other L2 partition's copy;
 * bench/ncu_state_h200.txt, docs/timing.md).  The
 * difference leaves out the launch latency an event record adds (plain
 * event pairs, "FeKe", read 4-14% above ncu's gpu__time_duration on 10-35 us
 * kernels); the wait makes the kernel start as it does under ncu, which
 * serializes each profiled launch: right behind the flush it started while
 * the flush's memory traffic was still draining, which cost it up to 5% at
 * 12 us (H100, bench/timing_exp.txt).  Before both spans the
 * SMs' instruction and constant caches are emptied (I), as ncu's
 * --cache-control all does and as the launches around a kernel in a model
 * do: the kernel's code is fetched cold.  Without it the wgmma GEMMs of the
 * tile compiler (50-150 KB of SASS) read 2.5-3.3% under ncu, with it 0.2-0.4%
 * (H200, bench/ncu_clocks_h200.txt, 16:04Z); the I kernel runs outside the
 * spans, so it adds only to the wall time of a sample.  KBENCH_TIMING_EXP="A-B"
 * times with another program (for such experiments). */
#define KB_DIFF_PROG "PFDIeFDWKe-FDIeFDWe"
#define KB_EVENTS_PROG "PFDIeKe"
#define KB_IDLE_NS 5000ull

/* A host function the stream waits for: the GPU idle for a millisecond, as
 * between the launches ncu profiles (span programs' 'H'). */
static void CUDA_CB idle_host(void *unused)
{
	(void)unused;
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
}

/* The timed loop's state: the guard's sets and which one launches next. */
typedef struct {
	kb_profile__guard *g;
	int64_t next;             /* timed launches so far (picks the set) */
	bool check;               /* check each launch (not the warm-up's) */
} timed_loop;

/* Runs one span program on the stream with set's buffers; ev gets the two
 * bounding events. */
static int run_prog(kb_device *d, const kb_profile__tset *set, const char *prog, CUevent *ev,
		    kb_err *err)
{
	int rc = KB_OK, ne = 0;
	unsigned long long idle_ns = KB_IDLE_NS;
	void *idle_args[] = {&idle_ns};
	for (const char *p = prog; *p && rc == 0; p++) {
		if (*p == 'P')
			rc = kb_profile__reset_outputs(d, &set->bd, err);
		else if (*p == 'F')
			rc = kb_profile__flush_l2(d, err);
		else if (*p == 'D')
			rc = kb_profile__l2_discard(d, err);
		else if (*p == 'G')
			rc = kb_profile__flush_l2_cs(d, err);
		else if (*p == 'Q')
			rc = kb_profile__l2_discard_all(d, err);
		else if (*p == 'X')
			rc = kb_profile__flush_l2_write(d, err);
		else if (*p == 'R')
			rc = KB_CU(err, cuCtxResetPersistingL2Cache());
		else if (*p == 'K')
			rc = kb_profile__launch(d, &set->bd, err);
		else if (*p == 'W')
			rc = KB_CU(err, cuLaunchKernel(d->spin, 1, 1, 1, 1, 1, 1, 0, d->stream,
						       idle_args, NULL));
		else if (*p == 'H')
			rc = KB_CU(err, cuLaunchHostFunc(d->stream, idle_host, NULL));
		else if (*p == 'T')
			rc = kb_profile__tlb_sweep(d, err);
		else if (*p == 'I')
			rc = kb_profile__icache_thrash(d, err);
		else if (*p == 'Z')
			rc = KB_CU(err, cuLaunchKernel(d->empty, 1, 1, 1, 32, 1, 1, 0, d->stream,
						       NULL, NULL));
		else if (*p == 'e' && ne < 2)
			rc = KB_CU(err, cuEventRecord(ev[ne++], d->stream));
	}
	return rc;
}

/* BATCH samples of program prog ("A-B" or "A") into ms. */
static int span_ms(kb_device *d, timed_loop *tl, const char *prog, double *ms, kb_err *err)
{
	char a[40], b[32] = "";
	const char *dash = strchr(prog, '-');
	int alen = dash ? (int)(dash - prog) : (int)strlen(prog);
	/* no timed launch without its outputs poisoned first */
	snprintf(a, sizeof a, "%s%.*s", memchr(prog, 'P', (size_t)alen) ? "" : "P", alen, prog);
	if (dash)
		snprintf(b, sizeof b, "%s", dash + 1);
	CUevent ev[4 * BATCH] = {0};
	int rc = KB_OK;
	for (int i = 0; i < 4 * BATCH; i++)
		if ((rc = KB_CU(err, cuEventCreate(&ev[i], CU_EVENT_DEFAULT))) < 0)
			goto out;
	for (int i = 0; i < BATCH && rc == 0; i++) {
		const kb_profile__tset *set = kb_profile__guard_set(tl->g, tl->next);
		rc = run_prog(d, set, a, &ev[4 * i], err);
		if (rc == 0 && tl->check)
			rc = kb_profile__guard_check(tl->g, d, &set->bd, set, err);
		tl->next++;
		if (rc == 0 && b[0])
			rc = run_prog(d, set, b, &ev[4 * i + 2], err);
	}
	if (rc < 0)
		goto out;
	if ((rc = KB_CU(err, cuStreamSynchronize(d->stream))) < 0)
		goto out;
	for (int i = 0; i < BATCH; i++) {
		float t1 = 0, t0 = 0;
		if ((rc = KB_CU(err, cuEventElapsedTime(&t1, ev[4 * i], ev[4 * i + 1]))) < 0)
			goto out;
		if (b[0] && (rc = KB_CU(err, cuEventElapsedTime(&t0, ev[4 * i + 2],
								ev[4 * i + 3]))) < 0)
			goto out;
		ms[i] = t1 - t0;
	}
out:
	for (int i = 0; i < 4 * BATCH; i++)
		if (ev[i])
			kb_cu.cuEventDestroy(ev[i]);
	return rc;
}

/* ---- graph mode: rotated buffer sets ------------------------------------ */

/* Graph mode's buffer sets: copies of the guard's sets in turn, enough
 * that together they exceed twice the L2, and each launched once per graph,
 * so that every launch finds its outputs poisoned (all of them are poisoned
 * before the graph, outside the timed span). */
typedef struct {
	kb_profile__bound *sets;
	const kb_profile__tset **of; /* the guard set each copies (its golden outputs) */
	int nsets;
	CUgraphExec exec;
	CUgraph graph;
	int launches;
} graph_plan;

/* Launches per graph: enough that launch gaps do not count. */
#define KB_GRAPH_LAUNCHES 64
#define KB_GRAPH_MAX_SETS 256

static void free_plan(graph_plan *g, const kb_profile__bound *main_bd)
{
	if (g->exec)
		kb_cu.cuGraphExecDestroy(g->exec);
	if (g->graph)
		kb_cu.cuGraphDestroy(g->graph);
	for (int s = 0; s < g->nsets; s++)
		kb_profile__free_clone(&g->sets[s], main_bd);
	free(g->sets);
	free(g->of);
	memset(g, 0, sizeof *g);
}

static int build_graph(kb_device *d, const kb_profile__guard *gd, graph_plan *g, kb_err *err)
{
	int rc = KB_OK;
	const kb_profile__bound *bd = &gd->sets[gd->nsets - 1].bd;
	size_t set_bytes = kb_profile__bound_bytes(bd, false);
	size_t want = (d->flush_bytes + set_bytes - 1) / (set_bytes ? set_bytes : 1); /* 2x L2 */
	g->nsets = want < KB_GRAPH_LAUNCHES ? KB_GRAPH_LAUNCHES
		   : want > KB_GRAPH_MAX_SETS ? KB_GRAPH_MAX_SETS : (int)want;
	while (g->nsets > 2 && !kb_profile__fits((size_t)g->nsets * set_bytes, 0.5))
		g->nsets /= 2;
	g->sets = kb_xcalloc((size_t)g->nsets, sizeof *g->sets);
	g->of = kb_xcalloc((size_t)g->nsets, sizeof *g->of);
	for (int s = 0; s < g->nsets; s++) {
		g->of[s] = &gd->sets[s % gd->nsets];
		if ((rc = kb_profile__clone_bound(d, &g->of[s]->bd, &g->sets[s], err)) < 0)
			return rc;
	}
	g->launches = g->nsets;
	if ((rc = KB_CU(err, cuStreamBeginCapture(d->stream,
						  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))) < 0)
		goto out;
	for (int i = 0; i < g->launches; i++)
		if ((rc = kb_profile__launch(d, &g->sets[i], err)) < 0) {
			CUgraph junk;
			kb_cu.cuStreamEndCapture(d->stream, &junk);
			return rc;
		}
	if ((rc = KB_CU(err, cuStreamEndCapture(d->stream, &g->graph))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuGraphInstantiate(&g->exec, g->graph, 0))) < 0)
		goto out;
out:
	return rc;
}

/* One graph sample: every set's outputs poisoned and the L2 flushed, then
 * the timed graph, then each launch's output checked. */
static int graph_ms(kb_device *d, graph_plan *g, kb_profile__guard *gd, double *ms, kb_err *err)
{
	CUevent a = NULL, b = NULL;
	int rc = KB_OK;
	for (int s = 0; s < g->nsets && rc == 0; s++)
		rc = kb_profile__reset_outputs(d, &g->sets[s], err);
	if (rc < 0 || (rc = kb_profile__flush_l2(d, err)) < 0 || (rc = kb_profile__l2_discard(d, err)) < 0)
		return rc;
	if ((rc = KB_CU(err, cuEventCreate(&a, CU_EVENT_DEFAULT))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventCreate(&b, CU_EVENT_DEFAULT))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventRecord(a, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuGraphLaunch(g->exec, d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventRecord(b, d->stream))) < 0)
		goto out;
	for (int s = 0; s < g->nsets && rc == 0; s++)
		rc = kb_profile__guard_check(gd, d, &g->sets[s], g->of[s], err);
	if (rc < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventSynchronize(b))) < 0)
		goto out;
	float f = 0;
	if ((rc = KB_CU(err, cuEventElapsedTime(&f, a, b))) < 0)
		goto out;
	*ms = f / g->launches;
out:
	if (a)
		kb_cu.cuEventDestroy(a);
	if (b)
		kb_cu.cuEventDestroy(b);
	return rc;
}

/* ---- the timed loop ------------------------------------------------------- */

static json_t *timing_json(const char *mode, const char *cache, const double *v, int n,
			   double spent_ms)
{
	kb_stats st;
	kb_stats_compute(v, n, &st);
	json_t *j = json_object();
	json_object_set_new(j, "mode", json_string(mode));
	json_object_set_new(j, "l2", json_string(cache));
	json_object_set_new(j, "reps", json_integer(st.n));
	json_object_set_new(j, "median_us", json_real(st.median * 1e3));
	json_object_set_new(j, "min_us", json_real(st.min * 1e3));
	json_object_set_new(j, "max_us", json_real(st.max * 1e3));
	json_object_set_new(j, "mean_us", json_real(st.mean * 1e3));
	json_object_set_new(j, "p10_us", json_real(st.p10 * 1e3));
	json_object_set_new(j, "p90_us", json_real(st.p90 * 1e3));
	json_object_set_new(j, "cv", json_real(st.cv));
	json_object_set_new(j, "loop_ms", json_real(spent_ms));
	json_t *samples = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(samples, json_real(v[i] * 1e3));
	json_object_set_new(j, "samples_us", samples);
	return j;
}

/* ---- kernel durations from CUPTI ------------------------------------------- */

/* Adds "kernel_us" {median, min, max, cv, n} and "kernel_source" to j from
 * the CUPTI records of bd->symbol (expected: the launches timed), or says
 * why there are none.  cupti_rc: what activity_start returned. */
static void kernel_json(json_t *j, const kb_profile__bound *bd, int cupti_rc, kb_err *cerr,
			int expected, double start_ms)
{
	double *dur = kb_xmalloc(sizeof(double) * (size_t)(expected + 64));
	int n = 0, rc = cupti_rc;
	double t = kb_now_ms();
	if (rc == 0)
		rc = kb_profile__activity_stop(bd->symbol, dur, expected + 64, &n, cerr);
	double stop_ms = kb_now_ms() - t;
	if (rc == 0 && n > 0) {
		kb_stats st;
		kb_stats_compute(dur, n, &st);
		json_object_set_new(j, "kernel_us",
				    json_pack("{s:f, s:f, s:f, s:f, s:i}", "median", st.median, "min",
					      st.min, "max", st.max, "cv", st.cv, "n", n));
		json_object_set_new(j, "kernel_source",
				    json_string("CUPTI activity (GPU timestamps)"));
		if (n != expected)
			json_object_set_new(j, "kernel_note",
					    json_sprintf("CUPTI returned %d records for %d launches",
							 n, expected));
	} else {
		json_object_set_new(j, "kernel_source",
				    json_sprintf("unavailable: %s", rc == 0 ? "CUPTI returned no "
						 "kernel records" : cerr->msg));
	}
	if (cupti_rc == 0)
		json_object_set_new(j, "kernel_cupti_ms",
				    json_pack("{s:f, s:f}", "start", start_ms, "stop", stop_ms));
	free(dur);
}

/* How the loop times, chosen after the warm-up. */
typedef struct {
	bool graph;               /* a CUDA graph of launches over rotated buffer sets */
	bool diff;                /* differential spans (KB_DIFF_PROG), else plain events */
	const char *exp;          /* KBENCH_TIMING_EXP's span program, or NULL */
} timing_mode;

/* The warm-up (module load, clocks, TLB: untimed, unchecked), and the mode
 * its median leads to with the options: a graph below KB_GRAPH_BELOW_US,
 * differential spans by default (see KB_DIFF_PROG).  Returns 0 or a KB_E*. */
static int warm_up(kb_device *d, kb_profile__guard *gd, const kb_run_opts *o, timing_mode *m,
		   kb_err *err)
{
	double warm[BATCH];
	timed_loop tl = {.g = gd};
	int rc = span_ms(d, &tl, KB_EVENTS_PROG, warm, err);
	if (rc < 0)
		return rc;
	kb_stats st;
	kb_stats_compute(warm + 2, BATCH - 2, &st);
	m->graph = o->timing_mode == KB_TIMING_GRAPH ||
		   (o->timing_mode == KB_TIMING_AUTO && st.median * 1e3 < KB_GRAPH_BELOW_US);
	const char *exp = getenv("KBENCH_TIMING_EXP");
	m->exp = exp && *exp ? exp : NULL;
	m->diff = !m->graph && (o->timing_mode == KB_TIMING_DIFF || o->timing_mode == KB_TIMING_AUTO);
	return KB_OK;
}

/* CUPTI kernel records only with KBENCH_CUPTI=1: on Hopper its kernel
 * tracing is software instrumentation and, measured on an H200, adds 2-4 us
 * to the event times of memory-bound kernels in the same loop.  Returns
 * what activity_start returned (cerr says why not), *ms what starting it
 * cost (kept out of loop_ms and reported apart). */
static int cupti_start(kb_err *cerr, double *ms)
{
	double tc = kb_now_ms();
	const char *cenv = getenv("KBENCH_CUPTI");
	int rc = cenv && !strcmp(cenv, "1")
		 ? kb_profile__activity_start(cerr)
		 : kb_err_set(cerr, KB_EUNSUP, KB_DOM_CUPTI, 0,
			      "off (KBENCH_CUPTI=1 records kernels with CUPTI)");
	*ms = kb_now_ms() - tc;
	return rc;
}

/* The timed loop: samples into v (*n of them) until the policy stops it,
 * one graph sample or BATCH span samples at a time, every launch checked;
 * *spent_ms its wall time.  Returns 0 or a KB_E*. */
static int sample_loop(kb_device *d, kb_profile__guard *gd, graph_plan *g, const timing_mode *m,
		       const kb_rep_policy *pol, double *v, int *n, double *spent_ms, kb_err *err)
{
	timed_loop tl = {.g = gd, .check = true};
	int rc = KB_OK;
	double t0 = kb_now_ms();
	while (rc == 0 && !kb_stats_should_stop(pol, v, *n, kb_now_ms() - t0)) {
		if (m->graph) {
			rc = graph_ms(d, g, gd, &v[*n], err);
			*n += rc == 0;
		} else {
			rc = span_ms(d, &tl, m->exp ? m->exp : m->diff ? KB_DIFF_PROG : KB_EVENTS_PROG,
				     &v[*n], err);
			*n += rc == 0 ? BATCH : 0;
		}
	}
	*spent_ms = kb_now_ms() - t0;
	return rc;
}

/* The "timing" JSON of the n samples in v: how they were taken, their
 * statistics, and how each launch's outputs were treated. */
static json_t *loop_json(const timing_mode *m, const graph_plan *g, const double *v, int n,
			 double spent)
{
	json_t *j = m->graph ? timing_json("graph", "rotated buffers, 2x L2; flushed before each graph",
					   v, n, spent)
		    : m->exp ? timing_json(m->exp, "span program (KBENCH_TIMING_EXP)", v, n, spent)
		    : m->diff ? timing_json("diff", "flushed (read of 2x L2, lines invalidated) and 5 us "
					    "idle before each launch; (flush, idle, kernel) - (flush, idle)",
					    v, n, spent)
			      : timing_json("events", "flushed (read of 2x L2, lines invalidated) before "
					    "each launch", v, n, spent);
	if (m->graph)
		json_object_set_new(j, "launches_per_sample", json_integer(g->launches));
	json_object_set_new(j, "outputs",
			    json_string("poisoned before each timed launch, outside the "
					"timed span; each launch's output checked after it"));
	return j;
}

/* Times the guard's sets: the warm-up picks the mode, then a graph (when
 * graphed), a verdict slot per launch, the timed loop beside the GPU's
 * clock samples and CUPTI's records, the JSON.  Returns 0 and the "timing"
 * JSON, or a KB_E*. */
int kb_profile__time(kb_device *d, kb_profile__guard *gd, const kb_run_opts *o, json_t **out,
		     kb_err *err)
{
	kb_rep_policy pol = {o->min_reps > 0 ? o->min_reps : 20, o->max_reps > 0 ? o->max_reps : 2000,
			     o->max_time_ms > 0 ? o->max_time_ms : 1000, 0.01};
	const kb_profile__bound *bd = &gd->sets[gd->nsets - 1].bd; /* the run's own */
	timing_mode m;
	int rc = warm_up(d, gd, o, &m, err);
	if (rc < 0)
		return rc;
	graph_plan g = {0};
	if (m.graph && (rc = build_graph(d, gd, &g, err)) < 0)
		goto out;
	/* a verdict slot for every launch the loop can make */
	if ((rc = kb_profile__guard_slots(gd, d, m.graph ? (int64_t)pol.max_reps * g.launches
							 : pol.max_reps + BATCH, err)) < 0)
		goto out;
	double *v = kb_xmalloc(sizeof(double) * (size_t)(pol.max_reps + BATCH));
	int n = 0;
	bool sampling = o->nvml && kb_profile_nvml_sample_start(o->nvml) == 0;
	kb_err cerr = {0};
	double cupti_start_ms, spent;
	int cupti_rc = cupti_start(&cerr, &cupti_start_ms);
	rc = sample_loop(d, gd, &g, &m, &pol, v, &n, &spent, err);
	int launches = m.graph ? n * g.launches : n;
	json_t *gpu = sampling ? kb_profile_nvml_sample_stop(o->nvml, launches) : NULL;
	if (rc == 0) {
		*out = loop_json(&m, &g, v, n, spent);
		if (gpu)
			json_object_set(*out, "gpu", gpu);
		kernel_json(*out, bd, cupti_rc, &cerr, launches, cupti_start_ms);
	} else if (cupti_rc == 0) {
		int junk;
		kb_profile__activity_stop(bd->symbol, NULL, 0, &junk, &cerr);
	}
	json_decref(gpu);
	free(v);
out:
	free_plan(&g, bd);
	return rc;
}
