/*
 * tree.c - what every stage asks of the syntax tree (tile_int.h): one walk
 * over its expressions and statements, the one place that lists a node's
 * children.  A question about the tree ("does this statement name x?",
 * "what is the widest tile stored?") is a callback of the walk, not a
 * recursion of its own.
 *
 * Calls no other file of src/tile: the checker and the lowering both
 * build on it.
 */
#include "tile_int.h"

#include <string.h>

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
