/*
 * check_call.c - the built-in functions of the tile DSL (docs/tile.md):
 * one table of their names, argument counts and keywords, and a checker
 * each (load, arange, zeros, pid, the reductions sum max min, element-wise
 * max min, exp exp2 log sqrt rsqrt abs, where, the casts, dot, cdiv).
 * Statements (store among them) are check.c's.
 *
 * This file only reads what the arguments' checks found: check_expr.c
 * checks a call's arguments (load's slice by check_slice, never as a
 * value), all of them even after one fails, between kb_tile__builtin_of
 * (the name, the place, the argument counts and keywords) and
 * kb_tile__builtin_check (the function's own rules), so the recursion over
 * the tree stays in check_expr.c.
 *
 * Invariants: a call only reports about itself when every argument
 * checked; compile-time integers fold through cdiv, min, max and i32(...).
 */
#include "tile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_AT(C, e, ...) kb_tile__cerr((C), (e)->line, (e)->col, (e)->len, __VA_ARGS__)

static kb_tile__type scalar(kb_tile_dtype d)
{
	kb_tile__type t = {d, 0, {0, 0}};
	return t;
}

static bool is_int(kb_tile_dtype d)
{
	return d == KB_TILE_I32 || d == KB_TILE_I64 || d == KB_TILE_U8;
}

static kb_tile__expr *kwarg(const kb_tile__expr *e, const char *name)
{
	for (int i = 0; i < e->nkw; i++)
		if (!strcmp(e->kw[i], name))
			return e->kwv[i];
	return NULL;
}

/* Whether checked e is a compile-time integer in [lo, hi], into *v. */
static bool need_const(kb_tile__checker *C, const kb_tile__expr *e, const char *what, int64_t lo,
		       int64_t hi, int64_t *v)
{
	if (!e->is_const) {
		ERR_AT(C, e, "%s must be a compile-time integer, got %s%s", what,
		       kb_tile__type_str(&e->type).s, is_int(e->type.dtype) && !e->type.rank ?
		       " known only at run time" : "");
		return false;
	}
	if (e->cval < lo || e->cval > hi) {
		ERR_AT(C, e, "%s must be from %lld to %lld, got %lld", what, (long long)lo,
		       (long long)hi, (long long)e->cval);
		return false;
	}
	*v = e->cval;
	return true;
}

static bool need_number(kb_tile__checker *C, const kb_tile__expr *e, const char *fn)
{
	if (e->type.dtype != KB_TILE_BOOL)
		return true;
	ERR_AT(C, e, "%s needs a number, got %s", fn, kb_tile__type_str(&e->type).s);
	return false;
}

/* ===== load, arange, zeros, pid ===== */

static bool check_load(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__type t = e->args[0]->type;
	kb_tile__expr *other = kwarg(e, "other"), *mask = kwarg(e, "mask");
	bool ok = true;
	if (other && (other->type.rank || other->type.dtype == KB_TILE_BOOL)) {
		ERR_AT(C, other, "other= is the number that elements outside the tensor read as: a "
		       "scalar, got %s", kb_tile__type_str(&other->type).s);
		ok = false;
	}
	if (mask && (mask->type.dtype != KB_TILE_BOOL || !kb_tile__fits(&mask->type, &t))) {
		ERR_AT(C, mask, "mask= must be bool of the slice's shape (%s), got %s",
		       kb_tile__type_str(&t).s, kb_tile__type_str(&mask->type).s);
		ok = false;
	}
	e->type = t;
	return ok;
}

static bool check_arange(kb_tile__checker *C, kb_tile__expr *e)
{
	int64_t n;
	if (!need_const(C, e->args[0], "the length of arange", 1, INT32_MAX, &n))
		return false;
	e->type = (kb_tile__type){KB_TILE_I32, 1, {n, 0}};
	const kb_tile__expr *ax = kwarg(e, "axis"); /* along axis 0: [n, 1], a row index; 1: [1, n] */
	int64_t a;
	if (ax && !need_const(C, ax, "the axis of arange", 0, 1, &a))
		return false;
	if (ax)
		e->type = (kb_tile__type){KB_TILE_I32, 2, {a ? 1 : n, a ? n : 1}};
	return true;
}

