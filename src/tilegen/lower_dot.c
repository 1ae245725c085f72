/*
 * lower_dot.c - dot on tensor cores.  A loop that feeds a dot,
 *     for k in range(0, K, BK) {
 *         x = load(a[m0 : m0 + BM, k : k + BK])
 *         w = load(b[k : k + BK, n0 : n0 + BN])
 *         acc += dot(x, w)
 *     }
 * stages its operand tiles through shared memory STAGES deep (cp.async,
 * 16 bytes a copy where the rows are aligned, zeros past the tensor's
 * edges), and each warp multiplies its part of the tile with ldmatrix and
 * mma.sync m16n8k16 (f16 or bf16 in, f32 accumulate).  The loop is that of
 * kernels/gemm/03_pipeline.cu: each step of 16 of k loads the next step's
 * fragments before it multiplies (two fragment buffers), a trip issues its
 * copies at its first step and waits and synchronises once at its last
 * (docs/tile.md, "How dot is lowered").
 *
 * The mma layout.  The kernel's W = threads / 32 warps tile the [BM, BN]
 * accumulator as a WM x WN grid, each warp a [WTM, WTN] block at
 * (wm0_, wn0_) of MT x NT m16n8 pieces, four floats a thread each.  Every
 * [BM, BN] tile of the kernel (the accumulator, element-wise values made
 * from it) has this layout: slot
 *     i = (mt * NT + nt) * 4 + q
 * of lane l holds row wm0_ + mt * 16 + l / 4 + q / 2 * 8 and column
 * wn0_ + nt * 8 + l % 4 * 2 + q % 2.  Stores write them two columns at a time.
 *
 * Shared memory.  An operand tile [R][C] is R rows of C / 8 16-byte chunks;
 * chunk c of row r sits at kb_swz (an XOR of c with bits of r) so that the
 * eight rows an ldmatrix reads fall in eight different bank groups.
 *
 * What a loop with a dot may hold is exactly that: loads of its operands
 * and `acc += dot(...)`; anything else there, a dot elsewhere, or a
 * [BM, BN] value that mixes in a rank-1 tile, is an error at its place.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the kernel's part ===== */

void kb_tile__mma_decls(kb_tile__lw *L)
{
	const kb_tile__mma *m = &L->mma;
	if (m->wg) {
		kb_tile__wgmma_decls(L);
		return;
	}
	kb_buf_catf(L->o, "\textern __shared__ __align__(128) unsigned char kb_smem[]; /* dot operands, "
		    "%d stages: %lld bytes */\n", m->stages, (long long)m->smem);
	kb_buf_catf(L->o, "\tconst int wm0_ = (int)threadIdx.x / 32 / %d * %lld, wn0_ = (int)threadIdx.x "
		    "/ 32 %% %d * %lld; /* this warp's block of a [%lld, %lld] dot result */\n", m->WN,
		    (long long)(m->BM / m->WM), m->WN, (long long)(m->BN / m->WN), (long long)m->BM,
		    (long long)m->BN);
}

/* The C name an operand's shared tiles and flags go by. */
static char *op_cname(const kb_tile__dotop *o, int i)
{
	return o->name ? kb_xasprintf("%s", o->name) : kb_xasprintf("op%d", i + 1);
}

/* The bytes of one stage of an operand tile. */
static int64_t op_bytes(const kb_tile__dotop *o)
{
	return o->load->type.ext[0] * o->load->type.ext[1] * 2;
}

/* Declares each operand's shared tiles (STAGES of them, one after the
 * other; at a generic and at a 32-bit shared address), whether its rows
 * take 16-byte copies (aligned rows, the offsets within a tile's rows of
 * the tensor in 32 bits), and this thread's plan of those copies: a slice
 * start the loop variable is not in is the same every trip, so its bounds
 * checks are made once here. */
static void operand_decls(kb_tile__lw *L, const kb_tile__dotloop *lp)
{
	int64_t at = 0;
	for (int i = 0; i < lp->nops; i++) {
		const kb_tile__dotop *o = &lp->ops[i];
		const kb_tile__expr *s = o->load->args[0];
		const kb_tile_param *t = kb_tile__param(L, s->name);
		char *c = op_cname(o, i);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "unsigned char *%s_s_ = kb_smem + %lld; /* %s: %d x [%lld][%lld] */\n", c,
			    (long long)at, c, L->mma.stages, (long long)o->load->type.ext[0],
			    (long long)o->load->type.ext[1]);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const unsigned %s_sa_ = (unsigned)__cvta_generic_to_shared(%s_s_);\n", c, c);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const bool %s_vec_ = %s %% 8 == 0 && ((unsigned long long)%s & 15) == 0 && "
			    "%lldLL * %s < 2147483648LL;\n", c, t->dims[1], t->name,
			    (long long)o->load->type.ext[0], t->dims[1]);
		bool rf = !kb_tile__names(s->idx[0].lo, lp->loop->name), cf = !kb_tile__names(s->idx[1].lo, lp->loop->name);
		kb_buf r0 = KB_BUF_INIT, c0 = KB_BUF_INIT;
		if (rf)
			kb_tile__cexpr(L, s->idx[0].lo, "0", &r0);
		if (cf)
			kb_tile__cexpr(L, s->idx[1].lo, "0", &c0);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const kb_copy_plan<%lld, %lld, %d, %s, %s> %s_p_(%s, %s, %s, %s); /* %s */\n",
			    (long long)o->load->type.ext[0], (long long)o->load->type.ext[1], L->T,
			    rf ? "true" : "false", cf ? "true" : "false", c, rf ? r0.s : "0", cf ? c0.s : "0",
			    t->dims[0], t->dims[1],
			    rf && cf ? "the same tile every trip"
			    : rf ? "rows fixed, columns move with the loop"
			    : cf ? "columns fixed, rows move with the loop"
			    : "rows and columns move with the loop");
		kb_buf_free(&r0);
		kb_buf_free(&c0);
		at += op_bytes(o) * L->mma.stages;
		free(c);
	}
}

