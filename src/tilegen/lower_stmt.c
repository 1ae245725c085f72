/*
 * lower_stmt.c - the statements of a tile program as CUDA C: assignments
 * (which of their cases each is: a 2-d tile, the mma layout, a load kept
 * in registers, read in a dot's epilogue or streamed to its one user, a
 * group loop, a load or reduction, an element-wise value), for, if, const,
 * and stores, each under a #line to its .tile line.  What a statement needs
 * first is materialized by lower_reduce.c, its loads written by
 * lower_load.c, its streams and stores by lower_value.c, a dot's loop by
 * lower_dot.c; lower.c lowers the kernels and their bodies through here.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== statements ===== */

/* Whether every use of `name` in v is in a [BM, BN] value of a dot's
 * epilogue, or of a 2-d tile in a kernel without dot (an assignment of a
 * rank-2 tile, or a 2-d store's value): those read its load again at their
 * own columns, so the load is not written where it is assigned. */
static kb_tile__walkret used_outside_epilogue(const kb_tile__stmt *st, void *name)
{
	bool epilogue = (st->kind == KB_TS_ASSIGN && st->type.rank == 2) ||
			(st->kind == KB_TS_STORE && st->slice && st->slice->type.rank == 2);
	bool used = epilogue ? kb_tile__names(st->slice, name) || kb_tile__names(st->mask, name)
			     : kb_tile__stmt_exprs(st, kb_tile__is_name, name);
	return used ? KB_TWALK_STOP : KB_TWALK_ON;
}

static bool only_epilogue_uses(kb_tile__stmt *const *v, int n, const char *name)
{
	return !kb_tile__walk_stmts(v, n, used_outside_epilogue, NULL, (void *)name);
}

/* A rank-1 variable that only its load defines keeps that load: a dot's
 * epilogue reads it again at its own columns (lower_dot.c). */
static void note_load(kb_tile__lw *L, const kb_tile__stmt *st)
{
	if (st->type.rank == 1 && !st->op && kb_tile__is_load(st->value) &&
	    !kb_tile__reassigned(L->k->body, L->k->nbody, st->name))
		L->syms[L->nsyms - 1].load = st->value;
}

/* Whether every use of `name` in e is element-wise (not under a reduction,
 * nor in a load's slice or keywords). */
static bool names_elementwise(const kb_tile__expr *e, const char *name)
{
	if (!e)
		return true;
	if (kb_tile__is_load(e) || kb_tile__is_reduction(e))
		return !kb_tile__names(e, name);
	for (int i = 0; i < e->nargs; i++)
		if (!names_elementwise(e->args[i], name))
			return false;
	for (int i = 0; i < e->nkw; i++)
		if (!names_elementwise(e->kwv[i], name))
			return false;
	return true;
}

/* Whether st (its nested statements too) stores to tensor t, or assigns
 * (or loops over) a name that load e names. */
typedef struct {
	const char *t;
	const kb_tile__expr *e;
} disturb_ctx;

static kb_tile__walkret disturbs_one(const kb_tile__stmt *st, void *ctx)
{
	const disturb_ctx *q = ctx;
	bool stores = st->kind == KB_TS_STORE && st->slice && !strcmp(st->slice->name, q->t);
	bool renames = (st->kind == KB_TS_ASSIGN || st->kind == KB_TS_FOR) && kb_tile__names(q->e, st->name);
	return stores || renames ? KB_TWALK_STOP : KB_TWALK_ON;
}

static bool disturbs(const kb_tile__stmt *st, const char *t, const kb_tile__expr *e)
{
	disturb_ctx q = {t, e};
	return kb_tile__walk_stmt(st, disturbs_one, NULL, &q);
}

/* Streamed loads.  A rank-1 variable defined by a load that one later
 * statement of the same list uses, element-wise (a store's value or mask,
 * a rank-1 element-wise assignment), with nothing in between storing to
 * its tensor or changing what its slice names, is never materialized: that
 * statement's group loop reads the group it needs where it uses it, so the
 * tile costs V registers, not S. */
