/*
 * lower_rows.c - the row layout: a kernel whose dots sit among other
 * statements (attention's softmax between its two products) with every
 * 2-d tile in the layout of an mma.sync accumulator, so that a dot's
 * result, its row statistics and its next product's A operand stay in
 * registers, as kernels/attention/02_fa2.cu keeps them.
 *
 * The layout.  The block's W = T / 32 warps split the rows of every
 * [RW, C] tile, RW = 16 W (one m16 row tile a warp, MT = 1) or 32 W (two,
 * MT = 2, as 02_fa2.cu's MT = 2): warp w holds rows 16 MT w .. + 16 MT - 1,
 * lane l = 4 g + t, slot i = 4 MT nt + 4 mt + q at row 16 MT w + 16 mt + g +
 * q / 2 * 8 and column 8 nt + 2 t + q % 2 (MT C / 2 slots, C a multiple of
 * 8): the m16n8 accumulator pieces of the warp's row tiles, nt = 0 .. C / 8
 * - 1, mt = 0 .. MT - 1.  So slot i's row is 16 MT w + g + i % (4 MT) / 2 * 8
 * and its column i / (4 MT) * 8 + 2 t + i % 2.  An [RW, 1] tile (a row
 * statistic) holds slots 0 .. 2 MT - 1, slot h at row 16 MT w + g + 8 h, the
 * same in the quad's four lanes; beside an [RW, C] value slot i reads its
 * slot i % (4 MT) / 2 in registers.  MT = 1 is BM = 16 W, MT = 2 BM = 32 W
 * (kb_tile__rows_plan tries 1, then 2).
 *
 * What follows from it:
 * - max(s, axis = 1, keep = true) (sum, min): a thread folds its slots of
 *   each of its two rows, then two XOR shuffles (1, 2) within the quad;
 *   no shared memory, no barrier.
 * - dot(a, b) of an [RW, K] value a and a loaded b ([K, C], or trans of a
 *   loaded [C, K]): a's slots 8 kk .. 8 kk + 7 are, packed two by two
 *   into 16-bit pairs, the A fragment of step kk (rows g, g + 8, columns
 *   16 kk + 2 t and + 8; at MT = 2 row tile mt's are slots 16 kk + 4 mt
 *   .. + 3 and 16 kk + 8 + 4 mt .. + 3): a stays in registers (q loaded
 *   once, p as it is computed).  Each B fragment from ldmatrix feeds an
 *   mma of each row tile.  b goes to dynamic shared memory as its rows of
 *   16 bytes more (16-byte cp.async where the rows are aligned, zeros past the
 *   tensor; else element by element), the B fragments come by ldmatrix
 *   (.trans for [K, C]), and the result's slots are the mma's registers.
 *   In a loop whose dots' b slices name only the loop's variable and names
 *   the loop does not assign, b is copied a trip ahead into the other of
 *   two buffers (one cp.async group a trip, as 02_fa2.cu does): the next
 *   trip's copies, a wait for this trip's and a barrier at the top of a
 *   trip, a barrier at its end.  Elsewhere b is copied where the dot is,
 *   between two barriers.  Rows that are not 16-byte aligned are copied
 *   element by element in a call (kb_rows_copy_slow), out of the loop's
 *   registers.
 * - x * r + dot(a, b) with r an [RW, 1] variable (attention's acc * alpha):
 *   the multiplies are skipped where r is 1 in every row of the warp
 *   (lazy_start), by default but with one row tile of more than 64 columns.
 * - A 2-d variable that a bf16 or f16 load defines and nothing assigns
 *   again (attention's q) is kept as pairs of slots in 32-bit registers:
 *   half the registers, and a dot's A fragments as they are (a pair one
 *   32-bit load where aligned); in kb_smem where the registers would be too
 *   many, its copy waited for with the first dot's b tiles.
 * - A store of an [RW, C > 1] tile: two slots a store where aligned
 *   (lower_rowio.c).
 * - On sm_90a (kb_tile__rows_wg_plan) the dots are wgmma instead
 *   (lower_rowwg.c): the b tiles swizzled in shared memory, the A
 *   fragments the same registers, each m64 piece a warpgroup's row tile.
 *
 * Which kernels: every 2-d tile [RW, C] with C = 1 or a multiple of 8
 * (16 for a dot's n and k), the dot's b a load of bf16/f16 without
 * keywords like a, reductions of 2-d tiles kept ones along axis 1 of [RW, C > 1], no
 * transposes but a dot's b, no atomics into 2-d slices (kb_tile__rows_plan).
 * Others keep lower_reduce.c's 2-d layout.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== which kernels ===== */

typedef struct {
	const kb_tile__lw *L;
	int64_t RW;
	bool ok;
} plan_ctx;

static bool is_call(const kb_tile__expr *e, const char *name)
{
	return e->kind == KB_TE_CALL && !strcmp(e->name, name);
}

static bool is_16bit(kb_tile_dtype t)
{
	return t == KB_TILE_BF16 || t == KB_TILE_F16;
}

