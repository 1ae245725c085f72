/*
 * run.c - the `run` verb: a request to the runner, and the summary a kernel
 * engineer reads first: is it correct (and if not, where), how fast, how
 * close to this GPU's ceilings, and under what conditions.
 */
#include "app_int.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *kb_app_run_request(const kb_app_run_opts *o)
{
	json_t *req = json_pack("{s:s, s:s}", "type", "run", "path", o->path);
	if (o->text)
		json_object_set_new(req, "text", json_string(o->text));
	if (o->arch)
		json_object_set_new(req, "arch", json_string(o->arch));
	json_t *defs = json_array();
	for (int i = 0; i < o->ndefines; i++)
		json_array_append_new(defs, json_string(o->defines[i]));
	json_object_set_new(req, "defines", defs);
	if (o->noptions > 0) {
		json_t *opts = json_array();
		for (int i = 0; i < o->noptions; i++)
			json_array_append_new(opts, json_string(o->options[i]));
		json_object_set_new(req, "options", opts);
	}
	if (o->trials > 0)
		json_object_set_new(req, "trials", json_integer(o->trials));
	if (o->has_seed)
		json_object_set_new(req, "seed", json_integer((json_int_t)o->seed));
	if (o->no_time)
		json_object_set_new(req, "time", json_false());
	if (o->args)
		json_object_set(req, "args", o->args);
	if (o->timing)
		json_object_set_new(req, "timing", json_string(o->timing));
	json_t *m = json_array(), *secs = json_array();
	for (int i = 0; i < o->nmetrics; i++)
		json_array_append_new(m, json_string(o->metrics[i]));
	for (int i = 0; i < o->nsections; i++)
		json_array_append_new(secs, json_string(o->sections[i]));
	json_object_set_new(req, "metrics", m);
	json_object_set_new(req, "sections", secs);
	if (o->hot)
		json_object_set_new(req, "hot", json_true());
	if (o->sass_metrics)
		json_object_set_new(req, "sass_metrics", json_true());
	if (o->cache_control)
		json_object_set_new(req, "cache_control", json_string(o->cache_control));
	char *why = kb_app__python_refusal(o);
	json_object_set_new(req, "python", json_boolean(!why));
	if (why)
		json_object_set_new(req, "python_why", json_string(why));
	free(why);
	return req;
}

int kb_app_run(kb_runner *r, const kb_app_run_opts *o, kb_runner_progress_fn fn, void *ctx,
	       json_t **result, kb_err *err)
{
	json_t *req = kb_app_run_request(o);
	if ((*result = kb_app__python_refused(req))) {
		json_decref(req);
		return KB_OK;
	}
	int rc = kb_runner_call(r, req, o->timeout_ms, fn, ctx, result, err);
	json_decref(req);
	return rc;
}

int kb_app_run_check(const kb_app_run_opts *o, json_t **result, kb_err *err)
{
	/* sm_90's block limits where no arch is named: the GPU is not asked */
	kb_compile_unit_opts uo = {.arch = o->arch, .default_arch = "sm_90", .defines = o->defines,
				   .ndefines = o->ndefines, .options = o->options,
				   .noptions = o->noptions, .check_only = true};
	uo.args = kb_runner_arg_overrides(o->args, &uo.nargs); /* as the runner applies them */
	kb_compile_unit u;
	*result = NULL;
	int rc = kb_compile_unit_run(o->path, o->text, &uo, &u, err);
	if (rc == KB_ESPEC)
		*result = kb_runner_diag_result("spec_error", &u);
	kb_compile_unit_free(&u);
	free((void *)uo.args);
	return rc == KB_ESPEC || rc == KB_ECOMPILE ? KB_OK : rc;
}

static const char *str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : "";
}

static double num(json_t *j, const char *key)
{
	return json_number_value(json_object_get(j, key));
}

void kb_app_progress_text(json_t *p, char *out, size_t n)
{
	json_t *pct = json_object_get(p, "pct"), *el = json_object_get(p, "elapsed_s");
	if (!el)
		snprintf(out, n, "%s", "");
	else if (pct)
		snprintf(out, n, " %.0f%% (%.1f s)", json_number_value(pct), json_number_value(el));
	else
		snprintf(out, n, " (%.1f s)", json_number_value(el));
}

/* ---- correctness -------------------------------------------------------- */

