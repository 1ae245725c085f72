/*
 * spec.c - the //! spec: the comment lines of a kernel file that say how to
 * run it (architecture.md §3).  This file owns the dtype table, a lexer and
 * recursive-descent parser that turns //! lines into a kb_spec, the check
 * that every name is defined, and the evaluator of expressions over args.
 * It does not know kernels (bind.c matches the spec to the kernel's
 * parameters and checks reference shapes) and it runs nothing.
 *
 * Invariants:
 *  - Every problem is a kb_diag at the user's file:line:col, underlining the
 *    offending token; parsing never stops at the first error.  A syntax error
 *    abandons the rest of its line (one syntax error per line, no cascades),
 *    but what the line defined before it (an arg's or tensor's name) stays
 *    defined, so later lines do not report it as undefined.
 *  - Scoping: an arg may use only args defined on lines above it, so args
 *    evaluate top to bottom and can never form a cycle.  Every other line
 *    (dims, launch, bytes, flops, sweep) may use any arg of the file, wherever
 *    it is defined.  Args and tensors share one namespace.
 *  - Expressions are kept as trees and evaluated lazily (sweeps and --arg
 *    change args through kb_compile_spec_set_arg); parse also evaluates them
 *    once, so division by zero or a dim that is not an integer is reported
 *    up front.  Init and tol values are constants (no args).
 *  - A random init without an explicit seed gets a seed derived from the
 *    tensor's position (init.has_seed tells whether the user wrote one).
 *  - kb_loc.file in a spec borrows src->path.
 */
#include "compile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== dtypes ===== */

static const struct {
	const char *name;
	int size;
} dtypes[KB_DT_COUNT] = {
	[KB_DT_F64] = {"f64", 8}, [KB_DT_F32] = {"f32", 4}, [KB_DT_F16] = {"f16", 2},
	[KB_DT_BF16] = {"bf16", 2}, [KB_DT_I64] = {"i64", 8}, [KB_DT_I32] = {"i32", 4},
	[KB_DT_I16] = {"i16", 2}, [KB_DT_I8] = {"i8", 1}, [KB_DT_U8] = {"u8", 1},
};

/* The short name of a dtype ("f32"), or "?" for an invalid value. */
const char *kb_dtype_name(kb_dtype t)
{
	return (unsigned)t < KB_DT_COUNT ? dtypes[t].name : "?";
}

/* Bytes per element, or 0 for an invalid value. */
int kb_dtype_size(kb_dtype t)
{
	return (unsigned)t < KB_DT_COUNT ? dtypes[t].size : 0;
}

/* Returns 0 and sets *out when name[0..len) is a dtype, else KB_ENOTFOUND. */
int kb_dtype_parse(const char *name, size_t len, kb_dtype *out)
{
	for (int i = 0; i < KB_DT_COUNT; i++) {
		if (strlen(dtypes[i].name) == len && !memcmp(dtypes[i].name, name, len)) {
			*out = (kb_dtype)i;
			return 0;
		}
	}
	return KB_ENOTFOUND;
}

/* ===== diagnostics and small helpers ===== */

static void vdiag(kb_diags *d, const kb_source *src, kb_diag_level lv, int line, int col,
		  int len, const char *fmt, va_list ap)
{
	if (!d)
		return;
	char *msg = kb_xvasprintf(fmt, ap);
	kb_diag_add(d, lv, src ? src->path : NULL, src ? src->text : NULL, line, col, len,
		    "%s", msg);
	free(msg);
}

static void KB_PRINTF(6, 7) diag_err(kb_diags *d, const kb_source *src, int line, int col,
				     int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdiag(d, src, KB_DIAG_ERROR, line, col, len, fmt, ap);
	va_end(ap);
}

static int find_arg(const kb_spec *s, const char *name)
{
	for (int i = 0; i < s->nargs; i++)
		if (!strcmp(s->args[i].name, name))
			return i;
	return -1;
}

static int find_tensor(const kb_spec *s, const char *name)
{
	for (int i = 0; i < s->ntensors; i++)
		if (!strcmp(s->tensors[i].name, name))
			return i;
	return -1;
}

/* Edit distance, for "did you mean" (short words only). */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la > 31 || lb > 31)
		return 99;
	int d[32][32];
	for (int i = 0; i <= la; i++)
		d[i][0] = i;
	for (int j = 0; j <= lb; j++)
		d[0][j] = j;
	for (int i = 1; i <= la; i++) {
		for (int j = 1; j <= lb; j++) {
			int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
			d[i][j] = c < del ? (c < ins ? c : ins) : (del < ins ? del : ins);
		}
	}
	return d[la][lb];
}

/* The closest of names[] to word when it is close enough, else NULL. */
static const char *closest(const char *word, const char *const *names, int n)
{
	const char *best = NULL;
	int bestd = (int)strlen(word) <= 3 ? 1 : 2;
	for (int i = 0; i < n; i++) {
		int dist = edit_distance(word, names[i]);
		if (dist <= bestd && (!best || dist < bestd)) {
			best = names[i];
			bestd = dist;
		}
	}
	return best;
}

/* "a, b, c" */
static char *join_names(const char *const *names, int n)
{
	kb_buf b = KB_BUF_INIT;
	for (int i = 0; i < n; i++)
		kb_buf_catf(&b, "%s%s", i ? ", " : "", names[i]);
	return kb_buf_detach(&b);
}

