/*
 * spec_expr.c - expressions over args in the //! spec: the recursive-descent
 * parser (+ - * / %, unary -, cdiv/min/max, parentheses, integer and float
 * literals, names) into kb_expr trees, and their evaluator.
 * It does not decide where names may be used (spec_check.c does) and does
 * not store arg values (the checks and kb_compile_spec_set_arg do).
 *
 * Invariants: integer arithmetic is checked (overflow and division by zero
 * are errors at the expression, never undefined behaviour); a value is float
 * as soon as a float literal takes part; a name evaluates through its arg's
 * expression with a depth bound, so even a cycle the checks missed cannot
 * recurse without end; an expression's loc/len span the text it came from.
 */
#include "spec_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kb_spec__expr_free(kb_expr *e)
{
	if (!e)
		return;
	kb_spec__expr_free(e->a);
	kb_spec__expr_free(e->b);
	free(e->name);
	free(e);
}

/* ===== evaluation ===== */

/* An evaluation failed and its reason was reported before (or elsewhere). */
#define EVAL_SILENT 1

static int KB_PRINTF(3, 4) eval_fail(kb_spec__evalctx *c, const kb_expr *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	kb_spec__vdiag(c->diags, c->src, KB_DIAG_ERROR, e->loc.line, e->loc.col, e->len, fmt, ap);
	va_end(ap);
	return KB_ESPEC;
}

double kb_spec__as_double(kb_value v)
{
	return v.is_float ? v.f : (double)v.i;
}

static int eval_name(kb_spec__evalctx *c, const kb_expr *e, kb_value *out)
{
	if (!c->spec)
		return eval_fail(c, e, "expected a number, not '%s' (this value cannot use args)",
				 e->name);
	int i = kb_spec__find_arg(c->spec, e->name);
	if (i < 0 && (i = kb_spec__find_tune(c->spec, e->name)) >= 0) {
		/* a tune name: the value compiled in (the first listed, or -D) */
		const kb_spec_list *t = &c->spec->tunes[i];
		if (!t->has_value)
			return eval_fail(c, e, "tune '%s' is '%s' here, not a number, so an expression "
					 "cannot use it", e->name, t->value_text ? t->value_text : "?");
		*out = t->value;
		return 0;
	}
	if (i < 0 && !strcmp(e->name, "sm_count")) {
		*out = (kb_value){.i = c->spec->sm_count > 0 ? c->spec->sm_count : 132};
		return 0;
	}
	if (i < 0) {
		if (c->quiet_names)
			return EVAL_SILENT;
		return eval_fail(c, e, "undefined name '%s'", e->name);
	}
	const kb_spec_arg *a = &c->spec->args[i];
	if (!a->expr || (c->bad && c->bad[i]))
		return EVAL_SILENT;
	if (c->depth > c->spec->nargs + 1)
		return eval_fail(c, e, "'%s' depends on itself", e->name);
	c->depth++;
	int rc = kb_spec__eval(c, a->expr, out);
	c->depth--;
	return rc;
}

static int int_binop(kb_spec__evalctx *c, const kb_expr *e, char op, int64_t a, int64_t b,
		     int64_t *r)
{
	bool ovf = false;
	switch (op) {
	case '+': ovf = __builtin_add_overflow(a, b, r); break;
	case '-': ovf = __builtin_sub_overflow(a, b, r); break;
	case '*': ovf = __builtin_mul_overflow(a, b, r); break;
	case '/':
	case '%':
		if (b == 0)
			return eval_fail(c, e->b, "division by zero");
		if (a == INT64_MIN && b == -1)
			ovf = true;
		else
			*r = op == '/' ? a / b : a % b;
		break;
	default: KB_UNREACHABLE();
	}
	return ovf ? eval_fail(c, e, "integer overflow") : 0;
}

static int float_binop(kb_spec__evalctx *c, const kb_expr *e, char op, double a, double b, double *r)
{
	if ((op == '/' || op == '%') && b == 0)
		return eval_fail(c, e->b, "division by zero");
	switch (op) {
	case '+': *r = a + b; break;
	case '-': *r = a - b; break;
	case '*': *r = a * b; break;
	case '/': *r = a / b; break;
	case '%': *r = fmod(a, b); break;
	default: KB_UNREACHABLE();
	}
	return 0;
}