static bool streams(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__expr *e = st->value;
	if (!L->list || st->type.rank != 1 || !kb_tile__streamable(L, e) ||
	    kb_tile__reassigned(L->k->body, L->k->nbody, st->name))
		return false;
	int user = -1;
	for (int i = L->at + 1; i < L->nlist; i++)
		if (kb_tile__stmt_names(L->list[i], st->name)) {
			if (user >= 0)
				return false;
			user = i;
		}
	if (user < 0)
		return false;
	const char *t = e->args[0]->name;
	const kb_tile__stmt *u = L->list[user];
	if (u->kind == KB_TS_STORE) {
		const kb_tile__expr *sl = u->slice;
		if (sl->type.rank != 1 || !sl->nidx || !sl->idx[sl->nidx - 1].hi || !strcmp(sl->name, t) ||
		    kb_tile__names(sl, st->name) || !names_elementwise(u->value, st->name) ||
		    !names_elementwise(u->mask, st->name))
			return false;
	} else if (u->kind == KB_TS_ASSIGN) {
		bool root = !u->op && (kb_tile__is_load(u->value) || kb_tile__is_reduction(u->value));
		if (u->type.rank != 1 || root || kb_tile__names(e, u->name) ||
		    !names_elementwise(u->value, st->name))
			return false;
	} else {
		return false;
	}
	for (int i = L->at + 1; i < user; i++)
		if (disturbs(L->list[i], t, e))
			return false;
	return true;
}

/* How an assignment is lowered: the first case that applies, in this order. */
typedef enum {
	ASSIGN_2D,          /* a 2-d tile in a kernel without dot (lower_reduce.c) */
	ASSIGN_2D_OTHER,    /* in a kernel with dot, a 2-d tile of another shape: an error */
	ASSIGN_MMA,         /* a [BM, BN] tile in the mma layout (lower_dot.c) */
	ASSIGN_KEPT,        /* a load the row-in-registers branch keeps in registers */
	ASSIGN_EPILOGUE,    /* a [BN] load only a dot's epilogue (or 2-d tiles) reads, at its columns */
	ASSIGN_STREAM,      /* a load streamed into its one user (streams()) */
	ASSIGN_GROUPS,      /* an element-wise value reading streams: a group loop */
	ASSIGN_ROOT,        /* a load or a reduction, into the variable */
	ASSIGN_ELEMENTWISE, /* an element-wise value, every slot */
} assign_kind;

/* Which case of assign_kind statement st is (*kept: ASSIGN_KEPT's registers). */
static assign_kind assign_how(kb_tile__lw *L, const kb_tile__stmt *st, kb_tile__kept **kept)
{
	const kb_tile__type *t = &st->type;
	const kb_tile__expr *v = st->value;
	bool root = !st->op && (kb_tile__is_load(v) || kb_tile__is_reduction(v));
	bool defines_load = st->defines && root && kb_tile__is_load(v);
	*kept = NULL;
	if (t->rank > 1)
		return !L->mma.on ? ASSIGN_2D : kb_tile__mma_shape(L, t) ? ASSIGN_MMA : ASSIGN_2D_OTHER;
	if (defines_load && L->fast && (*kept = kb_tile__kept_of(L, v)))
		return ASSIGN_KEPT;
	if (defines_load && t->rank == 1 && !kb_tile__reassigned(L->k->body, L->k->nbody, st->name) &&
	    only_epilogue_uses(L->k->body, L->k->nbody, st->name))
		return ASSIGN_EPILOGUE;
	if (defines_load && streams(L, st))
		return ASSIGN_STREAM;
	if (!root && t->rank == 1 && !L->mma.on && kb_tile__has_streams(L, v))
		return ASSIGN_GROUPS;
	return root ? ASSIGN_ROOT : ASSIGN_ELEMENTWISE;
}

/* A comment where a variable's value is read elsewhere than here. */
static void read_elsewhere(kb_tile__lw *L, const char *name, const char *where)
{
	kb_tile__ind(L);
	kb_buf_catf(L->o, "/* %s: %s */\n", name, where);
}

/* name = value: the code its case writes (into c, the variable's C name),
 * then, when it defines the variable, the variable in scope. */
