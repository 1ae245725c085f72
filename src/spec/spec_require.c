/*
 * spec_require.c - `//! require EXPR CMP EXPR`: the shapes a kernel supports
 * (a row that must fit the registers of a cluster, a size that must be a
 * multiple of a vector width).  This file reads the line and judges it for
 * the spec's current args and tune values; spec_check.c checks its names and
 * evaluates it once with the defaults like every other expression.  What a
 * false requirement means (a run that is UNSUPPORTED, a compile that warns)
 * is the unit's and the runner's to say.
 *
 * Invariants: one comparison per line (several lines for several
 * conditions); each side is an ordinary spec expression; two integers
 * compare exactly, anything with a float compares as doubles.
 */
#include "spec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cmp_names[] = {
	[KB_CMP_LE] = "<=", [KB_CMP_LT] = "<", [KB_CMP_GE] = ">=", [KB_CMP_GT] = ">",
	[KB_CMP_EQ] = "==", [KB_CMP_NE] = "!=",
};

const char *kb_compile_cmp_name(kb_cmp cmp)
{
	return (unsigned)cmp < KB_ARRAY_LEN(cmp_names) ? cmp_names[cmp] : "?";
}

/* ===== the line ===== */

/* [p, end) without trailing blanks, a new string. */
static char *trimmed(const char *p, const char *end)
{
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return kb_xstrndup(p, (size_t)(end - p));
}

/* The comparison at the current token (the lexer gives one character a
 * token, so `<=` is '<' with '=' right after it); moves past it.  Returns
 * 0, or -1 after an error that suggests the comparison meant. */
static int parse_cmp(kb_spec__parser *P, kb_cmp *out)
{
	const kb_spec__tok *t = &P->tok;
	char c = t->kind == KB_TK_PUNCT ? t->p[0] : 0;
	bool eq = P->pos < P->end && *P->pos == '=';
	int len = 1 + eq;
	if (c == '<' || c == '>')
		*out = c == '<' ? (eq ? KB_CMP_LE : KB_CMP_LT) : (eq ? KB_CMP_GE : KB_CMP_GT);
	else if ((c == '=' || c == '!') && eq)
		*out = c == '=' ? KB_CMP_EQ : KB_CMP_NE;
	else if (c == '=' || c == '!') {
		bool arrow = c == '=' && P->pos < P->end && (*P->pos == '<' || *P->pos == '>');
		kb_spec__perr(P, t->col, 1 + arrow, "'%.*s' is not a comparison; did you mean '%s'?",
			      1 + arrow, t->p, arrow ? (*P->pos == '<' ? "<=" : ">=")
			      : c == '=' ? "==" : "!=");
		P->failed = true;
		return -1;
	} else
		return kb_spec__syntax(P, "a comparison (<=, <, >=, >, == or !=)");
	P->pos = t->p + len;
	kb_spec__lex(P);
	return 0;
}

void kb_spec__dir_require(kb_spec__parser *P, const kb_spec__tok *dir)
{
	if (P->tok.kind == KB_TK_EOF) {
		kb_spec__perr(P, dir->col, dir->len, "require needs a condition, e.g. "
			      "`//! require N %% 8 == 0` or `//! require N <= 4 * BLOCK`");
		return;
	}
	const char *start = P->tok.p;
	int col = P->tok.col;
	kb_spec_require r = {.loc = kb_spec__loc_at(P, col)};
	if (!(r.lhs = kb_spec__parse_expr(P)))
		return;
	const char *mid = P->tok.p;
	if (P->tok.kind == KB_TK_EOF) {
		kb_spec__syntax(P, "a comparison (<=, <, >=, >, == or !=)");
		goto fail;
	}
	if (parse_cmp(P, &r.cmp) < 0)
		goto fail;
	const char *rstart = P->tok.p;
	if (!(r.rhs = kb_spec__parse_expr(P)))
		goto fail;
	if (P->tok.kind != KB_TK_EOF) {
		kb_spec__perr(P, P->tok.col, P->tok.len, "one comparison per require line, found "
			      "'%.*s' after it (write one `//! require` line each)", P->tok.len, P->tok.p);
		P->failed = true;
		goto fail;
	}
	r.lhs_text = trimmed(start, mid);
	r.rhs_text = trimmed(rstart, P->end);
	r.len = (int)(P->end - start);
	*KB_SPEC_PUSH1(P->spec->requires, P->spec->nrequires) = r;
	return;
fail:
	kb_spec__expr_free(r.lhs);
	kb_spec__expr_free(r.rhs);
}