/* Ceiling division of integers, rounding toward +infinity. */
static int64_t int_cdiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if (a % b != 0 && ((a < 0) == (b < 0)))
		q++;
	return q;
}

static int eval_call(kb_spec__evalctx *c, const kb_expr *e, kb_value x, kb_value y, kb_value *out)
{
	bool is_cdiv = !strcmp(e->name, "cdiv"), is_min = !strcmp(e->name, "min");
	out->is_float = x.is_float || y.is_float;
	if (is_cdiv && kb_spec__as_double(y) == 0)
		return eval_fail(c, e->b, "division by zero");
	if (!out->is_float) {
		if (is_cdiv && x.i == INT64_MIN && y.i == -1)
			return eval_fail(c, e, "integer overflow");
		out->i = is_cdiv ? int_cdiv(x.i, y.i)
			 : is_min ? (x.i < y.i ? x.i : y.i) : (x.i > y.i ? x.i : y.i);
		return 0;
	}
	double a = kb_spec__as_double(x), b = kb_spec__as_double(y);
	out->f = is_cdiv ? ceil(a / b) : is_min ? fmin(a, b) : fmax(a, b);
	return 0;
}

int kb_spec__eval(kb_spec__evalctx *c, const kb_expr *e, kb_value *out)
{
	kb_value x = {0}, y = {0};
	int rc = 0;
	*out = (kb_value){0};
	switch (e->kind) {
	case KB_EX_INT: out->i = e->ival; return 0;
	case KB_EX_FLOAT: out->is_float = true; out->f = e->fval; return 0;
	case KB_EX_NAME: return eval_name(c, e, out);
	case KB_EX_NEG:
		if ((rc = kb_spec__eval(c, e->a, &x)))
			return rc;
		if (!x.is_float && x.i == INT64_MIN)
			return eval_fail(c, e, "integer overflow");
		*out = x;
		out->i = -x.i;
		out->f = -x.f;
		return 0;
	case KB_EX_BIN:
	case KB_EX_CALL:
		break;
	}
	if ((rc = kb_spec__eval(c, e->a, &x)) || (rc = kb_spec__eval(c, e->b, &y)))
		return rc;
	if (e->kind == KB_EX_CALL)
		return eval_call(c, e, x, y, out);
	out->is_float = x.is_float || y.is_float;
	if (out->is_float)
		return float_binop(c, e, e->op, kb_spec__as_double(x), kb_spec__as_double(y),
				   &out->f);
	return int_binop(c, e, e->op, x.i, y.i, &out->i);
}

/* Evaluates expr with the spec's args; diags may be NULL (silent).
 * Returns 0, or KB_ESPEC (undefined name, division by zero, overflow). */
int kb_compile_spec_eval(const kb_spec *spec, const kb_expr *expr, kb_value *out,
			 const kb_source *src, kb_diags *diags)
{
	kb_spec__evalctx c = {spec, src, diags, NULL, false, 0};
	int rc = kb_spec__eval(&c, expr, out);
	return rc ? KB_ESPEC : 0;
}

/* ===== expressions ===== */

static kb_expr *expr_new(const kb_spec__parser *P, kb_expr_kind kind, int col, int len)
{
	kb_expr *e = kb_xcalloc(1, sizeof(*e));
	e->kind = kind;
	e->loc = kb_spec__loc_at(P, col);
	e->len = len;
	return e;
}

/* Stretches e's span to end where `last` ends. */
static void span_to(kb_expr *e, int col, const kb_expr *last)
{
	e->len = last->loc.col + last->len - col;
}

