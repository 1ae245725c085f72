/*
 * lower_rowwg.c - the row layout's dots (lower_rows.c: attention's S = Q K^T
 * and O += P V) as wgmma on sm_90a, as kernels/attention/03_fa3.cu issues
 * them: wgmma.mma_async m64nNk16 with A from registers and B from shared
 * memory through a matrix descriptor, no ldmatrix and no mma.sync.
 *
 * Why the row layout carries over: a warp's part of an m64nN wgmma
 * accumulator is the C fragment of an m16n8 mma.sync for each of its n8
 * pieces (d[4 j + 2 h + e] at row g + 8 h of the warp's 16, column 8 j + 2
 * t + e), and wgmma's register A fragment is mma.sync's, warp by warp.  So
 * the statistics, exponentials, masks, rescale and stores of lower_rows.c
 * stay as they are; only which rows a warp holds changes with two row
 * tiles a warp: a warpgroup runs two m64 pieces, so warp w holds rows
 * 64 MT (w / 4) + 16 (w % 4) + 64 mt (kb_tile__rows_row), not 32 w + 16 mt.
 * With one row tile a warp the rows are the same as mma.sync's.
 *
 * The b tiles (k and v) go to shared memory as wgmma's descriptors read
 * them, both in one layout: [R][C] of 16-bit elements as C / 64 blocks of
 * [R][64], 128-byte rows, the 128-byte swizzle (16-byte chunk c of row r at
 * c ^ r % 8), each block 1024-byte aligned (kb_swz128).  dot(q, trans(k)):
 * k [C][K] is B K-major (a k16 step 32 bytes on within the block of its
 * 64 columns, the blocks 128 C bytes apart; stride offset 1024, 8 rows);
 * dot(p, v): v [K][C] is B MN-major (imm-trans-b 1; 16 rows of K,
 * 2048 bytes, a step; leading offset the block's R 128 bytes, stride 1024),
 * as 03_fa3.cu's desc_k and desc_mn.  The copies stay lower_rows.c's
 * (cp.async by every thread, a trip ahead), written through the generic
 * proxy, so each thread fences the proxies (fence.proxy.async) after its
 * copies landed, before the barrier that publishes them to wgmma.
 *
 * A dot: its A fragments first (p packed as it is computed, q's registers
 * or ldmatrix), all of them, then wgmma.fence (registers written before
 * it are what wgmma reads), the wgmmas of every k16 step and m64 piece, one
 * commit group and a wait for it: the result is in registers when the
 * statement after the dot reads it.  A 16-bit load that only dots read as
 * their a (attention's q) is kept in shared memory, swizzled as b's tiles
 * (lower_rows.c), and is A from there (K-major, the warpgroup's rows at
 * al_, its m64 pieces 64 rows apart): no registers, no ldmatrix a trip, as
 * 03_fa3.cu's Q.  The
 * accumulators are pinned around the group (kb_rwg_fence) so the compiler
 * does not move them while wgmma owns them.
 *
 * A producer warpgroup (kb_tile__rows_ws_loop: threads(256) with one row
 * tile a warp, i.e. two consumer warpgroups of 64 rows, 03_fa3.cu's roles;
 * one loop whose dots all have their b copied a trip ahead, no other dot,
 * no reduction across rows, no store before the loop; not `--define
 * KB_WG_WS=0`): the block is 384 threads; everything before the loop runs
 * in all of them (q's copy in the consumers), then the producer (threads
 * 256-383, setmaxnreg.dec 40) runs the loop's trips filling each b tile's
 * ring of two stages (lower_rowwg_tma.c: TMA by one thread, or cp.async)
 * and returns, and the consumers (setmaxnreg.inc 232) run the loop on the
 * rings' mbarriers instead of __syncthreads: a tile's full one waited for
 * before the dot that reads it (overlapped: the second's in the trip
 * before its issue, where 03_fa3.cu waits for v), its empty one arrived
 * on once that dot's group is done (overlapped: the first's after the
 * wait for it alone, the second's in the next trip); named barrier 7 for
 * q.  With the overlap the two warpgroups take turns at the tensor cores
 * (03_fa3.cu's PINGPONG): a trip's S and the last trip's P V are issued
 * between bar.sync 8 + warpgroup and bar.arrive 9 - warpgroup, so one
 * warpgroup's softmax runs while the other's dots do; warpgroup 1 passes
 * first, warpgroup 0 takes the last pass after the loop.  At threads(256)
 * without it (every thread copying, __syncthreads twice a trip) both
 * warpgroups' softmax coincide at one block an SM, and at D = 128 ptxas
 * serialized the wgmmas (C7520; H200: 47-61% of 03_fa3.cu).
 *
 * Which kernels (kb_tile__rows_wg_plan): the target sm_90a and not
 * `--define KB_WGMMA=0`, threads() a multiple of 128 (whole warpgroups),
 * each dot's result at most 256 columns, a K-major b's K and an MN-major
 * b's columns multiples of 64 (a swizzle row).  Others keep mma.sync.
 */
