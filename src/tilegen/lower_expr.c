/*
 * lower_expr.c - the floor of the lowering, which every other lower_*.c and
 * plan_dot.c builds on and which calls none of them: the lowering's state
 * (names in scope, temporaries, an error at a place, indentation and
 * #line), the C types of dtypes, the slots of the layouts (lower.c
 * explains the rank-1 layout, lower_dot.c the mma one), and element-wise
 * expressions as C expressions of a slot index: names, literals,
 * operators, calls (exp, max, where, casts ...), and the values
 * materialized before the statement (loads, reductions: lower_load.c,
 * lower_reduce.c), read at the slot.
 */
#include "tilegen_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== state and names ===== */

void kb_tile__fail(kb_tile__lw *L, int line, int col, int len, const char *what)
{
	kb_diag_add(L->diags, KB_DIAG_ERROR, L->f->path, L->f->text, line, col, len > 0 ? len : 1,
		    "%s is not supported yet by the tile compiler's lowering", what);
	L->errors++;
}

void kb_tile__ind(kb_tile__lw *L)
{
	for (int i = 0; i < L->depth; i++)
		kb_buf_catc(L->o, '\t');
}

void kb_tile__line_of(kb_tile__lw *L, int line)
{
	kb_buf_catf(L->o, "#line %d \"%s\"\n", line, L->f->path);
}

void kb_tile__block_close(kb_tile__lw *L, int n)
{
	for (int k = 0; k < n; k++) {
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "}\n");
	}
}

char *kb_tile__cname(const char *dsl)
{
	return kb_tile__reserved(dsl) ? kb_xasprintf("%s_", dsl) : kb_xstrdup(dsl);
}

const kb_tile__lsym *kb_tile__lw_lookup(const kb_tile__lw *L, const char *dsl)
{
	for (int i = L->nsyms - 1; i >= 0; i--)
		if (!strcmp(L->syms[i].dsl, dsl))
			return &L->syms[i];
	return NULL;
}

const char *kb_tile__define(kb_tile__lw *L, const char *dsl, const char *c, kb_tile__type t)
{
	kb_tile__lsym *s = KB_PUSH(L->syms, L->nsyms, L->capsyms);
	s->dsl = kb_xstrdup(dsl);
	s->c = c ? kb_xstrdup(c) : kb_tile__cname(dsl);
	s->type = t;
	s->depth = L->depth;
	s->load = NULL;
	s->stream = NULL;
	s->packed = false;
	s->qsmem = 0;
	return s->c;
}

void kb_tile__leave_scope(kb_tile__lw *L)
{
	while (L->nsyms > 0 && L->syms[L->nsyms - 1].depth >= L->depth) {
		L->nsyms--;
		free(L->syms[L->nsyms].dsl);
		free(L->syms[L->nsyms].c);
	}
}

const kb_tile_param *kb_tile__param(const kb_tile__lw *L, const char *name)
{
	for (int i = 0; i < L->k->k.nparams; i++)
		if (!strcmp(L->k->k.params[i].name, name))
			return &L->k->k.params[i];
	return NULL;
}

char *kb_tile__new_tmp(kb_tile__lw *L)
{
	return kb_xasprintf("_t%d", ++L->ntmp);
}

/* ===== types ===== */

bool kb_tile__is_float(kb_tile_dtype t)
{
	return t == KB_TILE_F32 || t == KB_TILE_F16 || t == KB_TILE_BF16 || t == KB_TILE_F64;
}

/* The C type a value of dtype t computes in (f16 and bf16 as float). */
const char *kb_tile__ctype(kb_tile_dtype t)
{
	switch (t) {
	case KB_TILE_F64: return "double";
	case KB_TILE_I32: return "int";
	case KB_TILE_I64: return "long long";
	case KB_TILE_U8: return "int";
	case KB_TILE_BOOL: return "bool";
	default: return "float";
	}
}

int kb_tile__elem_size(kb_tile_dtype t)
{
	switch (t) {
	case KB_TILE_F64: case KB_TILE_I64: return 8;
	case KB_TILE_F16: case KB_TILE_BF16: return 2;
	case KB_TILE_U8: case KB_TILE_BOOL: return 1;
	default: return 4;
	}
}