/* A value that JSON carries as a number, or as "nan" / "inf". */
static void cat_value(kb_buf *out, json_t *v)
{
	if (json_is_string(v))
		kb_buf_cat(out, json_string_value(v));
	else
		kb_buf_catf(out, "%.6g", json_number_value(v));
}

/* The first bad element's neighbourhood: "got" and "want" of the elements
 * from flat index "from", the first bad one in brackets. */
static void render_near(json_t *near, int64_t bad, kb_buf *out)
{
	json_t *got = json_object_get(near, "got"), *want = json_object_get(near, "want");
	if (!json_array_size(got))
		return;
	int64_t from = (int64_t)num(near, "from");
	const char *rows[2] = {"got ", "want"};
	json_t *vals[2] = {got, want};
	for (int r = 0; r < 2; r++) {
		kb_buf_catf(out, "                %s at %lld..:", rows[r], (long long)from);
		for (size_t k = 0; k < json_array_size(vals[r]); k++) {
			bool mark = from + (int64_t)k == bad;
			kb_buf_cat(out, mark ? " [" : " ");
			cat_value(out, json_array_get(vals[r], k));
			kb_buf_cat(out, mark ? "]" : "");
		}
		kb_buf_cat(out, "\n");
	}
}

static void render_bad_output(json_t *o, kb_buf *out)
{
	json_t *fb = json_object_get(o, "first_bad");
	kb_buf_catf(out, "              %s: ", str(o, "output"));
	if (fb) {
		kb_buf_catf(out, "first bad %s = ", str(fb, "at"));
		cat_value(out, json_object_get(fb, "got"));
		kb_buf_cat(out, ", want ");
		cat_value(out, json_object_get(fb, "want"));
		kb_buf_cat(out, "; ");
	}
	kb_buf_catf(out, "%lld mismatched, %lld unwritten, %lld NaN, %lld Inf of %lld; "
		    "max abs err %.3g, rel L2 %.3g\n",
		    (long long)num(o, "mismatches"), (long long)num(o, "unwritten"),
		    (long long)num(o, "nan"), (long long)num(o, "inf"), (long long)num(o, "elements"),
		    num(o, "max_abs_err"), num(o, "rel_l2_err"));
	json_t *sm = json_object_get(o, "sampled");
	if (sm) /* the others were checked for written and finite only */
		kb_buf_catf(out, "              values compared on %.0f of %.0f rows (sampled)\n",
			    num(sm, "rows_checked"), num(sm, "rows"));
	render_near(json_object_get(o, "near"), fb ? (int64_t)num(fb, "index") : -1, out);
}

/* Which Python reference ran and how long it took (its first computation
 * among the trials; the others reused it or computed it again). */
static void render_python_ref(json_t *trials, kb_buf *out)
{
	size_t i, kept = 0;
	json_t *t, *first = NULL;
	json_array_foreach(trials, i, t) {
		json_t *r = json_object_get(t, "reference");
		if (strcmp(str(r, "kind"), "python"))
			return;
		kept += json_is_true(json_object_get(r, "cached"));
		if (!first && !json_is_true(json_object_get(r, "cached")))
			first = r;
	}
	if (first || kept)
		kb_buf_catf(out, "  reference   %s%s%zu of %zu trials reused a kept result\n",
			    first ? str(first, "ran") : "python (kept results only)", "; ", kept,
			    json_array_size(trials));
}

