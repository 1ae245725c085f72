/*
 * tree.c - what every stage asks of the syntax tree (tile_int.h): the
 * dtypes and their names (in the DSL and in CUDA), the algebra of types
 * (what a dtype computes in, promotion, broadcasting), the operators' and
 * C++'s words, and one walk over expressions and statements, the one place
 * that lists a node's children.  A question about the tree ("does this
 * statement name x?", "what is the widest tile stored?") is a callback of
 * the walk, not a recursion of its own.
 *
 * Calls no other file of src/tile: the tokenizer, the parser, the checker
 * and the lowering all build on it.
 */
#include "tile_int.h"

#include <stdio.h>
#include <string.h>

/* ===== dtypes ===== */

static const char *const dtype_names[] = {
	[KB_TILE_F32] = "f32", [KB_TILE_F16] = "f16", [KB_TILE_BF16] = "bf16",
	[KB_TILE_F64] = "f64", [KB_TILE_I32] = "i32", [KB_TILE_I64] = "i64",
	[KB_TILE_U8] = "u8", [KB_TILE_BOOL] = "bool",
};

bool kb_tile__dtype_from(const char *s, int len, kb_tile_dtype *out)
{
	for (int i = 0; i < KB_TILE_BOOL; i++)
		if ((size_t)len == strlen(dtype_names[i]) && !memcmp(s, dtype_names[i], (size_t)len)) {
			*out = (kb_tile_dtype)i;
			return true;
		}
	return false;
}

const char *kb_tile_dtype_name(kb_tile_dtype t)
{
	return (size_t)t < KB_ARRAY_LEN(dtype_names) ? dtype_names[t] : "?";
}

const char *kb_tile_ctype(kb_tile_dtype t)
{
	static const char *const names[] = {
		[KB_TILE_F32] = "float", [KB_TILE_F16] = "__half", [KB_TILE_BF16] = "__nv_bfloat16",
		[KB_TILE_F64] = "double", [KB_TILE_I32] = "int", [KB_TILE_I64] = "long long",
		[KB_TILE_U8] = "unsigned char", [KB_TILE_BOOL] = "bool",
	};
	return (size_t)t < KB_ARRAY_LEN(names) ? names[t] : "?";
}

/* ===== types ===== */

kb_tile__typestr kb_tile__type_str(const kb_tile__type *t)
{
	kb_tile__typestr s;
	const char *d = kb_tile_dtype_name(t->dtype);
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

/* ===== words ===== */

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

bool kb_tile__reserved(const char *n)
{
	static const char *const words[] = {
		"auto", "bool", "break", "case", "char", "class", "const", "continue", "default",
		"delete", "do", "double", "else", "enum", "extern", "float", "for", "goto", "if",
		"inline", "int", "long", "new", "private", "public", "register", "return", "short",
		"signed", "sizeof", "static", "struct", "switch", "template", "this", "typedef",
		"union", "unsigned", "void", "volatile", "while", "half", "dim3", "min", "max",
		"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
		/* the C math it calls */
		"exp", "expf", "exp2", "exp2f", "log", "logf", "sqrt", "sqrtf", "rsqrt", "rsqrtf",
		"fabs", "fabsf", "fmax", "fmaxf", "fmin", "fminf",
	};
	static const char *const prefixes[] = {"kb_", "_t", "__", "KB_", "CUDART_", "make_"};
	for (size_t i = 0; i < KB_ARRAY_LEN(words); i++)
		if (!strcmp(n, words[i]))
			return true;
	for (size_t i = 0; i < KB_ARRAY_LEN(prefixes); i++)
		if (!strncmp(n, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* ===== the walk ===== */

bool kb_tile__walk_expr(const kb_tile__expr *e, kb_tile__expr_fn fn, void *ctx)
{
	if (!e)
		return false;
	kb_tile__walkret r = fn(e, ctx);
	if (r != KB_TWALK_ON)
		return r == KB_TWALK_STOP;
	for (int i = 0; i < e->nargs; i++)
		if (kb_tile__walk_expr(e->args[i], fn, ctx))
			return true;
	for (int i = 0; i < e->nkw; i++)
		if (kb_tile__walk_expr(e->kwv[i], fn, ctx))
			return true;
	for (int i = 0; i < e->nidx; i++)
		if (kb_tile__walk_expr(e->idx[i].lo, fn, ctx) || kb_tile__walk_expr(e->idx[i].hi, fn, ctx))
			return true;
	return false;
}

bool kb_tile__stmt_exprs(const kb_tile__stmt *st, kb_tile__expr_fn fn, void *ctx)
{
	const kb_tile__expr *own[] = {st->value, st->slice, st->mask, st->lo, st->hi, st->step};
	for (size_t i = 0; i < KB_ARRAY_LEN(own); i++)
		if (kb_tile__walk_expr(own[i], fn, ctx))
			return true;
	return false;
}

bool kb_tile__walk_stmt(const kb_tile__stmt *st, kb_tile__stmt_fn sfn, kb_tile__expr_fn efn,
			void *ctx)
{
	kb_tile__walkret r = sfn ? sfn(st, ctx) : KB_TWALK_ON;
	if (r != KB_TWALK_ON)
		return r == KB_TWALK_STOP;
	if (efn && kb_tile__stmt_exprs(st, efn, ctx))
		return true;
	return kb_tile__walk_stmts(st->body, st->nbody, sfn, efn, ctx) ||
	       kb_tile__walk_stmts(st->els, st->nels, sfn, efn, ctx);
}

bool kb_tile__walk_stmts(kb_tile__stmt *const *v, int n, kb_tile__stmt_fn sfn, kb_tile__expr_fn efn,
			 void *ctx)
{
	for (int i = 0; i < n; i++)
		if (kb_tile__walk_stmt(v[i], sfn, efn, ctx))
			return true;
	return false;
}

/* ===== questions the stages share ===== */

kb_tile__walkret kb_tile__is_name(const kb_tile__expr *e, void *name)
{
	return e->kind == KB_TE_NAME && !strcmp(e->name, name) ? KB_TWALK_STOP : KB_TWALK_ON;
}

bool kb_tile__names(const kb_tile__expr *e, const char *name)
{
	return kb_tile__walk_expr(e, kb_tile__is_name, (void *)name);
}

bool kb_tile__stmt_names(const kb_tile__stmt *st, const char *name)
{
	return kb_tile__walk_stmt(st, NULL, kb_tile__is_name, (void *)name);
}
