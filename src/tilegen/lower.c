/*
 * lower.c - a checked tile program as CUDA C (docs/tile.md, "What the
 * compiler does with it").
 *
 * Layout.  A program runs as one block of T = threads(N) threads.  A
 * rank-1 tile of E elements is a per-thread array of S = K * V slots: the
 * kernel's vector width V (16 bytes of its narrowest tensor dtype), K =
 * cdiv(E, T * V) groups, and slot i of thread t holds element
 *     el(i) = ((i / V) * T + t) * V + i % V,
 * so a group is V consecutive elements (one 16-byte access) and a warp's
 * groups are consecutive (coalesced).  Slots past E exist only when E is
 * no multiple of T * V; reductions skip them.
 *
 * Expressions.  Element-wise expressions become C expressions of a slot
 * index; loads (but streamed ones) and reductions are materialized first, into the variable they define or a temporary
 * (_tN), so a statement's C reads as its source does.  Every statement
 * starts with #line to its .tile line.
 *
 * Streamed loads.  A rank-1 load that one element-wise statement uses
 * (streams(), lower_stmt.c, says when) is not materialized: that
 * statement's group loop reads group k_ into kb_sN[V] where it is used
 * (lower_value.c).
 *
 * Row in registers.  When the kernel's top level has two or more loops over
 * the same range that load the same slice, a branch taken when the loop
 * runs once (hi <= lo + step) emits each loop's body once and gives the
 * later loads the first one's registers: the row is read once.
 *
 * Dot.  A kernel with dot has a second layout for its [BM, BN] tiles, and
 * its loops that feed a dot are lowered by lower_dot.c.
 *
 * Files.  Each calls only files after it here: lower.c (the file, its
 * kernels, their bodies with the row-in-registers branch), lower_stmt.c
 * (statements), lower_dot.c (a dot's loop), plan_dot.c (the dot's plan),
 * lower_value.c (streamed loads, stores), lower_reduce.c (what is
 * materialized: reductions, 2-d tiles), lower_rows.c (the row layout of a
 * kernel whose dots sit among other statements), lower_load.c (loads),
 * lower_wgmma.c (a dot loop as wgmma on sm_90a), lower_expr.c (the
 * state, element-wise expressions).
 *
 * What is not lowered yet (2-D tiles other than a dot's, axis reductions,
 * column slices) is an error at its place, never wrong code.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the row-in-registers branch ===== */

/* When every loop over a dim runs once for the sizes at hand (N <= BLOCK),
 * a slice loaded in one loop and loaded again in a later one is kept in
 * registers (kb_rowN) instead of read twice.  The generated CUDA holds
 * both paths, chosen at run time; here is decided when that pays
 * (wants_fast_path, the slices kept) and the branch written.  The
 * statements themselves are lowered by lower_stmt.c as everywhere else. */

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
		if (kb_tile__reads_mem(st->lo) || kb_tile__reads_mem(st->hi) ||
		    kb_tile__reads_mem(st->step)) {
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
static void lower_body(kb_tile__lw *L)
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

/* ===== kernels ===== */

/* The top-level consts the body names (folded ones it does not), first:
 * every block sees them. */
static void top_consts(kb_tile__lw *L)
{
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *st = L->k->body[i];
		if (st->kind == KB_TS_CONST && st->named) {
			kb_tile__line_of(L, st->line);
			kb_tile__const_decl(L, st);
		}
	}
}

/* The kernel's vector width: 16 bytes of its narrowest tensor. */
static int vector_width(const kb_tile__kernel_ast *k)
{
	int narrow = 16;
	for (int i = 0; i < k->k.nparams; i++)
		if (k->k.params[i].rank && kb_tile__elem_size(k->k.params[i].dtype) < narrow)
			narrow = kb_tile__elem_size(k->k.params[i].dtype);
	return narrow >= 16 ? 1 : 16 / narrow > 8 ? 8 : 16 / narrow;
}

/* The widest rank-1 tile the statements v[0..n) assign or store. */
static kb_tile__walkret wider(const kb_tile__stmt *st, void *ctx)
{
	int64_t *w = ctx;
	if (st->kind == KB_TS_ASSIGN && st->type.rank == 1 && st->type.ext[0] > *w)
		*w = st->type.ext[0];
	if (st->kind == KB_TS_STORE && st->slice && st->slice->type.rank == 1 && st->slice->type.ext[0] > *w)
		*w = st->slice->type.ext[0];
	return KB_TWALK_ON;
}