/* Appends one zeroed element to a spec array that keeps no capacity. */
#define PUSH1(arr, n) \
	((arr) = kb_xrealloc((arr), ((size_t)(n) + 1) * sizeof(*(arr))), \
	 memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

static void expr_free(kb_expr *e)
{
	if (!e)
		return;
	expr_free(e->a);
	expr_free(e->b);
	free(e->name);
	free(e);
}

/* ===== evaluation ===== */

/* An evaluation failed and its reason was reported before (or elsewhere). */
#define EVAL_SILENT 1

typedef struct {
	const kb_spec *spec;  /* NULL: constants only (init and tol values) */
	const kb_source *src;
	kb_diags *diags;      /* NULL: silent */
	const bool *bad;      /* args whose evaluation failed already, or NULL */
	bool quiet_names;     /* undefined names were reported already */
	int depth;
} evalctx;

static int KB_PRINTF(3, 4) eval_fail(evalctx *c, const kb_expr *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdiag(c->diags, c->src, KB_DIAG_ERROR, e->loc.line, e->loc.col, e->len, fmt, ap);
	va_end(ap);
	return KB_ESPEC;
}

static double as_double(kb_value v)
{
	return v.is_float ? v.f : (double)v.i;
}

static int eval(evalctx *c, const kb_expr *e, kb_value *out);

static int eval_name(evalctx *c, const kb_expr *e, kb_value *out)
{
	if (!c->spec)
		return eval_fail(c, e, "expected a number, not '%s' (this value cannot use args)",
				 e->name);
	int i = find_arg(c->spec, e->name);
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
	int rc = eval(c, a->expr, out);
	c->depth--;
	return rc;
}

static int int_binop(evalctx *c, const kb_expr *e, char op, int64_t a, int64_t b, int64_t *r)
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

static int float_binop(evalctx *c, const kb_expr *e, char op, double a, double b, double *r)
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

static int eval_call(evalctx *c, const kb_expr *e, kb_value x, kb_value y, kb_value *out)
{
	bool is_cdiv = !strcmp(e->name, "cdiv"), is_min = !strcmp(e->name, "min");
	out->is_float = x.is_float || y.is_float;
	if (is_cdiv && as_double(y) == 0)
		return eval_fail(c, e->b, "division by zero");
	if (!out->is_float) {
		if (is_cdiv && x.i == INT64_MIN && y.i == -1)
			return eval_fail(c, e, "integer overflow");
		out->i = is_cdiv ? int_cdiv(x.i, y.i)
			 : is_min ? (x.i < y.i ? x.i : y.i) : (x.i > y.i ? x.i : y.i);
		return 0;
	}
	double a = as_double(x), b = as_double(y);
	out->f = is_cdiv ? ceil(a / b) : is_min ? fmin(a, b) : fmax(a, b);
	return 0;
}

static int eval(evalctx *c, const kb_expr *e, kb_value *out)
{
	kb_value x = {0}, y = {0};
	int rc = 0;
	*out = (kb_value){0};
	switch (e->kind) {
	case KB_EX_INT: out->i = e->ival; return 0;
	case KB_EX_FLOAT: out->is_float = true; out->f = e->fval; return 0;
	case KB_EX_NAME: return eval_name(c, e, out);
	case KB_EX_NEG:
		if ((rc = eval(c, e->a, &x)))
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
	if ((rc = eval(c, e->a, &x)) || (rc = eval(c, e->b, &y)))
		return rc;
	if (e->kind == KB_EX_CALL)
		return eval_call(c, e, x, y, out);
	out->is_float = x.is_float || y.is_float;
	if (out->is_float)
		return float_binop(c, e, e->op, as_double(x), as_double(y), &out->f);
	return int_binop(c, e, e->op, x.i, y.i, &out->i);
}

/* Evaluates expr with the spec's args; diags may be NULL (silent).
 * Returns 0, or KB_ESPEC (undefined name, division by zero, overflow). */
int kb_compile_spec_eval(const kb_spec *spec, const kb_expr *expr, kb_value *out,
			 const kb_source *src, kb_diags *diags)
{
	evalctx c = {spec, src, diags, NULL, false, 0};
	int rc = eval(&c, expr, out);
	return rc ? KB_ESPEC : 0;
}

/* ===== the lexer (one //! line at a time) ===== */

typedef enum { T_EOF, T_IDENT, T_NUM, T_STR, T_PUNCT, T_ARROW, T_BAD } tok_kind;

typedef struct {
	tok_kind kind;
	const char *p;
	int len;
	int col;   /* 1-based, in the physical line */
} tok;

enum { D_KERNEL, D_ARG, D_IN, D_OUT, D_LAUNCH, D_REF, D_TOL, D_BYTES, D_FLOPS, D_SWEEP,
       D_TUNE, D_COUNT };

typedef struct {
	const kb_source *src;
	kb_spec *spec;
	kb_diags *diags;
	const char *line;     /* first byte of the physical line */
	const char *end;      /* end of the spec text: comment and trailing blanks cut */
	const char *pos;      /* the lexer's cursor, after tok */
	int lineno;
	tok tok;              /* the current token */
	bool failed;          /* a syntax error was reported on this line */
	int first[D_COUNT];   /* line of the first kernel/launch/... line, 0 if none */
	kb_loc *out_locs;     /* where the ref's outputs are written */
} parser;

static bool is_ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static const char *lex_number(const char *p, const char *end)
{
	bool hex = end - p > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	while (p < end) {
		if (!hex && (*p == 'e' || *p == 'E') && p + 1 < end && (p[1] == '+' || p[1] == '-'))
			p += 2;
		else if (is_ident_char(*p) || *p == '.')
			p++;
		else
			break;
	}
	return p;
}

static void lex(parser *P)
{
	const char *p = P->pos, *e = P->end;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	tok *t = &P->tok;
	t->p = p;
	t->col = (int)(p - P->line) + 1;
	t->len = 1;
	if (p >= e) {
		t->kind = T_EOF;
	} else if (is_ident_start(*p)) {
		t->kind = T_IDENT;
		while (p + t->len < e && is_ident_char(p[t->len]))
			t->len++;
	} else if (isdigit((unsigned char)*p) ||
		   (*p == '.' && p + 1 < e && isdigit((unsigned char)p[1]))) {
		t->kind = T_NUM;
		t->len = (int)(lex_number(p, e) - p);
	} else if (*p == '"') {
		const char *q = p + 1;
		while (q < e && *q != '"')
			q += (*q == '\\' && q + 1 < e) ? 2 : 1;
		t->kind = q < e ? T_STR : T_BAD;
		t->len = (int)((q < e ? q + 1 : e) - p);
	} else if (*p == '-' && p + 1 < e && p[1] == '>') {
		t->kind = T_ARROW;
		t->len = 2;
	} else {
		t->kind = T_PUNCT;
	}
	P->pos = p + t->len;
}

/* Whether the next non-blank character after the current token is c. */
static bool peek_char(const parser *P, char c)
{
	const char *p = P->pos;
	while (p < P->end && (*p == ' ' || *p == '\t'))
		p++;
	return p < P->end && *p == c;
}

static bool is_punct(const parser *P, char c)
{
	return P->tok.kind == T_PUNCT && P->tok.p[0] == c;
}

static bool tok_is(const tok *t, const char *word)
{
	return t->kind == T_IDENT && (int)strlen(word) == t->len && !memcmp(t->p, word, (size_t)t->len);
}

static kb_loc loc_at(const parser *P, int col)
{
	return (kb_loc){P->src->path, P->lineno, col};
}

static void KB_PRINTF(4, 5) perr(parser *P, int col, int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdiag(P->diags, P->src, KB_DIAG_ERROR, P->lineno, col, len, fmt, ap);
	va_end(ap);
}

/* Reports "expected WHAT" at the current token (once per line); returns -1. */
static int syntax(parser *P, const char *what)
{
	const tok *t = &P->tok;
	if (!P->failed) {
		if (t->kind == T_EOF)
			perr(P, t->col, 1, "expected %s at end of line", what);
		else if (t->kind == T_BAD)
			perr(P, t->col, t->len, "unterminated string");
		else
			perr(P, t->col, t->len, "expected %s, found '%.*s'", what, t->len, t->p);
	}
	P->failed = true;
	return -1;
}

static int expect(parser *P, char c, const char *what)
{
	if (!is_punct(P, c))
		return syntax(P, what);
	lex(P);
	return 0;
}

static int expect_ident(parser *P, const char *what, tok *out)
{
	*out = P->tok;
	if (P->tok.kind != T_IDENT)
		return syntax(P, what);
	lex(P);
	return 0;
}

static int expect_eol(parser *P)
{
	return P->tok.kind == T_EOF ? 0 : syntax(P, "end of line");
}

/* ===== expressions ===== */

static kb_expr *parse_expr(parser *P);

static kb_expr *expr_new(const parser *P, kb_expr_kind kind, int col, int len)
{
	kb_expr *e = kb_xcalloc(1, sizeof(*e));
	e->kind = kind;
	e->loc = loc_at(P, col);
	e->len = len;
	return e;
}

/* Stretches e's span to end where `last` ends. */
static void span_to(kb_expr *e, int col, const kb_expr *last)
{
	e->len = last->loc.col + last->len - col;
}

static kb_expr *parse_number(parser *P)
{
	tok t = P->tok;
	char buf[64];
	if (t.len >= (int)sizeof(buf)) {
		syntax(P, "a shorter number");
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
			perr(P, t.col, t.len, *end || end == buf ? "invalid number '%s'"
					      : "number '%s' is out of range", buf);
		P->failed = true;
		expr_free(e);
		return NULL;
	}
	lex(P);
	return e;
}

/* name(a, b): one of cdiv, min, max, with two arguments. */
static kb_expr *parse_call(parser *P, tok name)
{
	kb_expr *e = expr_new(P, KB_EX_CALL, name.col, name.len);
	e->name = kb_xstrndup(name.p, (size_t)name.len);
	if (strcmp(e->name, "cdiv") && strcmp(e->name, "min") && strcmp(e->name, "max")) {
		perr(P, name.col, name.len, "unknown function '%s' (known: cdiv, min, max)", e->name);
		P->failed = true;
		goto fail;
	}
	lex(P); /* ( */
	int nargs = 0;
	for (;;) {
		kb_expr *arg = parse_expr(P);
		if (!arg)
			goto fail;
		if (nargs < 2)
			*(nargs ? &e->b : &e->a) = arg;
		else
			expr_free(arg);
		nargs++;
		if (is_punct(P, ')'))
			break;
		if (expect(P, ',', "',' or ')'"))
			goto fail;
	}
	e->len = P->tok.col + 1 - name.col;
	lex(P);
	if (nargs != 2) {
		perr(P, name.col, e->len, "%s() takes 2 arguments, not %d", e->name, nargs);
		P->failed = true;
		goto fail;
	}
	return e;
fail:
	expr_free(e);
	return NULL;
}

static kb_expr *parse_primary(parser *P)
{
	tok t = P->tok;
	if (t.kind == T_NUM)
		return parse_number(P);
	if (t.kind == T_IDENT) {
		lex(P);
		if (is_punct(P, '('))
			return parse_call(P, t);
		kb_expr *e = expr_new(P, KB_EX_NAME, t.col, t.len);
		e->name = kb_xstrndup(t.p, (size_t)t.len);
		return e;
	}
	if (!is_punct(P, '(')) {
		syntax(P, "an expression");
		return NULL;
	}
	lex(P);
	kb_expr *e = parse_expr(P);
	if (e && !is_punct(P, ')')) {
		syntax(P, "')'");
		expr_free(e);
		return NULL;
	}
	if (e) {
		e->loc.col = t.col;
		e->len = P->tok.col + 1 - t.col;
		lex(P);
	}
	return e;
}

static kb_expr *parse_unary(parser *P)
{
	if (is_punct(P, '+')) {
		lex(P);
		return parse_unary(P);
	}
	if (!is_punct(P, '-'))
		return parse_primary(P);
	int col = P->tok.col;
	lex(P);
	kb_expr *a = parse_unary(P);
	if (!a)
		return NULL;
	kb_expr *e = expr_new(P, KB_EX_NEG, col, 1);
	e->a = a;
	span_to(e, col, a);
	return e;
}

static kb_expr *binary(parser *P, kb_expr *a, kb_expr *(*operand)(parser *))
{
	char op = P->tok.p[0];
	lex(P);
	kb_expr *b = operand(P);
	if (!b) {
		expr_free(a);
		return NULL;
	}
	kb_expr *e = expr_new(P, KB_EX_BIN, a->loc.col, 1);
	e->op = op;
	e->a = a;
	e->b = b;
	span_to(e, a->loc.col, b);
	return e;
}

static kb_expr *parse_term(parser *P)
{
	kb_expr *e = parse_unary(P);
	while (e && (is_punct(P, '*') || is_punct(P, '/') || is_punct(P, '%')))
		e = binary(P, e, parse_unary);
	return e;
}

/* expr := term (('+' | '-') term)*, C precedence; NULL after a syntax error. */
static kb_expr *parse_expr(parser *P)
{
	kb_expr *e = parse_term(P);
	while (e && (is_punct(P, '+') || is_punct(P, '-')))
		e = binary(P, e, parse_term);
	return e;
}

/* Parses a constant expression (no args) into *out; -1 after an error. */
static int parse_const(parser *P, kb_value *out, kb_expr **keep)
{
	kb_expr *e = parse_expr(P);
	if (!e)
		return -1;
	evalctx c = {NULL, P->src, P->diags, NULL, false, 0};
	int rc = eval(&c, e, out);
	if (rc)
		P->failed = true;
	if (keep && !rc)
		*keep = e;
	else
		expr_free(e);
	return rc ? -1 : 0;
}

/* ===== names ===== */

/* Returns whether the name in t is still free; reports a duplicate if not. */
static bool define_ok(parser *P, const tok *t)
{
	char *name = kb_xstrndup(t->p, (size_t)t->len);
	int a = find_arg(P->spec, name), x = find_tensor(P->spec, name);
	int line = a >= 0 ? P->spec->args[a].loc.line : x >= 0 ? P->spec->tensors[x].loc.line : 0;
	if (line)
		perr(P, t->col, t->len, "duplicate name '%s' (first defined as %s at line %d)",
		     name, a >= 0 ? "an arg" : "a tensor", line);
	free(name);
	return line == 0;
}

/* Scans NAME<...> template arguments starting at the current '<' token;
 * returns the end of the '>' and moves past it, or NULL after an error. */
static const char *scan_template(parser *P)
{
	int depth = 0;
	for (const char *p = P->tok.p; p < P->end; p++) {
		depth += (*p == '<') - (*p == '>');
		if (depth == 0) {
			P->pos = p + 1;
			lex(P);
			return p + 1;
		}
	}
	perr(P, P->tok.col, 1, "unclosed '<' in template arguments");
	P->failed = true;
	return NULL;
}

/* NAME or NAME<template args> as written; NULL after an error. */
static char *parse_kernel_name(parser *P, int *col, int *len)
{
	tok name;
	if (expect_ident(P, "a kernel name", &name))
		return NULL;
	const char *end = name.p + name.len;
	if (is_punct(P, '<') && !(end = scan_template(P)))
		return NULL;
	*col = name.col;
	*len = name.len;
	return kb_xstrndup(name.p, (size_t)(end - name.p));
}

/* ===== directives: kernel, arg, in, out ===== */

static void dir_kernel(parser *P, const tok *dir)
{
	int col, len;
	char *name = parse_kernel_name(P, &col, &len);
	if (!name)
		return;
	if (expect_eol(P)) {
		free(name);
		return;
	}
	P->spec->kernel = name;
	P->spec->kernel_loc = loc_at(P, col);
}


static void dir_arg(parser *P, const tok *dir)
{
	tok name;
	if (expect_ident(P, "an arg name", &name) || !define_ok(P, &name))
		return;
	kb_spec *s = P->spec;
	int i = s->nargs;
	kb_spec_arg *a = PUSH1(s->args, s->nargs);
	a->name = kb_xstrndup(name.p, (size_t)name.len);
	a->loc = loc_at(P, name.col);
	if (expect(P, '=', "'=' and a value"))
		return;
	kb_expr *e = parse_expr(P);
	if (e && expect_eol(P)) {
		expr_free(e);
		e = NULL;
	}
	s->args[i].expr = e;
}

static const struct init_fn {
	const char *name;
	kb_init_kind kind;
	int nparams;
	const char *params[3];
} init_fns[] = {
	{"randn", KB_INIT_RANDN, 3, {"mean", "std", "seed"}},
	{"rand", KB_INIT_RAND, 3, {"lo", "hi", "seed"}},
	{"arange", KB_INIT_ARANGE, 0, {NULL}},
	{"ones", KB_INIT_ONES, 0, {NULL}},
	{"zeros", KB_INIT_ZEROS, 0, {NULL}},
	{"file", KB_INIT_FILE, 0, {NULL}},
};

static const char *const init_names[] = {"randn", "rand", "arange", "ones", "zeros", "file"};

/* file("path") or file(path): the path as written, quotes removed. */
static void parse_init_file(parser *P, kb_init *init)
{
	if (expect(P, '(', "'(' and a path"))
		return;
	kb_buf b = KB_BUF_INIT;
	if (P->tok.kind == T_STR) {
		for (int i = 1; i < P->tok.len - 1; i++) {
			if (P->tok.p[i] == '\\' && i + 1 < P->tok.len - 1)
				i++;
			kb_buf_catc(&b, P->tok.p[i]);
		}
		lex(P);
	} else {
		const char *start = P->tok.p, *p = start;
		while (p < P->end && *p != ')')
			p++;
		while (p > start && (p[-1] == ' ' || p[-1] == '\t'))
			p--;
		kb_buf_catn(&b, start, (size_t)(p - start));
		P->pos = p;
		lex(P);
	}
	if (!b.len) {
		perr(P, P->tok.col, 1, "file() needs a path, e.g. file(\"x.npy\")");
		P->failed = true;
	} else if (!expect(P, ')', "')'")) {
		init->path = kb_buf_detach(&b);
	}
	kb_buf_free(&b);
}

/* One init argument, key=value or positional, into vals/given. */
static int parse_init_arg(parser *P, const struct init_fn *fn, int *npos, double *vals,
			  bool *given)
{
	int slot = -1, col = P->tok.col;
	if (P->tok.kind == T_IDENT && peek_char(P, '=')) {
		tok key = P->tok;
		for (int i = 0; i < fn->nparams; i++)
			if (tok_is(&key, fn->params[i]))
				slot = i;
		if (slot < 0) {
			char *known = join_names(fn->params, fn->nparams);
			perr(P, key.col, key.len, "%s() has no argument '%.*s'%s%s%s", fn->name,
			     key.len, key.p, fn->nparams ? " (known: " : "", known,
			     fn->nparams ? ")" : "");
			free(known);
			return P->failed = true, -1;
		}
		lex(P);
		lex(P);
	} else if ((slot = (*npos)++) >= fn->nparams) {
		if (fn->nparams)
			perr(P, col, 1, "%s() takes at most %d arguments", fn->name, fn->nparams);
		else
			perr(P, col, 1, "%s() takes no arguments", fn->name);
		return P->failed = true, -1;
	}
	if (given[slot]) {
		perr(P, col, 1, "argument '%s' of %s() is given twice", fn->params[slot], fn->name);
		return P->failed = true, -1;
	}
	kb_value v;
	col = P->tok.col;
	if (parse_const(P, &v, NULL))
		return -1;
	if (!strcmp(fn->params[slot], "seed") && (v.is_float || v.i < 0)) {
		perr(P, col, (int)(P->tok.p - P->line) + 1 - col,
		     "seed must be a non-negative integer");
		return P->failed = true, -1;
	}
	given[slot] = true;
	vals[slot] = as_double(v);
	return 0;
}

/* randn(...), rand(...), arange(), ones(), zeros(), file(path) into init. */
static void parse_init(parser *P, kb_init *init)
{
	tok name;
	if (expect_ident(P, "an initializer (randn, rand, arange, ones, zeros, file)", &name))
		return;
	const struct init_fn *fn = NULL;
	for (size_t i = 0; i < KB_ARRAY_LEN(init_fns); i++)
		if (tok_is(&name, init_fns[i].name))
			fn = &init_fns[i];
	if (!fn) {
		char *word = kb_xstrndup(name.p, (size_t)name.len);
		const char *near = closest(word, init_names, (int)KB_ARRAY_LEN(init_names));
		perr(P, name.col, name.len, "unknown initializer '%s'%s%s%s (known: randn, rand, "
		     "arange, ones, zeros, file)", word, near ? "; did you mean '" : "",
		     near ? near : "", near ? "'?" : "");
		free(word);
		P->failed = true;
		return;
	}
	init->kind = fn->kind;
	if (fn->kind == KB_INIT_FILE)
		return parse_init_file(P, init);
	double vals[3] = {0, 1, 0};
	bool given[3] = {false, false, false};
	int npos = 0;
	if (!is_punct(P, '('))
		return;
	lex(P);
	while (!is_punct(P, ')')) {
		if (parse_init_arg(P, fn, &npos, vals, given))
			return;
		if (!is_punct(P, ')') && expect(P, ',', "',' or ')'"))
			return;
	}
	lex(P);
	init->lo = vals[0];
	init->hi = vals[1];
	if (given[2]) {
		init->has_seed = true;
		init->seed = (uint64_t)vals[2];
	}
	if (fn->kind == KB_INIT_RAND && !(init->lo < init->hi))
		perr(P, name.col, name.len, "rand() needs lo < hi (got %g and %g)", init->lo, init->hi);
	if (fn->kind == KB_INIT_RANDN && init->hi < 0)
		perr(P, name.col, name.len, "randn() needs std >= 0 (got %g)", init->hi);
}

/* The dtype token; an unknown one is reported but parsing goes on (f32). */
static int parse_dtype(parser *P, kb_dtype *out)
{
	tok t;
	if (expect_ident(P, "a dtype (f32, f16, bf16, ...)", &t))
		return -1;
	if (!kb_dtype_parse(t.p, (size_t)t.len, out))
		return 0;
	*out = KB_DT_F32;
	char *word = kb_xstrndup(t.p, (size_t)t.len);
	const char *names[KB_DT_COUNT];
	for (int i = 0; i < KB_DT_COUNT; i++)
		names[i] = dtypes[i].name;
	kb_dtype alias;
	const char *near = !kb_compile_ctype_dtype(word, &alias) ? dtypes[alias].name
			   : closest(word, names, KB_DT_COUNT);
	char *known = join_names(names, KB_DT_COUNT);
	perr(P, t.col, t.len, "unknown dtype '%s'%s%s%s (known: %s)", word,
	     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", known);
	free(known);
	free(word);
	return 0;
}

/* '[' [expr (',' expr)*] ']' into the tensor's dims. */
static int parse_dims(parser *P, kb_spec_tensor *t)
{
	if (expect(P, '[', "'[' and the shape (e.g. f32[M, N]; f32[] for a scalar)"))
		return -1;
	if (is_punct(P, ']')) {
		lex(P);
		return 0;
	}
	for (;;) {
		if (t->rank == KB_MAX_RANK) {
			perr(P, P->tok.col, P->tok.len, "too many dimensions (at most %d)", KB_MAX_RANK);
			return P->failed = true, -1;
		}
		kb_expr *e = parse_expr(P);
		if (!e)
			return -1;
		t->dims[t->rank++] = e;
		if (!is_punct(P, ','))
			return expect(P, ']', "',' or ']'");
		lex(P);
	}
}

/* A random init's seed when none is written: distinct per tensor position,
 * and far from the small seeds people write by hand. */
static uint64_t derived_seed(int position)
{
	return (uint64_t)(position + 1) * 0x9E3779B97F4A7C15ull;
}

static void dir_tensor(parser *P, const tok *dir, bool is_out)
{
	tok name;
	if (expect_ident(P, "a tensor name", &name) || !define_ok(P, &name))
		return;
	kb_spec *s = P->spec;
	int pos = s->ntensors;
	kb_spec_tensor *t = PUSH1(s->tensors, s->ntensors);
	t->name = kb_xstrndup(name.p, (size_t)name.len);
	t->is_out = is_out;
	t->loc = loc_at(P, name.col);
	t->init = (kb_init){is_out ? KB_INIT_NONE : KB_INIT_RANDN, 0, 1, false, 0, NULL};
	if (expect(P, ':', "':' and a type (e.g. x : f32[N])") || parse_dtype(P, &t->dtype) ||
	    parse_dims(P, t))
		return;
	if (is_punct(P, '=')) {
		if (is_out) {
			perr(P, P->tok.col, 1, "an output takes no initializer (outputs are "
			     "poisoned before each run); use `//! in` for an input");
			P->failed = true;
			return;
		}
		lex(P);
		parse_init(P, &t->init);
		if (P->failed)
			return;
	}
	if ((t->init.kind == KB_INIT_RANDN || t->init.kind == KB_INIT_RAND) && !t->init.has_seed)
		t->init.seed = derived_seed(pos);
	expect_eol(P);
}

static void dir_in(parser *P, const tok *dir)
{
	dir_tensor(P, dir, false);
}

static void dir_out(parser *P, const tok *dir)
{
	dir_tensor(P, dir, true);
}

/* ===== directives: launch, ref, tol, bytes, flops, sweep, tune ===== */

/* (E[, E[, E]]) or a single E, for grid= and block=. */
static int parse_dim3(parser *P, kb_expr **v, int *n)
{
	if (!is_punct(P, '(')) {
		*n = 1;
		return (v[0] = parse_expr(P)) ? 0 : -1;
	}
	lex(P);
	for (*n = 0;;) {
		if (*n == 3) {
			perr(P, P->tok.col, P->tok.len, "a launch has at most 3 dimensions");
			return P->failed = true, -1;
		}
		if (!(v[*n] = parse_expr(P)))
			return -1;
		(*n)++;
		if (!is_punct(P, ','))
			return expect(P, ')', "',' or ')'");
		lex(P);
	}
}

static void dir_launch(parser *P, const tok *dir)
{
	static const char *const keys[] = {"grid", "block", "smem"};
	kb_spec_launch *l = &P->spec->launch;
	bool seen[3] = {false, false, false};
	l->present = true;
	l->loc = loc_at(P, dir->col);
	while (P->tok.kind != T_EOF) {
		tok key;
		if (expect_ident(P, "grid=, block= or smem=", &key))
			return;
		int k = tok_is(&key, "grid") ? 0 : tok_is(&key, "block") ? 1 : tok_is(&key, "smem") ? 2 : -1;
		if (k < 0 || seen[k]) {
			perr(P, key.col, key.len, k < 0 ? "unknown launch key '%.*s' (known: grid, "
			     "block, smem)" : "'%.*s' is given twice", key.len, key.p);
			P->failed = true;
			return;
		}
		seen[k] = true;
		if (expect(P, '=', "'='"))
			return;
		int rc = k == 0 ? parse_dim3(P, l->grid, &l->grid_n)
			 : k == 1 ? parse_dim3(P, l->block, &l->block_n)
			 : (l->smem = parse_expr(P)) ? 0 : -1;
		if (rc)
			return;
		if (is_punct(P, ','))
			lex(P);
	}
	for (int k = 0; k < 2; k++)
		if (!seen[k])
			perr(P, dir->col, dir->len, "launch needs %s=(...)", keys[k]);
}

/* A ref argument's value: a name, a number, or a negative number. */
static int parse_ref_value(parser *P, kb_ref_arg *a)
{
	const char *start = P->tok.p;
	int col = P->tok.col;
	if (is_punct(P, '-'))
		lex(P);
	if (P->tok.kind != T_IDENT && P->tok.kind != T_NUM)
		return syntax(P, "a tensor name, number or true/false");
	if (P->tok.kind == T_IDENT && P->tok.p != start)
		return syntax(P, "a number");
	a->text = kb_xstrndup(start, (size_t)(P->tok.p + P->tok.len - start));
	a->loc = loc_at(P, col);
	lex(P);
	return 0;
}

static int parse_ref_args(parser *P, kb_spec_ref *r)
{
	if (expect(P, '(', "'(' and the reference's arguments"))
		return -1;
	while (!is_punct(P, ')')) {
		kb_ref_arg *a = PUSH1(r->args, r->nargs);
		if (P->tok.kind == T_IDENT && peek_char(P, '=')) {
			a->key = kb_xstrndup(P->tok.p, (size_t)P->tok.len);
			lex(P);
			lex(P);
		}
		if (parse_ref_value(P, a)) {
			free(a->key); /* drop the half-parsed argument */
			r->nargs--;
			return -1;
		}
		if (!is_punct(P, ')') && expect(P, ',', "',' or ')'"))
			return -1;
	}
	lex(P);
	return 0;
}

static void parse_ref_outs(parser *P, kb_spec_ref *r)
{
	if (P->tok.kind != T_ARROW) {
		syntax(P, "'->' and the output tensor(s)");
		return;
	}
	lex(P);
	for (;;) {
		tok out;
		if (expect_ident(P, "an output tensor", &out))
			return;
		*PUSH1(r->outs, r->nouts) = kb_xstrndup(out.p, (size_t)out.len);
		int n = r->nouts - 1;
		*PUSH1(P->out_locs, n) = loc_at(P, out.col);
		if (!is_punct(P, ','))
			break;
		lex(P);
	}
	expect_eol(P);
}

static void dir_ref(parser *P, const tok *dir)
{
	kb_spec_ref *r = &P->spec->ref;
	tok fn;
	r->present = true;
	r->loc = loc_at(P, dir->col);
	if (expect_ident(P, "a reference (e.g. softmax(x, dim=1) -> y) or 'kernel NAME'", &fn))
		return;
	r->loc = loc_at(P, fn.col);
	if (tok_is(&fn, "kernel") && P->tok.kind == T_IDENT) {
		int col, len;
		r->is_kernel = true;
		if ((r->fn = parse_kernel_name(P, &col, &len))) {
			r->loc = loc_at(P, col);
			expect_eol(P);
		}
		return;
	}
	r->fn = kb_xstrndup(fn.p, (size_t)fn.len);
	if (parse_ref_args(P, r) == 0)
		parse_ref_outs(P, r);
}

static void dir_tol(parser *P, const tok *dir)
{
	bool seen[2] = {false, false};
	kb_spec *s = P->spec;
	s->has_tol = true;
	while (P->tok.kind != T_EOF) {
		tok key;
		if (expect_ident(P, "rtol= or atol=", &key))
			return;
		int k = tok_is(&key, "rtol") ? 0 : tok_is(&key, "atol") ? 1 : -1;
		if (k < 0 || seen[k]) {
			perr(P, key.col, key.len, k < 0 ? "unknown tolerance '%.*s' (known: rtol, atol)"
			     : "'%.*s' is given twice", key.len, key.p);
			P->failed = true;
			return;
		}
		seen[k] = true;
		kb_value v;
		if (expect(P, '=', "'='"))
			return;
		int col = P->tok.col;
		if (parse_const(P, &v, NULL))
			return;
		if (!(as_double(v) >= 0))
			perr(P, col, 1, "%s must be >= 0", k ? "atol" : "rtol");
		*(k ? &s->atol : &s->rtol) = as_double(v);
		if (is_punct(P, ','))
			lex(P);
	}
	if (!seen[0] && !seen[1])
		perr(P, dir->col, dir->len, "tol needs rtol= and/or atol=");
}

static void dir_expr(parser *P, kb_expr **slot)
{
	kb_expr *e = parse_expr(P);
	if (e && expect_eol(P)) {
		expr_free(e);
		e = NULL;
	}
	*slot = e;
}

static void dir_bytes(parser *P, const tok *dir)
{
	dir_expr(P, &P->spec->bytes);
}

static void dir_flops(parser *P, const tok *dir)
{
	dir_expr(P, &P->spec->flops);
}

/* NAME '=' and a check that NAME has no earlier list in lists[0..n). */
static kb_spec_list *list_head(parser *P, const tok *dir, kb_spec_list **lists, int *n)
{
	tok name;
	if (expect_ident(P, dir->p[0] == 's' ? "the arg to sweep" : "a macro name", &name))
		return NULL;
	for (int i = 0; i < *n; i++) {
		if ((int)strlen((*lists)[i].name) == name.len &&
		    !memcmp((*lists)[i].name, name.p, (size_t)name.len)) {
			perr(P, name.col, name.len, "duplicate %.*s of '%s' (the first is at line %d)",
			     dir->len, dir->p, (*lists)[i].name, (*lists)[i].loc.line);
			return NULL;
		}
	}
	if (expect(P, '=', "'=' and a list of values"))
		return NULL;
	kb_spec_list *l = PUSH1(*lists, *n);
	l->name = kb_xstrndup(name.p, (size_t)name.len);
	l->loc = loc_at(P, name.col);
	return l;
}

static void dir_sweep(parser *P, const tok *dir)
{
	kb_spec_list *l = list_head(P, dir, &P->spec->sweeps, &P->spec->nsweeps);
	while (l) {
		kb_expr *e = parse_expr(P);
		if (!e)
			return;
		*PUSH1(l->values, l->nvalues) = e;
		if (!is_punct(P, ',')) {
			expect_eol(P);
			return;
		}
		lex(P);
	}
}

/* tune values are -D text, split at top-level commas and trimmed. */
static void dir_tune(parser *P, const tok *dir)
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
			perr(P, (int)(start - P->line) + 1, 1, "expected a value for %s", l->name);
			return;
		}
		*PUSH1(l->texts, l->nvalues) = kb_xstrndup(start, (size_t)(end - start));
		if (p >= P->end)
			return;
		p++;
	}
}

