/*
 * plan_dot.c - which loops of a tile kernel feed a dot, and the plan that
 * lower_dot.c emits for them: the operands each loop loads, the warp grid
 * over the [BM, BN] accumulator, the pipeline's stages and its shared
 * memory; and which [BM, BN] values may follow the loop (element-wise in
 * the accumulator's layout).  A program that is no such loop is reported
 * at its place here, before anything is emitted.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== finding the dots ===== */

static bool is_dot(const kb_tile__expr *e)
{
	return e && e->kind == KB_TE_CALL && !strcmp(e->name, "dot");
}

static bool has_dot(const kb_tile__expr *e)
{
	if (!e)
		return false;
	if (is_dot(e))
		return true;
	for (int i = 0; i < e->nargs; i++)
		if (has_dot(e->args[i]))
			return true;
	for (int i = 0; i < e->nkw; i++)
		if (has_dot(e->kwv[i]))
			return true;
	return false;
}

static bool stmts_have_dot(kb_tile__stmt *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const kb_tile__stmt *st = v[i];
		if (has_dot(st->value) || stmts_have_dot(st->body, st->nbody) ||
		    stmts_have_dot(st->els, st->nels))
			return true;
	}
	return false;
}

bool kb_tile__kernel_has_dot(const kb_tile__kernel_ast *k)
{
	return stmts_have_dot(k->body, k->nbody);
}

/* Whether e is trans(x): a dot's b operand given as [n, k]. */
static bool is_trans(const kb_tile__expr *e)
{
	return e->kind == KB_TE_CALL && !strcmp(e->name, "trans") && e->nargs == 1;
}

static bool stmts_have_dot_nt(kb_tile__stmt *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const kb_tile__stmt *st = v[i];
		const kb_tile__expr *d = st->kind == KB_TS_FOR ? NULL : st->value;
		while (d && d->kind == KB_TE_BINARY && d->nargs == 2) /* acc = acc + dot(...) */
			d = d->args[1];
		if ((d && is_dot(d) && d->nargs == 2 && is_trans(d->args[1])) ||
		    stmts_have_dot_nt(st->body, st->nbody) || stmts_have_dot_nt(st->els, st->nels))
			return true;
	}
	return false;
}

bool kb_tile__kernel_has_dot_nt(const kb_tile__kernel_ast *k)
{
	return stmts_have_dot_nt(k->body, k->nbody);
}

/* The dot of `acc += dot(x, w)` or `acc = acc + dot(x, w)`, else NULL. */
static const kb_tile__expr *update_dot(const kb_tile__stmt *st)
{
	if (st->kind != KB_TS_ASSIGN || st->defines || !st->value)
		return NULL;
	const kb_tile__expr *v = st->value;
	if (st->op == KB_TOP_ADD && is_dot(v))
		return v;
	if (!st->op && v->kind == KB_TE_BINARY && v->op == KB_TOP_ADD && is_dot(v->args[1]) &&
	    v->args[0]->kind == KB_TE_NAME && !strcmp(v->args[0]->name, st->name))
		return v->args[1];
	return NULL;
}

/* Whether v is zero: an integer or float literal 0. */
static bool is_zero(const kb_tile__expr *v)
{
	return (v->kind == KB_TE_INT && v->ival == 0) || (v->kind == KB_TE_FLOAT && v->fval == 0);
}

/* Whether the statement loads a dot operand: `x = load(t[r : r + R, c : c + C])`
 * with no mask and zeros (or nothing) outside the tensor. */
static bool operand_load(kb_tile__lw *L, const kb_tile__stmt *st, bool report)
{
	const kb_tile__expr *v = st->value;
	if (st->kind != KB_TS_ASSIGN || !st->defines || st->op || !v || !kb_tile__is_load(v) ||
	    v->type.rank != 2)
		return false;
	for (int k = 0; k < v->nkw; k++) {
		bool zero = !strcmp(v->kw[k], "other") && is_zero(v->kwv[k]);
		if (!zero) {
			if (report)
				kb_tile__fail(L, v->kwv[k]->line, v->kwv[k]->col, v->kwv[k]->len,
					      "a dot operand's load with mask= or a nonzero other=");
			return false;
		}
	}
	return true;
}

