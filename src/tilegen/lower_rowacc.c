/*
 * lower_rowacc.c - the row layout's reductions along axis 1 (a thread's
 * slots, then its quad: `max(s, axis = 1, keep = true)`), and two rewrites
 * of the row layout (lower_rows.c) that keep a loop's softmax off the path
 * of its second product, as 02_fa2.cu's hand-written order does; both
 * change where code goes, not what it computes.
 *
 * - A row sum carried by a loop (attention's l = l * alpha + sum(p, axis =
 *   1, keep = true)) is kept as each lane's part of its rows' sums while
 *   the loop runs, and folded across the quad (two XOR shuffles a row) once
 *   after it, not every trip.  Sound because the update is linear in l and
 *   in the sum, and the factor (an [RW, 1] value or a scalar) is the same in
 *   the quad's four lanes: the quad's parts add up to l at every trip.  Before
 *   the loop lane 0 of a quad keeps l and the others start from 0.  Taken for
 *   an f32 [RW, 1] variable defined before the loop, assigned once among its
 *   statements as `x = x * y + sum(...)` (y * x, x + sum(...), either order)
 *   or `x += sum(...)`, and named nowhere else in the loop (nor in y's or
 *   the sum's operand another such variable's name).  Trips then hold no
 *   shuffle between the exponentials and the second product (a shuffle is a
 *   warp-wide instruction the compilers keep in place), 8 fewer SHFL a trip
 *   with one row tile a warp, 16 with two.
 * - The lazy rescale of a dot's start x * r (lower_rows.c's lazy_start, a
 *   warp-uniform branch) moves to just after the statement that assigns r,
 *   on x in place, when x is named by nothing between there and the dot
 *   (`x = x * r + dot(...)`, which then starts from x) and r is not assigned
 *   again.  Written as attention.tile writes it (alpha before p), the branch
 *   comes before the exponentials of p, which ptxas then interleaves with the
 *   mmas of O += P V, as in 02_fa2.cu's SASS; with the branch after them (at
 *   the dot) every MUFU of the trip was issued before the first of those
 *   mmas (bench/attention_tile_sass.txt).
 */
#include "tilegen_int.h"

#include <stdlib.h>
#include <string.h>

/* ===== shapes ===== */

static bool is_row_f32(const kb_tile__type *t)
{
	return t->rank == 2 && t->ext[1] == 1 && t->dtype == KB_TILE_F32;
}

static bool is_name(const kb_tile__expr *e, const char *name)
{
	return e->kind == KB_TE_NAME && !strcmp(e->name, name);
}

/* An f32 [RW, 1] variable of the row layout's registers (not a packed load
 * or a streamed one). */
static const kb_tile__lsym *row_var(const kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__lsym *s = e->kind == KB_TE_NAME ? kb_tile__lw_lookup(L, e->name) : NULL;
	return s && !s->packed && !s->stream && is_row_f32(&s->type) ? s : NULL;
}

/* sum(t, axis = 1, keep = true) of an [RW, C > 1] tile t, f32. */
static bool kept_row_sum(const kb_tile__expr *e)
{
	return e->kind == KB_TE_CALL && !strcmp(e->name, "sum") && e->nargs == 1 && is_row_f32(&e->type) &&
	       e->args[0]->type.rank == 2 && e->args[0]->type.ext[1] > 1;
}

const kb_tile__expr *kb_tile__rows_lazy_factor(const kb_tile__lw *L, const kb_tile__expr *init, int k)
{
	if (init->kind != KB_TE_BINARY || init->op != KB_TOP_MUL || kb_tile__compute(init->type.dtype) != KB_TILE_F32)
		return NULL;
	const kb_tile__expr *r = init->args[k], *x = init->args[1 - k];
	if (!row_var(L, r) || x->type.rank != 2 || x->type.ext[1] == 1 ||
	    kb_tile__compute(x->type.dtype) != KB_TILE_F32)
		return NULL;
	return r;
}