static bool check_zeros(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__type t = {KB_TILE_F32, e->nargs, {0, 0}};
	for (int i = 0; i < e->nargs; i++)
		if (!need_const(C, e->args[i], "an extent of zeros", 1, INT32_MAX, &t.ext[i]))
			return false;
	e->type = t;
	return true;
}

static bool check_pid(kb_tile__checker *C, kb_tile__expr *e)
{
	int64_t axis;
	if (!need_const(C, e->args[0], "the axis of pid", 0, 2, &axis))
		return false;
	int n = 0;
	while (n < 3 && C->ka->grid[n])
		n++;
	if (n && axis >= n) {
		ERR_AT(C, e->args[0], "pid(%lld): grid(...) of kernel %s has %d ax%s", (long long)axis,
		       C->ka->k.name, n, n == 1 ? "is" : "es");
		return false;
	}
	e->type = scalar(KB_TILE_I32);
	return true;
}

/* ===== reductions and element-wise math ===== */

/* max(a, b), min(a, b): element-wise, folded when both are constants. */
static bool check_minmax2(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *a = e->args[0], *b = e->args[1];
	if (!need_number(C, a, e->name) || !need_number(C, b, e->name))
		return false;
	if (!kb_tile__broadcast(&a->type, &b->type, &e->type)) {
		ERR_AT(C, e, "shape mismatch in %s: %s and %s (tiles combine where their extents are "
		       "equal or 1)", e->name, kb_tile__type_str(&a->type).s,
		       kb_tile__type_str(&b->type).s);
		return false;
	}
	e->type.dtype = kb_tile__promote(a->type.dtype, b->type.dtype);
	if (a->is_const && b->is_const) {
		bool mx = !strcmp(e->name, "max");
		e->is_const = true;
		e->cval = (a->cval > b->cval) == mx ? a->cval : b->cval;
	}
	return true;
}

/* sum, max, min of a tile: all of a rank-1 one, or along an axis. */
static bool check_reduce(kb_tile__checker *C, kb_tile__expr *e)
{
	bool is_sum = !strcmp(e->name, "sum");
	kb_tile__expr *ax = kwarg(e, "axis"), *t = e->args[0];
	if (!is_sum && e->nargs == 2 && !ax)
		return check_minmax2(C, e);
	if (e->nargs == 2 && ax) {
		ERR_AT(C, ax, is_sum ? "sum's axis is given twice" : "%s(a, b) is element-wise and "
		       "takes no axis", e->name);
		return false;
	}
	if (e->nargs == 2)
		ax = e->args[1];
	if (!need_number(C, t, e->name))
		return false;
	if (t->type.rank == 0) {
		ERR_AT(C, t, "%s reduces a tile, got %s", e->name, kb_tile__type_str(&t->type).s);
		return false;
	}
	kb_tile_dtype d = kb_tile__compute(t->type.dtype);
	int64_t axis;
	if (!ax) {
		if (t->type.rank == 2) {
			ERR_AT(C, e, "%s of a 2-d tile needs an axis: %s(t, axis = 0) or %s(t, axis = 1)",
			       e->name, e->name, e->name);
			return false;
		}
		e->type = scalar(d);
		return true;
	}
	if (!need_const(C, ax, "the axis", 0, 1, &axis))
		return false;
	if (t->type.rank != 2) {
		ERR_AT(C, ax, "an axis is for a 2-d tile, and this one is %s",
		       kb_tile__type_str(&t->type).s);
		return false;
	}
	kb_tile__expr *keep = kwarg(e, "keep");
	if (keep && keep->kind != KB_TE_BOOL) {
		ERR_AT(C, keep, "keep= is true or false (a literal), got %s",
		       kb_tile__type_str(&keep->type).s);
		return false;
	}
	e->type = (kb_tile__type){d, 1, {t->type.ext[1 - axis], 0}};
	if (keep && keep->bval) /* [R, 1] or [1, C]: broadcasts against the tile */
		e->type = (kb_tile__type){d, 2, {axis ? t->type.ext[0] : 1, axis ? 1 : t->type.ext[1]}};
	return true;
}

/* The element-wise math (float results; abs, floor and ceil keep an
 * integer an integer); exact = true (exp, sigmoid) or exact = false (tanh)
 * is a bool literal. */
