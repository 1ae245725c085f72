/*
 * tilegen.h - the tile compiler's pipeline, as the rest of kbench calls it:
 * a .tile file's text in, its kernels and the CUDA C they lower to out
 * (src/tile reads and checks the language; this folder lowers it and runs
 * the whole pipeline).
 */
#ifndef KB_TILEGEN_H
#define KB_TILEGEN_H

#include "../tile/tile.h"

/* ===== pipeline.c: the whole pipeline ===== */

/* The define that keeps wgmma's operand copies on cp.async (the lowering
 * before TMA): `--define KB_TMA=0`. */
#define KB_TILE_NO_TMA "KB_TMA=0"
/* The define that keeps the row layout's dots (attention) on mma.sync on
 * sm_90a: `--define KB_WGMMA=0`. */
#define KB_TILE_NO_WGMMA "KB_WGMMA=0"
/* The define that keeps each wgmma dot of the row layout waited for where
 * it is (no S of the next trip over this one's softmax): `--define
 * KB_WG_OVERLAP=0`. */
#define KB_TILE_NO_WG_OVERLAP "KB_WG_OVERLAP=0"
/* The define that keeps a row-layout wgmma loop at threads(256) without
 * its producer warpgroup (every thread copies, __syncthreads a trip):
 * `--define KB_WG_WS=0`. */
#define KB_TILE_NO_WG_WS "KB_WG_WS=0"
/* The defines that make a wgmma dot's epilogue store from registers, or
 * through shared memory by TMA, whatever its value (by default by TMA
 * unless the value calls a transcendental): `--define KB_WG_STORE=0`, `=1`. */
#define KB_TILE_NO_WG_STORE "KB_WG_STORE=0"
#define KB_TILE_WG_STORE "KB_WG_STORE=1"
/* ... by TMA with each pair's value worked out where it is written (not all
 * of them before the staging): `--define KB_WG_STORE=2`. */
#define KB_TILE_WG_STORE_INLINE "KB_WG_STORE=2"
/* ... by TMA with each [64][64] block's values worked out and packed before
 * the wait for its buffer, one block at a time (lower_wgepi.c): `=3`. */
#define KB_TILE_WG_STORE_CHUNK "KB_WG_STORE=3"
/* The define that runs a persistent wgmma kernel's producer and consumers
 * in one loop over the programs (the lowering before; ptxas then ignores
 * setmaxnreg): `--define KB_WG_ROLES=0`. */
#define KB_TILE_NO_WG_ROLES "KB_WG_ROLES=0"
/* The define that reads a [BN] row at a wgmma result's columns into
 * registers once after the loop (2 BN / 8 a thread, as mma.sync's), not
 * where the epilogue uses it: `--define KB_WG_COLS=1`. */
#define KB_TILE_WG_COLS "KB_WG_COLS=1"
/* The define that runs a persistent threads(128) wgmma dot as two consumer
 * warpgroups, each its own program, one's epilogue under the other's wgmma
 * (pingpong): `--define KB_WG_PINGPONG=1`. */
#define KB_TILE_WG_PINGPONG "KB_WG_PINGPONG=1"

typedef struct {
	kb_buf cuda;             /* the generated CUDA C (#line into the .tile file) */
	kb_tile_kernel *kernels; /* every kernel of the file, as the generated code has it */
	int nkernels;
	double ms;               /* lexing to lowering, milliseconds */
} kb_tile_out;

/* Compiles `.tile` source text (path names it in diagnostics and #line):
 * every error of the file goes to diags at its line and column (a caret
 * under it), all of them, not only the first.  Returns 0 with out filled,
 * or KB_ESPEC when diags has errors (out then holds what parsed: the
 * kernels, no CUDA). */
int kb_tile_compile(const char *path, const char *text, size_t len, const kb_tile_opts *o,
		    kb_tile_out *out, kb_diags *diags);
void kb_tile_out_free(kb_tile_out *o);
/* The generated CUDA as it is compiled: each line after a `#line N "path"`
 * directive gets its own copy of it, so every line of a statement's code is
 * line N to the compiler, its messages, SASS line info and PC sampling (the
 * readable form has one directive a statement, and the compiler would count
 * the lines after it as N+1, N+2, ... into the wrong .tile lines). */
void kb_tile_pin_lines(const char *cuda, const char *path, kb_buf *out);
/* Whether the line at s is a `#line N "..."` directive into the file path
 * (of the generated CUDA: a directive into another file, such as the
 * prologue's, is not); *n gets N. */
bool kb_tile_line_directive(const char *s, const char *path, long *n);

#endif