void kb_tile__rows_lazy_scale(kb_tile__lw *L, const char *c, const char *r, long long C)
{
	long long n = C / 2 * L->rows_mt;
	kb_tile__line(L, "bool kb_one_ = true; /* %s is 1 in this thread's rows */\n", r);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int rr_ = 0; rr_ < %d; rr_++)\n", 2 * L->rows_mt);
	kb_tile__line(L, "\tkb_one_ = kb_one_ && %s[rr_] == 1.0f;\n", r);
	kb_tile__line(L, "if (!(KB_LAZY_RESCALE < 0 ? %d : KB_LAZY_RESCALE) || kb_warp_any(!kb_one_)) /* a row of "
		      "the warp is rescaled (else x * 1: x) */\n", L->rows_mt == 2 || C <= 64);
	kb_tile__line(L, "\t#pragma unroll\n");
	kb_tile__line(L, "\tfor (int i_ = 0; i_ < %lld; i_++)\n", n);
	kb_tile__line(L, "\t\t%s[i_] *= %s[(i_) %% %d / 2];\n", c, r, 4 * L->rows_mt);
}

/* ===== name counts over a loop's statements ===== */

typedef struct {
	const char *name;
	int reads, assigns, defines;
} refs_ctx;

static kb_tile__walkret ref_expr(const kb_tile__expr *e, void *vctx)
{
	refs_ctx *c = vctx;
	c->reads += is_name(e, c->name);
	return KB_TWALK_ON;
}

static kb_tile__walkret ref_stmt(const kb_tile__stmt *st, void *vctx)
{
	refs_ctx *c = vctx;
	if ((st->kind == KB_TS_ASSIGN || st->kind == KB_TS_FOR) && !strcmp(st->name, c->name)) {
		c->assigns++;
		c->defines += st->kind == KB_TS_FOR || st->defines;
	}
	return KB_TWALK_ON;
}

static refs_ctx refs(kb_tile__stmt *const *v, int n, const char *name)
{
	refs_ctx c = {.name = name};
	kb_tile__walk_stmts(v, n, ref_stmt, ref_expr, &c);
	return c;
}

static bool mentions(const kb_tile__expr *e, const char *name)
{
	return e && kb_tile__walk_expr(e, kb_tile__is_name, (void *)name);
}

/* ===== row sums folded after their loop ===== */

/* The kept sum of st's update `x = x * y + sum(...)` (and the forms above),
 * its factor y in *y (NULL: none), or NULL. */
static const kb_tile__expr *sum_update(const kb_tile__stmt *st, const kb_tile__expr **y)
{
	const kb_tile__expr *v = st->value;
	*y = NULL;
	if (st->kind != KB_TS_ASSIGN || st->defines || !v)
		return NULL;
	if (st->op == KB_TOP_ADD)
		return kept_row_sum(v) ? v : NULL;
	if (st->op || v->kind != KB_TE_BINARY || v->op != KB_TOP_ADD)
		return NULL;
	for (int d = 0; d < 2; d++) {
		const kb_tile__expr *s = v->args[d], *t = v->args[1 - d];
		if (!kept_row_sum(s))
			continue;
		if (is_name(t, st->name))
			return s;
		if (t->kind != KB_TE_BINARY || t->op != KB_TOP_MUL)
			continue;
		for (int k = 0; k < 2; k++)
			if (is_name(t->args[k], st->name) &&
			    (t->args[1 - k]->type.rank == 0 || t->args[1 - k]->type.ext[1] == 1)) {
				*y = t->args[1 - k];
				return s;
			}
	}
	return NULL;
}

bool kb_tile__rows_deferred(const kb_tile__lw *L, const kb_tile__expr *sum)
{
	for (int i = 0; i < L->ndsum; i++)
		if (L->dsum[i] == sum)
			return true;
	return false;
}

int kb_tile__rows_defer_open(kb_tile__lw *L, const kb_tile__stmt *loop)
{
	int mark = L->ndsum;
	for (int i = 0; i < loop->nbody && L->ndsum < KB_TILE_NDSUM; i++) {
		const kb_tile__stmt *st = loop->body[i];
		const kb_tile__expr *y, *s = sum_update(st, &y);
		const kb_tile__lsym *x = s ? kb_tile__lw_lookup(L, st->name) : NULL;
		if (!x || x->packed || x->stream || !is_row_f32(&x->type))
			continue;
		refs_ctx r = refs(loop->body, loop->nbody, st->name);
		if (r.assigns != 1 || r.defines || r.reads != (st->op ? 0 : 1))
			continue;
		bool other = false; /* y or the sum's operand names another loop-carried sum */
		for (int j = 0; j < loop->nbody && !other; j++) {
			const kb_tile__expr *y2, *s2 = sum_update(loop->body[j], &y2);
			other = j != i && s2 && (mentions(y, loop->body[j]->name) ||
						 mentions(s->args[0], loop->body[j]->name));
		}
		if (other)
			continue;
		L->dsum[L->ndsum] = s;
		L->dvar[L->ndsum++] = kb_xstrdup(x->c);
		kb_tile__line(L, "/* %s: each lane's part of its rows' sums while the loop runs (lane 0 of a quad "
			      "starts from %s, the others from 0), folded across the quad after it */\n", st->name,
			      st->name);
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int h_ = 0; h_ < %d; h_++)\n", 2 * L->rows_mt);
		kb_tile__line(L, "\t%s[h_] = (int)threadIdx.x %% 4 == 0 ? %s[h_] : 0.0f;\n", x->c, x->c);
	}
	return mark;
}

