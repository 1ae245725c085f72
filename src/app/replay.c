/*
 * replay.c - a recorded session again: `kbench replay` re-runs its variants
 * on this machine and prints recorded vs now (ratios between variants when
 * the GPU differs); `kbench-tui --replay` steps through its journal, each
 * step with what was recorded and the text at that point.
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- replay in the TUI: the session's events as steps ------------------------ */

/* What one journal event says, for a person stepping through it. */
static void step_text(const kb_session *s, json_t *ev, int i, int n, const kb_variant *v,
		      kb_buf *out)
{
	const char *what = json_string_value(json_object_get(ev, "event"));
	const char *file = json_string_value(json_object_get(ev, "file"));
	char when[32] = "?";
	time_t t = (time_t)json_number_value(json_object_get(ev, "t"));
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	kb_buf_catf(out, "session %s, step %d of %d\n%s  %s  %s%s%s\n\n", s->id, i + 1, n, when,
		    what ? what : "?", file ? file : "", v ? "  " : "", v ? v->name : "");
	if (kb_app__llm_step_text(ev, out))
		return;
	if (what && !strcmp(what, "edit")) {
		const char *d = json_string_value(json_object_get(ev, "diff"));
		kb_buf_cat(out, d ? d : "(no diff recorded)\n");
		return;
	}
	if (what && !strcmp(what, "compile") && json_is_false(json_object_get(ev, "ok")))
		kb_buf_catf(out, "did not compile: %d error(s)\n",
			    (int)json_integer_value(json_object_get(ev, "errors")));
	json_t *res = v ? kb_app__jget(v->note, "result") : NULL;
	const char *arch = v ? json_string_value(kb_app__jget(v->note, "compile.arch")) : NULL;
	if (res)
		kb_app_run_render(res, out);
	else if (v)
		kb_buf_catf(out, "%s compiled (%s): %.0f registers, occupancy %.0f%%; not run\n", v->name,
			    arch ? arch : "?", kb_app__jnum(v->note, "compile.kernel.resources.registers"),
			    kb_app__jnum(v->note, "compile.kernel.occupancy.occupancy_pct"));
	if (!v) {
		char *j = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
		kb_buf_catf(out, "%s\n", j ? j : "");
		free(j);
	}
}

/* A file's store and its variants, listed once for the whole replay (a
 * listing reads every note: once per event would be quadratic). */
typedef struct {
	char *file;
	kb_store *st;
	kb_variant *vs;
	int n;
	char why[256];          /* when the store could not be read */
} replay_store;

static replay_store *replay_store_of(replay_store **stores, int *n, int *cap,
				     const kb_session *s, const char *file)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp((*stores)[i].file, file))
			return &(*stores)[i];
	replay_store *rs = KB_PUSH(*stores, *n, *cap);
	memset(rs, 0, sizeof *rs);
	rs->file = kb_xstrdup(file);
	kb_err err = {0};
	if (kb_session_store_open(s, file, &rs->st, &err) < 0 ||
	    kb_session_store_list(rs->st, &rs->vs, &rs->n, &err) < 0)
		snprintf(rs->why, sizeof rs->why, "%.240s", err.msg);
	return rs;
}

/* The variant an event names ("vN"), or NULL with why. */
/* The variant an event names, or NULL with why.  Events that carry a
 * "commit" name the file's own vN (the commit itself may since have been
 * replaced by one with a run's message); older events named the n-th
 * commit of the whole ref. */
static const kb_variant *replay_variant(const replay_store *rs, json_t *ev, const char *name,
					char *why, size_t n)
{
	if (rs->why[0]) {
		snprintf(why, n, "%s", rs->why);
		return NULL;
	}
	const char *commit = json_string_value(json_object_get(ev, "commit"));
	long k = name[0] == 'v' ? strtol(name + 1, NULL, 10) : 0;
	char oid[41] = "";
	if (!commit && k >= 1 && kb_session_store_nth_commit(rs->st, (int)k, oid, NULL) == 0)
		commit = oid;
	for (int i = 0; commit && i < rs->n; i++)
		if (!strcmp(rs->vs[i].oid, commit))
			return &rs->vs[i];
	if (json_object_get(ev, "commit") && k >= 1 && k <= rs->n && !strcmp(rs->vs[k - 1].name, name))
		return &rs->vs[k - 1];
	snprintf(why, n, "no variant %s on the session's ref", name);
	return NULL;
}

