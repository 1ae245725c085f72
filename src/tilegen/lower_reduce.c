/*
 * lower_reduce.c - what a statement materializes before it computes: loads
 * (lower_load.c writes them, the loads in a gather's indices first) and
 * reductions, which are written here: the thread's slots, then the block
 * (warp shuffles, one value a warp through the shared scratch, lower.c's
 * KB_BLOCK_REDUCE helpers); and the 2-d tiles of a kernel without a dot
 * loop (below: attention's dots are values there, dot2), whose reductions
 * along an axis, transposes, dots and scalars recurse
 * into materialize as materialize recurses into them: one recursion over
 * the tree, kept in one file.  Element-wise nodes are left to lower_expr.c.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== materialized values ===== */

/* The loads in the indices of slice s (a gather: x[row, t[row]]), before
 * the statement that reads through them. */
void kb_tile__materialize_index(kb_tile__lw *L, const kb_tile__expr *s)
{
	for (int d = 0; s->kind == KB_TE_SLICE && d < s->nidx; d++) {
		kb_tile__materialize(L, s->idx[d].lo, NULL);
		if (s->idx[d].hi)
			kb_tile__materialize(L, s->idx[d].hi, NULL);
	}
}

/* Materializes every load and reduction under e (not e itself). */
void kb_tile__materialize_under(kb_tile__lw *L, const kb_tile__expr *e)
{
	for (int k = 0; k < e->nargs; k++)
		kb_tile__materialize(L, e->args[k], NULL);
	for (int k = 0; k < e->nkw; k++)
		kb_tile__materialize(L, e->kwv[k], NULL);
}

/* ===== reductions ===== */

/* dst = sum / max / min of a rank-1 tile: the thread's slots, then the block. */
void kb_tile__lower_reduction(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare)
{
	const kb_tile__expr *t = e->args[0];
	if (t->type.rank == 2 && !L->mma.on) { /* along an axis: below */
		kb_tile__reduce2(L, e, dst, declare);
		return;
	}
	if (t->type.rank != 1) {
		kb_tile__fail(L, e->line, e->col, e->len, "a reduction of a tile of rank 2");
		return;
	}
	const char *ct = kb_tile__ctype(e->type.dtype);
	bool f = kb_tile__is_float(e->type.dtype), add = !strcmp(e->name, "sum");
	int64_t E = t->type.ext[0], S = kb_tile__slots(L, E);
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	if (declare) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s;\n", ct, dst);
	}
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s acc_ = %s;\n", ct, add ? "0" : !strcmp(e->name, "max")
		    ? (f ? "-CUDART_INF_F" : "-2147483647 - 1") : (f ? "CUDART_INF_F" : "2147483647"));
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
	kb_tile__ind(L);
	if (!kb_tile__full(L, E)) {
		kb_buf_cat(L->o, "\tif (");
		kb_tile__cat_el(L, L->o, "i_");
		kb_buf_catf(L->o, " < %lld)\n", (long long)E);
		kb_tile__ind(L);
	}
	if (add)
		kb_buf_catf(L->o, "\tacc_ += %s;\n", x.s);
	else
		kb_buf_catf(L->o, "\tacc_ = %s(acc_, %s);\n", kb_tile__minmax(e->name, e->type.dtype), x.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s = kb_block_%s_%s(acc_, kb_scratch, kb_nred_);\n", dst, e->name, f ? "f" : "i");
	kb_tile__block_close(L, 1);
	L->scratch = true;
	kb_buf_free(&x);
}

/* Emits the load or reduction e into `into` (a variable being defined: a
 * new array or scalar), or into a temporary when into is NULL; recurses
 * into its arguments first.  Element-wise nodes are left to kb_tile__cexpr(). */
void kb_tile__materialize(kb_tile__lw *L, const kb_tile__expr *e, const char *into)
{
	bool load = e->kind == KB_TE_CALL && !strcmp(e->name, "load");
	bool axis = kb_tile__is_reduction(e) && e->args[0]->type.rank == 2 && !L->mma.on;
	if (!load && !axis) { /* (a reduction along an axis reads its operand in its own layout) */
		kb_tile__materialize_under(L, e);
	} else if (load) {
		for (int k = 0; k < e->nkw; k++)
			kb_tile__materialize(L, e->kwv[k], NULL);
		kb_tile__materialize_index(L, e->args[0]);
	}
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "dot")) {
		kb_tile__fail(L, e->line, e->col, e->len, "dot");
		return;
	}
	if (!load && !kb_tile__is_reduction(e))
		return;
	kb_tile__kept *k = load && !into && L->fast ? kb_tile__kept_of(L, e) : NULL;
	if (k) { /* a slice the row-in-registers branch keeps: loaded once */
		if (!k->filled)
			kb_tile__fill_kept(L, e, k);
		kb_tile__add_mat(L, e, kb_xstrdup(k->c), false);
		return;
	}
	char *c = into ? kb_xstrdup(into) : kb_tile__new_tmp(L);
	if (load)
		kb_tile__lower_load(L, e, c, true);
	else
		kb_tile__lower_reduction(L, e, c, true);
	kb_tile__add_mat(L, e, c, false);
}