/* A dot's b: load(t[r : r + R, c : c + C]) of a 16-bit 2-d tensor, no keywords. */
static bool b_load_ok(const kb_tile__lw *L, const kb_tile__expr *w, kb_tile_dtype a)
{
	if (!kb_tile__is_load(w) || w->nkw || w->type.rank != 2 || w->type.dtype != a ||
	    w->type.ext[0] % 16 || w->type.ext[1] % 16)
		return false;
	const kb_tile__expr *s = w->args[0];
	const kb_tile_param *t = s->kind == KB_TE_SLICE ? kb_tile__param(L, s->name) : NULL;
	return t && t->rank == 2 && s->nidx == 2 && s->idx[0].hi && s->idx[1].hi && !kb_tile__reads_mem(s);
}

static kb_tile__walkret plan_expr(const kb_tile__expr *e, void *vctx)
{
	plan_ctx *p = vctx;
	if (e->type.rank == 2 && (e->type.ext[0] != p->RW || (e->type.ext[1] != 1 && e->type.ext[1] % 8)))
		goto no;
	if (is_call(e, "trans"))
		goto no;
	if (kb_tile__is_reduction(e) && e->args[0]->type.rank == 2 &&
	    (e->type.rank != 2 || kb_tile__axis_of(e) != 1 || e->args[0]->type.ext[1] == 1))
		goto no; /* (an [RW, 1] operand's rows are in every lane of a quad) */
	if (is_call(e, "dot")) {
		const kb_tile__expr *a = e->args[0], *b = e->args[1];
		bool bt = is_call(b, "trans");
		const kb_tile__expr *w = bt ? b->args[0] : b;
		int64_t K = a->type.ext[1], C = e->type.ext[1];
		if (!is_16bit(a->type.dtype) || K % 16 || C % 16 || !b_load_ok(p->L, w, a->type.dtype) ||
		    w->type.ext[bt ? 0 : 1] != C || w->type.ext[bt ? 1 : 0] != K)
			goto no;
		if (kb_tile__walk_expr(a, plan_expr, p))
			return KB_TWALK_STOP;
		return KB_TWALK_SKIP; /* b is copied to shared memory as it is */
	}
	return KB_TWALK_ON;
no:
	p->ok = false;
	return KB_TWALK_STOP;
}

static kb_tile__walkret plan_stmt(const kb_tile__stmt *st, void *vctx)
{
	plan_ctx *p = vctx;
	if (st->kind == KB_TS_STORE && st->op && st->slice && st->slice->type.rank == 2) {
		p->ok = false;
		return KB_TWALK_STOP;
	}
	return KB_TWALK_ON;
}

static bool pf_all(const kb_tile__stmt *st);

bool kb_tile__rows_plan(kb_tile__lw *L)
{
	plan_ctx p = {.L = L};
	L->rows = false;
	if (L->mma.on || L->T % 32)
		return false;
	for (int mt = 1; mt <= 2 && !L->rows; mt++) { /* RW = 16 warps: one row tile a warp; 32: two */
		p.RW = (int64_t)L->T / 32 * 16 * mt;
		p.ok = true;
		kb_tile__walk_stmts(L->k->body, L->k->nbody, plan_stmt, plan_expr, &p);
		L->rows = p.ok;
		L->rows_mt = mt;
	}
	L->rows_wg = L->rows && kb_tile__rows_wg_plan(L);
	const kb_tile__stmt *wl = L->rows_wg ? kb_tile__rows_ws_loop(L) : NULL;
	L->rows_ws = wl && pf_all(wl);
	kb_tile__rows_ring_plan(L, L->rows_ws ? wl : NULL);
	L->rows_smem = 0;
	L->npf = 0;
	L->ndsum = L->nhoisted = 0;
	return L->rows;
}

/* ===== q: a 16-bit load kept packed ===== */

bool kb_tile__rows_packable(const kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__expr *v = st->value;
	return L->rows && st->kind == KB_TS_ASSIGN && st->defines && !st->op && v && kb_tile__is_load(v) &&
	       !v->nkw && st->type.rank == 2 && st->type.ext[1] > 1 && is_16bit(v->type.dtype) &&
	       v->args[0]->kind == KB_TE_SLICE && !kb_tile__reads_mem(v->args[0]);
}

static void copy_b(kb_tile__lw *L, const kb_tile__expr *w, const char *off, const char *et, bool sw);

typedef struct {
	const char *name;
	bool other;
	int mt;
	int64_t dots; /* the slots of the kernel's dots' results, a thread */
} use_ctx;

/* Whether name is read other than as a dot's A operand. */
static kb_tile__walkret use_expr(const kb_tile__expr *e, void *vctx)
{
	use_ctx *u = vctx;
	if (is_call(e, "dot"))
		u->dots += e->type.ext[1] / 2 * u->mt;
	if (is_call(e, "dot") && e->args[0]->kind == KB_TE_NAME && !strcmp(e->args[0]->name, u->name)) {
		kb_tile__walk_expr(e->args[1], use_expr, u);
		return u->other ? KB_TWALK_STOP : KB_TWALK_SKIP;
	}
	if (e->kind == KB_TE_NAME && !strcmp(e->name, u->name)) {
		u->other = true;
		return KB_TWALK_STOP;
	}
	return KB_TWALK_ON;
}

