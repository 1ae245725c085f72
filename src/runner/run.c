/*
 * run.c - the runner's "run" request: compile the file (through the compile
 * cache) for this GPU, apply the request's arg overrides, run and check it,
 * and assemble the Result: compile facts, launch, check, timing, roofline
 * against the ceilings, and the environment the numbers were taken in.
 */
#include "runner_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
	kb_runner__ctx *c;
	json_t *last;         /* the last progress, for fault reports */
} progress_tap;

static void tap(void *ctx, const char *phase, const char *kernel, const int64_t grid[3],
		const int64_t block[3])
{
	progress_tap *t = ctx;
	json_decref(t->last);
	t->last = json_pack("{s:s, s:s?}", "phase", phase, "kernel", kernel);
	if (grid)
		json_object_set_new(t->last, "grid", json_pack("[III]", (json_int_t)grid[0],
								 (json_int_t)grid[1], (json_int_t)grid[2]));
	if (block)
		json_object_set_new(t->last, "block", json_pack("[III]", (json_int_t)block[0],
								  (json_int_t)block[1], (json_int_t)block[2]));
	t->c->progress(t->c->progress_ctx, phase, kernel, grid, block);
}

/* Seeds are fresh for every runner, and the same for every run a runner
 * makes unless the request names one: a warm runner re-checking edits of
 * one kernel then meets the same inputs, so their CPU references come from
 * the reference cache (refcache.c) instead of being recomputed, while each
 * new `kbench run` still draws new inputs. */
static uint64_t session_seed(void)
{
	static uint64_t seed;
	if (!seed)
		seed = kb_runner__fresh_seed();
	return seed;
}

/* The value of every arg the run used (after --arg), so a replay or a
 * comparison knows which problem the Result is of. */
static json_t *args_json(const kb_spec *spec)
{
	json_t *a = json_object();
	for (int i = 0; i < spec->nargs; i++) {
		const kb_value *v = &spec->args[i].value;
		json_object_set_new(a, spec->args[i].name, v->is_float ? json_real(v->f) : json_integer(v->i));
	}
	return a;
}

/* ---- host memory warmed while the GPU opens ---------------------------------- */

struct kb_runner__warm {
	pthread_t thread;
	bool started;
	char *path, *text;
	json_t *args, *defines;
};

static void *warm_main(void *arg)
{
	kb_runner__warm *w = arg;
	kb_source src;
	kb_spec spec = {0};
	kb_diags diags = {0};
	kb_err ignored;
	if (kb_compile_source_open(&src, w->path, w->text, &ignored) < 0)
		return NULL;
	if (kb_compile_spec_parse(&src, &spec, &diags) == 0) {
		int n;
		kb_arg_override *args = kb_runner_arg_overrides(w->args, &n);
		for (int i = 0; i < n; i++)
			kb_compile_spec_set_arg(&spec, args[i].name, args[i].value);
		free(args);
		size_t i;
		json_t *d;
		json_array_foreach(w->defines, i, d) { /* "NAME=V": a tune value */
			const char *kv = json_string_value(d), *eq = kv ? strchr(kv, '=') : NULL;
			char *name = eq ? kb_xstrndup(kv, (size_t)(eq - kv)) : NULL;
			if (name)
				kb_compile_spec_set_tune(&spec, name, eq + 1);
			free(name);
		}
		char *why = NULL; /* an UNSUPPORTED run allocates nothing */
		if (kb_compile_spec_requires(&spec, &src, &why, NULL, NULL) == 0)
			kb_profile_host_warm(&src, &spec);
		free(why);
	}
	kb_diags_free(&diags);
	kb_compile_spec_free(&spec);
	kb_compile_source_free(&src);
	return NULL;
}

kb_runner__warm *kb_runner__warm_start(json_t *req)
{
	const char *path = json_string_value(json_object_get(req, "path"));
	if (!path)
		return NULL;
	const char *text = json_string_value(json_object_get(req, "text"));
	kb_runner__warm *w = kb_xcalloc(1, sizeof *w);
	w->path = kb_xstrdup(path);
	w->text = text ? kb_xstrdup(text) : NULL;
	w->args = json_deep_copy(json_object_get(req, "args"));
	w->defines = json_deep_copy(json_object_get(req, "defines"));
	w->started = pthread_create(&w->thread, NULL, warm_main, w) == 0;
	return w;
}

