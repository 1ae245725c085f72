/*
 * sweep.c - the spec's `sweep` and `tune` lines: the whole pipeline (compile,
 * check, time) at every combination of sweep values, and for every
 * combination of tune -D values; the fastest *correct* tune variant wins.
 * A sweep exists to catch what one size hides (an off-by-one that only
 * shows when the size is not a multiple of the block), so its table puts
 * the verdict first.  A point that a `//! require` line rules out is a row
 * saying UNSUPPORTED and the requirement: pruned, as an autotuner prunes a
 * config that does not apply, never a failure and never the best.
 */
#include "app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 256

static double median_us(json_t *r)
{
	return json_number_value(json_object_get(json_object_get(r, "timing"), "median_us"));
}

static bool is_correct(json_t *r)
{
	return kb_app_verdict(r) == KB_VERDICT_CORRECT;
}

/* The i-th combination of lists of sizes n[0..k-1] (mixed radix). */
static void combination(int i, const int *n, int k, int *idx)
{
	for (int j = k - 1; j >= 0; j--) {
		idx[j] = i % n[j];
		i /= n[j];
	}
}

static int count_points(const kb_spec_list *lists, int k, int *n)
{
	int total = k ? 1 : 0;
	for (int j = 0; j < k; j++) {
		n[j] = lists[j].nvalues;
		total *= n[j];
	}
	return total > MAX_POINTS ? MAX_POINTS : total;
}

/* The sweep's jobs: a row {"args"} and a run request for each point. */
static void plan_sweep(const kb_app_run_opts *o, const kb_spec *spec, json_t *rows, json_t *reqs)
{
	int n[16], idx[16], k = spec->nsweeps < 16 ? spec->nsweeps : 16;
	int points = count_points(spec->sweeps, k, n);
	for (int p = 0; p < points; p++) {
		combination(p, n, k, idx);
		json_t *args = o->args ? json_deep_copy(o->args) : json_object();
		for (int j = 0; j < k; j++) {
			kb_value v;
			kb_diags d = {0};
			if (kb_compile_spec_eval(spec, spec->sweeps[j].values[idx[j]], &v, NULL, &d) == 0)
				json_object_set_new(args, spec->sweeps[j].name,
						    v.is_float ? json_real(v.f) : json_integer(v.i));
			kb_diags_free(&d);
		}
		kb_app_run_opts po = *o;
		po.args = args;
		json_array_append_new(reqs, kb_app_run_request(&po));
		json_array_append_new(rows, json_pack("{s:o}", "args", args));
	}
}

/* Whether the user's own -D gives NAME: it then stays as given, and the
 * tune varies the other names (--define D=64 of a kernel that tunes BM
 * and lists D = 128 ran its tune points at D = 128). */
static bool pinned(const kb_app_run_opts *o, const char *name)
{
	size_t n = strlen(name);
	for (int i = 0; i < o->ndefines; i++)
		if (!strncmp(o->defines[i], name, n) && (!o->defines[i][n] || o->defines[i][n] == '='))
			return true;
	return false;
}

/* The tune's jobs: a row {"defines"} and a run request for each variant. */
static void plan_tune(const kb_app_run_opts *o, const kb_spec *spec, json_t *rows, json_t *reqs)
{
	kb_spec_list tunes[16];
	int n[16], idx[16], k = 0;
	for (int j = 0; j < spec->ntunes && k < 16; j++)
		if (!pinned(o, spec->tunes[j].name))
			tunes[k++] = spec->tunes[j];
	int points = count_points(tunes, k, n);
	for (int p = 0; p < points; p++) {
		combination(p, n, k, idx);
		const char **defs = kb_xcalloc((size_t)(o->ndefines + k) + 1, sizeof(char *));
		char **owned = kb_xcalloc((size_t)k + 1, sizeof(char *));
		json_t *dj = json_array();
		for (int j = 0; j < o->ndefines; j++)
			defs[j] = o->defines[j];
		for (int j = 0; j < k; j++) {
			owned[j] = kb_xasprintf("%s=%s", tunes[j].name, tunes[j].texts[idx[j]]);
			defs[o->ndefines + j] = owned[j];
			json_array_append_new(dj, json_string(owned[j]));
		}
		kb_app_run_opts po = *o;
		po.defines = defs;
		po.ndefines = o->ndefines + k;
		json_array_append_new(reqs, kb_app_run_request(&po));
		json_array_append_new(rows, json_pack("{s:o}", "defines", dj));
		for (int j = 0; j < k; j++)
			free(owned[j]);
		free(owned);
		free(defs);
	}
}

/* Runs the jobs, one after another on r, or all at once on the pool's
 * workers; each row gets its "result". */
static int run_jobs(kb_runner *r, kb_pool *pool, double timeout_ms, json_t *rows, json_t *reqs,
		    kb_runner_progress_fn fn, void *ctx, kb_err *err)
{
	json_t *results = NULL;
	if (pool && kb_pool_run(pool, reqs, timeout_ms, &results, err) < 0)
		return KB_EINVAL;
	for (size_t i = 0; i < json_array_size(reqs); i++) {
		json_t *res = NULL;
		if (results)
			res = json_incref(json_array_get(results, i));
		else if (kb_runner_call(r, json_array_get(reqs, i), timeout_ms, fn, ctx, &res, err) < 0) {
			json_decref(results);
			return KB_EIO;
		}
		json_object_set_new(json_array_get(rows, i), "result", res);
	}
	json_decref(results);
	return KB_OK;
}