#include "tilegen_int.h"

#include <stdlib.h>
#include <string.h>

/* RWG_OVL_REGS: the overlap keeps S, x and P's A fragments in registers
 * at once, a thread's part of them at most this many 32-bit registers (of
 * 255): attention at D = 128, BN = 64 is 64 + 128 + 32 = 224 without
 * spills; at D = 64, BN = 128 (128 + 64 + 64 = 256) ptxas spills and
 * serializes the wgmmas, so that one waits for each dot (H200 compile,
 * 2026-11-28). */
enum { RWG_NMAX = 256, RWG_OVL_REGS = 224, RWG_WS_CONS = 2 };

typedef struct {
	bool ok;
} wg_ctx;

static kb_tile__walkret wg_dot_ok(const kb_tile__expr *e, void *vctx)
{
	wg_ctx *p = vctx;
	if (e->kind != KB_TE_CALL || strcmp(e->name, "dot"))
		return KB_TWALK_ON;
	const kb_tile__expr *b = e->args[1];
	bool bt = b->kind == KB_TE_CALL && !strcmp(b->name, "trans");
	int64_t K = e->args[0]->type.ext[1], C = e->type.ext[1];
	if (C > RWG_NMAX || (bt ? K % 64 : C % 64)) {
		p->ok = false;
		return KB_TWALK_STOP;
	}
	return KB_TWALK_ON;
}

bool kb_tile__rows_wg_plan(const kb_tile__lw *L)
{
	if (!kb_tile__wgmma_target(L->f) || L->f->no_wgmma || L->T % 128)
		return false;
	wg_ctx p = {.ok = true};
	kb_tile__walk_stmts(L->k->body, L->k->nbody, NULL, wg_dot_ok, &p);
	return p.ok;
}