static bool check_math(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *x = e->args[0], *exact = kwarg(e, "exact");
	if (!need_number(C, x, e->name))
		return false;
	if (exact && exact->kind != KB_TE_BOOL) {
		ERR_AT(C, exact, "exact= is true or false (a literal), got %s",
		       kb_tile__type_str(&exact->type).s);
		return false;
	}
	e->type = x->type;
	e->type.dtype = kb_tile__compute(x->type.dtype);
	bool keeps_int = !strcmp(e->name, "abs") || !strcmp(e->name, "floor") ||
			 !strcmp(e->name, "ceil");
	if (!keeps_int && is_int(e->type.dtype))
		e->type.dtype = KB_TILE_F32;
	return true;
}

/* pow(a, b): the same as a ** b. */
static bool check_pow(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *a = e->args[0], *b = e->args[1];
	if (!kb_tile__binary_type(C, KB_TOP_POW, &a->type, &b->type, &e->type, e))
		return false;
	if (is_int(e->type.dtype) && !(b->is_const && b->cval >= 0))
		e->type.dtype = KB_TILE_F32;
	return true;
}

static bool check_where(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *c = e->args[0], *a = e->args[1], *b = e->args[2];
	if (c->type.dtype != KB_TILE_BOOL) {
		ERR_AT(C, c, "the condition of where must be bool, got %s",
		       kb_tile__type_str(&c->type).s);
		return false;
	}
	bool ab = a->type.dtype == KB_TILE_BOOL, bb = b->type.dtype == KB_TILE_BOOL;
	if (ab != bb) {
		ERR_AT(C, e, "where(c, a, b) needs two numbers or two bools, got %s and %s",
		       kb_tile__type_str(&a->type).s, kb_tile__type_str(&b->type).s);
		return false;
	}
	kb_tile__type ca;
	if (!kb_tile__broadcast(&c->type, &a->type, &ca) ||
	    !kb_tile__broadcast(&ca, &b->type, &e->type)) {
		ERR_AT(C, e, "shape mismatch in where: %s, %s and %s", kb_tile__type_str(&c->type).s,
		       kb_tile__type_str(&a->type).s, kb_tile__type_str(&b->type).s);
		return false;
	}
	e->type.dtype = ab ? KB_TILE_BOOL : kb_tile__promote(a->type.dtype, b->type.dtype);
	return true;
}

static bool check_cast(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *x = e->args[0];
	kb_tile_dtype d;
	kb_tile__dtype_from(e->name, (int)strlen(e->name), &d);
	e->type = x->type;
	e->type.dtype = d;
	if (d == KB_TILE_I32 && x->is_const && x->cval == (int32_t)x->cval) {
		e->is_const = true;
		e->cval = x->cval;
	}
	return true;
}

/* trans(t): the [C, R] transpose of an [R, C] tile. */
static bool check_trans(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *t = e->args[0];
	if (t->type.rank != 2) {
		ERR_AT(C, t, "trans takes a 2-d tile, got %s", kb_tile__type_str(&t->type).s);
		return false;
	}
	e->type = t->type;
	e->type.ext[0] = t->type.ext[1];
	e->type.ext[1] = t->type.ext[0];
	return true;
}

/* ===== dot, cdiv ===== */

static bool dot_operand(kb_tile__checker *C, const kb_tile__expr *x)
{
	kb_tile__typestr s = kb_tile__type_str(&x->type);
	if (x->type.rank != 2) {
		ERR_AT(C, x, "dot multiplies 2-d tiles, got %s", s.s);
		return false;
	}
	if (x->type.dtype != KB_TILE_F16 && x->type.dtype != KB_TILE_BF16) {
		ERR_AT(C, x, "dot takes f16 or bf16 tiles, got %s (cast it: bf16(...))", s.s);
		return false;
	}
	return true;
}

