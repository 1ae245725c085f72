/*
 * check_expr.c - the types of the tile DSL's expressions (docs/tile.md):
 * literals, names, unary and binary operators with broadcasting and dtype
 * promotion, compile-time integers folded into cval, and tensor slices
 * with their constant extents, and calls: their arguments here, the rules
 * of each built-in function check_call.c's.  Names in scope are
 * check_scope.c's, statements check.c's.
 *
 * Invariants: every expression the checker reaches gets its type (a
 * scalar when it has an error); is_const only for integers known at
 * compile time, with overflow and division by zero reported, never
 * undefined behaviour; an error is reported once, at the smallest
 * expression that shows it, and an expression over an operand that had an
 * error reports nothing more (the checker returns false up the tree).
 */
#include "tile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_int(kb_tile_dtype d)
{
	return d == KB_TILE_I32 || d == KB_TILE_I64 || d == KB_TILE_U8;
}

static kb_tile__type scalar(kb_tile_dtype d)
{
	kb_tile__type t = {d, 0, {0, 0}};
	return t;
}

#define ERR_AT(C, e, ...) kb_tile__cerr((C), (e)->line, (e)->col, (e)->len, __VA_ARGS__)

/* ===== constants ===== */

/* Folds `a op b` of compile-time integers into e; false after reporting. */
static bool fold(kb_tile__checker *C, kb_tile__expr *e, int op, int64_t a, int64_t b)
{
	int64_t r = 0;
	bool bad = false;
	switch (op) {
	case KB_TOP_ADD: bad = __builtin_add_overflow(a, b, &r); break;
	case KB_TOP_SUB: bad = __builtin_sub_overflow(a, b, &r); break;
	case KB_TOP_MUL: bad = __builtin_mul_overflow(a, b, &r); break;
	case KB_TOP_DIV:
	case KB_TOP_MOD:
		if (b == 0) {
			ERR_AT(C, e, "division by zero in a constant");
			return false;
		}
		bad = a == INT64_MIN && b == -1;
		r = bad ? 0 : op == KB_TOP_DIV ? a / b : a % b;
		break;
	case KB_TOP_SHL:
		bad = b < 0 || b > 62 || (a << b) >> b != a;
		r = bad ? 0 : a << b;
		break;
	case KB_TOP_SHR:
		bad = b < 0 || b > 63;
		r = bad ? 0 : a >> b;
		break;
	case KB_TOP_BAND: r = a & b; break;
	case KB_TOP_BOR: r = a | b; break;
	case KB_TOP_POW:
		r = 1;
		for (int64_t i = 0; i < b && !bad; i++)
			bad = __builtin_mul_overflow(r, a, &r);
		break;
	default:
		return true; /* comparisons and logic: not integers */
	}
	if (bad) {
		ERR_AT(C, e, "integer overflow in a constant");
		return false;
	}
	e->is_const = true;
	e->cval = r;
	return true;
}

/* ===== expressions ===== */

static bool check_name(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__sym *s = kb_tile__lookup(C, e->name);
	if (!s) {
		kb_tile__unknown(C, e);
		return false;
	}
	if (s->bad)
		return false;
	if (C->header && (s->kind == KB_TSYM_VAR || s->kind == KB_TSYM_LOOP)) {
		ERR_AT(C, e, "grid(...) and threads(...) can use sizes, consts and scalar parameters, "
		       "not the variable '%s'", e->name);
		return false;
	}
	switch (s->kind) {
	case KB_TSYM_TENSOR:
		ERR_AT(C, e, "'%s' is a tensor: read it with load(%s[...])", e->name, e->name);
		return false;
	case KB_TSYM_CONST:
		e->is_const = true;
		e->cval = s->cval;
		e->type = scalar(s->cval == (int32_t)s->cval ? KB_TILE_I32 : KB_TILE_I64);
		return true;
	case KB_TSYM_SCALAR:
		e->type = scalar(C->ka->k.params[s->param].dtype);
		return true;
	default:
		e->type = s->type;
		return true;
	}
}