/* ===== the plan: warps, stages, shared memory ===== */

/* The operand a dot argument names: a load in the loop (by variable or in
 * place); its index in lp->ops, or -1 after reporting. */
static int operand_of(kb_tile__lw *L, kb_tile__dotloop *lp, const kb_tile__expr *x)
{
	for (int i = 0; i < lp->nops; i++) {
		const kb_tile__dotop *o = &lp->ops[i];
		if ((x->kind == KB_TE_NAME && o->name && !strcmp(o->name, x->name)) || o->load == x)
			return i;
	}
	if (kb_tile__is_load(x) && x->type.rank == 2) {
		for (int k = 0; k < x->nkw; k++)
			if (strcmp(x->kw[k], "other") || !is_zero(x->kwv[k])) {
				kb_tile__fail(L, x->line, x->col, x->len,
					      "a dot operand's load with mask= or a nonzero other=");
				return -1;
			}
		kb_tile__dotop *o = KB_PUSH(lp->ops, lp->nops, lp->capops);
		memset(o, 0, sizeof *o);
		o->load = x;
		return lp->nops - 1;
	}
	kb_tile__fail(L, x->line, x->col, x->len, is_trans(x) ? "trans() of a dot's first operand, or "
		      "of a transposed one (load it as [m, k])" : "a dot operand that is not loaded in "
		      "the dot's loop (load it there)");
	return -1;
}

/* Reads one loop that holds a dot into lp; false after reporting. */
static bool read_loop(kb_tile__lw *L, const kb_tile__stmt *loop, kb_tile__dotloop *lp)
{
	memset(lp, 0, sizeof *lp);
	lp->loop = loop;
	bool ok = true;
	for (int i = 0; i < loop->nbody; i++) {
		const kb_tile__stmt *st = loop->body[i];
		if (operand_load(L, st, true)) {
			kb_tile__dotop *o = KB_PUSH(lp->ops, lp->nops, lp->capops);
			memset(o, 0, sizeof *o);
			o->name = st->name;
			o->load = st->value;
			o->line = st->line;
			continue;
		}
		const kb_tile__expr *d = update_dot(st);
		if (!d) {
			kb_tile__fail(L, st->line, st->col, st->len,
				      "in a loop with dot, a statement other than a load of a dot operand "
				      "or `acc += dot(x, w)`");
			ok = false;
			continue;
		}
		kb_tile__dotupd *u = KB_PUSH(lp->upds, lp->nupds, lp->capupds);
		u->acc = st->name;
		u->dot = d;
		u->line = st->line;
		u->bt = is_trans(d->args[1]);
		u->a = operand_of(L, lp, d->args[0]);
		u->b = operand_of(L, lp, u->bt ? d->args[1]->args[0] : d->args[1]);
		ok = ok && u->a >= 0 && u->b >= 0;
	}
	return ok;
}

static bool same_shape(const kb_tile__type *t, int64_t r, int64_t c)
{
	return t->rank == 2 && t->ext[0] == r && t->ext[1] == c;
}

