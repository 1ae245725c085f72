/*
 * parse_expr.c - the expressions of the tile DSL (docs/tile.md): literals,
 * names, calls with positional then keyword arguments, tensor slices, and
 * the operators by C's precedence (|| && | & == != < <= > >= << >> + - * /
 * % and unary - !), with Python's `**` above unary minus and right to
 * left (-x ** 2 is -(x ** 2)), in chibicc's `rule(P, &rest, tok)` style; and the parser's
 * error helpers.  Statements and kernels are parse.c's.
 *
 * Invariants: a rule returns NULL only after reporting its error, with
 * *rest at the offending token (parse.c resumes from there); a node's
 * line/col/len span its source text, cut at the end of its first line;
 * newlines may follow '(' and ',' of a call, nowhere else.
 */
#include "tile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef kb_tile__tok tok_t;

/* ===== errors ===== */

/* An error at line:col (len columns underlined); ap holds fmt's values. */
static void KB_PRINTF(5, 0) vperr(kb_tile__parser *P, int line, int col, int len, const char *fmt,
				  va_list ap)
{
	char *msg = kb_xvasprintf(fmt, ap);
	kb_diag_add(P->diags, KB_DIAG_ERROR, P->path, P->text, line, col, len, "%s", msg);
	free(msg);
}

void kb_tile__perr(kb_tile__parser *P, const kb_tile__tok *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vperr(P, t->line, t->col, t->len, fmt, ap);
	va_end(ap);
}

void kb_tile__perr_at(kb_tile__parser *P, const kb_tile__expr *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vperr(P, e->line, e->col, e->len, fmt, ap);
	va_end(ap);
}

void kb_tile__perr_got(kb_tile__parser *P, const kb_tile__tok *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = kb_xvasprintf(fmt, ap);
	va_end(ap);
	kb_tile__perr(P, t, "%s, got %s", msg, kb_tile__tok_desc(t).s);
	free(msg);
}

/* ===== freeing ===== */

void kb_tile__expr_free(kb_tile__expr *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->nargs; i++)
		kb_tile__expr_free(e->args[i]);
	for (int i = 0; i < e->nkw; i++) {
		free(e->kw[i]);
		kb_tile__expr_free(e->kwv[i]);
	}
	for (int i = 0; i < e->nidx; i++) {
		kb_tile__expr_free(e->idx[i].lo);
		kb_tile__expr_free(e->idx[i].hi);
	}
	free(e->args);
	free(e->kw);
	free(e->kwv);
	free(e->idx);
	free(e->name);
	free(e);
}

/* ===== expressions ===== */

static kb_tile__expr *new_expr(kb_tile__ekind kind, const tok_t *t)
{
	kb_tile__expr *e = kb_xcalloc(1, sizeof(*e));
	e->kind = kind;
	e->line = t->line;
	e->col = t->col;
	e->len = t->len > 0 ? t->len : 1;
	return e;
}

static void set_span(kb_tile__expr *e, const tok_t *first, const tok_t *last)
{
	e->line = first->line;
	e->col = first->col;
	e->len = kb_tile__span(first, last);
}

/* Returns NULL with *rest at tok: the parse of an expression failed there. */
static kb_tile__expr *fail(tok_t **rest, tok_t *tok, kb_tile__expr *partial)
{
	kb_tile__expr_free(partial);
	*rest = tok;
	return NULL;
}

/* The `closer` that ends call or slice e (begun at start): e with its
 * span, or NULL after "expected ')' after the WHAT of NAME". */
static kb_tile__expr *close_list(kb_tile__parser *P, tok_t **rest, tok_t *tok,
				 const tok_t *start, kb_tile__expr *e, const char *closer,
				 const char *what)
{
	if (!kb_tile__tok_is(tok, closer)) {
		kb_tile__perr_got(P, tok, "expected '%s' after the %s of %s", closer, what, e->name);
		return fail(rest, tok, e);
	}
	set_span(e, start, tok);
	*rest = tok + 1;
	return e;
}

/* The capacities of a call's growing arrays. */
typedef struct {
	int args, kw, kwv;
} caps;

static void push_arg(kb_tile__expr *e, kb_tile__expr *a, int *cap)
{
	*KB_PUSH(e->args, e->nargs, *cap) = a;
}

static bool is_kw(const kb_tile__expr *e, const tok_t *t)
{
	for (int i = 0; i < e->nkw; i++)
		if ((int)strlen(e->kw[i]) == t->len && !memcmp(e->kw[i], t->p, (size_t)t->len))
			return true;
	return false;
}