/* ===== lines ===== */

static const struct directive {
	const char *name;
	void (*fn)(parser *, const tok *);
	bool once;
} directives[D_COUNT] = {
	[D_KERNEL] = {"kernel", dir_kernel, true}, [D_ARG] = {"arg", dir_arg, false},
	[D_IN] = {"in", dir_in, false}, [D_OUT] = {"out", dir_out, false},
	[D_LAUNCH] = {"launch", dir_launch, true}, [D_REF] = {"ref", dir_ref, true},
	[D_TOL] = {"tol", dir_tol, true}, [D_BYTES] = {"bytes", dir_bytes, true},
	[D_FLOPS] = {"flops", dir_flops, true}, [D_SWEEP] = {"sweep", dir_sweep, false},
	[D_TUNE] = {"tune", dir_tune, false},
};

static void unknown_directive(parser *P, const tok *t)
{
	const char *names[D_COUNT];
	for (int i = 0; i < D_COUNT; i++)
		names[i] = directives[i].name;
	char *word = kb_xstrndup(t->p, (size_t)t->len);
	const char *near = closest(word, names, D_COUNT);
	if (near) {
		perr(P, t->col, t->len, "unknown directive '%s'; did you mean '%s'?", word, near);
	} else {
		char *known = join_names(names, D_COUNT);
		perr(P, t->col, t->len, "unknown directive '%s' (known: %s)", word, known);
		free(known);
	}
	free(word);
}