void kb_tile__rows_wg_issue(kb_tile__lw *L, const char *c, const char *aw, bool bt, long long K, long long C,
			    bool f16, long long RA, bool zero, int mode)
{
	const char *sc = zero ? "k_ > 0" : "1"; /* scale-d: 0 starts the sum */
	int MT = L->rows_mt;
	long long n = C / 2 * MT;
	L->rows_wg_n |= 1u << (C / 16);
	L->rows_wg_ss |= RA > 0;
	if (mode == 1 && L->rows_ws) /* the pingpong: this warpgroup's turn at the tensor cores */
		kb_tile__rows_ws_bar(L, true, "8 + (int)threadIdx.x / 128", 256, "the other warpgroup passed the turn");
	kb_tile__line(L, "kb_rwg_fence<%lld>(%s); /* wgmma owns the accumulators from here */\n", n, c);
	if (mode < 2)
		kb_tile__line(L, "asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); /* the A fragments are written */\n");
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int k_ = 0; k_ < %lld; k_++) {\n", K / 16);
	if (bt) /* b [C][K], K-major: k16 step k_ at 32 bytes within its 64-column block */
		kb_tile__line(L, "\tconst unsigned long long db_ = kb_wg_desc(bl_ + (unsigned)(k_ / 4 * %lld + k_ %% 4 * 32), "
			      "16, 1024);\n", C * 128);
	else /* b [K][C], MN-major: 16 rows of K a step; the next 64 columns a block on */
		kb_tile__line(L, "\tconst unsigned long long db_ = kb_wg_desc(bl_ + (unsigned)(k_ * 2048), %lld, 1024);\n",
			      K * 128);
	for (int mt = 0; mt < MT; mt++)
		if (RA) /* a [RA][K] K-major at al_ (the warpgroup's rows), piece mt 64 rows on */
			kb_tile__line(L, "\tkb_rwg_ss_%s_n%lld<%d, %d>(%s + %d, kb_wg_desc(al_ + (unsigned)(k_ / 4 * %lld + "
				      "k_ %% 4 * 32 + %d), 16, 1024), db_, %s); /* m64 piece %d */\n", f16 ? "f16" : "bf16", C,
				      4 * MT, bt ? 0 : 1, c, 4 * mt, RA * 128, mt * 64 * 128, sc, mt);
		else
			kb_tile__line(L, "\tkb_rwg_%s_n%lld<%d, %d>(%s + %d, %s[k_][%d], db_, %s); /* m64 piece %d */\n",
				      f16 ? "f16" : "bf16", C, 4 * MT, bt ? 0 : 1, c, 4 * mt, aw, mt, sc, mt);
	kb_tile__line(L, "}\n");
	if (mode < 2)
		kb_tile__line(L, "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n");
	if (mode)
		return;
	kb_tile__line(L, "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n");
	kb_tile__line(L, "kb_rwg_fence<%lld>(%s);\n", n, c);
}

/* ===== a producer warpgroup and two consumers: 03_fa3.cu's roles ===== */

/* An expression the consumers alone may run (the producer has returned)
 * or that the producer may run too: no reduction across rows (those have
 * barriers; a kept row reduction is quad shuffles), and no dot. */
static kb_tile__walkret ws_expr(const kb_tile__expr *e, void *vctx)
{
	bool dots = vctx != NULL, row = e->type.rank == 2 && e->type.ext[1] == 1;
	if ((kb_tile__is_reduction(e) && !row) || (dots && e->kind == KB_TE_CALL && !strcmp(e->name, "dot")))
		return KB_TWALK_STOP;
	return KB_TWALK_ON;
}

/* A statement the producer may not run before the loop: a store, a loop. */
static kb_tile__walkret ws_stmt(const kb_tile__stmt *st, void *vctx)
{
	(void)vctx;
	return st->kind == KB_TS_STORE || st->kind == KB_TS_FOR ? KB_TWALK_STOP : KB_TWALK_ON;
}

const kb_tile__stmt *kb_tile__rows_ws_loop(const kb_tile__lw *L)
{
	const kb_tile__kernel_ast *k = L->k;
	if (L->f->no_wg_ws || L->T != 128 * RWG_WS_CONS || L->rows_mt != 1)
		return NULL;
	int loop = -1;
	for (int i = 0; i < k->nbody; i++) {
		const kb_tile__stmt *st = k->body[i];
		bool dot = kb_tile__walk_stmt(st, NULL, ws_expr, (void *)1);
		if (kb_tile__walk_stmt(st, NULL, ws_expr, NULL))
			return NULL;
		if (dot && st->kind == KB_TS_FOR && loop < 0)
			loop = i;
		else if (dot || (loop < 0 && kb_tile__walk_stmt(st, ws_stmt, NULL, NULL)))
			return NULL;
	}
	return loop >= 0 ? k->body[loop] : NULL;
}

/* ===== the overlap: S of this trip over the last trip's P V ===== */

