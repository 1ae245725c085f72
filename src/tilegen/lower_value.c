/*
 * lower_value.c - streamed loads and stores of a tile program as CUDA C: a
 * load that one element-wise statement uses is read a group at a time
 * where it is used (its access and groups from lower_load.c), and stores
 * (16-byte streaming stores where aligned and in range, the atomics).
 * lower_stmt.c decides what streams (lower.c explains the layout);
 * lower_reduce.c materializes the rest before the statement.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== streamed loads: read a group at a time where a statement uses them ===== */

bool kb_tile__uses_stream(const kb_tile__lw *L, const kb_tile__expr *e)
{
	if (!e)
		return false;
	if (e->kind == KB_TE_NAME) {
		const kb_tile__lsym *s = kb_tile__lw_lookup(L, e->name);
		return s && s->stream;
	}
	const kb_tile__mat *m = kb_tile__mat_of(L, e);
	if (m)
		return m->stream;
	for (int k = 0; k < e->nargs; k++)
		if (kb_tile__uses_stream(L, e->args[k]))
			return true;
	for (int k = 0; k < e->nkw; k++)
		if (kb_tile__uses_stream(L, e->kwv[k]))
			return true;
	return false;
}

bool kb_tile__streamable(const kb_tile__lw *L, const kb_tile__expr *e)
{
	if (!kb_tile__is_load(e) || e->type.rank != 1 || L->mma.on)
		return false;
	const kb_tile__expr *s = e->args[0];
	const kb_tile_param *t = kb_tile__param(L, s->name);
	if (!t || t->rank != s->nidx || !s->nidx || !s->idx[s->nidx - 1].hi)
		return false;
	for (int k = 0; k < e->nkw; k++)
		if (kb_tile__reads_mem(e->kwv[k]) || kb_tile__uses_stream(L, e->kwv[k]))
			return false;
	return true;
}

/* A new stream of the statement: load e, read into kb_sN[V]. */
static const char *add_stream(kb_tile__lw *L, const kb_tile__expr *e)
{
	for (int k = 0; k < L->nstrs; k++)
		if (L->strs[k].load == e)
			return L->strs[k].c;
	kb_tile__stream *s = KB_PUSH(L->strs, L->nstrs, L->capstrs);
	s->load = e;
	s->c = kb_xasprintf("kb_s%d", ++L->nstream);
	return s->c;
}

/* Materializes what e needs before a group loop computes it: its loads
 * and reductions, but a load in an element-wise place (not under a
 * reduction or a load's keyword) that can stream (and that the row-in-registers
 * branch does not keep), from another tensor than
 * `avoid` (the one the statement writes), becomes a stream; so do the
 * streamed variables e names.  Whether e reads any stream. */
static bool materialize_streams(kb_tile__lw *L, const kb_tile__expr *e, const char *avoid, bool dry)
{
	if (e->kind == KB_TE_NAME) {
		const kb_tile__lsym *s = kb_tile__lw_lookup(L, e->name);
		if (s && s->stream && !dry)
			add_stream(L, s->stream);
		return s && s->stream;
	}
	bool kept = L->fast && kb_tile__is_load(e) && kb_tile__kept_of(L, e); /* in registers */
	if (kb_tile__is_load(e) && !kept && kb_tile__streamable(L, e) &&
	    (!avoid || strcmp(avoid, e->args[0]->name))) {
		if (!dry) {
			kb_tile__add_mat(L, e, kb_xstrdup(add_stream(L, e)), false);
			L->mats[L->nmats - 1].stream = true;
		}
		return true;
	}
	if (kb_tile__is_load(e) || kb_tile__is_reduction(e)) {
		if (!dry)
			kb_tile__materialize(L, e, NULL);
		return false;
	}
	bool any = false;
	for (int k = 0; k < e->nargs; k++)
		any = materialize_streams(L, e->args[k], avoid, dry) || any;
	for (int k = 0; k < e->nkw; k++)
		if (!dry)
			kb_tile__materialize(L, e->kwv[k], NULL);
	return any;
}

bool kb_tile__has_streams(kb_tile__lw *L, const kb_tile__expr *e)
{
	return materialize_streams(L, e, NULL, true);
}

