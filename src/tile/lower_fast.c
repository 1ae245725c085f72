/*
 * lower_fast.c - the row-in-registers branch of a tile kernel: when every
 * loop over a dim runs once for the sizes at hand (N <= BLOCK), a slice
 * loaded in one loop and loaded again in a later one is kept in registers
 * (kb_rowN) instead of read twice.  The generated CUDA holds both paths,
 * chosen at run time; this file decides when that pays (wants_fast_path,
 * the slices kept) and writes the branch.  The statements themselves are
 * lowered by lower.c as everywhere else.
 */
#include "tile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the row-in-registers branch ===== */

/* A top-level loop's range as text, to tell loops over the same range. */
static char *range_key(kb_tile__lw *L, const kb_tile__stmt *st)
{
	kb_buf lo = KB_BUF_INIT, hi = KB_BUF_INIT, step = KB_BUF_INIT;
	kb_tile__range_text(L, st, &lo, &hi, &step);
	char *key = kb_xasprintf("%s | %s | %s", lo.s, hi.s, step.s);
	kb_buf_free(&lo);
	kb_buf_free(&hi);
	kb_buf_free(&step);
	return key;
}

/* Whether e reads memory (a load or a reduction under it). */
static bool reads_memory(const kb_tile__expr *e)
{
	if (!e)
		return false;
	if (kb_tile__is_load(e) || kb_tile__is_reduction(e))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (reads_memory(e->args[i]))
			return true;
	return false;
}

/* Whether the kernel's top level has two or more loops over one range
 * that both load one slice: then the branch is worth having (not when a
 * bound is read from memory: the branch's condition comes before any
 * statement could read it). */
static bool wants_fast_path(kb_tile__lw *L, char **range)
{
	int nfor = 0;
	*range = NULL;
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *st = L->k->body[i];
		if (st->kind != KB_TS_FOR)
			continue;
		if (reads_memory(st->lo) || reads_memory(st->hi) || reads_memory(st->step)) {
			free(*range);
			*range = NULL;
			return false;
		}
		char *r = range_key(L, st);
		if (!*range)
			*range = r;
		else if (strcmp(*range, r))
			nfor = -100, free(r);
		else
			free(r);
		nfor++;
	}
	if (nfor >= 2)
		return true;
	free(*range);
	*range = NULL;
	return false;
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

/* Whether load e can be kept: rank 1, of a tensor the kernel never writes. */
static bool keepable(kb_tile__lw *L, const kb_tile__expr *e)
{
	if (!kb_tile__is_load(e) || e->type.rank != 1)
		return false;
	const kb_tile_param *t = kb_tile__param(L, e->args[0]->name);
	return t && !t->written;
}

/* The loads statement st of a top-level loop reads that could be kept:
 * the value of a variable it defines and never assigns again, and loads
 * nested anywhere in its expressions (`s = s + sum(load(...))`), but not
 * in another load's keywords.  f is called with each. */
typedef void (*load_fn)(kb_tile__lw *L, const kb_tile__expr *load, void *ctx);

static void nested_loads(kb_tile__lw *L, const kb_tile__expr *e, load_fn f, void *ctx)
{
	if (!e)
		return;
	if (keepable(L, e)) {
		f(L, e, ctx);
		return;
	}
	if (kb_tile__is_load(e))
		return;
	for (int k = 0; k < e->nargs; k++)
		nested_loads(L, e->args[k], f, ctx);
	for (int k = 0; k < e->nkw; k++)
		nested_loads(L, e->kwv[k], f, ctx);
}

static void stmt_loads(kb_tile__lw *L, const kb_tile__stmt *loop, const kb_tile__stmt *st, load_fn f,
		       void *ctx)
{
	if (st->kind == KB_TS_ASSIGN && st->defines && kb_tile__is_load(st->value)) {
		if (keepable(L, st->value) && !kb_tile__reassigned(loop->body, loop->nbody, st->name))
			f(L, st->value, ctx);
		return;
	}
	if (st->kind == KB_TS_FOR || st->kind == KB_TS_IF)
		return; /* a nested loop or branch: not once per trip */
	nested_loads(L, st->value, f, ctx);
	nested_loads(L, st->mask, f, ctx);
}

typedef struct {
	const char *key, *var;
	bool found;
} find_key;

static void match_key(kb_tile__lw *L, const kb_tile__expr *load, void *ctx)
{
	find_key *q = ctx;
	char *k = kb_tile__load_key(L, load, q->var);
	q->found = q->found || !strcmp(k, q->key);
	free(k);
}

