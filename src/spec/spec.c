/*
 * spec.c - the //! spec: the comment lines of a kernel file that say how to
 * run it (architecture.md §3).  This file reads a file's //! lines, hands
 * each to its directive (kernel, arg, launch, ref, tol, bytes, flops, sweep,
 * tune, options here; in and out in spec_tensor.c; require in
 * spec_require.c), runs the whole-spec checks
 * (spec_check.c), and owns the public spec API: parse, set_arg, free.
 * Tokens are spec_lex.c's, expressions spec_expr.c's.  It does not know
 * kernels (bind.c matches the spec to the kernel's parameters and checks
 * reference shapes) and it runs nothing.
 *
 * Invariants:
 *  - Every problem is a kb_diag at the user's file:line:col, underlining the
 *    offending token; parsing never stops at the first error.  A syntax error
 *    abandons the rest of its line (one syntax error per line, no cascades),
 *    but what the line defined before it (an arg's or tensor's name) stays
 *    defined, so later lines do not report it as undefined.
 *  - Scoping: an arg may use only args defined on lines above it, so args
 *    evaluate top to bottom and can never form a cycle.  Every other line
 *    (dims, launch, bytes, flops, sweep, require) may use any arg of the file, wherever
 *    it is defined.  Args and tensors share one namespace.
 *  - Expressions are kept as trees and evaluated lazily (sweeps and --arg
 *    change args through kb_compile_spec_set_arg); parse also evaluates them
 *    once, so division by zero or a dim that is not an integer is reported
 *    up front.  Init and tol values are constants (no args).
 *  - kb_loc.file in a spec borrows src->path.
 */
#include "spec_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ===== kernel names ===== */

/* Scans NAME<...> template arguments starting at the current '<' token;
 * returns the end of the '>' and moves past it, or NULL after an error. */
static const char *scan_template(kb_spec__parser *P)
{
	int depth = 0;
	for (const char *p = P->tok.p; p < P->end; p++) {
		depth += (*p == '<') - (*p == '>');
		if (depth == 0) {
			P->pos = p + 1;
			kb_spec__lex(P);
			return p + 1;
		}
	}
	kb_spec__perr(P, P->tok.col, 1, "unclosed '<' in template arguments");
	P->failed = true;
	return NULL;
}

/* NAME or NAME<template args> as written; NULL after an error. */
static char *parse_kernel_name(kb_spec__parser *P, int *col, int *len)
{
	kb_spec__tok name;
	if (kb_spec__expect_ident(P, "a kernel name", &name))
		return NULL;
	const char *end = name.p + name.len;
	if (kb_spec__is_punct(P, '<') && !(end = scan_template(P)))
		return NULL;
	*col = name.col;
	*len = name.len;
	return kb_xstrndup(name.p, (size_t)(end - name.p));
}

/* ===== directives: kernel, arg, in, out ===== */

static void dir_kernel(kb_spec__parser *P, const kb_spec__tok *dir)
{
	int col, len;
	char *name = parse_kernel_name(P, &col, &len);
	if (!name)
		return;
	if (kb_spec__expect_eol(P)) {
		free(name);
		return;
	}
	P->spec->kernel = name;
	P->spec->kernel_loc = kb_spec__loc_at(P, col);
}

static void dir_arg(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec__tok name;
	if (kb_spec__expect_ident(P, "an arg name", &name) || !kb_spec__define_ok(P, &name))
		return;
	kb_spec *s = P->spec;
	int i = s->nargs;
	kb_spec_arg *a = KB_SPEC_PUSH1(s->args, s->nargs);
	a->name = kb_xstrndup(name.p, (size_t)name.len);
	a->loc = kb_spec__loc_at(P, name.col);
	if (kb_spec__expect(P, '=', "'=' and a value"))
		return;
	kb_expr *e = kb_spec__parse_expr(P);
	if (e && kb_spec__expect_eol(P)) {
		kb_spec__expr_free(e);
		e = NULL;
	}
	s->args[i].expr = e;
}

static void dir_in(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec__dir_tensor(P, dir, false);
}

static void dir_out(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec__dir_tensor(P, dir, true);
}