/* One step: {"file", "summary", "text" (when the event names a variant)}. */
static json_t *replay_step(const kb_session *s, replay_store *rs, json_t *ev, int i, int n)
{
	const char *file = json_string_value(json_object_get(ev, "file"));
	const char *name = json_string_value(json_object_get(ev, "variant"));
	char *text = NULL, why[512] = "";
	size_t len = 0;
	const kb_variant *v = rs && name ? replay_variant(rs, ev, name, why, sizeof why) : NULL;
	kb_err err = {0};
	if (v && kb_session_store_text(rs->st, v, &text, &len, &err) < 0) {
		snprintf(why, sizeof why, "%.500s", err.msg);
		v = NULL;
	}
	kb_buf sum = KB_BUF_INIT;
	step_text(s, ev, i, n, v, &sum);
	if (name && !v)
		kb_buf_catf(&sum, "\n(%s cannot be read: %s)\n", name, why);
	json_t *step = json_pack("{s:s, s:s}", "file", file ? file : "", "summary", sum.s ? sum.s : "");
	if (v) {
		json_object_set_new(step, "text", json_stringn(text ? text : "", len));
		json_object_set_new(step, "variant", json_string(v->name));
	}
	kb_buf_free(&sum);
	free(text);
	return step;
}

int kb_app_replay_steps(const char *session, json_t **steps, kb_err *err)
{
	kb_session s;
	*steps = NULL;
	int rc = kb_session_open(session, &s, err);
	if (rc < 0)
		return rc;
	json_t *evs = NULL;
	long trunc;
	replay_store *stores = NULL;
	int nstores = 0, cap = 0;
	rc = kb_session_journal_read(&s, &evs, &trunc, err);
	if (rc == 0) {
		int n = (int)json_array_size(evs);
		*steps = json_array();
		for (int i = 0; i < n; i++) {
			json_t *ev = json_array_get(evs, i);
			const char *file = json_string_value(json_object_get(ev, "file"));
			replay_store *rs = file ? replay_store_of(&stores, &nstores, &cap, &s, file) : NULL;
			json_array_append_new(*steps, replay_step(&s, rs, ev, i, n));
		}
	}
	for (int i = 0; i < nstores; i++) {
		kb_session_variants_free(stores[i].vs, stores[i].n);
		kb_session_store_close(stores[i].st);
		free(stores[i].file);
	}
	free(stores);
	json_decref(evs);
	kb_session_free(&s);
	return rc;
}

/* ---- replay ---------------------------------------------------------------------- */

