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
 *
 * Also the helpers the row layout's generated code calls (its prologue):
 * the fragments' 16-bit pairs, the pair store, exp as ex2, the copies'
 * element path and the wgmma tiles' swizzle; and the copies of a dot's b
 * tile into shared memory (copy_issue, by the block's threads or by the
 * producer warpgroup of lower_rowwg.c), which both of those files issue.
 */
#include "tilegen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ===== the row layout's helpers ===== */

static const char rows_helpers[] =
	"/* Two f32 as the 16-bit pair of an mma fragment register (lo in the low\n"
	" * half), each rounded to nearest even: one cvt.rn.bf16x2.f32 (f16x2). */\n"
	"__device__ __forceinline__ unsigned kb_pack2(float lo, float hi, const __nv_bfloat16 *)\n"
	"{\n"
	"\tconst __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);\n"
	"\treturn *(const unsigned *)&v;\n"
	"}\n"
	"__device__ __forceinline__ unsigned kb_pack2(float lo, float hi, const __half *)\n"
	"{\n"
	"\tconst __half2 v = __floats2half2_rn(lo, hi);\n"
	"\treturn *(const unsigned *)&v;\n"
	"}\n"
	"/* The low (hi 0) or high half of such a register as f32. */\n"
	"__device__ __forceinline__ float kb_unpack2(unsigned v, int hi, const __nv_bfloat16 *)\n"
	"{\n"
	"\treturn __int_as_float((int)(hi ? v & 0xffff0000u : v << 16));\n"
	"}\n"
	"__device__ __forceinline__ float kb_unpack2(unsigned v, int hi, const __half *)\n"
	"{\n"
	"\treturn __half2float(__ushort_as_half((unsigned short)(hi ? v >> 16 : v)));\n"
	"}\n"
	"/* Two elements of a row as one store (lower_rowio.c): 32 bits of 16-bit\n"
	" * elements, 64 of 32-bit ones. */\n"
	"template <typename T> struct __align__(2 * sizeof(T)) kb_pair {\n"
	"\tT x, y;\n"
	"};\n"
	"/* 2^x as ex2.approx (what __expf takes); the host emulator (tests/emu)\n"
	" * takes exp2f. */\n"
	"__device__ __forceinline__ float kb_ex2(float x)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\tfloat r;\n"
	"\tasm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x));\n"
	"\treturn r;\n"
	"#else\n"
	"\treturn exp2f(x);\n"
	"#endif\n"
	"}\n"
	"/* exp((a - b) c) as kb_ex2 of one FFMA. */\n"
	"__device__ __forceinline__ float kb_exp_sub(float a, float b, float c)\n"
	"{\n"
	"\tconst float k = c * 1.44269504088896341f, x = fmaf(a, k, -b * k);\n"
	"\treturn kb_ex2(x);\n"
	"}\n"
	"/* The same of two row statistics (alpha = exp((m - mn) c)): a c log2(e) -\n"
	" * b c log2(e) as two rounded products, so that a == b gives exactly 1. */\n"
	"__device__ __forceinline__ float kb_exp_sub_row(float a, float b, float c)\n"
	"{\n"
	"\tconst float k = c * 1.44269504088896341f, x = __fmul_rn(a, k) - __fmul_rn(b, k);\n"
	"\treturn kb_ex2(x);\n"
	"}\n"
	"/* The byte offset of the 16-byte chunk of column c (of 16-bit elements)\n"
	" * of row r in an [R][C] tile laid out for wgmma (lower_rowwg.c): C / 64\n"
	" * blocks of [R][64], 128-byte rows, chunk c / 8 % 8 at (c / 8 ^ r) % 8. */\n"
	"__device__ __forceinline__ unsigned kb_swz128(int r, int c, int R)\n"
	"{\n"
	"\treturn (unsigned)((c >> 6) * R * 128 + r * 128 + ((((c >> 3) ^ r) & 7) << 4));\n"
	"}\n"
	"/* A [WR][WC] tile of 16-bit elements from p (rows ld apart) into [WR][WC\n"
	" * + 8] at b (SW: swizzled) element by element, zeros past rows and cols: the copy where\n"
	" * the rows are not 16-byte aligned, a call (__noinline__), so that the\n"
	" * main loop's registers are the cp.async path's alone; T threads from T0. */\n"
	"template <int WR, int WC, int T, bool SW = false, int T0 = 0>\n"
	"__device__ __noinline__ void kb_rows_copy_slow(void *b, const void *p, long long rows, long long cols, long long ld)\n"
	"{\n"
	"\tfor (int q = (int)threadIdx.x - T0; q < WR * WC; q += T) {\n"
	"\t\tconst int r = q / WC, c = q % WC;\n"
	"\t\t((unsigned short *)b)[SW ? kb_swz128(r, c, WR) / 2 + c % 8 : r * (WC + 8) + c] =\n"
	"\t\t\tr < rows && c < cols ? ((const unsigned short *)p)[r * ld + c] : 0;\n"
	"\t}\n"
	"}\n"
	"/* 1: a b tile's chunk past the tensor is copied with src-size 0 from its\n"
	" * own address (past the tensor, not read: 16 zeros); 0: from the tensor's\n"
	" * first element (an address selected a chunk, as before 2026-11-28).\n"
	" * `kbench run --option -DKB_COPY_ZFILL=0` sets it. */\n"
	"#ifndef KB_COPY_ZFILL\n"
	"#define KB_COPY_ZFILL 1\n"
	"#endif\n"
	"/* 1: a dot's start x * r is x where r is 1 in every row of the warp, the\n"
	" * multiplies skipped (attention's acc * alpha); 0: always multiplied;\n"
	" * -1 (default): 1, but 0 with one row tile a warp of more than 64\n"
	" * columns (attention.tile at D = 128: there the branch's registers cost\n"
	" * a block an SM).  `kbench run --option -DKB_LAZY_RESCALE=0` sets it. */\n"
	"#ifndef KB_LAZY_RESCALE\n"
	"#define KB_LAZY_RESCALE -1\n"
	"#endif\n"
	"/* Whether p holds in any lane of the warp (the host emulator: this lane,\n"
	" * which gives the same results where it is used: a multiply by 1 skipped). */\n"
	"__device__ __forceinline__ bool kb_warp_any(bool p)\n"
	"{\n"
	"#ifdef __CUDA_ARCH__\n"
	"\treturn __any_sync(0xffffffffu, p);\n"
	"#else\n"
	"\treturn p;\n"
	"#endif\n"
	"}\n\n";