/* Parses one //! line; p is just after the "//!". */
static void parse_line(parser *P, const char *p)
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
	lex(P);
	if (P->tok.kind == T_EOF)
		return;
	tok dir = P->tok;
	if (dir.kind != T_IDENT) {
		syntax(P, "a directive (kernel, arg, in, out, launch, ref, tol, ...)");
		return;
	}
	for (int i = 0; i < D_COUNT; i++) {
		if (!tok_is(&dir, directives[i].name))
			continue;
		if (directives[i].once && P->first[i]) {
			perr(P, dir.col, dir.len, "duplicate `%s` line (the first is at line %d)",
			     directives[i].name, P->first[i]);
			return;
		}
		P->first[i] = P->lineno;
		lex(P);
		directives[i].fn(P, &dir);
		return;
	}
	unknown_directive(P, &dir);
}

/* ===== checks after all lines: names, then values ===== */

/* Names in e must be args; in an arg's expression (self >= 0), args above it. */
static void check_names(parser *P, const kb_expr *e, int self)
{
	if (!e)
		return;
	check_names(P, e->a, self);
	check_names(P, e->b, self);
	if (e->kind != KB_EX_NAME)
		return;
	const kb_spec *s = P->spec;
	int i = find_arg(s, e->name);
	int line = e->loc.line, col = e->loc.col;
	if (i >= 0 && (self < 0 || i < self))
		return;
	if (i >= 0 && i == self)
		diag_err(P->diags, P->src, line, col, e->len, "arg '%s' refers to itself", e->name);
	else if (i >= 0)
		diag_err(P->diags, P->src, line, col, e->len, "'%s' is used before its `//! arg` "
			 "line (line %d); an arg may use only args above it", e->name,
			 s->args[i].loc.line);
	else if (find_tensor(s, e->name) >= 0)
		diag_err(P->diags, P->src, line, col, e->len, "'%s' is a tensor; expressions may "
			 "use only args", e->name);
	else
		diag_err(P->diags, P->src, line, col, e->len, "undefined name '%s'%s", e->name,
			 s->nargs ? "" : " (no `//! arg` defines it)");
}