void kb_tile__rows_defer_close(kb_tile__lw *L, int mark)
{
	for (int i = mark; i < L->ndsum; i++) {
		kb_tile__line(L, "/* %s: the quad's parts folded */\n", L->dvar[i]);
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int o_ = 1; o_ < 4; o_ *= 2)\n");
		kb_tile__line(L, "\tfor (int h_ = 0; h_ < %d; h_++)\n", 2 * L->rows_mt);
		kb_tile__line(L, "\t\t%s[h_] += __shfl_xor_sync(0xffffffff, %s[h_], o_);\n", L->dvar[i], L->dvar[i]);
		free(L->dvar[i]);
	}
	L->ndsum = mark;
}

/* ===== the lazy rescale moved to its factor's statement ===== */

const kb_tile__expr *kb_tile__rows_prescaled(const kb_tile__lw *L, const kb_tile__expr *init)
{
	for (int i = 0; i < L->nhoisted; i++)
		if (L->hoisted[i] == init)
			return init->args[L->hoisted_x[i]];
	return NULL;
}

/* The start x * r of st's `x = x * r + dot(...)` (r named rn), the side of
 * x in *kx, or NULL. */
static const kb_tile__expr *dot_start(const kb_tile__lw *L, const kb_tile__stmt *st, const char *rn, int *kx)
{
	const kb_tile__expr *v = st->value;
	if (st->kind != KB_TS_ASSIGN || st->defines || st->op || !v || v->kind != KB_TE_BINARY ||
	    v->op != KB_TOP_ADD || v->type.dtype != KB_TILE_F32)
		return NULL;
	for (int d = 0; d < 2; d++) {
		const kb_tile__expr *dt = v->args[d], *init = v->args[1 - d];
		if (dt->kind != KB_TE_CALL || strcmp(dt->name, "dot") || !kb_tile__type_eq(&dt->type, &v->type) ||
		    !kb_tile__type_eq(&init->type, &v->type) || mentions(dt, st->name))
			continue;
		for (int k = 0; k < 2; k++) {
			const kb_tile__expr *r = kb_tile__rows_lazy_factor(L, init, k);
			if (r && is_name(r, rn) && is_name(init->args[1 - k], st->name)) {
				*kx = 1 - k;
				return init;
			}
		}
	}
	return NULL;
}

void kb_tile__rows_hoist(kb_tile__lw *L, kb_tile__stmt *const *v, int n, int i)
{
	const kb_tile__stmt *def = v[i];
	if (def->kind != KB_TS_ASSIGN || L->nhoisted >= KB_TILE_NDSUM || L->rows_ovl)
		return; /* (overlapped, x is in flight there: lower_rowwg.c) */
	const kb_tile__lsym *r = kb_tile__lw_lookup(L, def->name);
	if (!r || r->packed || r->stream || !is_row_f32(&r->type))
		return;
	int k = i + 1, kx = 0;
	const kb_tile__expr *init = NULL;
	for (; k < n && !(init = dot_start(L, v[k], def->name, &kx)); k++)
		if (refs(&v[k], 1, def->name).assigns)
			return; /* r assigned again before a dot starts from x * r */
	const kb_tile__lsym *x = init ? kb_tile__lw_lookup(L, v[k]->name) : NULL;
	if (!x || x->packed || x->stream || x->type.rank != 2 || x->type.dtype != KB_TILE_F32)
		return; /* (a 16-bit x would be rounded once more, in place) */
	for (int j = i + 1; j < k; j++) {
		refs_ctx c = refs(&v[j], 1, v[k]->name);
		if (c.reads || c.assigns)
			return; /* x read or written between */
	}
	L->hoisted[L->nhoisted] = init;
	L->hoisted_x[L->nhoisted++] = kx;
	kb_tile__line(L, "{ /* line %d's %s * %s, here where %s is assigned: what comes between is free to overlap "
		      "the dot's mmas */\n", v[k]->line, v[k]->name, def->name, def->name);
	L->depth++;
	kb_tile__rows_lazy_scale(L, x->c, r->c, init->type.ext[1]);
	kb_tile__block_close(L, 1);
}