static kb_expr *parse_number(kb_spec__parser *P)
{
	kb_spec__tok t = P->tok;
	char buf[64];
	if (t.len >= (int)sizeof(buf)) {
		kb_spec__syntax(P, "a shorter number");
		return NULL;
	}
	memcpy(buf, t.p, (size_t)t.len);
	buf[t.len] = 0;
	bool hex = t.len > 1 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
	bool flt = !hex && strpbrk(buf, ".eE");
	char *end;
	errno = 0;
	kb_expr *e = expr_new(P, flt ? KB_EX_FLOAT : KB_EX_INT, t.col, t.len);
	if (flt)
		e->fval = strtod(buf, &end);
	else
		e->ival = strtoll(buf, &end, hex ? 16 : 10);
	if (*end || end == buf || (!flt && errno == ERANGE) || (flt && isinf(e->fval))) {
		if (!P->failed)
			kb_spec__perr(P, t.col, t.len, *end || end == buf ? "invalid number '%s'"
				      : "number '%s' is out of range", buf);
		P->failed = true;
		kb_spec__expr_free(e);
		return NULL;
	}
	kb_spec__lex(P);
	return e;
}

/* name(a, b): one of cdiv, min, max, with two arguments. */
static kb_expr *parse_call(kb_spec__parser *P, kb_spec__tok name)
{
	kb_expr *e = expr_new(P, KB_EX_CALL, name.col, name.len);
	e->name = kb_xstrndup(name.p, (size_t)name.len);
	if (strcmp(e->name, "cdiv") && strcmp(e->name, "min") && strcmp(e->name, "max")) {
		kb_spec__perr(P, name.col, name.len,
			      "unknown function '%s' (known: cdiv, min, max)", e->name);
		P->failed = true;
		goto fail;
	}
	kb_spec__lex(P); /* ( */
	int nargs = 0;
	for (;;) {
		kb_expr *arg = kb_spec__parse_expr(P);
		if (!arg)
			goto fail;
		if (nargs < 2)
			*(nargs ? &e->b : &e->a) = arg;
		else
			kb_spec__expr_free(arg);
		nargs++;
		if (kb_spec__is_punct(P, ')'))
			break;
		if (kb_spec__expect(P, ',', "',' or ')'"))
			goto fail;
	}
	e->len = P->tok.col + 1 - name.col;
	kb_spec__lex(P);
	if (nargs != 2) {
		kb_spec__perr(P, name.col, e->len, "%s() takes 2 arguments, not %d", e->name, nargs);
		P->failed = true;
		goto fail;
	}
	return e;
fail:
	kb_spec__expr_free(e);
	return NULL;
}

static kb_expr *parse_primary(kb_spec__parser *P)
{
	kb_spec__tok t = P->tok;
	if (t.kind == KB_TK_NUM)
		return parse_number(P);
	if (t.kind == KB_TK_IDENT) {
		kb_spec__lex(P);
		if (kb_spec__is_punct(P, '('))
			return parse_call(P, t);
		kb_expr *e = expr_new(P, KB_EX_NAME, t.col, t.len);
		e->name = kb_xstrndup(t.p, (size_t)t.len);
		return e;
	}
	if (!kb_spec__is_punct(P, '(')) {
		kb_spec__syntax(P, "an expression");
		return NULL;
	}
	kb_spec__lex(P);
	kb_expr *e = kb_spec__parse_expr(P);
	if (e && !kb_spec__is_punct(P, ')')) {
		kb_spec__syntax(P, "')'");
		kb_spec__expr_free(e);
		return NULL;
	}
	if (e) {
		e->loc.col = t.col;
		e->len = P->tok.col + 1 - t.col;
		kb_spec__lex(P);
	}
	return e;
}

static kb_expr *parse_unary(kb_spec__parser *P)
{
	if (kb_spec__is_punct(P, '+')) {
		kb_spec__lex(P);
		return parse_unary(P);
	}
	if (!kb_spec__is_punct(P, '-'))
		return parse_primary(P);
	int col = P->tok.col;
	kb_spec__lex(P);
	kb_expr *a = parse_unary(P);
	if (!a)
		return NULL;
	kb_expr *e = expr_new(P, KB_EX_NEG, col, 1);
	e->a = a;
	span_to(e, col, a);
	return e;
}