/* ===== 2-d tiles in a kernel without dot ===== */

/*
 * An [R, C] tile is laid out as its R * C elements in row order, spread over
 * the program's threads as a rank-1 tile of R * C is: slot i holds element
 * f = el(i), at row f / C and column f % C (C is a constant, so both fold
 * to shifts for a power of two).  Loads and stores of 2-d slices go 16
 * bytes a group where f32 rows allow it (aligned, C and the row multiples
 * of 4, whole in range), else element by element, each bounded in both
 * dims (and by mask=); an operand of
 * another shape beside an [R, C] value (a [C] row, a [1, C] or [R, 1]
 * slice: broadcasting) is read at the slot's row and column where it is a
 * load, a variable only a load defines, or arange, and arithmetic on such
 * leaves is computed there too; scalars are as ever.  What is not lowered
 * here (a reduction along an axis, a [C] variable that arithmetic
 * defines) is reported at its place.
 *
 * A column slice is read through kb_strided (lower.c writes it into the
 * prologue of a file that has one).
 *
 * Invariants: every slot past R * C reads `other` and is never stored; a
 * statement's operands are materialized before its loop, in its layout.
 */

/* A leaf the 2-d layout can read at a slot's row and column: a load (of a
 * slice whose ranges give its extents), or a variable only a load defines. */
static const kb_tile__expr *leaf_load(const kb_tile__lw *L, const kb_tile__expr *e)
{
	if (kb_tile__is_load(e))
		return e;
	const kb_tile__lsym *s = e->kind == KB_TE_NAME ? kb_tile__lw_lookup(L, e->name) : NULL;
	return s && s->load && s->type.rank == 1 ? s->load : NULL;
}


/* Whether a 2-d variable of type t is an [R, 1] column or a [1, C] row
 * beside an [R, C] value (read through shared memory: bcast2). */
static bool row_or_col(const kb_tile__type *t, int64_t R, int64_t C)
{
	return t->rank == 2 && ((t->ext[0] == R && t->ext[1] == 1 && C > 1) ||
				(t->ext[0] == 1 && t->ext[1] == C && R > 1));
}

/* Whether e can be computed slot by slot in the layout of an [R, C] value;
 * false after reporting what cannot. */
static bool value_ok(kb_tile__lw *L, const kb_tile__expr *e, int64_t R, int64_t C)
{
	int64_t r, c;
	if (!e->type.rank)
		return true;
	kb_tile__shape2(&e->type, &r, &c);
	bool same = r == R && c == C;
	if (kb_tile__is_reduction(e) && e->nargs && e->args[0]->type.rank == 2 && e->type.rank == 1 &&
	    kb_tile__axis_of(e) == 1) {
		kb_tile__fail(L, e->line, e->col, e->len, "a reduction along axis 1 is one value a row; "
			      "beside a 2-d tile a [n] tile broadcasts along the columns, so this would "
			      "not mean a row's value: write keep = true (an [R, 1] tile) for a row's");
		return false;
	}
	if (kb_tile__is_reduction(e) && e->args[0]->type.rank == 2) { /* along an axis */
		const kb_tile__type *a = &e->args[0]->type;
		if (kb_tile__compute(a->dtype) != KB_TILE_F32 && kb_tile__compute(a->dtype) != KB_TILE_I32) {
			kb_tile__fail(L, e->line, e->col, e->len, "a reduction along an axis of a tile of "
				      "other than f32, f16, bf16 or i32");
			return false;
		}
		return value_ok(L, e->args[0], a->ext[0], a->ext[1]);
	}
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "dot") && same && !L->mma.on) {
		const kb_tile__expr *a = e->args[0], *b = e->args[1];
		int64_t K = a->type.ext[1];
		if (R % 16 || C % 8 || K % 16) {
			kb_tile__fail(L, e->line, e->col, e->len, "a dot among other statements whose [m, n] "
				      "result and inner dim k are not multiples of 16, 8 and 16 (mma's m16n8k16)");
			return false;
		}
		if (b->kind == KB_TE_CALL && !strcmp(b->name, "trans"))
			return value_ok(L, a, R, K) && value_ok(L, b->args[0], C, K);
		return value_ok(L, a, R, K) && value_ok(L, b, K, C);
	}
	if (kb_tile__is_reduction(e) || (e->kind == KB_TE_CALL && !strcmp(e->name, "dot"))) {
		kb_tile__fail(L, e->line, e->col, e->len, "a reduction (or dot) inside a 2-d tile's value");
		return false;
	}
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "trans")) {
		if (!same) {
			kb_tile__fail(L, e->line, e->col, e->len, "a transpose broadcast against a tile of "
				      "another shape");
			return false;
		}
		return value_ok(L, e->args[0], C, R);
	}
	if (kb_tile__is_load(e) || (e->kind == KB_TE_CALL && !strcmp(e->name, "arange")))
		return true;
	if (e->kind == KB_TE_NAME) {
		const kb_tile__lsym *s = kb_tile__lw_lookup(L, e->name);
		if (same || (s && s->load && s->type.rank == 1) || (s && row_or_col(&s->type, R, C)))
			return true;
		kb_tile__fail(L, e->line, e->col, e->len, "a tile of another shape beside a 2-d tile, "
			      "other than a load (or a variable only a load defines) or arange,");
		return false;
	}
	for (int i = 0; i < e->nargs; i++) /* its leaves are read in the 2-d layout */
		if (!value_ok(L, e->args[i], R, C))
			return false;
	return true;
}