/* Whether the loop's vec_ covers that the slice s starts at a multiple of 8
 * columns every trip: a start the loop variable is not in, or the loop
 * variable itself (lo_ and step_ multiples of 8); another start is checked
 * trip by trip. */
static bool col_checked(const kb_tile__dotloop *lp, const kb_tile__expr *s)
{
	const kb_tile__expr *c0 = s->idx[1].lo;
	return !kb_tile__names(c0, lp->loop->name) || (c0->kind == KB_TE_NAME && !strcmp(c0->name, lp->loop->name));
}

/* The condition (C text) for the loop's copies to take the 16-byte plans:
 * every operand's rows aligned, its column starts multiples of 8. */
static void loop_vec(kb_tile__lw *L, const kb_tile__dotloop *lp, kb_buf *b)
{
	bool moving = false;
	for (int i = 0; i < lp->nops; i++) {
		const kb_tile__expr *s = lp->ops[i].load->args[0];
		char *c = op_cname(&lp->ops[i], i);
		kb_buf_catf(b, "%s%s_vec_", i ? " && " : "", c);
		free(c);
		if (kb_tile__names(s->idx[1].lo, lp->loop->name)) {
			moving = moving || col_checked(lp, s);
			continue;
		}
		kb_buf c0 = KB_BUF_INIT;
		kb_tile__cexpr(L, s->idx[1].lo, "0", &c0);
		kb_buf_catf(b, " && (%s) %% 8 == 0", c0.s);
		kb_buf_free(&c0);
	}
	if (moving)
		kb_buf_cat(b, " && lo_ % 8 == 0 && step_ % 8 == 0");
}

/* The copies of every operand tile for the trip whose loop variable is
 * defined just before, into stage `stage` (C text): the thread's plan
 * where the loop's vec_ says the rows are aligned, else element by
 * element. */
static void operand_copies(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *stage, bool vec)
{
	for (int i = 0; i < lp->nops; i++) {
		const kb_tile__dotop *o = &lp->ops[i];
		const kb_tile__expr *s = o->load->args[0];
		const kb_tile_param *t = kb_tile__param(L, s->name);
		int64_t R = o->load->type.ext[0], C = o->load->type.ext[1];
		kb_buf r0 = KB_BUF_INIT, c0 = KB_BUF_INIT;
		kb_tile__cexpr(L, s->idx[0].lo, "0", &r0);
		kb_tile__cexpr(L, s->idx[1].lo, "0", &c0);
		char *c = op_cname(o, i);
		if (o->line)
			kb_tile__line_of(L, o->line);
		bool check = vec && !col_checked(lp, s); /* its start's alignment, trip by trip */
		if (check) {
			kb_tile__ind(L);
			kb_buf_catf(L->o, "if ((%s) %% 8 == 0)\n", c0.s);
			L->depth++;
		}
		if (vec) {
			kb_tile__ind(L);
			kb_buf_catf(L->o, "%s_p_.copy(%s_sa_ + %s * %lld, %s, %s, %s, %s, %s);\n", c, c, stage,
				    (long long)op_bytes(o), t->name, r0.s, c0.s, t->dims[0], t->dims[1]);
		}
		if (check) {
			L->depth--;
			kb_tile__ind(L);
			kb_buf_cat(L->o, "else\n");
			L->depth++;
		}
		if (!vec || check) {
			kb_tile__ind(L);
			kb_buf_catf(L->o, "kb_tile_to_smem<%lld, %lld, %d>(%s_s_ + %s * %lld, %s, %s, %s, %s, %s);\n",
				    (long long)R, (long long)C, L->T, c, stage, (long long)op_bytes(o), t->name,
				    r0.s, c0.s, t->dims[0], t->dims[1]);
		}
		if (check)
			L->depth--;
		free(c);
		kb_buf_free(&r0);
		kb_buf_free(&c0);
	}
}

/* The copies of trip `trip` (C text) into stage `stage`, the loop
 * variable defined for the slices' expressions. */