/* Whether a top-level loop other than the one at `self` loads slice key. */
static bool loaded_again(kb_tile__lw *L, int self, const char *key)
{
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *loop = L->k->body[i];
		if (i == self || loop->kind != KB_TS_FOR)
			continue;
		find_key q = {key, loop->name, false};
		for (int j = 0; j < loop->nbody && !q.found; j++)
			stmt_loads(L, loop, loop->body[j], match_key, &q);
		if (q.found)
			return true;
	}
	return false;
}

typedef struct {
	int self, seen;
	const char *var;
} keep_ctx;

/* A load of loop `self`: kept when another loop loads its slice too. */
static void keep_if_loaded_again(kb_tile__lw *L, const kb_tile__expr *load, void *ctx)
{
	keep_ctx *q = ctx;
	char *key = kb_tile__load_key(L, load, q->var);
	if (kb_tile__kept_of(L, load) || !loaded_again(L, q->self, key)) {
		free(key);
		return;
	}
	kb_tile__kept *k = KB_PUSH(L->kept, L->nkept, L->capkept);
	k->key = key;
	k->c = kb_xasprintf("kb_row%d", ++q->seen);
	k->filled = false;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s %s[%lld]; /* %s, read once */\n", kb_tile__ctype(load->type.dtype), k->c,
		    (long long)kb_tile__slots(L, load->type.ext[0]), kb_tile__param(L, load->args[0]->name)->name);
}

/* Declares registers for every slice that two top-level loops load (of a
 * tensor the kernel never writes: as a variable never assigned again, or
 * nested in an expression); a slice one loop loads is left to that loop
 * (streamed where it can be). */
static void find_kept(kb_tile__lw *L)
{
	keep_ctx q = {0, 0, NULL};
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *loop = L->k->body[i];
		if (loop->kind != KB_TS_FOR)
			continue;
		L->loopvar = loop->name;
		q.self = i, q.var = loop->name;
		for (int j = 0; j < loop->nbody; j++)
			stmt_loads(L, loop, loop->body[j], keep_if_loaded_again, &q);
	}
}

/* The kernel body's top level in the branch: each loop once, at lo. */
static void fast_body(kb_tile__lw *L)
{
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *st = L->k->body[i];
		if (st->kind != KB_TS_FOR) {
			L->list = L->k->body, L->nlist = L->k->nbody, L->at = i;
			kb_tile__lower_stmt(L, st);
			continue;
		}
		kb_buf lo = KB_BUF_INIT;
		kb_tile__cexpr(L, st->lo, "0", &lo);
		kb_tile__line_of(L, st->line);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "{\n");
		L->depth++;
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const int %s = %s; /* the one trip */\n", st->name, lo.s);
		kb_tile__define(L, st->name, st->name, (kb_tile__type){KB_TILE_I32, 0, {0, 0}});
		L->loopvar = st->name;
		kb_tile__lower_stmts(L, st->body, st->nbody);
		kb_tile__leave_scope(L);
		kb_tile__block_close(L, 1);
		kb_buf_free(&lo);
	}
}

/* The body: with the branch when two loops load one slice, else as written. */
void kb_tile__lower_body(kb_tile__lw *L)
{
	char *range = NULL;
	if (!wants_fast_path(L, &range)) {
		kb_tile__lower_stmts(L, L->k->body, L->k->nbody);
		return;
	}
	const kb_tile__stmt *first = NULL;
	for (int i = 0; i < L->k->nbody && !first; i++)
		if (L->k->body[i]->kind == KB_TS_FOR)
			first = L->k->body[i];
	kb_buf lo = KB_BUF_INIT, hi = KB_BUF_INIT, step = KB_BUF_INIT;
	kb_tile__range_text(L, first, &lo, &hi, &step);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if ((%s) < (%s) && (%s) <= (%s) + (%s)) { /* one trip: the row stays in registers */\n",
		    lo.s, hi.s, hi.s, lo.s, step.s);
	L->depth++;
	L->fast = true;
	find_kept(L);
	fast_body(L);
	L->fast = false;
	kb_tile__leave_scope(L);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "} else {\n");
	L->depth++;
	kb_tile__lower_stmts(L, L->k->body, L->k->nbody);
	kb_tile__leave_scope(L);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	for (int i = 0; i < L->nkept; i++)
		free(L->kept[i].key), free(L->kept[i].c);
	L->nkept = 0;
	kb_buf_free(&lo);
	kb_buf_free(&hi);
	kb_buf_free(&step);
	free(range);
}