bool kb_tile__rows_wg_ovl_plan(kb_tile__lw *L, const kb_tile__stmt *st)
{
	L->rows_ovl = false;
	if (!L->rows_wg || L->f->no_wg_overlap || L->npf != 2)
		return false;
	int i0 = -1, i1 = -1;
	for (int i = 0; i < st->nbody; i++) {
		const kb_tile__stmt *b = st->body[i];
		if (b->kind != KB_TS_ASSIGN || b->op || !b->value)
			continue;
		if (b->value == L->pf[0])
			i0 = i;
		const kb_tile__expr *v = b->value;
		if (i0 >= 0 && v->kind == KB_TE_BINARY && v->op == KB_TOP_ADD && (v->args[0] == L->pf[1] ||
										   v->args[1] == L->pf[1]))
			i1 = i;
	}
	if (i0 < 0 || i1 < 0 || st->body[i1]->defines)
		return false;
	const kb_tile__stmt *px = st->body[i1];
	const kb_tile__lsym *x = kb_tile__lw_lookup(L, px->name);
	const kb_tile__expr *a = L->pf[1]->args[0];
	const kb_tile__lsym *as = a->kind == KB_TE_NAME ? kb_tile__lw_lookup(L, a->name) : NULL;
	if (!x || x->packed || x->stream || x->type.rank != 2 || x->type.dtype != KB_TILE_F32 ||
	    (as && as->packed && as->qsmem))
		return false;
	bool other = kb_tile__names(a, px->name);
	for (int i = 0; i < st->nbody && !other; i++) /* x is read and written by its statement alone */
		other = i != i1 && kb_tile__stmt_names(st->body[i], px->name);
	long long MT = L->rows_mt, regs = (L->pf[0]->type.ext[1] + L->pf[1]->type.ext[1]) / 2 * MT +
					  a->type.ext[1] / 4 * MT; /* S, x and P's fragments */
	if (other || regs > RWG_OVL_REGS)
		return false;
	L->rows_ovl = true;
	L->ovl_acc = kb_xstrdup(x->c);
	return true;
}

/* The second dot's shape: its A's k16 steps, its accumulators. */
static void ovl_shape(const kb_tile__lw *L, long long *K, long long *C, bool *bt)
{
	const kb_tile__expr *e = L->pf[1], *b = e->args[1];
	*K = e->args[0]->type.ext[1];
	*C = e->type.ext[1];
	*bt = b->kind == KB_TE_CALL && !strcmp(b->name, "trans");
}

static void ovl_pv(kb_tile__lw *L, int mode)
{
	long long K, C;
	bool bt;
	ovl_shape(L, &K, &C, &bt);
	kb_tile__line(L, "const unsigned bl_ = (unsigned)__cvta_generic_to_shared(kb_smem + %lld + (kb_par_ ^ 1) * %lld); "
		      "/* the last trip's b tile */\n", (long long)L->pf_off[1], (long long)L->pf_bytes[1]);
	kb_tile__rows_wg_issue(L, L->ovl_acc, "kb_pw_", bt, K, C, L->pf[1]->args[0]->type.dtype == KB_TILE_F16, 0, false,
			       mode);
}

void kb_tile__rows_wg_ovl_issue(kb_tile__lw *L, const char *c, long long n)
{
	kb_tile__line(L, "if (kb_pv_) { /* the last trip's %s += dot: the tensor cores' work over this trip's softmax */\n",
		      L->ovl_acc);
	L->depth++;
	ovl_pv(L, 2);
	kb_tile__block_close(L, 1);
	kb_tile__line(L, "asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\"); /* (empty on the first "
		      "trip) */\n");
	if (L->rows_ws)
		kb_tile__rows_ws_bar(L, false, "9 - (int)threadIdx.x / 128", 256, "the turn passes: its softmax runs "
				     "while the other warpgroup's dots do");
	kb_tile__line(L, "asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: \"memory\"); /* this trip's dot alone */\n");
	kb_tile__line(L, "kb_rwg_fence<%lld>(%s);\n", n, c);
	if (L->rows_ws)
		kb_tile__rows_ring_free(L, 0, "kb_par_", "the first dot read its b tile: the producer refills it");
}

