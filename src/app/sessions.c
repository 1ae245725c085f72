/*
 * sessions.c - the session verbs that read and annotate one file's
 * variants: log, show, diff (source, SASS, numbers), checkout, label and
 * note, and the list of sessions.  What they share is in variants.c.
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- log --------------------------------------------------------------------- */

/* The distinct kernels the variants ran, in first-use order (borrowed strings). */
static int kernels_of(const kb_variant *vs, int n, const char **ks, int max)
{
	int nk = 0;
	for (int i = 0; i < n; i++) {
		bool seen = !vs[i].kernel;
		for (int k = 0; !seen && k < nk; k++)
			seen = !strcmp(ks[k], vs[i].kernel);
		if (!seen && nk < max)
			ks[nk++] = vs[i].kernel;
	}
	return nk;
}

/* The extra columns of a log: names asked for and each one's width. */
typedef struct {
	const char *const *names;
	int n;
	int width[KB_LOG_COLS];
} log_cols;

/* Variant v's value of column name: its counter of that name, else the
 * Result field at that dotted path; NAN when it has neither. */
static double col_value(const kb_variant *v, const char *name)
{
	json_t *res = kb_app__jget(v->note, "result");
	json_t *c = json_object_get(json_object_get(res, "counters"), name);
	if (!c)
		c = kb_app__jget(res, name);
	return json_is_number(c) ? json_number_value(c) : NAN;
}

/* A counter as a person reads one: 268.4M, 1.98G, 45.31, 0.0123. */
static void cat_col(kb_buf *out, int width, double v)
{
	static const char si[] = "kMGTPE";
	char text[32];
	int e = 0;
	double a = fabs(v);
	if (isnan(v)) {
		snprintf(text, sizeof text, "-");
	} else if (a >= 1e4) {
		while (a >= 1e3 && e < (int)sizeof si - 1)
			a /= 1e3, v /= 1e3, e++;
		snprintf(text, sizeof text, "%.4g%c", v, si[e - 1]);
	} else {
		snprintf(text, sizeof text, "%.4g", v);
	}
	kb_buf_catf(out, " %*s", width, text);
}

/* A column's heading: the name, or its start and '~' when it is wider
 * than 28 (the whole name follows the table). */
static void cat_heading(kb_buf *out, int width, const char *name)
{
	if (strlen(name) <= (size_t)width)
		kb_buf_catf(out, " %*s", width, name);
	else
		kb_buf_catf(out, " %.*s~", width - 1, name);
}

/* One variant's row of the log; mark: "" or what it is the fastest of. */
static void log_row(const kb_variant *v, bool kernel_col, const char *mark, const log_cols *cols,
		    kb_buf *out)
{
	double med = kb_app__median_of(v), gbs = kb_app__jnum(v->note, "result.roofline.GBps");
	double regs = kb_app__jnum(v->note, "compile.kernel.resources.registers");
	double occ = kb_app__jnum(v->note, "compile.kernel.occupancy.occupancy_pct");
	kb_buf_catf(out, "  %-5s", v->name);
	if (kernel_col)
		kb_buf_catf(out, " %-20s", v->kernel ? v->kernel : "-");
	kb_buf_catf(out, " %-12s %-13s", v->label ? v->label : "", kb_app__verdict_of(v));
	kb_app__cat_num(out, 12, 2, med);
	kb_app__cat_num(out, 10, 1, gbs);
	kb_app__cat_num(out, 6, 0, regs);
	kb_app__cat_num(out, 6, 0, occ);
	for (int c = 0; c < cols->n; c++)
		cat_col(out, cols->width[c], col_value(v, cols->names[c]));
	kb_buf_catf(out, "  %.10s%s\n", v->oid, mark);
}

/* After the table: the whole name of a shortened heading, and a column no
 * variant has, with the counters whose names hold it (a profiled variant
 * has dozens; `kbench show vN` lists them). */