static char *reduce_smem(kb_tile__lw *L, const kb_tile__expr *e);
static void materialize2(kb_tile__lw *L, const kb_tile__expr *e, int64_t R, int64_t C);

/* e, an [R, C] value, read from a shared array after its barrier: each
 * slot takes `at` (C text of f_, r_, c_) into a new temporary of C type
 * ct, then a barrier before the array is written again. */
static void read_back(kb_tile__lw *L, const kb_tile__expr *e, const char *ct, int64_t R, int64_t C,
		      const char *at)
{
	char *c = kb_tile__new_tmp(L);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s %s[%lld];\n", ct, c, (long long)kb_tile__slots_rc(L, R, C));
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__slot_loop(L, kb_tile__slots_rc(L, R, C), C);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s[i_] = f_ < %lld ? %s : (%s)0;\n", c, (long long)(R * C), at, ct);
	kb_tile__block_close(L, 2);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads(); /* read before the array is written again */\n");
	kb_tile__add_mat(L, e, c, false);
}

/* trans(t) of a [C, R] value t, in the layout of its [R, C] result: t's
 * slots written to a shared [C][R + 1] array (a column apart in banks),
 * read back at (column, row), between barriers. */
static void transpose2(kb_tile__lw *L, const kb_tile__expr *e, int64_t R, int64_t C)
{
	const kb_tile__expr *t = e->args[0];
	const char *ct = kb_tile__ctype(e->type.dtype);
	materialize2(L, t, C, R);
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	char *a = kb_xasprintf("kb_tr%d_", ++L->ntmp);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "__shared__ %s %s[%lld][%lld]; /* a transpose */\n", ct, a, (long long)C,
		    (long long)R + 1);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__slot_loop(L, kb_tile__slots_rc(L, R, C), R);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (f_ < %lld)\n", (long long)(R * C));
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[r_][c_] = %s;\n", a, x.s);
	kb_tile__block_close(L, 2);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads();\n");
	char *at = kb_xasprintf("%s[c_][r_]", a);
	read_back(L, e, ct, R, C, at);
	free(at);
	kb_buf_free(&x);
	free(a);
}

/* Writes the slots of v, an [R, C] value, as C type ct to `lhs` (C text of
 * the slot's r_ and c_: a shared array's element). */
static void to_smem(kb_tile__lw *L, const kb_tile__expr *v, const char *lhs, int64_t R, int64_t C,
		    const char *ct)
{
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, v, "i_", &x);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__slot_loop(L, kb_tile__slots_rc(L, R, C), C);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (f_ < %lld)\n", (long long)(R * C));
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s = (%s)(%s);\n", lhs, ct, x.s);
	kb_tile__block_close(L, 2);
	kb_buf_free(&x);
}

/* dot(a, b) (or dot(a, trans(w))) in the layout of its [R, C] result, where
 * a statement other than the operands' loads shares the dot's loop (a
 * register operand, attention's p).  One shared buffer (kb_dot_, every
 * dot's): a as [R][K + 8]
 * and b as [C][K + 8] (w's rows; b's columns) of the 16-bit type, rows
 * 16 bytes longer than K (a fragment's 8 rows in different banks), a
 * barrier; each warp takes m16n8 pieces of the result in turn (piece q at
 * rows q / (C / 8) * 16, columns q % (C / 8) * 8) and runs mma.sync
 * m16n8k16 over K, its fragments read as 32-bit pairs (the PTX layout:
 * a's rows g and g + 8, columns 2t and 2t + 8; b's column g); a barrier,
 * then the f32 result over the operands as [R][C + 1], which each slot
 * reads back at its row and column. */