void kb_runner__warm_join(kb_runner__warm *w)
{
	if (!w)
		return;
	if (w->started)
		pthread_join(w->thread, NULL);
	free(w->path);
	free(w->text);
	json_decref(w->args);
	json_decref(w->defines);
	free(w);
}

static double eval_or(const kb_compile_unit *u, const kb_expr *e, double dflt)
{
	kb_value v;
	kb_diags d = {0};
	int rc = e ? kb_compile_spec_eval(&u->spec, e, &v, &u->src, &d) : -1;
	kb_diags_free(&d);
	if (rc < 0)
		return dflt;
	return v.is_float ? v.f : (double)v.i;
}

/* Bytes moved: the spec's `bytes`, else every in and out once. */
static double spec_bytes(const kb_compile_unit *u)
{
	double total = 0;
	for (int t = 0; t < u->spec.ntensors; t++) {
		const kb_spec_tensor *st = &u->spec.tensors[t];
		double n = 1;
		for (int r = 0; r < st->rank; r++)
			n *= eval_or(u, st->dims[r], 0);
		total += n * kb_dtype_size(st->dtype);
	}
	return eval_or(u, u->spec.bytes, total);
}

static void add_roofline(kb_runner__ctx *c, const kb_compile_unit *u, json_t *r)
{
	json_t *timing = json_object_get(r, "timing");
	if (!timing)
		return;
	double median = json_number_value(json_object_get(timing, "median_us"));
	const kb_device_info *info = kb_profile_device_info(c->dev);
	json_t *ceil = NULL;
	kb_profile_ceilings_load(info->uuid, &ceil);
	json_t *roof = kb_profile_roofline(info, ceil, spec_bytes(u), eval_or(u, u->spec.flops, -1),
					   median, kb_profile_math_of(u->build.ptx));
	json_decref(ceil);
	json_object_set_new(r, "roofline", roof);
	if (json_is_true(json_object_get(roof, "impossible")))
		json_object_set_new(r, "verdict", json_string(kb_verdict_name(KB_VERDICT_IMPOSSIBLE)));
}

/* Orders an array of objects by their "samples", most first (stable). */
static void sort_by_samples(json_t *arr)
{
	for (size_t a = 1; a < json_array_size(arr); a++)
		for (size_t b = a; b > 0 && json_integer_value(json_object_get(json_array_get(arr, b), "samples")) >
					    json_integer_value(json_object_get(json_array_get(arr, b - 1), "samples")); b--) {
			json_t *x = json_incref(json_array_get(arr, b));
			json_array_set(arr, b, json_array_get(arr, b - 1));
			json_array_set_new(arr, b - 1, x);
		}
}

/* Adds one PC's stall samples ([{reason, samples}]) to its line's tally
 * (line["stall_samples"]: reason -> samples). */
static void add_stalls(json_t *line, json_t *stalls)
{
	json_t *tally = json_object_get(line, "stall_samples");
	if (!tally)
		json_object_set_new(line, "stall_samples", tally = json_object());
	size_t i;
	json_t *st;
	json_array_foreach(stalls, i, st) {
		const char *reason = json_string_value(json_object_get(st, "reason"));
		if (!reason)
			continue;
		json_int_t had = json_integer_value(json_object_get(tally, reason));
		json_object_set_new(tally, reason,
				    json_integer(had + json_integer_value(json_object_get(st, "samples"))));
	}
}

/* A line's stall reasons, most samples first, each with its share of the
 * line's samples: [{reason, samples, share_pct}]. */
static json_t *line_stalls(json_t *tally, json_int_t line_samples)
{
	json_t *arr = json_array();
	const char *reason;
	json_t *n;
	json_object_foreach(tally, reason, n)
		json_array_append_new(arr, json_pack("{s:s, s:I, s:f}", "reason", reason, "samples",
						     json_integer_value(n), "share_pct",
						     line_samples ? 100.0 * (double)json_integer_value(n) /
									(double)line_samples
								  : 0.0));
	sort_by_samples(arr);
	return arr;
}

/* One sampled instruction of a hot line: its SASS, its share of all
 * samples and the reason its warps stalled most, with that reason's share
 * of its samples ("stall" "" when none was recorded). */
