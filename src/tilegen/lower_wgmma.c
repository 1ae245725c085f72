/*
 * lower_wgmma.c - dot on sm_90a: the canonical loop
 *     acc = zeros(BM, BN)
 *     for k in range(lo, K, step) {
 *         x = load(a[m0 : m0 + BM, k : k + 64])
 *         w = load(b[k : k + 64, n0 : n0 + BN])
 *         acc += dot(x, w)
 *     }
 * as kernels/gemm/04_wgmma.cu runs it: the block is threads() consumer
 * threads (one or two warpgroups) and one producer warpgroup more.  The
 * producer gives its registers away (setmaxnreg.dec 40) and fills a
 * STAGES-deep ring of shared tiles, a stage's "full" mbarrier completing
 * when its copies have landed; the consumers (setmaxnreg.inc 232) wait on
 * it, issue wgmma.mma_async m64nBNk16 straight from shared memory (matrix
 * descriptors, no ldmatrix), keep one group in flight and hand the stage
 * back on its "empty" mbarrier.  The producer then leaves, and the
 * consumers run the epilogue in the mma layout (lower_dot.c) with warp v
 * holding rows wm0_ = v / 4 * BM / CONS + v % 4 * 16 + 64 mt: a warp's
 * part of a wgmma result is that of an m16n8 mma, so the epilogue's code is
 * the mma.sync one with m pieces 64 rows apart (MS), so a bias row, an
 * activation and a cast before the store are the mma.sync epilogue's too.
 * A kernel of the file without a dot and of the same threads() (a `//! ref
 * kernel`, which runs with the tested kernel's launch) takes the launch,
 * threads() + 128, its extra warpgroup returning at once (lower.c).
 *
 * Persistent (with TMA and a 1-d grid, as 04_wgmma.cu): min(sm_count,
 * grid) blocks, each looping over programs pid(0) = blockIdx.x, +
 * gridDim.x, ... (lower.c).  The ring, its mbarriers and the warp roles are
 * made once before that loop (kb_tile__wgmma_persist_head), and each role
 * gets a loop over the programs of its own (lower_wgepi.c: else ptxas
 * drops setmaxnreg; --define KB_WG_ROLES=0 keeps one); both roles count
 * the ring's trips across tiles (it_) so stages and mbarrier phases carry
 * on, the producer goes on to the next tile's copies while the consumers
 * run this tile's epilogue, and the consumers hand back every stage, the
 * last one too.  The statements before the loop (scalars) run in both
 * roles each tile; those after it have no barrier (around_ok), so the
 * roles never wait on each other but through the ring.
 *
 * Shared memory: a's [BM][64] tile K-major, 128-byte rows, b's [64][BN]
 * tile as BN / 64 blocks of [64][64] N-major (wgmma transposes it), both
 * with the 128-byte swizzle (16-byte chunk c of row r at c ^ r % 8), the
 * layouts the descriptors name.
 *
 * The copies are TMA, as 04_wgmma.cu's: the kernel takes two CUtensorMaps
 * after its own parameters (kb_tma_a, kb_tma_b) and the lowering gives the
 * spec the `//! tensormap` lines that bind them (kb_tile_kernel.spec: a's
 * [BM][64] box, b's [64][64], 128-byte swizzle, unaligned=zero); one
 * producer thread puts a stage's byte count on its full mbarrier and issues
 * 1 + BN / 64 box copies, which land in the layout below (the copy engine
 * swizzles) with zeros past the tensor's edges, through the async proxy
 * wgmma reads (no proxy fence).  Where the runner passed zeros (rows that
 * are no 16-byte multiples, S = 1001), and always with --define KB_TMA=0
 * (the lowering before), every producer thread copies with cp.async (16
 * bytes, zeros past the edges, cp.async.mbarrier.arrive) where the rows
 * are 16-byte aligned, else element by element, and the consumers fence
 * the proxies each trip.
 *
 * The epilogue's store, on the TMA path (persistent): the first store after
 * the loop of the [BM, BN] result to a bf16 or f16 tensor, unmasked, whose
 * value calls no transcendental (plan_store says why), goes out by TMA
 * (kb_tile__wgmma_store, lower_wgepi.c): each consumer warpgroup converts its
 * part into two 8 KiB shared buffers after the ring ([64][64] blocks,
 * 128-byte swizzled, so a warp's pair stores hit eight bank groups), and
 * one thread of it sends each block with cp.async.bulk.tensor, which clips
 * at the tensor's edges (a third tensormap, kb_tma_out), waiting only
 * until a buffer's last store has read it; the consumers then go back to
 * the next tile's wgmma without the 4-byte global stores of the mma
 * layout (8 rows a warp instruction).  Where the runner passed zeros for
 * that map (S = 1001) the store from registers runs, as it always does
 * with --define KB_WG_STORE=0 or where the buffers do not fit;
 * --define KB_WG_STORE=1 takes the TMA store whatever the value (=2 each
 * pair's value worked out where it is written, =3 a block's 16 pairs
 * before the wait for its buffer).
 *
 * Pingpong (--define KB_WG_PINGPONG=1, persistent threads(128) kernels
 * whose loop has the same trips in every program): two consumer
 * warpgroups, each every other program of the block's with its own
 * accumulators and store buffers, the producer filling the ring for all
 * the block's tiles in order; they take turns (named barriers 3 and 4), so
 * one's epilogue runs under the other's wgmma and no wait runs ahead of
 * the ring's mbarrier phases.
 *
 * What falls back to mma.sync (plan_wgmma says which): a target other than
 * sm_90a; more than one dot loop or update; operands that are not bf16 or
 * f16 loads without keywords, sliced as above (k the loop variable, 64 of
 * it: one 128-byte swizzle row); threads() other than 128 or 256; BM not
 * 64 rows a consumer warpgroup's m piece (one or two of them), BN not 64,
 * 128 or 256 (one wgmma's n), more than 128 accumulators a thread; more
 * shared memory than an SM has; statements around the loop that would run
 * in the producer (anything but scalars before it) or need every thread
 * after it (loops, ifs, reductions).
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WG_BK = 64, WG_SMEM_MAX = 227 * 1024, WG_ST_BLOCK = 64 * 64 * 2 /* a [64][64] store buffer */ };
/* The TMA store of a value that calls a transcendental, by default: 0
 * none (from registers), else its way (kb_tile__mma.tmode): each value
 * where it is written (plan_store says why). */
