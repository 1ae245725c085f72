/*
 * lower_rowwg_tma.c - the row layout's producer warpgroup (lower_rowwg.c,
 * L->rows_ws: threads(256), two consumer warpgroups of 64 rows) fed as
 * kernels/attention/03_fa3.cu feeds its consumers: each b tile the loop's
 * dots read (L->pf: attention's k and v) has a ring of two stages (the
 * buffers lower_rows.c gives it), and each stage a "full" and an "empty"
 * mbarrier of its own, so k and v are handed back apart: k once S = q k^T
 * has read it, v once P V has.  The producer runs ahead of the consumers by
 * the ring, not by a trip, and waits on nothing but a stage's empty.
 *
 * The copies: where every b tile is a 16-bit load of a 2-d tensor's slice
 * whose columns are whole 64-element blocks (rows_ring_plan), the kernel
 * takes a CUtensorMap per tile (kb_tma_r0, ...; `//! tensormap ... box=(WR,
 * 64) swizzle=128 unaligned=zero`, a [B, H, N, D] tensor read as the [B H N,
 * D] rows the tile's parameter is) and one producer thread puts a stage's
 * byte count on its full mbarrier and issues WC / 64 box copies, landing
 * in the layout the descriptors read (lower_rowwg.c: [WR][64] blocks,
 * 128-byte swizzle), zeros past the tensor's rows, through the async proxy
 * (no fence) - lower_wgmma.c's kb_wg_tma and mbarrier helpers.  Where the
 * runner passed zeros for a map (rows no 16-byte multiple, a misaligned
 * buffer) or with --define KB_TMA=0, every producer thread copies its part
 * with cp.async (lower_rowio.c), waits for it, fences the proxies and
 * arrives (128 arrivals a stage).  The consumers wait on a tile's full
 * mbarrier before the dot that reads it and lane 0 of each warp arrives on
 * its empty one once that dot's wgmma group is done (8 arrivals).
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RING_S = 2 }; /* stages a tile: pf_dot's two buffers (lower_rows.c) */

static const kb_tile__expr *dot_w(const kb_tile__expr *e)
{
	const kb_tile__expr *b = e->args[1];
	return b->kind == KB_TE_CALL && !strcmp(b->name, "trans") ? b->args[0] : b;
}

/* Whether w, a [WR, WC] load, is one TMA box a 64 columns: a plain slice of
 * a 2-d 16-bit tensor, WR <= 256, WC whole swizzle rows. */
static bool tma_ok(const kb_tile__lw *L, const kb_tile__expr *w)
{
	if (!kb_tile__is_load(w) || w->nkw || w->args[0]->kind != KB_TE_SLICE)
		return false;
	const kb_tile__expr *s = w->args[0];
	const kb_tile_param *t = kb_tile__param(L, s->name);
	return t && t->rank == 2 && s->nidx == 2 && s->idx[0].hi && s->idx[1].hi &&
	       (t->dtype == KB_TILE_BF16 || t->dtype == KB_TILE_F16) && w->type.ext[0] <= 256 &&
	       w->type.ext[1] % 64 == 0;
}

typedef struct {
	kb_tile__lw *L;
	bool ok;
} ring_ctx;

static kb_tile__walkret ring_dot(const kb_tile__expr *e, void *vctx)
{
	ring_ctx *r = vctx;
	kb_tile__lw *L = r->L;
	if (e->kind != KB_TE_CALL || strcmp(e->name, "dot"))
		return KB_TWALK_ON;
	if (L->nring == 8 || !tma_ok(L, dot_w(e)))
		r->ok = false;
	else
		L->ring_w[L->nring++] = dot_w(e);
	return KB_TWALK_ON;
}

void kb_tile__rows_ring_plan(kb_tile__lw *L, const kb_tile__stmt *loop)
{
	L->nring = 0;
	L->rows_tma = false;
	if (!loop || L->f->no_tma)
		return;
	ring_ctx r = {.L = L, .ok = true};
	for (int i = 0; i < loop->nbody; i++) /* pf_dot's order: the dots of the body's own statements */
		if (loop->body[i]->kind == KB_TS_ASSIGN || loop->body[i]->kind == KB_TS_STORE)
			kb_tile__stmt_exprs(loop->body[i], ring_dot, &r);
	L->rows_tma = r.ok && L->nring > 0;
	if (!L->rows_tma)
		L->nring = 0;
}