void kb_tile__to_elem(kb_tile_dtype t, const char *v, kb_buf *b)
{
	if (t == KB_TILE_BF16)
		kb_buf_catf(b, "__float2bfloat16_rn(%s)", v);
	else if (t == KB_TILE_F16)
		kb_buf_catf(b, "__float2half_rn(%s)", v);
	else
		kb_buf_catf(b, "(%s)(%s)", kb_tile_ctype(t), v);
}

bool kb_tile__is_load(const kb_tile__expr *e)
{
	return e->kind == KB_TE_CALL && !strcmp(e->name, "load");
}

bool kb_tile__is_reduction(const kb_tile__expr *e)
{
	return e->kind == KB_TE_CALL && ((e->nargs == 1 && (!strcmp(e->name, "sum") ||
							   !strcmp(e->name, "max") || !strcmp(e->name, "min"))) ||
					 (e->nargs == 2 && !strcmp(e->name, "sum"))); /* sum(t, axis) */
}

/* Emits one line (printf-style, under 512 bytes) at the current depth. */
void kb_tile__line(kb_tile__lw *L, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *t = kb_xvasprintf(fmt, ap); /* any length: a line naming long tensors */
	va_end(ap);
	kb_tile__ind(L);
	kb_buf_cat(L->o, t);
	free(t);
}

/* The axis a reduction call reduces along (sum(t, 1), max(t, axis = 0)). */
int kb_tile__axis_of(const kb_tile__expr *e)
{
	if (e->nargs == 2)
		return (int)e->args[1]->cval;
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "axis"))
			return (int)e->kwv[k]->cval;
	return 1;
}

/* The identity of reduction e (sum, max, min) in its dtype, as C. */
const char *kb_tile__reduce_id(const kb_tile__expr *e)
{
	bool f = kb_tile__is_float(e->type.dtype);
	if (!strcmp(e->name, "sum"))
		return f ? "0.0f" : "0";
	if (!strcmp(e->name, "max"))
		return f ? "-CUDART_INF_F" : "-2147483647 - 1";
	return f ? "CUDART_INF_F" : "2147483647";
}

/* ===== the layouts' slots ===== */

/* Slots a thread holds of a rank-1 tile of e elements. */
int64_t kb_tile__slots(const kb_tile__lw *L, int64_t e)
{
	int64_t g = (int64_t)L->T * L->V;
	return (e + g - 1) / g * L->V;
}

/* Whether every slot of a tile of e elements is an element of it. */
bool kb_tile__full(const kb_tile__lw *L, int64_t e)
{
	return e % ((int64_t)L->T * L->V) == 0;
}

/* "el(i)" in C: the element slot `i` holds in this thread. */
void kb_tile__cat_el(const kb_tile__lw *L, kb_buf *b, const char *i)
{
	kb_buf_catf(b, "((((%s) / %d) * %d + (int)threadIdx.x) * %d + (%s) %% %d)", i, L->V, L->T,
		    L->V, i, L->V);
}

int64_t kb_tile__slots2(const kb_tile__lw *L, const kb_tile__type *t)
{
	if (L->rows) /* lower_rows.c's layout: C / 2 slots a row tile, 2 for [RW, 1] */
		return (t->ext[1] == 1 ? 2 : t->ext[1] / 2) * L->rows_mt;
	return kb_tile__slots(L, t->ext[0] * t->ext[1]);
}

/* The row layout (lower_rows.c): an [RW, C] tile's slots and a slot's place. */
int64_t kb_tile__slots_rc(const kb_tile__lw *L, int64_t R, int64_t C)
{
	if (L->rows)
		return (C == 1 ? 2 : C / 2) * L->rows_mt;
	return kb_tile__slots(L, R * C);
}

/* Slot i of an [RW, C] tile: row 16 MT w + g + i % (4 MT) / 2 * 8 (row
 * tile i / 4 % MT, its half i % 4 / 2), column i / (4 MT) * 8 + 2 t + i % 2;
 * of an [RW, 1] tile: row 16 MT w + g + 8 i. */