/* Checks the dots' shapes against the kernel's [BM, BN] and each BK. */
static bool check_shapes(kb_tile__lw *L, const kb_tile__dotloop *lp)
{
	kb_tile__mma *m = &L->mma;
	for (int i = 0; i < lp->nupds; i++) {
		const kb_tile__dotupd *u = &lp->upds[i];
		const kb_tile__type *a = &lp->ops[u->a].load->type, *b = &lp->ops[u->b].load->type;
		int64_t bn = b->ext[u->bt ? 0 : 1]; /* trans(w): w is [n, k] */
		if (!m->BM) {
			m->BM = a->ext[0];
			m->BN = bn;
		}
		if (a->ext[0] != m->BM || bn != m->BN) {
			kb_tile__fail(L, u->dot->line, u->dot->col, u->dot->len,
				      "a second dot result shape in one kernel");
			return false;
		}
		if (i && a->ext[1] != lp->ops[lp->upds[0].a].load->type.ext[1]) {
			kb_tile__fail(L, u->dot->line, u->dot->col, u->dot->len,
				      "dots of different inner extents in one loop (the loop's steps of 16 "
				      "of k are shared)");
			return false;
		}
		if (a->ext[1] % 16) {
			char what[160];
			snprintf(what, sizeof what, "dot with an inner extent of %lld (a multiple of 16 is)",
				 (long long)a->ext[1]);
			kb_tile__fail(L, u->dot->line, u->dot->col, u->dot->len, what);
			return false;
		}
	}
	return true;
}

/* The warp grid for [BM, BN] and W warps: pieces of m16 x n16, the most
 * square warp block; false when none divides the tile. */
static bool warp_grid(kb_tile__mma *m, int warps)
{
	int64_t best = -1;
	for (int wm = 1; wm <= warps; wm++) {
		if (warps % wm)
			continue;
		int wn = warps / wm;
		if (m->BM % (16 * wm) || m->BN % (16 * wn))
			continue;
		int64_t tm = m->BM / wm, tn = m->BN / wn, d = tm > tn ? tm - tn : tn - tm;
		if (best < 0 || d < best) {
			best = d;
			m->WM = wm;
			m->WN = wn;
		}
	}
	if (best < 0)
		return false;
	m->MT = (int)(m->BM / m->WM / 16);
	m->NT = (int)(m->BN / m->WN / 8);
	m->MS = 16;
	return true;
}

/* The value of the kernel's top-level `const STAGES`, or 3. */
static int stages_of(kb_tile__lw *L)
{
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *st = L->k->body[i];
		if (st->kind == KB_TS_CONST && !strcmp(st->name, "STAGES")) {
			if (st->value->cval < 2 || st->value->cval > 8) {
				kb_tile__fail(L, st->line, st->col, st->len,
					      "STAGES outside 2 to 8 (the depth of a dot's operand pipeline)");
				return 3;
			}
			return (int)st->value->cval;
		}
	}
	return 3;
}

/* The first dot under e (e has one). */
static const kb_tile__expr *first_dot(const kb_tile__expr *e)
{
	if (is_dot(e))
		return e;
	for (int i = 0; i < e->nargs; i++)
		if (has_dot(e->args[i]))
			return first_dot(e->args[i]);
	for (int i = 0; i < e->nkw; i++)
		if (has_dot(e->kwv[i]))
			return first_dot(e->kwv[i]);
	return e;
}

/* Whether a statement of the loop's own body has a dot in its value. */
static bool feeds_dot(const kb_tile__stmt *loop)
{
	for (int j = 0; j < loop->nbody; j++)
		if (has_dot(loop->body[j]->value))
			return true;
	return false;
}

/* Every loop with a dot in its own body becomes a dot loop (read_loop
 * checks what else it holds); a dot anywhere else is an error. */
static void find_loops(kb_tile__lw *L, kb_tile__stmt *const *v, int n, const kb_tile__stmt *in)
{
	for (int i = 0; i < n; i++) {
		const kb_tile__stmt *st = v[i];
		if (st->kind == KB_TS_FOR && feeds_dot(st)) {
			kb_tile__dotloop *lp = KB_PUSH(L->dloops, L->ndloops, L->capdloops);
			if (!read_loop(L, st, lp) || !check_shapes(L, lp))
				L->mma.bad = true;
			continue;
		}
		if (has_dot(st->value)) {
			const kb_tile__expr *d = first_dot(st->value);
			kb_tile__fail(L, d->line, d->col, d->len,
				      in ? "dot in a block nested in its loop"
					 : "dot outside a loop over the inner dim (write it as "
					   "`acc += dot(x, w)` in a for loop that loads x and w)");
			L->mma.bad = true;
		}
		find_loops(L, st->body, st->nbody, st->kind == KB_TS_FOR ? st : in);
		find_loops(L, st->els, st->nels, in);
	}
}