static bool check_dot(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *a = e->args[0], *b = e->args[1];
	bool ok = dot_operand(C, a);
	if (!dot_operand(C, b) || !ok)
		return false;
	kb_tile__typestr as = kb_tile__type_str(&a->type), bs = kb_tile__type_str(&b->type);
	if (a->type.dtype != b->type.dtype) {
		ERR_AT(C, e, "dot of %s and %s: both must have the same dtype", as.s, bs.s);
		return false;
	}
	if (a->type.ext[1] != b->type.ext[0]) {
		ERR_AT(C, e, "dot of %s and %s: the inner extents differ (%lld and %lld)", as.s, bs.s,
		       (long long)a->type.ext[1], (long long)b->type.ext[0]);
		return false;
	}
	e->type = (kb_tile__type){KB_TILE_F32, 2, {a->type.ext[0], b->type.ext[1]}};
	return true;
}

static bool check_cdiv(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *a = e->args[0], *b = e->args[1];
	for (int i = 0; i < 2; i++) {
		kb_tile__expr *x = e->args[i];
		if (x->type.rank || !is_int(x->type.dtype)) {
			ERR_AT(C, x, "cdiv takes integer scalars, got %s", kb_tile__type_str(&x->type).s);
			return false;
		}
	}
	e->type = scalar(kb_tile__promote(a->type.dtype, b->type.dtype));
	if (!a->is_const || !b->is_const)
		return true;
	if (b->cval <= 0 || a->cval < 0) {
		ERR_AT(C, e, "cdiv(%lld, %lld): cdiv takes a >= 0 and b > 0", (long long)a->cval,
		       (long long)b->cval);
		return false;
	}
	e->is_const = true;
	e->cval = a->cval / b->cval + (a->cval % b->cval != 0);
	return true;
}

/* ===== the table ===== */

typedef bool (*call_fn)(kb_tile__checker *C, kb_tile__expr *e);

static const struct kb_tile__builtin {
	const char *name;
	int min, max;     /* positional arguments */
	const char *kws;  /* keyword arguments, space-separated */
	call_fn fn;
	const char *usage;
} builtins[] = {
	{"load", 1, 1, "other mask", check_load, "load(x[i, c : c + B], other = V, mask = M)"},
	{"arange", 1, 1, "axis", check_arange, "arange(N) or arange(N, axis = A)"},
	{"zeros", 1, 2, "", check_zeros, "zeros(M) or zeros(M, N)"},
	{"pid", 1, 1, "", check_pid, "pid(axis)"},
	{"sum", 1, 2, "axis keep", check_reduce, "sum(t), sum(t, axis) or sum(t, axis, keep = true)"},
	{"max", 1, 2, "axis keep", check_reduce, "max(t), max(t, axis = A[, keep = true]) or max(a, b)"},
	{"min", 1, 2, "axis keep", check_reduce, "min(t), min(t, axis = A[, keep = true]) or min(a, b)"},
	{"exp", 1, 1, "exact", check_math, "exp(x) or exp(x, exact = true)"},
	{"exp2", 1, 1, "", check_math, "exp2(x)"},
	{"log", 1, 1, "", check_math, "log(x)"},
	{"sqrt", 1, 1, "", check_math, "sqrt(x)"},
	{"rsqrt", 1, 1, "", check_math, "rsqrt(x)"},
	{"abs", 1, 1, "", check_math, "abs(x)"},
	{"tanh", 1, 1, "exact", check_math, "tanh(x) or tanh(x, exact = false)"},
	{"erf", 1, 1, "", check_math, "erf(x)"},
	{"sigmoid", 1, 1, "exact", check_math, "sigmoid(x) or sigmoid(x, exact = true)"},
	{"sin", 1, 1, "", check_math, "sin(x)"},
	{"cos", 1, 1, "", check_math, "cos(x)"},
	{"log1p", 1, 1, "", check_math, "log1p(x)"},
	{"expm1", 1, 1, "", check_math, "expm1(x)"},
	{"floor", 1, 1, "", check_math, "floor(x)"},
	{"ceil", 1, 1, "", check_math, "ceil(x)"},
	{"pow", 2, 2, "", check_pow, "pow(a, b), the same as a ** b"},
	{"where", 3, 3, "", check_where, "where(c, a, b)"},
	{"f32", 1, 1, "", check_cast, "f32(x)"},
	{"f16", 1, 1, "", check_cast, "f16(x)"},
	{"bf16", 1, 1, "", check_cast, "bf16(x)"},
	{"i32", 1, 1, "", check_cast, "i32(x)"},
	{"f64", 1, 1, "", check_cast, "f64(x)"},
	{"trans", 1, 1, "", check_trans, "trans(t)"},
	{"dot", 2, 2, "", check_dot, "dot(a, b)"},
	{"cdiv", 2, 2, "", check_cdiv, "cdiv(a, b)"},
};

