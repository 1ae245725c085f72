/*
 * lower_expr.c - element-wise expressions of a tile program as C
 * expressions of a slot index: names, literals, operators, calls (exp, max,
 * where, casts ...), and the values lower_value.c materialized before the
 * statement, read at the slot.  lower.c owns the state; lower_value.c the
 * loads, reductions and stores.
 */
#include "tile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== element-wise expressions ===== */

const kb_tile__mat *kb_tile__mat_of(const kb_tile__lw *L, const kb_tile__expr *e)
{
	for (int k = 0; k < L->nmats; k++)
		if (L->mats[k].e == e)
			return &L->mats[k];
	return NULL;
}

void kb_tile__add_mat(kb_tile__lw *L, const kb_tile__expr *e, char *c, bool cols)
{
	kb_tile__mat *m = KB_PUSH(L->mats, L->nmats, L->capmats);
	m->e = e;
	m->c = c;
	m->cols = cols;
	m->stream = false;
	m->tile2 = false;
}

static void literal(const kb_tile__expr *e, kb_buf *b)
{
	bool f64 = e->type.dtype == KB_TILE_F64;
	switch (e->kind) {
	case KB_TE_INT:
		if (kb_tile__is_float(e->type.dtype))
			kb_buf_catf(b, "%lld.0%s", (long long)e->ival, f64 ? "" : "f");
		else
			kb_buf_catf(b, "%lld", (long long)e->ival);
		break;
	case KB_TE_FLOAT: {
		char num[40];
		snprintf(num, sizeof num, f64 ? "%.17g" : "%.9g", e->fval);
		bool point = strpbrk(num, ".eEn") != NULL; /* "0" must read as a float: "0.0f" */
		kb_buf_catf(b, "%s%s%s", num, point ? "" : ".0", f64 ? "" : "f");
		break;
	}
	case KB_TE_BOOL: kb_buf_cat(b, e->bval ? "true" : "false"); break;
	default: kb_buf_cat(b, f64 ? "CUDART_INF" : "CUDART_INF_F"); break;
	}
}

static void name_ref(kb_tile__lw *L, const kb_tile__expr *e, const char *i, kb_buf *b)
{
	const kb_tile__lsym *s = kb_tile__lw_lookup(L, e->name);
	if (s && s->stream) { /* read a group at a time by this statement's group loop */
		for (int k = 0; k < L->nstrs; k++)
			if (L->strs[k].load == s->stream) {
				kb_buf_catf(b, "%s[j_]", L->strs[k].c);
				return;
			}
		kb_tile__fail(L, e->line, e->col, e->len, "this use of a streamed load");
		return;
	}
	if (s) {
		kb_buf_catf(b, s->type.rank ? "%s[%s]" : "%s", s->c, i);
		return;
	}
	/* a const, a size, a scalar parameter: a top-level const named here is
	 * declared before the body (lower.c) */
	for (int k = 0; k < L->k->nbody; k++)
		if (L->k->body[k]->kind == KB_TS_CONST && !strcmp(L->k->body[k]->name, e->name))
			L->k->body[k]->named = true;
	kb_buf_cat(b, e->name);
}

static const char *binop(int op)
{
	switch (op) {
	case KB_TOP_LE: return "<=";
	case KB_TOP_GE: return ">=";
	case KB_TOP_EQ: return "==";
	case KB_TOP_NE: return "!=";
	case KB_TOP_AND: return "&&";
	case KB_TOP_OR: return "||";
	case KB_TOP_SHL: return "<<";
	case KB_TOP_SHR: return ">>";
	default: return NULL;
	}
}

/* The element-wise math functions: their C form for f32 (the default;
 * exp's is the approximate __expf), for f32 with exact = true, for f64;
 * an integer keeps abs, floor and ceil as integers.  docs/tile.md lists
 * which are approximate. */
static const struct {
	const char *dsl, *f32, *exact, *f64, *i;
} math_fns[] = {
	{"exp", "__expf", "expf", "exp", NULL},     {"exp2", "exp2f", "exp2f", "exp2", NULL},
	{"log", "logf", "logf", "log", NULL},       {"sqrt", "sqrtf", "sqrtf", "sqrt", NULL},
	{"rsqrt", "rsqrtf", "rsqrtf", "rsqrt", NULL}, {"abs", "fabsf", "fabsf", "fabs", "abs"},
	{"tanh", "tanhf", "tanhf", "tanh", NULL},   {"erf", "erff", "erff", "erf", NULL},
	{"sin", "sinf", "sinf", "sin", NULL},       {"cos", "cosf", "cosf", "cos", NULL},
	{"log1p", "log1pf", "log1pf", "log1p", NULL}, {"expm1", "expm1f", "expm1f", "expm1", NULL},
	{"floor", "floorf", "floorf", "floor", ""}, {"ceil", "ceilf", "ceilf", "ceil", ""},
	{"sigmoid", "__expf", "expf", "exp", NULL}, /* 1 / (1 + exp(-x)) */
};

