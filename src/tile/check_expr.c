/*
 * check_expr.c - the types of the tile DSL's expressions (docs/tile.md):
 * literals, names, unary and binary operators with broadcasting and dtype
 * promotion, compile-time integers folded into cval, and tensor slices
 * with their constant extents.  Calls are check_call.c's; names, scopes
 * and statements are check.c's.
 *
 * Invariants: every expression the checker reaches gets its type (a
 * scalar when it has an error); is_const only for integers known at
 * compile time, with overflow and division by zero reported, never
 * undefined behaviour; an error is reported once, at the smallest
 * expression that shows it, and an expression over an operand that had an
 * error reports nothing more (the checker returns false up the tree).
 */
#include "tile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== types ===== */

kb_tile__typestr kb_tile__type_str(const kb_tile__type *t)
{
	kb_tile__typestr s;
	const char *d = kb_tile__dtype_str(t->dtype);
	if (t->rank == 0)
		snprintf(s.s, sizeof(s.s), "%s scalar", d);
	else if (t->rank == 1)
		snprintf(s.s, sizeof(s.s), "%s[%lld]", d, (long long)t->ext[0]);
	else
		snprintf(s.s, sizeof(s.s), "%s[%lld, %lld]", d, (long long)t->ext[0],
			 (long long)t->ext[1]);
	return s;
}

bool kb_tile__type_eq(const kb_tile__type *a, const kb_tile__type *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->ext[i] != b->ext[i])
			return false;
	return true;
}

kb_tile_dtype kb_tile__compute(kb_tile_dtype d)
{
	return d == KB_TILE_F16 || d == KB_TILE_BF16 ? KB_TILE_F32 : d == KB_TILE_U8 ? KB_TILE_I32 : d;
}

static bool is_int(kb_tile_dtype d)
{
	return d == KB_TILE_I32 || d == KB_TILE_I64 || d == KB_TILE_U8;
}

kb_tile_dtype kb_tile__promote(kb_tile_dtype a, kb_tile_dtype b)
{
	a = kb_tile__compute(a);
	b = kb_tile__compute(b);
	if (a == KB_TILE_F64 || b == KB_TILE_F64)
		return KB_TILE_F64;
	if (a == KB_TILE_F32 || b == KB_TILE_F32)
		return KB_TILE_F32;
	return a == KB_TILE_I64 || b == KB_TILE_I64 ? KB_TILE_I64 : KB_TILE_I32;
}

bool kb_tile__broadcast(const kb_tile__type *a, const kb_tile__type *b, kb_tile__type *out)
{
	int r = a->rank > b->rank ? a->rank : b->rank;
	int64_t ext[2] = {0, 0};
	for (int i = 0; i < r; i++) { /* i counts dims from the last */
		int64_t ea = i < a->rank ? a->ext[a->rank - 1 - i] : 1;
		int64_t eb = i < b->rank ? b->ext[b->rank - 1 - i] : 1;
		if (ea != eb && ea != 1 && eb != 1)
			return false;
		ext[r - 1 - i] = ea == 1 ? eb : ea;
	}
	out->rank = r;
	out->ext[0] = ext[0];
	out->ext[1] = ext[1];
	return true;
}

bool kb_tile__fits(const kb_tile__type *v, const kb_tile__type *t)
{
	kb_tile__type out;
	if (!kb_tile__broadcast(v, t, &out) || out.rank != t->rank)
		return false;
	for (int i = 0; i < t->rank; i++)
		if (out.ext[i] != t->ext[i])
			return false;
	return true;
}

static kb_tile__type scalar(kb_tile_dtype d)
{
	kb_tile__type t = {d, 0, {0, 0}};
	return t;
}

/* ===== errors ===== */

void kb_tile__cerr(kb_tile__checker *C, int line, int col, int len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = kb_xvasprintf(fmt, ap);
	va_end(ap);
	kb_diag_add(C->diags, KB_DIAG_ERROR, C->f->path, C->f->text, line, col, len, "%s", msg);
	free(msg);
	C->nerr++;
}

#define ERR_AT(C, e, ...) kb_tile__cerr((C), (e)->line, (e)->col, (e)->len, __VA_ARGS__)

/* ===== operators ===== */

static const struct {
	int op;
	const char *s;
} op_names[] = {
	{KB_TOP_ADD, "+"}, {KB_TOP_SUB, "-"},  {KB_TOP_MUL, "*"},  {KB_TOP_DIV, "/"},
	{KB_TOP_MOD, "%"}, {KB_TOP_LT, "<"},   {KB_TOP_GT, ">"},   {KB_TOP_LE, "<="},
	{KB_TOP_GE, ">="}, {KB_TOP_EQ, "=="},  {KB_TOP_NE, "!="},  {KB_TOP_AND, "&&"},
	{KB_TOP_OR, "||"}, {KB_TOP_POW, "**"}, {KB_TOP_SHL, "<<"}, {KB_TOP_SHR, ">>"},
	{KB_TOP_BAND, "&"}, {KB_TOP_BOR, "|"},
};

const char *kb_tile__op_str(int op)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(op_names); i++)
		if (op_names[i].op == op)
			return op_names[i].s;
	return "?";
}

/* The dtype of `a op b` from the operands' dtypes; NULL, or what is wrong. */
static const char *op_dtype(int op, kb_tile_dtype a, kb_tile_dtype b, kb_tile_dtype *out)
{
	bool ab = a == KB_TILE_BOOL, bb = b == KB_TILE_BOOL;
	*out = KB_TILE_BOOL;
	switch (op) {
	case KB_TOP_AND:
	case KB_TOP_OR:
		return ab && bb ? NULL : "bool operands (compare numbers first, as in x != 0)";
	case KB_TOP_EQ:
	case KB_TOP_NE:
		return ab == bb ? NULL : "two numbers or two bools";
	case KB_TOP_LT:
	case KB_TOP_GT:
	case KB_TOP_LE:
	case KB_TOP_GE:
		return !ab && !bb ? NULL : "numbers";
	case KB_TOP_MOD:
	case KB_TOP_SHL:
	case KB_TOP_SHR:
	case KB_TOP_BAND:
	case KB_TOP_BOR:
		if (!is_int(a) || !is_int(b))
			return "integers";
		break;
	case KB_TOP_POW: /* a float unless both are integers (check_binary: b a constant >= 0) */
		if (ab || bb)
			return "numbers";
		*out = kb_tile__promote(a, b);
		return NULL;
	default:
		if (ab || bb)
			return "numbers";
	}
	*out = kb_tile__promote(a, b);
	return NULL;
}

bool kb_tile__binary_type(kb_tile__checker *C, int op, const kb_tile__type *a,
			  const kb_tile__type *b, kb_tile__type *out, const kb_tile__expr *at)
{
	kb_tile__typestr as = kb_tile__type_str(a), bs = kb_tile__type_str(b);
	const char *need = op_dtype(op, a->dtype, b->dtype, &out->dtype);
	if (need) {
		ERR_AT(C, at, "'%s' needs %s, got %s and %s", kb_tile__op_str(op), need, as.s, bs.s);
		return false;
	}
	if (!kb_tile__broadcast(a, b, out)) {
		ERR_AT(C, at, "shape mismatch in '%s': %s and %s (tiles combine where their extents "
		       "are equal or 1)", kb_tile__op_str(op), as.s, bs.s);
		return false;
	}
	return true;
}

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
		return kb_tile__check_call(C, e);
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