static void trip_copies(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *cv,
			const char *trip, const char *stage, bool vec)
{
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int %s = lo_ + %s * step_;\n", cv, trip);
	kb_tile__define(L, lp->loop->name, cv, (kb_tile__type){KB_TILE_I32, 0, {0, 0}});
	operand_copies(L, lp, stage, vec);
	kb_tile__leave_scope(L);
}

/* The C name of update i's fragments. */
static char *frag_cname(const kb_tile__dotloop *lp, int i)
{
	return lp->nupds == 1 ? kb_xasprintf("f_") : kb_xasprintf("f%d_", i + 1);
}

/* Each update's fragment loads of step `kk` (C text) into buffer `buf`,
 * from stage `stage`. */
static void frag_loads(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *buf, const char *stage,
		       const char *kk)
{
	for (int i = 0; i < lp->nupds; i++) {
		const kb_tile__dotupd *u = &lp->upds[i];
		const kb_tile__dotop *a = &lp->ops[u->a], *b = &lp->ops[u->b];
		char *ca = op_cname(a, u->a), *cb = op_cname(b, u->b), *f = frag_cname(lp, i);
		kb_tile__line_of(L, u->line);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s.load(%s, %s_sa_ + %s * %lld, %s_sa_ + %s * %lld, %s);\n", f, buf, ca, stage,
			    (long long)op_bytes(a), cb, stage, (long long)op_bytes(b), kk);
		free(ca);
		free(cb);
		free(f);
	}
}

/* Each update's mma of buffer `buf`. */
static void frag_mmas(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *buf)
{
	for (int i = 0; i < lp->nupds; i++) {
		const kb_tile__dotupd *u = &lp->upds[i];
		const kb_tile__lsym *acc = kb_tile__lw_lookup(L, u->acc);
		const kb_tile__expr *s = lp->ops[u->a].load->args[0];
		const char *et = kb_tile_ctype(kb_tile__param(L, s->name)->dtype);
		char *f = frag_cname(lp, i);
		kb_tile__line_of(L, u->line);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s.mma(%s, %s, (const %s *)0);\n", f, acc ? acc->c : u->acc, buf, et);
		free(f);
	}
}

/* At a trip's first step: its copies (of trip t_ + STAGES - 1) into the
 * stage the previous trip read, and the trip's group. */
static void step_copies(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *cv, bool vec)
{
	int S = L->mma.stages;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (kk_ == 0) { /* trip t_ + %d's copies, into the stage trip t_ - 1 read */\n",
		    S - 1);
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (t_ + %d < trips_) {\n", S - 1);
	L->depth++;
	char trip[32];
	snprintf(trip, sizeof trip, "(t_ + %d)", S - 1);
	trip_copies(L, lp, cv, trip, "wr_", vec);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "kb_cp_async_commit(); /* a group every trip, empty or not: the counts stay right */\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "wr_ = wr_ == %d ? 0 : wr_ + 1;\n", S - 1);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
}

/* The pipeline over the loop's trips: the first STAGES - 1 trips' copies,
 * then each trip's steps; vec: its copies by the plans, else element by
 * element. */
static void pipeline(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *cv, bool vec)
{
	if (L->mma.wg) {
		kb_tile__lower_wgmma_loop(L, lp);
		return;
	}
	const kb_tile__stmt *st = lp->loop;
	int S = L->mma.stages, KS = (int)(lp->ops[lp->upds[0].a].load->type.ext[1] / 16);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int s_ = 0; s_ < %d; s_++) { /* the first trips' copies */\n", S - 1);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\tif (s_ < trips_) {\n");
	L->depth += 2;
	trip_copies(L, lp, cv, "s_", "s_", vec);
	L->depth -= 2;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\t}\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\tkb_cp_async_commit();\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "kb_cp_async_wait<%d>(); /* trip 0's tiles are in */\n", S - 2);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads();\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "int rd_ = 0, wr_ = %d; /* the stage read, the stage written next */\n", S - 1);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "if (trips_ > 0) {\n");
	L->depth++;
	frag_loads(L, lp, "0", "0", "0");
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	kb_tile__line_of(L, st->line);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "for (int t_ = 0; t_ < trips_; t_++) {\n");
	L->depth++;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int kk_ = 0; kk_ < %d; kk_++) { /* 16 of k a step */\n", KS);
	L->depth++;
	if (KS == 1)
		step_copies(L, lp, cv, vec);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (kk_ == %d) {\n", KS - 1);
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "kb_cp_async_wait<%d>(); /* trip t_ + 1's tiles are in */\n", S - 2);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads(); /* and every warp is done with the stage refilled next */\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "rd_ = rd_ == %d ? 0 : rd_ + 1;\n", S - 1);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	if (KS % 2 == 0) { /* the last step's prefetch goes to buffer 0, the one the next trip reads first */
		kb_tile__ind(L);
		kb_buf_catf(L->o, "if (kk_ < %d || t_ + 1 < trips_) {\n", KS - 1);
		L->depth++;
		char kk[32];
		snprintf(kk, sizeof kk, "(kk_ + 1) %% %d", KS);
		frag_loads(L, lp, "(kk_ + 1) % 2", "rd_", kk);
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "}\n");
		step_copies(L, lp, cv, vec);
		frag_mmas(L, lp, "kk_ % 2");
	} else { /* an odd number of steps: the last one multiplies buffer 0, then refills it */
		kb_tile__ind(L);
		kb_buf_catf(L->o, "if (kk_ < %d) {\n", KS - 1);
		L->depth++;
		frag_loads(L, lp, "(kk_ + 1) % 2", "rd_", "kk_ + 1");
		if (KS > 1)
			step_copies(L, lp, cv, vec);
		frag_mmas(L, lp, "kk_ % 2");
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "} else {\n");
		L->depth++;
		frag_mmas(L, lp, "kk_ % 2");
		kb_tile__ind(L);
		kb_buf_cat(L->o, "if (t_ + 1 < trips_) {\n");
		L->depth++;
		frag_loads(L, lp, "0", "rd_", "0");
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "}\n");
		L->depth--;
		kb_tile__ind(L);
		kb_buf_cat(L->o, "}\n");
	}
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
}