static void explain_empty_cols(const kb_variant *vs, int n, const log_cols *cols, kb_buf *out)
{
	for (int c = 0; c < cols->n; c++)
		if (strlen(cols->names[c]) > (size_t)cols->width[c])
			kb_buf_catf(out, "  %.*s~ is %s\n", cols->width[c] - 1, cols->names[c],
				    cols->names[c]);
	for (int c = 0; c < cols->n; c++) {
		bool any = false;
		for (int i = 0; i < n && !any; i++)
			any = !isnan(col_value(&vs[i], cols->names[c]));
		if (any || !n)
			continue;
		kb_buf_catf(out, "  no variant has '%s'", cols->names[c]);
		int shown = 0;
		for (int i = 0; i < n && !shown; i++) {
			const char *k;
			json_t *val;
			json_object_foreach(kb_app__jget(vs[i].note, "result.counters"), k, val)
				if (strstr(k, cols->names[c]) && shown < 6)
					kb_buf_catf(out, "%s%s", shown++ ? ", " : "; counters with it: ", k);
		}
		kb_buf_cat(out, shown ? "\n" : " (not a counter of a profiled variant, nor a Result field; "
					       "`kbench profile` records counters)\n");
	}
}

/* Each of v's notes (`kbench note`) on a line after lead. */
static void cat_notes(const kb_variant *v, const char *lead, kb_buf *out)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(v->note, "notes"), i, t)
		if (json_is_string(t))
			kb_buf_catf(out, "%s%s\n", lead, json_string_value(t));
}

static void log_file(const kb_session *s, const char *path, const log_cols *cols, kb_buf *out,
		     kb_err *err)
{
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	const char *ks[16];
	int n = 0;
	if (kb_session_store_open(s, path, &st, err) < 0 ||
	    kb_session_store_list(st, &vs, &n, err) < 0) {
		kb_buf_catf(out, "%s: %s\n", path, err->msg);
		kb_session_store_close(st);
		return;
	}
	int nk = kernels_of(vs, n, ks, (int)KB_ARRAY_LEN(ks));
	char *shown = kb_session_file_shown(s, path);
	kb_buf_catf(out, "%s", shown);
	free(shown);
	if (nk == 1)
		kb_buf_catf(out, "  kernel %s", ks[0]);
	kb_buf_catf(out, "  (session %s, %s %s)\n", s->id, kb_session_store_repo(st),
		    kb_session_store_ref(st));
	kb_buf_catf(out, "  %-5s", "");
	if (nk > 1)
		kb_buf_catf(out, " %-20s", "kernel");
	kb_buf_catf(out, " %-12s %-13s %12s %10s %6s %6s", "label", "verdict", "median us", "GB/s",
		    "regs", "occ%");
	for (int c = 0; c < cols->n; c++)
		cat_heading(out, cols->width[c], cols->names[c]);
	kb_buf_catf(out, "  %s\n", "commit");
	static const char *const mark[] = {
		[KB_APP__NOT_BEST] = "", [KB_APP__BEST] = "  <- best",
		[KB_APP__KERNEL_BEST] = "  <- its kernel's best",
	};
	for (int i = 0; i < n; i++)
		log_row(&vs[i], nk > 1, mark[kb_app__best_rank_of(vs, n, i)], cols, out);
	explain_empty_cols(vs, n, cols, out);
	for (int i = 0; i < n; i++) {
		char lead[32];
		snprintf(lead, sizeof lead, "  %s note: ", vs[i].name);
		cat_notes(&vs[i], lead, out);
	}
	for (int i = 0; i < n; i++)
		if (vs[i].note_error)
			kb_buf_catf(out, "  %s: %s\n", vs[i].name, vs[i].note_error);
	if (!n)
		kb_buf_cat(out, "  (no variants yet)\n");
	json_t *rounds = kb_app__llm_rounds(s, path);
	kb_app__rounds_text(rounds, out);
	json_decref(rounds);
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
}

/* The journal's lines that are not events (damage from outside; the
 * variants are in git and listed all the same). */
static void journal_damage(const kb_session *s, kb_buf *out)
{
	json_t *evs = NULL, *e;
	long trunc;
	size_t i;
	if (kb_session_journal_read(s, &evs, &trunc, NULL) < 0)
		return;
	json_array_foreach(evs, i, e)
		if (!strcmp(kb_app__str(e, "event"), "unreadable"))
			kb_buf_catf(out, "  journal.jsonl:%lld: not an event, passed over: %s\n",
				    (long long)json_integer_value(json_object_get(e, "line")),
				    kb_app__str(e, "text"));
	json_decref(evs);
}

/* What `kbench log WHAT` reads: the current session and in *name its file
 * WHAT (an existing file, or a name of one of its files), else session
 * WHAT (*name NULL; WHAT NULL: the current session). */