/* Slots 2 j and 2 j + 1 (columns c_ and c_ + 1 of a row) as one 32-bit
 * register, each 0 past the tensor: the A fragments of a dot read them as
 * they are; elsewhere kb_unpack2 gives a slot.  With two row tiles, where
 * these registers and the dots' results would pass 192 a thread (q at D =
 * 128: 64 beside o's 128 and s's 64; at D = 64 with 128 keys a step: 32, 64
 * and 128), they go to kb_smem instead as [RW][C + 8], when only dots' A
 * operands read them (ldmatrix there, as 02_fa2.cu's QREG = 0). */
int64_t kb_tile__rows_load_packed(kb_tile__lw *L, const kb_tile__stmt *st, const char *c)
{
	const kb_tile__expr *s = st->value->args[0];
	int64_t C = st->type.ext[1], qsmem = 0;
	kb_buf base = KB_BUF_INIT, rows = KB_BUF_INIT, cols = KB_BUF_INIT, ld = KB_BUF_INIT, at = KB_BUF_INIT;
	const kb_tile_param *t = kb_tile__param(L, s->name);
	use_ctx u = {.name = st->name, .mt = L->rows_mt};
	bool wg = L->rows_wg && C % 64 == 0; /* wgmma reads it from shared memory (lower_rowwg.c) */
	if ((wg || L->rows_mt > 1) && !kb_tile__walk_stmts(L->k->body, L->k->nbody, NULL, use_expr, &u) &&
	    (wg || C / 4 * L->rows_mt + u.dots > 192)) {
		if (wg)
			L->rows_smem = (L->rows_smem + 1023) / 1024 * 1024;
		char *off = kb_xasprintf("%lld", (long long)L->rows_smem);
		qsmem = L->rows_smem + 1;
		L->rows_smem += wg ? st->type.ext[0] * C * 2 : (st->type.ext[0] * (C + 8) * 2 + 127) / 128 * 128;
		if (wg)
			kb_tile__line(L, "/* %s: in kb_smem at %s as [%lld][%lld], swizzled: wgmma's A by descriptor */\n",
				      c, off, (long long)st->type.ext[0], (long long)C);
		else
			kb_tile__line(L, "/* %s: in kb_smem at %s as [%lld][%lld], a dot's A fragments by ldmatrix */\n",
				      c, off, (long long)st->type.ext[0], (long long)C + 8);
		if (L->npf) { /* in a loop copied a trip ahead: waited for here */
			copy_b(L, st->value, off, st->value->type.dtype == KB_TILE_F16 ? "__half" : "__nv_bfloat16", wg);
		} else { /* the wait goes with the first dot's: its b copy (copy_b) or its loop's trip
			  * (a trip ahead) waits for every older group, then a barrier; so the q and first
			  * k, v copies are in flight together, as 02_fa2.cu's */
			kb_tile__line(L, "__syncthreads(); /* the last reads of this tile are done */\n");
			if (L->rows_ws) { /* (the producer warpgroup copies the loop's b tiles alone) */
				kb_tile__line(L, "if ((int)threadIdx.x < %d) {\n", L->T);
				L->depth++;
			}
			kb_tile__rows_copy_issue(L, st->value, off, st->value->type.dtype == KB_TILE_F16 ? "__half" : "__nv_bfloat16",
				   wg);
			if (L->rows_ws)
				kb_tile__block_close(L, 1);
			kb_tile__line(L, "kb_cp_async_commit(); /* waited for with the first dot's b tiles */\n");
		}
		free(off);
		return qsmem;
	}
	if (!kb_tile__slice2(L, s, &base, &rows, &cols, &ld))
		goto out;
	long long J = C / 4 * L->rows_mt;
	kb_tile__line(L, "unsigned %s[%lld]; /* slots 2 j and 2 j + 1 a register */\n", c, J);
	kb_tile__access2_open(L, t, true, &base, &rows, &cols);
	kb_tile__line(L, "const unsigned short *u_ = (const unsigned short *)p_;\n");
	kb_tile__line(L, "const bool al_ = ((unsigned long long)p_ & 3) == 0 && %s %% 2 == 0; /* a pair a 32-bit load */\n",
		      ld.s);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int j_ = 0; j_ < %lld; j_++) {\n", J);
	L->depth++;
	kb_tile__line(L, "const int i_ = 2 * j_;\n");
	kb_tile__rows_at(L, C, &at);
	kb_tile__line(L, "%s", at.s);
	kb_tile__line(L, "(void)f_;\n");
	kb_tile__line(L, "const unsigned short *e_ = u_ + (size_t)r_ * %s + c_;\n", ld.s);
	kb_tile__line(L, "const bool in0_ = r_ < rows_ && c_ < cols_, in1_ = r_ < rows_ && c_ + 1 < cols_;\n");
	kb_tile__line(L, "const unsigned w_ = al_ && in1_ ? *(const unsigned *)e_ : 0u; /* c_ even: in1_ has in0_ */\n");
	kb_tile__line(L, "const unsigned lo_ = al_ && in1_ ? w_ & 0xffffu : in0_ ? e_[0] : 0u;\n");
	kb_tile__line(L, "const unsigned hi_ = al_ && in1_ ? w_ >> 16 : in1_ ? e_[1] : 0u;\n");
	kb_tile__line(L, "%s[j_] = lo_ | hi_ << 16;\n", c);
	kb_tile__block_close(L, 2);
out:
	kb_buf_free(&base);
	kb_buf_free(&rows);
	kb_buf_free(&cols);
	kb_buf_free(&ld);
	kb_buf_free(&at);
	return qsmem;
}