static int64_t widest(kb_tile__stmt *const *v, int n)
{
	int64_t w = 0;
	kb_tile__walk_stmts(v, n, wider, NULL, &w);
	return w;
}

/* The threads a kernel adds to its threads(): a wgmma dot's producer
 * warpgroup (and pingpong's second consumers: wg_more), as many for a kernel
 * launched beside it, the row layout's producer warpgroup; 0 else. */
static int extra_threads(const kb_tile__lw *L)
{
	if (L->mma.wg || L->wide)
		return L->wg_more;
	return L->rows_ws ? 128 : 0;
}

/* __launch_bounds__: the block's threads, and, for a kernel without dot
 * whose widest tile takes a thread 17 to 32 slots, 1024 / T blocks an SM:
 * at most 64 registers a thread, which the hand kernels get from their
 * __launch_bounds__(1024).  Left to itself ptxas gave bf16 LayerNorm 72-80
 * registers at 32 elements a thread (3 blocks of 256 an SM, 38%, where the
 * hand kernel has 4, 50%), with no spills either way.  At 16 slots or fewer
 * ptxas stays under 64 by itself, and the hint only let it take more (bf16
 * softmax at 256 threads: 32 -> 38 registers, 8 -> 6 blocks an SM). */
static void launch_bounds(kb_tile__lw *L)
{
	int64_t S = kb_tile__slots(L, widest(L->k->body, L->k->nbody));
	if (L->mma.wg || L->rows_ws) /* the consumers and a producer warpgroup, one block an SM */
		kb_buf_catf(L->o, "__launch_bounds__(%d, 1)", L->T + extra_threads(L));
	else if (L->wide) /* a wgmma kernel's launch (its extra warpgroups return at once) */
		kb_buf_catf(L->o, "__launch_bounds__(%d)", L->T + extra_threads(L));
	else if (!L->mma.on && L->T < 1024 && S > 16 && S <= 32)
		kb_buf_catf(L->o, "__launch_bounds__(%d, %d)", L->T, 1024 / L->T);
	else
		kb_buf_catf(L->o, "__launch_bounds__(%d)", L->T);
}

static void signature(kb_tile__lw *L)
{
	const kb_tile_kernel *k = &L->k->k;
	kb_tile__line_of(L, k->line);
	kb_buf_cat(L->o, "extern \"C\" __global__ void ");
	launch_bounds(L);
	kb_buf_catf(L->o, "\n%s(", k->name);
	for (int i = 0; i < k->nparams; i++) {
		const kb_tile_param *p = &k->params[i];
		kb_buf_cat(L->o, i ? ", " : "");
		if (p->rank)
			kb_buf_catf(L->o, "%s%s *__restrict__ %s", p->written ? "" : "const ",
				    kb_tile_ctype(p->dtype), p->name);
		else
			kb_buf_catf(L->o, "%s %s", p->is_size ? "int" : kb_tile_ctype(p->dtype), p->name);
	}
	kb_tile__wgmma_params(L);
	kb_tile__rows_ring_params(L);
	kb_buf_cat(L->o, ")\n{\n");
}

static kb_tile__walkret is_reduction(const kb_tile__expr *e, void *ctx)
{
	(void)ctx;
	return kb_tile__is_reduction(e) ? KB_TWALK_STOP : KB_TWALK_ON;
}

/* Whether kernel k, planned without a dot, takes the launch of the file's
 * wgmma kernel (threads() + 128, the producer warpgroup): it is a `//! ref
 * kernel` of the same threads(), which kbench launches as the kernel under
 * test, or another kernel that size.  Its extra warpgroup returns before
 * anything; a block reduction, which reads a value of every warp of the
 * block, keeps the kernel as written (the spec's check of the reference's
 * threads() then says so). */
static bool takes_wgmma_launch(const kb_tile__lw *L, const kb_tile__kernel_ast *k)
{
	return L->wg_T && L->T == L->wg_T && !kb_tile__kernel_has_dot(k) &&
	       !kb_tile__walk_stmts(k->body, k->nbody, NULL, is_reduction, NULL);
}