static int file_named(const char *what, kb_session *s, char **name, kb_err *err)
{
	*name = NULL;
	bool is_file = what && kb_file_exists(what) && strcmp(kb_extension(what), "");
	if (!what || (!is_file && kb_session_open(what, s, NULL) == 0))
		return what ? KB_OK : kb_app__session_now(s, err);
	kb_err ferr = {0};
	int rc = kb_app__session_now(s, err);
	if (rc < 0 && !is_file) /* not a file: the session it names is not there either */
		rc = KB_ERR(err, KB_ENOTFOUND, KB_DOM_NONE, 0, "no session '%s'", what);
	if (rc < 0)
		return rc;
	if ((rc = kb_session_file_find(s, what, name, &ferr)) == 0)
		return KB_OK;
	if ((is_file || rc == KB_EAMBIG) && err) /* the file, or the files it may be */
		*err = ferr;
	else
		rc = KB_ERR(err, KB_ENOTFOUND, KB_DOM_NONE, 0, "no session '%s', and %s", what,
			    ferr.msg);
	kb_session_free(s);
	return rc;
}

/* The log; damage: also the journal's damaged lines (one more read of the
 * journal: the command's, not the TUI pane's on every result). */
static int log_with(const char *what, const char *const *names, int ncols, bool damage,
		    kb_buf *out, kb_err *err)
{
	log_cols cols = {.names = names, .n = ncols < KB_LOG_COLS ? ncols : KB_LOG_COLS};
	for (int c = 0; c < cols.n; c++) {
		int len = (int)strlen(names[c]);
		cols.width[c] = len < 9 ? 9 : len > 28 ? 28 : len;
	}
	kb_session s;
	char *name = NULL;
	int rc = file_named(what, &s, &name, err);
	const char *pinned = getenv("KBENCH_SESSION");
	if (rc == KB_ENOTFOUND && !what && err && (!pinned || !*pinned)) {
		/* no session yet: nothing to list, said, not an error */
		kb_buf_catf(out, "%s\n", err->msg);
		kb_err_clear(err);
		return KB_OK;
	}
	if (rc < 0)
		return rc;
	if (name) {
		log_file(&s, name, &cols, out, err);
		free(name);
	} else {
		char **files;
		int n = kb_session_files(&s, &files, err);
		for (int i = 0; i < n; i++)
			log_file(&s, files[i], &cols, out, err);
		if (n == 0)
			kb_buf_catf(out, "session %s: nothing recorded yet\n", s.id);
		kb_app__free_strs(files, n > 0 ? n : 0);
		rc = n < 0 ? n : KB_OK;
	}
	if (damage)
		journal_damage(&s, out);
	kb_session_free(&s);
	return rc;
}

int kb_app_log(const char *what, kb_buf *out, kb_err *err)
{
	return log_with(what, NULL, 0, false, out, err);
}

int kb_app_log_cols(const char *what, const char *const *names, int ncols, kb_buf *out, kb_err *err)
{
	return log_with(what, names, ncols, true, out, err);
}

/* ---- show ---------------------------------------------------------------------- */