static void lower_assign(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__type *t = &st->type;
	const kb_tile__expr *v = st->value;
	kb_tile__kept *kept;
	assign_kind how = assign_how(L, st, &kept);
	if (how == ASSIGN_2D_OTHER) {
		kb_tile__fail(L, st->line, st->col, st->len, "a 2-d tile of another shape than the dot's result");
		return;
	}
	if (how == ASSIGN_MMA && !kb_tile__mma_value_ok(L, v))
		return;
	char *c = kept ? kb_xstrdup(kept->c) : st->defines ? kb_tile__cname(st->name)
			 : kb_xstrdup(kb_tile__lw_lookup(L, st->name)->c);
	int64_t qsmem = 0;
	switch (how) {
	case ASSIGN_2D:
		if (L->rows && kb_tile__rows_packable(L, st) && !kb_tile__reassigned(L->k->body, L->k->nbody,
											 st->name))
			qsmem = kb_tile__rows_load_packed(L, st, c);
		else
			kb_tile__assign2(L, st, c, st->defines);
		break;
	case ASSIGN_MMA:
		kb_tile__mma_materialize(L, v);
		kb_tile__assign_elementwise(L, c, t, v, st->defines, st->op);
		break;
	case ASSIGN_KEPT: /* the first loop fills the registers, the later ones take them */
		if (!kept->filled) {
			kb_tile__fill_kept(L, v, kept);
		} else {
			kb_tile__ind(L);
			kb_buf_catf(L->o, "/* %s: the slice is in %s already */\n", st->name, c);
		}
		break;
	case ASSIGN_EPILOGUE:
		read_elsewhere(L, st->name, L->mma.on ? "read where the dot's result uses it, at its columns"
				: "read where a 2-d tile uses it, at its slots' columns");
		break;
	case ASSIGN_STREAM:
		read_elsewhere(L, st->name, "streamed, read a group at a time where it is used");
		break;
	case ASSIGN_GROUPS:
		kb_tile__assign_groups(L, c, t, v, st->defines, st->op);
		break;
	case ASSIGN_ROOT:
		if (st->defines) {
			kb_tile__materialize(L, v, c);
		} else if (kb_tile__is_load(v)) {
			kb_tile__lower_load(L, v, c, false);
		} else {
			kb_tile__materialize_under(L, v);
			kb_tile__lower_reduction(L, v, c, false);
		}
		break;
	default: /* ASSIGN_ELEMENTWISE: `s += sum(t)` materializes the sum first */
		if (st->defines)
			kb_tile__materialize_under(L, v);
		else
			kb_tile__materialize(L, v, NULL);
		kb_tile__assign_elementwise(L, c, t, v, st->defines, st->op);
		break;
	}
	if (st->defines) {
		kb_tile__define(L, st->name, c, *t);
		if (how == ASSIGN_STREAM)
			L->syms[L->nsyms - 1].stream = v;
		else if (how == ASSIGN_2D && L->rows && kb_tile__rows_packable(L, st) &&
			 !kb_tile__reassigned(L->k->body, L->k->nbody, st->name))
			L->syms[L->nsyms - 1].packed = true, L->syms[L->nsyms - 1].qsmem = qsmem;
		else
			note_load(L, st);
	}
	free(c);
}