enum { WG_STORE_MATH = 2 };

bool kb_tile__wgmma_target(const kb_tile__file *f)
{
	return f->arch && !strcmp(f->arch, "sm_90a");
}

static kb_tile__walkret is_reduction(const kb_tile__expr *e, void *ctx)
{
	(void)ctx;
	return kb_tile__is_reduction(e) || (e->kind == KB_TE_CALL && !strcmp(e->name, "dot"))
	       ? KB_TWALK_STOP : KB_TWALK_ON;
}

/* Whether the statements around the loop (at index at of the body) let the
 * producer leave after it: scalars (and the accumulator) before it, only
 * element-wise assignments and stores after it. */
static bool around_ok(const kb_tile__lw *L, int at)
{
	const kb_tile__kernel_ast *k = L->k;
	for (int i = 0; i < k->nbody; i++) {
		const kb_tile__stmt *st = k->body[i];
		if (i == at || st->kind == KB_TS_CONST)
			continue;
		if (st->kind != KB_TS_ASSIGN && (i < at || st->kind != KB_TS_STORE))
			return false;
		if (kb_tile__walk_stmt(st, NULL, is_reduction, NULL))
			return false;
		const kb_tile__type *t = &st->type; /* before it: scalars, or the accumulator */
		if (i < at && t->rank != 0 &&
		    (t->rank != 2 || t->ext[0] != L->mma.BM || t->ext[1] != L->mma.BN))
			return false;
	}
	return true;
}

/* Whether operand o is load(t[..., ...]) of a bf16 or f16 tensor, its
 * dimension d starting at the loop variable v and the other not naming it. */
static bool operand_ok(const kb_tile__lw *L, const kb_tile__dotop *o, int d, const char *v,
		       kb_tile_dtype *dt)
{
	const kb_tile__expr *s = o->load->args[0];
	const kb_tile_param *t = kb_tile__param(L, s->name);
	if (o->load->nkw || !t || t->rank != 2 || s->nidx != 2 || !s->idx[0].hi || !s->idx[1].hi ||
	    (t->dtype != KB_TILE_BF16 && t->dtype != KB_TILE_F16))
		return false;
	const kb_tile__expr *k0 = s->idx[d].lo;
	*dt = t->dtype;
	return k0->kind == KB_TE_NAME && !strcmp(k0->name, v) && !kb_tile__names(s->idx[1 - d].lo, v);
}

static kb_tile__walkret is_transcendental(const kb_tile__expr *e, void *ctx)
{
	static const char *const fns[] = {"exp", "exp2", "log", "tanh", "erf", "sigmoid", "sin", "cos",
					  "log1p", "expm1", "pow"};
	(void)ctx;
	for (size_t i = 0; e->kind == KB_TE_CALL && i < sizeof fns / sizeof fns[0]; i++)
		if (!strcmp(e->name, fns[i]))
			return KB_TWALK_STOP;
	return KB_TWALK_ON;
}

/* The store a persistent TMA kernel sends from shared memory (m->tstore):
 * the first after the loop of a [BM, BN] value to a bf16 or f16 tensor,
 * unmasked, where each consumer warpgroup's two [64][64] buffers fit
 * beside the ring; none with --define KB_WG_STORE=0, and its values
 * worked out as m->tmode says (KB_WG_STORE=1, 2, 3).  A value that calls
 * a transcendental (a GELU) takes it too, each value where it is written
 * (WG_STORE_MATH), since the consumers have their registers (lower_wgepi.c;
 * with 168 the TMA store took row (9) from 208.6 to 225.8 us): on an H200
 * (2026-11-28T16:31Z) row (9) with tanh(x, exact = false) 189.8 us against
 * 205.3 from registers (a block at a time 191.8, all values first 191.2),
 * with tanhf 212.4 (a block at a time) against 211.0. */
static void plan_store(kb_tile__lw *L, int at)
{
	kb_tile__mma *m = &L->mma;
	const kb_tile__kernel_ast *k = L->k;
	int64_t more = (int64_t)(m->pp ? 2 : L->T / 128) * 2 * WG_ST_BLOCK; /* the consumer warpgroups' */
	if (!m->tma || !L->f->wg_store || !k->grid[0] || k->grid[1] || m->smem + more > WG_SMEM_MAX)
		return;
	for (int i = at + 1; i < k->nbody; i++) {
		const kb_tile__stmt *st = k->body[i];
		if (st->kind != KB_TS_STORE || st->op || st->mask || st->slice->type.rank != 2 ||
		    st->slice->type.ext[0] != m->BM || st->slice->type.ext[1] != m->BN)
			continue;
		const kb_tile_param *t = kb_tile__param(L, st->slice->name);
		if (!t || t->rank != 2 || (t->dtype != KB_TILE_BF16 && t->dtype != KB_TILE_F16))
			continue;
		bool math = kb_tile__walk_expr(st->value, is_transcendental, NULL);
		if (L->f->wg_store < 0 && math && !WG_STORE_MATH)
			return;
		m->tstore = st;
		m->tmode = L->f->wg_store > 0 ? L->f->wg_store : math ? WG_STORE_MATH : 1;
		m->smem += more;
		return;
	}
}