/* One argument of a call: `name = value` (a keyword) or a value. */
static bool call_arg(kb_tile__parser *P, tok_t **rest, tok_t *tok, kb_tile__expr *e, caps *c)
{
	*rest = tok;
	if (tok->kind == KB_TT_IDENT && kb_tile__tok_is(tok + 1, "=")) {
		if (is_kw(e, tok)) {
			kb_tile__perr(P, tok, "%.*s= is given twice", tok->len, tok->p);
			return false;
		}
		kb_tile__expr *v = kb_tile__parse_expr(P, rest, tok + 2);
		if (!v)
			return false;
		int n = e->nkw;
		*KB_PUSH(e->kw, n, c->kw) = kb_tile__tok_str(tok);
		*KB_PUSH(e->kwv, e->nkw, c->kwv) = v;
		return true;
	}
	if (e->nkw) {
		kb_tile__perr(P, tok, "a positional argument of %s after its keyword arguments", e->name);
		return false;
	}
	kb_tile__expr *v = kb_tile__parse_expr(P, rest, tok);
	if (v)
		push_arg(e, v, &c->args);
	return v != NULL;
}

/* NAME '(' [arg (',' arg)* [',']] ')'; newlines may follow '(' and ','. */
kb_tile__expr *kb_tile__parse_call(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__expr *e = new_expr(KB_TE_CALL, tok);
	e->name = kb_tile__tok_str(tok);
	caps c = {0, 0, 0};
	tok = kb_tile__skip_nl(tok + 2);
	while (!kb_tile__tok_is(tok, ")")) {
		if (!call_arg(P, &tok, tok, e, &c))
			return fail(rest, tok, e);
		tok = kb_tile__skip_nl(tok);
		if (!kb_tile__tok_is(tok, ","))
			break;
		tok = kb_tile__skip_nl(tok + 1);
	}
	return close_list(P, rest, tok, start, e, ")", "arguments");
}

/* NAME '[' index (',' index)* ']' where an index is `e` or `e : e`. */
static kb_tile__expr *slice(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__expr *e = new_expr(KB_TE_SLICE, tok);
	e->name = kb_tile__tok_str(tok);
	int cap = 0;
	tok += 2;
	for (;;) {
		kb_tile__index *ix = KB_PUSH(e->idx, e->nidx, cap);
		ix->extent = 1;
		if (kb_tile__tok_is(tok, ":")) { /* numpy's m[:, None] */
			kb_tile__perr(P, tok, "a range needs its start; for a row broadcast (m[:, None]) "
				      "reduce with keep = true: an [R, 1] tile broadcasts along the rows");
			return fail(rest, tok, e);
		}
		if (!(ix->lo = kb_tile__parse_expr(P, &tok, tok)))
			return fail(rest, tok, e);
		if (kb_tile__tok_is(tok, ":") && !(ix->hi = kb_tile__parse_expr(P, &tok, tok + 1)))
			return fail(rest, tok, e);
		if (!kb_tile__tok_is(tok, ","))
			break;
		tok++;
	}
	return close_list(P, rest, tok, start, e, "]", "indices");
}

static kb_tile__expr *primary(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	kb_tile__expr *e;
	if (tok->kind == KB_TT_INT || tok->kind == KB_TT_FLOAT) {
		e = new_expr(tok->kind == KB_TT_INT ? KB_TE_INT : KB_TE_FLOAT, tok);
		e->ival = tok->ival;
		e->fval = tok->fval;
		*rest = tok + 1;
		return e;
	}
	if (kb_tile__tok_is(tok, "(")) {
		tok_t *start = tok;
		e = kb_tile__parse_expr(P, &tok, tok + 1);
		if (!e)
			return fail(rest, tok, NULL);
		if (!kb_tile__tok_is(tok, ")")) {
			kb_tile__perr_got(P, tok, "expected ')' to close the '(' at %d:%d", start->line,
					  start->col);
			return fail(rest, tok, e);
		}
		set_span(e, start, tok);
		*rest = tok + 1;
		return e;
	}
	if (tok->kind != KB_TT_IDENT || kb_tile__is_keyword(tok)) {
		kb_tile__perr_got(P, tok, "expected an expression");
		return fail(rest, tok, NULL);
	}
	if (kb_tile__tok_is(tok + 1, "("))
		return kb_tile__parse_call(P, rest, tok);
	if (kb_tile__tok_is(tok + 1, "["))
		return slice(P, rest, tok);
	bool t = kb_tile__tok_is(tok, "true"), f = kb_tile__tok_is(tok, "false");
	if (t || f) {
		e = new_expr(KB_TE_BOOL, tok);
		e->bval = t;
	} else if (kb_tile__tok_is(tok, "inf")) {
		e = new_expr(KB_TE_INF, tok);
	} else {
		e = new_expr(KB_TE_NAME, tok);
		e->name = kb_tile__tok_str(tok);
	}
	*rest = tok + 1;
	return e;
}