static int best_of(json_t *tune)
{
	int best = -1;
	size_t i;
	json_t *row;
	json_array_foreach(tune, i, row) {
		json_t *res = json_object_get(row, "result");
		if (is_correct(res) && (best < 0 || median_us(res) < median_us(json_object_get(
			json_array_get(tune, (size_t)best), "result"))))
			best = (int)i;
	}
	return best;
}

int kb_app_sweep_and_tune(kb_runner *r, kb_pool *pool, const kb_app_run_opts *given,
			  const kb_spec *spec, kb_runner_progress_fn fn, void *ctx, json_t **base,
			  json_t **out, kb_err *err)
{
	kb_app_run_opts shared = *given, *o = &shared;
	if (pool && !o->has_seed) /* one runner has one seed; a pool's share one too */
		o->has_seed = true, o->seed = kb_runner_pool_seed();
	json_t *sweep = json_array(), *tune = json_array(), *reqs = json_array();
	*out = json_pack("{s:o, s:o}", "sweep", sweep, "tune", tune);
	/* one queue for all on a pool: no worker idles while another finishes
	 * the base run or the sweep's slowest size */
	json_t *rows = json_array();
	size_t first = 0;
	if (base && pool) {
		json_array_append_new(rows, json_object());
		json_array_append_new(reqs, kb_app_run_request(o));
		first = 1;
	}
	plan_sweep(o, spec, rows, reqs);
	size_t nsweep = json_array_size(rows);
	plan_tune(o, spec, rows, reqs);
	if (pool)
		kb_pool_set_progress(pool, fn, ctx);
	int rc = run_jobs(r, pool, o->timeout_ms, rows, reqs, fn, ctx, err);
	if (first && base)
		*base = json_incref(json_object_get(json_array_get(rows, 0), "result"));
	for (size_t i = first; i < json_array_size(rows); i++) /* those that ran */
		if (json_object_get(json_array_get(rows, i), "result"))
			json_array_append(i < nsweep ? sweep : tune, json_array_get(rows, i));
	json_decref(rows);
	json_decref(reqs);
	int best = rc == 0 ? best_of(tune) : -1;
	json_object_set_new(*out, "best_tune", best >= 0 ? json_integer(best) : json_null());
	return rc;
}

/* ---- tables ------------------------------------------------------------------ */

static void render_row(const char *label, json_t *res, bool best, kb_buf *out)
{
	json_t *rf = json_object_get(res, "roofline");
	kb_buf_catf(out, "  %-28s %-13s", label, kb_app_run_verdict(res));
	if (json_object_get(res, "timing") && is_correct(res))
		kb_buf_catf(out, " %10.2f us %9.1f GB/s", median_us(res),
			    json_number_value(json_object_get(rf, "GBps")));
	else
		kb_buf_catf(out, " %13s %14s", "-", "-");
	json_t *check = json_object_get(res, "check");
	if (kb_app_verdict(res) == KB_VERDICT_UNSUPPORTED)
		kb_buf_catf(out, "  %s", json_string_value(json_object_get(res, "message")));
	if (!is_correct(res) && check) {
		json_t *t;
		size_t i;
		json_array_foreach(json_object_get(check, "trials"), i, t) {
			json_t *o = json_array_get(json_object_get(t, "outputs"), 0);
			json_t *fb = json_object_get(o, "first_bad");
			if (fb) {
				kb_buf_catf(out, "  first bad %s",
					    kb_app__str(fb, "at"));
				break;
			}
		}
	}
	kb_app__cat_worker(out, res);
	kb_buf_cat(out, best ? "  <- best\n" : "\n");
}

void kb_app_sweep_render(json_t *s, kb_buf *out)
{
	json_t *sweep = json_object_get(s, "sweep"), *tune = json_object_get(s, "tune");
	size_t i;
	json_t *row;
	if (json_array_size(sweep))
		kb_buf_catf(out, "\nsweep\n  %-28s %-13s %13s %14s\n", "args", "verdict", "median", "bandwidth");
	json_array_foreach(sweep, i, row) {
		char label[128] = "";
		size_t n = 0;
		const char *key;
		json_t *v;
		json_object_foreach(json_object_get(row, "args"), key, v)
			n += (size_t)snprintf(label + n, n < sizeof label ? sizeof label - n : 0, "%s%s=%lld",
					      n ? " " : "", key, (long long)json_integer_value(v));
		render_row(label, json_object_get(row, "result"), false, out);
	}
	if (json_array_size(tune))
		kb_buf_catf(out, "\ntune\n  %-28s %-13s %13s %14s\n", "defines", "verdict", "median", "bandwidth");
	json_int_t best = json_is_integer(json_object_get(s, "best_tune"))
			  ? json_integer_value(json_object_get(s, "best_tune")) : -1;
	json_array_foreach(tune, i, row) {
		char label[128] = "";
		size_t n = 0, j;
		json_t *d;
		json_array_foreach(json_object_get(row, "defines"), j, d)
			n += (size_t)snprintf(label + n, n < sizeof label ? sizeof label - n : 0, "%s%s",
					      n ? " " : "", kb_app__sval(d));
		render_row(label, json_object_get(row, "result"), (json_int_t)i == best, out);
	}
	if (json_array_size(tune))
		kb_buf_cat(out, best >= 0 ? "" : "  no tune variant was correct\n");
}