static void dot2(kb_tile__lw *L, const kb_tile__expr *e, int64_t R, int64_t C)
{
	const kb_tile__expr *a = e->args[0], *b = e->args[1];
	bool bt = b->kind == KB_TE_CALL && !strcmp(b->name, "trans");
	const kb_tile__expr *w = bt ? b->args[0] : b;
	long long K = a->type.ext[1], P = K + 8, NW = L->T / 32, NP = R / 16 * (C / 8), N8 = C / 8;
	long long PW = (NP + NW - 1) / NW, ops = (R + C) * P * 2, res = R * (C + 1) * 4;
	materialize2(L, a, R, K);
	materialize2(L, w, bt ? C : K, bt ? K : C);
	const char *ct = a->type.dtype == KB_TILE_F16 ? "__half" : "__nv_bfloat16";
	char *m = kb_xstrdup("kb_dot_"); /* one buffer, lower.c's, the size of the largest dot */
	if ((ops > res ? ops : res) > L->dot_bytes)
		L->dot_bytes = ops > res ? ops : res;
	char *la = kb_xasprintf("((%s (*)[%lld])%s)[r_][c_]", ct, P, m);
	char *lb = kb_xasprintf("((%s (*)[%lld])(%s + %lld))%s", ct, P, m, R * P * 2,
				bt ? "[r_][c_]" : "[c_][r_]");
	to_smem(L, a, la, R, K, ct);
	to_smem(L, w, lb, bt ? C : K, bt ? K : C, ct);
	kb_tile__line(L, "__syncthreads(); /* the operands in shared memory */\n");
	kb_tile__line(L, "{\n");
	L->depth++;
	kb_tile__line(L, "const int w_ = (int)threadIdx.x / 32, g_ = (int)threadIdx.x %% 32 / 4, "
		      "t_ = (int)threadIdx.x %% 4;\n");
	kb_tile__line(L, "const %s (*a_)[%lld] = (const %s (*)[%lld])%s;\n", ct, P, ct, P, m);
	kb_tile__line(L, "const %s (*b_)[%lld] = (const %s (*)[%lld])(%s + %lld);\n", ct, P, ct, P, m, R * P * 2);
	kb_tile__line(L, "float d_[%lld][4]; /* %lld m16n8 pieces, %lld a warp */\n", PW, NP, PW);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int p_ = 0; p_ < %lld; p_++) {\n", PW);
	kb_tile__line(L, "\td_[p_][0] = d_[p_][1] = d_[p_][2] = d_[p_][3] = 0.0f;\n");
	kb_tile__line(L, "\tconst int q_ = w_ + p_ * %lld, m_ = q_ / %lld * 16, n_ = q_ %% %lld * 8;\n", NW, N8, N8);
	kb_tile__line(L, "\tfor (int k_ = 0; q_ < %lld && k_ < %lld; k_ += 16) {\n", NP, K);
	kb_tile__line(L, "\t\tconst unsigned af_[4] = {*(const unsigned *)&a_[m_ + g_][k_ + 2 * t_],\n");
	kb_tile__line(L, "\t\t\t*(const unsigned *)&a_[m_ + g_ + 8][k_ + 2 * t_],\n");
	kb_tile__line(L, "\t\t\t*(const unsigned *)&a_[m_ + g_][k_ + 2 * t_ + 8],\n");
	kb_tile__line(L, "\t\t\t*(const unsigned *)&a_[m_ + g_ + 8][k_ + 2 * t_ + 8]};\n");
	kb_tile__line(L, "\t\tconst unsigned bf_[2] = {*(const unsigned *)&b_[n_ + g_][k_ + 2 * t_],\n");
	kb_tile__line(L, "\t\t\t*(const unsigned *)&b_[n_ + g_][k_ + 2 * t_ + 8]};\n");
	kb_tile__line(L, "\t\tkb_mma(d_[p_], af_, bf_, (const %s *)0);\n", ct);
	kb_tile__line(L, "\t}\n");
	kb_tile__line(L, "}\n");
	kb_tile__line(L, "__syncthreads(); /* every warp has read the operands: the result goes over them */\n");
	kb_tile__line(L, "float (*o_)[%lld] = (float (*)[%lld])%s;\n", (long long)C + 1, (long long)C + 1, m);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int p_ = 0; p_ < %lld; p_++) {\n", PW);
	kb_tile__line(L, "\tconst int q_ = w_ + p_ * %lld, m_ = q_ / %lld * 16 + g_, n_ = q_ %% %lld * 8 + 2 * t_;\n",
		      NW, N8, N8);
	kb_tile__line(L, "\tif (q_ < %lld) {\n", NP);
	kb_tile__line(L, "\t\to_[m_][n_] = d_[p_][0], o_[m_][n_ + 1] = d_[p_][1];\n");
	kb_tile__line(L, "\t\to_[m_ + 8][n_] = d_[p_][2], o_[m_ + 8][n_ + 1] = d_[p_][3];\n");
	kb_tile__line(L, "\t}\n");
	kb_tile__line(L, "}\n");
	kb_tile__block_close(L, 1);
	kb_tile__line(L, "__syncthreads();\n");
	char *at = kb_xasprintf("((float (*)[%lld])%s)[r_][c_]", (long long)C + 1, m);
	read_back(L, e, "float", R, C, at);
	free(at);
	free(la);
	free(lb);
	free(m);
}

/* A 2-d variable v of [R, 1] (or [1, C]) beside an [R, C] value: its slots
 * written to a shared array, a barrier, each slot reads it at its row (or
 * column), a barrier. */
