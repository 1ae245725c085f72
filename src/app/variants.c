/*
 * variants.c - what every session verb shares: reading a variant's Result,
 * which session and which file a verb works on, a variant loaded with its
 * text, how a variant compares with the previous and the best (the Δ
 * lines), and the small queries the TUI makes (how many variants, one's
 * text, the roofline of them all).
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reading Results ------------------------------------------------------ */

json_t *kb_app__jget(json_t *j, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
		j = json_object_get(j, k);
	return j;
}

double kb_app__jnum(json_t *j, const char *path)
{
	json_t *v = kb_app__jget(j, path);
	return json_is_number(v) ? json_number_value(v) : -1;
}

const char *kb_app__verdict_of(const kb_variant *v)
{
	json_t *r = kb_app__jget(v->note, "result");
	if (!r)
		return v->note ? "compiled" : "-";
	return kb_app_run_verdict(r);
}

double kb_app__median_of(const kb_variant *v)
{
	return kb_app__jnum(v->note, "result.timing.median_us");
}

static bool timed_correct(const kb_variant *v)
{
	return !strcmp(kb_app__verdict_of(v), "CORRECT") && kb_app__median_of(v) > 0;
}

/* The fastest CORRECT variant other than `skip`, or -1. */
static int best_but(const kb_variant *vs, int n, int skip)
{
	int best = -1;
	for (int i = 0; i < n; i++)
		if (i != skip && timed_correct(&vs[i]) &&
		    (best < 0 || kb_app__median_of(&vs[i]) < kb_app__median_of(&vs[best])))
			best = i;
	return best;
}

/* The fastest CORRECT variant, or -1. */
int kb_app__best_of(const kb_variant *vs, int n)
{
	return best_but(vs, n, -1);
}

/* A number right-aligned in width columns, or "-" when v < 0 (unknown). */
void kb_app__cat_num(kb_buf *out, int width, int prec, double v)
{
	if (v < 0)
		kb_buf_catf(out, " %*s", width, "-");
	else
		kb_buf_catf(out, " %*.*f", width, prec, v);
}

/* ---- which session, which file --------------------------------------------- */

char *kb_app_session_last_file(const kb_session *s)
{
	json_t *evs = NULL;
	long trunc;
	char *file = NULL;
	if (kb_session_journal_read(s, &evs, &trunc, NULL) < 0)
		return NULL;
	for (size_t i = json_array_size(evs); i-- > 0 && !file;) {
		const char *f = json_string_value(json_object_get(json_array_get(evs, i), "file"));
		if (f)
			file = kb_xstrdup(f);
	}
	json_decref(evs);
	return file;
}

/* The distinct files of a session's journal, in first-use order. */
int kb_app__session_files(const kb_session *s, char ***files, kb_err *err)
{
	json_t *evs = NULL;
	long trunc;
	int rc = kb_session_journal_read(s, &evs, &trunc, err), n = 0, cap = 0;
	*files = NULL;
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < json_array_size(evs); i++) {
		const char *f = json_string_value(json_object_get(json_array_get(evs, i), "file"));
		bool seen = !f;
		for (int k = 0; !seen && k < n; k++)
			seen = !strcmp((*files)[k], f);
		if (!seen)
			*KB_PUSH(*files, n, cap) = kb_xstrdup(f);
	}
	json_decref(evs);
	return n;
}

void kb_app__free_strs(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Opens the current session and the store of file (or its last file). */
int kb_app__open_file_store(const char *file, kb_session *s, char **path, kb_store **st, kb_err *err)
{
	int rc = kb_session_current(s, err);
	if (rc < 0)
		return rc;
	*path = file ? kb_xstrdup(file) : kb_app_session_last_file(s);
	if (!*path) {
		kb_session_free(s);
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
				  "session %s has no kernel file yet: compile or run one first", s->id);
	}
	rc = kb_session_store_open(s, *path, st, err);
	if (rc < 0) {
		free(*path);
		kb_session_free(s);
	}
	return rc;
}

void kb_app__close_file_store(kb_session *s, char *path, kb_store *st)
{
	kb_session_store_close(st);
	free(path);
	kb_session_free(s);
}

/* ---- a variant and its text ------------------------------------------------ */

int kb_app__load_variant(kb_store *st, const char *name, kb_app__loaded *l, kb_err *err)
{
	memset(l, 0, sizeof *l);
	return kb_session_store_read(st, name, &l->v, &l->text, &l->len, err);
}

void kb_app__unload(kb_app__loaded *l)
{
	kb_session_variant_free(&l->v);
	free(l->text);
}

/* ---- deltas: a variant against the previous and the best --------------------- */

/* The label column of `kbench run`'s summary: two spaces and 12 columns
 * (the Greek capital delta is one column, two bytes). */
#define DELTA_LABEL "  \u0394           "