static kb_tile__walkret is_pid(const kb_tile__expr *e, void *ctx)
{
	(void)ctx;
	return e->kind == KB_TE_CALL && !strcmp(e->name, "pid") ? KB_TWALK_STOP : KB_TWALK_ON;
}

/* Whether e is the same in every program: no pid(), no variable of the body. */
static bool same_each_program(const kb_tile__kernel_ast *k, const kb_tile__expr *e)
{
	if (!e)
		return true;
	if (kb_tile__walk_expr(e, is_pid, NULL))
		return false;
	for (int i = 0; i < k->nbody; i++)
		if (k->body[i]->kind == KB_TS_ASSIGN && kb_tile__names(e, k->body[i]->name))
			return false;
	return true;
}

/* Whether pingpong applies (CUTLASS's KernelTmaWarpSpecializedPingpong,
 * written from the ring): each consumer counts the ring's trips of the
 * other's tiles too, so its loop's trips must be the same in every program. */
static bool plan_pingpong(const kb_tile__lw *L, const kb_tile__dotloop *lp)
{
	const kb_tile__stmt *f = lp->loop;
	return L->f->wg_pingpong && L->T == 128 && !L->f->no_tma && L->k->grid[0] && !L->k->grid[1] &&
	       same_each_program(L->k, f->lo) && same_each_program(L->k, f->hi) &&
	       same_each_program(L->k, f->step);
}

void kb_tile__plan_wgmma(kb_tile__lw *L)
{
	kb_tile__mma *m = &L->mma;
	if (L->ndloops != 1 || L->dloops[0].nupds != 1 || L->T % 128 || L->T > 256)
		return;
	const kb_tile__dotloop *lp = &L->dloops[0];
	const kb_tile__dotupd *u = &lp->upds[0];
	const kb_tile__dotop *a = &lp->ops[u->a], *b = &lp->ops[u->b];
	kb_tile_dtype da, db;
	if (!operand_ok(L, a, 1, lp->loop->name, &da) || !operand_ok(L, b, 0, lp->loop->name, &db) ||
	    da != db || a->load->type.ext[1] != WG_BK || b->load->type.ext[0] != WG_BK)
		return;
	int at = -1;
	for (int i = 0; i < L->k->nbody; i++)
		if (L->k->body[i] == lp->loop)
			at = i;
	if (at < 0 || !around_ok(L, at))
		return;
	int cons = L->T / 128;
	int64_t BM = m->BM, BN = m->BN, smem = (int64_t)m->stages * (BM + BN) * WG_BK * 2 + 1024;
	if (BM % (64 * cons) || BM / (64 * cons) > 2 || (BN != 64 && BN != 128 && BN != 256) ||
	    BM / (64 * cons) * BN > 256 || smem > WG_SMEM_MAX)
		return;
	m->wg = true;
	m->WM = 4 * cons;
	m->WN = 1;
	m->MT = (int)(BM / (64 * cons));
	m->NT = (int)(BN / 8);
	m->MS = 64;
	m->smem = smem;
	m->tma = !L->f->no_tma;
	m->pp = plan_pingpong(L, lp);
	plan_store(L, at);
}

/* ===== TMA: the tensormaps the spec gets and the kernel takes ===== */

void kb_tile__wgmma_params(kb_tile__lw *L)
{
	if (L->mma.wg && L->mma.tma)
		kb_buf_cat(L->o, ", const __grid_constant__ CUtensorMap kb_tma_a, "
			   "const __grid_constant__ CUtensorMap kb_tma_b");
	if (L->mma.wg && L->mma.tstore)
		kb_buf_cat(L->o, ", const __grid_constant__ CUtensorMap kb_tma_out");
}

char *kb_tile__wgmma_spec(const kb_tile__lw *L)
{
	if (!L->mma.wg || !L->mma.tma)
		return NULL;
	const kb_tile__dotloop *lp = &L->dloops[0];
	const kb_tile__dotupd *u = &lp->upds[0];
	const char *a = lp->ops[u->a].load->args[0]->name, *b = lp->ops[u->b].load->args[0]->name;
	const kb_tile__stmt *st = L->mma.tstore;
	char *out = st ? kb_xasprintf("//! tensormap kb_tma_out : %s box=(64, 64) swizzle=128 unaligned=zero\n",
				      st->slice->name) : NULL;
	char *r = kb_xasprintf("//! tensormap kb_tma_a : %s box=(%lld, %d) swizzle=128 unaligned=zero\n"
			       "//! tensormap kb_tma_b : %s box=(%d, %d) swizzle=128 unaligned=zero\n%s",
			       a, (long long)L->mma.BM, WG_BK, b, WG_BK, WG_BK, out ? out : "");
	free(out);
	return r;
}

void kb_tile__wgmma_decls(kb_tile__lw *L)
{
	const kb_tile__mma *m = &L->mma;
	kb_buf_catf(L->o, "\textern __shared__ __align__(128) unsigned char kb_smem[]; /* dot operands, "
		    "%d stages%s: %lld bytes */\n", m->stages, m->tstore ? ", the store's buffers" : "",
		    (long long)m->smem);
	if (m->pp) /* each consumer warpgroup the whole of its own program's result */
		kb_buf_catf(L->o, "\tconst int wm0_ = (int)threadIdx.x / 32 %% 4 * 16, wn0_ = 0; /* this warp's "
			    "rows of a [%lld, %lld] dot result (and + 64 mt) */\n", (long long)m->BM, (long long)m->BN);
	else
		kb_buf_catf(L->o, "\tconst int wm0_ = (int)threadIdx.x / 128 * %lld + (int)threadIdx.x / 32 %% 4 * 16, "
			    "wn0_ = 0; /* this warp's rows of a [%lld, %lld] dot result (and + 64 mt) */\n",
			    (long long)(m->BM / (m->WM / 4)), (long long)m->BM, (long long)m->BN);
}

/* The ring and its mbarriers (and whether the runner encoded the
 * tensormaps), made once a block. */