/* A persistent kernel's blocks (min(sm_count, grid) of them) each loop over
 * programs pid(0) = blockIdx.x, + gridDim.x, ...: a wgmma kernel's ring and
 * warp roles are made once before the loop, so its producer copies the
 * next tile's operands while the consumers run this tile's epilogue
 * (kernels/gemm/04_wgmma.cu's schedule); a kernel launched as it (a `//!
 * ref kernel`) loops over its own grid(). */
static void persist_head(kb_tile__lw *L)
{
	kb_buf g = KB_BUF_INIT;
	if (L->mma.wg)
		kb_tile__wgmma_persist_head(L);
	kb_tile__cexpr(L, L->k->grid[0], "0", &g);
	kb_tile__line_of(L, L->k->k.line);
	if (L->mma.pp) /* a consumer warpgroup every other program of the block's */
		kb_buf_catf(L->o, "\tconst int kb_programs_ = %s;\n\tfor (int kb_pid_ = (int)blockIdx.x + pp_first_; "
			    "kb_pid_ < kb_programs_; kb_pid_ += pp_step_) { /* persistent: the programs this "
			    "warpgroup runs */\n", g.s);
	else
		kb_buf_catf(L->o, "\tfor (int kb_pid_ = (int)blockIdx.x; kb_pid_ < %s; kb_pid_ += (int)gridDim.x) { "
			    "/* persistent: the programs a block runs */\n", g.s);
	L->depth++;
	kb_buf_free(&g);
}

static void kernel(kb_tile__lw *L, kb_tile__kernel_ast *k)
{
	L->k = k;
	L->T = (int)k->threads->cval;
	L->V = vector_width(k);
	L->ntmp = 0;
	L->nstream = 0;
	L->list = NULL;
	if (!kb_tile__plan_mma(L)) {
		kb_tile__mma_free(L);
		return;
	}
	k->k.smem = L->mma.smem;
	if (kb_tile__kernel_has_dot(k) && kb_tile__rows_plan(L))
		L->rows_any = true;
	L->wide = !L->mma.wg && takes_wgmma_launch(L, k);
	if (L->mma.wg && !L->wgmma) {
		L->wgmma = true;
		L->wg_T = L->T;
		L->wg_persist = L->mma.tma && !k->grid[1];
		L->wg_more = L->mma.pp ? 256 : 128;
	}
	if (extra_threads(L)) /* threads() consumers and the warpgroups beside them */
		k->k.threads = L->T + extra_threads(L);
	/* persistent: a wgmma kernel with TMA and a 1-d grid, and a kernel launched as it */
	L->persist = k->grid[0] && !k->grid[1] && (L->mma.wg ? L->mma.tma : L->wide && L->wg_persist);
	k->k.persistent = L->persist;
	L->wgmma_tma = L->wgmma_tma || (L->mma.wg && L->mma.tma);
	free(k->k.spec);
	k->k.spec = L->rows_ws ? kb_tile__rows_ring_spec(L) : kb_tile__wgmma_spec(L);
	signature(L);
	L->depth = 1;
	kb_buf *whole = L->o, code = KB_BUF_INIT;
	L->o = &code; /* the body first: whether it needs the scratch (and which consts) is known after */
	if (L->wide) {
		kb_tile__line_of(L, k->k.line);
		kb_buf_catf(L->o, "\tif (threadIdx.x >= %d) /* launched as the wgmma kernel beside it: "
			    "threads() + %d */\n\t\treturn;\n", L->T, L->wg_more);
	}
	L->scratch = false;
	L->dot_bytes = 0;
	for (int i = 0; i < k->nbody; i++)
		k->body[i]->named = false;
	if (kb_tile__wgepi_roles(L)) { /* the producer's own loop first (lower_wgepi.c) */
		L->wg_role = KB_TILE_WG_PRODUCER;
		persist_head(L);
		kb_tile__stmt **v = kb_xcalloc((size_t)k->nbody, sizeof *v);
		kb_tile__lower_stmts(L, v, kb_tile__wgepi_producer_stmts(L, v));
		free(v);
		kb_tile__leave_scope(L);
		L->depth--;
		kb_buf_cat(L->o, "\t}\n");
		L->wg_role = KB_TILE_WG_CONSUMERS;
	}
	if (L->persist)
		persist_head(L);
	lower_body(L);
	if (L->persist) {
		L->depth--;
		kb_buf_cat(L->o, "\t}\n");
		if (L->mma.wg)
			kb_tile__wgmma_persist_tail(L);
	}
	L->wg_role = 0;
	L->o = whole;
	if (L->mma.on)
		kb_tile__mma_decls(L);
	if (L->rows) {
		kb_tile__rows_decls(L);
		k->k.smem = L->rows_smem;
	}
	if (L->dot_bytes) /* each dot ends with a barrier after its last read */
		kb_buf_catf(L->o, "\t__shared__ __align__(16) unsigned char kb_dot_[%lld]; /* every dot's "
			    "operands, then its result */\n", (long long)L->dot_bytes);
	if (L->scratch)
		kb_buf_cat(L->o, "\t__shared__ float kb_scratch[64]; /* block reductions, two halves */\n"
			   "\tint kb_nred_ = 0; /* block reductions so far (the half the next one uses) */\n");
	top_consts(L);
	kb_buf_catn(L->o, code.s ? code.s : "", code.len);
	kb_buf_cat(L->o, "}\n\n");
	kb_buf_free(&code);
	kb_tile__leave_scope(L);
	for (int i = 0; i < L->nmats; i++)
		free(L->mats[i].c);
	L->nmats = 0;
	kb_tile__mma_free(L);
	L->rows = false;
}