static json_t *insn_json(json_t *h)
{
	const char *top = "";
	json_int_t best = 0, all = json_integer_value(json_object_get(h, "samples"));
	size_t i;
	json_t *st;
	json_array_foreach(json_object_get(h, "stalls"), i, st) {
		json_int_t n = json_integer_value(json_object_get(st, "samples"));
		if (n > best && json_string_value(json_object_get(st, "reason")))
			best = n, top = json_string_value(json_object_get(st, "reason"));
	}
	json_t *in = json_pack("{s:O, s:I, s:f, s:s, s:f}", "sass", json_object_get(h, "sass"), "pc",
			       json_integer_value(json_object_get(h, "pc")), "share_pct",
			       json_number_value(json_object_get(h, "share_pct")), "stall", top,
			       "stall_pct", all ? 100.0 * (double)best / (double)all : 0.0);
	kb_runner__copy_sassm(h, in);
	return in;
}

/* Each hot PC gets its SASS and source line; samples are summed per
 * source line into "hot_lines", most first, with the line's stall reasons. */
void kb_runner__map_hot(const kb_compile_unit *u, json_t *r)
{
	json_t *lines = json_object();
	size_t i;
	json_t *h;
	json_array_foreach(json_object_get(r, "hot"), i, h) {
		kb_runner__where w;
		if (!kb_runner__place(u, h, &w))
			continue;
		bool own = w.own;
		const char *file = w.file;
		int line = w.line;
		char *key = own ? kb_xasprintf("%d", line) : kb_xasprintf("%s:%d", file ? file : "?", line);
		json_t *e = json_object_get(lines, key);
		if (!e) {
			char *text = kb_runner__source_line(u, file, line);
			e = json_pack("{s:i, s:s, s:I, s:f, s:[], s:[]}", "line", line, "text", text,
				      "samples", (json_int_t)0, "share_pct", 0.0, "sass", "insns");
			if (!own)
				json_object_set_new(e, "file", json_string(file ? kb_basename(file) : "?"));
			json_object_set_new(lines, key, e);
			free(text);
		}
		free(key);
		json_object_set_new(e, "samples", json_integer(json_integer_value(json_object_get(e, "samples")) +
							       json_integer_value(json_object_get(h, "samples"))));
		json_object_set_new(e, "share_pct", json_real(json_number_value(json_object_get(e, "share_pct")) +
							      json_number_value(json_object_get(h, "share_pct"))));
		json_array_append(json_object_get(e, "sass"), json_object_get(h, "sass"));
		json_array_append_new(json_object_get(e, "insns"), insn_json(h));
		add_stalls(e, json_object_get(h, "stalls"));
	}
	json_t *arr = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(lines, k, v) {
		json_object_set_new(v, "stalls", line_stalls(json_object_get(v, "stall_samples"),
							     json_integer_value(json_object_get(v, "samples"))));
		json_object_del(v, "stall_samples");
		json_array_append(arr, v);
	}
	json_decref(lines);
	sort_by_samples(arr);
	json_object_set_new(r, "hot_lines", arr);
	if (!u->build.sass.available && u->build.sass.unavailable_why)
		json_object_set_new(r, "hot_why", json_string(u->build.sass.unavailable_why));
}

/* Counter sections derived for the result; why counters are missing. */
static void add_profile(kb_runner__ctx *c, const kb_compile_unit *u, json_t *r)
{
	if (c->cupti_err.msg[0])
		json_object_set_new(r, "counters_error",
				    json_pack("{s:s, s:b}", "message", c->cupti_err.msg, "permission",
					      *c->cupti_rc == KB_EPERM));
	json_t *ctr = json_object_get(r, "counters");
	if (c->ms_cupti_open > 0)
		json_object_set_new(r, "cupti_open_ms", json_real(c->ms_cupti_open));
	if (c->ms_prep > 0)
		json_object_set_new(r, "cupti_prep_ms", json_real(c->ms_prep));
	if (ctr) {
		const kb_device_info *info = kb_profile_device_info(c->dev);
		json_t *ceil = NULL;
		kb_profile_ceilings_load(info->uuid, &ceil);
		json_t *occ = json_object_get(json_object_get(json_object_get(r, "compile"), "kernel"),
					      "occupancy");
		json_object_set_new(r, "sections", kb_profile_sections_derive(ctr, info, ceil, occ));
		json_object_set_new(r, "counters_passes", json_integer(c->passes));
		json_decref(ceil);
	}
	if (json_object_get(r, "hot"))
		kb_runner__map_hot(u, r);
	if (json_object_get(r, "sass_metrics"))
		kb_runner__map_sassm(u, r);
}