bool kb_tile__is_builtin(const char *s, size_t n)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(builtins); i++)
		if (strlen(builtins[i].name) == n && !memcmp(builtins[i].name, s, n))
			return true;
	return false;
}

static bool has_word(const char *words, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = words; (p = strstr(p, w)); p += n)
		if ((p == words || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/* The argument counts and keywords of a call; false after reporting. */
static bool arity(kb_tile__checker *C, const kb_tile__expr *e, const struct kb_tile__builtin *b)
{
	if (e->nargs < b->min || e->nargs > b->max) {
		char want[32];
		snprintf(want, sizeof(want), b->min == b->max ? "%d" : "%d or %d", b->min, b->max);
		ERR_AT(C, e, "%s takes %s argument%s, got %d (%s)", b->name, want,
		       b->max == 1 ? "" : "s", e->nargs, b->usage);
		return false;
	}
	for (int i = 0; i < e->nkw; i++)
		if (!has_word(b->kws, e->kw[i])) {
			ERR_AT(C, e->kwv[i], "%s has no argument %s= (%s)", b->name, e->kw[i], b->usage);
			return false;
		}
	return true;
}

/* A call of something that is not a built-in function. */
static bool not_builtin(kb_tile__checker *C, const kb_tile__expr *e)
{
	int len = (int)strlen(e->name);
	kb_tile__sym *s = kb_tile__lookup(C, e->name);
	if (!strcmp(e->name, "store") || !strcmp(e->name, "range") || !strcmp(e->name, "atomic_add") ||
	    !strcmp(e->name, "atomic_max")) {
		kb_tile__cerr(C, e->line, e->col, len, "%s(...) is not a value: it is only a %s",
			      e->name, e->name[0] != 'r' ? "statement" : "for loop's bounds");
		return false;
	}
	if (s) {
		kb_tile__cerr(C, e->line, e->col, len, "'%s' is not a function", e->name);
		return false;
	}
	const char *names[KB_ARRAY_LEN(builtins)];
	for (size_t i = 0; i < KB_ARRAY_LEN(builtins); i++)
		names[i] = builtins[i].name;
	const char *near[3];
	int nnear = kb_tile__close_words(e->name, names, (int)KB_ARRAY_LEN(builtins), near, 3);
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "unknown function '%s'", e->name);
	for (int i = 0; i < nnear; i++)
		kb_buf_catf(&b, "%s'%s'", i == 0 ? " (did you mean " : i == nnear - 1 ? " or " : ", ",
			    near[i]);
	kb_buf_cat(&b, nnear ? "?); the functions are" : "; the functions are");
	for (size_t i = 0; i < KB_ARRAY_LEN(builtins); i++)
		kb_buf_catf(&b, " %s", builtins[i].name);
	kb_buf_cat(&b, ", and the statements store atomic_add atomic_max");
	kb_tile__cerr(C, e->line, e->col, len, "%s", b.s);
	kb_buf_free(&b);
	return false;
}

const kb_tile__builtin *kb_tile__builtin_of(kb_tile__checker *C, const kb_tile__expr *e)
{
	const struct kb_tile__builtin *b = NULL;
	for (size_t i = 0; i < KB_ARRAY_LEN(builtins) && !b; i++)
		if (!strcmp(builtins[i].name, e->name))
			b = &builtins[i];
	if (!b) {
		not_builtin(C, e);
		return NULL;
	}
	if (C->header && b->fn != check_cdiv && strcmp(b->name, "max") && strcmp(b->name, "min")) {
		ERR_AT(C, e, "grid(...) and threads(...) can use cdiv, min and max, not %s", e->name);
		return NULL;
	}
	return arity(C, e, b) ? b : NULL;
}

bool kb_tile__builtin_check(kb_tile__checker *C, kb_tile__expr *e, const kb_tile__builtin *b)
{
	return b->fn(C, e);
}
