/*
 * lower_wgepi.c - a persistent wgmma kernel's roles, each in a loop of its
 * own, and its epilogue's store by TMA (the rest is lower_wgmma.c's).
 *
 * The roles: the producer warpgroup gives its registers back
 * (setmaxnreg.dec) so that the consumers can take more (setmaxnreg.inc).
 * ptxas keeps those only where the code after a dec fits in its count:
 * with both roles in one loop over the programs (`for (...) { scalars; if
 * (producer_) { copies; continue; } wgmma; epilogue }`) the consumers'
 * code is reachable from the producer's dec, and ptxas drops both
 * instructions ("C7507 Potential Performance Loss: 'setmaxnreg' ignored
 * to maintain minimum register requirements", on every persistent wgmma
 * kernel of the lowering before), so the consumers ran on the launch's
 * 168 registers: a GELU epilogue over 128 accumulators a thread (which
 * ptxas gives 255 where it may) ran short.  So each role gets a loop of
 * its own, as kernels/gemm/04_wgmma.cu's:
 *     if (producer_) {
 *         setmaxnreg.dec 48; the TMA thread alone goes on
 *         for (programs) { scalars; copies }
 *         return;
 *     }
 *     setmaxnreg.inc 224
 *     for (programs) { scalars; wgmma; epilogue }
 * 48 and 224: 128 x 48 + 256 x 224 is the launch's 384 x 168, and with
 * 04_wgmma.cu's 40 kb_wg_produce's cp.async copies (where TMA cannot
 * copy) spill.  lower.c lowers the body twice: the producer's loop the
 * scalars before the dot loop (around_ok in lower_wgmma.c) and the loop,
 * the consumers' all of it; the dot loop lowers to each role's part.
 * Both count the ring's trips (it_) from 0, as before.  --define
 * KB_WG_ROLES=0 keeps the one loop.
 *
 * The epilogue's store by TMA (kb_tile__wgmma_store, planned by
 * lower_wgmma.c's plan_store) is below; a block at a time (--define
 * KB_WG_STORE=3) each [64][64] block's 32 values a thread are worked out
 * and packed into 16 pairs before the wait for its buffer and the
 * barrier, so that the math of block b runs while the copy engine still
 * sends block b - 1, and no more than one block's values are live beside
 * the accumulators (=1 works out all 128 first; =2 each pair between the
 * barriers).
 */
#include "tilegen_int.h"

#include <stdlib.h>

enum { ST_BLOCK = 64 * 64 * 2 /* a [64][64] store buffer (lower_wgmma.c's WG_ST_BLOCK) */ };

bool kb_tile__wgepi_roles(const kb_tile__lw *L)
{
	return L->persist && L->mma.wg && !L->f->no_wg_roles;
}

int kb_tile__wgepi_producer_stmts(const kb_tile__lw *L, kb_tile__stmt **v)
{
	int n = 0;
	for (int i = 0; i < L->k->nbody && L->ndloops; i++) {
		kb_tile__stmt *st = L->k->body[i];
		if (st == L->dloops[0].loop) {
			v[n++] = st;
			break;
		}
		if (st->kind == KB_TS_CONST || st->type.rank == 0) /* not the accumulator's zeros */
			v[n++] = st;
	}
	return n;
}

void kb_tile__wgepi_head(kb_tile__lw *L, int P)
{
	bool regs = P == 256; /* two consumer warpgroups (or pingpong's): registers move */
	if (L->wg_role == KB_TILE_WG_PRODUCER) {
		kb_tile__line(L, "if (producer_) { /* the producer warpgroup, its own loop over the programs "
			      "(so that ptxas keeps setmaxnreg) */\n");
		if (regs) /* 48: its cp.async copies (no TMA) spill in 40 */
			kb_tile__line(L, "\tasm volatile(\"setmaxnreg.dec.sync.aligned.u32 48;\");\n");
		kb_tile__line(L, "\tif (tma_ && threadIdx.x != %d)\n", P);
		kb_tile__line(L, "\t\treturn; /* one thread copies by TMA */\n");
		kb_tile__line(L, "\tint it_ = 0; /* the ring's trips so far, every tile's */\n");
		if (L->mma.pp)
			kb_tile__line(L, "\tconst int pp_first_ = 0, pp_step_ = (int)gridDim.x; /* every program "
				      "of the block's */\n");
		return;
	}
	kb_tile__line(L, "\treturn;\n");
	kb_tile__line(L, "}\n");
	if (regs)
		kb_tile__line(L, "asm volatile(\"setmaxnreg.inc.sync.aligned.u32 224;\"); /* 128 x 48 + 256 x 224: "
			      "the launch's 384 x 168 */\n");
	kb_tile__line(L, "int it_ = 0; /* the ring's trips so far, every tile's */\n");
	if (L->mma.pp)
		kb_tile__line(L, "const int pp_first_ = (int)threadIdx.x / 128 * (int)gridDim.x, pp_step_ = 2 * "
			      "(int)gridDim.x; /* pingpong: every other program a consumer warpgroup */\n");
}

/* store(t[r0 : r0 + BM, c0 : c0 + BN], v), the value in the wgmma layout:
 * each consumer warpgroup's [BM / CONS, BN] part as [64][64] blocks (m
 * piece, 64 columns), each written in bf16 or f16 pairs into one of its two
 * shared buffers (128-byte swizzle: a warp's eight rows of a pair column
 * fall in eight bank groups) and sent by one thread's TMA store, which
 * clips at the tensor's edges; the block two on waits until that store has
 * read its buffer (cp.async.bulk.wait_group.read), so the consumers go
 * back to the next tile's wgmma without waiting on global memory.  The
 * value is worked out once into kb_st_ (the code of one epilogue, not of
 * two), then `if (tma_st_) {...} else`: the store from registers, of
 * kb_st_, follows. */