static json_t *env_json(kb_runner__ctx *c)
{
	json_t *e = json_object();
	json_object_set_new(e, "device", kb_profile_device_json(kb_profile_device_info(c->dev)));
	if (c->nvml)
		json_object_set_new(e, "nvml", kb_profile_nvml_env(c->nvml));
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	json_object_set_new(e, "host", json_string(host));
	json_object_set_new(e, "kbench", json_string(KB_VERSION));
	json_object_set_new(e, "time", json_integer((json_int_t)time(NULL)));
	return e;
}

static json_t *fault_result(kb_runner__ctx *c, const kb_err *err, json_t *last, bool sticky)
{
	json_t *r = kb_runner__error_result(sticky ? "fault" : "launch_error", err);
	if (last)
		json_object_set(r, "during", last);
	return r;
}

/* See runner_int.h. */
const char **kb_runner__wanted_metrics(json_t *req, int *n)
{
	const kb_section *secs[16];
	int ns = 0;
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(req, "sections"), i, v) {
		const kb_section *sec = json_is_string(v) ? kb_profile_section(json_string_value(v)) : NULL;
		if (sec && ns < 16)
			secs[ns++] = sec;
	}
	int nsec = 0;
	const char **from_secs = kb_profile_section_metrics(secs, ns, &nsec);
	json_t *extra = json_object_get(req, "metrics");
	*n = 0;
	const char **all = kb_xcalloc((size_t)nsec + json_array_size(extra) + 1, sizeof *all);
	for (int k = 0; k < nsec; k++)
		all[(*n)++] = from_secs[k];
	json_array_foreach(extra, i, v) {
		bool dup = false;
		for (int k = 0; k < *n && !dup; k++)
			dup = !strcmp(all[k], json_string_value(v) ? json_string_value(v) : "");
		if (json_is_string(v) && !dup)
			all[(*n)++] = json_string_value(v);
	}
	free(from_secs);
	return all;
}

/* Opens CUPTI once per runner; the outcome of the first try stands. */
static int need_cupti(kb_runner__ctx *c, kb_err *err)
{
	static kb_err first;
	c->ms_prep = kb_profile_cupti_prep_join(c->prep); /* cupti.c is ours again */
	c->prep = NULL;
	if (*c->cupti_rc == 1) {
		double t0 = kb_now_ms();
		*c->cupti_rc = kb_profile_cupti_open(c->dev, c->cupti, &first);
		c->ms_cupti_open = kb_now_ms() - t0;
		if (*c->cupti_rc == 0) /* the server releases it after each answer */
			kb_profile_cupti_keep_enabled(*c->cupti, true);
	}
	if (*c->cupti_rc < 0 && err)
		*err = first;
	return *c->cupti_rc;
}

/* kb_run_opts.open_cupti: CUPTI for this request's counters and hot spots,
 * opened after the checks and timing so that the host-side preparation
 * begun beside the GPU's opening is done by then; the metric names are
 * checked here.  NULL (with cupti_err or metric_err set) for neither. */
static kb_cupti *open_cupti_late(void *ctx)
{
	kb_runner__ctx *c = ctx;
	if (need_cupti(c, &c->cupti_err) < 0)
		return NULL;
	if (c->nmetrics > 0 &&
	    kb_profile_cupti_check(*c->cupti, c->metrics, c->nmetrics, &c->passes, &c->metric_err) < 0) {
		c->metric_failed = true;
		return NULL;
	}
	return *c->cupti;
}

static void fill_opts(kb_runner__ctx *c, json_t *req, kb_run_opts *o, progress_tap *t)
{
	json_t *seed = json_object_get(req, "seed");
	o->trials = json_is_integer(json_object_get(req, "trials"))
		    ? (int)json_integer_value(json_object_get(req, "trials")) : 3;
	o->seed = json_is_integer(seed) ? (uint64_t)json_integer_value(seed) : session_seed();
	o->time_it = !json_is_false(json_object_get(req, "time"));
	o->max_time_ms = json_number_value(json_object_get(req, "max_time_ms"));
	const char *mode = json_string_value(json_object_get(req, "timing"));
	o->timing_mode = !mode ? KB_TIMING_AUTO : !strcmp(mode, "graph") ? KB_TIMING_GRAPH
		       : !strcmp(mode, "events") ? KB_TIMING_EVENTS
		       : !strcmp(mode, "diff") ? KB_TIMING_DIFF : KB_TIMING_AUTO;
	const char *cache = json_string_value(json_object_get(req, "cache_control"));
	o->passes_keep_l2 = cache && !strcmp(cache, "none");
	o->progress = tap;
	o->progress_ctx = t;
	o->nvml = c->nvml;
}