static void ring_decls(kb_tile__lw *L)
{
	const kb_tile__mma *m = &L->mma;
	int S = m->stages;
	kb_tile__line(L, "__shared__ __align__(8) unsigned long long kb_bars_[%d]; /* full[s], then empty[s] */\n", 2 * S);
	kb_tile__line(L, "const unsigned ring_ = ((unsigned)__cvta_generic_to_shared(kb_smem) + 1023) & "
	     "~1023u; /* the swizzle's 1 KiB atoms */\n");
	kb_tile__line(L, "const unsigned full_ = (unsigned)__cvta_generic_to_shared(kb_bars_), empty_ = full_ + %d;\n", 8 * S);
	if (m->tma)
		kb_tile__line(L, "const bool tma_ = kb_wg_tma_ok(&kb_tma_a) && kb_wg_tma_ok(&kb_tma_b); "
		     "/* zeros: rows TMA cannot copy */\n");
	if (m->tstore)
		kb_tile__line(L, "const bool tma_st_ = kb_wg_tma_ok(&kb_tma_out); /* else stored from registers */\n");
	kb_tile__line(L, "kb_wg_bars_init<%d, %d>(full_, empty_, %s);\n", S, L->T / 32,
	     m->tma ? "tma_ ? 1 : 128" : "128");
}

void kb_tile__wgmma_persist_head(kb_tile__lw *L)
{
	const kb_tile__mma *m = &L->mma;
	int P = m->pp ? 256 : L->T; /* the producer's first thread */
	if (L->wg_role != KB_TILE_WG_CONSUMERS) {
		ring_decls(L);
		kb_tile__line(L, "const bool producer_ = threadIdx.x >= %d; /* the warpgroup after the consumers */\n", P);
	}
	if (L->wg_role) { /* each role its own loop (lower_wgepi.c) */
		kb_tile__wgepi_head(L, P);
		return;
	}
	if (P == 256) {
		kb_tile__line(L, "if (producer_)\n");
		kb_tile__line(L, "\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\");\n");
		kb_tile__line(L, "else\n");
		kb_tile__line(L, "\tasm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\");\n");
	}
	kb_tile__line(L, "if (producer_ && tma_ && threadIdx.x != %d)\n", P);
	kb_tile__line(L, "\treturn; /* one thread copies by TMA */\n");
	kb_tile__line(L, "int it_ = 0; /* the ring's trips so far, every tile's (both roles count them) */\n");
	if (m->pp)
		kb_tile__line(L, "const int pp_first_ = producer_ ? 0 : (int)threadIdx.x / 128 * (int)gridDim.x, "
			      "pp_step_ = producer_ ? (int)gridDim.x : 2 * (int)gridDim.x; /* pingpong: every other "
			      "program a consumer warpgroup */\n");
}

void kb_tile__wgmma_persist_tail(kb_tile__lw *L)
{
	if (!L->mma.tstore)
		return;
	kb_tile__line(L, "if (tma_st_ && !producer_ && threadIdx.x %% 128 == 0)\n");
	kb_tile__line(L, "\tkb_wg_st_wait<0>(); /* the last stores have read shared memory */\n");
}

/* The producer's copies of one tile: trip t into stage (IT + t) % S. */
static void produce(kb_tile__lw *L, const kb_tile__dotloop *lp, const char *it, const char *r0,
		    const char *c0)
{
	const kb_tile__mma *m = &L->mma;
	const kb_tile__dotupd *u = &lp->upds[0];
	const kb_tile__expr *sa = lp->ops[u->a].load->args[0], *sb = lp->ops[u->b].load->args[0];
	const kb_tile_param *ta = kb_tile__param(L, sa->name), *tb = kb_tile__param(L, sb->name);
	int S = m->stages;
	if (m->tma) {
		kb_tile__line(L, "if (tma_) { /* one thread's TMA copies */\n");
		if (!L->persist)
			kb_tile__line(L, "\tif (threadIdx.x == %d)\n\t", L->T);
		kb_tile__line(L, "\tkb_wg_produce_tma<%lld, %lld, %d>(&kb_tma_a, &kb_tma_b, %s, %s, lo_, step_, "
		     "trips_, %s, ring_, full_, empty_);\n", (long long)m->BM, (long long)m->BN, S, r0, c0, it);
		kb_tile__line(L, "%s", L->persist ? "} else {\n" : "\treturn;\n");
		if (!L->persist)
			kb_tile__line(L, "}\n");
	}
	if (L->persist)
		L->depth++;
	kb_tile__line(L, "const bool vec_ = %s %% 8 == 0 && %s %% 8 == 0 && ((unsigned long long)%s & 15) == 0 && "
	     "((unsigned long long)%s & 15) == 0 && (%s) %% 8 == 0 && lo_ %% 8 == 0 && step_ %% 8 == 0;\n",
	     ta->dims[1], tb->dims[1], ta->name, tb->name, c0);
	char *call = kb_xasprintf("<%lld, %lld, %d, %%s>(%s, %s, %s, %s, lo_, step_, trips_, %s, %s, %s, %s, "
				  "%s, ring_, full_, empty_);\n", (long long)m->BM, (long long)m->BN, S, ta->name,
				  tb->name, r0, c0, ta->dims[0], ta->dims[1], tb->dims[0], tb->dims[1], it);
	kb_tile__line(L, "if (vec_)\n");
	kb_tile__line(L, "\tkb_wg_produce");
	kb_buf_catf(L->o, call, "true");
	kb_tile__line(L, "else\n");
	kb_tile__line(L, "\tkb_wg_produce");
	kb_buf_catf(L->o, call, "false");
	free(call);
	if (L->persist) {
		L->depth--;
		if (m->tma)
			kb_tile__line(L, "}\n");
		kb_tile__line(L, "it_ += trips_;\n");
		kb_tile__line(L, "continue; /* the next tile's copies: the consumers alone run what follows */\n");
	} else {
		kb_tile__line(L, "return; /* the consumers alone run what follows */\n");
	}
}