/* ===== judging ===== */

static bool holds(kb_cmp cmp, kb_value a, kb_value b)
{
	int c;
	if (!a.is_float && !b.is_float) {
		c = (a.i > b.i) - (a.i < b.i);
	} else {
		double x = kb_spec__as_double(a), y = kb_spec__as_double(b);
		c = (x > y) - (x < y);
	}
	switch (cmp) {
	case KB_CMP_LE: return c <= 0;
	case KB_CMP_LT: return c < 0;
	case KB_CMP_GE: return c >= 0;
	case KB_CMP_GT: return c > 0;
	case KB_CMP_EQ: return c == 0;
	case KB_CMP_NE: return c != 0;
	}
	KB_UNREACHABLE();
}

static void cat_value(kb_buf *b, kb_value v)
{
	if (v.is_float)
		kb_buf_catf(b, "%g", v.f);
	else
		kb_buf_catf(b, "%lld", (long long)v.i);
}

/* " (A = 1, B = 2)": the names of e (each once, those not already in seen)
 * with their values, when e is more than a name or a number. */
static void cat_names(const kb_spec *spec, const kb_expr *e, kb_buf *list, kb_buf *seen)
{
	if (!e)
		return;
	cat_names(spec, e->a, list, seen);
	cat_names(spec, e->b, list, seen);
	if (e->kind != KB_EX_NAME)
		return;
	char key[80];
	snprintf(key, sizeof key, " %s ", e->name);
	if (seen->s && strstr(seen->s, key))
		return;
	kb_buf_cat(seen, key);
	kb_value v;
	if (kb_compile_spec_eval(spec, e, &v, NULL, NULL))
		return;
	kb_buf_catf(list, "%s%s = ", list->len ? ", " : "", e->name);
	cat_value(list, v);
}

/* "requires L CMP R: L = 1, R = 2 (A = ...)", the sides that are more than
 * a number shown with their values. */
static char *explain(const kb_spec *spec, const kb_spec_require *r, kb_value a, kb_value b)
{
	kb_buf m = KB_BUF_INIT, names = KB_BUF_INIT, seen = KB_BUF_INIT;
	const kb_expr *side[2] = {r->lhs, r->rhs};
	const char *text[2] = {r->lhs_text, r->rhs_text};
	kb_value val[2] = {a, b};
	int shown = 0;
	kb_buf_catf(&m, "requires %s %s %s", r->lhs_text, kb_compile_cmp_name(r->cmp), r->rhs_text);
	for (int i = 0; i < 2; i++) {
		if (side[i]->kind == KB_EX_INT || side[i]->kind == KB_EX_FLOAT)
			continue;
		kb_buf_catf(&m, "%s%s = ", shown++ ? ", " : ": ", text[i]);
		cat_value(&m, val[i]);
		if (side[i]->kind != KB_EX_NAME)
			cat_names(spec, side[i], &names, &seen);
	}
	if (names.len)
		kb_buf_catf(&m, " (%s)", names.s);
	kb_buf_free(&names);
	kb_buf_free(&seen);
	return kb_buf_detach(&m);
}

/* Every require line with the spec's current values: 0, KB_EUNSUP with *why
 * for the first false one, or KB_ESPEC (a diag) when one cannot be evaluated. */
int kb_compile_spec_requires(const kb_spec *spec, const kb_source *src, char **why, int *which,
			     kb_diags *diags)
{
	*why = NULL;
	for (int i = 0; i < spec->nrequires; i++) {
		const kb_spec_require *r = &spec->requires[i];
		kb_value a, b;
		if (kb_compile_spec_eval(spec, r->lhs, &a, src, diags) ||
		    kb_compile_spec_eval(spec, r->rhs, &b, src, diags))
			return KB_ESPEC;
		if (holds(r->cmp, a, b))
			continue;
		*why = explain(spec, r, a, b);
		if (which)
			*which = i;
		return KB_EUNSUP;
	}
	return 0;
}