void kb_tile__rows_at(const kb_tile__lw *L, int64_t C, kb_buf *at)
{
	int mt = L->rows_mt;
	kb_buf_cat(at, "const int r_ = ");
	kb_tile__rows_row(L, "i_", C == 1, at);
	if (C == 1)
		kb_buf_cat(at, ", c_ = 0, f_ = r_;\n");
	else
		kb_buf_catf(at, ", c_ = i_ / %d * 8 + (int)threadIdx.x %% 4 * 2 + i_ %% 2, f_ = r_ * %lld + c_;\n",
			    4 * mt, (long long)C);
}

/* The row of slot i (stat: of an [RW, 1] tile's slot i) in the row layout:
 * 16 MT w + g + i % (4 MT) / 2 * 8 (stat: + 8 i); with wgmma's two m64
 * pieces a warpgroup (lower_rowwg.c) 64 MT (w / 4) + 16 (w % 4) + g + 64 mt
 * + 8 h, mt = i % (4 MT) / 4 and h = i % 4 / 2 (stat: i / 2 and i % 2). */
void kb_tile__rows_row(const kb_tile__lw *L, const char *i, bool stat, kb_buf *b)
{
	int mt = L->rows_mt;
	if (L->rows_wg && mt > 1) {
		kb_buf_catf(b, "(int)threadIdx.x / 128 * %d + (int)threadIdx.x / 32 %% 4 * 16 + (int)threadIdx.x %% 32 / 4", 64 * mt);
		if (stat)
			kb_buf_catf(b, " + (%s) / 2 * 64 + (%s) %% 2 * 8", i, i);
		else
			kb_buf_catf(b, " + (%s) %% %d / 4 * 64 + (%s) %% 4 / 2 * 8", i, 4 * mt, i);
		return;
	}
	kb_buf_catf(b, "(int)threadIdx.x / 32 * %d + (int)threadIdx.x %% 32 / 4 + ", 16 * mt);
	if (stat)
		kb_buf_catf(b, "%s * 8", i);
	else
		kb_buf_catf(b, "%s %% %d / 2 * 8", i, 4 * mt);
}

int64_t kb_tile__mma_slots(const kb_tile__lw *L)
{
	return (int64_t)L->mma.MT * L->mma.NT * 4;
}

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
	m->rowpick = false;
	m->rowsat = 0;
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
	if (s && s->qsmem) { /* only a dot's A fragments read it (lower_rows.c) */
		kb_tile__fail(L, e->line, e->col, e->len, "this use of a tile kept in shared memory");
		return;
	}
	if (s && s->packed) { /* two slots a register (lower_rows.c) */
		kb_buf_catf(b, "kb_unpack2(%s[(%s) / 2], (%s) %% 2, (const %s *)0)", s->c, i, i,
			    s->type.dtype == KB_TILE_F16 ? "__half" : "__nv_bfloat16");
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
 * an integer keeps abs, floor and ceil as integers; approx, the f32 form
 * of exact = false where the default is exact (tanh: MUFU.TANH, for an
 * epilogue whose output is bf16).  docs/tile.md lists which are
 * approximate. */
static const struct {
	const char *dsl, *f32, *exact, *f64, *i, *approx;
} math_fns[] = {
	{"exp", "__expf", "expf", "exp", NULL, NULL},
	{"exp2", "exp2f", "exp2f", "exp2", NULL, NULL},
	{"log", "logf", "logf", "log", NULL, NULL},
	{"sqrt", "sqrtf", "sqrtf", "sqrt", NULL, NULL},
	{"rsqrt", "rsqrtf", "rsqrtf", "rsqrt", NULL, NULL},
	{"abs", "fabsf", "fabsf", "fabs", "abs", NULL},
	{"tanh", "tanhf", "tanhf", "tanh", NULL, "kb_tanh_approx"},
	{"erf", "erff", "erff", "erf", NULL, NULL},
	{"sin", "sinf", "sinf", "sin", NULL, NULL},
	{"cos", "cosf", "cosf", "cos", NULL, NULL},
	{"log1p", "log1pf", "log1pf", "log1p", NULL, NULL},
	{"expm1", "expm1f", "expm1f", "expm1", NULL, NULL},
	{"floor", "floorf", "floorf", "floor", "", NULL},
	{"ceil", "ceilf", "ceilf", "ceil", "", NULL},
	{"sigmoid", "__expf", "expf", "exp", NULL, NULL}, /* 1 / (1 + exp(-x)) */
};

/* Call e's `exact =`: 1 true, 0 false, -1 not given. */
static int exact_of(const kb_tile__expr *e)
{
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "exact"))
			return e->kwv[k]->kind == KB_TE_BOOL && e->kwv[k]->bval;
	return -1;
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
			int exact = exact_of(e);
			if (exact == 0 && math_fns[k].approx)
				return math_fns[k].approx;
			return exact == 1 ? math_fns[k].exact : math_fns[k].f32;
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