static void bcast2(kb_tile__lw *L, const kb_tile__expr *v, int64_t R, int64_t C)
{
	int64_t vr = v->type.ext[0], vc = v->type.ext[1];
	const char *ct = kb_tile__ctype(v->type.dtype);
	char *a = kb_xasprintf("kb_bc%d_", ++L->ntmp), *lhs = kb_xasprintf("%s[r_][c_]", a);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "__shared__ %s %s[%lld][%lld];\n", ct, a, (long long)vr, (long long)vc + 1);
	to_smem(L, v, lhs, vr, vc, ct);
	free(lhs);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads();\n");
	/* an [R, 1] column is read at the slot's row, a [1, C] row at its column */
	char *at = kb_xasprintf("%s[%s][%s]", a, vc == 1 ? "r_" : "0", vc == 1 ? "0" : "c_");
	read_back(L, v, ct, R, C, at);
	free(at);
	free(a);
}

/* Materializes what an [R, C] value e needs before its loop: its loads (and
 * [C] / [1, C] / [R, 1] loads, and arange, read at the slot's place), and
 * its scalars' loads and reductions. */
static void materialize2(kb_tile__lw *L, const kb_tile__expr *e, int64_t R, int64_t C)
{
	if (kb_tile__mat_of(L, e))
		return;
	if (!e->type.rank) {
		kb_tile__materialize(L, e, NULL);
		return;
	}
	if (L->rows && kb_tile__is_reduction(e) && e->args[0]->type.rank == 2) {
		materialize2(L, e->args[0], R, e->args[0]->type.ext[1]);
		kb_tile__rows_reduce(L, e, C);
		return;
	}
	if (L->rows && e->kind == KB_TE_CALL && !strcmp(e->name, "dot")) {
		materialize2(L, e->args[0], R, e->args[0]->type.ext[1]);
		kb_tile__rows_dot(L, e, NULL);
		return;
	}
	if (L->rows && e->kind == KB_TE_BINARY && e->op == KB_TOP_ADD && e->type.dtype == KB_TILE_F32) {
		/* x + dot(...) of one shape (attention's acc * alpha + dot(p, v)): the mma adds onto x */
		for (int d = 0; d < 2; d++) {
			const kb_tile__expr *dt = e->args[d], *x = e->args[1 - d];
			if (dt->kind != KB_TE_CALL || strcmp(dt->name, "dot") || kb_tile__mat_of(L, dt) ||
			    !kb_tile__type_eq(&dt->type, &e->type) || !kb_tile__type_eq(&x->type, &e->type))
				continue;
			if (L->rows_ovl && dt == L->pf[1]) /* x is in flight until here (lower_rowwg.c) */
				kb_tile__rows_wg_ovl_wait(L);
			materialize2(L, x, R, C);
			materialize2(L, dt->args[0], R, dt->args[0]->type.ext[1]);
			kb_tile__rows_dot(L, dt, x);
			kb_tile__add_mat(L, e, kb_xstrdup(kb_tile__mat_of(L, dt)->c), false);
			return;
		}
	}
	if (L->rows && e->kind == KB_TE_NAME && row_or_col(&e->type, R, C)) {
		kb_tile__rows_pick(L, e);
		return;
	}
	if (kb_tile__is_reduction(e) && e->args[0]->type.rank == 2) {
		int64_t r1, c1;
		kb_tile__shape2(&e->type, &r1, &c1);
		char *a = reduce_smem(L, e), *c = kb_tile__new_tmp(L);
		int64_t S = kb_tile__slots_rc(L, R, C);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s[%lld];\n", kb_tile__ctype(e->type.dtype), c, (long long)S);
		kb_tile__ind(L);
		kb_buf_cat(L->o, "{\n");
		L->depth++;
		kb_tile__slot_loop(L, S, C);
		kb_tile__ind(L); /* [R, 1] is read at the slot's row, [1, C] and [C] at its column */
		const char *at = c1 == 1 && r1 > 1 ? "r_" : "c_";
		if (S * L->T > R * C) /* slots past the tile would read past the array */
			kb_buf_catf(L->o, "%s[i_] = f_ < %lld ? %s[%s] : 0;\n", c, (long long)(R * C), a, at);
		else
			kb_buf_catf(L->o, "%s[i_] = %s[%s];\n", c, a, at);
		kb_tile__block_close(L, 2);
		kb_tile__ind(L);
		kb_buf_cat(L->o, "__syncthreads(); /* read before the array is filled again */\n");
		kb_tile__add_mat(L, e, c, false);
		free(a);
		return;
	}
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "trans")) {
		transpose2(L, e, R, C);
		return;
	}
	if (e->kind == KB_TE_CALL && !strcmp(e->name, "dot")) {
		dot2(L, e, R, C);
		return;
	}
	if (e->kind == KB_TE_NAME && row_or_col(&e->type, R, C)) {
		bcast2(L, e, R, C);
		return;
	}
	const kb_tile__expr *load = leaf_load(L, e);
	bool arange = e->kind == KB_TE_CALL && !strcmp(e->name, "arange");
	if (arange && !load && L->rows) { /* computed where it is read: a constant plus the lane's part */
		kb_tile__add_mat(L, e, kb_xstrdup(""), false);
		L->mats[L->nmats - 1].rowsat = e->type.rank == 2 && e->type.ext[1] == 1 && R > 1 ?
			(C == 1 ? 3 : 2) : 1;
		return;
	}
	if (load || arange) {
		if (load) {
			kb_tile__materialize_index(L, load->args[0]);
			for (int k = 0; k < load->nkw; k++)
				materialize2(L, load->kwv[k], R, C);
		}
		char *c = kb_tile__new_tmp(L);
		if (load) {
			kb_tile__load2(L, load, c, R, C);
		} else { /* arange(C): the slot's column; arange(R, axis = 0): its row */
			int64_t S = kb_tile__slots_rc(L, R, C);
			kb_tile__ind(L);
			kb_buf_catf(L->o, "int %s[%lld];\n", c, (long long)S);
			kb_tile__ind(L);
			kb_buf_cat(L->o, "{\n");
			L->depth++;
			kb_tile__slot_loop(L, S, C);
			kb_tile__ind(L);
			kb_buf_catf(L->o, "%s[i_] = %s;\n", c, e->type.rank == 2 && e->type.ext[1] == 1 && R > 1 ?
				    "r_" : "c_");
			kb_tile__block_close(L, 2);
		}
		kb_tile__add_mat(L, e, c, false);
		return;
	}
	for (int i = 0; i < e->nargs; i++)
		materialize2(L, e->args[i], R, C);
	for (int k = 0; k < e->nkw; k++)
		materialize2(L, e->kwv[k], R, C);
}