void kb_tile__lower_wgmma_loop(kb_tile__lw *L, const kb_tile__dotloop *lp)
{
	const kb_tile__mma *m = &L->mma;
	const kb_tile__dotupd *u = &lp->upds[0];
	const kb_tile__expr *sa = lp->ops[u->a].load->args[0], *sb = lp->ops[u->b].load->args[0];
	const kb_tile_param *ta = kb_tile__param(L, sa->name);
	const kb_tile__lsym *acc = kb_tile__lw_lookup(L, u->acc);
	int S = m->stages, cons = L->T / 128;
	kb_buf lo = KB_BUF_INIT, hi = KB_BUF_INIT, step = KB_BUF_INIT, r0 = KB_BUF_INIT, c0 = KB_BUF_INIT;
	kb_tile__range_text(L, lp->loop, &lo, &hi, &step);
	kb_tile__cexpr(L, sa->idx[0].lo, "0", &r0);
	kb_tile__cexpr(L, sb->idx[1].lo, "0", &c0);
	kb_tile__line_of(L, lp->loop->line);
	kb_tile__line(L, "{ /* the operands through shared memory, %d stages: a producer warpgroup's "
	     "copies, the consumers' wgmma (sm_90a) */\n", S);
	L->depth++;
	kb_tile__line(L, "const int lo_ = %s, step_ = %s;\n", lo.s, step.s);
	kb_tile__line(L, "const int trips_ = %s > lo_ ? (%s - lo_ + step_ - 1) / step_ : 0;\n", hi.s, hi.s);
	if (!L->persist)
		ring_decls(L);
	if (L->wg_role == KB_TILE_WG_CONSUMERS)
		; /* the producer's loop copies */
	else if (L->persist)
		kb_tile__line(L, "%s /* the producer warpgroup */\n", L->wg_role ? "{" : "if (producer_) {");
	else
		kb_tile__line(L, "if (threadIdx.x >= %d) { /* the producer warpgroup */\n", L->T);
	L->depth++;
	if (cons == 2 && !L->persist)
		kb_tile__line(L, "asm volatile(\"setmaxnreg.dec.sync.aligned.u32 40;\");\n");
	if (L->wg_role != KB_TILE_WG_CONSUMERS)
		produce(L, lp, L->persist ? "it_" : "0", r0.s, c0.s);
	L->depth--;
	if (L->wg_role != KB_TILE_WG_CONSUMERS)
		kb_tile__line(L, "}\n");
	if (L->wg_role == KB_TILE_WG_PRODUCER) /* the consumers' loop multiplies */
		goto done;
	if (cons == 2 && !L->persist)
		kb_tile__line(L, "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 232;\");\n");
	kb_tile__line_of(L, u->line);
	if (m->pp) { /* the other warpgroup's wgmma are done: its waits will not run ahead of the ring */
		kb_tile__line(L, "if (kb_pid_ != (int)blockIdx.x)\n");
		kb_tile__line(L, "\tkb_wg_turn_wait((int)threadIdx.x / 128);\n");
	}
	kb_tile__line(L, "kb_wg_consume<%lld, %lld, %d, %d, %s>(%s, ring_, full_, empty_, trips_, %s, %s);\n",
	     (long long)m->BM, (long long)m->BN, S, cons, ta->dtype == KB_TILE_F16 ? "true" : "false",
	     acc ? acc->c : u->acc, m->pp ? "it_ + (int)threadIdx.x / 128 * trips_" : L->persist ? "it_" : "0",
	     m->tma ? "!tma_" : "true");
	if (m->pp) { /* the other warpgroup's turn, if it has a next tile */
		kb_tile__line(L, "if (kb_pid_ + (int)gridDim.x < kb_programs_)\n");
		kb_tile__line(L, "\tkb_wg_turn_give((int)threadIdx.x / 128);\n");
	}
	if (L->persist) /* pingpong: this tile's trips and the other warpgroup's */
		kb_tile__line(L, "%s", m->pp ? "it_ += 2 * trips_;\n" : "it_ += trips_;\n");
done:
	L->depth--;
	kb_tile__line(L, "}\n");
	kb_buf_free(&lo);
	kb_buf_free(&hi);
	kb_buf_free(&step);
	kb_buf_free(&r0);
	kb_buf_free(&c0);
}

/* ===== the file's part ===== */

/* wgmma.mma_async m64nNk16, f32 += A B from shared memory, B transposed
 * (N-major): d[4 j + 2 h + e] is row lane / 4 + 8 h of the warp's 16,
 * column 8 j + 2 (lane % 4) + e. */
static void wgmma_fn(kb_buf *out, int n, const char *ty)
{
	int regs = n / 2;
	kb_buf_catf(out, "__device__ __forceinline__ void kb_wgmma_%s_n%d(float *d, unsigned long long da, "
		    "unsigned long long db)\n{\n\tasm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
		    "\t\t\"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {\"\n\t\t\"", ty, n, regs + 2, n, ty, ty);
	for (int i = 0; i < regs; i++)
		kb_buf_catf(out, "%%%d%s%s", i, i + 1 < regs ? ", " : "", i % 16 == 15 && i + 1 < regs ? "\"\n\t\t\"" : "");
	kb_buf_catf(out, "}, %%%d, %%%d, p, 1, 1, 0, 1;\\n}\\n\"\n\t\t: ", regs, regs + 1);
	for (int i = 0; i < regs; i++)
		kb_buf_catf(out, "\"+f\"(d[%d])%s%s", i, i + 1 < regs ? ", " : "", i % 8 == 7 && i + 1 < regs ? "\n\t\t  " : "");
	kb_buf_cat(out, "\n\t\t: \"l\"(da), \"l\"(db), \"n\"(1));\n}\n");
}

