/*
 * lower_reduce.c - what a statement materializes before it computes: loads
 * (lower_value.c writes them) and reductions, which are written here: the
 * thread's slots, then the block (warp shuffles, one value a warp through
 * the shared scratch, lower.c's KB_BLOCK_REDUCE helpers).  Element-wise
 * nodes are left to lower_expr.c.
 */
#include "tile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== materialized values ===== */

/* The loads in the indices of slice s (a gather: x[row, t[row]]), before
 * the statement that reads through them. */
void kb_tile__materialize_index(kb_tile__lw *L, const kb_tile__expr *s)
{
	for (int d = 0; s->kind == KB_TE_SLICE && d < s->nidx; d++) {
		kb_tile__materialize(L, s->idx[d].lo, NULL);
		if (s->idx[d].hi)
			kb_tile__materialize(L, s->idx[d].hi, NULL);
	}
}

/* Materializes every load and reduction under e (not e itself). */
void kb_tile__materialize_under(kb_tile__lw *L, const kb_tile__expr *e)
{
	for (int k = 0; k < e->nargs; k++)
		kb_tile__materialize(L, e->args[k], NULL);
	for (int k = 0; k < e->nkw; k++)
		kb_tile__materialize(L, e->kwv[k], NULL);
}

/* ===== reductions ===== */

/* dst = sum / max / min of a rank-1 tile: the thread's slots, then the block. */
void kb_tile__lower_reduction(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare)
{
	const kb_tile__expr *t = e->args[0];
	if (t->type.rank == 2 && !L->mma.on) { /* along an axis: lower_tile2.c */
		kb_tile__reduce2(L, e, dst, declare);
		return;
	}
	if (t->type.rank != 1) {
		kb_tile__fail(L, e->line, e->col, e->len, "a reduction of a tile of rank 2");
		return;
	}
	const char *ct = kb_tile__ctype(e->type.dtype);
	bool f = kb_tile__is_float(e->type.dtype), add = !strcmp(e->name, "sum");
	int64_t E = t->type.ext[0], S = kb_tile__slots(L, E);
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	if (declare) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s;\n", ct, dst);
	}
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s acc_ = %s;\n", ct, add ? "0" : !strcmp(e->name, "max")
		    ? (f ? "-CUDART_INF_F" : "-2147483647 - 1") : (f ? "CUDART_INF_F" : "2147483647"));
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
	kb_tile__ind(L);
	if (!kb_tile__full(L, E)) {
		kb_buf_cat(L->o, "\tif (");
		kb_tile__cat_el(L, L->o, "i_");
		kb_buf_catf(L->o, " < %lld)\n", (long long)E);
		kb_tile__ind(L);
	}
	if (add)
		kb_buf_catf(L->o, "\tacc_ += %s;\n", x.s);
	else
		kb_buf_catf(L->o, "\tacc_ = %s(acc_, %s);\n", kb_tile__minmax(e->name, e->type.dtype), x.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s = kb_block_%s_%s(acc_, kb_scratch, kb_nred_);\n", dst, e->name, f ? "f" : "i");
	kb_tile__block_close(L, 1);
	L->scratch = true;
	kb_buf_free(&x);
}

/* Emits the load or reduction e into `into` (a variable being defined: a
 * new array or scalar), or into a temporary when into is NULL; recurses
 * into its arguments first.  Element-wise nodes are left to kb_tile__cexpr(). */
void kb_tile__materialize(kb_tile__lw *L, const kb_tile__expr *e, const char *into)
{
	bool load = e->kind == KB_TE_CALL && !strcmp(e->name, "load");
	bool axis = kb_tile__is_reduction(e) && e->args[0]->type.rank == 2 && !L->mma.on;
	if (!load && !axis) { /* (a reduction along an axis reads its operand in its own layout) */
		kb_tile__materialize_under(L, e);
	} else if (load) {
		for (int k = 0; k < e->nkw; k++)
			kb_tile__materialize(L, e->kwv[k], NULL);
		kb_tile__materialize_index(L, e->args[0]);
	}
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "dot")) {
		kb_tile__fail(L, e->line, e->col, e->len, "dot");
		return;
	}
	if (!load && !kb_tile__is_reduction(e))
		return;
	kb_tile__kept *k = load && !into && L->fast ? kb_tile__kept_of(L, e) : NULL;
	if (k) { /* a slice the row-in-registers branch keeps: loaded once */
		if (!k->filled)
			kb_tile__fill_kept(L, e, k);
		kb_tile__add_mat(L, e, kb_xstrdup(k->c), false);
		return;
	}
	char *c = into ? kb_xstrdup(into) : kb_tile__new_tmp(L);
	if (load)
		kb_tile__lower_load(L, e, c, true);
	else
		kb_tile__lower_reduction(L, e, c, true);
	kb_tile__add_mat(L, e, c, false);
}