/* Folds v_ into a[at] with the shared-memory atomic of reduction e (an
 * f32 max or min by the order of its bits), ending the line. */
static void fold_atomic(kb_tile__lw *L, const kb_tile__expr *e, const char *a, const char *at)
{
	bool f = kb_tile__is_float(e->type.dtype), mx = !strcmp(e->name, "max");
	if (!strcmp(e->name, "sum"))
		kb_buf_catf(L->o, "atomicAdd(&%s[%s], v_);\n", a, at);
	else if (!f)
		kb_buf_catf(L->o, "atomic%s(&%s[%s], v_);\n", mx ? "Max" : "Min", a, at);
	else /* an f32 orders as its bits do: signed for v >= 0, unsigned and reversed below */
		kb_buf_catf(L->o, "{ if (v_ >= 0.0f) atomic%s((int *)&%s[%s], __float_as_int(v_)); else "
			    "atomic%s((unsigned int *)&%s[%s], __float_as_uint(v_)); }\n", mx ? "Max" : "Min", a,
			    at, mx ? "Min" : "Max", a, at);
}

/* A new __shared__ array (returned) of K values for reduction e along its
 * axis, set to the identity, then a barrier; what names the operand. */
static char *axis_array(kb_tile__lw *L, const kb_tile__expr *e, int64_t K, const char *what)
{
	char *a = kb_xasprintf("kb_ax%d_", ++L->ntmp);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "__shared__ %s %s[%lld]; /* %s%s along axis %d */\n", kb_tile__ctype(e->type.dtype),
		    a, (long long)K, e->name, what, kb_tile__axis_of(e));
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = (int)threadIdx.x; i_ < %lld; i_ += %d)\n", (long long)K, L->T);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[i_] = %s;\n", a, kb_tile__reduce_id(e));
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads();\n");
	return a;
}

/* Reduces reduction e's [R, C] operand along its axis into a shared array
 * (returned, a new name) of R (axis 1) or C (axis 0) values: every thread
 * folds its slots in with shared-memory atomics (an f32 max or min by the
 * order of its bits), between two barriers. */
static char *reduce_smem(kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__expr *t = e->args[0];
	int64_t R = t->type.ext[0], C = t->type.ext[1];
	int axis = kb_tile__axis_of(e);
	int64_t K = axis ? R : C;
	const char *ct = kb_tile__ctype(e->type.dtype), *at = axis ? "r_" : "c_";
	materialize2(L, t, R, C);
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	char *a = axis_array(L, e, K, "");
	kb_tile__ind(L);
	kb_buf_cat(L->o, "{\n");
	L->depth++;
	kb_tile__slot_loop(L, kb_tile__slots_rc(L, R, C), C);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "const %s v_ = %s;\n", ct, x.s);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (f_ < %lld) ", (long long)(R * C));
	fold_atomic(L, e, a, at);
	kb_tile__block_close(L, 2);
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads();\n");
	kb_buf_free(&x);
	return a;
}

/* Reduction e of an [R, C] operand along axis 0 into dst, where a row is a
 * whole number m of the block's T V-element strides: slot i of a thread then
 * holds column ((i / V % m) T + t) V + i % V, the column of slot
 * (i / V % m) V + i % V of the [C] result in the same thread, so each thread
 * folds its own slots, with no shared memory and no barrier (a column sum
 * over rows of a [RB, C] load: bench/tile_fused.txt's (7)).  False where
 * the layout does not allow it. */