/* ===== dot ===== */

/* This thread's copies, landed through the generic proxy, made visible to
 * wgmma's reads (the async proxy); the barrier after publishes them. */
static void proxy_fence(kb_tile__lw *L)
{
	kb_tile__line(L, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); /* for wgmma */\n");
}

/* The copy where the dot is: barriers before (the buffer's last readers)
 * and after. */
static void copy_b(kb_tile__lw *L, const kb_tile__expr *w, const char *off, const char *et, bool sw)
{
	kb_tile__line(L, "__syncthreads(); /* the last reads of this b tile are done */\n");
	kb_tile__rows_copy_issue(L, w, off, et, sw);
	kb_tile__line(L, "kb_cp_async_commit();\n");
	kb_tile__line(L, "kb_cp_async_wait<0>();\n");
	if (sw)
		proxy_fence(L);
	kb_tile__line(L, "__syncthreads(); /* the b tile is in shared memory */\n");
}

/* ===== a trip ahead ===== */

static const kb_tile__expr *dot_b(const kb_tile__expr *e)
{
	const kb_tile__expr *b = e->args[1];
	return is_call(b, "trans") ? b->args[0] : b;
}

typedef struct {
	kb_tile__lw *L;
	const kb_tile__stmt *loop;
	bool ok;
	int dots; /* (pf_count) */
} pf_ctx;

static kb_tile__walkret assigned_in(const kb_tile__stmt *st, void *name)
{
	return st->kind == KB_TS_ASSIGN && !strcmp(st->name, name) ? KB_TWALK_STOP : KB_TWALK_ON;
}

/* A name a b slice may hold when copied a trip ahead: the loop's variable,
 * or one the loop does not assign. */
static kb_tile__walkret pf_name(const kb_tile__expr *e, void *vctx)
{
	pf_ctx *p = vctx;
	if (e->kind == KB_TE_NAME && strcmp(e->name, p->loop->name) &&
	    kb_tile__walk_stmts(p->loop->body, p->loop->nbody, assigned_in, NULL, (void *)e->name)) {
		p->ok = false;
		return KB_TWALK_STOP;
	}
	return KB_TWALK_ON;
}

static kb_tile__walkret pf_dot(const kb_tile__expr *e, void *vctx)
{
	pf_ctx *p = vctx;
	kb_tile__lw *L = p->L;
	if (!is_call(e, "dot"))
		return KB_TWALK_ON;
	p->ok = true;
	kb_tile__walk_expr(dot_b(e)->args[0], pf_name, p);
	if (p->ok && L->npf < 8) {
		const kb_tile__expr *w = dot_b(e);
		int64_t bytes = (w->type.ext[0] * (w->type.ext[1] + 8) * 2 + 127) / 128 * 128;
		if (L->rows_wg) { /* swizzled: 1024-byte atoms */
			bytes = w->type.ext[0] * w->type.ext[1] * 2;
			L->rows_smem = (L->rows_smem + 1023) / 1024 * 1024;
		}
		L->pf[L->npf] = e;
		L->pf_off[L->npf] = L->rows_smem;
		L->pf_bytes[L->npf++] = bytes;
		L->rows_smem += 2 * bytes;
	}
	return KB_TWALK_ON;
}

static kb_tile__walkret pf_count(const kb_tile__expr *e, void *vctx)
{
	pf_ctx *p = vctx;
	if (is_call(e, "dot")) {
		p->dots++;
		kb_tile__walk_expr(dot_b(e)->args[0], pf_name, p);
	}
	return p->ok ? KB_TWALK_ON : KB_TWALK_STOP;
}

/* Whether loop st copies every dot's b a trip ahead: each in a statement of
 * its own body, its slice naming only the loop's variable and what the loop
 * does not assign (the producer warpgroup copies them all). */
static bool pf_all(const kb_tile__stmt *st)
{
	pf_ctx p = {.loop = st, .ok = true};
	kb_tile__walk_expr(st->hi, pf_name, &p);
	kb_tile__walk_expr(st->step, pf_name, &p);
	for (int i = 0; i < st->nbody && p.ok; i++) {
		const kb_tile__stmt *b = st->body[i];
		int n = p.dots;
		if (b->kind == KB_TS_ASSIGN || b->kind == KB_TS_STORE)
			kb_tile__stmt_exprs(b, pf_count, &p);
		else /* a nested statement's dots are copied where they are */
			p.ok = !kb_tile__walk_stmt(b, NULL, pf_count, &p) && p.dots == n;
	}
	return p.ok && p.dots > 0 && p.dots <= 8 &&
	       !kb_tile__walk_stmts(st->body, st->nbody, assigned_in, NULL, (void *)st->name);
}