int kb_app_show(const char *name, const char *file, kb_buf *out, kb_err *err)
{
	kb_variant v;
	char *text, *path = NULL;
	size_t len;
	int rc = kb_app__read_variant(name, file, &v, &text, &len, &path, err);
	if (rc == 0) {
		kb_buf_catf(out, "%s %s  commit %s  %s\n", path, v.name, v.oid, kb_app__verdict_of(&v));
		if (v.note_error)
			kb_buf_catf(out, "  %s: %s\n", v.name, v.note_error);
		if (v.label)
			kb_buf_catf(out, "  label  %s\n", v.label);
		cat_notes(&v, "  note   ", out);
		json_t *res = kb_app__jget(v.note, "result");
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

/* The SASS function of the kernel the spec runs, in a fresh (cached)
 * compile of a variant's text; NULL with a reason in why. */
static const kb_sass_func *variant_sass(const char *path, const kb_app__loaded *l, kb_compile_unit *u,
					kb_buf *why)
{
	const char *arch = json_string_value(kb_app__jget(l->v.note, "compile.arch"));
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

void kb_app__diff_sass(const char *path, const kb_app__loaded *a, const kb_app__loaded *b, kb_buf *out, kb_err *err)
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

/* The CUDA text lowers to, without its #line directives; NULL when it
 * does not lower. */
static char *lowered_text(const char *path, const char *text, size_t len)
{
	kb_tile_out t;
	kb_diags d = {0};
	char *r = NULL;
	if (kb_tile_compile(path, text, len, NULL, &t, &d) == KB_OK) {
		kb_buf b = KB_BUF_INIT;
		for (const char *s = t.cuda.s; s && *s;) {
			size_t n = strcspn(s, "\n");
			if (strncmp(s, "#line ", 6))
				kb_buf_catn(&b, s, n + (s[n] == '\n'));
			s += n + (s[n] == '\n');
		}
		r = kb_buf_detach(&b);
	}
	kb_tile_out_free(&t);
	kb_diags_free(&d);
	return r;
}

int kb_app__generated_diff(const char *path, const char *a, size_t alen, const char *b, size_t blen,
			   const char *label_a, const char *label_b, kb_buf *out, kb_err *err)
{
	if (kb_compile_source_kind(path) != KB_SRC_TILE)
		return KB_EINVAL;
	char *ga = lowered_text(path, a, alen), *gb = ga ? lowered_text(path, b, blen) : NULL;
	int rc = ga && gb ? kb_diff_text(ga, strlen(ga), gb, strlen(gb), label_a, label_b, 3, out, err)
			  : KB_EINVAL;
	free(ga);
	free(gb);
	return rc;
}

int kb_app_diff(const char *an, const char *bn, const char *file, int what, kb_buf *out, kb_err *err)
{
	kb_app__fstore f;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc < 0)
		return rc;
	kb_app__loaded a, b;
	if ((rc = kb_app__load_variant(f.st, an, &a, err)) < 0 || (rc = kb_app__load_variant(f.st, bn, &b, err)) < 0)
		goto out;
	if (what & KB_DIFF_SOURCE) {
		kb_buf_catf(out, "source %s -> %s\n", a.v.name, b.v.name);
		if (kb_diff_text(a.text, a.len, b.text, b.len, a.v.name, b.v.name, 3, out, err) == 0)
			kb_buf_cat(out, "(no difference)\n");
		kb_buf g = KB_BUF_INIT;
		int grc = kb_app__generated_diff(f.path, a.text, a.len, b.text, b.len, a.v.name, b.v.name,
						 &g, NULL);
		if (grc >= 0)
			kb_buf_catf(out, "\ngenerated CUDA %s -> %s (#line directives left out)\n%s", a.v.name,
				    b.v.name, grc ? g.s : "(no difference)\n");
		kb_buf_free(&g);
	}
	if (what & KB_DIFF_SASS)
		kb_app__diff_sass(f.path, &a, &b, out, err);
	if (what & KB_DIFF_NUMBERS) {
		json_t *ra = kb_app__jget(a.v.note, "result"), *rb = kb_app__jget(b.v.note, "result");
		if (ra && rb) {
			json_t *d = kb_diff_numbers(ra, rb);
			kb_diff_numbers_render(d, a.v.name, b.v.name, out);
			json_decref(d);
		} else {
			kb_buf_catf(out, "numbers: %s has not been run (`kbench run` records a Result)\n",
				    ra ? b.v.name : a.v.name);
		}
	}
	kb_app__unload(&b);
out:
	kb_app__unload(&a);
	kb_app__fstore_close(&f);
	return rc;
}

/* ---- checkout ------------------------------------------------------------------ */

int kb_app_checkout(const char *name, const char *file, kb_buf *out, kb_err *err)
{
	kb_app__fstore f;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc < 0)
		return rc;
	kb_app__loaded want;
	kb_buf now = KB_BUF_INIT;
	kb_variant saved;
	memset(&saved, 0, sizeof saved);
	if ((rc = kb_app__load_variant(f.st, name, &want, err)) < 0)
		goto out;
	/* Nothing the user typed is lost: the current text becomes a variant. */
	char *real = kb_session_file_path(&f.s, f.path);
	if ((rc = kb_file_read(real, &now, err)) < 0 ||
	    (rc = kb_session_store_commit(f.st, now.s, now.len, "kept before checkout", NULL, &saved,
					  err)) < 0 ||
	    (rc = kb_file_write(real, want.text, want.len, err)) < 0)
		goto done;
	kb_session_journal_append(&f.s, "checkout",
				  json_pack("{s:s, s:s, s:s, s:s, s:s}", "file", f.path, "variant",
					    want.v.name, "commit", want.v.oid, "saved_as", saved.name,
					    "saved_commit", saved.oid), NULL);
	kb_buf_catf(out, "%s: now %s (the text before is kept as %s)\n", real, want.v.name, saved.name);
done:
	free(real);
	kb_app__unload(&want);
out:
	kb_session_variant_free(&saved);
	kb_buf_free(&now);
	kb_app__fstore_close(&f);
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
		char **files, **shown = NULL;
		int nf = kb_session_files(&s, &files, NULL);
		if (nf > 0)
			shown = kb_session_files_shown(&s, files, nf);
		kb_buf_catf(out, "%s %-28s %s", have_cur && !strcmp(cur_id, s.id) ? "*" : " ", s.id, s.dir);
		for (int f = 0; f < nf; f++)
			kb_buf_catf(out, "%s%s", f ? ", " : "  ", shown[f]);
		kb_buf_catc(out, '\n');
		kb_app__free_strs(shown, nf > 0 ? nf : 0);
		kb_app__free_strs(files, nf > 0 ? nf : 0);
		kb_session_free(&s);
	}
	kb_app__free_strs(ids, n);
	return KB_OK;
}