static bool reduce_in_thread(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare)
{
	const kb_tile__expr *t = e->args[0];
	int64_t R = t->type.ext[0], C = t->type.ext[1], g = (int64_t)L->T * L->V;
	if (L->rows || kb_tile__axis_of(e) != 0 || e->type.rank != 1 || C % g)
		return false;
	materialize2(L, t, R, C);
	const char *ct = kb_tile__ctype(e->type.dtype);
	int64_t S = kb_tile__slots(L, C);
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	if (declare)
		kb_tile__line(L, "%s %s[%lld];\n", ct, dst, (long long)S);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
	kb_tile__line(L, "\t%s[i_] = %s; /* %s along axis 0: the columns this thread holds */\n", dst,
		      kb_tile__reduce_id(e), e->name);
	kb_tile__line(L, "{\n");
	L->depth++;
	kb_tile__slot_loop(L, kb_tile__slots_rc(L, R, C), C);
	kb_tile__line(L, "const int o_ = i_ / %d %% %lld * %d + i_ %% %d;\n", L->V, (long long)(C / g), L->V,
		      L->V);
	if (!strcmp(e->name, "sum"))
		kb_tile__line(L, "%s[o_] += (%s)(%s);\n", dst, ct, x.s);
	else
		kb_tile__line(L, "%s[o_] = %s(%s[o_], (%s)(%s));\n", dst, kb_tile__minmax(e->name, e->type.dtype),
			      dst, ct, x.s);
	kb_tile__block_close(L, 2);
	kb_buf_free(&x);
	return true;
}

void kb_tile__reduce2(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare)
{
	const kb_tile__type *a = &e->args[0]->type;
	if (!value_ok(L, e, a->ext[0], a->ext[1]) || reduce_in_thread(L, e, dst, declare))
		return;
	char *arr = reduce_smem(L, e);
	int64_t K = e->type.ext[0], S = kb_tile__slots(L, K);
	kb_buf el = KB_BUF_INIT;
	kb_tile__cat_el(L, &el, "i_");
	if (declare) {
		kb_tile__ind(L);
		kb_buf_catf(L->o, "%s %s[%lld];\n", kb_tile__ctype(e->type.dtype), dst, (long long)S);
	}
	kb_tile__ind(L);
	kb_buf_cat(L->o, "#pragma unroll\n");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)S);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\t%s[i_] = %s < %lld ? %s[%s] : %s;\n", dst, el.s, (long long)K, arr, el.s,
		    kb_tile__reduce_id(e));
	kb_tile__ind(L);
	kb_buf_cat(L->o, "__syncthreads(); /* read before the array is filled again */\n");
	kb_buf_free(&el);
	free(arr);
}

void kb_tile__assign2(kb_tile__lw *L, const kb_tile__stmt *st, const char *c, bool declare)
{
	const kb_tile__type *t = &st->type;
	if (!value_ok(L, st->value, t->ext[0], t->ext[1]))
		return;
	if (kb_tile__is_load(st->value) && declare && !st->op) {
		kb_tile__materialize_index(L, st->value->args[0]);
		for (int k = 0; k < st->value->nkw; k++)
			materialize2(L, st->value->kwv[k], t->ext[0], t->ext[1]);
		kb_tile__load2(L, st->value, c, t->ext[0], t->ext[1]);
		return;
	}
	materialize2(L, st->value, t->ext[0], t->ext[1]);
	kb_tile__assign_elementwise(L, c, t, st->value, declare, st->op);
}

