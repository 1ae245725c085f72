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
 * (streams() says when) is not materialized: that statement's group loop
 * reads group k_ into kb_sN[V] where it is used (lower_value.c).
 *
 * Row in registers.  When the kernel's top level has two or more loops over
 * the same range that load the same slice, a branch taken when the loop
 * runs once (hi <= lo + step) emits each loop's body once and gives the
 * later loads the first one's registers: the row is read once.
 *
 * Dot.  A kernel with dot has a second layout for its [BM, BN] tiles, and
 * its loops that feed a dot are lowered by lower_dot.c.
 *
 * What is not lowered yet (2-D tiles other than a dot's, axis reductions,
 * column slices) is an error at its place, never wrong code.
 */
#include "tile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== statements ===== */

/* Whether every use of `name` in v is in a [BM, BN] value of a dot's
 * epilogue (an assignment of a rank-2 tile, or a 2-d store's value). */
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
	ASSIGN_EPILOGUE,    /* a [BN] load only a dot's epilogue reads, at its columns */
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
	if (defines_load && L->mma.on && t->rank == 1 &&
	    !kb_tile__reassigned(L->k->body, L->k->nbody, st->name) &&
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
	switch (how) {
	case ASSIGN_2D:
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
		read_elsewhere(L, st->name, "read where the dot's result uses it, at its columns");
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
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int %s = %s; %s < %s; %s += %s) {\n", cn, lo.s, cn, hi.s, cn, step.s);
	L->depth++;
	kb_tile__define(L, st->name, cn, (kb_tile__type){KB_TILE_I32, 0, {0, 0}});
	kb_tile__lower_stmts(L, st->body, st->nbody);
	kb_tile__leave_scope(L);
	L->depth--;
	kb_tile__ind(L);
	kb_buf_cat(L->o, "}\n");
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
static void const_decl(kb_tile__lw *L, const kb_tile__stmt *st)
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

/* The top-level consts the body names (folded ones it does not), first:
 * every block sees them. */
static void top_consts(kb_tile__lw *L)
{
	for (int i = 0; i < L->k->nbody; i++) {
		const kb_tile__stmt *st = L->k->body[i];
		if (st->kind == KB_TS_CONST && st->named) {
			kb_tile__line_of(L, st->line);
			const_decl(L, st);
		}
	}
}

void kb_tile__lower_stmt(kb_tile__lw *L, const kb_tile__stmt *st)
{
	if (st->kind == KB_TS_CONST) { /* the top level's are declared first */
		if (!top_level(L, st)) {
			kb_tile__line_of(L, st->line);
			const_decl(L, st);
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
	}
}

/* ===== kernels ===== */

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
	if (!L->mma.on && L->T < 1024 && S > 16 && S <= 32)
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
	kb_buf_cat(L->o, ")\n{\n");
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
	signature(L);
	L->depth = 1;
	kb_buf *whole = L->o, code = KB_BUF_INIT;
	L->o = &code; /* the body first: whether it needs the scratch (and which consts) is known after */
	L->scratch = false;
	for (int i = 0; i < k->nbody; i++)
		k->body[i]->named = false;
	kb_tile__lower_body(L);
	L->o = whole;
	if (L->mma.on)
		kb_tile__mma_decls(L);
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

void kb_tile__lower(kb_tile__file *f, kb_buf *out, kb_diags *diags)
{
	kb_tile__lw L = {.f = f, .o = out, .diags = diags};
	kb_buf_catf(out, "/* Generated by kbench from %s: edit the .tile file, not this. */\n",
		    kb_basename(f->path));
	/* until the first kernel's #line, lines are the generated file's own */
	kb_buf_cat(out, "#line 3 \"<kbench tile prologue>\"\n");
	kb_buf_cat(out, "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <math_constants.h>\n\n");
	kb_buf_cat(out, helpers);
	kb_tile__strided_prologue(f, out);
	kb_buf_cat(out, "\n");
	bool dot = false;
	for (int i = 0; i < f->nkernels; i++)
		dot = dot || kb_tile__kernel_has_dot(&f->kernels[i]);
	if (dot)
		kb_tile__mma_prologue(out);
	for (int i = 0; i < f->nkernels; i++)
		kernel(&L, &f->kernels[i]);
	free(L.syms);
	free(L.mats);
	free(L.kept);
	for (int i = 0; i < L.nstrs; i++)
		free(L.strs[i].c);
	free(L.strs);
}
