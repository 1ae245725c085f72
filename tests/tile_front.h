/*
 * tile_front.h - what the unit tests of the tile DSL's front end share
 * (test_tile_front.c, test_tile_errors.c): a program tokenized, parsed and
 * checked as t.tile, and its diagnostics compared with the errors it must
 * have, each at its line and column.  Include after src/tile/tile_int.h
 * and t.h.
 */
#ifndef KB_TILE_FRONT_H
#define KB_TILE_FRONT_H


typedef struct {
	kb_tile__toks toks;
	kb_tile__file f;
	kb_diags d;
	int nerr;           /* errors of all stages */
} front;

/* Tokenizes, parses and checks text as t.tile (with -D defines). */
static inline void run_front(front *fr, const char *text, const char *const *defines, int ndefines)
{
	memset(fr, 0, sizeof(*fr));
	kb_tile__tokenize("t.tile", text, strlen(text), &fr->toks, &fr->d);
	fr->f.path = "t.tile";
	fr->f.text = text;
	kb_tile__parse(&fr->toks, &fr->f, &fr->d);
	kb_tile_opts o = {.defines = defines, .ndefines = ndefines};
	kb_tile__check(&fr->f, &o, &fr->d);
	fr->nerr = kb_diag_count(&fr->d, KB_DIAG_ERROR);
}

static inline void front_free(front *fr)
{
	kb_tile__file_free(&fr->f);
	kb_diags_free(&fr->d);
	free(fr->toks.v);
}

static inline char *render(const kb_diags *d)
{
	kb_buf b = KB_BUF_INIT;
	kb_diag_render(d, &b, false);
	return kb_buf_detach(&b);
}

/* Runs a program that must have no errors (they are printed if it has). */
static inline bool good(front *fr, const char *text, const char *const *defines, int ndefines)
{
	run_front(fr, text, defines, ndefines);
	if (fr->nerr) {
		char *r = render(&fr->d);
		printf("unexpected errors:\n%s", r);
		free(r);
	}
	return fr->nerr == 0 && fr->f.nkernels >= 1;
}

/* The statement that defines variable `name` (depth first), or NULL. */
static inline kb_tile__stmt *find_def(kb_tile__stmt **v, int n, const char *name)
{
	for (int i = 0; i < n; i++) {
		kb_tile__stmt *s = v[i];
		if ((s->kind == KB_TS_ASSIGN || s->kind == KB_TS_CONST) && s->defines &&
		    !strcmp(s->name, name))
			return s;
		if (s->kind == KB_TS_CONST && !strcmp(s->name, name))
			return s;
		kb_tile__stmt *r = find_def(s->body, s->nbody, name);
		if (!r)
			r = find_def(s->els, s->nels, name);
		if (r)
			return r;
	}
	return NULL;
}

/* The type of variable `name` of kernel k as a string ("f32[4096]"). */
static inline const char *var_type(const front *fr, int k, const char *name)
{
	static kb_tile__typestr s;
	const kb_tile__kernel_ast *ka = &fr->f.kernels[k];
	kb_tile__stmt *st = find_def(ka->body, ka->nbody, name);
	if (!st)
		return "(not defined)";
	s = kb_tile__type_str(&st->type);
	return s.s;
}

/* The names of kernel k's params, "x y M N" (sizes marked "N:size"). */
static inline const char *param_list(const front *fr, int k)
{
	static char buf[256];
	buf[0] = 0;
	const kb_tile_kernel *kk = &fr->f.kernels[k].k;
	for (int i = 0; i < kk->nparams; i++) {
		const kb_tile_param *p = &kk->params[i];
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s%s%s", i ? " " : "",
			 p->name, p->is_size ? ":size" : "", p->written ? ":out" : "");
	}
	return buf;
}

/* An error a program must have: its place and a part of its message. */
typedef struct {
	int line, col;
	const char *msg;
} want_err;

/* Whether diags has an error at line:col containing msg. */
static inline bool has_error(const kb_diags *d, int line, int col, const char *msg)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i].line == line && d->v[i].col == col && strstr(d->v[i].msg, msg))
			return true;
	return false;
}

/* Runs text into *fr (the caller frees it) and checks that its diagnostics
 * are exactly the n errors of w, in any order; `at` is the caller's line. */
static inline void errors_are(int at, front *fr, const char *text, const want_err *w, int n)
{
	run_front(fr, text, NULL, 0);
	bool ok = fr->d.n == n && fr->nerr == n;
	for (int i = 0; i < n; i++)
		ok = has_error(&fr->d, w[i].line, w[i].col, w[i].msg) && ok;
	if (!ok) {
		char *r = render(&fr->d);
		T_FAIL_AT("(line %d) expected %d error(s), the first %d:%d '%s', for:\n%sgot %d:\n%s",
			  at, n, w[0].line, w[0].col, w[0].msg, text, fr->d.n, r);
		free(r);
	}
}

/* Checks that text has exactly one error, at line:col, whose message
 * contains msg. */
static inline void one_error(int at, const char *text, int line, int col, const char *msg)
{
	front fr;
	want_err w = {line, col, msg};
	errors_are(at, &fr, text, &w, 1);
	front_free(&fr);
}

#endif