/* ---- label and note ---------------------------------------------------------------- */

/* Why label is no good, or NULL: one that reads as a variant's name ("v2")
 * would name another variant wherever vN is taken (vN wins), and one with
 * a control character (a newline) breaks every table it is shown in. */
static const char *bad_label(const char *label)
{
	if (!*label)
		return "it is empty";
	if (label[0] == 'v' && label[1] && strspn(label + 1, "0123456789") == strlen(label + 1))
		return "it reads as a variant's name: `show`, `diff` and `checkout` would take it for that "
		       "variant";
	for (const unsigned char *p = (const unsigned char *)label; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "it holds a control character (a newline or a tab)";
	return NULL;
}

/* A label names one variant of a file: the others of st's file that bear
 * it (but `keep`) lose it; their names go to moved ("v2"). 0 or a KB_E*. */
static int unlabel_others(kb_store *st, const char *keep, const char *label, kb_buf *moved,
			  kb_err *err)
{
	kb_variant *vs = NULL;
	int n = 0;
	int rc = kb_session_store_list(st, &vs, &n, err);
	for (int i = 0; i < n && rc == 0; i++) {
		if (!strcmp(vs[i].oid, keep) || !vs[i].label || strcmp(vs[i].label, label))
			continue;
		json_t *note = json_deep_copy(vs[i].note);
		json_object_del(note, "label");
		if ((rc = kb_session_store_set_note(st, vs[i].name, note, err)) == 0)
			kb_buf_catf(moved, "%s%s", moved->len ? ", " : "", vs[i].name);
	}
	kb_session_variants_free(vs, n);
	return rc;
}

int kb_app_annotate(const char *name, const char *key, const char *text, const char *file,
		    kb_buf *out, kb_err *err)
{
	text = text ? text : "";
	const char *why = strcmp(key, "label") ? (*text ? NULL : "it is empty") : bad_label(text);
	if (why)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "%s '%s': %s", key, text, why);
	kb_app__fstore f;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc < 0)
		return rc;
	kb_app__loaded l;
	if ((rc = kb_app__load_variant(f.st, name, &l, err)) < 0)
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
	kb_buf moved = KB_BUF_INIT;
	rc = kb_session_store_set_note(f.st, l.v.name, note, err);
	if (rc == 0 && !strcmp(key, "label"))
		rc = unlabel_others(f.st, l.v.oid, text, &moved, err);
	if (rc == 0) {
		kb_session_journal_append(&f.s, key, json_pack("{s:s, s:s, s:s, s:s}", "file", f.path,
							       "variant", l.v.name, "commit", l.v.oid,
							       "text", text), NULL);
		char *shown = kb_session_file_shown(&f.s, f.path);
		kb_buf_catf(out, "%s %s: %s %s", shown, l.v.name, key, text);
		kb_buf_catf(out, moved.len ? " (moved from %s: a label names one variant)\n" : "\n",
			    moved.s);
		free(shown);
	}
	kb_buf_free(&moved);
	kb_app__unload(&l);
out:
	kb_app__fstore_close(&f);
	return rc;
}
