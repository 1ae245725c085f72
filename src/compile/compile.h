/*
 * compile.h - the kernel file, from text to cubin: the //! spec, kernel
 * discovery (tree-sitter for CUDA, a small parser for PTX), NVRTC and
 * nvJitLink, resource usage, the occupancy calculator, SASS, and the
 * content-addressed compile cache.  No GPU is needed for any of it.
 *
 * Data flow (style rule 8): kb_source -> kb_spec + kb_kernel[] -> kb_build.
 * Sections follow the .c file that defines each part.
 */
#ifndef KB_COMPILE_H
#define KB_COMPILE_H

#include "../core/kb.h"

#include <jansson.h>

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

/* ===== spec.c, spec_lex.c, spec_expr.c, spec_tensor.c, spec_check.c ===== */

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

/* `//! tensormap NAME : TENSOR box=(E, ...) [swizzle=none|32|64|128]`: a
 * TMA descriptor (CUtensorMap) of TENSOR's buffer that the runner encodes
 * and passes as the kernel's `const __grid_constant__ CUtensorMap NAME`;
 * the box is a tile of the tensor, in its dims' order (outermost first). */
typedef struct {
	char *name;
	char *tensor;
	kb_loc tensor_loc;
	kb_expr *box[KB_MAX_RANK];
	int nbox;
	int swizzle;        /* bytes: 0 (none), 32, 64 or 128 */
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

/* ===== discover.c (CUDA via tree-sitter) and ptx.c ===== */

typedef struct {
	char *name;
	char *type;         /* the type as written, e.g. "const float *__restrict__" */
	char *elem;         /* pointee (pointers) or the type (scalars): "float", "__half", "T" */
	bool is_pointer;
	bool is_const;      /* const pointee */
	bool is_restrict;
	kb_loc loc;
} kb_param;

typedef struct {
	char *name;           /* as written */
	bool extern_c;
	bool is_template;
	char *template_params; /* "typename T, int BLOCK", or NULL */
	kb_param *params;
	int nparams;
	int line;             /* of the declaration */
	int launch_bounds;    /* __launch_bounds__ first value, 0 if none */
} kb_kernel;

typedef struct {
	kb_kernel *v;
	int n, cap;
} kb_kernels;

/* Finds every __global__ function definition of a .cu source and appends
 * them to out (zero it first), in file order. Returns 0, KB_EINVAL, or
 * KB_EUNSUP (the grammar failed to load) with err filled.  Syntax errors are
 * the compiler's to report: discovery reports what it can parse. */
int kb_compile_discover_cuda(const kb_source *src, kb_kernels *out, kb_err *err);
/* Finds every .entry of a PTX source with its .param list and appends them to
 * out.  Problems go to diags (file:line:col); returns 0, KB_ECOMPILE when it
 * added errors (out keeps what was found), or KB_EINVAL. */
int kb_compile_discover_ptx(const kb_source *src, kb_kernels *out, kb_diags *diags,
			    kb_err *err);
/* Frees every kernel and leaves k empty ({0}); NULL is fine. */
void kb_compile_kernels_free(kb_kernels *k);
/* Maps a C type name to a dtype (float->f32, __half->f16, __nv_bfloat16->bf16,
 * int->i32 ...). Returns 0 or KB_ENOTFOUND (templates, structs). */
int kb_compile_ctype_dtype(const char *ctype, kb_dtype *out);

/* ===== bind.c ===== */

/* Checks the spec against the kernels: the kernel exists, every parameter is
 * bound by name (pointer -> tensor, scalar -> arg), dtypes agree, the
 * reference's shapes agree.  Adds diags; returns 0 or KB_ESPEC.  On success
 * *chosen is the kernel the spec runs. */
int kb_compile_bind(const kb_spec *spec, const kb_kernels *kernels, const kb_source *src,
		    const kb_kernel **chosen, kb_diags *diags);

/* ===== resources.c ===== */

typedef struct {
	char *kernel;         /* mangled name as in the cubin */
	int regs;
	int smem_static;      /* bytes, as ptxas reports (without the 1 KiB reservation) */
	int local_bytes;      /* stack frame per thread */
	int spill_stores, spill_loads;
	int barriers;
	int max_threads;      /* from __launch_bounds__/.maxntid, else the arch limit */
	int cmem0;            /* param/driver constant bank bytes, -1 unknown */
	int maxnreg_dec;      /* setmaxnreg.dec in the PTX: the registers warps that give */
	int maxnreg_inc;      /* some back keep (producers), and those that take more get
			       * (consumers) in a warp-specialized kernel; 0 when none */
} kb_resources;

/* Parses the ptxas "-v" report found in NVRTC and nvJitLink logs.
 * Fills one kb_resources per function seen; returns how many. Fields the log
 * does not give are -1 (cmem0, spills from a summary-only log). */
int kb_compile_parse_ptxas_log(const char *log, kb_resources **out);
/* The setmaxnreg counts of kernel sym's PTX body (.entry sym): the lowest
 * .dec and the highest .inc into r (0 where there is none). */
void kb_compile_ptx_setmaxnreg(const char *ptx, const char *sym, kb_resources *r);
/* Frees n entries from kb_compile_parse_ptxas_log/kb_compile_cubin_resources. */
void kb_compile_resources_free(kb_resources *v, int n);

/* ===== occupancy.c ===== */

typedef enum {
	KB_LIMIT_NONE = 0, KB_LIMIT_WARPS, KB_LIMIT_REGS, KB_LIMIT_SMEM, KB_LIMIT_BLOCKS,
	KB_LIMIT_BARRIERS, KB_LIMIT_INVALID /* the launch cannot run at all */
} kb_limit;

const char *kb_limit_name(kb_limit l);

/* Per-architecture limits of one SM. */
typedef struct {
	int sm;                   /* 80, 86, 89, 90, 100, 120 ... */
	const char *name;         /* "sm_90" */
	int max_warps_per_sm;
	int max_blocks_per_sm;
	int max_threads_per_block;
	int regs_per_sm;
	int regs_per_block;
	int max_regs_per_thread;
	int reg_alloc_unit;       /* registers per warp are rounded up to this */
	int smem_per_sm;          /* bytes at the largest carveout */
	int smem_per_block_optin;
	int smem_reserved_per_block;
	int smem_alloc_unit;
	int sm_count;             /* of the reference part (e.g. H100 SXM), 0 unknown */
	const char *ref_part;     /* the part sm_count is from, e.g. "H100 SXM5" */
	int reg_subpartitions;    /* the register file is split over this many quadrants */
	int barriers_per_sm;      /* named-barrier pool per SM; 0: limit not modelled */
	int ncarveouts;           /* shared memory carveouts the SM can be set to ... */
	int carveout_kib[12];     /* ... ascending, in KiB; the last is smem_per_sm */
} kb_arch_limits;

/* Returns the limits for sm (e.g. 90), or NULL when unknown. */
const kb_arch_limits *kb_compile_arch_limits(int sm);
/* Parses "sm_90", "sm_90a", "sm_100f", "compute_90", "90" into 90. Returns 0 or KB_EINVAL. */
int kb_compile_arch_parse(const char *arch, int *sm);

typedef struct {
	int block_threads;
	int dyn_smem;
	int blocks_per_sm;        /* active blocks per SM */
	int warps_per_sm;
	int max_warps_per_sm;
	double occupancy;         /* warps_per_sm / max_warps_per_sm, 0..1 */
	kb_limit limiter;         /* the binding limit (lowest block count) */
	int limit_blocks[KB_LIMIT_INVALID + 1]; /* blocks allowed by each limit; -1 n/a */
	int regs_per_block;       /* allocated */
	int smem_per_block;       /* allocated, incl. reservation */
	char why[256];            /* one sentence: what binds and what would raise it */
} kb_occupancy;

/* Theoretical occupancy of one kernel launch. Returns 0, or KB_EINVAL when
 * the launch cannot run (limiter KB_LIMIT_INVALID and why say which). */
int kb_compile_occupancy(const kb_arch_limits *arch, const kb_resources *res,
			 int block_threads, int dyn_smem, kb_occupancy *out);

/* ===== sass.c ===== */

typedef struct {
	uint32_t addr;        /* function-relative byte offset */
	char *pred;           /* "@P0", "@!PT" or NULL */
	char *opcode;         /* with modifiers: "LDG.E.128.CONSTANT" */
	char *operands;       /* as printed, without the trailing ';' */
	char *file;           /* source file from line info, or NULL */
	int line;             /* 0 when none; the innermost frame when inlined */
	char *call_file;      /* nvdisasm -gi: the outermost call site of an */
	int call_line;        /* inlined frame (the kernel's own line), or NULL/0 */
} kb_sass_insn;

typedef struct {
	char *name;           /* mangled function name */
	kb_sass_insn *v;
	int n, cap;
} kb_sass_func;

typedef struct {
	char *key;            /* e.g. "LDG.E.128", "FFMA", "MUFU.EX2" */
	int count;
} kb_mix;

typedef struct {
	bool available;       /* false when no disassembler exists */
	char *tool;           /* "nvdisasm" or "cuobjdump" */
	char *unavailable_why;
	kb_sass_func *funcs;
	int nfuncs;
	char *text;           /* the raw listing */
} kb_sass;

/* The line of the source file src_path (compared by base name) that an
 * instruction belongs to: its own line when its line info names that
 * file, else its call site's when it was inlined from another file (a
 * header, a .tile file's prologue helpers) into that one, else 0. */
int kb_compile_sass_src_line(const kb_sass_insn *in, const char *src_path);

/* How many instructions of f come before its end padding (the self-branch
 * and NOPs the assembler appends). */
int kb_compile_sass_body_len(const kb_sass_func *f);
/* Disassembles a cubin with nvdisasm -c -g (or cuobjdump -sass), found as
 * $KBENCH_NVDISASM, in the CUDA toolkit kbench uses, or on PATH.  Without
 * one, returns 0 with sass->available = false and a one-line reason
 * (kb_compile_sass_tool has the whole advice). */
int kb_compile_sass(const void *cubin, size_t size, kb_sass *sass, kb_err *err);
/* The disassembler kb_compile_sass would run: 0 with *text "PATH (nvdisasm)",
 * or KB_ENOTFOUND with *text the whole advice (every folder looked in, how
 * to point kbench at one), which a missing one's one-line reason refers to.
 * *text is a new string. */
int kb_compile_sass_tool(char **text);
/* Parses nvdisasm -c -g/-gi text (or cuobjdump -sass text) into functions;
 * overwrites sass (funcs, text, available = true).  Junk never fails: it is
 * skipped.  Returns 0, or KB_EINVAL for NULL arguments. */
int kb_compile_sass_parse(const char *text, kb_sass *sass);
/* The instruction mix of one function, most frequent first (ties by key),
 * without the end padding.  Returns the number of entries and sets *out
 * (NULL when 0), or KB_EINVAL. */
int kb_compile_sass_mix(const kb_sass_func *f, kb_mix **out);
/* Frees what kb_compile_sass_mix returned. */
void kb_compile_sass_mix_free(kb_mix *mix, int n);
void kb_compile_sass_free(kb_sass *sass);

/* ===== cubin.c ===== */

/* Resources from a cubin's ELF (.nv.info attributes), for when no compiler
 * log is at hand (cache hits of old entries, PTX from elsewhere). Fills one
 * entry per kernel (spills -1: the ELF has none); returns how many, or
 * KB_EINVAL with err filled for a truncated or malformed file. */
int kb_compile_cubin_resources(const void *cubin, size_t size, kb_resources **out,
			       kb_err *err);
/* The SM number in a cubin's e_flags (e.g. 90), or a negative KB_E*. */
int kb_compile_cubin_arch(const void *cubin, size_t size);

/* ===== build.c (NVRTC, nvJitLink, cache) ===== */

typedef struct {
	char *arch;           /* "sm_90" */
	char **defines;       /* "K=V" */
	int ndefines;
	const char **options; /* compiler options from the command line, after the spec's */
	int noptions;
	bool no_cache;
	bool want_sass;
	bool lowered;         /* the source was generated (a .tile file) with the defines
			       * and tune values in it: the compiler gets no -D */
	json_t *prebuilt;     /* a build made by the client (kb_compile_build_export):
			       * used instead of the cache and the compiler */
} kb_build_opts;

typedef struct {
	char *name;           /* as written */
	char *lowered;        /* the symbol in the cubin (mangled for C++) */
	kb_resources res;
	bool has_occupancy;
	kb_occupancy occ;
	kb_mix *mix;
	int nmix;
} kb_build_kernel;

typedef struct {
	char *arch;
	int sm;
	char *key;            /* cache key (hex sha256) */
	char **options;       /* the user's compiler options as passed: the spec's, then --option */
	int noptions;
	bool cache_hit;
	bool cache_damaged;   /* the cache held a damaged entry: compiled again, replaced */
	bool prebuilt;        /* the cubin came with the request (a remote runner's) */
	bool ok;              /* a cubin was produced */
	char *ptx; size_t ptx_len;
	void *cubin; size_t cubin_len;
	char *log;            /* compiler log, with the user's file name */
	kb_diags diags;       /* compiler errors/warnings mapped to the user's file */
	kb_build_kernel *kernels;
	int nkernels;
	kb_sass sass;
	char *compiler;       /* "nvrtc 13.0" / "nvjitlink 13.0" */
	double ms_parse, ms_nvrtc, ms_nvjitlink, ms_sass, ms_total;
} kb_build;

/* Compiles src (CUDA via NVRTC, PTX via nvJitLink) for opts->arch with the
 * spec's kernel(s).  Returns 0 (build->ok), KB_ECOMPILE with diags, or another
 * KB_E* with err filled when a library could not be used. */
int kb_compile_build(const kb_source *src, const kb_spec *spec, const kb_kernels *kernels,
		     const kb_build_opts *opts, kb_build *build, kb_err *err);
void kb_compile_build_free(kb_build *build);
/* The SASS of the build whose cache key and cubin are given (a build made
 * without want_sass): from the compile cache, else disassembled now and
 * cached.  Touches nothing of the build, so it can run on a thread of its
 * own while the build is used.  Returns 0 (sass->available false with a
 * reason when there is no disassembler) or a KB_E* (sass says why). */
int kb_compile_build_sass(const char *key, const void *cubin, size_t cubin_len, kb_sass *sass);
/* Moves sass into b (replacing what it had) and fills its kernels'
 * instruction mixes; ms is what the disassembly took. */
void kb_compile_build_take_sass(kb_build *b, kb_sass *sass, double ms);
/* What a remote runner needs of b instead of compiling (docs/remote.md):
 * {cubin (base64), ptx, log, compiler, lowered}, read back from the compile
 * cache entry b made; NULL when there is none.  A new reference. */
json_t *kb_compile_build_export(const kb_build *b);
/* How many NVRTC compilations this process ran (a cache hit runs none). */
int kb_compile_nvrtc_invocations(void);
/* The default arch: $KBENCH_ARCH, else the present GPU's when a driver
 * answers, else "sm_90". A new string. */
char *kb_compile_default_arch(void);
/* The hash (hex) of what identifies the installed driver and GPUs: the
 * kernel driver's version string, the GPUs' PCI addresses and models, and
 * CUDA_VISIBLE_DEVICES; NULL when no driver is loaded.  It keys the caches
 * of answers only the driver can give (the default arch, CUPTI's counter
 * availability).  A new string. */
char *kb_compile_driver_key(void);

/* ===== unit.c ===== */

/* A value for a //! arg given from outside the file (--arg, sweeps). */
typedef struct {
	const char *name;
	kb_value value;
} kb_arg_override;

typedef struct {
	const char *arch;     /* --arch: the target; NULL: the spec's `//! arch` line, else */
	const char *default_arch; /* this (the GPU's), else kb_compile_default_arch() */
	const char **defines; /* "K=V" */
	int ndefines;
	const char **options; /* --option: compiler options after the spec's */
	int noptions;
	const kb_arg_override *args; /* applied before binding and occupancy */
	int nargs;
	bool no_cache;
	bool want_sass;
	json_t *prebuilt;     /* kb_build_opts.prebuilt */
	bool skip_unsupported; /* a shape the `//! require` lines rule out is not
				* compiled (a runner: it will not run either) */
	int64_t sm_count;     /* the GPU's, `sm_count` in require lines; 0: unknown */
	bool check_only;      /* source, spec, discovery and binding: nothing compiled */
} kb_compile_unit_opts;

/* Everything the compile layer learnt about one kernel file. */
typedef struct {
	kb_source src;
	kb_source gen;        /* a .tile file: the CUDA C it lowers to (what is compiled) */
	double ms_tile;       /* lowering it */
	kb_spec spec;
	bool has_spec;        /* the file has //! lines */
	kb_kernels kernels;
	const kb_kernel *chosen;
	kb_build build;
	kb_diags diags;       /* spec, binding and compiler diagnostics, sorted */
	int status;           /* 0, KB_ESPEC or KB_ECOMPILE */
	char *unsupported;    /* why a `//! require` line rules these values out (a
			       * warning in diags too), or NULL */
	kb_loc unsupported_loc; /* that line's condition */
} kb_compile_unit;

/* Loads path (or, when text is non-NULL, takes text as its contents), parses
 * the spec, discovers kernels, binds, checks the require lines (a false one
 * is a warning and u->unsupported, and with skip_unsupported nothing is
 * compiled: u->build has only its arch), compiles (not with check_only, nor
 * when an --option is refused).  Returns 0 when the file
 * compiled and its spec is sound; KB_ESPEC / KB_ECOMPILE when diags hold
 * errors (the unit is still filled as far as it got); another KB_E* with err
 * filled when the file or a library could not be used.  Always free u. */
int kb_compile_unit_run(const char *path, const char *text, const kb_compile_unit_opts *opts,
			kb_compile_unit *u, kb_err *err);
void kb_compile_unit_free(kb_compile_unit *u);
/* The unit's compile facts for Results and notes (no SASS/PTX/log; the
 * chosen kernel under "kernel"). A new reference. */
json_t *kb_compile_unit_summary_json(const kb_compile_unit *u);

/* ===== json.c ===== */

/* The structured form of a build (what `kbench compile --json` prints and the
 * runner's Result embeds): arch, compiler, cache, options, timings, diagnostics, per
 * kernel resources, occupancy and instruction mix, SASS.  A new reference. */
json_t *kb_compile_build_json(const kb_build *b, bool with_sass, bool with_ptx);
json_t *kb_compile_diags_json(const kb_diags *d);
json_t *kb_compile_occupancy_json(const kb_occupancy *o);

#endif