/* The loop: trip t's copies (of trip t + STAGES - 1) are issued at its
 * first step of 16 of k, the wait for trip t + 1's and the one barrier a
 * trip at its last, and every step loads the next step's fragments (the
 * next trip's first after the barrier) before it multiplies its own.  The
 * copies come after the first step's fragment loads, so that those are not
 * held up behind the copies' address arithmetic (kernels/gemm/03_pipeline.cu's
 * order); with one step a trip they come first, as the wait of that step
 * counts the trip's group. */
void kb_tile__lower_dot_loop(kb_tile__lw *L, const kb_tile__dotloop *lp)
{
	if (L->mma.wg) {
		kb_tile__lower_wgmma_loop(L, lp);
		return;
	}
	const kb_tile__stmt *st = lp->loop;
	int S = L->mma.stages, KS = (int)(lp->ops[lp->upds[0].a].load->type.ext[1] / 16);
	kb_buf lo = KB_BUF_INIT, hi = KB_BUF_INIT, step = KB_BUF_INIT;
	kb_tile__range_text(L, st, &lo, &hi, &step);
	char *cv = kb_tile__cname(st->name);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "{ /* the operands through shared memory, %d trips ahead; tensor cores */\n", S - 1);
	L->depth++;
	operand_decls(L, lp);
	for (int i = 0; i < lp->nupds; i++) {
		const kb_tile__dotupd *u = &lp->upds[i];
		char *f = frag_cname(lp, i);
		kb_tile__ind(L);
		if (u->bt)
			kb_buf_catf(L->o, "kb_mma_warp_nt<%d, %d, %d> %s(wm0_, wn0_); /* %s's fragments, b an "
				    "[n][k] tile, two buffers */\n", KS * 16, L->mma.MT, L->mma.NT, f, u->acc);
		else
			kb_buf_catf(L->o, "kb_mma_warp<%d, %lld, %d, %d> %s(wm0_, wn0_); /* %s's fragments, two "
				    "buffers */\n", KS * 16, (long long)L->mma.BN, L->mma.MT, L->mma.NT, f, u->acc);
		free(f);
	}
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int lo_ = %s, step_ = %s;\n", lo.s, step.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int trips_ = %s > lo_ ? (%s - lo_ + step_ - 1) / step_ : 0;\n", hi.s, hi.s);
	kb_buf vec = KB_BUF_INIT;
	loop_vec(L, lp, &vec);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (%s) { /* 16-byte copies, each thread's by its plan */\n", vec.s);
	L->depth++;
	pipeline(L, lp, cv, true);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "} else { /* the same, the copies element by element (kept apart for the registers) */\n");
	L->depth++;
	pipeline(L, lp, cv, false);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	kb_buf_free(&vec);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "kb_cp_async_wait<0>(); /* only empty groups are left */\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads(); /* shared memory is free again */\n");
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
	free(cv);
	kb_buf_free(&lo);
	kb_buf_free(&hi);
	kb_buf_free(&step);
}

/* store(t[r : r + BM, c : c + BN], v) of a value in the mma layout: each
 * thread's pairs of columns, a 2-element store where aligned and in range. */