/* The row layout's exp((a - b) * c) (c a scalar, or none) in f32: one FFMA
 * and ex2, a c log2(e) - b c log2(e), as 02_fa2.cu computes its softmax
 * (kb_exp_sub, lower_rows.c's helpers), where __expf would take the
 * difference, the product and its own multiply by log2(e); false when x
 * is not of that form. */
static bool exp_fold(kb_tile__lw *L, const kb_tile__expr *x, const char *i, kb_buf *b)
{
	const kb_tile__expr *d = x, *c = NULL;
	for (int k = 0; x->kind == KB_TE_BINARY && x->op == KB_TOP_MUL && k < 2; k++)
		if (x->args[k]->kind == KB_TE_BINARY && x->args[k]->op == KB_TOP_SUB && !x->args[1 - k]->type.rank) {
			d = x->args[k], c = x->args[1 - k];
			break;
		}
	if (d->kind != KB_TE_BINARY || d->op != KB_TOP_SUB ||
	    kb_tile__compute(d->args[0]->type.dtype) != KB_TILE_F32 ||
	    kb_tile__compute(d->args[1]->type.dtype) != KB_TILE_F32 ||
	    (c && kb_tile__compute(c->type.dtype) != KB_TILE_F32))
		return false;
	/* both a row's ([RW, 1]): two products, so that a == b is exactly 1 (lazy_start) */
	bool row = x->type.rank == 2 && x->type.ext[1] == 1;
	kb_buf_cat(b, row ? "kb_exp_sub_row(" : "kb_exp_sub(");
	kb_tile__cexpr(L, d->args[0], i, b);
	kb_buf_cat(b, ", ");
	kb_tile__cexpr(L, d->args[1], i, b);
	kb_buf_cat(b, ", ");
	if (c)
		kb_tile__cexpr(L, c, i, b);
	else
		kb_buf_cat(b, "1.0f");
	kb_buf_cat(b, ")");
	return true;
}

static void call(kb_tile__lw *L, const kb_tile__expr *e, const char *i, kb_buf *b)
{
	const char *fn = math_fn(e, e->type.dtype);
	if (fn && e->nargs == 1 && !strcmp(e->name, "sigmoid")) {
		bool f64 = e->type.dtype == KB_TILE_F64;
		kb_buf_catf(b, f64 ? "(1.0 / (1.0 + %s(-(" : "(1.0f / (1.0f + %s(-(", fn);
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, "))))");
	} else if (fn && e->nargs == 1 && L->rows && !strcmp(fn, "__expf") && exp_fold(L, e->args[0], i, b)) {
		/* kb_exp_sub */
	} else if (fn && e->nargs == 1) {
		L->tanh_approx = L->tanh_approx || !strcmp(fn, "kb_tanh_approx");
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
	} else if (!strcmp(e->name, "pid") && L->persist && e->args[0]->cval == 0) {
		kb_buf_cat(b, "kb_pid_"); /* a persistent block's program */
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
		kb_buf_cat(b, "(((");
		kb_tile__cexpr(L, e->args[0], i, b);
		kb_buf_cat(b, ") + (");
		kb_tile__cexpr(L, e->args[1], i, b);
		kb_buf_cat(b, ") - 1) / (");
		kb_tile__cexpr(L, e->args[1], i, b);
		kb_buf_cat(b, "))"); /* whole: x * cdiv(a, b) is not (x * (a + b - 1)) / b */
	} else if (!strcmp(e->name, "sum") || !strcmp(e->name, "max") || !strcmp(e->name, "min")) {
		kb_tile__fail(L, e->line, e->col, e->len, "a reduction along an axis");
	} else {
		kb_tile__fail(L, e->line, e->col, e->len, e->name);
	}
}

