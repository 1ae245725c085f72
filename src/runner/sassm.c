/*
 * sassm.c - the runner's side of SASS metrics: the per-instruction counts
 * the profile layer keyed by (function, pc offset) joined to the build's
 * nvdisasm listing (the instruction's text, its source line), and summed
 * per source line.  Owns no collection (counters/sassmetrics.c) and no
 * rendering (app/profile.c).
 */
#include "runner_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const counts[] = {"executions", "shared_wavefronts", "shared_wavefronts_ideal",
				     "bank_conflicts"};

void kb_runner__copy_sassm(json_t *from, json_t *to)
{
	for (size_t k = 0; k < KB_ARRAY_LEN(counts); k++) {
		json_t *v = json_object_get(from, counts[k]);
		if (v)
			json_object_set(to, counts[k], v);
	}
}

static json_int_t ival(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Adds one instruction's wavefronts and conflicts to its line's entry in
 * `lines` (key: the line number, or file:line for another file's code). */
static void add_to_line(const kb_compile_unit *u, json_t *lines, const char *file, int line,
			bool own, json_t *e)
{
	char *key = own ? kb_xasprintf("%d", line) : kb_xasprintf("%s:%d", file ? file : "?", line);
	json_t *l = json_object_get(lines, key);
	if (!l) {
		char *text = kb_runner__source_line(u, file, line);
		l = json_pack("{s:i, s:s, s:I, s:I, s:I}", "line", line, "text", text, "bank_conflicts",
			      (json_int_t)0, "shared_wavefronts", (json_int_t)0, "instructions",
			      (json_int_t)0);
		if (!own)
			json_object_set_new(l, "file", json_string(file ? kb_basename(file) : "?"));
		json_object_set_new(lines, key, l);
		free(text);
	}
	free(key);
	json_object_set_new(l, "bank_conflicts",
			    json_integer(ival(l, "bank_conflicts") + ival(e, "bank_conflicts")));
	json_object_set_new(l, "shared_wavefronts",
			    json_integer(ival(l, "shared_wavefronts") + ival(e, "shared_wavefronts")));
	json_object_set_new(l, "instructions", json_integer(ival(l, "instructions") + 1));
}

/* The lines' entries, most conflicts first (then most wavefronts). */
static json_t *sorted_lines(json_t *lines)
{
	json_t *arr = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(lines, k, v)
		json_array_append(arr, v);
	for (size_t a = 1; a < json_array_size(arr); a++)
		for (size_t b = a; b > 0; b--) {
			json_t *x = json_array_get(arr, b), *y = json_array_get(arr, b - 1);
			json_int_t cx = ival(x, "bank_conflicts"), cy = ival(y, "bank_conflicts");
			if (cx < cy || (cx == cy && ival(x, "shared_wavefronts") <= ival(y, "shared_wavefronts")))
				break;
			json_incref(x);
			json_array_set(arr, b, y);
			json_array_set_new(arr, b - 1, x);
		}
	return arr;
}

void kb_runner__map_sassm(const kb_compile_unit *u, json_t *r)
{
	json_t *sm = json_object_get(r, "sass_metrics");
	json_t *lines = json_object();
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(sm, "shared"), i, e) {
		kb_runner__where w;
		if (!kb_runner__place(u, e, &w))
			continue;
		if (!w.own)
			json_object_set_new(e, "file", json_string(w.file ? kb_basename(w.file) : "?"));
		add_to_line(u, lines, w.file, w.line, w.own, e);
	}
	json_object_set_new(sm, "conflict_lines", sorted_lines(lines));
	json_decref(lines);
}

/* CUPTI's SASS metrics do not survive the rest of a profile in one process
 * (H100, CUPTI 13.0: after the range profiler and PC sampling ran, Enable
 * patches nothing, and a second cuptiSassMetricsSetConfig fails with
 * CUPTI_ERROR_OUT_OF_MEMORY), and a warm worker serves many profiles.  So
 * the counts come from a worker of their own, started for this one launch:
 * the compile is a cache hit, the inputs are filled from the same seed. */
void kb_runner__sassm_fresh(kb_runner__ctx *c, json_t *req, json_t *r)
{
	c->progress(c->progress_ctx, "SASS metrics (a fresh worker)", NULL, NULL, NULL);
	json_t *sub = json_deep_copy(req), *res = NULL;
	json_object_set_new(sub, "sass_metrics_only", json_true());
	json_object_set_new(sub, "time", json_false());
	json_object_del(sub, "metrics");
	json_object_del(sub, "hot");
	if (json_object_get(r, "hot"))
		json_object_set(sub, "hot_in", json_object_get(r, "hot"));
	if (json_object_get(r, "seed"))
		json_object_set(sub, "seed", json_object_get(r, "seed"));
	kb_runner *w = kb_runner_new(NULL);
	kb_runner_set_quiet(w, true);
	kb_err err = {0};
	int rc = kb_runner_call(w, sub, 60e3, NULL, NULL, &res, &err);
	json_t *sm = res ? json_object_get(res, "sass_metrics") : NULL;
	if (sm) {
		json_object_set(r, "sass_metrics", sm);
		if (json_object_get(res, "hot"))
			json_object_set(r, "hot", json_object_get(res, "hot"));
	} else {
		json_t *e = res ? json_object_get(res, "sass_metrics_error") : NULL;
		const char *why = rc < 0 ? err.msg : res ? json_string_value(json_object_get(res, "message"))
						       : NULL;
		json_object_set_new(r, "sass_metrics_error",
				    e ? json_incref(e)
				      : json_pack("{s:s, s:b}", "message",
						  why ? why : "the SASS-metrics worker gave no counts",
						  "permission", false));
	}
	json_decref(res);
	json_decref(sub);
	kb_runner_close(w);
}
