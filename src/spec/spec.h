/*
 * spec.h - the kernel file and the //! spec language: a file's text and
 * kind (source.c), and the comment lines that say how to run it
 * (architecture.md §3): their tokens (spec_lex.c), expressions over args
 * (spec_expr.c), the directives (spec.c; in/out/tensormap and the dtypes
 * in spec_tensor.c, Python references in spec_pyref.c, require lines in
 * spec_require.c), the checks that need the whole spec (spec_check.c), and
 * the compiler options a user writes (options.c).  It knows no kernel and
 * runs nothing: src/compile/ binds a spec to the file's kernels and
 * compiles them; the runner fills, launches and checks.  It uses only
 * src/core/.
 *
 * The public names keep the kb_compile_ prefix they had while these files
 * were part of src/compile/ (issue 26 moved the files, not their callers).
 * Sections follow the .c file that defines each part.
 */
#ifndef KB_SPEC_H
#define KB_SPEC_H

#include "../core/kb.h"

/* ===== source.c ===== */

typedef enum { KB_SRC_CUDA, KB_SRC_PTX, KB_SRC_TILE } kb_src_kind;

/* A kernel file as the user wrote it. */
typedef struct {
	char *path;      /* as given on the command line (used in diagnostics) */
	char *text;      /* whole file, NUL-terminated */
	size_t len;
	kb_src_kind kind;
} kb_source;

/* Reads path; the kind comes from the extension (.cu/.cuh, .ptx, .tile).
 * Returns 0, KB_ENOTFOUND/KB_EIO, or KB_EINVAL for an unknown extension. */
int kb_compile_source_load(kb_source *src, const char *path, kb_err *err);
/* Makes a source from text already in memory (tests, editors). */
void kb_compile_source_init(kb_source *src, const char *path, const char *text,
			    kb_src_kind kind);
/* text when the caller holds it (an editor's buffer; the kind is
 * kb_compile_source_kind's), else path read from disk. */
int kb_compile_source_open(kb_source *src, const char *path, const char *text, kb_err *err);
/* What an editor's buffer of path compiles as: KB_SRC_PTX for .ptx,
 * KB_SRC_TILE for .tile, else KB_SRC_CUDA. */
kb_src_kind kb_compile_source_kind(const char *path);
void kb_compile_source_free(kb_source *src);

/* ===== spec.c, spec_lex.c, spec_expr.c, spec_tensor.c, spec_check.c,
 * spec_require.c, spec_pyref.c ===== */

/* spec_tensor.c: dtypes */

typedef enum {
	KB_DT_F64, KB_DT_F32, KB_DT_F16, KB_DT_BF16,
	KB_DT_I64, KB_DT_I32, KB_DT_I16, KB_DT_I8, KB_DT_U8,
	KB_DT_COUNT
} kb_dtype;

const char *kb_dtype_name(kb_dtype t);
int kb_dtype_size(kb_dtype t);
/* Returns 0 and sets *out, or KB_ENOTFOUND. */
int kb_dtype_parse(const char *name, size_t len, kb_dtype *out);
/* Maps a C type name to a dtype (float->f32, __half->f16, __nv_bfloat16->bf16,
 * int->i32 ...). Returns 0 or KB_ENOTFOUND (templates, structs). */
int kb_compile_ctype_dtype(const char *ctype, kb_dtype *out);

/* Expressions over args: + - * / % unary -, cdiv(a,b), min(a,b), max(a,b),
 * parentheses, integer and floating literals, names. */
typedef enum { KB_EX_INT, KB_EX_FLOAT, KB_EX_NAME, KB_EX_BIN, KB_EX_NEG, KB_EX_CALL } kb_expr_kind;

typedef struct kb_expr {
	kb_expr_kind kind;
	kb_loc loc;
	int len;              /* columns the expression spans, for carets */
	int64_t ival;         /* KB_EX_INT */
	double fval;          /* KB_EX_FLOAT */
	char *name;           /* KB_EX_NAME, or the function of KB_EX_CALL */
	char op;              /* KB_EX_BIN: one of + - * / % */
	struct kb_expr *a, *b; /* operands (a only for NEG) */
} kb_expr;

/* A value of an arg: integer unless a float literal took part. */
typedef struct {
	bool is_float;
	int64_t i;
	double f;
} kb_value;

#define KB_MAX_RANK 8

typedef enum {
	KB_INIT_NONE, KB_INIT_RANDN, KB_INIT_RAND, KB_INIT_ARANGE, KB_INIT_ONES,
	KB_INIT_ZEROS, KB_INIT_FILE
} kb_init_kind;

typedef struct {
	kb_init_kind kind;
	double lo, hi;      /* rand(lo, hi); randn(mean, std) */
	bool has_seed;
	uint64_t seed;
	char *path;         /* file(path): .npy or raw binary */
} kb_init;