/* Whether call e has `exact = true`. */
static bool exact_of(const kb_tile__expr *e)
{
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "exact"))
			return e->kwv[k]->kind == KB_TE_BOOL && e->kwv[k]->bval;
	return false;
}

/* The C function of an element-wise math call e on dtype t ("" for the
 * value as it is), or NULL. */
static const char *math_fn(const kb_tile__expr *e, kb_tile_dtype t)
{
	for (size_t k = 0; k < KB_ARRAY_LEN(math_fns); k++)
		if (!strcmp(e->name, math_fns[k].dsl)) {
			if (t == KB_TILE_F64)
				return math_fns[k].f64;
			if (!kb_tile__is_float(t))
				return math_fns[k].i;
			return exact_of(e) ? math_fns[k].exact : math_fns[k].f32;
		}
	return NULL;
}

/* a ** b: a product for a constant exponent from 0 to 8 (1 / a for -1),
 * else powf (pow for f64). */
static void power(kb_tile__lw *L, const kb_tile__expr *e, const char *i, kb_buf *b)
{
	const kb_tile__expr *x = e->args[0], *n = e->args[1];
	kb_tile_dtype t = e->type.dtype;
	const char *ct = kb_tile__ctype(t);
	if (n->is_const && n->cval >= -1 && n->cval <= 8) {
		kb_buf_catf(b, n->cval == -1 ? "((%s)1 / " : "((%s)1", ct);
		for (int64_t k = 0; k < (n->cval < 0 ? 1 : n->cval); k++) {
			kb_buf_catf(b, n->cval < 0 ? "(%s)(" : " * (%s)(", ct);
			kb_tile__cexpr(L, x, i, b);
			kb_buf_cat(b, ")");
		}
		kb_buf_cat(b, ")");
		return;
	}
	kb_buf_catf(b, "%s((%s)(", t == KB_TILE_F64 ? "pow" : "powf", ct);
	kb_tile__cexpr(L, x, i, b);
	kb_buf_catf(b, "), (%s)(", ct);
	kb_tile__cexpr(L, n, i, b);
	kb_buf_cat(b, "))");
}

/* max or min of dtype t in C: fmaxf / fmax / max. */
const char *kb_tile__minmax(const char *name, kb_tile_dtype t)
{
	bool mx = !strcmp(name, "max");
	if (t == KB_TILE_F64)
		return mx ? "fmax" : "fmin";
	if (kb_tile__is_float(t))
		return mx ? "fmaxf" : "fminf";
	return mx ? "max" : "min";
}