static bool wanted(const char *only, const char *name)
{
	if (!only)
		return true;
	size_t n = strlen(name);
	for (const char *p = only; (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

static const char *gpu_of(json_t *r)
{
	const char *g = json_string_value(kb_app__jget(r, "env.device.name"));
	return g ? g : "?";
}

/* One row: recorded vs now, and what changed beyond noise. */
static void replay_row(const kb_variant *v, json_t *now, double base_then, double base_now,
		       bool same_gpu, kb_buf *out)
{
	json_t *then = kb_app__jget(v->note, "result");
	const char *vt = then ? kb_app_run_verdict(then) : "not run", *vn = kb_app_run_verdict(now);
	double mt = then ? kb_app__jnum(then, "timing.median_us") : -1, mn = kb_app__jnum(now, "timing.median_us");
	kb_buf_catf(out, "  %-5s %-13s %-13s", v->name, vt, vn);
	kb_app__cat_num(out, 11, 2, mt);
	kb_app__cat_num(out, 11, 2, mn);
	if (then && kb_app_verdict(then) != kb_app_verdict(now))
		kb_buf_cat(out, "  CORRECTNESS CHANGED");
	else if (mt > 0 && mn > 0 && same_gpu) {
		json_t *d = kb_diff_numbers(then, now);
		kb_buf_catf(out, "  %+.1f%% %s", (mn - mt) / mt * 100,
			    json_string_value(json_object_get(d, "verdict")));
		json_decref(d);
	} else if (mt > 0 && mn > 0 && base_then > 0 && base_now > 0) {
		double rt = mt / base_then, rn = mn / base_now;
		kb_buf_catf(out, "  x%.3f of first then, x%.3f now%s", rt, rn,
			    fabs(rn - rt) > 0.05 * rt ? "  RATIO CHANGED" : "");
	}
	kb_app__cat_worker(out, now);
	kb_buf_catc(out, '\n');
}

/* The replay of one file: its variants, each with its run request. */
typedef struct {
	kb_variant *vs;
	int n;
	int *which;    /* which[k]: the variant of request k */
	json_t *reqs;  /* run requests, one per wanted variant */
} replay_plan;

/* The run request of variant v: the same problem as recorded, its args and
 * -D values when the Result says (Results before they did ran at the
 * spec's own). */
static json_t *replay_request(kb_store *st, const char *path, const kb_variant *v, kb_err *err)
{
	kb_app__loaded l;
	if (kb_app__load_variant(st, v->name, &l, err) < 0)
		return NULL;
	json_t *rec = kb_app__jget(v->note, "result");
	json_t *rdefs = json_object_get(rec, "defines");
	const char *defs[64];
	int ndefs = 0;
	for (size_t d = 0; d < json_array_size(rdefs) && ndefs < 64; d++)
		if (json_is_string(json_array_get(rdefs, d)))
			defs[ndefs++] = json_string_value(json_array_get(rdefs, d));
	kb_app_run_opts o = {.path = path, .text = l.text, .args = json_object_get(rec, "args"),
			     .defines = defs, .ndefines = ndefs,
			     .python_from = "it is a recorded session's variant (kbench replay)"};
	json_t *req = kb_app_run_request(&o);
	kb_app__unload(&l);
	return req;
}

static void replay_plan_make(kb_store *st, const char *path, const char *only, replay_plan *p)
{
	p->reqs = json_array();
	p->which = kb_xcalloc((size_t)p->n + 1, sizeof *p->which);
	for (int i = 0; i < p->n; i++) {
		kb_err skip = {0}; /* a variant that cannot be loaded is left out */
		json_t *req = wanted(only, p->vs[i].name) ? replay_request(st, path, &p->vs[i], &skip) : NULL;
		if (req) {
			p->which[json_array_size(p->reqs)] = i;
			json_array_append_new(p->reqs, req);
		}
	}
}

/* Nothing to compare without a GPU: said once, with the runner's reason. */
static int no_gpu(json_t *now, kb_err *err)
{
	const char *status = json_string_value(json_object_get(now, "status"));
	if (!status || strcmp(status, "no_gpu"))
		return KB_OK;
	const char *why = json_string_value(json_object_get(now, "message"));
	return kb_err_set(err, KB_ENODEV, KB_DOM_NONE, 0,
			  "replay re-runs each variant on a GPU, and there is none here: %s "
			  "(`kbench report` and `kbench log` read the session without one)",
			  why ? why : "no GPU");
}

/* The results of the plan's requests: all at once on the pool's workers,
 * else one after another on r, stopping at the first that could not run. */
static int replay_results(kb_runner *r, kb_pool *pool, const replay_plan *p, json_t **results,
			  kb_err *err)
{
	size_t n = json_array_size(p->reqs);
	if (pool) {
		/* the same inputs on every worker, as on one runner */
		json_int_t seed = (json_int_t)kb_runner_pool_seed();
		for (size_t k = 0; k < n; k++)
			json_object_set_new(json_array_get(p->reqs, k), "seed", json_integer(seed));
		if (kb_pool_run(pool, p->reqs, 0, results, err) < 0)
			return KB_EINVAL;
		for (size_t k = 0; k < n; k++)
			if (no_gpu(json_array_get(*results, k), err) < 0)
				return KB_ENODEV;
		return KB_OK;
	}
	*results = json_array();
	for (size_t k = 0; k < n; k++) {
		json_t *now = kb_app__python_refused(json_array_get(p->reqs, k));
		int rc = now ? KB_OK
			     : kb_runner_call(r, json_array_get(p->reqs, k), 0, NULL, NULL, &now, err);
		if (rc == 0 && (rc = no_gpu(now, err)) < 0) {
			json_decref(now);
			return rc;
		}
		if (now)
			json_array_append_new(*results, now);
		if (rc < 0)
			return rc;
	}
	return KB_OK;
}

static int replay_file(kb_runner *r, kb_pool *pool, const kb_session *s, const char *path,
		       const char *only, kb_buf *out, kb_err *err)
{
	kb_store *st = NULL;
	replay_plan p = {0};
	json_t *results = NULL;
	int rc;
	if ((rc = kb_session_store_open(s, path, &st, err)) < 0 ||
	    (rc = kb_session_store_list(st, &p.vs, &p.n, err)) < 0)
		goto out;
	replay_plan_make(st, path, only, &p);
	rc = replay_results(r, pool, &p, &results, err);
	double base_then = -1, base_now = -1;
	for (size_t k = 0; k < json_array_size(results) && (rc == 0 || !pool); k++) {
		const kb_variant *v = &p.vs[p.which[k]];
		json_t *then = kb_app__jget(v->note, "result"), *now = json_array_get(results, k);
		bool same_gpu = !then || !strcmp(gpu_of(then), gpu_of(now));
		if (k == 0) {
			kb_buf_catf(out, "%s  (recorded on %s, now on %s%s)\n", path,
				    then ? gpu_of(then) : "?", gpu_of(now),
				    same_gpu ? "" : ": different GPUs, comparing ratios to the first variant");
			kb_buf_catf(out, "  %-5s %-13s %-13s %11s %11s\n", "", "recorded", "now", "then us", "now us");
		}
		if (base_then < 0 && then && kb_app_verdict(then) == KB_VERDICT_CORRECT)
			base_then = kb_app__jnum(then, "timing.median_us"), base_now = kb_app__jnum(now, "timing.median_us");
		replay_row(v, now, base_then, base_now, same_gpu, out);
	}
	for (size_t k = 0; k < json_array_size(results); k++) /* why, and how to say yes: once */
		if (kb_app_verdict(json_array_get(results, k)) == KB_VERDICT_REFUSED) {
			kb_buf_catf(out, "  REFUSED: %s\n",
				    kb_app__str(json_array_get(results, k), "message"));
			break;
		}
out:
	json_decref(results);
	json_decref(p.reqs);
	free(p.which);
	kb_session_variants_free(p.vs, p.n);
	kb_session_store_close(st);
	return rc;
}

int kb_app_replay(kb_runner *r, kb_pool *pool, const char *session, const char *file,
		  const char *only, kb_buf *out, kb_err *err)
{
	kb_session s;
	int rc = kb_session_open(session, &s, err);
	if (rc < 0)
		return rc;
	char **files = NULL;
	int n;
	if (file || only) { /* vN names a variant of one file: which one must be clear */
		files = kb_xcalloc(1, sizeof *files);
		n = (rc = kb_app__session_file(&s, file, &files[0], err)) < 0 ? 0 : 1;
	} else {
		n = kb_session_files(&s, &files, err);
	}
	for (int i = 0; i < n && rc == 0; i++)
		rc = replay_file(r, pool, &s, files[i], only, out, err);
	kb_app__free_strs(files, n > 0 ? n : 0);
	kb_session_free(&s);
	return rc < 0 ? rc : n < 0 ? n : KB_OK;
}
