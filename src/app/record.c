/*
 * record.c - keeping every variant: each compile and run of a kernel file,
 * from the CLI or the TUI, lands in the current session (session.h): the
 * edit as a diff in the journal, the text as a git commit on the session
 * ref, the Result as its note.  Recording never changes what the user sees
 * of a compile or run; its own failures come back for a warning.
 */
#include "app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kb_app_recording(void)
{
	const char *off = getenv("KBENCH_NO_SESSION");
	return !(off && *off && strcmp(off, "0"));
}

/* The newest variant of the store's file and its text; false when none. */
static bool read_tip(kb_store *st, kb_variant *tip, char **text, size_t *len)
{
	kb_variant *vs = NULL;
	int n = 0;
	kb_err err = {0};
	bool ok = kb_session_store_list(st, &vs, &n, &err) == 0 && n > 0 &&
		  kb_session_store_text(st, &vs[n - 1], text, len, &err) == 0;
	if (ok) { /* the listing's copy becomes the caller's */
		*tip = vs[n - 1];
		memset(&vs[n - 1], 0, sizeof vs[n - 1]);
	}
	kb_session_variants_free(vs, n);
	return ok;
}

/* A journal "edit" event with the unified diff from the last variant;
 * returns true when the text is that variant's (no edit). */
static bool record_edit(const kb_session *s, kb_store *st, const char *path, const char *text,
			size_t len, kb_variant *tip)
{
	size_t old_len = 0;
	char *old = NULL;
	if (!read_tip(st, tip, &old, &old_len))
		return false;
	bool same = old_len == len && !memcmp(old, text, len);
	kb_buf d = KB_BUF_INIT;
	kb_err err = {0};
	if (!same && kb_diff_text(old, old_len, text, len, "previous", "now", 3, &d, &err) > 0)
		kb_session_journal_append(s, "edit", json_pack("{s:s, s:s}", "file", path, "diff", d.s),
					  &err);
	kb_buf_free(&d);
	free(old);
	return same;
}

/* ---- commit messages: what a variant is, readable in plain `git log` ---- */