void kb_tile__lower_store_mma(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__expr *s = st->slice;
	const kb_tile_param *t = kb_tile__param(L, s->name);
	const kb_tile__mma *m = &L->mma;
	if (!t || t->rank != 2 || s->nidx != 2 || !s->idx[0].hi || !s->idx[1].hi ||
	    !kb_tile__mma_shape(L, &(kb_tile__type){0, 2, {s->idx[0].extent, s->idx[1].extent}})) {
		kb_tile__fail(L, st->line, st->col, st->len, "a 2-d store other than of a dot's [BM, BN] result");
		return;
	}
	if (!kb_tile__mma_value_ok(L, st->value) || (st->mask && !kb_tile__mma_value_ok(L, st->mask)))
		return;
	kb_tile__mma_materialize(L, st->value);
	if (st->mask)
		kb_tile__mma_materialize(L, st->mask);
	bool narrow = t->dtype == KB_TILE_BF16 || t->dtype == KB_TILE_F16;
	if (!narrow && t->dtype != KB_TILE_F32) {
		kb_tile__fail(L, st->line, st->col, st->len, "a dot's result stored to a tensor of "
			      "other than f32, f16 or bf16");
		return;
	}
	if (m->tstore == st) /* through shared memory by TMA, else (zero tensormaps) as below */
		kb_tile__wgmma_store(L, st);
	kb_buf r0 = KB_BUF_INIT, c0 = KB_BUF_INIT, v0 = KB_BUF_INIT, v1 = KB_BUF_INIT;
	kb_buf e0 = KB_BUF_INIT, e1 = KB_BUF_INIT, m0 = KB_BUF_INIT, m1 = KB_BUF_INIT;
	kb_tile__cexpr(L, s->idx[0].lo, "0", &r0);
	kb_tile__cexpr(L, s->idx[1].lo, "0", &c0);
	if (m->tstore == st && m->tmode < 2) { /* worked out before the TMA store's branch */
		kb_buf_cat(&v0, "kb_st_[i_]");
		kb_buf_cat(&v1, "kb_st_[i_ + 1]");
	} else {
		kb_tile__cexpr(L, st->value, "i_", &v0);
		kb_tile__cexpr(L, st->value, "i_ + 1", &v1);
	}
	if (st->mask) { /* each element's, in the pair's test and the element path's */
		kb_buf_cat(&m0, " && (");
		kb_tile__cexpr(L, st->mask, "i_", &m0);
		kb_buf_cat(&m0, ")");
		kb_buf_cat(&m1, " && (");
		kb_tile__cexpr(L, st->mask, "i_ + 1", &m1);
		kb_buf_cat(&m1, ")");
	}
	kb_tile__to_elem(t->dtype, "v_[0]", &e0);
	kb_tile__to_elem(t->dtype, "v_[1]", &e1);
	const char *pair = t->dtype == KB_TILE_BF16 ? "__nv_bfloat162" : t->dtype == KB_TILE_F16 ? "__half2" : "float2";
	const char *make = t->dtype == KB_TILE_BF16 ? "__floats2bfloat162_rn" : t->dtype == KB_TILE_F16
		? "__floats2half2_rn" : "make_float2";
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s *p_ = %s + (size_t)(%s) * %s + (size_t)(%s);\n", kb_tile_ctype(t->dtype),
		    t->name, r0.s, t->dims[1], c0.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const long long rows_ = %s - (%s), cols_ = %s - (%s);\n", t->dims[0], r0.s,
		    t->dims[1], c0.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const bool al_ = %s %% 2 == 0 && ((unsigned long long)p_ & %d) == 0;\n",
		    t->dims[1], narrow ? 3 : 7);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "const int lane_ = (int)threadIdx.x % 32;\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_ += 2) {\n", (long long)kb_tile__mma_slots(L));
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int r_ = wm0_ + i_ / %d * %d + lane_ / 4 + i_ %% 4 / 2 * 8;\n", 4 * m->NT,
		    m->MS);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const int c_ = wn0_ + i_ / 4 %% %d * 8 + lane_ %% 4 * 2;\n", m->NT);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const float v_[2] = {%s, %s};\n", v0.s, v1.s);
	if (st->mask) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "const bool m_[2] = {true%s, true%s};\n", m0.s, m1.s);
	}
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (r_ < rows_ && al_ && c_ + 1 < cols_%s)\n", st->mask ? " && m_[0] && m_[1]" : "");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t*(%s *)(p_ + (size_t)r_ * %s + c_) = %s(v_[0], v_[1]);\n", pair, t->dims[1],
		    make);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "else if (r_ < rows_)\n");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "\tfor (int j_ = 0; j_ < 2; j_++)\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t\tif (c_ + j_ < cols_%s)\n", st->mask ? " && m_[j_]" : "");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t\t\tp_[(size_t)r_ * %s + c_ + j_] = j_ ? %s : %s;\n", t->dims[1], e1.s, e0.s);
	kb_tile__block_close(L, 2);
	kb_buf_free(&r0);
	kb_buf_free(&c0);
	kb_buf_free(&v0);
	kb_buf_free(&v1);
	kb_buf_free(&e0);
	kb_buf_free(&e1);
	kb_buf_free(&m0);
	kb_buf_free(&m1);
}

/* ===== the file's part ===== */

/* The helpers a kernel with dot calls: the shared-memory swizzle, the
 * operand copies, ldmatrix and mma.sync wrappers, a warp's multiply of one
 * stage.  sm_80 and later. */