void kb_tile__rows_wg_ovl_close(kb_tile__lw *L)
{
	kb_tile__line(L, "if (kb_pv_) { /* the last trip's %s += dot */\n", L->ovl_acc);
	L->depth++;
	if (!L->rows_ws) { /* (the producer's copy landed before the trip) */
		kb_tile__line(L, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); /* for wgmma */\n");
		kb_tile__line(L, "__syncthreads(); /* its b tile is in shared memory */\n");
	}
	ovl_pv(L, 0);
	if (L->rows_ws)
		kb_tile__rows_ring_free(L, 1, "(kb_par_ ^ 1)", "the last trip's second b tile is read");
	kb_tile__block_close(L, 1);
	if (L->rows_ws) { /* as often as it was passed the turn: once more than it took it */
		kb_tile__line(L, "if ((int)threadIdx.x / 128 == 0)\n");
		L->depth++;
		kb_tile__rows_ws_bar(L, true, "8", 256, "warpgroup 1's last pass");
		L->depth--;
	}
	free(L->ovl_acc);
	L->ovl_acc = NULL;
	L->rows_ovl = false;
}

/* Before the second dot's statement: the wait for the last trip's, then
 * the next trip's copy of its b tile into the buffer that dot read (with
 * the producer warpgroup: the last trip's stage handed back to it). */
void kb_tile__rows_wg_ovl_wait(kb_tile__lw *L)
{
	const kb_tile__expr *e = L->pf[1];
	long long n = e->type.ext[1] / 2 * L->rows_mt, na = e->args[0]->type.ext[1] / 16 * L->rows_mt * 4;
	if (L->rows_ws) /* (03_fa3.cu's place: its try_wait loop ends the block, so ptxas keeps the wait below it) */
		kb_tile__rows_ring_wait(L, 1, "kb_par_", "kb_it_", "this trip's second b tile, for the next trip");
	kb_tile__line(L, "asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\"); /* the last trip's %s "
		      "+= dot: %s and kb_pw_ are ours again */\n", L->ovl_acc, L->ovl_acc);
	kb_tile__line(L, "kb_rwg_fence<%lld>(%s);\n", n, L->ovl_acc);
	kb_tile__line(L, "kb_rwg_fenceu<%lld>(&kb_pw_[0][0][0]);\n", na);
	if (L->rows_ws) { /* the producer refills the last trip's stage */
		kb_tile__line(L, "if (kb_pv_) {\n");
		L->depth++;
		kb_tile__rows_ring_free(L, 1, "(kb_par_ ^ 1)", "the last trip's second b tile is read");
		kb_tile__block_close(L, 1);
		kb_tile__line(L, "kb_pv_ = 1;\n");
		return;
	}
	kb_tile__line(L, "kb_pv_ = 1;\n");
	kb_tile__line(L, "__syncthreads(); /* every warp's dots are done: their b buffers are free */\n");
	kb_tile__line(L, "if (%s + %s < %s) { /* the next trip's second b tile, into the buffer the last trip's "
		      "read */\n", L->ovl_cn, L->ovl_step, L->ovl_hi);
	L->depth++;
	kb_tile__line(L, "const int kb_next_ = %s + %s;\n", L->ovl_cn, L->ovl_step);
	kb_tile__line(L, "{\n");
	L->depth++;
	kb_tile__line(L, "const int %s = kb_next_;\n", L->ovl_cn);
	kb_tile__rows_pf_issue(L, "kb_par_ ^ 1", 1, 2);
	kb_tile__block_close(L, 2);
	kb_tile__line(L, "kb_cp_async_commit();\n");
}

/* wgmma m64nNk16 of type ty, A from registers (ss: from shared memory,
 * K-major, its descriptor da): d[j S + q] is register 4 j + q of the warp's
 * part (S = 4 MT: the row layout's slots of one m64 piece, d the piece's
 * first), TB imm-trans-b (0: b K-major, 1: MN-major), sc scale-d (0: D =
 * A B, the sum's first step; else D += A B). */