static void check_ref_names(parser *P)
{
	const kb_spec *s = P->spec;
	const kb_spec_ref *r = &s->ref;
	if (!r->present || r->is_kernel)
		return;
	for (int i = 0; i < r->nargs; i++) {
		const kb_ref_arg *a = &r->args[i];
		if (a->key || !is_ident_start(a->text[0]) || !strcmp(a->text, "true") ||
		    !strcmp(a->text, "false") || find_tensor(s, a->text) >= 0 || find_arg(s, a->text) >= 0)
			continue;
		diag_err(P->diags, P->src, a->loc.line, a->loc.col, (int)strlen(a->text),
			 "undefined name '%s' in ref (not a tensor or an arg)", a->text);
	}
	for (int i = 0; i < r->nouts; i++) {
		int t = find_tensor(s, r->outs[i]);
		const kb_loc *l = &P->out_locs[i];
		int len = (int)strlen(r->outs[i]);
		if (t < 0)
			diag_err(P->diags, P->src, l->line, l->col, len, "ref output '%s' is not a tensor",
				 r->outs[i]);
		else if (!s->tensors[t].is_out)
			diag_err(P->diags, P->src, l->line, l->col, len, "ref output '%s' is an input; "
				 "declare it with `//! out`", r->outs[i]);
	}
}