static bool check_unary(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *a = e->args[0];
	if (!kb_tile__check_expr(C, a))
		return false;
	kb_tile__typestr as = kb_tile__type_str(&a->type);
	e->type = a->type;
	if (e->op == '!') {
		if (a->type.dtype != KB_TILE_BOOL) {
			ERR_AT(C, e, "'!' needs a bool, got %s", as.s);
			return false;
		}
		return true;
	}
	if (a->type.dtype == KB_TILE_BOOL) {
		ERR_AT(C, e, "'-' needs a number, got %s", as.s);
		return false;
	}
	e->type.dtype = kb_tile__compute(a->type.dtype);
	if (a->is_const)
		return fold(C, e, KB_TOP_SUB, 0, a->cval);
	return true;
}

/* A float literal (or its negation) beside an f64 value is an f64 literal:
 * 0.7978845608028654 * u keeps its digits when u is f64 (as numpy's and
 * Triton's Python scalars take the tensor's dtype). */
static void widen_literal(kb_tile__expr *e)
{
	if (e->kind == KB_TE_UNARY && e->op == '-')
		widen_literal(e->args[0]);
	if ((e->kind == KB_TE_FLOAT || e->kind == KB_TE_INF ||
	     (e->kind == KB_TE_UNARY && e->op == '-' && e->args[0]->type.dtype == KB_TILE_F64)) &&
	    e->type.dtype == KB_TILE_F32 && !e->type.rank)
		e->type.dtype = KB_TILE_F64;
}

static bool check_binary(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *a = e->args[0], *b = e->args[1];
	bool ok = kb_tile__check_expr(C, a);
	ok = kb_tile__check_expr(C, b) && ok;
	if (!ok || !kb_tile__binary_type(C, e->op, &a->type, &b->type, &e->type, e))
		return false;
	for (int i = 0; i < 2 && e->type.dtype == KB_TILE_F64; i++)
		widen_literal(e->args[i]);
	if (e->op == KB_TOP_POW && is_int(e->type.dtype) && !(b->is_const && b->cval >= 0))
		e->type.dtype = KB_TILE_F32; /* 2 ** n, 2 ** -1: a float, as powf gives */
	if (a->is_const && b->is_const && (e->op != KB_TOP_POW || b->cval >= 0))
		return fold(C, e, e->op, a->cval, b->cval);
	return true;
}

/* load's first argument: a slice, checked as one (never as a value). */
static bool load_slice(kb_tile__checker *C, kb_tile__expr *e)
{
	kb_tile__expr *x = e->args[0];
	int param;
	if (x->kind == KB_TE_SLICE)
		return kb_tile__check_slice(C, x, &param);
	kb_tile__sym *s = x->kind == KB_TE_NAME ? kb_tile__lookup(C, x->name) : NULL;
	if (s && s->kind == KB_TSYM_TENSOR)
		ERR_AT(C, x, "load(%s) needs indices: load(%s[i, c : c + B])", x->name, x->name);
	else
		ERR_AT(C, x, "load reads a slice of a tensor parameter, like load(x[i, c : c + B])");
	return false;
}

/* A call of a built-in function (check_call.c): its arguments, all of them
 * even after one fails, then the function's own rules when every one
 * checked. */
static bool check_call(kb_tile__checker *C, kb_tile__expr *e)
{
	const kb_tile__builtin *b = kb_tile__builtin_of(C, e);
	if (!b)
		return false;
	bool is_load = !strcmp(e->name, "load"), ok = !is_load || load_slice(C, e);
	for (int i = is_load; i < e->nargs; i++)
		ok = kb_tile__check_expr(C, e->args[i]) && ok;
	for (int i = 0; i < e->nkw; i++)
		ok = kb_tile__check_expr(C, e->kwv[i]) && ok;
	return ok && kb_tile__builtin_check(C, e, b);
}