/* Whether a loop with a dot holds a statement other than a load and an
 * update (attention's softmax between its two dots): its dots are then
 * computed in the 2-d layout (lower_reduce.c's dot2), not in a dot loop. */
static bool dots_in_2d(kb_tile__stmt *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const kb_tile__stmt *st = v[i];
		if (st->kind == KB_TS_FOR && feeds_dot(st))
			for (int j = 0; j < st->nbody; j++) {
				const kb_tile__stmt *b = st->body[j];
				bool load = b->kind == KB_TS_ASSIGN && b->defines && !b->op && b->value &&
					    kb_tile__is_load(b->value);
				if (!load && !update_dot(b))
					return true;
			}
		if (dots_in_2d(st->body, st->nbody) || dots_in_2d(st->els, st->nels))
			return true;
	}
	return false;
}

bool kb_tile__plan_mma(kb_tile__lw *L)
{
	kb_tile__mma *m = &L->mma;
	memset(m, 0, sizeof *m);
	L->ndloops = 0;
	if (!kb_tile__kernel_has_dot(L->k) || dots_in_2d(L->k->body, L->k->nbody))
		return true;
	find_loops(L, L->k->body, L->k->nbody, NULL);
	if (m->bad || !L->ndloops)
		return false;
	if (!warp_grid(m, L->T / 32)) {
		const kb_tile__expr *d = L->dloops[0].upds[0].dot;
		char what[200];
		snprintf(what, sizeof what, "a dot result of [%lld, %lld] with %d warps (no grid of warps "
			 "splits it into 16 x 16 pieces)", (long long)m->BM, (long long)m->BN, L->T / 32);
		kb_tile__fail(L, d->line, d->col, d->len, what);
		return false;
	}
	m->stages = stages_of(L);
	for (int i = 0; i < L->ndloops; i++) {
		int64_t bytes = 0;
		for (int j = 0; j < L->dloops[i].nops; j++) {
			const kb_tile__type *t = &L->dloops[i].ops[j].load->type;
			bytes += t->ext[0] * t->ext[1] * 2;
		}
		if (bytes * m->stages > m->smem)
			m->smem = bytes * m->stages;
	}
	m->on = true;
	if (kb_tile__wgmma_target(L->f))
		kb_tile__plan_wgmma(L);
	return true;
}

void kb_tile__mma_free(kb_tile__lw *L)
{
	for (int i = 0; i < L->ndloops; i++) {
		free(L->dloops[i].ops);
		free(L->dloops[i].upds);
	}
	free(L->dloops);
	L->dloops = NULL;
	L->ndloops = L->capdloops = 0;
}

/* Whether a [BM, BN] value can be computed slot by slot in the mma layout:
 * scalars and [BM, BN] tiles only; false after reporting what cannot. */
/* A [BN] leaf the mma layout can read at its columns: a load of a slice
 * with one range, or a variable only such a load defines; its load. */
static const kb_tile__expr *cols_leaf(const kb_tile__lw *L, const kb_tile__expr *e)
{
	if (kb_tile__is_load(e))
		return e;
	const kb_tile__lsym *s = e->kind == KB_TE_NAME ? kb_tile__lw_lookup(L, e->name) : NULL;
	return s ? s->load : NULL;
}

/* A [BM, BN] load beside a dot's result (a residual): a slice
 * t[r : r + BM, c : c + BN] of a 2-d f32, f16 or bf16 tensor, other= a
 * scalar, no mask=. */