/* The worst figures over all trials and outputs. */
static void render_correct(json_t *check, kb_buf *out)
{
	json_t *trials = json_object_get(check, "trials");
	double max_abs = 0, max_rel = 0, l2 = 0, rows = 0, checked = -1;
	kb_buf seeds = KB_BUF_INIT;
	size_t i;
	json_t *t;
	json_array_foreach(trials, i, t) {
		kb_buf_catf(&seeds, "%s%lld", i ? ", " : "", (long long)num(t, "seed"));
		size_t k;
		json_t *o;
		json_array_foreach(json_object_get(t, "outputs"), k, o) {
			max_abs = fmax(max_abs, num(o, "max_abs_err"));
			max_rel = fmax(max_rel, num(o, "max_rel_err"));
			l2 = fmax(l2, num(o, "rel_l2_err"));
			json_t *sm = json_object_get(o, "sampled");
			if (sm && (checked < 0 || num(sm, "rows_checked") < checked)) {
				checked = num(sm, "rows_checked");
				rows = num(sm, "rows");
			}
		}
	}
	size_t post = json_array_size(json_object_get(check, "after_timing"));
	json_t *tl = json_object_get(check, "timed_launches");
	char timed[96] = "";
	if (tl)
		snprintf(timed, sizeof timed, " + every timed launch (%lld, %lld input set%s)",
			 (long long)num(tl, "launches_checked"), (long long)num(tl, "input_sets"),
			 num(tl, "input_sets") == 1 ? "" : "s");
	kb_buf_catf(out, "  CORRECT     %zu/%zu trials (seeds %s)%s%s: max abs err %.3g, max rel %.3g, "
		    "rel L2 %.3g (rtol %g, atol %g)\n", json_array_size(trials), json_array_size(trials),
		    seeds.s ? seeds.s : "", timed, post ? " + re-checked after timing" : "", max_abs,
		    max_rel, l2, num(check, "rtol"), num(check, "atol"));
	if (checked >= 0)
		kb_buf_catf(out, "              values checked on %.0f of %.0f rows a trial (sampled, fresh "
			    "rows each trial); every element checked written and finite\n", checked, rows);
	kb_buf_free(&seeds);
	render_python_ref(trials, out);
}

static void render_incorrect(json_t *check, kb_buf *out)
{
	json_t *trials = json_object_get(check, "trials");
	size_t i, k;
	json_t *t, *o;
	json_array_foreach(trials, i, t) {
		if (json_is_true(json_object_get(t, "ok")))
			continue;
		kb_buf_catf(out, "  INCORRECT   trial %zu of %zu (seed %lld)\n", i + 1,
			    json_array_size(trials), (long long)num(t, "seed"));
		json_array_foreach(json_object_get(t, "outputs"), k, o)
			if (!json_is_true(json_object_get(o, "ok")))
				render_bad_output(o, out);
		return;
	}
	char why[512];
	if (kb_app__timed_bad(check, why, sizeof why)) {
		kb_buf_catf(out, "  INCORRECT   %s\n", why);
		return;
	}
	json_array_foreach(json_object_get(check, "after_timing"), i, t) {
		if (json_is_true(json_object_get(t, "ok")))
			continue;
		kb_buf_catf(out, "  INCORRECT   after the timed loop (re-check %zu: outputs poisoned, "
			    "one launch): the kernel did not produce its output again\n", i + 1);
		json_array_foreach(json_object_get(t, "outputs"), k, o)
			if (!json_is_true(json_object_get(o, "ok")))
				render_bad_output(o, out);
		return;
	}
}

/* ---- speed ------------------------------------------------------------------ */

static void render_timing(json_t *t, kb_buf *out)
{
	kb_buf_catf(out, "  time        %.2f us median (min %.2f, max %.2f, CV %.1f%%, %lld reps, %s; L2 %s)\n",
		    num(t, "median_us"), num(t, "min_us"), num(t, "max_us"), 100.0 * num(t, "cv"),
		    (long long)num(t, "reps"),
		    !strcmp(str(t, "mode"), "graph") ? "CUDA graph"
		    : !strcmp(str(t, "mode"), "diff") ? "differential device events" : "device events",
		    str(t, "l2"));
}

static void render_roofline(json_t *rf, json_t *dev, kb_buf *out)
{
	if (!rf)
		return;
	kb_buf_catf(out, "  bandwidth   %.1f GB/s", num(rf, "GBps"));
	if (json_object_get(rf, "pct_of_measured_copy"))
		kb_buf_catf(out, " = %.1f%% of measured copy ceiling", num(rf, "pct_of_measured_copy"));
	else
		kb_buf_cat(out, " (no measured ceiling yet: run `kbench calibrate`)");
	if (json_object_get(rf, "pct_of_datasheet_dram"))
		kb_buf_catf(out, ", %.1f%% of datasheet %.0f GB/s", num(rf, "pct_of_datasheet_dram"),
			    num(dev, "dram_peak_GBps"));
	kb_buf_catf(out, " (%.3g bytes)\n", num(rf, "bytes"));
	if (json_object_get(rf, "pct_of_tensor_peak")) {
		kb_buf_catf(out, "  compute     %.1f TFLOP/s on %s = %.1f%% of the tensor-core peak (%s, "
			    "%.0f TFLOP/s)", num(rf, "TFLOPs"), str(rf, "math"),
			    num(rf, "pct_of_tensor_peak"), str(rf, "tensor_peak_basis"),
			    num(rf, "tensor_peak_TFLOPs"));
		if (json_object_get(rf, "pct_of_mma_ceiling"))
			kb_buf_catf(out, ", %.1f%% of the mma.sync ceiling", num(rf, "pct_of_mma_ceiling"));
		kb_buf_catf(out, "; intensity %.3g FLOP/B: %s side of the ridge (%.3g FLOP/B)\n",
			    num(rf, "arithmetic_intensity"), str(rf, "side"), num(rf, "ridge_flop_per_byte"));
	} else if (json_object_get(rf, "flops")) {
		kb_buf_catf(out, "  compute     %.3f TFLOP/s (%.2f%% of FP32 peak); intensity %.3g FLOP/B: "
			    "%s side of the ridge (%.3g FLOP/B)\n", num(rf, "TFLOPs"),
			    num(rf, "pct_of_fp32_peak"), num(rf, "arithmetic_intensity"),
			    str(rf, "side"), num(rf, "ridge_flop_per_byte"));
	}
	if (json_is_true(json_object_get(rf, "impossible")))
		kb_buf_catf(out, "  IMPOSSIBLE  %s\n", str(rf, "impossible_why"));
}