/* One line: "vs v2 (previous): faster, -12.3% time (...), beyond the noise".
 * True when cur is faster than other beyond the noise. */
static bool delta_line(const kb_variant *cur, const kb_variant *other, const char *role,
		       kb_buf *out)
{
	json_t *d = kb_diff_numbers(kb_app__jget(other->note, "result"), kb_app__jget(cur->note, "result"));
	const char *verdict = json_string_value(json_object_get(d, "verdict"));
	const char *why = json_string_value(json_object_get(d, "why"));
	kb_buf_catf(out, DELTA_LABEL "vs %s (%s): %s", other->name, role, verdict ? verdict : "?");
	if (why && why[0] && verdict && !strstr(verdict, why)) /* "not comparable: WHY" has it */
		kb_buf_catf(out, ", %s", why);
	kb_buf_cat(out, "\n");
	bool faster = verdict && !strcmp(verdict, "faster");
	json_decref(d);
	return faster;
}

void kb_app_deltas_text(const kb_variant *vs, int n, const char *name, kb_buf *out)
{
	int cur = -1;
	for (int i = 0; i < n; i++)
		if (!strcmp(vs[i].name, name))
			cur = i;
	if (cur < 0 || !timed_correct(&vs[cur]))
		return;
	int prev = -1, best = best_but(vs, n, cur);
	for (int i = 0; i < cur; i++)
		if (timed_correct(&vs[i]))
			prev = i;
	bool beats_best = false;
	if (prev >= 0)
		beats_best = delta_line(&vs[cur], &vs[prev],
					prev == best ? "previous, best so far" : "previous", out) &&
			     prev == best;
	if (best >= 0 && best != prev)
		beats_best = delta_line(&vs[cur], &vs[best], "best", out);
	/* "new best" only beyond the noise: a faster median within it is a tie */
	if (beats_best)
		kb_buf_catf(out, "  %-12s%s is the new best\n", "", vs[cur].name);
	else if (best >= 0 && kb_app__median_of(&vs[cur]) < kb_app__median_of(&vs[best]))
		kb_buf_catf(out, "  %-12s%s ties %s, the best so far, within the noise\n", "",
			    vs[cur].name, vs[best].name);
}

/* The variants of `file` (NULL: the session's last file) in the current
 * session, for one call of `fn` (which must not keep them). */
typedef struct {
	const char *name;
	int width, height;
	kb_buf *out;
} variants_view;

static int with_variants(const char *file, void (*fn)(const kb_variant *, int, const variants_view *),
			 const variants_view *view, kb_err *err)
{
	kb_session s;
	char *path;
	kb_store *st;
	int rc = kb_app__open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	kb_variant *vs = NULL;
	int n = 0;
	rc = kb_session_store_list(st, &vs, &n, err);
	if (rc == 0) {
		fn(vs, n, view);
		kb_session_variants_free(vs, n);
	}
	kb_app__close_file_store(&s, path, st);
	return rc < 0 ? rc : KB_OK;
}

/* ---- for the TUI: how many variants, and one's text ---------------------------- */

/* Counted from the commits alone: the TUI asks on every Ctrl-N / Ctrl-P,
 * and reading every note costs ~10 ms for 60 variants. */
int kb_app_variant_count(const char *file, kb_err *err)
{
	kb_session s;
	char *path;
	kb_store *st;
	int n = 0;
	int rc = kb_app__open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	rc = kb_session_store_count(st, &n, err);
	kb_app__close_file_store(&s, path, st);
	return rc < 0 ? rc : n;
}

/* Variant `name` of `file` with its text; *path (may be NULL) gets the
 * file's path.  The caller frees v, *text and *path. */
int kb_app__read_variant(const char *name, const char *file, kb_variant *v, char **text,
			size_t *len, char **path, kb_err *err)
{
	kb_session s;
	char *p;
	kb_store *st;
	memset(v, 0, sizeof *v);
	*text = NULL;
	*len = 0;
	int rc = kb_app__open_file_store(file, &s, &p, &st, err);
	if (rc < 0)
		return rc;
	rc = kb_session_store_read(st, name, v, text, len, err);
	if (path)
		*path = kb_xstrdup(p);
	kb_app__close_file_store(&s, p, st);
	return rc;
}

int kb_app_variant_text(const char *name, const char *file, char **text, size_t *len, kb_err *err)
{
	kb_variant v;
	int rc = kb_app__read_variant(name, file, &v, text, len, NULL, err);
	kb_session_variant_free(&v);
	return rc;
}

/* ---- roofline ------------------------------------------------------------------ */

static void roofline_view(const kb_variant *vs, int n, const variants_view *v)
{
	kb_app_roofline_text(vs, n, v->width, v->height, v->out);
}

int kb_app_roofline(const char *file, int width, int height, kb_buf *out, kb_err *err)
{
	variants_view v = {.width = width, .height = height, .out = out};
	return with_variants(file, roofline_view, &v, err);
}

