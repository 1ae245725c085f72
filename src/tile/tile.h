/*
 * tile.h - the tile DSL compiler: a `.tile` file (docs/tile.md) lowered to
 * CUDA C that carries #line directives into the `.tile` file.  No GPU and
 * no NVRTC here: the compile layer takes the CUDA from here on.  Sits
 * between compile and core (architecture §9).
 */
#ifndef KB_TILE_H
#define KB_TILE_H

#include "../core/kb.h"

/* ===== the kernels of a file (parse.c, check.c) ===== */

typedef enum {
	KB_TILE_F32, KB_TILE_F16, KB_TILE_BF16, KB_TILE_F64,
	KB_TILE_I32, KB_TILE_I64, KB_TILE_U8, KB_TILE_BOOL,
} kb_tile_dtype;

/* One parameter of a generated kernel, in the signature's order: the
 * tensors and scalars as written, then the sizes (dim names). */
typedef struct {
	char *name;
	kb_tile_dtype dtype;
	int rank;             /* 0: a scalar */
	char *dims[2];        /* a tensor's dims as written (size names or integers) */
	bool is_size;         /* an int made from a dim name */
	bool written;         /* a tensor the kernel stores to (the others are const) */
	int line, col;
} kb_tile_param;

typedef struct {
	char *name;
	int line, col;
	kb_tile_param *params;
	int nparams;
	char *grid[3];        /* grid(...) expressions as written; NULL past the last */
	int threads;          /* threads(N) */
	int64_t smem;         /* dynamic shared memory the generated kernel needs (dot operands) */
	char **consts;        /* "NAME=VALUE" of the top-level consts, overrides applied */
	int nconsts;
	bool persistent;      /* launched with min(sm_count, grid) blocks, each looping over programs */
	char *spec;           /* `//! ` lines the kernel's launch needs beside the file's spec
			       * (wgmma's TMA tensormaps), or NULL */
} kb_tile_kernel;

/* ===== tokenize.c: the words and numbers of the language, for
 * highlighters (which lex a row at a time and must agree with the
 * tokenizer on what a number or a keyword is) ===== */

typedef enum {
	KB_TILE_WORD_NAME,     /* anything else: a user's name */
	KB_TILE_WORD_KEYWORD,  /* kernel const for in if else, and range grid threads */
	KB_TILE_WORD_DTYPE,    /* f32 f16 bf16 f64 i32 i64 u8 (f32(x) ... are casts) */
	KB_TILE_WORD_BUILTIN,  /* load store pid arange zeros sum ... cdiv */
	KB_TILE_WORD_LITERAL,  /* true false inf */
} kb_tile_word;

/* What the n bytes at s (a name: a letter or '_', then letters, digits,
 * '_') are in the language. */
kb_tile_word kb_tile_word_kind(const char *s, size_t n);
/* The end of the number token at p (as the tokenizer reads it: 12, 0x1F,
 * 1.5, .5, 1e-5, with letters glued on), or p when none starts there. */
const char *kb_tile_number_end(const char *p, const char *end);

/* ===== check.c: what a file is checked (and lowered) under ===== */

typedef struct {
	const char *const *defines; /* "NAME=VALUE": overrides `const NAME` (tune) */
	int ndefines;
	const char *arch;           /* the target ("sm_90a": a dot may lower to wgmma); NULL: none */
} kb_tile_opts;

/* ===== tree.c: the names of the dtypes ===== */

/* The CUDA name of a dtype ("float", "__nv_bfloat16", ...). */
const char *kb_tile_ctype(kb_tile_dtype t);
/* The DSL name of a dtype ("f32", "bf16", ...). */
const char *kb_tile_dtype_name(kb_tile_dtype t);

#endif