static const char mma_helpers[] =
	"/* The XOR that row r of a shared tile of CH 16-byte chunks a row applies to\n"
	" * its chunk index, so that the 8 rows an ldmatrix phase reads fall in 8\n"
	" * different bank groups (CH = 4, 2: two, four rows share a 128-byte window). */\n"
	"template <int CH> __device__ __forceinline__ int kb_swz_x(int r)\n"
	"{\n"
	"	return CH % 8 == 0 ? r & 7 : CH == 4 ? r >> 1 & 3 : CH == 2 ? r >> 2 & 1 : 0;\n"
	"}\n"
	"\n"
	"/* Chunk c of row r of such a tile, in chunks from its start. */\n"
	"template <int CH> __device__ __forceinline__ int kb_swz(int r, int c)\n"
	"{\n"
	"	return r * CH + (c ^ kb_swz_x<CH>(r));\n"
	"}\n"
	"\n"
	"/* One stage of an operand, one element at a time: the [R][C] tile at (r0,\n"
	" * c0) of a row-major [rows][cols] tensor g of 16-bit elements into the\n"
	" * swizzled tile at shared s, zeros outside the tensor.  For rows that are\n"
	" * not 16-byte aligned (kb_copy_plan copies the others). */\n"
	"template <int R, int C, int T, typename E>\n"
	"__device__ void kb_tile_to_smem(unsigned char *s, const E *g, int r0, int c0, int rows, int cols)\n"
	"{\n"
	"	constexpr int CH = C / 8;\n"
	"	for (int i = threadIdx.x; i < R * C; i += T) {\n"
	"		const long long gr = (long long)r0 + i / C, gc = (long long)c0 + i % C;\n"
	"		const unsigned short v = gr < rows && gc < cols ? ((const unsigned short *)g)[gr * cols + gc] : 0;\n"
	"		((unsigned short *)s)[kb_swz<CH>(i / C, i % C / 8) * 8 + i % 8] = v;\n"
	"	}\n"
	"}\n"
	"\n"
	"/* A thread's share of the 16-byte cp.async copies of an operand's [R][C]\n"
	" * tiles (CH = C / 8 chunks a row, T threads), worked out once before the\n"
	" * loop, so that a copy in the loop is an add and a predicate.  Thread t\n"
	" * copies chunk t % CH of rows t / CH + i STEP (STEP = T / CH, T a multiple\n"
	" * of CH; else chunk t + i T of the tile, worked out per copy); STEP a\n"
	" * multiple of 8 rows, every copy has the same swizzle XOR.  Offsets are\n"
	" * from a tile's first element, 32-bit (the tile's R rows of the tensor are\n"
	" * fewer than 2^31 elements; the tile's origin is 64-bit).  ROWS_FIXED: the\n"
	" * tile's first row r0 is the same every trip, so which of this thread's\n"
	" * rows lie inside the tensor is a bitmask made here; COLS_FIXED likewise\n"
	" * whether its chunk does.  A chunk is all inside or all past (cols and c0\n"
	" * multiples of 8); one past is zero-filled (src-size 0, src not read). */\n"
	"template <int R, int C, int T, bool ROWS_FIXED, bool COLS_FIXED> struct kb_copy_plan {\n"
	"	static constexpr int CH = C / 8, N = (R * CH + T - 1) / T, STEP = T / CH;\n"
	"	static constexpr bool PLAN = T % CH == 0, MASK = PLAN && ROWS_FIXED && N <= 32;\n"
	"	unsigned off;     /* elements from a tile's first to this thread's first chunk */\n"
	"	unsigned dst;     /* bytes from a stage's start to that chunk, swizzled */\n"
	"	int row_lim;      /* rows of the tensor from this thread's first row of a tile at row 0 */\n"
	"	int col_lim;      /* columns of the tensor from its chunk of a tile at column 0 */\n"
	"	unsigned rows_in; /* MASK: bit i, copy i's row lies inside the tensor */\n"
	"	bool col_in;      /* COLS_FIXED: the chunk lies inside the tensor */\n"
	"\n"
	"	/* r0, c0: the tile's first row and column where fixed (else ignored). */\n"
	"	__device__ __forceinline__ kb_copy_plan(int r0, int c0, int rows, int cols)\n"
	"	{\n"
	"		const int t = threadIdx.x, r = t / CH, c = t % CH;\n"
	"		off = (unsigned)r * cols + c * 8;\n"
	"		dst = kb_swz<CH>(r, c) * 16;\n"
	"		row_lim = rows - r;\n"
	"		col_lim = cols - c * 8;\n"
	"		rows_in = 0;\n"
	"		if (MASK)\n"
	"			for (int i = 0; i < N; i++)\n"
	"				rows_in |= (unsigned)(r0 + i * STEP < row_lim) << i;\n"
	"		col_in = c0 < col_lim;\n"
	"	}\n"
	"\n"
	"	/* The tile at (r0, c0) of g into the stage at shared address s. */\n"
	"	template <typename E>\n"
	"	__device__ __forceinline__ void copy(unsigned s, const E *g, int r0, int c0, int rows, int cols) const\n"
	"	{\n"
	"		const E *base = g + (long long)r0 * cols + c0; /* the tile's first element */\n"
	"		#pragma unroll\n"
	"		for (int i = 0; i < N; i++) {\n"
	"			const int t = threadIdx.x;\n"
	"			if (R * CH % T && t + i * T >= R * CH)\n"
	"				break; /* past the tile */\n"
	"			bool in;\n"
	"			unsigned from, to;\n"
	"			if (PLAN) {\n"
	"				in = (MASK ? rows_in >> i & 1 : r0 + i * STEP < row_lim) && (COLS_FIXED ? col_in : c0 < col_lim);\n"
	"				from = off + (unsigned)(i * STEP) * cols;\n"
	"				to = s + (STEP % 8 == 0 ? dst + i * STEP * CH * 16 : kb_swz<CH>(t / CH + i * STEP, t % CH) * 16);\n"
	"			} else {\n"
	"				const int r = (t + i * T) / CH, c = (t + i * T) % CH;\n"
	"				in = r < rows - r0 && c * 8 < cols - c0;\n"
	"				from = (unsigned)r * cols + c * 8;\n"
	"				to = s + kb_swz<CH>(r, c) * 16;\n"
	"			}\n"
	"			asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\"\n"
	"				     :: \"r\"(to), \"l\"(in ? base + from : g), \"r\"(in ? 16 : 0));\n"
	"		}\n"
	"	}\n"
	"};\n"
	"\n"
	"__device__ __forceinline__ void kb_cp_async_commit() { asm volatile(\"cp.async.commit_group;\\n\" ::); }\n"
	"template <int N> __device__ __forceinline__ void kb_cp_async_wait()\n"
	"{\n"
	"	asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N));\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_ldmatrix_x4(unsigned *r, unsigned addr)\n"
	"{\n"
	"	asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
	"		     : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(addr));\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_ldmatrix_x4_trans(unsigned *r0, unsigned *r1, unsigned addr)\n"
	"{\n"
	"	asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
	"		     : \"=r\"(r0[0]), \"=r\"(r0[1]), \"=r\"(r1[0]), \"=r\"(r1[1]) : \"r\"(addr));\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_mma(float *d, const unsigned *a, const unsigned *b, const __nv_bfloat16 *)\n"
	"{\n"
	"	asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, \"\n"
	"		     \"{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
	"		     : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
	"		     : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_mma(float *d, const unsigned *a, const unsigned *b, const __half *)\n"
	"{\n"
	"	asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, \"\n"
	"		     \"{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
	"		     : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
	"		     : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
	"}\n"
	"\n"
	"/* One warp's part of acc += a b: its MT x NT m16n8 pieces at (wm0, wn0) of\n"
	" * the [.][BN] result, a from shared [.][BK] tiles and b from [BK][BN] ones\n"
	" * (swizzled as kb_swz), 16 of the inner dim (a step kk) at a time.  The\n"
	" * fragments have two buffers, so a step's ldmatrix can be issued before the\n"
	" * previous step's mma.  The lane's ldmatrix addresses are worked out once:\n"
	" * wm0 + 16 mt and 16 kk are multiples of 8 rows, so the XOR of a row is\n"
	" * that of lane % 16.  Where a's rows are a power of two or a multiple of 8\n"
	" * chunks (AX), the bits of the chunk a step's XOR changes are free in the\n"
	" * stage's address (stages start 128-byte aligned), so the XOR applies to\n"
	" * the address; likewise b's (BX, NT a power of two: wn0 / 8 is a multiple\n"
	" * of NT, so chunk wn0 / 8 + nt is wn0 / 8 ^ nt). */\n"
	"template <int BK, int BN, int MT, int NT> struct kb_mma_warp {\n"
	"	static constexpr int CHA = BK / 8, CHB = BN / 8;\n"
	"	static constexpr bool AX = CHA % 8 == 0 || CHA == 4 || CHA == 2;\n"
	"	static constexpr bool BX = (CHB % 8 == 0 || CHB == 4 || CHB == 2) && (NT & (NT - 1)) == 0;\n"
	"	unsigned a[2][MT][4], b[2][NT][2];\n"
	"	unsigned a_lane, b_lane; /* bytes from a stage's start to this lane's address in a, in b */\n"
	"	int xa, xb;              /* the chunk XOR (with the lane's half: lanes 16-31 read chunk + 1) */\n"
	"	int bc;                  /* b's first chunk: wn0 / 8 */\n"
	"\n"
	"	__device__ __forceinline__ kb_mma_warp(int wm0, int wn0)\n"
	"	{\n"
	"		const int lane = threadIdx.x % 32;\n"
	"		xa = lane / 16 ^ kb_swz_x<CHA>(lane % 16);\n"
	"		xb = lane / 16 ^ kb_swz_x<CHB>(lane % 16);\n"
	"		bc = wn0 / 8;\n"
	"		a_lane = (unsigned)(wm0 + lane % 16) * CHA * 16 + (AX ? xa * 16 : 0);\n"
	"		b_lane = (unsigned)(lane % 16) * CHB * 16 + (BX ? (bc ^ xb) * 16 : 0);\n"
	"	}\n"
	"\n"
	"	/* Step kk's fragments from the stage at shared addresses a_s, b_s into buffer buf. */\n"
	"	__device__ __forceinline__ void load(int buf, unsigned a_s, unsigned b_s, int kk)\n"
	"	{\n"
	"		const unsigned as = AX ? (a_s + a_lane + (kk * 2 & ~7) * 16) ^ (kk * 2 & 7) * 16\n"
	"				       : a_s + a_lane + (kk * 2 ^ xa) * 16;\n"
	"		const unsigned bs = b_s + b_lane + kk * 16 * CHB * 16;\n"
	"		#pragma unroll\n"
	"		for (int mt = 0; mt < MT; mt++)\n"
	"			kb_ldmatrix_x4(a[buf][mt], as + mt * 16 * CHA * 16);\n"
	"		#pragma unroll\n"
	"		for (int nt = 0; nt < NT; nt += 2) /* two n8 pieces an ldmatrix */\n"
	"			kb_ldmatrix_x4_trans(b[buf][nt], b[buf][nt + 1],\n"
	"					     BX ? (bs + (nt & ~7) * 16) ^ (nt & 7) * 16 : bs + ((bc + nt) ^ xb) * 16);\n"
	"	}\n"
	"\n"
	"	/* acc += the product of buffer buf's fragments; a serpentine over the\n"
	"	 * pieces, so consecutive mma share a b fragment at each turn. */\n"
	"	template <typename E> __device__ __forceinline__ void mma(float *acc, int buf, const E *)\n"
	"	{\n"
	"		#pragma unroll\n"
	"		for (int mt = 0; mt < MT; mt++)\n"
	"			#pragma unroll\n"
	"			for (int j = 0; j < NT; j++) {\n"
	"				const int nt = mt % 2 ? NT - 1 - j : j;\n"
	"				kb_mma(acc + (mt * NT + nt) * 4, a[buf][mt], b[buf][nt], (const E *)0);\n"
	"			}\n"
	"	}\n"
	"};\n";