static void lower_for(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__dotloop *dl = kb_tile__dot_loop(L, st);
	if (dl) {
		kb_tile__lower_dot_loop(L, dl);
		return;
	}
	kb_buf lo = KB_BUF_INIT, hi = KB_BUF_INIT, step = KB_BUF_INIT;
	kb_tile__materialize(L, st->lo, NULL);
	kb_tile__materialize(L, st->hi, NULL);
	if (st->step)
		kb_tile__materialize(L, st->step, NULL);
	kb_tile__range_text(L, st, &lo, &hi, &step);
	char *cn = kb_tile__cname(st->name);
	int dmark = L->rows ? kb_tile__rows_defer_open(L, st) : 0;
	bool pf = L->rows && kb_tile__rows_loop_open(L, st, cn, lo.s, hi.s, step.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int %s = %s; %s < %s; %s += %s) {\n", cn, lo.s, cn, hi.s, cn, step.s);
	L->depth++;
	kb_tile__define(L, st->name, cn, (kb_tile__type){KB_TILE_I32, 0, {0, 0}});
	if (pf)
		kb_tile__rows_loop_top(L, cn, hi.s, step.s);
	kb_tile__lower_stmts(L, st->body, st->nbody);
	if (pf)
		kb_tile__rows_loop_end(L);
	kb_tile__leave_scope(L);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	if (pf)
		kb_tile__rows_loop_close(L);
	if (L->rows)
		kb_tile__rows_defer_close(L, dmark);
	free(cn);
	kb_buf_free(&lo);
	kb_buf_free(&hi);
	kb_buf_free(&step);
}

static void lower_if(kb_tile__lw *L, const kb_tile__stmt *st)
{
	kb_buf c = KB_BUF_INIT;
	kb_tile__materialize(L, st->value, NULL);
	kb_tile__cexpr(L, st->value, "0", &c);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (%s) {\n", c.s);
	L->depth++;
	kb_tile__lower_stmts(L, st->body, st->nbody);
	kb_tile__leave_scope(L);
	L->depth--;
	if (st->nels) {
		kb_tile__ind(L);
		kb_buf_cat(L->o, "} else {\n");
		L->depth++;
		kb_tile__lower_stmts(L, st->els, st->nels);
		kb_tile__leave_scope(L);
		L->depth--;
	}
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	kb_buf_free(&c);
}

/* A const as C++: a constexpr of its value (-D overrides applied). */
void kb_tile__const_decl(kb_tile__lw *L, const kb_tile__stmt *st)
{
	int64_t v = st->value->cval;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "constexpr %s %s = %lld;\n", v == (int32_t)v ? "int" : "long long", st->name,
		    (long long)v);
}

/* Whether st is a statement of the kernel body's top level. */
static bool top_level(const kb_tile__lw *L, const kb_tile__stmt *st)
{
	for (int i = 0; i < L->k->nbody; i++)
		if (L->k->body[i] == st)
			return true;
	return false;
}

void kb_tile__lower_stmt(kb_tile__lw *L, const kb_tile__stmt *st)
{
	if (st->kind == KB_TS_CONST) { /* the top level's are declared first */
		if (!top_level(L, st)) {
			kb_tile__line_of(L, st->line);
			kb_tile__const_decl(L, st);
		}
		return;
	}
	for (int i = 0; i < L->nmats; i++) /* a statement's temporaries are its own */
		free(L->mats[i].c);
	L->nmats = 0;
	for (int i = 0; i < L->nstrs; i++)
		free(L->strs[i].c);
	L->nstrs = 0;
	kb_tile__line_of(L, st->line);
	switch (st->kind) {
	case KB_TS_ASSIGN: lower_assign(L, st); break;
	case KB_TS_FOR: lower_for(L, st); break;
	case KB_TS_IF: lower_if(L, st); break;
	case KB_TS_STORE:
		if (st->slice->type.rank == 2 && st->op)
			kb_tile__fail(L, st->line, st->col, st->len, "an atomic into a 2-d slice");
		else if (st->slice->type.rank == 2 && !L->mma.on)
			kb_tile__lower_store2(L, st);
		else if (st->slice->type.rank == 2)
			kb_tile__lower_store_mma(L, st);
		else
			kb_tile__lower_store(L, st);
		break;
	default: break;
	}
}

void kb_tile__lower_stmts(kb_tile__lw *L, kb_tile__stmt *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		L->list = v, L->nlist = n, L->at = i;
		kb_tile__lower_stmt(L, v[i]);
		if (L->rows)
			kb_tile__rows_hoist(L, v, n, i);
	}
}

/* Whether `name` is assigned again in v after its definition. */
static kb_tile__walkret assigns_again(const kb_tile__stmt *st, void *name)
{
	return st->kind == KB_TS_ASSIGN && !st->defines && !strcmp(st->name, name) ? KB_TWALK_STOP
										   : KB_TWALK_ON;
}

bool kb_tile__reassigned(kb_tile__stmt *const *v, int n, const char *name)
{
	return kb_tile__walk_stmts(v, n, assigns_again, NULL, (void *)name);
}