/* A run that reports bandwidth and FLOP/s against this GPU's measured
 * ceilings, on a GPU that has none yet: calibrate it now, once (cached per
 * GPU, as `kbench calibrate` does), and say so in the result ("calibrated":
 * how long it took, or why it failed).  $KBENCH_NO_AUTO_CALIBRATE=1 leaves
 * the ceilings to `kbench calibrate`. */
static void calibrate_first(kb_runner__ctx *c, json_t **note)
{
	const kb_device_info *info = kb_profile_device_info(c->dev);
	json_t *ceil = NULL;
	const char *off = getenv("KBENCH_NO_AUTO_CALIBRATE");
	if ((off && *off && strcmp(off, "0")) || kb_profile_ceilings_load(info->uuid, &ceil) == 0) {
		json_decref(ceil);
		return;
	}
	c->progress(c->progress_ctx, "calibrating this GPU (its first run here; cached per GPU)",
		    "kbench calibrate", NULL, NULL);
	kb_err err = {0};
	double t0 = kb_now_ms();
	int rc = kb_profile_calibrate(c->dev, &ceil, &err);
	if (rc == 0)
		rc = kb_profile_ceilings_save(info->uuid, ceil, &err);
	*note = rc == 0 ? json_pack("{s:f}", "ms", kb_now_ms() - t0)
			: json_pack("{s:f, s:s}", "ms", kb_now_ms() - t0, "error", err.msg);
	if (rc < 0 && kb_profile_sticky(&err))
		c->sticky = true;
	json_decref(ceil);
}

/* What every answer to a run that got past the compile carries: the file,
 * the compile facts, the args and -D values it ran with, the machine. */
static void describe(kb_runner__ctx *c, const kb_compile_unit *u, json_t *req, json_t *r)
{
	json_object_set_new(r, "file", json_string(u->src.path));
	json_object_set_new(r, "compile", kb_compile_unit_summary_json(u));
	json_object_set_new(r, "args", args_json(&u->spec));
	if (json_array_size(json_object_get(req, "defines")) > 0)
		json_object_set(r, "defines", json_object_get(req, "defines"));
	json_object_set_new(r, "env", env_json(c));
}

/* A run whose args or -D values a `//! require` line rules out: status
 * "unsupported", the requirement and its values as the message. */
static json_t *unsupported_result(const kb_compile_unit *u)
{
	return json_pack("{s:s, s:s, s:s, s:{s:i, s:i}}", "type", "result", "status", "unsupported",
			 "message", u->unsupported, "require", "line", u->unsupported_loc.line,
			 "col", u->unsupported_loc.col);
}

/* A Python reference the client did not allow (app/pyrefs.c says why):
 * status "python_refused", nothing run. */
static json_t *python_refused(json_t *req)
{
	const char *why = json_string_value(json_object_get(req, "python_why"));
	return json_pack("{s:s, s:s, s:s}", "type", "result", "status", "python_refused", "message",
			 why ? why : "a Python reference the client did not allow: not run");
}