void kb_tile__wgmma_store(kb_tile__lw *L, const kb_tile__stmt *st)
{
	const kb_tile__mma *m = &L->mma;
	const kb_tile__expr *s = st->slice;
	const kb_tile_param *t = kb_tile__param(L, s->name);
	int cons = L->T / 128, CB = (int)(m->BN / 64);
	bool inl = m->tmode >= 2; /* each pair's value where it is written */
	bool chunk = m->tmode == 3; /* ... a block's before its buffer's wait */
	const char *pair = t->dtype == KB_TILE_BF16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
	kb_buf r0 = KB_BUF_INIT, c0 = KB_BUF_INIT, v = KB_BUF_INIT, v1 = KB_BUF_INIT;
	kb_tile__cexpr(L, s->idx[0].lo, "0", &r0);
	kb_tile__cexpr(L, s->idx[1].lo, "0", &c0);
	kb_tile__cexpr(L, st->value, "i_", &v);
	if (inl) {
		kb_tile__cexpr(L, st->value, "i_ + 1", &v1);
	} else {
		kb_tile__line(L, "float kb_st_[%lld]; /* the value, worked out once for either store */\n",
			      (long long)kb_tile__mma_slots(L));
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int i_ = 0; i_ < %lld; i_++)\n", (long long)kb_tile__mma_slots(L));
		kb_tile__line(L, "\tkb_st_[i_] = %s;\n", v.s);
		kb_buf_free(&v);
		kb_buf_cat(&v, "kb_st_[i_]");
		kb_buf_cat(&v1, "kb_st_[i_ + 1]");
	}
	kb_tile__line(L, "if (tma_st_) { /* through shared memory, [64][64] blocks out by TMA */\n");
	L->depth++;
	kb_tile__line(L, "const int w_ = (int)threadIdx.x / 128, lane_ = (int)threadIdx.x %% 32;\n");
	kb_tile__line(L, "const int rr_ = (int)threadIdx.x %% 128 / 32 * 16 + lane_ / 4; /* the thread's row of a block (and + 8) */\n");
	kb_tile__line(L, "const unsigned sb_ = ring_ + %lld + w_ * %d; /* the warpgroup's two buffers, after the ring */\n",
		      (long long)m->stages * (m->BM + m->BN) * 128, 2 * ST_BLOCK);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int b_ = 0; b_ < %lld; b_++) { /* m piece b_ / %d, columns 64 (b_ %% %d) */\n",
		      (long long)m->MT * CB, CB, CB);
	L->depth++;
	char *ix = kb_xasprintf("const int i_ = (b_ / %d * %d + b_ %% %d * 8 + j_ / 2) * 4 + j_ %% 2 * 2", CB, m->NT, CB);
	if (chunk) {
		kb_tile__line(L, "%s pk_[16]; /* the block's pairs: n piece j_ / 2, rows + 8 (j_ %% 2) */\n",
			      t->dtype == KB_TILE_BF16 ? "__nv_bfloat162" : "__half2");
		kb_tile__line(L, "#pragma unroll\n");
		kb_tile__line(L, "for (int j_ = 0; j_ < 16; j_++) {\n");
		kb_tile__line(L, "\t%s;\n", ix);
		kb_tile__line(L, "\tpk_[j_] = %s(%s, %s);\n", pair, v.s, v1.s);
		kb_tile__line(L, "}\n");
	}
	kb_tile__line(L, "const unsigned buf_ = sb_ + b_ %% 2 * %d;\n", ST_BLOCK);
	kb_tile__line(L, "if (threadIdx.x %% 128 == 0) /* the buffer's last store has read it */\n");
	kb_tile__line(L, "\tb_ == 0 ? kb_wg_st_wait<0>() : kb_wg_st_wait<1>();\n");
	kb_tile__line(L, "kb_wg_st_bar(w_);\n");
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int j_ = 0; j_ < 16; j_++) { /* n piece j_ / 2, rows + 8 (j_ %% 2) */\n");
	L->depth++;
	if (chunk) {
		kb_tile__line(L, "const int r_ = rr_ + j_ %% 2 * 8;\n");
		kb_tile__line(L, "kb_wg_st_pair(buf_ + r_ * 128 + ((j_ / 2 ^ r_ %% 8) << 4) + lane_ %% 4 * 4, pk_[j_]);\n");
	} else {
		kb_tile__line(L, "%s, r_ = rr_ + j_ %% 2 * 8;\n", ix);
		kb_tile__line(L, "kb_wg_st_pair(buf_ + r_ * 128 + ((j_ / 2 ^ r_ %% 8) << 4) + lane_ %% 4 * 4, %s(%s, %s));\n",
			      pair, v.s, v1.s);
	}
	free(ix);
	L->depth--;
	kb_tile__line(L, "}\n");
	kb_tile__line(L, "asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); /* for the copy engine */\n");
	kb_tile__line(L, "kb_wg_st_bar(w_);\n");
	kb_tile__line(L, "if (threadIdx.x %% 128 == 0)\n");
	char *wr = m->pp ? kb_xstrdup("") : kb_xasprintf(" + w_ * %lld", (long long)(m->BM / cons));
	kb_tile__line(L, "\tkb_wg_st_tma(&kb_tma_out, buf_, (%s) + b_ %% %d * 64, (%s)%s + b_ / %d * 64);\n",
		      c0.s, CB, r0.s, wr, CB);
	free(wr);
	L->depth--;
	kb_tile__line(L, "}\n");
	L->depth--;
	kb_tile__line(L, "} else\n");
	kb_buf_free(&r0);
	kb_buf_free(&c0);
	kb_buf_free(&v);
	kb_buf_free(&v1);
}