/* ===== directives: launch, ref, tol, bytes, flops, sweep, tune ===== */

/* (E[, E[, E]]) or a single E, for grid= and block=. */
static int parse_dim3(kb_spec__parser *P, kb_expr **v, int *n)
{
	if (!kb_spec__is_punct(P, '(')) {
		*n = 1;
		return (v[0] = kb_spec__parse_expr(P)) ? 0 : -1;
	}
	kb_spec__lex(P);
	for (*n = 0;;) {
		if (*n == 3) {
			kb_spec__perr(P, P->tok.col, P->tok.len,
				      "a launch has at most 3 dimensions");
			return P->failed = true, -1;
		}
		if (!(v[*n] = kb_spec__parse_expr(P)))
			return -1;
		(*n)++;
		if (!kb_spec__is_punct(P, ','))
			return kb_spec__expect(P, ')', "',' or ')'");
		kb_spec__lex(P);
	}
}

static void dir_launch(kb_spec__parser *P, const kb_spec__tok *dir)
{
	static const char *const keys[] = {"grid", "block", "smem"};
	kb_spec_launch *l = &P->spec->launch;
	bool seen[3] = {false, false, false};
	l->present = true;
	l->loc = kb_spec__loc_at(P, dir->col);
	while (P->tok.kind != KB_TK_EOF) {
		kb_spec__tok key;
		if (kb_spec__expect_ident(P, "grid=, block= or smem=", &key))
			return;
		int k = kb_spec__tok_is(&key, "grid") ? 0 : kb_spec__tok_is(&key, "block") ? 1
			: kb_spec__tok_is(&key, "smem") ? 2 : -1;
		if (k < 0 || seen[k]) {
			kb_spec__perr(P, key.col, key.len,
				      k < 0 ? "unknown launch key '%.*s' (known: grid, block, smem)"
				      : "'%.*s' is given twice", key.len, key.p);
			P->failed = true;
			return;
		}
		seen[k] = true;
		if (kb_spec__expect(P, '=', "'='"))
			return;
		int rc = k == 0 ? parse_dim3(P, l->grid, &l->grid_n)
			 : k == 1 ? parse_dim3(P, l->block, &l->block_n)
			 : (l->smem = kb_spec__parse_expr(P)) ? 0 : -1;
		if (rc)
			return;
		if (kb_spec__is_punct(P, ','))
			kb_spec__lex(P);
	}
	for (int k = 0; k < 2; k++)
		if (!seen[k])
			kb_spec__perr(P, dir->col, dir->len, "launch needs %s=(...)", keys[k]);
}

/* A ref argument's value: a name, a number, or a negative number. */
static int parse_ref_value(kb_spec__parser *P, kb_ref_arg *a)
{
	const char *start = P->tok.p;
	int col = P->tok.col;
	if (kb_spec__is_punct(P, '-'))
		kb_spec__lex(P);
	if (P->tok.kind != KB_TK_IDENT && P->tok.kind != KB_TK_NUM)
		return kb_spec__syntax(P, "a tensor name, number or true/false");
	if (P->tok.kind == KB_TK_IDENT && P->tok.p != start)
		return kb_spec__syntax(P, "a number");
	a->text = kb_xstrndup(start, (size_t)(P->tok.p + P->tok.len - start));
	a->loc = kb_spec__loc_at(P, col);
	kb_spec__lex(P);
	return 0;
}

static int parse_ref_args(kb_spec__parser *P, kb_spec_ref *r)
{
	if (kb_spec__expect(P, '(', "'(' and the reference's arguments"))
		return -1;
	while (!kb_spec__is_punct(P, ')')) {
		kb_ref_arg *a = KB_SPEC_PUSH1(r->args, r->nargs);
		if (P->tok.kind == KB_TK_IDENT && kb_spec__peek_char(P, '=')) {
			a->key = kb_xstrndup(P->tok.p, (size_t)P->tok.len);
			kb_spec__lex(P);
			kb_spec__lex(P);
		}
		if (parse_ref_value(P, a)) {
			free(a->key); /* drop the half-parsed argument */
			r->nargs--;
			return -1;
		}
		if (!kb_spec__is_punct(P, ')') && kb_spec__expect(P, ',', "',' or ')'"))
			return -1;
	}
	kb_spec__lex(P);
	return 0;
}