typedef struct {
	char *name;
	kb_value value;
	kb_expr *expr;
	kb_loc loc;
} kb_spec_arg;

typedef struct {
	char *name;
	bool is_out;
	kb_dtype dtype;
	int rank;
	kb_expr *dims[KB_MAX_RANK];
	kb_init init;       /* inputs only */
	kb_loc loc;
} kb_spec_tensor;

/* `//! tensormap NAME : TENSOR box=(E, ...) [swizzle=none|32|64|128]
 * [unaligned=zero]`: a TMA descriptor (CUtensorMap) of TENSOR's buffer that
 * the runner encodes and passes as the kernel's `const __grid_constant__
 * CUtensorMap NAME`; the box is a tile of the tensor, in its dims' order
 * (outermost first).  With unaligned=zero a tensor TMA cannot describe (a
 * row that is no multiple of 16 bytes) is passed as 128 zero bytes, not
 * refused: the kernel copies it another way (the tile DSL's wgmma). */
typedef struct {
	char *name;
	char *tensor;
	kb_loc tensor_loc;
	kb_expr *box[KB_MAX_RANK];
	int nbox;
	int swizzle;        /* bytes: 0 (none), 32, 64 or 128 */
	bool zero_unaligned; /* unaligned=zero: zeros where TMA cannot describe it */
	kb_loc loc;
} kb_spec_tmap;

typedef struct {
	bool present;
	int grid_n, block_n;
	kb_expr *grid[3], *block[3];
	kb_expr *smem;      /* dynamic shared memory bytes; NULL = 0 */
	kb_loc loc;
} kb_spec_launch;

typedef struct {
	char *key;          /* NULL for a positional argument */
	char *text;         /* the value as written: a tensor name, number, true/false */
	kb_loc loc;
} kb_ref_arg;

/* `//! ref numpy|torch [device=cpu|cuda] [timeout=S] CALL -> OUT, ...`: a
 * Python reference (profile/pyref.c runs it; docs/python-refs.md).  CALL is
 * FILE.py:FN (FN called with the inputs and args its parameters name),
 * FILE.py:EXPR (EXPR in that file's names), or an expression. */
typedef enum { KB_PYREF_NONE, KB_PYREF_NUMPY, KB_PYREF_TORCH } kb_pyref_lang;

typedef struct {
	kb_pyref_lang lang;
	char *file;         /* as written, from the kernel file's folder; NULL: none */
	char *fn;           /* FILE.py:FN's function, or NULL */
	char *expr;         /* the expression (after FILE.py: when there is a file), or NULL */
	char *text;         /* CALL as written */
	bool cuda;          /* device=cuda */
	double timeout_s;   /* timeout=S; 0: the default */
	kb_loc call_loc;    /* where CALL starts */
} kb_spec_pyref;

typedef struct {
	bool present;
	bool is_kernel;     /* ref kernel NAME */
	char *fn;           /* built-in reference name, or the reference kernel */
	kb_ref_arg *args;
	int nargs;
	char **outs;        /* tensor names after -> */
	int nouts;
	kb_loc loc;
	kb_spec_pyref py;   /* py.lang != KB_PYREF_NONE: a Python reference (fn NULL) */
} kb_spec_ref;

typedef struct {
	char *name;
	kb_expr **values;   /* sweep: expressions */
	char **texts;       /* tune: -D values as written */
	int nvalues;
	kb_loc loc;
	/* tune: the value expressions see under its name (launch, bytes ...):
	 * the first listed, or the -D value in effect; a number or not */
	kb_value value;
	bool has_value;
	char *value_text;
} kb_spec_list;

/* `//! require EXPR CMP EXPR` (CMP one of <= < >= > == !=): a shape the
 * kernel supports, over args, tune values and sm_count.  A run whose
 * values make one false is UNSUPPORTED: pruned before inputs exist, like an
 * autotuner's config that does not apply, never reported INCORRECT. */
typedef enum { KB_CMP_LE, KB_CMP_LT, KB_CMP_GE, KB_CMP_GT, KB_CMP_EQ, KB_CMP_NE } kb_cmp;

typedef struct {
	kb_expr *lhs, *rhs;
	kb_cmp cmp;
	char *lhs_text, *rhs_text; /* each side as written, for messages */
	kb_loc loc;         /* the condition's first column */
	int len;            /* columns the condition spans, for carets */
} kb_spec_require;

/* A compiler option the user adds: one word of a `//! options` line, or an
 * --option from the command line (loc.line 0, no place in the file). */
typedef struct {
	char *text;         /* as written: "-use_fast_math", "-maxrregcount=64" */
	kb_loc loc;
	int len;            /* columns it spans, for carets */
} kb_spec_option;