static kb_tile__expr *unary(kb_tile__parser *P, tok_t **rest, tok_t *tok);

/* `lhs op rhs`, spanning first to last. */
static kb_tile__expr *binary_node(int op, kb_tile__expr *lhs, kb_tile__expr *rhs, const tok_t *first,
				  const tok_t *last)
{
	kb_tile__expr *e = new_expr(KB_TE_BINARY, first);
	e->op = op;
	int cap = 0;
	push_arg(e, lhs, &cap);
	push_arg(e, rhs, &cap);
	set_span(e, first, last);
	return e;
}

/* primary ['**' unary]: right to left, tighter than a unary minus on its
 * left (-x ** 2 is -(x ** 2)), looser on its right (2 ** -1). */
static kb_tile__expr *power(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	tok_t *start = tok;
	kb_tile__expr *lhs = primary(P, &tok, tok);
	if (!lhs)
		return fail(rest, tok, NULL);
	if (!kb_tile__tok_is(tok, "**")) {
		*rest = tok;
		return lhs;
	}
	kb_tile__expr *rhs = unary(P, &tok, tok + 1);
	if (!rhs)
		return fail(rest, tok, lhs);
	*rest = tok;
	return binary_node(KB_TOP_POW, lhs, rhs, start, tok - 1);
}

/* ('-' | '!') unary | power */
static kb_tile__expr *unary(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	if (!kb_tile__tok_is(tok, "-") && !kb_tile__tok_is(tok, "!"))
		return power(P, rest, tok);
	tok_t *start = tok;
	kb_tile__expr *e = new_expr(KB_TE_UNARY, tok);
	e->op = *tok->p;
	kb_tile__expr *a = unary(P, &tok, tok + 1);
	if (!a)
		return fail(rest, tok, e);
	int cap = 0;
	push_arg(e, a, &cap);
	set_span(e, start, tok - 1);
	*rest = tok;
	return e;
}

/* The binary operators by precedence level, loosest first (docs/tile.md). */
static const struct {
	const char *s;
	int op, prec;
} binops[] = {
	{"||", KB_TOP_OR, 0},  {"&&", KB_TOP_AND, 1}, {"|", KB_TOP_BOR, 2},  {"&", KB_TOP_BAND, 3},
	{"==", KB_TOP_EQ, 4},  {"!=", KB_TOP_NE, 4},  {"<", KB_TOP_LT, 5},   {"<=", KB_TOP_LE, 5},
	{">", KB_TOP_GT, 5},   {">=", KB_TOP_GE, 5},  {"<<", KB_TOP_SHL, 6}, {">>", KB_TOP_SHR, 6},
	{"+", KB_TOP_ADD, 7},  {"-", KB_TOP_SUB, 7},  {"*", KB_TOP_MUL, 8},  {"/", KB_TOP_DIV, 8},
	{"%", KB_TOP_MOD, 8},
};
#define PREC_UNARY 9

static int binop_at(const tok_t *tok, int prec)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(binops); i++)
		if (binops[i].prec == prec && kb_tile__tok_is(tok, binops[i].s))
			return binops[i].op;
	return 0;
}

/* Precedence climbing: operands of level prec+1, left-associative. */
static kb_tile__expr *binary(kb_tile__parser *P, tok_t **rest, tok_t *tok, int prec)
{
	if (prec == PREC_UNARY)
		return unary(P, rest, tok);
	tok_t *start = tok;
	kb_tile__expr *lhs = binary(P, &tok, tok, prec + 1);
	if (!lhs)
		return fail(rest, tok, NULL);
	int op;
	while ((op = binop_at(tok, prec))) {
		kb_tile__expr *rhs = binary(P, &tok, tok + 1, prec + 1);
		if (!rhs)
			return fail(rest, tok, lhs);
		lhs = binary_node(op, lhs, rhs, start, tok - 1);
	}
	*rest = tok;
	return lhs;
}

kb_tile__expr *kb_tile__parse_expr(kb_tile__parser *P, tok_t **rest, tok_t *tok)
{
	return binary(P, rest, tok, 0);
}

