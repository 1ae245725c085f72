/*
 * sessions.c - the session verbs: log, show, diff, checkout, sessions and
 * replay.  Each reads the session (journal + variant store) and renders
 * text; replay also drives the runner.  A verb that names no file works on
 * the file the session touched last.
 */
#include "app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reading Results ------------------------------------------------------ */

static json_t *jget(json_t *j, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
		j = json_object_get(j, k);
	return j;
}

static double jnum(json_t *j, const char *path)
{
	json_t *v = jget(j, path);
	return json_is_number(v) ? json_number_value(v) : -1;
}

static const char *verdict_of(const kb_variant *v)
{
	json_t *r = jget(v->note, "result");
	if (!r)
		return v->note ? "compiled" : "-";
	return kb_app_run_verdict(r);
}

static double median_of(const kb_variant *v)
{
	return jnum(v->note, "result.timing.median_us");
}

static bool timed_correct(const kb_variant *v)
{
	return !strcmp(verdict_of(v), "CORRECT") && median_of(v) > 0;
}

/* The fastest CORRECT variant other than `skip`, or -1. */
static int best_but(const kb_variant *vs, int n, int skip)
{
	int best = -1;
	for (int i = 0; i < n; i++)
		if (i != skip && timed_correct(&vs[i]) &&
		    (best < 0 || median_of(&vs[i]) < median_of(&vs[best])))
			best = i;
	return best;
}

/* The fastest CORRECT variant, or -1. */
static int best_of(const kb_variant *vs, int n)
{
	return best_but(vs, n, -1);
}

/* A number right-aligned in width columns, or "-" when v < 0 (unknown). */
static void cat_num(kb_buf *out, int width, int prec, double v)
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
static int session_files(const kb_session *s, char ***files, kb_err *err)
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