static void wg_fn(kb_buf *out, int n, const char *ty, bool ss)
{
	int regs = n / 2, na = ss ? 1 : 4; /* A's operands */
	kb_buf_catf(out, "template <int S, int TB>\n__device__ __forceinline__ void kb_rwg_%s%s_n%d(float *d, %s, "
		    "unsigned long long db, int sc)\n{\n\tasm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, "
		    "0;\\n\"\n\t\t\"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {\"\n\t\t\"", ss ? "ss_" : "", ty, n,
		    ss ? "unsigned long long da" : "const unsigned *a", regs + na + 1, n, ty, ty);
	for (int i = 0; i < regs; i++)
		kb_buf_catf(out, "%%%d%s%s", i, i + 1 < regs ? ", " : "", i % 16 == 15 && i + 1 < regs ? "\"\n\t\t\"" : "");
	if (ss)
		kb_buf_catf(out, "}, %%%d, %%%d, p, 1, 1, 0, %%%d;\\n}\\n\"\n\t\t: ", regs, regs + 1, regs + 3);
	else
		kb_buf_catf(out, "}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, %%%d;\\n}\\n\"\n\t\t: ", regs, regs + 1,
			    regs + 2, regs + 3, regs + 4, regs + 6);
	for (int i = 0; i < regs; i++)
		kb_buf_catf(out, "\"+f\"(d[%d * S + %d])%s%s", i / 4, i % 4, i + 1 < regs ? ", " : "",
			    i % 8 == 7 && i + 1 < regs ? "\n\t\t  " : "");
	kb_buf_catf(out, "\n\t\t: %s\"l\"(db), \"r\"(sc), \"n\"(TB));\n}\n",
		    ss ? "\"l\"(da), " : "\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), ");
}

static const char rwg_helpers[] =
	"\n/* ---- the row layout's dots as wgmma (sm_90a) ---- */\n"
	"/* The n accumulators at d held in place (registers wgmma reads and writes\n"
	" * until its wait): an empty asm that reads and writes each. */\n"
	"template <int N>\n"
	"__device__ __forceinline__ void kb_rwg_fence(float *d)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int i = 0; i < N; i++)\n"
	"\t\tasm volatile(\"\" : \"+f\"(d[i])::\"memory\");\n"
	"}\n"
	"/* ... and n A fragments (kb_pw_: the overlap's P, read by a wgmma in\n"
	" * flight until its wait). */\n"
	"template <int N>\n"
	"__device__ __forceinline__ void kb_rwg_fenceu(unsigned *d)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int i = 0; i < N; i++)\n"
	"\t\tasm volatile(\"\" : \"+r\"(d[i])::\"memory\");\n"
	"}\n"
	"/* The n accumulators at d defined, not written (what a wgmma with scale-d\n"
	" * 0 reads and ignores): no zeros a trip. */\n"
	"template <int N>\n"
	"__device__ __forceinline__ void kb_rwg_undef(float *d)\n"
	"{\n"
	"#pragma unroll\n"
	"\tfor (int i = 0; i < N; i++)\n"
	"\t\tasm volatile(\"\" : \"=f\"(d[i]));\n"
	"}\n";

void kb_tile__rows_wg_prologue(kb_buf *out, unsigned ns, bool ss, bool wgmma)
{
	if (!ns)
		return;
	if (!wgmma) /* kb_wg_desc (the wgmma prologue has it) */
		kb_tile__wgmma_desc_prologue(out);
	kb_buf_cat(out, rwg_helpers);
	for (int n = 16; n <= RWG_NMAX; n += 16)
		if (ns & 1u << (n / 16)) {
			for (int k = 0; k < (ss ? 2 : 1); k++) {
				wg_fn(out, n, "bf16", k);
				wg_fn(out, n, "f16", k);
			}
		}
}
