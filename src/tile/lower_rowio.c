/*
 * lower_rowio.c - the row layout's (lower_rows.c) stores to global memory
 * two slots at a time.  Slots 2 j and 2 j + 1 of an [RW, C] tile are
 * columns c and c + 1 of one row (c even), so where the row's start is
 * aligned to a pair and both elements are stored (in the tensor, the
 * mask true) they go as one store of twice the element's size: a bf16 tile
 * in 32-bit stores, as kernels/attention/02_fa2.cu stores o, not one
 * STG.U16 a slot.  Else each element is stored alone, as before.
 *
 * Owns only the store's slot loop; the slice's start, rows and columns
 * left (p_, rows_, cols_) come from lower_load.c's access2_open, the value
 * and mask texts from the caller.  Each element's test and value are
 * worked out at its own slot (r_, c_, f_ of kb_tile__rows_at), so an
 * expression that reads them is right for the pair's second element too.
 * A slot of the row layout always lies inside its [RW, C] tile, so the
 * 2-d layout's f_ < R C test is left out (attention.tile's epilogue: 231
 * fewer instructions at D = 64, over all its paths; nvrtc 13.0, sm_90).
 */
#include "tile_int.h"

/* The slot loop of a row-layout store: S slots of an [R, C] tile (C even),
 * el the element's value and m the mask (or "") as texts in slot i_, ld
 * the row length, ct the element's C type. */
void kb_tile__rows_store_pairs(kb_tile__lw *L, int64_t R, int64_t C, const char *ld, const char *el,
			       const char *m, const char *ct)
{
	kb_buf at = KB_BUF_INIT;
	kb_tile__rows_at(L, C, &at);
	kb_tile__line(L, "const bool al_ = ((unsigned long long)p_ %% (2 * sizeof(*p_))) == 0 && %s %% 2 == 0; "
		      "/* a pair's first element on a pair boundary */\n", ld);
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int k_ = 0; k_ < %lld; k_ += 2) { /* slots k_, k_ + 1: columns c_, c_ + 1 of a row */\n",
		      (long long)kb_tile__slots_rc(L, R, C));
	L->depth++;
	kb_tile__line(L, "%s w_[2];\n", ct);
	kb_tile__line(L, "bool in_[2];\n");
	kb_tile__line(L, "#pragma unroll\n");
	kb_tile__line(L, "for (int e_ = 0; e_ < 2; e_++) {\n");
	L->depth++;
	kb_tile__line(L, "const int i_ = k_ + e_;\n");
	kb_tile__line(L, "%s", at.s);
	kb_tile__line(L, "(void)f_;\n");
	kb_tile__line(L, "in_[e_] = r_ < rows_ && c_ < cols_%s%s%s;\n", *m ? " && (" : "", m, *m ? ")" : "");
	kb_tile__line(L, "w_[e_] = %s;\n", el);
	kb_tile__block_close(L, 1);
	kb_tile__line(L, "const int i_ = k_;\n");
	kb_tile__line(L, "%s", at.s);
	kb_tile__line(L, "(void)f_;\n");
	kb_tile__line(L, "if (al_ && in_[0] && in_[1])\n");
	kb_tile__line(L, "\t*(kb_pair<%s> *)(p_ + (size_t)r_ * %s + c_) = kb_pair<%s>{w_[0], w_[1]};\n", ct, ld, ct);
	kb_tile__line(L, "else {\n");
	kb_tile__line(L, "\t#pragma unroll /* w_ stays in registers */\n");
	kb_tile__line(L, "\tfor (int e_ = 0; e_ < 2; e_++)\n");
	kb_tile__line(L, "\t\tif (in_[e_])\n");
	kb_tile__line(L, "\t\t\tp_[(size_t)r_ * %s + c_ + e_] = w_[e_];\n", ld);
	kb_tile__line(L, "}\n");
	kb_tile__block_close(L, 1);
	kb_buf_free(&at);
}