bool kb_tile__rows_loop_open(kb_tile__lw *L, const kb_tile__stmt *st, const char *cn, const char *lo,
			     const char *hi, const char *step)
{
	if (L->npf)
		return false; /* an inner loop of one copied ahead copies where its dots are */
	pf_ctx p = {.L = L, .loop = st, .ok = true};
	kb_tile__walk_expr(st->hi, pf_name, &p); /* the next trip is known at the top of this one */
	kb_tile__walk_expr(st->step, pf_name, &p);
	if (!p.ok || kb_tile__walk_stmts(st->body, st->nbody, assigned_in, NULL, (void *)st->name))
		return false;
	for (int i = 0; i < st->nbody; i++) /* dots of its own statements: once a trip */
		if (st->body[i]->kind == KB_TS_ASSIGN || st->body[i]->kind == KB_TS_STORE)
			kb_tile__stmt_exprs(st->body[i], pf_dot, &p);
	if (!L->npf)
		return false;
	kb_tile__line(L, "{\n");
	L->depth++;
	kb_tile__line(L, "int kb_par_ = 0; /* the b buffers this trip reads; the next trip's are copied "
		      "meanwhile */\n");
	bool ovl = kb_tile__rows_wg_ovl_plan(L, st);
	if (L->rows_ws) { /* the producer warpgroup copies them (lower_rowwg.c) */
		kb_tile__rows_ring_open(L, cn, lo, hi, step);
	} else {
		kb_tile__line(L, "if (%s < %s) { /* the first trip's b tiles */\n", lo, hi);
		L->depth++;
		kb_tile__line(L, "const int %s = %s;\n", cn, lo);
		kb_tile__rows_pf_issue(L, "0", 0, L->npf);
		kb_tile__block_close(L, 1);
		kb_tile__line(L, "kb_cp_async_commit();\n");
	}
	if (ovl) {
		const kb_tile__expr *a = L->pf[1]->args[0];
		if (!L->rows_ws)
			kb_tile__line(L, "kb_cp_async_commit(); /* (empty) two groups a trip: the next trip's first b, "
				      "then its second once the last trip's second dot is done */\n");
		kb_tile__line(L, "int kb_pv_ = 0; /* a trip's second dot waits to be issued in the next trip */\n");
		kb_tile__line(L, "unsigned kb_pw_[%lld][%d][4]; /* its A fragments */\n",
			      (long long)a->type.ext[1] / 16, L->rows_mt);
		L->ovl_cn = kb_xstrdup(cn);
		L->ovl_hi = kb_xstrdup(hi);
	}
	return true;
}

void kb_tile__rows_loop_top(kb_tile__lw *L, const char *cn, const char *hi, const char *step)
{
	if (L->rows_ws) { /* overlapped: the second dot's b tile waited for in its trip (lower_rowwg.c) */
		for (int i = 0; i < (L->rows_ovl ? 1 : L->npf); i++)
			kb_tile__rows_ring_wait(L, i, "kb_par_", "kb_it_", "the producer's copy of this trip's b tile");
		return;
	}
	kb_tile__line(L, "if (%s + %s < %s) { /* the next trip's b tiles, into the other buffers */\n", cn, step,
		      hi);
	L->depth++;
	kb_tile__line(L, "const int kb_next_ = %s + %s;\n", cn, step);
	kb_tile__line(L, "{\n");
	L->depth++;
	kb_tile__line(L, "const int %s = kb_next_;\n", cn);
	kb_tile__rows_pf_issue(L, "kb_par_ ^ 1", 0, L->rows_ovl ? 1 : L->npf); /* overlapped: the second in the trip */
	kb_tile__block_close(L, 2);
	kb_tile__line(L, "kb_cp_async_commit();\n");
	if (L->rows_ovl) {
		L->ovl_step = kb_xstrdup(step);
		kb_tile__line(L, "kb_cp_async_wait<2>(); /* this trip's first b and the last trip's second have "
			      "landed */\n");
	} else
		kb_tile__line(L, "kb_cp_async_wait<1>(); /* this trip's copies have landed */\n");
	if (L->rows_wg)
		proxy_fence(L);
	kb_tile__line(L, "__syncthreads(); /* this trip's b tiles are in shared memory */\n");
}

void kb_tile__rows_loop_end(kb_tile__lw *L)
{
	if (L->rows_ovl) { /* (the barrier before the second copy: every warp's first dot is done) */
		kb_tile__line(L, L->rows_ws ? "kb_par_ ^= 1, kb_it_++;\n" : "kb_par_ ^= 1;\n");
		return;
	}
	if (L->rows_ws) {
		for (int i = 0; i < L->npf; i++)
			kb_tile__rows_ring_free(L, i, "kb_par_", "this warp's dots read this trip's b tiles");
		kb_tile__line(L, "kb_it_++;\n");
	} else
		kb_tile__line(L, "__syncthreads(); /* every warp has read this trip's b tiles: the next trip refills "
			      "them */\n");
	kb_tile__line(L, "kb_par_ ^= 1;\n");
}