typedef struct {
	char *kernel;       /* NULL: the only kernel in the file */
	kb_loc kernel_loc;
	kb_spec_arg *args;       int nargs;
	kb_spec_tensor *tensors; int ntensors;
	kb_spec_tmap *tmaps;     int ntmaps;     /* `//! tensormap` lines */
	kb_spec_launch launch;
	kb_spec_ref ref;
	bool has_tol;
	double rtol, atol;
	kb_expr *bytes, *flops;  /* NULL when absent */
	kb_spec_list *sweeps;    int nsweeps;
	kb_spec_list *tunes;     int ntunes;
	kb_spec_option *options; int noptions; /* every `//! options` line, in order */
	kb_spec_require *requires; int nrequires; /* every `//! require` line, in order */
	char *arch;              /* `//! arch sm_90a`: the target unless --arch says another */
	int64_t sm_count;        /* the GPU's SMs, `sm_count` in launch, bytes, flops and box
				  * expressions (a persistent kernel's grid); 0: not known yet,
				  * and 132 (an H100's, an H200's) stands in */
	kb_loc arch_loc;
	int nlines;              /* //! lines seen */
} kb_spec;

/* Parses every //! line of src into spec.  All problems go to diags (file:line:col);
 * returns 0, or KB_ESPEC when diags has errors. */
int kb_compile_spec_parse(const kb_source *src, kb_spec *spec, kb_diags *diags);
/* The `//! tensormap` line named name, or NULL. */
const kb_spec_tmap *kb_compile_spec_tmap(const kb_spec *spec, const char *name);
/* The `//! in` or `//! out` tensor named name, or NULL. */
const kb_spec_tensor *kb_compile_spec_tensor(const kb_spec *spec, const char *name);
/* The `//! arg` named name, or NULL. */
const kb_spec_arg *kb_compile_spec_arg(const kb_spec *spec, const char *name);
/* Parses "sm_90", "sm_90a", "sm_100f", "compute_90", "90" into 90 (what
 * `//! arch` and --arch take). Returns 0 or KB_EINVAL. */
int kb_compile_arch_parse(const char *arch, int *sm);
/* spec_expr.c: evaluation.
 * Evaluates expr with the spec's current args (kb_compile_spec_set_arg changes them).
 * Returns 0, or KB_ESPEC with a diag (diags may be NULL: silent) on an
 * undefined name, division by zero, integer overflow. */
int kb_compile_spec_eval(const kb_spec *spec, const kb_expr *expr, kb_value *out,
			 const kb_source *src, kb_diags *diags);
/* Launch geometry evaluated; dims default to 1. */
typedef struct { int64_t grid[3], block[3], smem; } kb_launch_dims;
int kb_compile_spec_launch_dims(const kb_spec *spec, const kb_source *src,
				kb_launch_dims *out, kb_diags *diags);
/* Sets arg `name` to value (sweeps, --arg). Returns 0 or KB_ENOTFOUND. */
/* Sets the value of tune `name` that expressions see, from a -D value
 * ("256"); a value that is not a number leaves the name unusable in
 * expressions.  Returns 0, or KB_ENOTFOUND when the spec tunes no such name. */
int kb_compile_spec_set_tune(kb_spec *spec, const char *name, const char *text);
int kb_compile_spec_set_arg(kb_spec *spec, const char *name, kb_value value);
/* spec_require.c: whether the spec's current args and tune values are a
 * shape its `//! require` lines allow.  Returns 0 when every one holds;
 * KB_EUNSUP when one does not, with *why (a new string) naming the first
 * false one and its values ("requires N <= CLUSTER * 16384: N = 131072,
 * CLUSTER * 16384 = 65536 (CLUSTER = 4)") and *which its index (which may
 * be NULL); KB_ESPEC with a diag (diags may be NULL) when one cannot be
 * evaluated (division by zero ...). */
int kb_compile_spec_requires(const kb_spec *spec, const kb_source *src, char **why, int *which,
			     kb_diags *diags);
/* The comparison's spelling: "<=", "<", ">=", ">", "==", "!=". */
const char *kb_compile_cmp_name(kb_cmp cmp);
void kb_compile_spec_free(kb_spec *spec);

/* ===== options.c: the compiler options a user adds (`//! options`, --option) ===== */

/* Checks one option word for a .cu (NVRTC) or .ptx (nvJitLink) file:
 * 0, or -1 with *why (a new string) when kbench refuses it or a known
 * option's value has the wrong shape.  Unknown words pass (the compiler
 * judges them); no compiler is called. */
int kb_compile_option_check(kb_src_kind kind, const char *word, char **why);
/* Whether word is a spelling of the option whose first spelling is name
 * ("--std=c++20" is "-std"). */
bool kb_compile_option_is(kb_src_kind kind, const char *word, const char *name);
/* Places the compiler's complaints about options in log at the user
 * option each is about (a //! options word, or an --option by name); the
 * rest stay placeless. */
void kb_compile_options_log_diags(kb_src_kind kind, const char *log, const kb_spec_option *opts,
				  int n, const kb_source *src, kb_diags *diags);

#endif