static void free_strs(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Opens the current session and the store of file (or its last file). */
static int open_file_store(const char *file, kb_session *s, char **path, kb_store **st, kb_err *err)
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

static void close_file_store(kb_session *s, char *path, kb_store *st)
{
	kb_session_store_close(st);
	free(path);
	kb_session_free(s);
}

/* ---- log --------------------------------------------------------------------- */

static void log_file(const kb_session *s, const char *path, kb_buf *out, kb_err *err)
{
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	int n = 0;
	if (kb_session_store_open(s, path, &st, err) < 0 ||
	    kb_session_store_list(st, &vs, &n, err) < 0) {
		kb_buf_catf(out, "%s: %s\n", path, err->msg);
		kb_session_store_close(st);
		return;
	}
	int best = best_of(vs, n);
	kb_buf_catf(out, "%s  (session %s, %s %s)\n", path, s->id, kb_session_store_repo(st),
		    kb_session_store_ref(st));
	kb_buf_catf(out, "  %-5s %-12s %-13s %12s %10s %6s %6s  %s\n", "", "label", "verdict",
		    "median us", "GB/s", "regs", "occ%", "commit");
	for (int i = 0; i < n; i++) {
		const kb_variant *v = &vs[i];
		double med = median_of(v), gbs = jnum(v->note, "result.roofline.GBps");
		double regs = jnum(v->note, "compile.kernel.resources.registers");
		double occ = jnum(v->note, "compile.kernel.occupancy.occupancy_pct");
		kb_buf_catf(out, "  %-5s %-12s %-13s", v->name, v->label ? v->label : "", verdict_of(v));
		cat_num(out, 12, 2, med);
		cat_num(out, 10, 1, gbs);
		cat_num(out, 6, 0, regs);
		cat_num(out, 6, 0, occ);
		kb_buf_catf(out, "  %.10s%s\n", v->oid, i == best ? "  <- best" : "");
	}
	if (!n)
		kb_buf_cat(out, "  (no variants yet)\n");
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
}

int kb_app_log(const char *what, kb_buf *out, kb_err *err)
{
	kb_session s;
	bool is_file = what && kb_file_exists(what) && strcmp(kb_extension(what), "") &&
		       kb_session_open(what, &s, NULL) != 0;
	int rc = (!what || is_file) ? kb_session_current(&s, err) : kb_session_open(what, &s, err);
	if (rc < 0)
		return rc;
	if (is_file) {
		log_file(&s, what, out, err);
	} else {
		char **files;
		int n = session_files(&s, &files, err);
		for (int i = 0; i < n; i++)
			log_file(&s, files[i], out, err);
		if (n == 0)
			kb_buf_catf(out, "session %s: nothing recorded yet\n", s.id);
		free_strs(files, n > 0 ? n : 0);
	}
	kb_session_free(&s);
	return KB_OK;
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
	json_t *d = kb_diff_numbers(jget(other->note, "result"), jget(cur->note, "result"));
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
	else if (best >= 0 && median_of(&vs[cur]) < median_of(&vs[best]))
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
	int rc = open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	kb_variant *vs = NULL;
	int n = 0;
	rc = kb_session_store_list(st, &vs, &n, err);
	if (rc == 0) {
		fn(vs, n, view);
		kb_session_variants_free(vs, n);
	}
	close_file_store(&s, path, st);
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
	int rc = open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	rc = kb_session_store_count(st, &n, err);
	close_file_store(&s, path, st);
	return rc < 0 ? rc : n;
}

/* Variant `name` of `file` with its text; *path (may be NULL) gets the
 * file's path.  The caller frees v, *text and *path. */
static int read_variant(const char *name, const char *file, kb_variant *v, char **text,
			size_t *len, char **path, kb_err *err)
{
	kb_session s;
	char *p;
	kb_store *st;
	memset(v, 0, sizeof *v);
	*text = NULL;
	*len = 0;
	int rc = open_file_store(file, &s, &p, &st, err);
	if (rc < 0)
		return rc;
	rc = kb_session_store_read(st, name, v, text, len, err);
	if (path)
		*path = kb_xstrdup(p);
	close_file_store(&s, p, st);
	return rc;
}

int kb_app_variant_text(const char *name, const char *file, char **text, size_t *len, kb_err *err)
{
	kb_variant v;
	int rc = read_variant(name, file, &v, text, len, NULL, err);
	kb_session_variant_free(&v);
	return rc;
}

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
	if (what && !strcmp(what, "edit")) {
		const char *d = json_string_value(json_object_get(ev, "diff"));
		kb_buf_cat(out, d ? d : "(no diff recorded)\n");
		return;
	}
	if (what && !strcmp(what, "compile") && json_is_false(json_object_get(ev, "ok")))
		kb_buf_catf(out, "did not compile: %d error(s)\n",
			    (int)json_integer_value(json_object_get(ev, "errors")));
	json_t *res = v ? jget(v->note, "result") : NULL;
	const char *arch = v ? json_string_value(jget(v->note, "compile.arch")) : NULL;
	if (res)
		kb_app_run_render(res, out);
	else if (v)
		kb_buf_catf(out, "%s compiled (%s): %.0f registers, occupancy %.0f%%; not run\n", v->name,
			    arch ? arch : "?", jnum(v->note, "compile.kernel.resources.registers"),
			    jnum(v->note, "compile.kernel.occupancy.occupancy_pct"));
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
static const kb_variant *replay_variant(const replay_store *rs, const char *name,
					char *why, size_t n)
{
	if (rs->why[0]) {
		snprintf(why, n, "%s", rs->why);
		return NULL;
	}
	long k = name[0] == 'v' ? strtol(name + 1, NULL, 10) : 0;
	if (k >= 1 && k <= rs->n && !strcmp(rs->vs[k - 1].name, name))
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
	const kb_variant *v = rs && name ? replay_variant(rs, name, why, sizeof why) : NULL;
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
	if (v)
		json_object_set_new(step, "text", json_stringn(text ? text : "", len));
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

/* ---- show ---------------------------------------------------------------------- */

int kb_app_show(const char *name, const char *file, kb_buf *out, kb_err *err)
{
	kb_variant v;
	char *text, *path = NULL;
	size_t len;
	int rc = read_variant(name, file, &v, &text, &len, &path, err);
	if (rc == 0) {
		kb_buf_catf(out, "%s %s  commit %s  %s\n", path, v.name, v.oid, verdict_of(&v));
		json_t *res = jget(v.note, "result");
		if (res)
			kb_app_run_render(res, out);
		kb_buf_cat(out, "\n");
		kb_buf_catn(out, text, len);
	}
	free(text);
	free(path);
	kb_session_variant_free(&v);
	return rc;
}

/* ---- diff ---------------------------------------------------------------------- */

typedef struct {
	kb_variant v;
	char *text;
	size_t len;
} loaded;

static int load_variant(kb_store *st, const char *name, loaded *l, kb_err *err)
{
	memset(l, 0, sizeof *l);
	return kb_session_store_read(st, name, &l->v, &l->text, &l->len, err);
}

static void unload(loaded *l)
{
	kb_session_variant_free(&l->v);
	free(l->text);
}

/* The SASS function of the kernel the spec runs, in a fresh (cached)
 * compile of a variant's text; NULL with a reason in why. */
static const kb_sass_func *variant_sass(const char *path, const loaded *l, kb_compile_unit *u,
					kb_buf *why)
{
	const char *arch = json_string_value(jget(l->v.note, "compile.arch"));
	kb_compile_unit_opts o = {.arch = arch, .want_sass = true};
	kb_err err = {0};
	int rc = kb_compile_unit_run(path, l->text, &o, u, &err);
	if (rc < 0 && rc != KB_ESPEC)
		return kb_buf_catf(why, "%s does not compile: %s\n", l->v.name, err.msg), NULL;
	if (!u->build.sass.available)
		return kb_buf_catf(why, "SASS not available: %s\n",
				   u->build.sass.unavailable_why ? u->build.sass.unavailable_why : "?"), NULL;
	const char *sym = NULL;
	for (int i = 0; i < u->build.nkernels; i++)
		if (!u->chosen || !strcmp(u->build.kernels[i].name, u->chosen->name))
			sym = u->build.kernels[i].lowered;
	for (int f = 0; sym && f < u->build.sass.nfuncs; f++)
		if (!strcmp(u->build.sass.funcs[f].name, sym))
			return &u->build.sass.funcs[f];
	kb_buf_catf(why, "%s: the kernel's SASS was not found\n", l->v.name);
	return NULL;
}

static void diff_sass(const char *path, const loaded *a, const loaded *b, kb_buf *out, kb_err *err)
{
	kb_compile_unit ua, ub;
	const kb_sass_func *fa = variant_sass(path, a, &ua, out);
	const kb_sass_func *fb = fa ? variant_sass(path, b, &ub, out) : NULL;
	if (fa && fb) {
		kb_buf_catf(out, "SASS of %s, normalised (registers, addresses, branch targets abstracted)\n",
			    fa->name);
		if (kb_diff_sass(fa, fb, a->v.name, b->v.name, out, err) == 0)
			kb_buf_cat(out, "(no difference)\n");
	}
	if (fa)
		kb_compile_unit_free(&ub);
	kb_compile_unit_free(&ua);
}

int kb_app_diff(const char *an, const char *bn, const char *file, int what, kb_buf *out, kb_err *err)
{
	kb_session s;
	char *path;
	kb_store *st;
	int rc = open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	loaded a, b;
	if ((rc = load_variant(st, an, &a, err)) < 0 || (rc = load_variant(st, bn, &b, err)) < 0)
		goto out;
	if (what & KB_DIFF_SOURCE) {
		kb_buf_catf(out, "source %s -> %s\n", a.v.name, b.v.name);
		if (kb_diff_text(a.text, a.len, b.text, b.len, a.v.name, b.v.name, 3, out, err) == 0)
			kb_buf_cat(out, "(no difference)\n");
	}
	if (what & KB_DIFF_SASS)
		diff_sass(path, &a, &b, out, err);
	if (what & KB_DIFF_NUMBERS) {
		json_t *ra = jget(a.v.note, "result"), *rb = jget(b.v.note, "result");
		if (ra && rb) {
			json_t *d = kb_diff_numbers(ra, rb);
			kb_diff_numbers_render(d, a.v.name, b.v.name, out);
			json_decref(d);
		} else {
			kb_buf_catf(out, "numbers: %s has not been run (`kbench run` records a Result)\n",
				    ra ? b.v.name : a.v.name);
		}
	}
	unload(&b);
out:
	unload(&a);
	close_file_store(&s, path, st);
	return rc;
}

/* ---- checkout ------------------------------------------------------------------ */

int kb_app_checkout(const char *name, const char *file, kb_buf *out, kb_err *err)
{
	kb_session s;
	char *path;
	kb_store *st;
	int rc = open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	loaded want;
	kb_buf now = KB_BUF_INIT;
	kb_variant saved;
	memset(&saved, 0, sizeof saved);
	if ((rc = load_variant(st, name, &want, err)) < 0)
		goto out;
	/* Nothing the user typed is lost: the current text becomes a variant. */
	if ((rc = kb_file_read(path, &now, err)) < 0 ||
	    (rc = kb_session_store_commit(st, now.s, now.len, "kbench checkout: before", NULL, &saved,
					  err)) < 0 ||
	    (rc = kb_file_write(path, want.text, want.len, err)) < 0)
		goto done;
	kb_session_journal_append(&s, "checkout", json_pack("{s:s, s:s, s:s}", "file", path,
							   "variant", want.v.name, "saved_as", saved.name),
				  NULL);
	kb_buf_catf(out, "%s: now %s (the text before is kept as %s)\n", path, want.v.name, saved.name);
done:
	unload(&want);
out:
	kb_session_variant_free(&saved);
	kb_buf_free(&now);
	close_file_store(&s, path, st);
	return rc;
}

/* ---- sessions ------------------------------------------------------------------ */

int kb_app_sessions(kb_buf *out, kb_err *err)
{
	char **ids = NULL;
	int n = 0;
	int rc = kb_session_list(&ids, &n, err);
	if (rc < 0)
		return rc;
	char cur_id[96] = "";
	bool have_cur = kb_session_current_id(cur_id) == 0;
	for (int i = 0; i < n; i++) {
		kb_session s;
		if (kb_session_open(ids[i], &s, NULL) < 0)
			continue;
		char **files;
		int nf = session_files(&s, &files, NULL);
		kb_buf_catf(out, "%s %-28s %s", have_cur && !strcmp(cur_id, s.id) ? "*" : " ", s.id, s.dir);
		for (int f = 0; f < nf; f++)
			kb_buf_catf(out, "%s%s", f ? ", " : "  ", files[f]);
		kb_buf_catc(out, '\n');
		free_strs(files, nf > 0 ? nf : 0);
		kb_session_free(&s);
	}
	free_strs(ids, n);
	return KB_OK;
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
	const char *g = json_string_value(jget(r, "env.device.name"));
	return g ? g : "?";
}

/* One row: recorded vs now, and what changed beyond noise. */
static void replay_row(const kb_variant *v, json_t *now, double base_then, double base_now,
		       bool same_gpu, kb_buf *out)
{
	json_t *then = jget(v->note, "result");
	const char *vt = then ? kb_app_run_verdict(then) : "not run", *vn = kb_app_run_verdict(now);
	double mt = then ? jnum(then, "timing.median_us") : -1, mn = jnum(now, "timing.median_us");
	kb_buf_catf(out, "  %-5s %-13s %-13s", v->name, vt, vn);
	cat_num(out, 11, 2, mt);
	cat_num(out, 11, 2, mn);
	if (strcmp(vt, vn) && then)
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
	kb_buf_catc(out, '\n');
}

static int replay_file(kb_runner *r, const kb_session *s, const char *path, const char *only,
		       kb_buf *out, kb_err *err)
{
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	int n = 0, rc;
	if ((rc = kb_session_store_open(s, path, &st, err)) < 0 ||
	    (rc = kb_session_store_list(st, &vs, &n, err)) < 0)
		goto out;
	double base_then = -1, base_now = -1;
	bool header = false;
	for (int i = 0; i < n; i++) {
		if (!wanted(only, vs[i].name))
			continue;
		loaded l;
		if (load_variant(st, vs[i].name, &l, err) < 0)
			continue;
		kb_app_run_opts o = {.path = path, .text = l.text};
		json_t *now = NULL;
		rc = kb_app_run(r, &o, NULL, NULL, &now, err);
		json_t *then = jget(vs[i].note, "result");
		bool same_gpu = !then || !strcmp(gpu_of(then), gpu_of(now));
		if (!header) {
			kb_buf_catf(out, "%s  (recorded on %s, now on %s%s)\n", path,
				    then ? gpu_of(then) : "?", gpu_of(now),
				    same_gpu ? "" : ": different GPUs, comparing ratios to the first variant");
			kb_buf_catf(out, "  %-5s %-13s %-13s %11s %11s\n", "", "recorded", "now", "then us", "now us");
			header = true;
		}
		if (base_then < 0 && then && !strcmp(kb_app_run_verdict(then), "CORRECT"))
			base_then = jnum(then, "timing.median_us"), base_now = jnum(now, "timing.median_us");
		replay_row(&vs[i], now, base_then, base_now, same_gpu, out);
		json_decref(now);
		unload(&l);
		if (rc < 0)
			break;
	}
out:
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
	return rc;
}

int kb_app_replay(kb_runner *r, const char *session, const char *only, kb_buf *out, kb_err *err)
{
	kb_session s;
	int rc = kb_session_open(session, &s, err);
	if (rc < 0)
		return rc;
	char **files;
	int n = session_files(&s, &files, err);
	for (int i = 0; i < n && rc == 0; i++)
		rc = replay_file(r, &s, files[i], only, out, err);
	free_strs(files, n > 0 ? n : 0);
	kb_session_free(&s);
	return rc < 0 ? rc : n < 0 ? n : KB_OK;
}

/* ---- report ------------------------------------------------------------------------ */

/* Every variant's text (NULL where unreadable), for the report's diff. */
static void read_sources(kb_store *st, const kb_variant *vs, int n, char **src, size_t *lens)
{
	for (int i = 0; i < n; i++) {
		kb_variant v;
		memset(&v, 0, sizeof v);
		if (kb_session_store_read(st, vs[i].name, &v, &src[i], &lens[i], NULL) < 0)
			src[i] = NULL, lens[i] = 0;
		kb_session_variant_free(&v);
	}
}

/* The SASS diff first correct -> best, when a disassembler exists. */
static char *report_sass(kb_store *st, const char *path, const kb_variant *vs, int first, int best)
{
	if (first < 0 || best < 0 || first == best)
		return NULL;
	loaded a, b;
	kb_buf d = KB_BUF_INIT;
	if (load_variant(st, vs[first].name, &a, NULL) == 0) {
		if (load_variant(st, vs[best].name, &b, NULL) == 0) {
			diff_sass(path, &a, &b, &d, NULL);
			unload(&b);
		}
		unload(&a);
	}
	return d.s ? kb_buf_detach(&d) : NULL;
}

static int write_report(const char *output, const kb_buf *page, const kb_buf *svg, char *svg_path,
			kb_buf *out, kb_err *err)
{
	int rc = kb_file_write(output, page->s, page->len, err);
	if (rc == 0 && svg_path && svg->len)
		rc = kb_file_write(svg_path, svg->s, svg->len, err);
	if (rc == 0)
		kb_buf_catf(out, "wrote %s%s%s\n", output, svg_path && svg->len ? " and " : "",
			    svg_path && svg->len ? svg_path : "");
	return rc;
}

int kb_app_report_session(const char *session, const char *file, const char *output,
			  kb_buf *out, kb_err *err)
{
	kb_session s;
	int rc = kb_session_open(session, &s, err), n = 0, first, best;
	if (rc < 0)
		return rc;
	char *path = file ? kb_xstrdup(file) : kb_app_session_last_file(&s);
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	if (!path) {
		rc = kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0, "session %s is empty", s.id);
		goto out;
	}
	if ((rc = kb_session_store_open(&s, path, &st, err)) < 0 ||
	    (rc = kb_session_store_list(st, &vs, &n, err)) < 0)
		goto out;
	char **src = kb_xcalloc((size_t)n + 1, sizeof *src);
	size_t *lens = kb_xcalloc((size_t)n + 1, sizeof *lens);
	read_sources(st, vs, n, src, lens);
	kb_app_report_pick(vs, n, &first, &best);
	char *sass = report_sass(st, path, vs, first, best);
	bool html = !strcmp(kb_extension(output), "html");
	char *svg_path = html ? NULL : kb_xasprintf("%s.roofline.svg", output);
	kb_app_report_opts o = {.session_id = s.id, .file = path, .sass_diff = sass,
				.svg_name = svg_path ? kb_basename(svg_path) : NULL, .html = html};
	kb_buf page = KB_BUF_INIT, svg = KB_BUF_INIT;
	rc = kb_app_report(&o, vs, n, src, lens, &page, &svg, err);
	if (rc == 0)
		rc = write_report(output, &page, &svg, svg_path, out, err);
	kb_buf_free(&page);
	kb_buf_free(&svg);
	free(svg_path);
	free(sass);
	for (int i = 0; i < n; i++)
		free(src[i]);
	free(src);
	free(lens);
out:
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
	free(path);
	kb_session_free(&s);
	return rc;
}

/* ---- label and note ---------------------------------------------------------------- */

int kb_app_annotate(const char *name, const char *key, const char *text, const char *file,
		    kb_buf *out, kb_err *err)
{
	kb_session s;
	char *path;
	kb_store *st;
	int rc = open_file_store(file, &s, &path, &st, err);
	if (rc < 0)
		return rc;
	loaded l;
	if ((rc = load_variant(st, name, &l, err)) < 0)
		goto out;
	json_t *note = l.v.note ? json_deep_copy(l.v.note) : json_object();
	if (!json_is_object(note)) {
		json_decref(note);
		note = json_object();
	}
	if (!strcmp(key, "label")) {
		json_object_set_new(note, "label", json_string(text));
	} else {
		json_t *notes = json_object_get(note, "notes");
		if (!json_is_array(notes))
			json_object_set_new(note, "notes", notes = json_array());
		json_array_append_new(notes, json_string(text));
	}
	rc = kb_session_store_set_note(st, l.v.name, note, err);
	if (rc == 0) {
		kb_session_journal_append(&s, key, json_pack("{s:s, s:s, s:s}", "file", path, "variant",
							     l.v.name, "text", text), NULL);
		kb_buf_catf(out, "%s %s: %s %s\n", path, l.v.name, key, text);
	}
	unload(&l);
out:
	close_file_store(&s, path, st);
	return rc;
}