static kb_expr *binary(kb_spec__parser *P, kb_expr *a, kb_expr *(*operand)(kb_spec__parser *))
{
	char op = P->tok.p[0];
	kb_spec__lex(P);
	kb_expr *b = operand(P);
	if (!b) {
		kb_spec__expr_free(a);
		return NULL;
	}
	kb_expr *e = expr_new(P, KB_EX_BIN, a->loc.col, 1);
	e->op = op;
	e->a = a;
	e->b = b;
	span_to(e, a->loc.col, b);
	return e;
}

static kb_expr *parse_term(kb_spec__parser *P)
{
	kb_expr *e = parse_unary(P);
	while (e && (kb_spec__is_punct(P, '*') || kb_spec__is_punct(P, '/') ||
		     kb_spec__is_punct(P, '%')))
		e = binary(P, e, parse_unary);
	return e;
}

/* expr := term (('+' | '-') term)*, C precedence; NULL after a syntax error. */
kb_expr *kb_spec__parse_expr(kb_spec__parser *P)
{
	kb_expr *e = parse_term(P);
	while (e && (kb_spec__is_punct(P, '+') || kb_spec__is_punct(P, '-')))
		e = binary(P, e, parse_term);
	return e;
}

/* Parses a constant expression (no args) into *out; -1 after an error. */
int kb_spec__parse_const(kb_spec__parser *P, kb_value *out, kb_expr **keep)
{
	kb_expr *e = kb_spec__parse_expr(P);
	if (!e)
		return -1;
	kb_spec__evalctx c = {NULL, P->src, P->diags, NULL, false, 0};
	int rc = kb_spec__eval(&c, e, out);
	if (rc)
		P->failed = true;
	if (keep && !rc)
		*keep = e;
	else
		kb_spec__expr_free(e);
	return rc ? -1 : 0;
}

/* Evaluates e and checks it is an integer >= min; 0, KB_ESPEC or EVAL_SILENT. */
int kb_spec__eval_int(kb_spec__evalctx *c, const kb_expr *e, const char *what, int64_t min,
		      int64_t *out)
{
	kb_value v;
	int rc = kb_spec__eval(c, e, &v);
	if (rc)
		return rc;
	if (v.is_float)
		return eval_fail(c, e, "%s must be an integer expression (it is %g)", what, v.f);
	if (v.i < min)
		return eval_fail(c, e, "%s must be %s (it is %lld)", what,
				 min ? "positive" : ">= 0", (long long)v.i);
	*out = v.i;
	return 0;
}

void kb_spec__eval_launch(kb_spec__evalctx *c, const kb_spec_launch *l, kb_launch_dims *out,
			  int *rc)
{
	static const char *const gname[] = {"grid.x", "grid.y", "grid.z"};
	static const char *const bname[] = {"block.x", "block.y", "block.z"};
	for (int i = 0; i < 3; i++) {
		int r1 = 0, r2 = 0;
		out->grid[i] = out->block[i] = 1;
		if (i < l->grid_n && l->grid[i])
			r1 = kb_spec__eval_int(c, l->grid[i], gname[i], 1, &out->grid[i]);
		if (i < l->block_n && l->block[i])
			r2 = kb_spec__eval_int(c, l->block[i], bname[i], 1, &out->block[i]);
		*rc = *rc ? *rc : r1 ? r1 : r2;
	}
	out->smem = 0;
	if (l->smem) {
		int r = kb_spec__eval_int(c, l->smem, "smem", 0, &out->smem);
		*rc = *rc ? *rc : r;
	}
}

/* Launch geometry evaluated with the current args; dims default to 1 and
 * smem to 0.  Returns 0, or KB_ESPEC with diags (no launch line, a dim that
 * is not a positive integer ...). */
int kb_compile_spec_launch_dims(const kb_spec *spec, const kb_source *src,
				kb_launch_dims *out, kb_diags *diags)
{
	if (!spec->launch.present) {
		kb_spec__diag_err(diags, src, 0, 0, 1, "the spec has no launch line; add "
				  "`//! launch grid=(...) block=(...)`");
		return KB_ESPEC;
	}
	kb_spec__evalctx c = {spec, src, diags, NULL, false, 0};
	int rc = 0;
	kb_spec__eval_launch(&c, &spec->launch, out, &rc);
	return rc ? KB_ESPEC : 0;
}