static const char wgmma_helpers[] =
	"\n/* ---- dot on sm_90a: mbarriers, the producer's copies, wgmma ---- */\n"
	"__device__ __forceinline__ void kb_bar_wait(unsigned bar, unsigned parity)\n"
	"{\n"
	"	asm volatile(\"{\\n\\t.reg .pred done;\\n\"\n"
	"		     \"KB_WAIT_%=:\\n\\t\"\n"
	"		     \"mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\\n\\t\"\n"
	"		     \"@!done bra KB_WAIT_%=;\\n}\" ::\"r\"(bar), \"r\"(parity) : \"memory\");\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_bar_arrive(unsigned bar)\n"
	"{\n"
	"	asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" ::\"r\"(bar) : \"memory\");\n"
	"}\n"
	"\n"
	"/* Pingpong's turns (named barriers 3 and 4, both consumer warpgroups'\n"
	" * 256 threads): warpgroup w waits for its turn before its tile's wgmma\n"
	" * (the other's are done, so no wait of its own runs more than a phase\n"
	" * ahead of the ring's mbarriers), and gives the other its turn after. */\n"
	"__device__ __forceinline__ void kb_wg_turn_wait(int w)\n"
	"{\n"
	"	asm volatile(\"bar.sync %0, 256;\" ::\"r\"(3 + w) : \"memory\");\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_wg_turn_give(int w)\n"
	"{\n"
	"	asm volatile(\"bar.arrive %0, 256;\" ::\"r\"(4 - w) : \"memory\");\n"
	"}\n"
	"\n"
	"/* Every stage's full (FULL arrivals: the producer's 128 threads, or its\n"
	" * one TMA thread) and empty (the consumers' WARPS warps) mbarriers, made\n"
	" * before any thread uses them. */\n"
	"template <int STAGES, int WARPS>\n"
	"__device__ __forceinline__ void kb_wg_bars_init(unsigned full, unsigned empty, unsigned FULL)\n"
	"{\n"
	"	if (threadIdx.x == 0) {\n"
	"		for (int s = 0; s < STAGES; s++) {\n"
	"			asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" ::\"r\"(full + 8 * s), \"r\"(FULL));\n"
	"			asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" ::\"r\"(empty + 8 * s), \"r\"(WARPS));\n"
	"		}\n"
	"		asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
	"	}\n"
	"	__syncthreads();\n"
	"}\n"
	"\n"
	"/* The first n (0 to 8) elements at g into the 16-byte chunk dst of shared\n"
	" * memory, zeros after them: one cp.async when VEC (n 0 or 8; z, inside the\n"
	" * tensor, stands for g where n is 0), else element by element (rows that\n"
	" * are no 16-byte multiples, S = 1001, where cp.async cannot go). */\n"
	"template <bool VEC, typename E>\n"
	"__device__ __forceinline__ void kb_wg_chunk(unsigned dst, const E *g, const E *z, int n)\n"
	"{\n"
	"	if (VEC) {\n"
	"		asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" ::\"r\"(dst), \"l\"(n ? g : z),\n"
	"			     \"r\"(2 * n) : \"memory\");\n"
	"	} else {\n"
	"		const unsigned short *p = (const unsigned short *)g;\n"
	"		unsigned w[4];\n"
	"#pragma unroll\n"
	"		for (int j = 0; j < 4; j++)\n"
	"			w[j] = (2 * j < n ? p[2 * j] : 0u) | (2 * j + 1 < n ? p[2 * j + 1] : 0u) << 16;\n"
	"		asm volatile(\"st.shared.v4.b32 [%0], {%1, %2, %3, %4};\" ::\"r\"(dst), \"r\"(w[0]), \"r\"(w[1]),\n"
	"			     \"r\"(w[2]), \"r\"(w[3]) : \"memory\");\n"
	"	}\n"
	"}\n"
	"\n"
	"/* The producer warpgroup: trip t's a[m0 : m0 + BM, k : k + 64] and\n"
	" * b[k : k + 64, n0 : n0 + BN] (k = lo + t step) into stage (it0 + t) %\n"
	" * STAGES (it0: the ring's trips of the block's earlier tiles) once the\n"
	" * consumers gave it back, swizzled as the descriptors read it; each\n"
	" * thread arrives on the stage's full mbarrier when its copies have landed.\n"
	" * Thread tid copies chunk tid % 8 of a's rows tid / 8 + 16 j and chunk\n"
	" * tid % (BN / 8) of b's rows tid / (BN / 8) + RB j, so its addresses,\n"
	" * bounds and swizzle (c ^ r % 8: r % 8 is fixed but for b's RB j bits) are\n"
	" * worked out once and each copy is an add and a compare, unrolled: one\n"
	" * warp a scheduler issues every copy of a stage, and index arithmetic per\n"
	" * copy was what bound it (3946 us at 8192^3 on an H200, 2026-11-28). */\n"
	"template <int BM, int BN, int STAGES, bool VEC, typename E>\n"
	"__device__ __forceinline__ void kb_wg_produce(const E *a, const E *b, int m0, int n0, int lo, int step,\n"
	"					      int trips, int am, int ak, int bk, int bn, int it0, unsigned ring,\n"
	"					      unsigned full, unsigned empty)\n"
	"{\n"
	"	const int tid = threadIdx.x % 128;\n"
	"	constexpr int CB = BN / 8, RB = 128 / CB; /* b's chunks a row, rows a pass */\n"
	"	const int ar = tid / 8, ac = tid % 8, br = tid / CB, bc = tid % CB;\n"
	"	const unsigned aoff = ar * 128 + ((ac ^ ar % 8) << 4), boff = bc / 8 * 8192 + br * 128;\n"
	"	const int bx = (bc ^ br) % 8, arows = am - m0 - ar, bcols = min(max(bn - n0 - bc * 8, 0), 8);\n"
	"	const E *ag = a + (size_t)(m0 + ar) * ak + ac * 8, *bg = b + (size_t)br * bn + n0 + bc * 8;\n"
	"	for (int t = 0, it = it0; t < trips; t++, it++) {\n"
	"		const int s = it % STAGES, k = lo + t * step;\n"
	"		if (it >= STAGES) /* the consumers' (it / STAGES)-th release of s */\n"
	"			kb_bar_wait(empty + 8 * s, (it / STAGES - 1) & 1);\n"
	"		const unsigned sa = ring + s * (BM + BN) * 128, sb = sa + BM * 128;\n"
	"		const int acols = min(max(ak - k - ac * 8, 0), 8), brows = bk - k - br;\n"
	"		const E *pa = ag + k, *pb = bg + (size_t)k * bn;\n"
	"#pragma unroll (VEC ? BM / 16 : 4)\n"
	"		for (int j = 0; j < BM / 16; j++, pa += (size_t)16 * ak)\n"
	"			kb_wg_chunk<VEC>(sa + aoff + j * 2048, pa, a, 16 * j < arows ? acols : 0);\n"
	"#pragma unroll (VEC ? 64 / RB : 4)\n"
	"		for (int j = 0; j < 64 / RB; j++, pb += (size_t)RB * bn)\n"
	"			kb_wg_chunk<VEC>(sb + boff + RB * j * 128 + ((bx ^ RB * j % 8) << 4), pb, b, RB * j < brows ? bcols : 0);\n"
	"		if (VEC)\n"
	"			asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\" ::\"r\"(full + 8 * s) : \"memory\");\n"
	"		else\n"
	"			kb_bar_arrive(full + 8 * s);\n"
	"	}\n"
	"}\n";