static void parse_ref_outs(kb_spec__parser *P, kb_spec_ref *r)
{
	if (P->tok.kind != KB_TK_ARROW) {
		kb_spec__syntax(P, "'->' and the output tensor(s)");
		return;
	}
	kb_spec__lex(P);
	for (;;) {
		kb_spec__tok out;
		if (kb_spec__expect_ident(P, "an output tensor", &out))
			return;
		*KB_SPEC_PUSH1(r->outs, r->nouts) = kb_xstrndup(out.p, (size_t)out.len);
		int n = r->nouts - 1;
		*KB_SPEC_PUSH1(P->out_locs, n) = kb_spec__loc_at(P, out.col);
		if (!kb_spec__is_punct(P, ','))
			break;
		kb_spec__lex(P);
	}
	kb_spec__expect_eol(P);
}

static void dir_ref(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec_ref *r = &P->spec->ref;
	kb_spec__tok fn;
	r->present = true;
	r->loc = kb_spec__loc_at(P, dir->col);
	if (kb_spec__expect_ident(P,
				  "a reference (e.g. softmax(x, dim=1) -> y) or 'kernel NAME'", &fn))
		return;
	r->loc = kb_spec__loc_at(P, fn.col);
	if (kb_spec__tok_is(&fn, "kernel") && P->tok.kind == KB_TK_IDENT) {
		int col, len;
		r->is_kernel = true;
		if ((r->fn = parse_kernel_name(P, &col, &len))) {
			r->loc = kb_spec__loc_at(P, col);
			kb_spec__expect_eol(P);
		}
		return;
	}
	if (kb_spec__tok_is(&fn, "numpy") || kb_spec__tok_is(&fn, "torch")) {
		if (kb_spec__dir_ref_python(P, &fn) == 0)
			parse_ref_outs(P, r);
		return;
	}
	r->fn = kb_xstrndup(fn.p, (size_t)fn.len);
	if (parse_ref_args(P, r) == 0)
		parse_ref_outs(P, r);
}

static void dir_tol(kb_spec__parser *P, const kb_spec__tok *dir)
{
	bool seen[2] = {false, false};
	kb_spec *s = P->spec;
	s->has_tol = true;
	while (P->tok.kind != KB_TK_EOF) {
		kb_spec__tok key;
		if (kb_spec__expect_ident(P, "rtol= or atol=", &key))
			return;
		int k = kb_spec__tok_is(&key, "rtol") ? 0 : kb_spec__tok_is(&key, "atol") ? 1
			: -1;
		if (k < 0 || seen[k]) {
			kb_spec__perr(P, key.col, key.len,
				      k < 0 ? "unknown tolerance '%.*s' (known: rtol, atol)"
				      : "'%.*s' is given twice", key.len, key.p);
			P->failed = true;
			return;
		}
		seen[k] = true;
		kb_value v;
		if (kb_spec__expect(P, '=', "'='"))
			return;
		int col = P->tok.col;
		if (kb_spec__parse_const(P, &v, NULL))
			return;
		if (!(kb_spec__as_double(v) >= 0))
			kb_spec__perr(P, col, 1, "%s must be >= 0", k ? "atol" : "rtol");
		*(k ? &s->atol : &s->rtol) = kb_spec__as_double(v);
		if (kb_spec__is_punct(P, ','))
			kb_spec__lex(P);
	}
	if (!seen[0] && !seen[1])
		kb_spec__perr(P, dir->col, dir->len, "tol needs rtol= and/or atol=");
}

static void dir_expr(kb_spec__parser *P, kb_expr **slot)
{
	kb_expr *e = kb_spec__parse_expr(P);
	if (e && kb_spec__expect_eol(P)) {
		kb_spec__expr_free(e);
		e = NULL;
	}
	*slot = e;
}

static void dir_bytes(kb_spec__parser *P, const kb_spec__tok *dir)
{
	dir_expr(P, &P->spec->bytes);
}