/* Before a group loop: each stream's access (kb_sNp_, kb_sNlim_, ...). */
static void stream_heads(kb_tile__lw *L)
{
	for (int k = 0; k < L->nstrs; k++) {
		kb_tile__access a;
		if (!kb_tile__slice_access(L, L->strs[k].load->args[0], &a))
			continue;
		kb_tile__access_heads(L, &a, true, kb_tile__vectorizable(a.t->dtype), L->strs[k].c);
		kb_tile__access_free(&a);
	}
}

/* In the group loop (e_, V_ set): each stream's group k_ into kb_sN[V]. */
static void stream_groups(kb_tile__lw *L)
{
	for (int k = 0; k < L->nstrs; k++) {
		const kb_tile__expr *e = L->strs[k].load;
		const kb_tile_param *t = kb_tile__param(L, e->args[0]->name);
		const char *ct = kb_tile__ctype(e->type.dtype), *c = L->strs[k].c;
		kb_buf other = KB_BUF_INIT;
		const kb_tile__expr *mask = kb_tile__load_kws(L, e, &other);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s[%d];\n", ct, c, L->V);
		kb_tile__load_group(L, t->dtype, ct, e->args[0]->idx[e->args[0]->nidx - 1].extent, c, "", c,
			   other.s, false, mask);
		if (mask) {
			kb_buf m = KB_BUF_INIT, i = KB_BUF_INIT;
			kb_buf_catf(&i, "k_ * %d + j_", L->V);
			kb_tile__cexpr(L, mask, i.s, &m);
			kb_buf_free(&i);
			kb_tile__ind(L);
			kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++)\n", L->V);
			kb_tile__ind(L);
			kb_buf_catf(L->o, "\tif (!(%s))\n", m.s);
			kb_tile__ind(L);
			kb_buf_catf(L->o, "\t\t%s[j_] = (%s)(%s);\n", c, ct, other.s);
			kb_buf_free(&m);
		}
		kb_buf_free(&other);
	}
}

void kb_tile__assign_groups(kb_tile__lw *L, const char *dst, const kb_tile__type *t,
			    const kb_tile__expr *value, bool declare, int op)
{
	int64_t S = kb_tile__slots(L, t->ext[0]);
	kb_buf x = KB_BUF_INIT;
	char opb[4] = "=";
	if (op)
		snprintf(opb, sizeof opb, "%c=", op);
	materialize_streams(L, value, NULL, false);
	kb_tile__cexpr(L, value, "k_ * V_ + j_", &x);
	if (declare) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s[%lld];\n", kb_tile__ctype(t->dtype), dst, (long long)S);
	}
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	stream_heads(L);
	kb_tile__group_for(L, S);
	stream_groups(L);
	if (strstr(x.s, "V_")) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const int V_ = %d;\n", L->V);
	}
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++)\n", L->V);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[k_ * %d + j_] %s %s;\n", dst, L->V, opb, x.s);
	kb_tile__block_close(L, 2);
	kb_buf_free(&x);
}

/* ===== stores ===== */

/* The 16-byte stores of one group of V values vals[0..V), streaming
 * (evict first): a tile program writes each element once and does not read
 * it back, so the L2 is left to its inputs. */
static void vector_store(kb_tile__lw *L, kb_tile_dtype t)
{
	int per = 16 / kb_tile__elem_size(t);
	for (int c = 0; c < L->V / per; c++) {
		kb_tile__ind(L);
		if (t == KB_TILE_F32) {
			kb_buf_catf(L->o, "__stcs((float4 *)(p_ + e_ + %d), make_float4(vals_[%d], vals_[%d], "
				    "vals_[%d], vals_[%d]));\n", c * per, c * per, c * per + 1, c * per + 2,
				    c * per + 3);
		} else {
			bool h = t == KB_TILE_F16;
			kb_buf_catf(L->o, "{ uint4 v_; %s *h_ = (%s *)&v_; for (int j_ = 0; j_ < 4; j_++) h_[j_] = "
				    "%s(vals_[%d + 2 * j_], vals_[%d + 2 * j_ + 1]); __stcs((uint4 *)(p_ + e_ + %d), v_); }\n",
				    h ? "__half2" : "__nv_bfloat162", h ? "__half2" : "__nv_bfloat162",
				    h ? "__floats2half2_rn" : "__floats2bfloat162_rn", c * per, c * per, c * per);
		}
	}
}

/* The write of element value el (C, of dtype t) at p[i] (at *p when i is
 * NULL): a plain store, or atomic_add / atomic_max (an f32 max by the
 * ordering of its bits: a signed max for values >= 0, an unsigned min for
 * negative ones). */