json_t *kb_runner__run(kb_runner__ctx *c, json_t *req)
{
	const char *path = json_string_value(json_object_get(req, "path"));
	const char *text = json_string_value(json_object_get(req, "text"));
	const char *arch = json_string_value(json_object_get(req, "arch"));
	if (!path)
		return json_pack("{s:s,s:s,s:s}", "type", "result", "status", "error", "message",
				 "run request without a path");
	char *dev_arch = kb_xasprintf("sm_%d", kb_profile_device_info(c->dev)->sm);
	int ndef;
	const char **defs = kb_runner__strings(json_object_get(req, "defines"), &ndef);
	int nopt;
	const char **opts = kb_runner__strings(json_object_get(req, "options"), &nopt);
	int nargs;
	kb_arg_override *args = kb_runner_arg_overrides(json_object_get(req, "args"), &nargs);
	bool hot = json_is_true(json_object_get(req, "hot"));
	bool sassm = json_is_true(json_object_get(req, "sass_metrics"));
	bool sassm_only = json_is_true(json_object_get(req, "sass_metrics_only"));
	/* a profile keeps the SASS instruction mix (reports show how it changed) */
	bool profiling = json_array_size(json_object_get(req, "sections")) > 0 ||
			 json_array_size(json_object_get(req, "metrics")) > 0;
	kb_compile_unit_opts uo = {.arch = arch, .default_arch = dev_arch, .defines = defs, .ndefines = ndef,
				   .options = opts, .noptions = nopt, .args = args, .nargs = nargs,
				   .want_sass = hot || sassm || profiling,
				   .prebuilt = json_object_get(req, "prebuilt"), .skip_unsupported = true,
				   .sm_count = kb_profile_device_info(c->dev)->sm_count};
	kb_compile_unit u;
	kb_err err = {0};
	json_t *r = NULL;
	c->progress(c->progress_ctx, "compile", NULL, NULL, NULL);
	double t_compile = kb_now_ms();
	int rc = kb_compile_unit_run(path, text, &uo, &u, &err);
	t_compile = kb_now_ms() - t_compile;
	if (rc == KB_ESPEC || rc == KB_ECOMPILE) {
		r = kb_runner_diag_result(rc == KB_ESPEC ? "spec_error" : "compile_error", &u);
		goto out;
	}
	if (rc == 0 && !u.has_spec)
		rc = kb_err_set(&err, KB_ESPEC, KB_DOM_SPEC, 0,
				"%s has no //! spec lines: kbench needs them to run it (see README)", path);
	if (rc < 0) {
		r = kb_runner__error_result("error", &err);
		goto out;
	}
	if (u.spec.ref.py.lang != KB_PYREF_NONE && !json_is_true(json_object_get(req, "python"))) {
		r = python_refused(req);
		goto out;
	}
	if (u.unsupported) { /* pruned: no inputs, no launch, no calibration */
		r = unsupported_result(&u);
		describe(c, &u, req, r);
		goto out;
	}
	progress_tap t = {.c = c};
	kb_run_opts o = {0};
	fill_opts(c, req, &o, &t);
	o.metrics = c->metrics;
	o.nmetrics = c->nmetrics;
	o.hot = hot && !sassm_only;
	o.sass_metrics = sassm_only; /* else a fresh worker's (kb_runner__sassm_fresh) */
	o.sass_metrics_only = sassm_only;
	o.sass_hot = json_object_get(req, "hot_in");
	o.open_cupti = open_cupti_late;
	o.open_cupti_ctx = c;
	if (json_array_size(json_object_get(req, "metrics")) > 0) {
		/* names the user typed: a typo is answered before the run, not after */
		o.cupti = open_cupti_late(c);
		o.open_cupti = NULL;
		if (c->metric_failed) {
			r = kb_runner__error_result("metric_error", &c->metric_err);
			goto out;
		}
	}
	u.spec.sm_count = kb_profile_device_info(c->dev)->sm_count; /* `sm_count` in the spec */
	json_t *res = NULL, *calibrated = NULL;
	if (o.time_it)
		calibrate_first(c, &calibrated);
	rc = c->sticky ? kb_err_set(&err, KB_ERROR, KB_DOM_CUDA, 0, "calibration: %s",
				    json_string_value(json_object_get(calibrated, "error")))
		       : kb_profile_run(c->dev, &u.src, &u.spec, &u.kernels, u.chosen, &u.build, &o,
					&res, &c->sticky, &err);
	if (rc == 0 && c->metric_failed) { /* the run is not what was asked for */
		json_decref(res);
		json_decref(t.last);
		r = kb_runner__error_result("metric_error", &c->metric_err);
		goto out;
	}
	if (rc < 0) {
		/* a Python reference that cannot run: the machine's (exit 3) or the user's */
		r = err.domain == KB_DOM_PYTHON && !c->sticky
			? kb_runner__error_result(rc == KB_EUNSUP ? "no_reference" : "reference_error",
						  &err)
		    : rc == KB_ESPEC ? kb_runner__error_result("spec_error", &err)
				     : fault_result(c, &err, t.last, c->sticky);
		json_decref(res);
	} else {
		r = res;
		json_object_set_new(r, "type", json_string("result"));
		json_object_set_new(r, "status", json_string("ok"));
		json_object_set_new(r, "seed", json_integer((json_int_t)o.seed));
		json_object_set_new(r, "compile_ms", json_real(t_compile));
		if (calibrated)
			json_object_set(r, "calibrated", calibrated);
		add_roofline(c, &u, r);
		if (sassm && !sassm_only)
			kb_runner__sassm_fresh(c, req, r);
	}
	json_decref(calibrated);
	json_decref(t.last);
	if (rc == 0)
		add_profile(c, &u, r);
	describe(c, &u, req, r);
out:
	kb_compile_unit_free(&u);
	free(args);
	free(defs);
	free(opts);
	free(dev_arch);
	return r;
}
