/*
 * variants.c - what every session verb shares: which session and which
 * file a verb works on, a variant loaded with its text, how a variant
 * compares with the previous and the best (the Δ lines), and the small queries the TUI makes (how many variants, one's
 * text, the roofline of them all).
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool timed_correct(const kb_variant *v)
{
	return !v->note_error && kb_app_verdict(kb_app__jget(v->note, "result")) == KB_VERDICT_CORRECT &&
	       kb_app__median_of(v) > 0;
}

/* The fastest CORRECT variant of `kernel` (NULL: any) other than `skip`, or -1. */
static int best_but(const kb_variant *vs, int n, int skip, const char *kernel)
{
	int best = -1;
	for (int i = 0; i < n; i++)
		if (i != skip && timed_correct(&vs[i]) && kb_app__same_kernel(&vs[i], kernel) &&
		    (best < 0 || kb_app__median_of(&vs[i]) < kb_app__median_of(&vs[best])))
			best = i;
	return best;
}

int kb_app__best_of(const kb_variant *vs, int n, const char *kernel)
{
	return best_but(vs, n, -1, kernel);
}

kb_app__best_rank kb_app__best_rank_of(const kb_variant *vs, int n, int i)
{
	if (i == kb_app__best_of(vs, n, NULL))
		return KB_APP__BEST;
	return i == kb_app__best_of(vs, n, vs[i].kernel) ? KB_APP__KERNEL_BEST : KB_APP__NOT_BEST;
}

/* A number right-aligned in width columns, or "-" when v < 0 (unknown). */
void kb_app__cat_num(kb_buf *out, int width, int prec, double v)
{
	if (v < 0)
		kb_buf_catf(out, " %*s", width, "-");
	else
		kb_buf_catf(out, " %*.*f", width, prec, v);
}

void kb_app__cat_worker(kb_buf *out, json_t *res)
{
	const char *w = json_string_value(json_object_get(res, "worker"));
	const char *from = json_string_value(json_object_get(res, "requeued_from"));
	const char *why = json_string_value(json_object_get(res, "requeued_because"));
	if (w && from)
		kb_buf_catf(out, "  [%s, re-queued once: lost on %s, %.80s]", w, from, why ? why : "?");
	else if (w)
		kb_buf_catf(out, "  [%s]", w);
}

/* ---- which session, which file --------------------------------------------- */

void kb_app__free_strs(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int kb_app__session_file(const kb_session *s, const char *file, char **path, kb_err *err)
{
	*path = NULL;
	if (file)
		return kb_session_file_find(s, file, path, err);
	char **files = NULL;
	int n = kb_session_files(s, &files, err);
	if (n < 0)
		return n;
	int rc = KB_OK;
	if (n == 0) {
		rc = kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
				"session %s has no kernel file yet: compile or run one first", s->id);
	} else if (n == 1) {
		*path = kb_xstrdup(files[0]);
	} else {
		kb_buf list = KB_BUF_INIT;
		char **shown = kb_session_files_shown(s, files, n);
		for (int i = 0; i < n; i++)
			kb_buf_catf(&list, "%s%s", i ? ", " : "", shown[i]);
		kb_app__free_strs(shown, n);
		rc = kb_err_set(err, KB_EAMBIG, KB_DOM_NONE, 0,
				"session %s has %d kernel files (%s): say which with --file FILE",
				s->id, n, list.s);
		kb_buf_free(&list);
	}
	kb_app__free_strs(files, n);
	return rc;
}

int kb_app__session_now(kb_session *s, kb_err *err)
{
	char id[96];
	const char *pinned = getenv("KBENCH_SESSION");
	memset(s, 0, sizeof *s);
	if ((!pinned || !*pinned) && kb_session_current_id(id) < 0)
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
				  "no session yet: `kbench compile FILE` records into a new one, "
				  "`kbench session new [NAME]` starts one");
	return kb_session_current(s, err);
}

int kb_app__fstore_open(const char *file, kb_app__fstore *f, kb_err *err)
{
	memset(f, 0, sizeof *f);
	int rc = kb_app__session_now(&f->s, err);
	if (rc < 0)
		return rc;
	if ((rc = kb_app__session_file(&f->s, file, &f->path, err)) < 0 ||
	    (rc = kb_session_store_open(&f->s, f->path, &f->st, err)) < 0) {
		free(f->path);
		kb_session_free(&f->s);
		memset(f, 0, sizeof *f);
	}
	return rc;
}

void kb_app__fstore_close(kb_app__fstore *f)
{
	kb_session_store_close(f->st);
	free(f->path);
	kb_session_free(&f->s);
	memset(f, 0, sizeof *f);
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
	/* the same problem only: variants of the file that ran the same kernel */
	const char *kernel = vs[cur].kernel;
	int prev = -1, best = best_but(vs, n, cur, kernel);
	for (int i = 0; i < cur; i++)
		if (timed_correct(&vs[i]) && kb_app__same_kernel(&vs[i], kernel))
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
	kb_app__fstore f;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc < 0)
		return rc;
	kb_variant *vs = NULL;
	int n = 0;
	rc = kb_session_store_list(f.st, &vs, &n, err);
	if (rc == 0) {
		fn(vs, n, view);
		kb_session_variants_free(vs, n);
	}
	kb_app__fstore_close(&f);
	return rc < 0 ? rc : KB_OK;
}

/* ---- for the TUI: how many variants, and one's text ---------------------------- */

/* Counted from the commits alone: the TUI asks on every Ctrl-N / Ctrl-P,
 * and reading every note costs ~10 ms for 60 variants. */
int kb_app_variant_count(const char *file, kb_err *err)
{
	kb_app__fstore f;
	int n = 0;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc == KB_ENOTFOUND && file && kb_file_exists(file)) {
		kb_err_clear(err);
		return 0; /* a file the session does not hold yet has no variant */
	}
	if (rc < 0)
		return rc;
	rc = kb_session_store_count(f.st, &n, err);
	kb_app__fstore_close(&f);
	return rc < 0 ? rc : n;
}

/* Variant `name` of `file` with its text; *path (may be NULL) gets the
 * file's path.  The caller frees v, *text and *path. */
int kb_app__read_variant(const char *name, const char *file, kb_variant *v, char **text,
			size_t *len, char **path, kb_err *err)
{
	kb_app__fstore f;
	memset(v, 0, sizeof *v);
	*text = NULL;
	*len = 0;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc < 0)
		return rc;
	rc = kb_session_store_read(f.st, name, v, text, len, err);
	if (path)
		*path = kb_session_file_shown(&f.s, f.path);
	kb_app__fstore_close(&f);
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
	/* the current variant: the one named, else the newest */
	kb_app__roofline_text(vs, n, v->name ? v->name : n ? vs[n - 1].name : NULL, v->width,
			      v->height, v->out);
}

int kb_app_roofline(const char *file, const char *current, int width, int height, kb_buf *out,
		    kb_err *err)
{
	variants_view v = {.name = current, .width = width, .height = height, .out = out};
	return with_variants(file, roofline_view, &v, err);
}