void kb_tile__mma_prologue(kb_buf *out)
{
	kb_buf_cat(out, mma_helpers);
	kb_buf_cat(out, "\n");
}

/* kb_mma_warp with b given as [n][k] tiles (dot(x, trans(w)), w loaded
 * [BN, BK]: row-major [n][k] is mma's column-major b, so no transpose is
 * moved): w's stage is swizzled as a's, and its fragments are read as a's
 * are, with ldmatrix without .trans, two n8 pieces an ldmatrix.x4: lanes
 * 0-7 read rows n 0-7 at chunk 2 kk, 8-15 the same rows at 2 kk + 1, 16-31
 * rows 8-15 likewise.  A row's XOR is that of its row within the 16 (the
 * warp's first row and a pair of pieces are multiples of 8 rows). */
static const char mma_nt_helpers[] =
	"template <int BK, int MT, int NT> struct kb_mma_warp_nt : kb_mma_warp<BK, 16, MT, NT> {\n"
	"	using W = kb_mma_warp<BK, 16, MT, NT>;\n"
	"	unsigned bt_lane; /* bytes from a stage's start to this lane's address in w */\n"
	"	int xbt;          /* its chunk XOR (with the lane's chunk of the pair) */\n"
	"\n"
	"	__device__ __forceinline__ kb_mma_warp_nt(int wm0, int wn0) : W(wm0, wn0)\n"
	"	{\n"
	"		const int lane = threadIdx.x % 32, r = lane % 8 + lane / 16 * 8;\n"
	"		xbt = lane / 8 % 2 ^ kb_swz_x<W::CHA>(r);\n"
	"		bt_lane = (unsigned)(wn0 + r) * W::CHA * 16 + (W::AX ? xbt * 16 : 0);\n"
	"	}\n"
	"\n"
	"	__device__ __forceinline__ void load(int buf, unsigned a_s, unsigned b_s, int kk)\n"
	"	{\n"
	"		const unsigned as = W::AX ? (a_s + this->a_lane + (kk * 2 & ~7) * 16) ^ (kk * 2 & 7) * 16\n"
	"					  : a_s + this->a_lane + (kk * 2 ^ this->xa) * 16;\n"
	"		const unsigned bs = W::AX ? (b_s + bt_lane + (kk * 2 & ~7) * 16) ^ (kk * 2 & 7) * 16\n"
	"					  : b_s + bt_lane + (kk * 2 ^ xbt) * 16;\n"
	"		#pragma unroll\n"
	"		for (int mt = 0; mt < MT; mt++)\n"
	"			kb_ldmatrix_x4(this->a[buf][mt], as + mt * 16 * W::CHA * 16);\n"
	"		#pragma unroll\n"
	"		for (int nt = 0; nt < NT; nt += 2) {\n"
	"			unsigned r[4];\n"
	"			kb_ldmatrix_x4(r, bs + nt * 8 * W::CHA * 16);\n"
	"			this->b[buf][nt][0] = r[0];\n"
	"			this->b[buf][nt][1] = r[1];\n"
	"			this->b[buf][nt + 1][0] = r[2];\n"
	"			this->b[buf][nt + 1][1] = r[3];\n"
	"		}\n"
	"	}\n"
	"};\n";

void kb_tile__mma_prologue_nt(kb_buf *out)
{
	kb_buf_cat(out, mma_nt_helpers);
	kb_buf_cat(out, "\n");
}