bool kb_tile__check_expr(kb_tile__checker *C, kb_tile__expr *e)
{
	e->is_const = false;
	e->type = scalar(KB_TILE_F32);
	switch (e->kind) {
	case KB_TE_INT:
		e->type = scalar(e->ival == (int32_t)e->ival ? KB_TILE_I32 : KB_TILE_I64);
		e->is_const = true;
		e->cval = e->ival;
		return true;
	case KB_TE_FLOAT:
	case KB_TE_INF:
		return true;
	case KB_TE_BOOL:
		e->type = scalar(KB_TILE_BOOL);
		return true;
	case KB_TE_NAME:
		return check_name(C, e);
	case KB_TE_UNARY:
		return check_unary(C, e);
	case KB_TE_BINARY:
		return check_binary(C, e);
	case KB_TE_CALL:
		return check_call(C, e);
	case KB_TE_SLICE:
		ERR_AT(C, e, "a slice is read with load(%s[...]) and written with store(%s[...], v); "
		       "it is not a value", e->name, e->name);
		return false;
	}
	KB_UNREACHABLE();
}

/* ===== slices ===== */

/* Whether a and b are the same expression (as trees, spaces aside). */
static bool same_expr(const kb_tile__expr *a, const kb_tile__expr *b)
{
	if (a->kind != b->kind || a->op != b->op || a->nargs != b->nargs || a->nkw != b->nkw ||
	    a->kind == KB_TE_SLICE)
		return false;
	if ((a->name || b->name) && (!a->name || !b->name || strcmp(a->name, b->name)))
		return false;
	if (a->ival != b->ival || a->fval != b->fval || a->bval != b->bval)
		return false;
	for (int i = 0; i < a->nargs; i++)
		if (!same_expr(a->args[i], b->args[i]))
			return false;
	for (int i = 0; i < a->nkw; i++)
		if (strcmp(a->kw[i], b->kw[i]) || !same_expr(a->kwv[i], b->kwv[i]))
			return false;
	return true;
}

/* An integer expression as c + sum(coef[i] * atom[i]): atoms are the parts
 * that are not compile-time constants, so `(i + 1) * B - i * B` is B. */
#define LIN_ATOMS 8
typedef struct {
	const kb_tile__expr *atom[LIN_ATOMS];
	int64_t coef[LIN_ATOMS];
	int n;
	int64_t c;
} lin;

static bool lin_add_atom(lin *l, const kb_tile__expr *e, int64_t coef)
{
	for (int i = 0; i < l->n; i++)
		if (same_expr(l->atom[i], e))
			return !__builtin_add_overflow(l->coef[i], coef, &l->coef[i]);
	if (l->n == LIN_ATOMS)
		return false;
	l->atom[l->n] = e;
	l->coef[l->n++] = coef;
	return true;
}

/* l += k * (e as a linear form); false when it does not fit. */
static bool linear(lin *l, const kb_tile__expr *e, int64_t k)
{
	int64_t v;
	if (e->is_const)
		return !__builtin_mul_overflow(e->cval, k, &v) && !__builtin_add_overflow(l->c, v, &l->c);
	if (e->kind == KB_TE_UNARY && e->op == '-')
		return k != INT64_MIN && linear(l, e->args[0], -k);
	if (e->kind == KB_TE_BINARY && (e->op == KB_TOP_ADD || e->op == KB_TOP_SUB))
		return linear(l, e->args[0], k) &&
		       linear(l, e->args[1], e->op == KB_TOP_ADD ? k : -k);
	if (e->kind == KB_TE_BINARY && e->op == KB_TOP_MUL) {
		const kb_tile__expr *c = e->args[0], *x = e->args[1];
		if (!c->is_const) {
			c = e->args[1];
			x = e->args[0];
		}
		if (c->is_const)
			return !__builtin_mul_overflow(c->cval, k, &v) && linear(l, x, v);
	}
	return lin_add_atom(l, e, k);
}