static void check_lists(parser *P)
{
	const kb_spec *s = P->spec;
	for (int i = 0; i < s->nsweeps; i++) {
		const kb_spec_list *l = &s->sweeps[i];
		for (int j = 0; j < l->nvalues; j++)
			check_names(P, l->values[j], -1);
		if (find_arg(s, l->name) < 0)
			diag_err(P->diags, P->src, l->loc.line, l->loc.col, (int)strlen(l->name),
				 "sweep of '%s', which is not an arg (sweep changes a `//! arg`; "
				 "use `//! tune` for compile-time macros)", l->name);
	}
	for (int i = 0; i < s->ntunes; i++) {
		const kb_spec_list *l = &s->tunes[i];
		if (find_arg(s, l->name) >= 0 || find_tensor(s, l->name) >= 0)
			diag_err(P->diags, P->src, l->loc.line, l->loc.col, (int)strlen(l->name),
				 "tune of '%s', which is %s; tune sets compile-time macros (use "
				 "`//! sweep` for args)", l->name,
				 find_arg(s, l->name) >= 0 ? "an arg" : "a tensor");
	}
}

static void check_all_names(parser *P)
{
	const kb_spec *s = P->spec;
	for (int i = 0; i < s->nargs; i++)
		check_names(P, s->args[i].expr, i);
	for (int i = 0; i < s->ntensors; i++)
		for (int d = 0; d < s->tensors[i].rank; d++)
			check_names(P, s->tensors[i].dims[d], -1);
	for (int i = 0; i < 3; i++) {
		check_names(P, s->launch.grid[i], -1);
		check_names(P, s->launch.block[i], -1);
	}
	check_names(P, s->launch.smem, -1);
	check_names(P, s->bytes, -1);
	check_names(P, s->flops, -1);
	check_lists(P);
	check_ref_names(P);
}