char *kb_tile__rows_ring_spec(const kb_tile__lw *L)
{
	kb_buf b = KB_BUF_INIT;
	for (int i = 0; L->rows_tma && i < L->nring; i++)
		kb_buf_catf(&b, "//! tensormap kb_tma_r%d : %s box=(%lld, 64) swizzle=128 unaligned=zero\n", i,
			    L->ring_w[i]->args[0]->name, (long long)L->ring_w[i]->type.ext[0]);
	return b.s;
}

void kb_tile__rows_ring_params(kb_tile__lw *L)
{
	for (int i = 0; L->rows_tma && i < L->nring; i++)
		kb_buf_catf(L->o, ", const __grid_constant__ CUtensorMap kb_tma_r%d", i);
}

void kb_tile__rows_ws_bar(kb_tile__lw *L, bool wait, const char *id, int n, const char *why)
{
	kb_tile__line(L, "asm volatile(\"bar.%s %%0, %d;\" :: \"r\"(%s) : \"memory\"); /* %s */\n",
		      wait ? "sync" : "arrive", n, id, why);
}

/* The mbarriers of tile i's stage st (C text): full or empty. */
static void bar_of(char *out, size_t n, bool full, int i, const char *st)
{
	snprintf(out, n, "%s + 8 * (%d + %s)", full ? "kb_full_" : "kb_empty_", i * RING_S, st);
}

void kb_tile__rows_ring_wait(kb_tile__lw *L, int i, const char *st, const char *it, const char *why)
{
	char bar[96];
	bar_of(bar, sizeof bar, true, i, st);
	kb_tile__line(L, "kb_bar_wait(%s, (%s) / %d & 1); /* %s */\n", bar, it, RING_S, why);
}

void kb_tile__rows_ring_free(kb_tile__lw *L, int i, const char *st, const char *why)
{
	char bar[96];
	bar_of(bar, sizeof bar, false, i, st);
	kb_tile__line(L, "if ((int)threadIdx.x %% 32 == 0)\n");
	kb_tile__line(L, "\tkb_bar_arrive(%s); /* %s */\n", bar, why);
}

/* The producer's wait for tile i's stage kb_s_ to be handed back (trip
 * kb_it_ refills it for the (kb_it_ / RING_S)-th time). */
static void prod_empty(kb_tile__lw *L, int i)
{
	char bar[96];
	bar_of(bar, sizeof bar, false, i, "kb_s_");
	kb_tile__line(L, "if (kb_it_ >= %d)\n", RING_S);
	kb_tile__line(L, "\tkb_bar_wait(%s, (kb_it_ / %d - 1) & 1); /* the consumers read its last fill */\n", bar,
		      RING_S);
}

/* One thread's TMA copies of the trip's tile i into stage kb_s_. */
static void prod_tma(kb_tile__lw *L, int i)
{
	const kb_tile__expr *w = L->ring_w[i], *s = w->args[0];
	long long WR = w->type.ext[0], WC = w->type.ext[1];
	kb_buf r = KB_BUF_INIT, c = KB_BUF_INIT;
	char bar[96];
	kb_tile__cexpr(L, s->idx[0].lo, "0", &r);
	kb_tile__cexpr(L, s->idx[1].lo, "0", &c);
	bar_of(bar, sizeof bar, true, i, "kb_s_");
	kb_tile__line(L, "{ /* %s's [%lld][%lld]: %lld box%s of [%lld][64] */\n", s->name, WR, WC, WC / 64,
		      WC > 64 ? "es" : "", WR);
	L->depth++;
	prod_empty(L, i);
	kb_tile__line(L, "const unsigned f_ = %s, d_ = (unsigned)__cvta_generic_to_shared(kb_smem + %lld) + "
		      "(unsigned)kb_s_ * %lldu;\n", bar, (long long)L->pf_off[i], (long long)L->pf_bytes[i]);
	kb_tile__line(L, "asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" :: \"r\"(f_), "
		      "\"r\"(%lld) : \"memory\");\n", WR * WC * 2);
	for (long long b = 0; b < WC / 64; b++)
		kb_tile__line(L, "kb_wg_tma(d_ + %lld, &kb_tma_r%d, f_, (%s) + %lld, %s);\n", b * WR * 128, i, c.s,
			      b * 64, r.s);
	kb_tile__block_close(L, 1);
	kb_buf_free(&r);
	kb_buf_free(&c);
}

/* Every producer thread's cp.async copies of tile i into stage kb_s_,
 * landed, fenced for wgmma and arrived for. */
