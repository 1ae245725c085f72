/*
 * diff.h - comparing two variants three ways: source (a unified diff by
 * libgit2's own diff of buffers), SASS (normalised so addresses, encodings,
 * register numbers and branch targets do not drown the change) and
 * numbers (time, bandwidth, registers, occupancy, counters) with a verdict
 * that respects the two runs' spreads.
 */
#ifndef KB_DIFF_H
#define KB_DIFF_H

#include "../core/kb.h"
#include "../compile/compile.h"

/* ===== text.c ===== */

/* A unified diff of a -> b (labels name them in the ---/+++ lines), with
 * `context` lines of context. Appends to out; returns the number of changed
 * lines (added + removed), or a negative KB_E* with err. */
int kb_diff_text(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
		 const char *label_b, int context, kb_buf *out, kb_err *err);

/* ===== sass.c ===== */

/* One instruction as text with what varies between unrelated compiles
 * abstracted: no address or encoding, registers R12 -> R, UR4 -> UR,
 * P0 -> P, branch targets and label addresses -> L, uniform predicates.
 * Opcode and modifiers, immediates, memory-space and widths stay. */
void kb_diff_sass_normalize(const kb_sass_insn *in, kb_buf *out);
/* A unified diff of two functions' normalised SASS (padding NOPs dropped). */
int kb_diff_sass(const kb_sass_func *a, const kb_sass_func *b, const char *label_a,
		 const char *label_b, kb_buf *out, kb_err *err);

/* ===== numbers.c ===== */

/* Compares two Results (the JSON `kbench run --json` prints, or a variant's
 * note): Δ time %, Δ bandwidth, Δ registers, Δ occupancy, Δ shared/local
 * memory, and a verdict: "faster" / "slower" only beyond noise (the
 * difference must exceed both runs' spreads), else "same within noise";
 * "not comparable" when either is not correct or the GPUs differ.
 * Returns a new JSON object {rows: [{name, a, b, delta, delta_pct}],
 * verdict, why, and options: {a, b} when the compiler options differ}. */
json_t *kb_diff_numbers(json_t *a, json_t *b);
/* The table of kb_diff_numbers as text. */
void kb_diff_numbers_render(json_t *d, const char *label_a, const char *label_b, kb_buf *out);

#endif