static double num_at(json_t *j, const char *k1, const char *k2)
{
	json_t *v = json_object_get(json_object_get(j, k1), k2);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* The message's body: the kernel, the arch and the options. */
static void describe_build(json_t *compile, kb_buf *m)
{
	const char *kernel = json_string_value(
		json_object_get(json_object_get(compile, "kernel"), "name"));
	const char *arch = json_string_value(json_object_get(compile, "arch"));
	json_t *opts = json_object_get(compile, "options");
	kb_buf_catf(m, "\n\nkernel %s, %s", kernel ? kernel : "?", arch ? arch : "?");
	for (size_t i = 0; i < json_array_size(opts); i++)
		kb_buf_catf(m, " %s", json_string_value(json_array_get(opts, i)));
	kb_buf_catc(m, '\n');
}

/* "compiled: 14 regs, 0 B local, occupancy 100% (warps)" and the body. */
static char *compile_message(json_t *compile)
{
	kb_buf m = KB_BUF_INIT;
	json_t *k = json_object_get(compile, "kernel");
	json_t *res = json_object_get(k, "resources"), *occ = json_object_get(k, "occupancy");
	const char *limiter = json_string_value(json_object_get(occ, "limiter"));
	kb_buf_cat(&m, "compiled");
	if (res)
		kb_buf_catf(&m, ": %.0f regs, %.0f B local, occupancy %.0f%%%s%s%s",
			    num_at(k, "resources", "registers"), num_at(k, "resources", "local_bytes"),
			    num_at(k, "occupancy", "occupancy_pct"), limiter ? " (" : "",
			    limiter ? limiter : "", limiter ? ")" : "");
	describe_build(compile, &m);
	return kb_buf_detach(&m);
}

/* A compile with errors as the Result the note keeps (status spec_error or
 * compile_error: log, export and the TUI show SPEC ERROR / COMPILE ERROR),
 * or NULL for a compile without. */
static json_t *compile_errors(const kb_compile_unit *u)
{
	if (u->status != KB_ESPEC && u->status != KB_ECOMPILE)
		return NULL;
	return kb_runner_diag_result(u->status == KB_ESPEC ? "spec_error" : "compile_error", u);
}

/* "SPEC ERROR: line 4: unknown dtype 'f31' ..." and the body. */
static char *errors_message(const kb_compile_unit *u, json_t *compile)
{
	kb_buf m = KB_BUF_INIT;
	kb_buf_cat(&m, kb_verdict_name(u->status == KB_ESPEC ? KB_VERDICT_SPEC_ERROR
							 : KB_VERDICT_COMPILE_ERROR));
	for (int i = 0; i < u->diags.n; i++)
		if (u->diags.v[i].level == KB_DIAG_ERROR) {
			const kb_diag *g = &u->diags.v[i];
			if (g->line > 0)
				kb_buf_catf(&m, ": line %d", g->line);
			kb_buf_catf(&m, ": %.*s", (int)strcspn(g->msg, "\n"), g->msg);
			break;
		}
	describe_build(compile, &m);
	return kb_buf_detach(&m);
}

/* Whether a variant's note is a compile that had errors. */
static bool had_errors(const kb_variant *v)
{
	const char *st = json_string_value(json_object_get(json_object_get(v->note, "result"),
							   "status"));
	return st && (!strcmp(st, "spec_error") || !strcmp(st, "compile_error"));
}

/* "CORRECT 132.3 us, 67% of copy", "INCORRECT: ...", "FAULT: ..." and the body. */
static char *run_message(json_t *result)
{
	kb_buf m = KB_BUF_INIT;
	json_t *rf = json_object_get(result, "roofline");
	double us = num_at(result, "timing", "median_us");
	const char *msg = json_string_value(json_object_get(result, "message"));
	kb_buf_cat(&m, kb_app_run_verdict(result));
	if (us > 0)
		kb_buf_catf(&m, " %.1f us", us);
	const char *side = json_string_value(json_object_get(rf, "side"));
	if (side && !strcmp(side, "compute") && json_object_get(rf, "pct_of_tensor_peak"))
		kb_buf_catf(&m, ", %.0f%% of tensor-core peak",
			    json_number_value(json_object_get(rf, "pct_of_tensor_peak")));
	else if (side && !strcmp(side, "compute") && json_object_get(rf, "pct_of_fp32_peak"))
		kb_buf_catf(&m, ", %.0f%% of FP32 peak",
			    json_number_value(json_object_get(rf, "pct_of_fp32_peak")));
	else if (json_object_get(rf, "pct_of_measured_copy"))
		kb_buf_catf(&m, ", %.0f%% of copy",
			    json_number_value(json_object_get(rf, "pct_of_measured_copy")));
	else if (json_object_get(rf, "pct_of_datasheet_dram"))
		kb_buf_catf(&m, ", %.0f%% of datasheet DRAM",
			    json_number_value(json_object_get(rf, "pct_of_datasheet_dram")));
	if (us <= 0 && msg && *msg)
		kb_buf_catf(&m, ": %.*s", (int)strcspn(msg, "\n;"), msg);
	describe_build(json_object_get(result, "compile"), &m);
	return kb_buf_detach(&m);
}

/* Names the repository a failed write was for in err (libgit2's words may
 * name only a temporary file in it); returns rc. */
static int in_repo(int rc, const kb_store *st, kb_err *err)
{
	if (rc < 0 && err) {
		char *msg = kb_xasprintf("%s: %s", kb_session_store_repo(st), err->msg);
		snprintf(err->msg, sizeof err->msg, "%s", msg);
		free(msg);
	}
	return rc;
}

/* The current session, the store of path and the name the session
 * records it under (*name: a new string). */
static int open_store(const char *path, kb_session *s, kb_store **st, char **name, kb_err *err)
{
	int rc = kb_session_current(s, err);
	if (rc < 0)
		return rc;
	/* the file at path, whatever the session calls other files */
	*name = kb_session_file_name(s, path);
	if ((rc = kb_session_store_open(s, *name, st, err)) < 0) {
		free(*name);
		*name = NULL;
		kb_session_free(s);
	}
	return rc;
}

int kb_app_record_compile(const kb_compile_unit *u, kb_variant *v, kb_err *err)
{
	kb_session s;
	kb_store *st = NULL;
	char *name = NULL;
	int rc = open_store(u->src.path, &s, &st, &name, err);
	if (rc < 0)
		return rc;
	kb_variant tip;
	memset(&tip, 0, sizeof tip);
	bool same = record_edit(&s, st, name, u->src.text, u->src.len, &tip);
	json_t *ev = json_pack("{s:s, s:b, s:s?}", "file", name, "ok", u->build.ok,
			       "arch", u->build.arch);
	json_t *errors = compile_errors(u);
	/* the same text without the errors it had (a -D, an --option): its note
	 * becomes this compile's (one with a Result is never replaced) */
	if (same && had_errors(&tip) && !errors) {
		same = false;
		kb_session_variant_free(&tip);
		memset(&tip, 0, sizeof tip);
	}
	if (same) {
		/* An unchanged text is the same variant; its note (maybe a run's
		 * Result) is kept, not replaced by a mere compile. */
		json_object_set_new(ev, "variant", json_string(tip.name));
		json_object_set_new(ev, "commit", json_string(tip.oid));
		if (v)
			*v = tip, memset(&tip, 0, sizeof tip);
	} else if (u->build.ok || errors) { /* every compile is kept, errors too */
		kb_variant local;
		kb_variant *out = v ? v : &local;
		memset(out, 0, sizeof *out);
		json_t *compile = kb_compile_unit_summary_json(u);
		char *msg = errors ? errors_message(u, compile) : compile_message(compile);
		json_t *note = json_pack("{s:s, s:o, s:O*}", "file", name, "compile", compile,
					 "result", errors);
		rc = in_repo(kb_session_store_commit(st, u->src.text, u->src.len, msg, note, out, err),
			     st, err);
		free(msg);
		if (rc == 0) {
			json_object_set_new(ev, "variant", json_string(out->name));
			json_object_set_new(ev, "commit", json_string(out->oid));
		}
		if (out == &local)
			kb_session_variant_free(&local);
	}
	kb_session_variant_free(&tip);
	json_decref(errors);
	json_object_set_new(ev, "errors", json_integer(kb_diag_count(&u->diags, KB_DIAG_ERROR)));
	kb_session_journal_append(&s, "compile", ev, NULL);
	kb_session_store_close(st);
	kb_session_free(&s);
	free(name);
	return rc;
}

/* How variant `name` compares with the others, appended to deltas. */
static void compare(kb_store *st, const char *name, kb_buf *deltas)
{
	kb_variant *vs = NULL;
	int n = 0;
	kb_err err = {0};
	if (kb_session_store_list(st, &vs, &n, &err) == 0)
		kb_app_deltas_text(vs, n, name, deltas);
	kb_session_variants_free(vs, n);
}

/* Whether a result of this status ran the kernel (or tried to: a fault or
 * a hang is a result of the variant too), so it is kept as one. */
static bool ran(const char *status)
{
	static const char *const kept[] = {"ok", "fault", "timeout", "crash", "launch_error"};
	for (size_t i = 0; status && i < KB_ARRAY_LEN(kept); i++)
		if (!strcmp(status, kept[i]))
			return true;
	return false;
}

int kb_app_record_run(const char *path, json_t *result, kb_variant *v, kb_buf *deltas,
		      kb_err *err)
{
	kb_buf text = KB_BUF_INIT;
	int rc = kb_file_read(path, &text, err);
	if (rc == 0)
		rc = kb_app_record_run_text(path, text.s ? text.s : "", text.len, result, v, deltas, err);
	kb_buf_free(&text);
	return rc;
}

int kb_app_record_run_text(const char *path, const char *text, size_t len, json_t *result,
			   kb_variant *v, kb_buf *deltas, kb_err *err)
{
	kb_session s;
	kb_store *st = NULL;
	char *name = NULL;
	int rc = open_store(path, &s, &st, &name, err);
	if (rc < 0)
		return rc;
	kb_variant local;
	kb_variant *out = v ? v : &local;
	memset(out, 0, sizeof *out);
	const char *status = json_string_value(json_object_get(result, "status"));
	json_t *ev = json_pack("{s:s, s:s?}", "file", name, "status", status);
	if (ran(status)) {
		json_t *note = json_pack("{s:s, s:O?, s:O}", "file", name, "compile",
					 json_object_get(result, "compile"), "result", result);
		char *msg = run_message(result);
		rc = in_repo(kb_session_store_commit(st, text, len, msg, note, out, err), st, err);
		free(msg);
		if (rc == 0) {
			json_object_set_new(ev, "variant", json_string(out->name));
			json_object_set_new(ev, "commit", json_string(out->oid));
		}
		if (rc == 0 && deltas)
			compare(st, out->name, deltas);
		json_object_set_new(ev, "verdict", json_incref(json_object_get(result, "verdict")));
	}
	kb_session_journal_append(&s, "run", ev, NULL);
	kb_session_journal_append(&s, "result", json_pack("{s:s, s:s?, s:s?, s:O}", "file", name,
							  "variant", out->name[0] ? out->name : NULL,
							  "commit", out->oid[0] ? out->oid : NULL,
							  "result", result), NULL);
	if (out == &local)
		kb_session_variant_free(&local);
	kb_session_store_close(st);
	kb_session_free(&s);
	free(name);
	return rc;
}