static void prod_copy(kb_tile__lw *L, int i)
{
	char bar[96];
	bar_of(bar, sizeof bar, true, i, "kb_s_");
	prod_empty(L, i);
	L->ws_prod = true; /* (copy_issue: its 128 threads) */
	kb_tile__rows_pf_issue(L, "kb_s_", i, i + 1);
	L->ws_prod = false;
	kb_tile__line(L, "kb_cp_async_commit();\n");
	kb_tile__line(L, "kb_cp_async_wait<0>(); /* its copies landed: then its arrival */\n");
	kb_tile__line(L, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); /* for wgmma */\n");
	kb_tile__line(L, "kb_bar_arrive(%s);\n", bar);
}

static void prod_loop(kb_tile__lw *L, bool tma, const char *cn, const char *lo, const char *hi, const char *step)
{
	kb_tile__line(L, "int kb_it_ = 0;\n");
	kb_tile__line(L, "for (int %s = %s; %s < %s; %s += %s, kb_it_++) {\n", cn, lo, cn, hi, cn, step);
	L->depth++;
	kb_tile__line(L, "const int kb_s_ = kb_it_ %% %d;\n", RING_S);
	for (int i = 0; i < L->npf; i++)
		(tma ? prod_tma : prod_copy)(L, i);
	kb_tile__block_close(L, 1);
}

void kb_tile__rows_ring_open(kb_tile__lw *L, const char *cn, const char *lo, const char *hi, const char *step)
{
	int T = L->T, nb = L->npf * RING_S;
	bool tma = L->rows_tma && L->nring == L->npf;
	for (int i = 0; tma && i < L->npf; i++)
		tma = dot_w(L->pf[i]) == L->ring_w[i];
	L->rows_ring_any = true;
	L->rows_ring_tma_any |= L->rows_tma; /* (its parameters name CUtensorMap either way) */
	kb_tile__line(L, "__shared__ __align__(8) unsigned long long kb_rbars_[%d]; /* b tile i's stage s: full "
		      "[%d i + s], then empty */\n", 2 * nb, RING_S);
	kb_tile__line(L, "const unsigned kb_full_ = (unsigned)__cvta_generic_to_shared(kb_rbars_), kb_empty_ = "
		      "kb_full_ + %d;\n", 8 * nb);
	if (tma) {
		kb_tile__line(L, "const bool kb_rtma_ = ");
		for (int i = 0; i < L->npf; i++)
			kb_buf_catf(L->o, "%skb_wg_tma_ok(&kb_tma_r%d)", i ? " && " : "", i);
		kb_buf_cat(L->o, "; /* zeros: rows TMA cannot copy */\n");
	}
	kb_tile__line(L, "kb_wg_bars_init<%d, %d>(kb_full_, kb_empty_, %s); /* full: TMA's one thread or the "
		      "producer's 128; empty: the consumers' warps */\n", nb, T / 32, tma ? "kb_rtma_ ? 1 : 128" : "128");
	kb_tile__line(L, "if ((int)threadIdx.x >= %d) { /* the producer warpgroup: every trip's b tiles into "
		      "their rings */\n", T);
	L->depth++;
	kb_tile__line(L, "asm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\"); /* its registers to the consumers */\n");
	kb_tile__line(L, "kb_cp_async_wait<0>(); /* (its group of the copies before the loop: empty) */\n");
	if (tma) {
		kb_tile__line(L, "if (kb_rtma_) {\n");
		L->depth++;
		kb_tile__line(L, "if ((int)threadIdx.x == %d) { /* one thread issues the boxes */\n", T);
		L->depth++;
		prod_loop(L, true, cn, lo, hi, step);
		kb_tile__block_close(L, 1);
		kb_tile__line(L, "return;\n");
		kb_tile__block_close(L, 1);
	}
	prod_loop(L, false, cn, lo, hi, step);
	kb_tile__line(L, "return;\n");
	kb_tile__block_close(L, 1);
	kb_tile__line(L, "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\"); /* the consumers: two warpgroups, "
		      "warp w's rows 16 w */\n");
	kb_tile__line(L, "kb_cp_async_wait<0>(); /* what they copied before the loop */\n");
	kb_tile__line(L, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n");
	kb_tile__rows_ws_bar(L, true, "7", T, "... has landed: both warpgroups may read it");
	kb_tile__line(L, "int kb_it_ = 0; /* the trip: stage kb_par_, its fill kb_it_ / %d */\n", RING_S);
	if (L->rows_ovl) {
		kb_tile__line(L, "if ((int)threadIdx.x / 128 == 1)\n");
		L->depth++;
		kb_tile__rows_ws_bar(L, false, "8", 256, "the pingpong (named barrier 8 + warpgroup, its turn at the "
				     "tensor cores): warpgroup 0 takes the first");
		L->depth--;
	}
}