void kb_tile__mma_read2(kb_tile__lw *L, const kb_tile__expr *e, const char *c, const char *i,
			kb_buf *b)
{
	const kb_tile_param *t = kb_tile__param(L, e->args[0]->name);
	const kb_tile__expr *other = NULL;
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "other"))
			other = e->kwv[k];
	kb_buf r = KB_BUF_INIT, col = KB_BUF_INIT, o = KB_BUF_INIT;
	kb_buf_catf(&r, "(wm0_ + (%s) / %d * %d + (int)threadIdx.x %% 32 / 4 + (%s) %% 4 / 2 * 8)", i,
		    4 * L->mma.NT, L->mma.MS, i);
	kb_buf_catf(&col, "(wn0_ + (%s) / 4 %% %d * 8 + (int)threadIdx.x %% 4 * 2 + (%s) %% 2)", i,
		    L->mma.NT, i);
	if (other)
		kb_tile__cexpr(L, other, "0", &o);
	const char *cv = t->dtype == KB_TILE_BF16 ? "__bfloat162float" : t->dtype == KB_TILE_F16
		? "__half2float" : "(float)";
	kb_buf_catf(b, "(%s < %sr_ && %s < %sc_ ? %s(%sp_[(size_t)%s * %s + %s]) : (float)(%s))", r.s, c,
		    col.s, c, cv, c, r.s, t->dims[1], col.s, o.len ? o.s : "0");
	kb_buf_free(&r);
	kb_buf_free(&col);
	kb_buf_free(&o);
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
	else if (m && m->rowpick) /* the row layout's [RW, 1] beside [RW, C]: the slot's row */
		kb_buf_catf(b, "%s[(%s) %% %d / 2]", m->c, i, 4 * L->rows_mt);
	else if (m && m->rowsat == 1) /* the row layout's arange: the slot's column, its row */
		kb_buf_catf(b, "((%s) / %d * 8 + (int)threadIdx.x %% 4 * 2 + (%s) %% 2)", i, 4 * L->rows_mt, i);
	else if (m && m->rowsat) { /* 2: an [RW, C] slot's row, 3: an [RW, 1] one's */
		char *pi = kb_xasprintf("(%s)", i);
		kb_buf_cat(b, "(");
		kb_tile__rows_row(L, pi, m->rowsat == 3, b);
		kb_buf_cat(b, ")");
		free(pi);
	}
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

void kb_tile__range_text(kb_tile__lw *L, const kb_tile__stmt *st, kb_buf *lo, kb_buf *hi,
			 kb_buf *step)
{
	kb_tile__cexpr(L, st->lo, "0", lo);
	kb_tile__cexpr(L, st->hi, "0", hi);
	if (st->step)
		kb_tile__cexpr(L, st->step, "0", step);
	else
		kb_buf_cat(step, "1");
}

void kb_tile__assign_elementwise(kb_tile__lw *L, const char *c, const kb_tile__type *t,
				 const kb_tile__expr *value, bool declare, int op)
{
	kb_buf x = KB_BUF_INIT;
	const char *ct = kb_tile__ctype(t->dtype);
	char opb[4] = "=";
	if (op)
		snprintf(opb, sizeof opb, "%c=", op);
	if (!t->rank) {
		kb_tile__cexpr(L, value, "0", &x);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s%s%s %s %s;\n", declare ? ct : "", declare ? " " : "", c, opb, x.s);
	} else {
		int64_t S = t->rank == 2 && L->mma.on ? kb_tile__mma_slots(L) : t->rank == 2 ?
			    kb_tile__slots2(L, t) : kb_tile__slots(L, t->ext[0]);
		kb_tile__cexpr(L, value, "i_", &x);
		if (declare) {
			kb_tile__ind(L);
			kb_buf_catf(L->o, "%s %s[%lld];\n", ct, c, (long long)S);
		}
		kb_tile__ind(L);
		kb_buf_cat(L->o, "#pragma unroll\n");
		kb_tile__ind(L);
		kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t%s[i_] %s %s;\n", c, opb, x.s);
	}
	kb_buf_free(&x);
}