void kb_tile__rows_loop_close(kb_tile__lw *L)
{
	if (!L->rows_ws)
		kb_tile__line(L, "kb_cp_async_wait<0>(); /* the last (empty) group */\n");
	if (L->rows_ovl) {
		kb_tile__rows_wg_ovl_close(L);
		free(L->ovl_cn);
		free(L->ovl_hi);
		free(L->ovl_step);
		L->ovl_cn = L->ovl_hi = L->ovl_step = NULL;
	}
	kb_tile__block_close(L, 1);
	L->npf = 0;
}

/* c[i_] = x at slot i_, the body of a loop over the slots. */
static void start_slots(kb_tile__lw *L, const kb_tile__expr *x, const char *c)
{
	kb_buf x0 = KB_BUF_INIT;
	kb_tile__cexpr(L, x, "i_", &x0);
	kb_tile__line(L, "\t%s[i_] = %s;\n", c, x0.s);
	kb_buf_free(&x0);
}

/* A dot's start x * r (or r * x) with r an f32 [RW, 1] variable (attention's
 * acc * alpha): the n slots of c are x where r is exactly 1 in every row of
 * the warp (x * 1 is x; the rows whose max did not grow, most trips past
 * the first few), x * r where not: 02_fa2.cu's LAZY rescale, a warp-uniform
 * branch.  False (nothing written) for a start of another form. */
static bool lazy_start(kb_tile__lw *L, const kb_tile__expr *init, const char *c, long long C)
{
	long long n = C / 2 * L->rows_mt;
	for (int k = 0; k < 2; k++) {
		const kb_tile__expr *r = kb_tile__rows_lazy_factor(L, init, k);
		if (!r)
			continue;
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int i_ = 0; i_ < %lld; i_++)\n", n);
		start_slots(L, init->args[1 - k], c);
		kb_tile__rows_lazy_scale(L, c, kb_tile__lw_lookup(L, r->name)->c, C);
		return true;
	}
	return false;
}