/* (also the row layout's wgmma, lower_rowwg.c) */
static const char wgmma_desc[] =
	"\n"
	"/* A wgmma matrix descriptor with the 128-byte swizzle: start, leading and\n"
	" * stride byte offsets. */\n"
	"__device__ __forceinline__ unsigned long long kb_wg_desc(unsigned addr, unsigned lbo, unsigned sbo)\n"
	"{\n"
	"	return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)(lbo >> 4) << 16 |\n"
	"	       (unsigned long long)(sbo >> 4) << 32 | 1ull << 62;\n"
	"}\n";

/* The TMA path's helpers (they name CUtensorMap). */
static const char wgmma_tma_helpers[] =
	"/* Whether the runner encoded the tensormap: it passes 128 zero bytes where\n"
	" * TMA cannot describe the tensor (rows that are no 16-byte multiples). */\n"
	"__device__ __forceinline__ bool kb_wg_tma_ok(const CUtensorMap *m)\n"
	"{\n"
	"	const unsigned long long *w = (const unsigned long long *)m;\n"
	"	unsigned long long any = 0;\n"
	"#pragma unroll\n"
	"	for (int i = 0; i < 16; i++)\n"
	"		any |= w[i];\n"
	"	return any != 0;\n"
	"}\n"
	"\n"
	"/* The box of map at (inner, outer) into shared memory at dst, swizzled by\n"
	" * the copy engine as the map says, zeros outside the tensor; completes\n"
	" * its bytes on bar. */\n"
	"__device__ __forceinline__ void kb_wg_tma(unsigned dst, const CUtensorMap *map, unsigned bar, int inner,\n"
	"					  int outer)\n"
	"{\n"
	"	asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes\"\n"
	"		     \" [%0], [%1, {%2, %3}], [%4];\" ::\"r\"(dst), \"l\"(map), \"r\"(inner), \"r\"(outer),\n"
	"		     \"r\"(bar) : \"memory\");\n"
	"}\n"
	"\n"
	"/* The producer as one thread with TMA (kernels/gemm/04_wgmma.cu's): per\n"
	" * trip (stage (it0 + t) % STAGES, as kb_wg_produce's), once the consumers\n"
	" * gave the stage back, the stage's byte count on\n"
	" * its full mbarrier, then a's [BM][64] box at (k, m0) and b's BN / 64\n"
	" * [64][64] boxes at (n0 + 64 j, k), each landing in the layout\n"
	" * kb_wg_produce writes by hand (128-byte swizzle, b's blocks 8 KiB\n"
	" * apart).  The copy engine writes through the async proxy, which wgmma\n"
	" * reads: no proxy fence, no copy instructions in the SM's load path. */\n"
	"template <int BM, int BN, int STAGES>\n"
	"__device__ __forceinline__ void kb_wg_produce_tma(const CUtensorMap *ta, const CUtensorMap *tb, int m0,\n"
	"						  int n0, int lo, int step, int trips, int it0, unsigned ring,\n"
	"						  unsigned full, unsigned empty)\n"
	"{\n"
	"	for (int t = 0, it = it0; t < trips; t++, it++) {\n"
	"		const int s = it % STAGES, k = lo + t * step;\n"
	"		if (it >= STAGES)\n"
	"			kb_bar_wait(empty + 8 * s, (it / STAGES - 1) & 1);\n"
	"		const unsigned sa = ring + s * (BM + BN) * 128, bar = full + 8 * s;\n"
	"		asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" ::\"r\"(bar),\n"
	"			     \"r\"((BM + BN) * 128) : \"memory\");\n"
	"		kb_wg_tma(sa, ta, bar, k, m0);\n"
	"#pragma unroll\n"
	"		for (int j = 0; j < BN / 64; j++)\n"
	"			kb_wg_tma(sa + BM * 128 + j * 8192, tb, bar, n0 + 64 * j, k);\n"
	"	}\n"
	"}\n"
	"\n"
	"/* The epilogue's TMA store (lower_wgmma.c, kb_tile__wgmma_store): a\n"
	" * consumer warpgroup's named barrier (1 + w, its 128 threads), a pair of\n"
	" * 16-bit values into shared memory, the wait until at most N of this\n"
	" * thread's stores have still to read theirs, and the [64][64] box at src\n"
	" * out to map's tensor at (inner, outer), clipped at its edges. */\n"
	"__device__ __forceinline__ void kb_wg_st_bar(int w)\n"
	"{\n"
	"	asm volatile(\"bar.sync %0, 128;\" ::\"r\"(1 + w) : \"memory\");\n"
	"}\n"
	"\n"
	"template <typename P> __device__ __forceinline__ void kb_wg_st_pair(unsigned addr, P p)\n"
	"{\n"
	"	asm volatile(\"st.shared.b32 [%0], %1;\" ::\"r\"(addr), \"r\"(*(const unsigned *)&p) : \"memory\");\n"
	"}\n"
	"\n"
	"template <int N> __device__ __forceinline__ void kb_wg_st_wait()\n"
	"{\n"
	"	asm volatile(\"cp.async.bulk.wait_group.read %0;\" ::\"n\"(N) : \"memory\");\n"
	"}\n"
	"\n"
	"__device__ __forceinline__ void kb_wg_st_tma(const CUtensorMap *map, unsigned src, int inner, int outer)\n"
	"{\n"
	"	asm volatile(\"cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\"\n"
	"		     ::\"l\"(map), \"r\"(inner), \"r\"(outer), \"r\"(src) : \"memory\");\n"
	"	asm volatile(\"cp.async.bulk.commit_group;\" ::: \"memory\");\n"
	"}\n"
	"\n";