/* ===== kept reductions along axis 1 ===== */

/* c's rows folded across the quad: two XOR shuffles (1, 2) a row. */
static void quad_fold(kb_tile__lw *L, const char *c, bool sum, const char *op)
{
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int o_ = 1; o_ < 4; o_ *= 2)\n");
	if (L->rows_mt != 1) {
		kb_tile__line(L, "\tfor (int h_ = 0; h_ < %d; h_++) /* each row the thread holds */\n", L->rows_mt * 2);
		if (sum)
			kb_tile__line(L, "\t\t%s[h_] += __shfl_xor_sync(0xffffffff, %s[h_], o_);\n", c, c);
		else
			kb_tile__line(L, "\t\t%s[h_] = %s(%s[h_], __shfl_xor_sync(0xffffffff, %s[h_], o_));\n", c, op,
				      c, c);
	} else if (sum)
		kb_tile__line(L, "\t%s[0] += __shfl_xor_sync(0xffffffff, %s[0], o_), %s[1] += __shfl_xor_sync(0xffffffff, "
			      "%s[1], o_);\n", c, c, c, c);
	else
		kb_tile__line(L, "\t%s[0] = %s(%s[0], __shfl_xor_sync(0xffffffff, %s[0], o_)), %s[1] = %s(%s[1], "
			      "__shfl_xor_sync(0xffffffff, %s[1], o_));\n", c, op, c, c, c, op, c, c);
}

void kb_tile__rows_reduce(kb_tile__lw *L, const kb_tile__expr *e, int64_t C)
{
	const kb_tile__expr *t = e->args[0];
	int64_t TC = t->type.ext[1];
	bool sum = !strcmp(e->name, "sum");
	const char *ct = kb_tile__ctype(e->type.dtype);
	const char *op = sum ? NULL : kb_tile__minmax(e->name, e->type.dtype);
	const char *id = kb_tile__reduce_id(e);
	kb_buf x = KB_BUF_INIT, at = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	kb_tile__rows_at(L, TC, &at);
	char *c = kb_tile__new_tmp(L);
	int S = 4 * L->rows_mt;
	if (L->rows_mt == 1)
		kb_tile__line(L, "%s %s[2] = {%s, %s}; /* %s along axis 1: a thread's slots, then its quad */\n", ct, c,
			      id, id, e->name);
	else
		kb_tile__line(L, "%s %s[%d] = {%s, %s, %s, %s}; /* %s along axis 1: a thread's slots (two row tiles), "
			      "then its quad */\n", ct, c, S / 2, id, id, id, id, e->name);
	kb_tile__slot_head(L, kb_tile__slots_rc(L, 0, TC), at.s, "(void)r_, (void)c_, (void)f_;\n");
	kb_tile__line(L, "const %s v_ = %s;\n", ct, x.s);
	if (sum)
		kb_tile__line(L, "%s[i_ %% %d / 2] += v_;\n", c, S);
	else
		kb_tile__line(L, "%s[i_ %% %d / 2] = %s(%s[i_ %% %d / 2], v_);\n", c, S, op, c, S);
	kb_tile__block_close(L, 1);
	if (kb_tile__rows_deferred(L, e))
		kb_tile__line(L, "/* the quad's parts: folded after the loop (lower_rowacc.c) */\n");
	else
		quad_fold(L, c, sum, op);
	kb_tile__add_mat(L, e, c, false);
	if (C != 1)
		L->mats[L->nmats - 1].rowpick = true;
	kb_buf_free(&x);
	kb_buf_free(&at);
}

void kb_tile__rows_pick(kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__lsym *s = kb_tile__lw_lookup(L, e->name);
	kb_tile__add_mat(L, e, kb_xstrdup(s ? s->c : e->name), false);
	L->mats[L->nmats - 1].rowpick = true;
}