static void dir_flops(kb_spec__parser *P, const kb_spec__tok *dir)
{
	dir_expr(P, &P->spec->flops);
}

/* NAME '=' and a check that NAME has no earlier list in lists[0..n). */
static kb_spec_list *list_head(kb_spec__parser *P, const kb_spec__tok *dir,
			       kb_spec_list **lists, int *n)
{
	kb_spec__tok name;
	if (kb_spec__expect_ident(P, dir->p[0] == 's' ? "the arg to sweep" : "a macro name", &name))
		return NULL;
	for (int i = 0; i < *n; i++) {
		if ((int)strlen((*lists)[i].name) == name.len &&
		    !memcmp((*lists)[i].name, name.p, (size_t)name.len)) {
			kb_spec__perr(P, name.col, name.len,
				      "duplicate %.*s of '%s' (the first is at line %d)",
				      dir->len, dir->p, (*lists)[i].name, (*lists)[i].loc.line);
			return NULL;
		}
	}
	if (kb_spec__expect(P, '=', "'=' and a list of values"))
		return NULL;
	kb_spec_list *l = KB_SPEC_PUSH1(*lists, *n);
	l->name = kb_xstrndup(name.p, (size_t)name.len);
	l->loc = kb_spec__loc_at(P, name.col);
	return l;
}

static void dir_sweep(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec_list *l = list_head(P, dir, &P->spec->sweeps, &P->spec->nsweeps);
	while (l) {
		kb_expr *e = kb_spec__parse_expr(P);
		if (!e)
			return;
		*KB_SPEC_PUSH1(l->values, l->nvalues) = e;
		if (!kb_spec__is_punct(P, ',')) {
			kb_spec__expect_eol(P);
			return;
		}
		kb_spec__lex(P);
	}
}

/* tune values are -D text, split at top-level commas and trimmed. */
static void dir_tune(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec_list *l = list_head(P, dir, &P->spec->tunes, &P->spec->ntunes);
	if (!l)
		return;
	const char *p = P->tok.p;
	for (;;) {
		while (p < P->end && (*p == ' ' || *p == '\t'))
			p++;
		const char *start = p;
		int depth = 0;
		for (; p < P->end && (depth > 0 || *p != ','); p++)
			depth += (*p == '(' || *p == '[' || *p == '{') - (*p == ')' || *p == ']' || *p == '}');
		const char *end = p;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end == start) {
			kb_spec__perr(P, (int)(start - P->line) + 1, 1,
				      "expected a value for %s", l->name);
			return;
		}
		*KB_SPEC_PUSH1(l->texts, l->nvalues) = kb_xstrndup(start, (size_t)(end - start));
		if (l->nvalues == 1)
			kb_compile_spec_set_tune(P->spec, l->name, l->texts[0]);
		if (p >= P->end)
			return;
		p++;
	}
}