/* How many clusters run at once, and whether the GPCs hold fewer than the
 * SMs would (measure/run.c driver_clusters). */
static void render_clusters(json_t *launch, kb_buf *out)
{
	json_t *at = json_object_get(launch, "driver_clusters_at_once");
	if (!json_is_integer(at))
		return;
	long long n = json_integer_value(at), hold = (long long)num(launch, "clusters_sms_hold");
	long long launched = (long long)num(launch, "clusters_launched");
	kb_buf_catf(out, "; clusters of %lld: %lld at once", (long long)num(launch, "cluster_blocks"), n);
	if (n < hold)
		kb_buf_catf(out, " (the SMs alone would hold %lld: a cluster stays in one GPC)", hold);
	if (launched > n)
		kb_buf_catf(out, ", %lld launched", launched);
}

static void render_resources(json_t *compile, json_t *launch, kb_buf *out)
{
	json_t *k = json_object_get(compile, "kernel");
	json_t *res = json_object_get(k, "resources"), *occ = json_object_get(k, "occupancy");
	if (!res)
		return;
	kb_buf_catf(out, "  resources   %lld regs, %lld B smem, %lld B local", 
		    (long long)num(res, "registers"), (long long)num(res, "shared_static_bytes"),
		    (long long)num(res, "local_bytes"));
	if (occ && !json_is_null(occ))
		kb_buf_catf(out, "; occupancy %.0f%% (%lld blocks/SM, limited by %s)",
			    num(occ, "occupancy_pct"), (long long)num(occ, "blocks_per_sm"),
			    str(occ, "limiter"));
	json_t *drv = json_object_get(launch, "driver_blocks_per_sm");
	if (drv && occ && !json_is_null(occ)) {
		long long d = (long long)json_integer_value(drv);
		if (d == (long long)num(occ, "blocks_per_sm"))
			kb_buf_cat(out, " = driver's figure");
		else
			kb_buf_catf(out, "; DRIVER SAYS %lld blocks/SM", d);
	}
	render_clusters(launch, out);
	kb_buf_catf(out, "; %s", str(compile, "compiler"));
	json_t *opts = json_object_get(compile, "options");
	for (size_t i = 0; i < json_array_size(opts); i++)
		kb_buf_catf(out, " %s", kb_app__sval(json_array_get(opts, i)));
	kb_buf_cat(out, json_is_true(json_object_get(compile, "cache_hit")) ? " (cache hit)\n" : "\n");
}

static void render_gpu(json_t *env, json_t *timing, kb_buf *out)
{
	json_t *dev = json_object_get(env, "device");
	kb_buf_catf(out, "  GPU         %s (%s, %s), driver CUDA %s", str(dev, "name"), str(dev, "arch"),
		    str(dev, "uuid"), str(dev, "driver_cuda_version"));
	json_t *gpu = json_object_get(timing, "gpu");
	json_t *sm = json_object_get(gpu, "sm_clock_mhz"), *pw = json_object_get(gpu, "power_w");
	if (sm)
		kb_buf_catf(out, "; SM %.0f MHz (%.0f-%.0f)", num(sm, "median"), num(sm, "min"),
			    num(sm, "max"));
	if (pw)
		kb_buf_catf(out, ", %.0f W", num(pw, "mean"));
	if (json_object_get(gpu, "energy_per_launch_mj"))
		kb_buf_catf(out, ", %.3g mJ/launch", num(gpu, "energy_per_launch_mj"));
	json_t *nv = json_object_get(env, "nvml");
	if (json_is_true(json_object_get(nv, "clocks_locked")))
		kb_buf_cat(out, ", clocks LOCKED");
	kb_buf_catc(out, '\n');
}