static bool tile2_ok(kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__expr *s = e->args[0];
	const kb_tile_param *t = kb_tile__param(L, s->name);
	bool f = t && (t->dtype == KB_TILE_F32 || t->dtype == KB_TILE_F16 || t->dtype == KB_TILE_BF16);
	for (int k = 0; k < e->nkw; k++)
		if (!strcmp(e->kw[k], "mask")) {
			kb_tile__fail(L, e->line, e->col, e->len, "mask= on a [BM, BN] load beside a dot's result");
			return false;
		}
	if (!f || t->rank != 2 || s->nidx != 2 || !s->idx[0].hi || !s->idx[1].hi) {
		kb_tile__fail(L, e->line, e->col, e->len, "a [BM, BN] load beside a dot's result other "
			      "than of a 2-d f32, f16 or bf16 tensor");
		return false;
	}
	return true;
}

bool kb_tile__mma_value_ok(kb_tile__lw *L, const kb_tile__expr *e)
{
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "arange")) { /* the columns (or the rows) */
		if ((e->type.rank == 1 && e->type.ext[0] == L->mma.BN) ||
		    same_shape(&e->type, 1, L->mma.BN) || same_shape(&e->type, L->mma.BM, 1))
			return true;
		kb_tile__fail(L, e->line, e->col, e->len, "arange of another extent than BN (or BM along "
			      "axis 0) next to a dot's [BM, BN] result");
		return false;
	}
	if (kb_tile__is_reduction(e) && e->args[0]->type.rank == 2) { /* along an axis, kept */
		if (e->type.rank == 2 && same_shape(&e->args[0]->type, L->mma.BM, L->mma.BN))
			return kb_tile__mma_value_ok(L, e->args[0]);
		kb_tile__fail(L, e->line, e->col, e->len, e->type.rank == 2 ? "a reduction of a 2-d tile "
			      "of another shape than the dot's" : "a reduction of a dot's result without keep "
			      "= true");
		return false;
	}
	if (e->type.rank == 1 && e->type.ext[0] != L->mma.BN) {
		kb_tile__fail(L, e->line, e->col, e->len, "a rank-1 tile of another extent than BN next "
			      "to a dot's [BM, BN] result");
		return false;
	}
	if (e->type.rank == 1 && (kb_tile__is_reduction(e) || (e->kind == KB_TE_NAME && !cols_leaf(L, e)))) {
		kb_tile__fail(L, e->line, e->col, e->len, "a rank-1 tile next to a dot's [BM, BN] result "
			      "other than a load (or a variable a load defines, never assigned again)");
		return false;
	}
	bool bcast = same_shape(&e->type, L->mma.BM, 1) || same_shape(&e->type, 1, L->mma.BN);
	if (e->type.rank == 2 && !same_shape(&e->type, L->mma.BM, L->mma.BN) &&
	    (!bcast || kb_tile__is_load(e) || e->kind == KB_TE_NAME)) { /* a row or column of arithmetic */
		kb_tile__fail(L, e->line, e->col, e->len, "a 2-d tile of another shape than the dot's");
		return false;
	}
	if (e->type.rank == 2 && kb_tile__is_load(e))
		return tile2_ok(L, e);
	if (e->type.rank == 2 && (kb_tile__is_reduction(e) ||
				  (e->kind == KB_TE_CALL && !strcmp(e->name, "dot")))) {
		kb_tile__fail(L, e->line, e->col, e->len, "a 2-d load outside a dot's loop");
		return false;
	}
	if (e->type.rank == 1 && cols_leaf(L, e))
		return true; /* its slice's indexes are scalars */
	for (int i = 0; i < e->nargs; i++)
		if (!kb_tile__mma_value_ok(L, e->args[i]))
			return false;
	return true;
}

/* A [BM, BN] load's pointer to its first element and the rows and
 * columns left in the tensor (kb_rN p_, r_, c_); it is read where used. */