void kb_tile__rows_prologue(kb_buf *out)
{
	kb_buf_cat(out, rows_helpers);
}

/* Issues the copy of b's tile (w, a [WR, WC] load) to the shared bytes at
 * offset `off` (C text) as [WR][WC + 8] (sw: swizzled for wgmma, kb_swz128,
 * lower_rowwg.c): 16-byte cp.async where the rows are aligned (one commit
 * group), else element by element; zeros past the tensor.  The caller
 * waits and synchronises. */
void kb_tile__rows_copy_issue(kb_tile__lw *L, const kb_tile__expr *w, const char *off, const char *et, bool sw)
{
	const kb_tile__expr *s = w->args[0];
	long long WR = w->type.ext[0], WC = w->type.ext[1], P = WC + 8;
	kb_buf base = KB_BUF_INIT, rows = KB_BUF_INIT, cols = KB_BUF_INIT, ld = KB_BUF_INIT;
	const kb_tile_param *t = kb_tile__param(L, s->name);
	char dst[64], el[64], tid[48], t0[16] = "";
	int T = L->ws_prod ? 128 : L->T; /* the copying threads: the block's, or the producer warpgroup's */
	snprintf(tid, sizeof tid, L->ws_prod ? "((int)threadIdx.x - %d)" : "(int)threadIdx.x", L->T);
	if (L->ws_prod)
		snprintf(t0, sizeof t0, ", %d", L->T);
	if (!kb_tile__slice2(L, s, &base, &rows, &cols, &ld))
		goto out;
	kb_tile__access2_open(L, t, true, &base, &rows, &cols);
	if (sw) {
		kb_tile__line(L, "%s *b_ = (%s *)(kb_smem + %s); /* [%lld][%lld], swizzled for wgmma */\n", et, et, off,
			      WR, WC);
		snprintf(dst, sizeof dst, "kb_swz128(r_, c_, %lld)", WR);
		snprintf(el, sizeof el, "kb_swz128(r_, c_, %lld) / 2 + c_ %% 8", WR);
	} else {
		kb_tile__line(L, "%s *b_ = (%s *)(kb_smem + %s); /* [%lld][%lld] */\n", et, et, off, WR, P);
		snprintf(dst, sizeof dst, "(unsigned)(r_ * %lld + c_) * 2", P);
		snprintf(el, sizeof el, "r_ * %lld + c_", P);
	}
	kb_tile__line(L, "if (((unsigned long long)p_ & 15) == 0 && %s %% 8 == 0) {\n", ld.s);
	kb_tile__line(L, "\tconst unsigned s_ = (unsigned)__cvta_generic_to_shared(b_);\n");
	if (WR * WC / 8 % T == 0 && T % (WC / 8) == 0) {
		/* a thread's chunks: one column, rows T / (WC / 8) apart (unrolled: addresses by immediates) */
		/* the bounds as one 32-bit compare a chunk; the source a fixed step past the thread's first
		 * chunk's, read where the chunk is in the tensor (src-size 16) and not at all past it
		 * (src-size 0: 16 zeros; the address, past the tensor there, is not read, as CUTLASS's
		 * zero-fill copies pass theirs).  Selecting a valid address instead (KB_COPY_ZFILL 0) cost
		 * attention.tile's main loop 136 instructions at D = 64 and 156 at D = 128 (nvrtc 13.0,
		 * sm_90) */
		kb_tile__line(L, "\tconst int r0_ = %s / %lld, c_ = %s %% %lld * 8;\n", tid, WC / 8, tid, WC / 8);
		kb_tile__line(L, "\tconst int n_ = c_ < cols_ ? (int)(rows_ < %lld ? rows_ : %lld) : 0; /* the tile's rows in "
			      "the tensor (at this column) */\n", WR, WR);
		kb_tile__line(L, "\tconst auto g_ = p_ + (size_t)r0_ * %s + c_;\n", ld.s);
		/* (the producer: 4 at a time, or its 40 registers spill at D = 128, nvrtc 13.0) */
		kb_tile__line(L, L->ws_prod ? "\t#pragma unroll 4\n" : "\t#pragma unroll\n");
		kb_tile__line(L, "\tfor (int u_ = 0; u_ < %lld; u_++) {\n", WR * WC / 8 / T);
		kb_tile__line(L, "\t\tconst int r_ = r0_ + u_ * %lld;\n", T / (WC / 8));
		kb_tile__line(L, "\t\tasm volatile(\"cp.async.cg.shared.global [%%0], [%%1], 16, %%2;\\n\" :: \"r\"(s_ + "
			      "%s), \"l\"(KB_COPY_ZFILL ? g_ + (size_t)(u_ * %lld) * %s : r_ < n_ ? "
			      "p_ + (size_t)r_ * %s + c_ : %s), \"r\"(r_ < n_ ? 16 : 0));\n", dst, T / (WC / 8), ld.s, ld.s,
			      t->name);
		kb_tile__line(L, "\t}\n");
	} else {
		kb_tile__line(L, "\tfor (int q_ = %s; q_ < %lld; q_ += %d) {\n", tid, WR * WC / 8, T);
		kb_tile__line(L, "\t\tconst int r_ = q_ / %lld, c_ = q_ %% %lld * 8;\n", WC / 8, WC / 8);
		kb_tile__line(L, "\t\tconst bool in_ = r_ < rows_ && c_ < cols_;\n");
		kb_tile__line(L, "\t\tasm volatile(\"cp.async.cg.shared.global [%%0], [%%1], 16, %%2;\\n\" :: \"r\"(s_ + "
			      "%s), \"l\"(in_ ? p_ + (size_t)r_ * %s + c_ : %s), \"r\"(in_ ? 16 : "
			      "0));\n", dst, ld.s, t->name);
		kb_tile__line(L, "\t}\n");
	}
	/* out of line (a call) takes the loop's registers from it: attention.tile at
	 * D = 64, 134 to 123 (4 blocks an SM), two tiles at D = 128 168 B of
	 * spill loads to 48; but one tile at D = 128 168 to 172 (the call's own,
	 * 3 blocks to 2), so there the copy stays inline (nvrtc 13.0, sm_90) */
	if (L->rows_mt == 2 || WC <= 64) {
		kb_tile__line(L, "} else { /* out of line: the loop keeps no registers for it */\n");
		kb_tile__line(L, "\tkb_rows_copy_slow<%lld, %lld, %d%s%s>(b_, p_, rows_, cols_, %s);\n", WR, WC, T,
			      sw || *t0 ? ", true" : "", t0, ld.s);
	} else {
		kb_tile__line(L, "} else {\n");
		kb_tile__line(L, "\tfor (int q_ = %s; q_ < %lld; q_ += %d) {\n", tid, WR * WC, T);
		kb_tile__line(L, "\t\tconst int r_ = q_ / %lld, c_ = q_ %% %lld;\n", WC, WC);
		kb_tile__line(L, "\t\tb_[%s] = r_ < rows_ && c_ < cols_ ? p_[(size_t)r_ * %s + c_] : "
			      "%s(0.0f);\n", el, ld.s, t->dtype == KB_TILE_F16 ? "__float2half_rn" : "__float2bfloat16_rn");
		kb_tile__line(L, "\t}\n");
	}
	kb_tile__line(L, "}\n");
	kb_tile__block_close(L, 1);
out:
	kb_buf_free(&base);
	kb_buf_free(&rows);
	kb_buf_free(&cols);
	kb_buf_free(&ld);
}

/* The copies of the loop's dots pf[i0 .. i1 - 1] (lower_rows.c), into the
 * buffers of parity (C text). */
void kb_tile__rows_pf_issue(kb_tile__lw *L, const char *parity, int i0, int i1)
{
	for (int i = i0; i < i1; i++) {
		const kb_tile__expr *a = L->pf[i]->args[0], *b = L->pf[i]->args[1];
		const kb_tile__expr *w = b->kind == KB_TE_CALL && !strcmp(b->name, "trans") ? b->args[0] : b;
		char *off = kb_xasprintf("%lld + (%s) * %lld", (long long)L->pf_off[i], parity,
					 (long long)L->pf_bytes[i]);
		kb_tile__rows_copy_issue(L, w, off, a->type.dtype == KB_TILE_F16 ? "__half" : "__nv_bfloat16",
			   L->rows_wg);
		free(off);
	}
}