/* ===== the file ===== */

/* Block reductions every kernel may use: the warp's shuffles, one value a
 * warp through shared memory, every thread gets the result.  One barrier a
 * reduction: the n-th uses half n % 2 of the scratch, so a half is written
 * again (reduction n + 2) only after every thread has passed reduction
 * n + 1's barrier, which it reaches after reading reduction n's values
 * (the hand kernels' second barrier guards the same reuse). */
static const char helpers[] =
	"#define KB_BLOCK_REDUCE(NAME, T, OP, ID)                                   \\\n"
	"__device__ __forceinline__ T NAME(T v, float *scratch_, int &n_)           \\\n"
	"{                                                                          \\\n"
	"\tT *scratch = (T *)scratch_ + 32 * (n_++ & 1);                           \\\n"
	"\tfor (int o = 16; o > 0; o /= 2)                                         \\\n"
	"\t\tv = OP(v, __shfl_xor_sync(0xffffffff, v, o));                         \\\n"
	"\tif (threadIdx.x % 32 == 0)                                             \\\n"
	"\t\tscratch[threadIdx.x / 32] = v;                                       \\\n"
	"\t__syncthreads();                                                        \\\n"
	"\tv = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : ID; \\\n"
	"\tfor (int o = 16; o > 0; o /= 2)                                         \\\n"
	"\t\tv = OP(v, __shfl_xor_sync(0xffffffff, v, o));                         \\\n"
	"\treturn v;                                                               \\\n"
	"}\n"
	"#define KB_ADD(a, b) ((a) + (b))\n"
	"KB_BLOCK_REDUCE(kb_block_sum_f, float, KB_ADD, 0.0f)\n"
	"KB_BLOCK_REDUCE(kb_block_max_f, float, fmaxf, -CUDART_INF_F)\n"
	"KB_BLOCK_REDUCE(kb_block_min_f, float, fminf, CUDART_INF_F)\n"
	"KB_BLOCK_REDUCE(kb_block_sum_i, int, KB_ADD, 0)\n"
	"KB_BLOCK_REDUCE(kb_block_max_i, int, max, -2147483647 - 1)\n"
	"KB_BLOCK_REDUCE(kb_block_min_i, int, min, 2147483647)\n";

/* tanh(x, exact = false)'s function, written where a kernel calls it. */
static const char tanh_approx_helper[] =
	"/* tanh(x, exact = false): tanh.approx.f32, relative error at most\n"
	" * 2^-10.987 (PTX ISA); the host emulator (tests/emu) takes tanhf. */\n"
	"__device__ __forceinline__ float kb_tanh_approx(float x)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\tfloat r;\n"
	"\tasm(\"tanh.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x));\n"
	"\treturn r;\n"
	"#else\n"
	"\treturn tanhf(x);\n"
	"#endif\n"
	"}\n";