static const char wgmma_consume[] =
	"\n"
	"template <int N, bool F16>\n"
	"__device__ __forceinline__ void kb_wgmma(float *d, unsigned long long da, unsigned long long db)\n"
	"{\n"
	"	if (N == 256)\n"
	"		F16 ? kb_wgmma_f16_n256(d, da, db) : kb_wgmma_bf16_n256(d, da, db);\n"
	"	else if (N == 128)\n"
	"		F16 ? kb_wgmma_f16_n128(d, da, db) : kb_wgmma_bf16_n128(d, da, db);\n"
	"	else\n"
	"		F16 ? kb_wgmma_f16_n64(d, da, db) : kb_wgmma_bf16_n64(d, da, db);\n"
	"}\n"
	"\n"
	"/* A consumer warpgroup: rows [BM / CONS w, BM / CONS (w + 1)) of the tile,\n"
	" * BM / CONS / 64 m64 pieces, acc slot (mt BN / 8 + j) 4 + q (the mma\n"
	" * layout's).  Per trip: wait for the stage, four k16 steps of wgmma, one\n"
	" * group in flight; the previous trip's stage goes back when its group is\n"
	" * done, and the last one after the last group (a persistent block's\n"
	" * producer refills it for the next tile; it0 counts the earlier tiles'\n"
	" * trips).  A descriptor: a's K-major rows 128 bytes apart (8-row atoms 1024\n"
	" * bytes), b's N-major [64][64] blocks 8192 bytes apart (the leading offset)\n"
	" * and 8 rows of k 1024 bytes apart (the stride offset). */\n"
	"template <int BM, int BN, int STAGES, int CONS, bool F16>\n"
	"__device__ __forceinline__ void kb_wg_consume(float *acc, unsigned ring, unsigned full, unsigned empty,\n"
	"					      int trips, int it0, bool fence)\n"
	"{\n"
	"	const int w = threadIdx.x / 128 % CONS; /* (pingpong: each warpgroup its own tile) */\n"
	"	const bool lane0 = threadIdx.x % 32 == 0;\n"
	"	for (int t = 0, it = it0; t < trips; t++, it++) {\n"
	"		const int s = it % STAGES;\n"
	"		kb_bar_wait(full + 8 * s, it / STAGES & 1);\n"
	"		if (fence) /* cp.async wrote through the generic proxy; wgmma reads through the async one */\n"
	"			asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
	"		asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\");\n"
	"		const unsigned a = ring + s * (BM + BN) * 128 + w * (BM / CONS) * 128, b = ring + s * (BM + BN) * 128 + BM * 128;\n"
	"#pragma unroll\n"
	"		for (int kk = 0; kk < 4; kk++)\n"
	"#pragma unroll\n"
	"			for (int mt = 0; mt < BM / CONS / 64; mt++)\n"
	"				kb_wgmma<BN, F16>(acc + mt * BN / 2, kb_wg_desc(a + mt * 64 * 128 + 32 * kk, 16, 1024),\n"
	"						  kb_wg_desc(b + kk * 2048, 8192, 1024));\n"
	"		asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
	"		if (t > 0) { /* the previous stage's wgmmas are done: give it back */\n"
	"			asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: \"memory\");\n"
	"			if (lane0)\n"
	"				kb_bar_arrive(empty + 8 * ((it - 1) % STAGES));\n"
	"		}\n"
	"	}\n"
	"	asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
	"	if (trips > 0 && lane0)\n"
	"		kb_bar_arrive(empty + 8 * ((it0 + trips - 1) % STAGES));\n"
	"}\n";

void kb_tile__wgmma_desc_prologue(kb_buf *out)
{
	kb_buf_cat(out, wgmma_desc);
}

void kb_tile__wgmma_prologue(kb_buf *out, bool tma)
{
	if (tma) /* CUtensorMap (NVRTC: kbench's one-type cuda.h) */
		kb_buf_cat(out, "\n#include <cuda.h>\n");
	kb_buf_cat(out, wgmma_helpers);
	kb_tile__wgmma_desc_prologue(out);
	if (tma)
		kb_buf_cat(out, wgmma_tma_helpers);
	for (int n = 64; n <= 256; n *= 2) {
		wgmma_fn(out, n, "bf16");
		wgmma_fn(out, n, "f16");
	}
	kb_buf_cat(out, wgmma_consume);
}