void kb_tile__lower_store2(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__expr *s = st->slice;
	int64_t R = s->type.ext[0], C = s->type.ext[1];
	if (!value_ok(L, st->value, R, C) || (st->mask && !value_ok(L, st->mask, R, C)))
		return;
	kb_tile__materialize_index(L, s);
	materialize2(L, st->value, R, C);
	if (st->mask)
		materialize2(L, st->mask, R, C);
	kb_buf base = KB_BUF_INIT, rows = KB_BUF_INIT, cols = KB_BUF_INIT, ld = KB_BUF_INIT;
	kb_buf v = KB_BUF_INIT, m = KB_BUF_INIT, el = KB_BUF_INIT;
	const kb_tile_param *t = kb_tile__param(L, s->name);
	if (!t || t->rank != 2 || !s->idx[0].hi || !kb_tile__slice2(L, s, &base, &rows, &cols, &ld))
		goto out;
	kb_tile__cexpr(L, st->value, "i_", &v);
	if (st->mask)
		kb_tile__cexpr(L, st->mask, "i_", &m);
	kb_tile__to_elem(t->dtype, v.s, &el);
	kb_tile__access2_open(L, t, false, &base, &rows, &cols);
	if (kb_tile__vec4(L, t, !st->mask, C)) {
		kb_buf v4 = KB_BUF_INIT;
		kb_tile__group4_loop(L, kb_tile__slots_rc(L, R, C), C);
		kb_tile__cexpr(L, st->value, "k_ * 4 + j_", &v4);
		kb_tile__ind(L);
		kb_buf_cat(L->o, "float vals_[4];\n");
		kb_tile__ind(L);
		kb_buf_catf(L->o, "for (int j_ = 0; j_ < 4; j_++)\n");
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\tvals_[j_] = %s;\n", v4.s);
		kb_tile__ind(L);
		kb_buf_catf(L->o, "if (al_ && f_ < %lld && r_ < rows_ && c_ + 4 <= cols_)\n", (long long)(R * C));
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t*(float4 *)(p_ + (size_t)r_ * %s + c_) = make_float4(vals_[0], vals_[1], "
			    "vals_[2], vals_[3]);\n", ld.s);
		kb_tile__ind(L);
		kb_buf_cat(L->o, "else\n");
		kb_tile__ind(L);
		kb_buf_cat(L->o, "\tfor (int j_ = 0; j_ < 4; j_++)\n");
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t\tif (f_ + j_ < %lld && r_ < rows_ && c_ + j_ < cols_)\n", (long long)(R * C));
		kb_tile__ind(L);
		kb_buf_catf(L->o, "\t\t\tp_[(size_t)r_ * %s + c_ + j_] = vals_[j_];\n", ld.s);
		kb_tile__block_close(L, 2);
		kb_buf_free(&v4);
		goto out;
	}
	if (L->rows && C > 1 && C % 2 == 0) { /* two slots a store where aligned (lower_rowio.c) */
		kb_tile__rows_store_pairs(L, R, C, ld.s, el.s, m.len ? m.s : "", kb_tile_ctype(t->dtype));
		kb_tile__block_close(L, 1);
		goto out;
	}
	kb_tile__slot_loop(L, kb_tile__slots_rc(L, R, C), C);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "if (f_ < %lld && r_ < rows_ && c_ < cols_%s%s%s)\n", (long long)(R * C),
		    m.len ? " && (" : "", m.len ? m.s : "", m.len ? ")" : "");
	kb_tile__ind(L);
	kb_buf_catf(L->o, "\tp_[(size_t)r_ * %s + c_] = %s;\n", ld.s, el.s);
	kb_tile__block_close(L, 2);
out:
	kb_buf_free(&base);
	kb_buf_free(&rows);
	kb_buf_free(&cols);
	kb_buf_free(&ld);
	kb_buf_free(&v);
	kb_buf_free(&m);
	kb_buf_free(&el);
}

/* A kept reduction of a dot's [BM, BN] result (max(s, axis = 1, keep =
 * true)): the shared array of reduce_smem, filled from the mma layout's
 * slots (slot i_ at row r_, column c_), then read back at each slot's row
 * (axis 1) or column (axis 0) into a temporary of the layout.  Its operand
 * is already materialized (kb_tile__mma_materialize, plan_dot.c, which
 * calls this: the recursion over the tree stays there). */
void kb_tile__mma_reduce(kb_tile__lw *L, const kb_tile__expr *e)
{
	const kb_tile__expr *t = e->args[0];
	int axis = kb_tile__axis_of(e), NT = L->mma.NT;
	int64_t K = axis ? L->mma.BM : L->mma.BN, S = kb_tile__mma_slots(L);
	const char *ct = kb_tile__ctype(e->type.dtype), *at = axis ? "r_" : "c_";
	kb_buf x = KB_BUF_INIT;
	kb_tile__cexpr(L, t, "i_", &x);
	char *a = axis_array(L, e, K, " of the dot's result"), *c = kb_tile__new_tmp(L);
	kb_tile__ind(L);
	kb_buf_catf(L->o, "%s %s[%lld];\n", ct, c, (long long)S);
	kb_buf rc = KB_BUF_INIT;
	kb_buf_catf(&rc, "const int r_ = wm0_ + i_ / %d * %d + (int)threadIdx.x %% 32 / 4 + i_ %% 4 / 2 * 8, "
		    "c_ = wn0_ + i_ / 4 %% %d * 8 + (int)threadIdx.x %% 4 * 2 + i_ %% 2;\n", 4 * NT, L->mma.MS, NT);
	for (int pass = 0; pass < 2; pass++) { /* fold the slots in; read the array back */
		kb_tile__slot_head(L, S, rc.s, "(void)r_, (void)c_;\n");
		kb_tile__ind(L);
		if (pass) {
			kb_buf_catf(L->o, "%s[i_] = %s[%s];\n", c, a, at);
		} else {
			kb_buf_catf(L->o, "const %s v_ = %s;\n", ct, x.s);
			kb_tile__ind(L);
			fold_atomic(L, e, a, at);
		}
		kb_tile__block_close(L, 1);
		kb_tile__ind(L);
		kb_buf_cat(L->o, pass ? "__syncthreads(); /* read before the array is filled again */\n"
			   : "__syncthreads();\n");
	}
	kb_tile__add_mat(L, e, c, false);
	kb_buf_free(&x);
	kb_buf_free(&rc);
	free(a);
}