/* ---- failures --------------------------------------------------------------- */

static void render_failure(json_t *r, const char *verdict, kb_buf *out)
{
	kb_buf_catf(out, "  %-11s %s\n", verdict, str(r, "message"));
	json_t *during = json_object_get(r, "during");
	if (during) {
		json_t *g = json_object_get(during, "grid"), *b = json_object_get(during, "block");
		kb_buf_catf(out, "              during: %s", str(during, "phase"));
		if (json_object_get(during, "kernel"))
			kb_buf_catf(out, ", kernel %s", str(during, "kernel"));
		if (g && b)
			kb_buf_catf(out, ", grid (%lld, %lld, %lld) block (%lld, %lld, %lld)",
				    (long long)json_integer_value(json_array_get(g, 0)),
				    (long long)json_integer_value(json_array_get(g, 1)),
				    (long long)json_integer_value(json_array_get(g, 2)),
				    (long long)json_integer_value(json_array_get(b, 0)),
				    (long long)json_integer_value(json_array_get(b, 1)),
				    (long long)json_integer_value(json_array_get(b, 2)));
		kb_buf_catc(out, '\n');
	}
	if (json_object_get(r, "diagnostics_text"))
		kb_buf_cat(out, str(r, "diagnostics_text"));
}

/* A run that measured this GPU's ceilings first (its first run here). */
static void render_calibrated(json_t *cal, kb_buf *out)
{
	if (!cal)
		return;
	if (json_object_get(cal, "error"))
		kb_buf_catf(out, "  ceilings    this GPU's first run here tried to measure them and "
			    "failed after %.1f s: %s\n", num(cal, "ms") / 1e3, str(cal, "error"));
	else
		kb_buf_catf(out, "  ceilings    measured first, as this is the GPU's first run here "
			    "(%.1f s, once: cached per GPU; `kbench devices` shows them)\n",
			    num(cal, "ms") / 1e3);
}

/* Where a remote run went: the ssh host, and the runner that answered. */
static void render_remote(json_t *remote, kb_buf *out)
{
	if (!remote)
		return;
	json_t *peer = json_object_get(remote, "runner");
	kb_buf_catf(out, "  remote      %s", str(remote, "host"));
	if (peer)
		kb_buf_catf(out, " (runner on %s, kbench %s, protocol %lld)", str(peer, "host"),
			    str(peer, "version"), (long long)json_integer_value(json_object_get(peer, "protocol")));
	kb_buf_cat(out, json_is_true(json_object_get(remote, "answered_here")) ? ", answered here\n" : "\n");
}

void kb_app_run_render(json_t *r, kb_buf *out)
{
	const char *verdict = kb_app_run_verdict(r);
	json_t *compile = json_object_get(r, "compile"), *launch = json_object_get(r, "launch");
	json_t *k = json_object_get(compile, "kernel");
	if (str(r, "file")[0])
		kb_buf_catf(out, "%s  %s  %s\n", str(r, "file"), k ? str(k, "name") : "",
			    str(compile, "arch"));
	render_remote(json_object_get(r, "remote"), out);
	if (strcmp(str(r, "status"), "ok")) {
		render_failure(r, verdict, out);
		return;
	}
	json_t *check = json_object_get(r, "check"), *timing = json_object_get(r, "timing");
	if (json_is_true(json_object_get(check, "correct")))
		render_correct(check, out);
	else
		render_incorrect(check, out);
	if (timing && json_is_true(json_object_get(check, "correct"))) {
		render_timing(timing, out);
		render_roofline(json_object_get(r, "roofline"),
				json_object_get(json_object_get(r, "env"), "device"), out);
	} else if (!json_is_true(json_object_get(check, "correct"))) {
		kb_buf_cat(out, "  time        not measured: an incorrect kernel is not timed\n");
	}
	render_resources(compile, launch, out);
	render_gpu(json_object_get(r, "env"), timing, out);
	render_calibrated(json_object_get(r, "calibrated"), out);
}