static void call(kb_tile__lw *L, const kb_tile__expr *e, const char *i, kb_buf *b)
{
	const char *fn = math_fn(e, e->type.dtype);
	if (fn && e->nargs == 1 && !strcmp(e->name, "sigmoid")) {
		bool f64 = e->type.dtype == KB_TILE_F64;
		kb_buf_catf(b, f64 ? "(1.0 / (1.0 + %s(-(" : "(1.0f / (1.0f + %s(-(", fn);
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, "))))");
	} else if (fn && e->nargs == 1) {
		kb_buf_catf(b, "%s(", fn);
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, ")");
	} else if ((!strcmp(e->name, "max") || !strcmp(e->name, "min")) && e->nargs == 2) {
		kb_buf_catf(b, "%s(", kb_tile__minmax(e->name, e->type.dtype));
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, ", ");
		kb_tile__cexpr(L, e->args[1], i, b);
		kb_buf_cat(b, ")");
	} else if (!strcmp(e->name, "pow") && e->nargs == 2) {
		power(L, e, i, b);
	} else if (!strcmp(e->name, "where") && e->nargs == 3) {
		kb_buf_cat(b, "(");
		for (int k = 0; k < 3; k++) {
			kb_buf_cat(b, k == 1 ? " ? " : k == 2 ? " : " : "");
			kb_tile__cexpr(L, e->args[k], i, b);
		}
		kb_buf_cat(b, ")");
	} else if (!strcmp(e->name, "pid")) {
		kb_buf_catf(b, "(int)blockIdx.%c", "xyz"[e->args[0]->cval % 3]);
	} else if (!strcmp(e->name, "zeros")) {
		kb_buf_cat(b, "0.0f");
	} else if (!strcmp(e->name, "arange")) {
		kb_tile__cat_el(L, b, i);
	} else if (!strcmp(e->name, "bf16") || !strcmp(e->name, "f16")) {
		bool h = !strcmp(e->name, "f16"); /* a value rounded to the narrow type */
		kb_buf_catf(b, h ? "__half2float(__float2half_rn(" : "__bfloat162float(__float2bfloat16_rn(");
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, "))");
	} else if (!strcmp(e->name, "f32") || !strcmp(e->name, "i32") || !strcmp(e->name, "f64")) {
		kb_buf_catf(b, "(%s)(", kb_tile__ctype(e->type.dtype));
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, ")");
	} else if (!strcmp(e->name, "cdiv") && e->nargs == 2) {
		kb_buf_cat(b, "((");
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, ") + (");
		kb_tile__cexpr(L, e->args[1], i, b);
		kb_buf_cat(b, ") - 1) / (");
		kb_tile__cexpr(L, e->args[1], i, b);
		kb_buf_cat(b, ")");
	} else if (!strcmp(e->name, "sum") || !strcmp(e->name, "max") || !strcmp(e->name, "min")) {
		kb_tile__fail(L, e->line, e->col, e->len, "a reduction along an axis");
	} else {
		kb_tile__fail(L, e->line, e->col, e->len, e->name);
	}
}

/* e as a C expression of slot i (tiles indexed by i, scalars as they are). */
void kb_tile__cexpr(kb_tile__lw *L, const kb_tile__expr *e, const char *i, kb_buf *b)
{
	const kb_tile__mat *m = kb_tile__mat_of(L, e);
	if (m && m->stream) /* read a group at a time: group k_'s element j_ */
		kb_buf_catf(b, "%s[j_]", m->c);
	else if (m && m->cols) /* slot i of the mma layout is at column pair (i / 4 % NT, i % 2) */
		kb_buf_catf(b, "%s[(%s) / 4 %% %d * 2 + (%s) %% 2]", m->c, i, L->mma.NT, i);
	else if (m && m->tile2)
		kb_tile__mma_read2(L, e, m->c, i, b);
	else if (m)
		kb_buf_catf(b, e->type.rank ? "%s[%s]" : "%s", m->c, i);
	if (m)
		return;
	if (e->is_const && !kb_tile__is_float(e->type.dtype) && e->kind != KB_TE_NAME) {
		kb_buf_catf(b, "%lld", (long long)e->cval);
		return;
	}
	switch (e->kind) {
	case KB_TE_INT: case KB_TE_FLOAT: case KB_TE_BOOL: case KB_TE_INF:
		literal(e, b);
		break;
	case KB_TE_NAME:
		name_ref(L, e, i, b);
		break;
	case KB_TE_UNARY:
		kb_buf_catf(b, "%c(", e->op);
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, ")");
		break;
	case KB_TE_BINARY: {
		const char *op = binop(e->op);
		if (e->op == KB_TOP_POW) {
			power(L, e, i, b);
			break;
		}
		if (e->op == KB_TOP_DIV && e->type.rank > 0 && e->args[1]->type.rank == 0 &&
		    e->type.dtype != KB_TILE_F64 && e->args[1]->type.dtype != KB_TILE_F64) {
			/* A tile over a scalar: times its reciprocal, which the compiler
			 * computes once for the whole unrolled tile (a division per
			 * element costs more than a bf16 row's memory time). */
			kb_buf_cat(b, "(");
			kb_tile__cexpr(L, e->args[0], i, b);
			kb_buf_cat(b, " * (1.0f / ");
			kb_tile__cexpr(L, e->args[1], i, b);
			kb_buf_cat(b, "))");
			break;
		}
		kb_buf_cat(b, "(");
		kb_tile__cexpr(L, e->args[0], i, b);
		if (op)
			kb_buf_catf(b, " %s ", op);
		else
			kb_buf_catf(b, " %c ", e->op);
		kb_tile__cexpr(L, e->args[1], i, b);
		kb_buf_cat(b, ")");
		break;
	}
	case KB_TE_CALL:
		call(L, e, i, b);
		break;
	default:
		kb_tile__fail(L, e->line, e->col, e->len, "a slice outside load and store");
	}
}