static void tile2_heads(kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__expr *s = e->args[0];
	const kb_tile_param *t = kb_tile__param(L, s->name);
	kb_tile__materialize_index(L, s);
	for (int k = 0; k < e->nkw; k++)
		kb_tile__materialize(L, e->kwv[k], NULL);
	kb_buf r0 = KB_BUF_INIT, c0 = KB_BUF_INIT;
	kb_tile__cexpr(L, s->idx[0].lo, "0", &r0);
	kb_tile__cexpr(L, s->idx[1].lo, "0", &c0);
	char *c = kb_xasprintf("kb_res%d", ++L->ntmp);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const %s *%sp_ = %s + (size_t)(%s) * %s + (size_t)(%s); /* %s, read where "
		    "used */\n", kb_tile_ctype(t->dtype), c, t->name, r0.s, t->dims[1], c0.s, t->name);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const long long %sr_ = %s - (%s), %sc_ = %s - (%s);\n", c, t->dims[0], r0.s, c,
		    t->dims[1], c0.s);
	kb_tile__add_mat(L, e, c, false);
	L->mats[L->nmats - 1].tile2 = true;
	kb_buf_free(&r0);
	kb_buf_free(&c0);
}

/* arange(BN) beside a dot's result: the columns this thread holds, in the
 * layout of a bias row (slot j: column pair j / 2, j % 2); along axis 0
 * (arange(BM, axis = 0)), the row of each slot. */
static void mma_arange(kb_tile__lw *L, const kb_tile__expr *e)
{
	char *c = kb_tile__new_tmp(L);
	if (e->type.rank == 2 && e->type.ext[1] == 1) { /* arange(BM, axis = 0): each slot's row */
		int64_t S = kb_tile__mma_slots(L);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "int %s[%lld]; /* arange along axis 0: the rows of this thread's slots */\n",
			    c, (long long)S);
		kb_tile__ind(L);
		kb_buf_cat(L->o, "#pragma unroll\n");
		kb_tile__ind(L);
		kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t%s[i_] = wm0_ + i_ / %d * %d + (int)threadIdx.x %% 32 / 4 + i_ %% 4 / 2 * 8;\n",
			    c, 4 * L->mma.NT, L->mma.MS);
		kb_tile__add_mat(L, e, c, false);
		return;
	}
	kb_tile__ind(L);
	kb_buf_catf(L->o, "int %s[%d]; /* arange: this thread's columns of the dot's result */\n", c,
		    L->mma.NT * 2);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++)\n", L->mma.NT * 2);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[j_] = wn0_ + j_ / 2 * 8 + (int)threadIdx.x %% 4 * 2 + j_ %% 2;\n", c);
	kb_tile__add_mat(L, e, c, true);
}

void kb_tile__mma_materialize(kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__expr *load = e->type.rank == 1 ? cols_leaf(L, e) : NULL;
	if (load) { /* a bias row: read again at this thread's columns */
		kb_tile__materialize_under(L, load->args[0]);
		char *c = kb_tile__new_tmp(L);
		kb_tile__lower_load_cols(L, load, c);
		kb_tile__add_mat(L, e, c, true);
		return;
	}
	if (e->type.rank == 0) {
		kb_tile__materialize(L, e, NULL);
		return;
	}
	if (e->type.rank == 2 && kb_tile__is_load(e)) {
		tile2_heads(L, e);
		return;
	}
	if (kb_tile__mat_of(L, e))
		return;
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "arange")) {
		mma_arange(L, e);
		return;
	}
	if (kb_tile__is_reduction(e) && e->args[0]->type.rank == 2) {
		kb_tile__mma_materialize(L, e->args[0]); /* its operand first, here */
		kb_tile__mma_reduce(L, e);
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		kb_tile__mma_materialize(L, e->args[i]);
}

bool kb_tile__mma_shape(const kb_tile__lw *L, const kb_tile__type *t)
{
	return L->mma.on && same_shape(t, L->mma.BM, L->mma.BN);
}

const kb_tile__dotloop *kb_tile__dot_loop(const kb_tile__lw *L, const kb_tile__stmt *st)
{
	for (int i = 0; i < L->ndloops; i++)
		if (L->dloops[i].loop == st)
			return &L->dloops[i];
	return NULL;
}