/* A slice whose range steps through another dim than the last (a column,
 * x[r0 : r0 + B, c]) is read and written through this pointer: p_[i] and
 * p_ + i step by s.  Emitted only for a file that has one. */
static const char strided_helper[] =
	"template <class T> struct kb_strided {\n"
	"\tT *p;\n"
	"\tlong long s;\n"
	"\t__device__ T &operator[](long long i) const { return p[i * s]; }\n"
	"\t__device__ T *operator+(long long i) const { return p + i * s; }\n"
	"};\n";

static bool expr_strided(const kb_tile__expr *e)
{
	if (!e)
		return false;
	for (int d = 0; e->kind == KB_TE_SLICE && d + 1 < e->nidx; d++)
		if (e->idx[d].hi && !e->idx[e->nidx - 1].hi)
			return true;
	for (int i = 0; i < e->nargs; i++)
		if (expr_strided(e->args[i]))
			return true;
	for (int i = 0; i < e->nkw; i++)
		if (expr_strided(e->kwv[i]))
			return true;
	return false;
}

static bool stmts_strided(kb_tile__stmt *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		const kb_tile__stmt *st = v[i];
		if (expr_strided(st->value) || expr_strided(st->slice) || expr_strided(st->mask) ||
		    stmts_strided(st->body, st->nbody) || stmts_strided(st->els, st->nels))
			return true;
	}
	return false;
}

static void strided_prologue(const kb_tile__file *f, kb_buf *out)
{
	for (int i = 0; i < f->nkernels; i++)
		if (stmts_strided(f->kernels[i].body, f->kernels[i].nbody)) {
			kb_buf_cat(out, strided_helper);
			return;
		}
}

void kb_tile__lower(kb_tile__file *f, kb_buf *out, kb_diags *diags)
{
	kb_tile__lw L = {.f = f, .o = out, .diags = diags};
	kb_buf_catf(out, "/* Generated by kbench from %s: edit the .tile file, not this. */\n",
		    kb_basename(f->path));
	/* until the first kernel's #line, lines are the generated file's own */
	kb_buf_cat(out, "#line 3 \"<kbench tile prologue>\"\n");
	kb_buf_cat(out, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <math_constants.h>\n\n");
	kb_buf_cat(out, helpers);
	strided_prologue(f, out);
	kb_buf_cat(out, "\n");
	bool dot = false;
	for (int i = 0; i < f->nkernels; i++)
		dot = dot || kb_tile__kernel_has_dot(&f->kernels[i]);
	if (dot)
		kb_tile__mma_prologue(out);
	for (int i = 0; i < f->nkernels; i++)
		if (kb_tile__kernel_has_dot_nt(&f->kernels[i])) {
			kb_tile__mma_prologue_nt(out);
			break;
		}
	/* the kernels, each into its own buffer (the wgmma helpers go before
	 * them when one uses them): those with a dot first, so that the others
	 * know whether one of them launches with a producer warpgroup more */
	kb_buf *code = kb_xcalloc((size_t)f->nkernels + 1, sizeof *code);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < f->nkernels; i++)
			if (kb_tile__kernel_has_dot(&f->kernels[i]) == !pass) {
				L.o = &code[i];
				kernel(&L, &f->kernels[i]);
			}
	if (L.wgmma || L.rows_ring_any) /* (the row layout's ring: its mbarriers and TMA) */
		kb_tile__wgmma_prologue(out, L.wgmma_tma || L.rows_ring_tma_any);
	kb_tile__rows_wg_prologue(out, L.rows_wg_n, L.rows_wg_ss, L.wgmma || L.rows_ring_any);
	if (L.rows_any)
		kb_tile__rows_prologue(out);
	if (L.tanh_approx)
		kb_buf_cat(out, tanh_approx_helper);
	for (int i = 0; i < f->nkernels; i++) {
		kb_buf_catn(out, code[i].s ? code[i].s : "", code[i].len);
		kb_buf_free(&code[i]);
	}
	free(code);
	free(L.syms);
	free(L.mats);
	free(L.kept);
	for (int i = 0; i < L.nstrs; i++)
		free(L.strs[i].c);
	free(L.strs);
}
