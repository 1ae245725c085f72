/*
 * compile.h - the kernel file, from text to cubin: kernel discovery
 * (tree-sitter for CUDA, a small parser for PTX), binding the //! spec to
 * the kernel, NVRTC and nvJitLink, resource usage, the occupancy
 * calculator, SASS, and the content-addressed compile cache.  No GPU is
 * needed for any of it.  The kernel file's text and its //! spec are
 * src/spec/'s (spec.h, included here: every user of compile.h sees them).
 *
 * Data flow (style rule 8): kb_source -> kb_spec + kb_kernel[] -> kb_build.
 * Sections follow the .c file that defines each part.
 */
#ifndef KB_COMPILE_H
#define KB_COMPILE_H

#include "../core/kb.h"
#include "../spec/spec.h"

#include <jansson.h>

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