static const char *skip_blanks(const kb_spec__parser *P, const char *p)
{
	while (p < P->end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *word_end(const kb_spec__parser *P, const char *p)
{
	while (p < P->end && *p != ' ' && *p != '\t')
		p++;
	return p;
}

/* Reports the option word [start, end) the table refuses for why; returns
 * where the line goes on: after the next word when that was meant as this
 * one's value ("-Xptxas -O1"). */
static const char *refuse_option(kb_spec__parser *P, const char *start, const char *end,
				 const char *why)
{
	char *word = kb_xstrndup(start, (size_t)(end - start));
	const char *next = skip_blanks(P, end), *next_end = word_end(P, next);
	int col = (int)(start - P->line) + 1;
	if (next < P->end && kb_spec__option_wants_value(P->src->kind, word)) {
		kb_spec__perr(P, col, (int)(next_end - start), "one option per word: write %s=%.*s",
			      word, (int)(next_end - next), next);
		end = next_end;
	} else {
		kb_spec__perr(P, col, (int)(end - start), "%s", why);
	}
	free(word);
	return end;
}

/* The compiler options, one per word (values after '=', as the compilers
 * take them).  Each is checked against the compiler's table now; a word it
 * does not know is the compiler's to judge when it runs (options.c).  A
 * refused word is reported and dropped, so it never reaches a compiler. */
static void dir_options(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec *s = P->spec;
	int words = 0;
	for (const char *p = skip_blanks(P, P->tok.p); p < P->end; p = skip_blanks(P, p)) {
		const char *start = p;
		char *why, *word = kb_xstrndup(start, (size_t)((p = word_end(P, p)) - start));
		words++;
		if (kb_compile_option_check(P->src->kind, word, &why) < 0) {
			p = refuse_option(P, start, p, why);
			free(why);
			free(word);
			continue;
		}
		kb_spec_option *o = KB_SPEC_PUSH1(s->options, s->noptions);
		o->text = word;
		o->loc = kb_spec__loc_at(P, (int)(start - P->line) + 1);
		o->len = (int)(p - start);
	}
	if (!words)
		kb_spec__perr(P, dir->col, dir->len, "options needs at least one compiler option "
			      "(e.g. `//! options -use_fast_math -maxrregcount=64`)");
}

/* "sm_90", "sm_90a", "sm_100f", "compute_90", "90" -> 90; 0 or KB_EINVAL. */
int kb_compile_arch_parse(const char *arch, int *sm)
{
	if (!arch || !sm)
		return KB_EINVAL;
	const char *p = arch;
	if (!strncmp(p, "sm_", 3))
		p += 3;
	else if (!strncmp(p, "compute_", 8))
		p += 8;
	int v = 0, ndig = 0;
	for (; *p >= '0' && *p <= '9' && ndig < 4; p++, ndig++)
		v = v * 10 + (*p - '0');
	if (ndig < 2 || (*p >= '0' && *p <= '9'))
		return KB_EINVAL;
	if (*p == 'a' || *p == 'f') /* arch-specific / family-specific variants */
		p++;
	if (*p)
		return KB_EINVAL;
	*sm = v;
	return 0;
}

/* `//! arch sm_90a`: a kernel that needs an architecture's own instructions
 * (wgmma, setmaxnreg) says so once, instead of every command line. */
static void dir_arch(kb_spec__parser *P, const kb_spec__tok *dir)
{
	kb_spec *s = P->spec;
	const char *start = skip_blanks(P, P->tok.p), *end = word_end(P, start);
	char *word = kb_xstrndup(start, (size_t)(end - start));
	int col = (int)(start - P->line) + 1, sm;
	if (end == start)
		kb_spec__perr(P, dir->col, dir->len, "arch needs a target, e.g. `//! arch sm_90a`");
	else if (kb_compile_arch_parse(word, &sm) < 0)
		kb_spec__perr(P, col, (int)(end - start), "'%s' is not an architecture (e.g. sm_90, "
			      "sm_90a)", word);
	else if (skip_blanks(P, end) < P->end)
		kb_spec__perr(P, (int)(skip_blanks(P, end) - P->line) + 1, 1, "arch takes one target");
	else {
		s->arch = word;
		s->arch_loc = kb_spec__loc_at(P, col);
		return;
	}
	free(word);
}

/* ===== lines ===== */

static const struct directive {
	const char *name;
	void (*fn)(kb_spec__parser *, const kb_spec__tok *);
	bool once;
} directives[KB_SPEC_NDIRECTIVES] = {
	[KB_SPEC_KERNEL] = {"kernel", dir_kernel, true}, [KB_SPEC_ARG] = {"arg", dir_arg, false},
	[KB_SPEC_IN] = {"in", dir_in, false}, [KB_SPEC_OUT] = {"out", dir_out, false},
	[KB_SPEC_LAUNCH] = {"launch", dir_launch, true}, [KB_SPEC_REF] = {"ref", dir_ref, true},
	[KB_SPEC_TOL] = {"tol", dir_tol, true}, [KB_SPEC_BYTES] = {"bytes", dir_bytes, true},
	[KB_SPEC_FLOPS] = {"flops", dir_flops, true}, [KB_SPEC_SWEEP] = {"sweep", dir_sweep, false},
	[KB_SPEC_TUNE] = {"tune", dir_tune, false}, [KB_SPEC_OPTIONS] = {"options", dir_options, false},
	[KB_SPEC_TENSORMAP] = {"tensormap", kb_spec__dir_tensormap, false},
	[KB_SPEC_ARCH] = {"arch", dir_arch, true},
	[KB_SPEC_REQUIRE] = {"require", kb_spec__dir_require, false},
};

static void unknown_directive(kb_spec__parser *P, const kb_spec__tok *t)
{
	const char *names[KB_SPEC_NDIRECTIVES];
	for (int i = 0; i < KB_SPEC_NDIRECTIVES; i++)
		names[i] = directives[i].name;
	char *word = kb_xstrndup(t->p, (size_t)t->len);
	const char *near = kb_spec__closest(word, names, KB_SPEC_NDIRECTIVES);
	if (near) {
		kb_spec__perr(P, t->col, t->len, "unknown directive '%s'; did you mean '%s'?",
			      word, near);
	} else {
		char *known = kb_spec__join_names(names, KB_SPEC_NDIRECTIVES);
		kb_spec__perr(P, t->col, t->len, "unknown directive '%s' (known: %s)", word, known);
		free(known);
	}
	free(word);
}

/* Parses one //! line; p is just after the "//!". */
static void parse_line(kb_spec__parser *P, const char *p)
{
	const char *e = p;
	bool in_str = false;
	for (; *e && *e != '\n'; e++) {
		if (*e == '"')
			in_str = !in_str;
		else if (!in_str && e[0] == '/' && e[1] == '/')
			break;
	}
	while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	P->end = e;
	P->pos = p;
	P->failed = false;
	kb_spec__lex(P);
	if (P->tok.kind == KB_TK_EOF)
		return;
	kb_spec__tok dir = P->tok;
	if (dir.kind != KB_TK_IDENT) {
		kb_spec__syntax(P, "a directive (kernel, arg, in, out, launch, ref, tol, ...)");
		return;
	}
	for (int i = 0; i < KB_SPEC_NDIRECTIVES; i++) {
		if (!kb_spec__tok_is(&dir, directives[i].name))
			continue;
		if (directives[i].once && P->first[i]) {
			kb_spec__perr(P, dir.col, dir.len,
				      "duplicate `%s` line (the first is at line %d)",
				      directives[i].name, P->first[i]);
			return;
		}
		P->first[i] = P->lineno;
		kb_spec__lex(P);
		directives[i].fn(P, &dir);
		return;
	}
	unknown_directive(P, &dir);
}

/* ===== public ===== */

/* Parses every //! line of src into spec (which the caller frees with
 * kb_compile_spec_free whatever the result).  All problems go to diags;
 * returns 0, or KB_ESPEC when any error was added. */
int kb_compile_spec_parse(const kb_source *src, kb_spec *spec, kb_diags *diags)
{
	memset(spec, 0, sizeof(*spec));
	kb_spec__parser P = {.src = src, .spec = spec, .diags = diags};
	int errors = kb_diag_count(diags, KB_DIAG_ERROR), first = diags->n;
	const char *line = src->text;
	for (P.lineno = 1; line && *line; P.lineno++) {
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "//!", 3)) {
			spec->nlines++;
			P.line = line;
			parse_line(&P, p + 3);
		}
		const char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	kb_spec__check(&P);
	free(P.out_locs);
	/* Sort only what this parse added, so the report reads top to bottom. */
	if (diags->n > first) {
		kb_diags mine = {diags->v + first, diags->n - first, diags->n - first};
		kb_diag_sort(&mine);
	}
	return kb_diag_count(diags, KB_DIAG_ERROR) > errors ? KB_ESPEC : 0;
}

/* Sets arg `name` to value (sweeps, --arg): its expression becomes the
 * literal and every arg's value is recomputed.  Returns 0 or KB_ENOTFOUND. */
int kb_compile_spec_set_tune(kb_spec *spec, const char *name, const char *text)
{
	int i = kb_spec__find_tune(spec, name);
	if (i < 0)
		return KB_ENOTFOUND;
	kb_spec_list *l = &spec->tunes[i];
	char *end;
	errno = 0;
	long long iv = strtoll(text, &end, 0);
	l->has_value = *text && !*end && !errno;
	l->value = (kb_value){.is_float = false, .i = iv};
	if (!l->has_value) {
		double fv = strtod(text, &end);
		l->has_value = *text && !*end;
		l->value = (kb_value){.is_float = true, .f = fv};
	}
	free(l->value_text);
	l->value_text = kb_xstrdup(text);
	return KB_OK;
}

int kb_compile_spec_set_arg(kb_spec *spec, const char *name, kb_value value)
{
	int i = kb_spec__find_arg(spec, name);
	if (i < 0)
		return KB_ENOTFOUND;
	kb_spec_arg *a = &spec->args[i];
	kb_expr *lit = kb_xcalloc(1, sizeof(*lit));
	lit->kind = value.is_float ? KB_EX_FLOAT : KB_EX_INT;
	lit->loc = a->expr ? a->expr->loc : a->loc;
	lit->len = a->expr ? a->expr->len : (int)strlen(a->name);
	lit->ival = value.i;
	lit->fval = value.f;
	kb_spec__expr_free(a->expr);
	a->expr = lit;
	for (int j = 0; j < spec->nargs; j++) {
		kb_value v;
		if (spec->args[j].expr && !kb_compile_spec_eval(spec, spec->args[j].expr, &v, NULL, NULL))
			spec->args[j].value = v;
	}
	return 0;
}

static void list_free(kb_spec_list *l, int n)
{
	for (int i = 0; i < n; i++) {
		free(l[i].name);
		for (int j = 0; j < l[i].nvalues; j++) {
			if (l[i].values)
				kb_spec__expr_free(l[i].values[j]);
			if (l[i].texts)
				free(l[i].texts[j]);
		}
		free(l[i].values);
		free(l[i].texts);
		free(l[i].value_text);
	}
	free(l);
}

/* Frees everything spec owns and zeroes it. */
void kb_compile_spec_free(kb_spec *spec)
{
	free(spec->kernel);
	for (int i = 0; i < spec->nargs; i++) {
		free(spec->args[i].name);
		kb_spec__expr_free(spec->args[i].expr);
	}
	free(spec->args);
	for (int i = 0; i < spec->ntensors; i++) {
		free(spec->tensors[i].name);
		for (int d = 0; d < spec->tensors[i].rank; d++)
			kb_spec__expr_free(spec->tensors[i].dims[d]);
		free(spec->tensors[i].init.path);
	}
	free(spec->tensors);
	for (int i = 0; i < spec->ntmaps; i++) {
		free(spec->tmaps[i].name);
		free(spec->tmaps[i].tensor);
		for (int d = 0; d < spec->tmaps[i].nbox; d++)
			kb_spec__expr_free(spec->tmaps[i].box[d]);
	}
	free(spec->tmaps);
	free(spec->arch);
	for (int i = 0; i < 3; i++) {
		kb_spec__expr_free(spec->launch.grid[i]);
		kb_spec__expr_free(spec->launch.block[i]);
	}
	kb_spec__expr_free(spec->launch.smem);
	free(spec->ref.fn);
	for (int i = 0; i < spec->ref.nargs; i++) {
		free(spec->ref.args[i].key);
		free(spec->ref.args[i].text);
	}
	free(spec->ref.args);
	for (int i = 0; i < spec->ref.nouts; i++)
		free(spec->ref.outs[i]);
	free(spec->ref.outs);
	kb_spec__pyref_free(&spec->ref.py);
	kb_spec__expr_free(spec->bytes);
	kb_spec__expr_free(spec->flops);
	list_free(spec->sweeps, spec->nsweeps);
	list_free(spec->tunes, spec->ntunes);
	for (int i = 0; i < spec->noptions; i++)
		free(spec->options[i].text);
	free(spec->options);
	for (int i = 0; i < spec->nrequires; i++) {
		kb_spec__expr_free(spec->requires[i].lhs);
		kb_spec__expr_free(spec->requires[i].rhs);
		free(spec->requires[i].lhs_text);
		free(spec->requires[i].rhs_text);
	}
	free(spec->requires);
	memset(spec, 0, sizeof(*spec));
}