/* Evaluates e and checks it is an integer >= min; 0, KB_ESPEC or EVAL_SILENT. */
static int eval_int(evalctx *c, const kb_expr *e, const char *what, int64_t min, int64_t *out)
{
	kb_value v;
	int rc = eval(c, e, &v);
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

static void eval_launch(evalctx *c, const kb_spec_launch *l, kb_launch_dims *out, int *rc)
{
	static const char *const gname[] = {"grid.x", "grid.y", "grid.z"};
	static const char *const bname[] = {"block.x", "block.y", "block.z"};
	for (int i = 0; i < 3; i++) {
		int r1 = 0, r2 = 0;
		out->grid[i] = out->block[i] = 1;
		if (i < l->grid_n && l->grid[i])
			r1 = eval_int(c, l->grid[i], gname[i], 1, &out->grid[i]);
		if (i < l->block_n && l->block[i])
			r2 = eval_int(c, l->block[i], bname[i], 1, &out->block[i]);
		*rc = *rc ? *rc : r1 ? r1 : r2;
	}
	out->smem = 0;
	if (l->smem) {
		int r = eval_int(c, l->smem, "smem", 0, &out->smem);
		*rc = *rc ? *rc : r;
	}
}

/* Evaluates every arg (storing value) and every expression once, reporting
 * what cannot be evaluated; undefined names were reported already. */
static void check_values(parser *P)
{
	kb_spec *s = P->spec;
	/* bad[i]: arg i is not (yet) evaluated; an arg that uses a later arg was
	 * reported by check_names and must not report that arg's faults too. */
	bool *bad = kb_xmalloc(((size_t)s->nargs + 1) * sizeof(bool));
	memset(bad, 1, ((size_t)s->nargs + 1) * sizeof(bool));
	evalctx c = {s, P->src, P->diags, bad, true, 0};
	kb_value v;
	for (int i = 0; i < s->nargs; i++) {
		bad[i] = !s->args[i].expr || eval(&c, s->args[i].expr, &v) != 0;
		if (!bad[i])
			s->args[i].value = v;
	}
	for (int i = 0; i < s->ntensors; i++) {
		const kb_spec_tensor *t = &s->tensors[i];
		char what[96];
		int64_t dim;
		for (int d = 0; d < t->rank; d++) {
			snprintf(what, sizeof(what), "dimension %d of '%s'", d, t->name);
			eval_int(&c, t->dims[d], what, 0, &dim);
		}
	}
	kb_launch_dims ld;
	int rc = 0;
	if (s->launch.present)
		eval_launch(&c, &s->launch, &ld, &rc);
	if (s->bytes)
		eval(&c, s->bytes, &v);
	if (s->flops)
		eval(&c, s->flops, &v);
	for (int i = 0; i < s->nsweeps; i++)
		for (int j = 0; j < s->sweeps[i].nvalues; j++)
			eval(&c, s->sweeps[i].values[j], &v);
	free(bad);
}

/* ===== public ===== */

/* Parses every //! line of src into spec (which the caller frees with
 * kb_compile_spec_free whatever the result).  All problems go to diags;
 * returns 0, or KB_ESPEC when any error was added. */
int kb_compile_spec_parse(const kb_source *src, kb_spec *spec, kb_diags *diags)
{
	memset(spec, 0, sizeof(*spec));
	parser P = {.src = src, .spec = spec, .diags = diags};
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
	check_all_names(&P);
	check_values(&P);
	free(P.out_locs);
	/* Sort only what this parse added, so the report reads top to bottom. */
	if (diags->n > first) {
		kb_diags mine = {diags->v + first, diags->n - first, diags->n - first};
		kb_diag_sort(&mine);
	}
	return kb_diag_count(diags, KB_DIAG_ERROR) > errors ? KB_ESPEC : 0;
}

/* Launch geometry evaluated with the current args; dims default to 1 and
 * smem to 0.  Returns 0, or KB_ESPEC with diags (no launch line, a dim that
 * is not a positive integer ...). */
int kb_compile_spec_launch_dims(const kb_spec *spec, const kb_source *src,
				kb_launch_dims *out, kb_diags *diags)
{
	if (!spec->launch.present) {
		diag_err(diags, src, 0, 0, 1, "the spec has no launch line; add "
			 "`//! launch grid=(...) block=(...)`");
		return KB_ESPEC;
	}
	evalctx c = {spec, src, diags, NULL, false, 0};
	int rc = 0;
	eval_launch(&c, &spec->launch, out, &rc);
	return rc ? KB_ESPEC : 0;
}

/* Sets arg `name` to value (sweeps, --arg): its expression becomes the
 * literal and every arg's value is recomputed.  Returns 0 or KB_ENOTFOUND. */
int kb_compile_spec_set_arg(kb_spec *spec, const char *name, kb_value value)
{
	int i = find_arg(spec, name);
	if (i < 0)
		return KB_ENOTFOUND;
	kb_spec_arg *a = &spec->args[i];
	kb_expr *lit = kb_xcalloc(1, sizeof(*lit));
	lit->kind = value.is_float ? KB_EX_FLOAT : KB_EX_INT;
	lit->loc = a->expr ? a->expr->loc : a->loc;
	lit->len = a->expr ? a->expr->len : (int)strlen(a->name);
	lit->ival = value.i;
	lit->fval = value.f;
	expr_free(a->expr);
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
				expr_free(l[i].values[j]);
			if (l[i].texts)
				free(l[i].texts[j]);
		}
		free(l[i].values);
		free(l[i].texts);
	}
	free(l);
}