void kb_tile__rows_dot(kb_tile__lw *L, const kb_tile__expr *e, const kb_tile__expr *init)
{
	const kb_tile__expr *a = e->args[0], *b = e->args[1];
	bool bt = is_call(b, "trans");
	const kb_tile__expr *w = bt ? b->args[0] : b;
	long long K = a->type.ext[1], C = e->type.ext[1], WC = w->type.ext[1], P = WC + 8;
	const char *et = a->type.dtype == KB_TILE_F16 ? "__half" : "__nv_bfloat16";
	char *off = NULL;
	for (int i = 0; i < L->npf; i++)
		if (L->pf[i] == e)
			off = kb_xasprintf("%lld + kb_par_ * %lld", (long long)L->pf_off[i], (long long)L->pf_bytes[i]);
	char *c = kb_tile__new_tmp(L);
	int MT = L->rows_mt, S = 4 * MT;
	bool ovl_s = L->rows_ovl && e == L->pf[0], ovl_pv = L->rows_ovl && e == L->pf[1]; /* lower_rowwg.c */
	if (MT == 1)
		kb_tile__line(L, "float %s[%lld]; /* dot: this warp's m16 band, %lld n8 pieces */\n", c, C / 2, C / 8);
	else
		kb_tile__line(L, "float %s[%lld]; /* dot: this warp's %d m16 bands, %lld n8 pieces each */\n", c,
			      C / 2 * MT, MT, C / 8);
	if (!off) { /* copied here */
		if (L->rows_wg)
			L->rows_smem = (L->rows_smem + 1023) / 1024 * 1024;
		off = kb_xasprintf("%lld", (long long)L->rows_smem);
		L->rows_smem += L->rows_wg ? w->type.ext[0] * WC * 2 : (w->type.ext[0] * P * 2 + 127) / 128 * 128;
		copy_b(L, w, off, et, L->rows_wg);
	}
	kb_tile__line(L, "{\n");
	L->depth++;
	const kb_tile__lsym *as = a->kind == KB_TE_NAME ? kb_tile__lw_lookup(L, a->name) : NULL;
	bool ss = L->rows_wg && as && as->packed && as->qsmem; /* a in shared memory: wgmma reads it there */
	if (!L->rows_wg)
		kb_tile__line(L, "const int l_ = (int)threadIdx.x %% 32;\n");
	/* w [C][K]: matrices (n pair, k half) at rows 16 np + l / 16 * 8 + l % 8, column 16 kk + l / 8 % 2 * 8;
	 * w [K][C], transposed by ldmatrix: rows 16 kk + l / 8 % 2 * 8 + l % 8, column 16 np + l / 16 * 8 */
	if (L->rows_wg) /* the swizzled tile's start: wgmma's descriptors step from it */
		kb_tile__line(L, "const unsigned bl_ = (unsigned)__cvta_generic_to_shared(kb_smem + %s);\n", off);
	else if (bt)
		kb_tile__line(L, "const unsigned bl_ = (unsigned)__cvta_generic_to_shared(kb_smem + %s) + (unsigned)((l_ / 16 "
			      "* 8 + l_ %% 8) * %lld + l_ / 8 %% 2 * 8) * 2;\n", off, P);
	else
		kb_tile__line(L, "const unsigned bl_ = (unsigned)__cvta_generic_to_shared(kb_smem + %s) + (unsigned)((l_ / 8 "
			      "%% 2 * 8 + l_ %% 8) * %lld + l_ / 16 * 8) * 2;\n", off, P);
	long long PA = K + 8;
	if (ss) /* the warpgroup's first row */
		kb_tile__line(L, "const unsigned al_ = (unsigned)__cvta_generic_to_shared(kb_smem + %lld) + (unsigned)"
			      "((int)threadIdx.x / 128 * %d * 128);\n", (long long)as->qsmem - 1, 64 * MT);
	else if (as && as->packed && as->qsmem) /* a's rows l_ % 16 of each row tile, columns l_ / 16 * 8 */
		kb_tile__line(L, "const unsigned al_ = (unsigned)__cvta_generic_to_shared(kb_smem + %lld) + (unsigned)"
			      "(((int)threadIdx.x / 32 * %d + l_ %% 16) * %lld + l_ / 16 * 8) * 2;\n",
			      (long long)as->qsmem - 1, 16 * MT, PA);
	if (init && kb_tile__rows_prescaled(L, init)) { /* x * r: x was rescaled in place already */
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int i_ = 0; i_ < %lld; i_++)\n", C / 2 * MT);
		start_slots(L, kb_tile__rows_prescaled(L, init), c);
	} else if (init && lazy_start(L, init, c, C)) {
		/* x * r + dot(...), r all 1 in the warp's rows: x */
	} else if (init) { /* x + dot(...): the mma accumulates onto x */
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int i_ = 0; i_ < %lld; i_++)\n", C / 2 * MT);
		start_slots(L, init, c);
	} else if (L->rows_wg) { /* wgmma's first k16 step ignores them (scale-d 0) */
		kb_tile__line(L, "kb_rwg_undef<%lld>(%s); /* the first k16 step starts the sum (scale-d 0) */\n",
			      C / 2 * MT, c);
	} else {
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int i_ = 0; i_ < %lld; i_++)\n", C / 2 * MT);
		kb_tile__line(L, "\t%s[i_] = 0.0f;\n", c);
	}
	kb_buf x[8] = {KB_BUF_INIT, KB_BUF_INIT, KB_BUF_INIT, KB_BUF_INIT, KB_BUF_INIT, KB_BUF_INIT,
		       KB_BUF_INIT, KB_BUF_INIT};
	if (ss) {
		kb_tile__rows_wg_issue(L, c, "aw_", bt, K, C, a->type.dtype == KB_TILE_F16, a->type.ext[0], !init,
				       ovl_s ? 1 : 0);
		if (ovl_s)
			kb_tile__rows_wg_ovl_issue(L, c, C / 2 * MT);
		kb_tile__block_close(L, 1);
		goto done;
	}
	const char *aw = ovl_pv ? "kb_pw_" : "aw_"; /* overlapped: issued in the next trip */
	if (L->rows_wg && !ovl_pv) /* every A fragment before the first wgmma (wgmma.fence orders them) */
		kb_tile__line(L, "unsigned aw_[%lld][%d][4];\n", K / 16, MT);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int k_ = 0; k_ < %lld; k_++) {\n", K / 16);
	L->depth++;
	if (MT == 1)
		kb_tile__line(L, "/* a's slots 8 k_ .. 8 k_ + 7: rows g, g + 8 at columns 16 k_ + 2 t, then + 8 */\n");
	else /* row tile mt's A fragment: slots 2 S k_ + 4 mt .. + 3, then S on */
		kb_tile__line(L, "/* row tile mt: a's slots %d k_ + 4 mt .. + 3 (rows g, g + 8 at columns 16 k_ + 2 t), "
			      "then %d on (+ 8) */\n", 2 * S, S);
	/* bf16(p): the pair's packing rounds p as the cast would */
	const kb_tile__expr *av = a;
	if (a->kind == KB_TE_CALL && a->nargs == 1 && !strcmp(a->name, kb_tile_dtype_name(a->type.dtype)) &&
	    kb_tile__compute(a->args[0]->type.dtype) == KB_TILE_F32)
		av = a->args[0];
	for (int mt = 0; mt < MT; mt++) {
		char af[8];
		snprintf(af, sizeof af, MT == 1 ? "af_" : "af%d_", mt);
		if (as && as->packed && as->qsmem) {
			kb_tile__line(L, "unsigned %s[4];\n", af);
			kb_tile__line(L, "kb_ldmatrix_x4(%s, al_ + (unsigned)(%lld + k_ * 16) * 2);\n", af,
				      (long long)mt * 16 * PA);
			continue;
		}
		if (as && as->packed) {
			int r = 2 * mt, h = S / 2 + 2 * mt; /* slots 16 k_ + 4 mt (+ 8) are registers k_ S + r (+ h) */
			if (MT == 1)
				kb_tile__line(L, "const unsigned %s[4] = {%s[k_ * 4], %s[k_ * 4 + 1], %s[k_ * 4 + 2], "
					      "%s[k_ * 4 + 3]};\n", af, as->c, as->c, as->c, as->c);
			else
				kb_tile__line(L, "const unsigned %s[4] = {%s[k_ * %d + %d], %s[k_ * %d + %d], %s[k_ * %d + %d], "
					      "%s[k_ * %d + %d]};\n", af, as->c, S, r, as->c, S, r + 1, as->c, S, h, as->c,
					      S, h + 1);
			continue;
		}
		for (int j = 0; j < 8; j++) {
			char i[32];
			snprintf(i, sizeof i, "(k_ * %d + %d)", 2 * S, j < 4 ? 4 * mt + j : S + 4 * mt + j - 4);
			kb_buf_reset(&x[j]);
			kb_tile__cexpr(L, av, i, &x[j]);
		}
		kb_tile__line(L, "const unsigned %s[4] = {\n", af);
		for (int j = 0; j < 4; j++) {
			kb_tile__ind(L);
			kb_buf_catf(L->o, "\tkb_pack2(%s, %s, (const %s *)0)%s\n", x[2 * j].s, x[2 * j + 1].s, et,
				    j < 3 ? "," : "};");
		}
	}
	if (L->rows_wg) {
		for (int mt = 0; mt < MT; mt++)
			kb_tile__line(L, "%s[k_][%d][0] = af%s_[0], %s[k_][%d][1] = af%s_[1], %s[k_][%d][2] = af%s_[2], "
				      "%s[k_][%d][3] = af%s_[3];\n", aw, mt, MT == 1 ? "" : mt ? "1" : "0", aw, mt,
				      MT == 1 ? "" : mt ? "1" : "0", aw, mt, MT == 1 ? "" : mt ? "1" : "0", aw, mt,
				      MT == 1 ? "" : mt ? "1" : "0");
		kb_tile__block_close(L, 1);
		if (!ovl_pv)
			kb_tile__rows_wg_issue(L, c, aw, bt, K, C, a->type.dtype == KB_TILE_F16, 0, !init, ovl_s ? 1 : 0);
		if (ovl_s)
			kb_tile__rows_wg_ovl_issue(L, c, C / 2 * MT);
		kb_tile__block_close(L, 1);
		goto done;
	}
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int n_ = 0; n_ < %lld; n_++) {\n", C / 16);
	kb_tile__line(L, "\tunsigned bf_[2][2];\n");
	if (bt)
		kb_tile__line(L, "\tkb_ldmatrix_x4(&bf_[0][0], bl_ + (unsigned)(n_ * 16 * %lld + k_ * 16) * 2);\n", P);
	else
		kb_tile__line(L, "\tkb_ldmatrix_x4_trans(bf_[0], bf_[1], bl_ + (unsigned)(k_ * 16 * %lld + n_ * 16) * 2);\n",
			      P);
	if (MT == 1) {
		kb_tile__line(L, "\tkb_mma(%s + n_ * 8, af_, bf_[0], (const %s *)0);\n", c, et);
		kb_tile__line(L, "\tkb_mma(%s + n_ * 8 + 4, af_, bf_[1], (const %s *)0);\n", c, et);
	} else {
		kb_tile__line(L, "\t/* each B fragment feeds both row tiles: n8 piece nt of row tile mt at %d nt + 4 mt */\n",
			      S);
		for (int mt = 0; mt < MT; mt++) {
			kb_tile__line(L, "\tkb_mma(%s + n_ * %d + %d, af%d_, bf_[0], (const %s *)0);\n", c, 2 * S, 4 * mt,
				      mt, et);
			kb_tile__line(L, "\tkb_mma(%s + n_ * %d + %d, af%d_, bf_[1], (const %s *)0);\n", c, 2 * S,
				      S + 4 * mt, mt, et);
		}
	}
	kb_tile__line(L, "}\n");
	kb_tile__block_close(L, 2);
done:
	for (int j = 0; j < 8; j++)
		kb_buf_free(&x[j]);
	kb_tile__add_mat(L, e, c, false);
	free(off);
}

/* ===== the kernel's part ===== */

void kb_tile__rows_decls(kb_tile__lw *L)
{
	if (!L->rows_wg) {
		kb_buf_catf(L->o, "\textern __shared__ __align__(128) unsigned char kb_smem[]; /* the dots' b tiles: "
			    "%lld bytes */\n", (long long)L->rows_smem);
		return;
	}
	L->rows_smem += 1024; /* the swizzled tiles' 1 KiB atoms: kb_smem rounded up to one */
	kb_buf_catf(L->o, "\textern __shared__ __align__(1024) unsigned char kb_smem_raw_[]; /* the dots' b tiles "
		    "(swizzled for wgmma): %lld bytes */\n", (long long)L->rows_smem);
	kb_buf_cat(L->o, "\tunsigned char *const kb_smem = kb_smem_raw_ + ((1024u - ((unsigned)__cvta_generic_to_shared("
		   "kb_smem_raw_) & 1023u)) & 1023u);\n");
}