/* hi - lo when it is a compile-time constant. */
static bool const_extent(const kb_tile__expr *lo, const kb_tile__expr *hi, int64_t *ext)
{
	lin l = {.n = 0};
	if (!linear(&l, hi, 1) || !linear(&l, lo, -1))
		return false;
	for (int i = 0; i < l.n; i++)
		if (l.coef[i])
			return false;
	*ext = l.c;
	return true;
}

static bool check_index(kb_tile__checker *C, kb_tile__expr *e)
{
	if (!kb_tile__check_expr(C, e))
		return false;
	if (e->type.rank || !is_int(e->type.dtype)) {
		ERR_AT(C, e, "an index is an integer scalar, got %s", kb_tile__type_str(&e->type).s);
		return false;
	}
	return true;
}

/* One index of a slice; a range's constant extent into ix->extent. */
static bool check_range(kb_tile__checker *C, kb_tile__index *ix)
{
	bool ok = check_index(C, ix->lo);
	if (!ix->hi)
		return ok;
	if (!check_index(C, ix->hi) || !ok)
		return false;
	const kb_tile__expr *lo = ix->lo, *hi = ix->hi;
	int len = hi->line == lo->line ? hi->col + hi->len - lo->col : lo->len;
	int64_t ext;
	if (!const_extent(lo, hi, &ext)) {
		kb_tile__cerr(C, lo->line, lo->col, len, "the extent of a range, hi - lo, must be a "
			      "compile-time constant (write lo : lo + CONST)");
		return false;
	}
	if (ext <= 0 || ext > INT32_MAX) {
		kb_tile__cerr(C, lo->line, lo->col, len, "the range has extent %lld (it must be "
			      "positive)", (long long)ext);
		return false;
	}
	ix->extent = ext;
	return true;
}

static const char *sym_what(kb_tile__symkind k)
{
	static const char *const what[] = {"a tensor", "a scalar parameter", "a size", "a const",
					   "a variable", "a loop variable"};
	return what[k];
}

/* The tensor parameter a slice names, or NULL after reporting. */
static const kb_tile_param *slice_tensor(kb_tile__checker *C, kb_tile__expr *e, int *param)
{
	kb_tile__sym *s = kb_tile__lookup(C, e->name);
	int len = (int)strlen(e->name);
	if (!s) {
		kb_tile__unknown(C, e);
		return NULL;
	}
	if (s->bad)
		return NULL;
	if (s->kind != KB_TSYM_TENSOR) {
		kb_tile__cerr(C, e->line, e->col, len, "'%s' is %s, not a tensor parameter: only "
			      "tensors can be sliced", e->name, sym_what(s->kind));
		return NULL;
	}
	const kb_tile_param *p = &C->ka->k.params[s->param];
	if (e->nidx > p->rank) {
		kb_tile__expr *x = e->idx[p->rank].lo;
		ERR_AT(C, x, "too many indices: %s has %d dim%s, got %d", e->name, p->rank,
		       p->rank == 1 ? "" : "s", e->nidx);
		return NULL;
	}
	if (e->nidx < p->rank) {
		kb_tile__cerr(C, e->line, e->col, e->len, "%s has %d dims: give an index or a range "
			      "for each, got %d", e->name, p->rank, e->nidx);
		return NULL;
	}
	*param = s->param;
	return p;
}

bool kb_tile__check_slice(kb_tile__checker *C, kb_tile__expr *e, int *param)
{
	e->is_const = false;
	e->type = scalar(KB_TILE_F32);
	const kb_tile_param *p = slice_tensor(C, e, param);
	bool ok = p != NULL;
	kb_tile__type t = scalar(p ? p->dtype : KB_TILE_F32);
	for (int i = 0; i < e->nidx; i++) {
		if (!check_range(C, &e->idx[i])) {
			ok = false;
		} else if (e->idx[i].hi && t.rank < 2) {
			t.ext[t.rank++] = e->idx[i].extent;
		}
	}
	e->type = t;
	return ok;
}