/* Frees everything spec owns and zeroes it. */
void kb_compile_spec_free(kb_spec *spec)
{
	free(spec->kernel);
	for (int i = 0; i < spec->nargs; i++) {
		free(spec->args[i].name);
		expr_free(spec->args[i].expr);
	}
	free(spec->args);
	for (int i = 0; i < spec->ntensors; i++) {
		free(spec->tensors[i].name);
		for (int d = 0; d < spec->tensors[i].rank; d++)
			expr_free(spec->tensors[i].dims[d]);
		free(spec->tensors[i].init.path);
	}
	free(spec->tensors);
	for (int i = 0; i < 3; i++) {
		expr_free(spec->launch.grid[i]);
		expr_free(spec->launch.block[i]);
	}
	expr_free(spec->launch.smem);
	free(spec->ref.fn);
	for (int i = 0; i < spec->ref.nargs; i++) {
		free(spec->ref.args[i].key);
		free(spec->ref.args[i].text);
	}
	free(spec->ref.args);
	for (int i = 0; i < spec->ref.nouts; i++)
		free(spec->ref.outs[i]);
	free(spec->ref.outs);
	expr_free(spec->bytes);
	expr_free(spec->flops);
	list_free(spec->sweeps, spec->nsweeps);
	list_free(spec->tunes, spec->ntunes);
	memset(spec, 0, sizeof(*spec));
}