static void write_elem(kb_buf *o, int op, kb_tile_dtype t, const char *p, const char *i,
		       const char *el)
{
	char *at = i ? kb_xasprintf("%s + %s", p, i) : kb_xstrdup(p);
	if (op == KB_TATOM_ADD)
		kb_buf_catf(o, "atomicAdd(%s, %s);\n", at, el);
	else if (op == KB_TATOM_MAX && t == KB_TILE_F32)
		kb_buf_catf(o, "{ const float v_ = %s; if (v_ >= 0.0f) atomicMax((int *)(%s), "
			    "__float_as_int(v_)); else atomicMin((unsigned int *)(%s), __float_as_uint(v_)); }\n",
			    el, at, at);
	else if (op == KB_TATOM_MAX)
		kb_buf_catf(o, "atomicMax(%s, %s);\n", at, el);
	else if (i)
		kb_buf_catf(o, "%s[%s] = %s;\n", p, i, el);
	else
		kb_buf_catf(o, "*(%s) = %s;\n", p, el);
	free(at);
}

void kb_tile__lower_store(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__expr *sl = st->slice;
	kb_tile__materialize_index(L, sl); /* a scatter: y[t[i]] */
	if (sl->nidx && sl->idx[sl->nidx - 1].hi && !L->mma.on) {
		materialize_streams(L, st->value, sl->name, false);
		if (st->mask)
			materialize_streams(L, st->mask, sl->name, false);
	} else {
		kb_tile__materialize(L, st->value, NULL);
		if (st->mask)
			kb_tile__materialize(L, st->mask, NULL);
	}
	kb_tile__access a;
	if (!kb_tile__slice_access(L, st->slice, &a))
		return;
	kb_tile_dtype t = a.t->dtype;
	kb_buf v = KB_BUF_INIT, m = KB_BUF_INIT, el = KB_BUF_INIT;
	if (!a.ranges) {
		kb_tile__cexpr(L, st->value, "0", &v);
		kb_tile__to_elem(t, v.s, &el);
		kb_tile__ind(L);
		/* a scalar: every thread has it; one adds it in */
		kb_buf_catf(L->o, st->op ? "if (%s && threadIdx.x == 0) " : "if (%s) ", a.ok.s);
		write_elem(L->o, st->op, t, a.base.s, NULL, el.s);
		goto out;
	}
	int64_t E = a.extent, S = kb_tile__slots(L, E);
	bool vec = kb_tile__vectorizable(t) && !st->mask && !st->op;
	char b1[96], b2[32];
	kb_tile__cexpr(L, st->value, "k_ * V_ + j_", &v);
	if (st->mask) {
		kb_buf_cat(&m, " && ");
		kb_tile__cexpr(L, st->mask, "k_ * V_ + j_", &m);
	}
	kb_tile__group_open(L, &a, false, vec);
	stream_heads(L);
	kb_tile__group_for(L, S);
	stream_groups(L);
	if (strstr(v.s, "V_") || (m.s && strstr(m.s, "V_"))) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const int V_ = %d;\n", L->V);
	}
	if (vec) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s vals_[%d];\n", kb_tile__ctype(st->value->type.dtype), L->V);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++)\n", L->V);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\tvals_[j_] = %s;\n", v.s);
		snprintf(b2, sizeof b2, "e_ + %d", L->V - 1);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "if (ok_ && al_ && e_ + %d <= lim_%s) {\n", L->V,
			    kb_tile__past_end(L, E, b2, b1, sizeof b1));
		L->depth++;
		vector_store(L, t);
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "} else {\n");
		L->depth++;
		kb_buf_reset(&v);
		kb_buf_cat(&v, "vals_[j_]");
	}
	kb_tile__to_elem(t, v.s, &el);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int j_ = 0; j_ < %d; j_++)\n", L->V);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\tif (ok_ && e_ + j_ < lim_%s%s)\n", kb_tile__past_end(L, E, "e_ + j_", b1, sizeof b1),
		    m.len ? m.s : "");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\t\t");
	write_elem(L->o, st->op, t, "p_", "e_ + j_", el.s);
	kb_tile__block_close(L, vec ? 3 : 2);
out:
	kb_buf_free(&v);
	kb_buf_free(&m);
	kb_buf_free(&el);
	kb_tile__access_free(&a);
}

