/*
 * compile_int.h - declarations shared between the files of src/compile only
 * (style rule 1); other folders use compile.h.
 */
#ifndef KB_COMPILE_INT_H
#define KB_COMPILE_INT_H

#include "compile.h"
#include "../tile/tile.h"

#include <stdarg.h>
#include <string.h>

/* What one compiler invocation produced (nvrtc.c, nvjitlink.c, cache.c). */
typedef struct {
	char *ptx; size_t ptx_len;
	void *cubin; size_t cubin_len;
	char *log;
	char **lowered;       /* per requested name expression; NULL when not lowered */
	int nlowered;
	char *sass_text;      /* cached raw disassembly, or NULL */
	char *sass_tool;
	char *compiler;       /* "nvrtc 13.0": what made it */
} kb_compile__out;

void kb_compile__out_free(kb_compile__out *o);

/* toolkit.c: the CUDA toolkit kbench uses, and loading its libraries. */

/* A toolkit library, described by nvrtc.c or nvjitlink.c; the fields after
 * resolve are toolkit.c's (under its lock). */
typedef struct {
	const char *what;        /* "NVRTC", in messages and the cache key */
	kb_domain dom;
	const char *names[3];    /* file names, most specific first; NULL-ended */
	/* Resolves the entry points from the loaded file at path: NULL, or
	 * the name of the first one missing. */
	const char *(*resolve)(void *handle, const char *path);
	bool tried;
	int rc;
	void *handle;
	char *path;              /* the loaded file's real path */
	kb_err err;
} kb_compile__lib;

/* The toolkit folders in search order: $CUDA_HOME when set, then the one
 * kbench was built against.  Fills roots (borrowed strings); returns how many. */
int kb_compile__toolkit_roots(const char *roots[2]);
/* Tests: the built-against toolkit folder becomes root (NULL: the build's again). */
void kb_compile__toolkit_set_builtin(const char *root);
/* The first of lib's names in a root's lib64/ or lib/, roots in order, found
 * without loading it (a new string), or NULL. */
char *kb_compile__toolkit_find_lib(const kb_compile__lib *lib);
/* Loads lib once (the file find_lib names, else its names through the
 * loader) and resolves it.  Returns 0, or KB_EUNSUP with err saying where
 * it looked ("NVRTC not found: looked for ... in ..."). */
int kb_compile__lib_load(kb_compile__lib *lib, kb_err *err);
/* The real path of the file lib is (or would be) loaded from, without
 * loading it; NULL when only the loader's search could say.  New string. */
char *kb_compile__lib_file(kb_compile__lib *lib);
/* "WHAT PATH SIZE MTIME" of lib's file, for the compile cache's key (a new
 * string); loads lib only when the loader's search alone finds it. */
char *kb_compile__lib_id(kb_compile__lib *lib);
/* The folders where the toolkit's programs are looked for, in order: the
 * bin/ beside NVRTC's library folder, $CUDA_HOME/bin, the built-against
 * toolkit's bin/ (the first *ntoolkit), then PATH's.  A new array of new
 * strings; returns how many. */
int kb_compile__toolkit_bin_dirs(char ***dirs, int *ntoolkit);

/* nvrtc.c: compiles CUDA source. names are NVRTC name expressions to lower.
 * Returns 0, KB_ECOMPILE (diags filled from the log), or KB_ERROR. */
int kb_compile__nvrtc(const kb_source *src, const char *const *opts, int nopts,
		      const char *const *names, int nnames, kb_compile__out *out,
		      kb_diags *diags, kb_err *err);
/* Loads NVRTC (once): 0, or KB_EUNSUP with err saying where it looked. */
int kb_compile__nvrtc_load(kb_err *err);
/* 0 when NVRTC compiles for sm (or cannot say which archs it takes); else
 * KB_EINVAL with err listing the archs it knows (loads NVRTC). */
int kb_compile__nvrtc_check_arch(int sm, kb_err *err);
/* "nvrtc 13.0" (loads NVRTC); "nvrtc" when it cannot be loaded. */
const char *kb_compile__nvrtc_version(void);
/* NVRTC's file and its size and time, for the cache key (a new string). */
char *kb_compile__nvrtc_id(void);
/* The real path of NVRTC's file, loaded or not (see kb_compile__lib_file). */
char *kb_compile__nvrtc_file(void);
/* Turns NVRTC's "file(line): error: msg / source / caret" log into diags. */
void kb_compile__nvrtc_log_diags(const char *log, const kb_source *src, kb_diags *diags);

/* Where a driver is loaded, NVRTC hands code generation to it, and the
 * driver's own compute cache then returns cubins without running ptxas, so
 * the log has no resource report (seen on H200, driver 580).  kbench has its
 * own cache; this turns the driver's off (CUDA_CACHE_DISABLE=1) for the
 * process, before the driver is initialised and before each compile. */
void kb_compile__no_driver_cache(void);

/* nvjitlink.c: PTX -> cubin. Returns 0, KB_ECOMPILE (diags), or KB_ERROR. */
int kb_compile__nvjitlink(const kb_source *src, const char *const *opts, int nopts,
			  kb_compile__out *out, kb_diags *diags, kb_err *err);
/* "nvjitlink 13.0" (loads nvJitLink); "nvjitlink" when it cannot be loaded. */
const char *kb_compile__nvjitlink_version(void);
/* nvJitLink's file and its size and time, for the cache key (a new string). */
char *kb_compile__nvjitlink_id(void);
/* Turns "ptxas application ptx input, line N; error : msg" lines into diags. */
void kb_compile__ptxas_log_diags(const char *log, const kb_source *src, kb_diags *diags);

/* cache.c: the content-addressed store under $XDG_CACHE_HOME/kbench/compile. */
int kb_compile__cache_load(const char *key, kb_compile__out *out);
void kb_compile__cache_store(const char *key, const kb_compile__out *out);
/* Only the entry's SASS (sass_text, sass_tool): 0, or KB_ENOTFOUND. */
/* A build made elsewhere (kb_compile_build_export's JSON) as a compiler's
 * output.  Returns 0 or KB_EINVAL (a malformed one). */
int kb_compile__prebuilt_load(json_t *j, kb_compile__out *out);
int kb_compile__cache_load_sass(const char *key, kb_compile__out *out);
void kb_compile__cache_store_sass(const char *key, const char *tool, const char *text);

/* ===== the //! spec, shared by spec.c, spec_lex.c, spec_expr.c,
 * spec_tensor.c and spec_check.c ===== */

/* Appends one zeroed element to a spec array that keeps no capacity. */
#define KB_SPEC_PUSH1(arr, n) \
	((arr) = kb_xrealloc((arr), ((size_t)(n) + 1) * sizeof(*(arr))), \
	 memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

typedef enum {
	KB_TK_EOF, KB_TK_IDENT, KB_TK_NUM, KB_TK_STR, KB_TK_PUNCT, KB_TK_ARROW, KB_TK_BAD
} kb_compile__tok_kind;

/* A token of one //! line: a slice of the source text. */
typedef struct {
	kb_compile__tok_kind kind;
	const char *p;
	int len;
	int col;   /* 1-based, in the physical line */
} kb_compile__tok;

/* The directives, in the order of spec.c's table. */
enum {
	KB_SPEC_KERNEL, KB_SPEC_ARG, KB_SPEC_IN, KB_SPEC_OUT, KB_SPEC_LAUNCH, KB_SPEC_REF,
	KB_SPEC_TOL, KB_SPEC_BYTES, KB_SPEC_FLOPS, KB_SPEC_SWEEP, KB_SPEC_TUNE, KB_SPEC_OPTIONS,
	KB_SPEC_TENSORMAP, KB_SPEC_ARCH, KB_SPEC_REQUIRE, KB_SPEC_NDIRECTIVES
};

/* The state of one kb_compile_spec_parse: the spec being filled and the
 * line being read. */
typedef struct {
	const kb_source *src;
	kb_spec *spec;
	kb_diags *diags;
	const char *line;     /* first byte of the physical line */
	const char *end;      /* end of the spec text: comment and trailing blanks cut */
	const char *pos;      /* the lexer's cursor, after tok */
	int lineno;
	kb_compile__tok tok;  /* the current token */
	bool failed;          /* a syntax error was reported on this line */
	int first[KB_SPEC_NDIRECTIVES]; /* line of the first kernel/launch/... line, 0 if none */
	kb_loc *out_locs;     /* where the ref's outputs are written */
} kb_compile__parser;

/* spec_lex.c: diagnostics, lookups, "did you mean", and the lexer. */
void kb_compile__vdiag(kb_diags *d, const kb_source *src, kb_diag_level lv, int line, int col,
		       int len, const char *fmt, va_list ap);
void KB_PRINTF(6, 7) kb_compile__diag_err(kb_diags *d, const kb_source *src, int line, int col,
					  int len, const char *fmt, ...);
/* Index of the arg / tensor called name, or -1. */
int kb_compile__find_arg(const kb_spec *s, const char *name);
/* The index of tune `name`, or -1. */
int kb_compile__find_tune(const kb_spec *s, const char *name);
int kb_compile__find_tensor(const kb_spec *s, const char *name);
/* bind_ref.c: checks a built-in reference call's arguments and shapes
 * against the spec (adds diags). */
void kb_compile__bind_builtin(const kb_spec *spec, const kb_source *src, kb_diags *d);
/* The closest of names[] to word when it is close enough, else NULL. */
const char *kb_compile__closest(const char *word, const char *const *names, int n);
/* "a, b, c", a new string. */
char *kb_compile__join_names(const char *const *names, int n);
bool kb_compile__is_ident_start(char c);
/* Reads the next token of the line into P->tok. */
void kb_compile__lex(kb_compile__parser *P);
/* Whether the next non-blank character after the current token is c. */
bool kb_compile__peek_char(const kb_compile__parser *P, char c);
bool kb_compile__is_punct(const kb_compile__parser *P, char c);
bool kb_compile__tok_is(const kb_compile__tok *t, const char *word);
kb_loc kb_compile__loc_at(const kb_compile__parser *P, int col);
/* An error at column col of the current line. */
void KB_PRINTF(4, 5) kb_compile__perr(kb_compile__parser *P, int col, int len,
				      const char *fmt, ...);
/* "expected WHAT" at the current token, once per line; these return 0 or -1. */
int kb_compile__syntax(kb_compile__parser *P, const char *what);
int kb_compile__expect(kb_compile__parser *P, char c, const char *what);
int kb_compile__expect_ident(kb_compile__parser *P, const char *what, kb_compile__tok *out);
int kb_compile__expect_eol(kb_compile__parser *P);

/* spec_expr.c: expressions, parsed and evaluated. */
typedef struct {
	const kb_spec *spec;  /* NULL: constants only (init and tol values) */
	const kb_source *src;
	kb_diags *diags;      /* NULL: silent */
	const bool *bad;      /* args whose evaluation failed already, or NULL */
	bool quiet_names;     /* undefined names were reported already */
	int depth;
} kb_compile__evalctx;

void kb_compile__expr_free(kb_expr *e);
double kb_compile__as_double(kb_value v);
/* Evaluates e: 0, KB_ESPEC with a diag, or 1 when the reason was given before. */
int kb_compile__eval(kb_compile__evalctx *c, const kb_expr *e, kb_value *out);
/* The same, and e must be an integer >= min (what names it in messages). */
int kb_compile__eval_int(kb_compile__evalctx *c, const kb_expr *e, const char *what,
			 int64_t min, int64_t *out);
/* Launch dims into out (default 1, smem 0); the first failure into *rc. */
void kb_compile__eval_launch(kb_compile__evalctx *c, const kb_spec_launch *l,
			     kb_launch_dims *out, int *rc);
/* expr := term (('+' | '-') term)*, C precedence; NULL after a syntax error. */
kb_expr *kb_compile__parse_expr(kb_compile__parser *P);
/* A constant expression (no args) into *out (and the tree into *keep when
 * keep is non-NULL); -1 after an error. */
int kb_compile__parse_const(kb_compile__parser *P, kb_value *out, kb_expr **keep);

/* spec.c */
/* Whether the name in t is still free; reports a duplicate if not. */
bool kb_compile__define_ok(kb_compile__parser *P, const kb_compile__tok *t);

/* spec_tensor.c: `//! in` and `//! out`; `//! tensormap`. */
void kb_compile__dir_tensor(kb_compile__parser *P, const kb_compile__tok *dir, bool is_out);
void kb_compile__dir_tensormap(kb_compile__parser *P, const kb_compile__tok *dir);

/* spec_pyref.c: `//! ref numpy|torch [key=value ...] CALL` up to the
 * `->`, where it leaves the lexer; 0, or -1 after an error. */
int kb_compile__dir_ref_python(kb_compile__parser *P, const kb_compile__tok *lang);
/* Frees what a Python reference holds; leaves it zeroed. */
void kb_compile__pyref_free(kb_spec_pyref *py);

/* spec_require.c: `//! require EXPR CMP EXPR`. */
void kb_compile__dir_require(kb_compile__parser *P, const kb_compile__tok *dir);

/* spec_check.c: after all lines, every name is defined where it is used
 * and every expression evaluates (arg values are stored). */
void kb_compile__spec_check(kb_compile__parser *P);

/* options.c: the compiler options a user adds (`//! options`, --option). */

/* Checks one option word for a .cu (NVRTC) or .ptx (nvJitLink) file:
 * 0, or -1 with *why (a new string) when kbench refuses it or a known
 * option's value has the wrong shape.  Unknown words pass (the compiler
 * judges them); no compiler is called. */
int kb_compile__option_check(kb_src_kind kind, const char *word, char **why);
/* Whether word is a known option that needs a value and has none ("-Xptxas"). */
bool kb_compile__option_wants_value(kb_src_kind kind, const char *word);
/* Whether word is a spelling of the option whose first spelling is name
 * ("--std=c++20" is "-std"). */
bool kb_compile__option_is(kb_src_kind kind, const char *word, const char *name);
/* The example of the i-th option the table allows (tests); NULL past the end. */
const char *kb_compile__option_example(kb_src_kind kind, int i);
/* Places the compiler's complaints about options in log at the user
 * option each is about (a //! options word, or an --option by name); the
 * rest stay placeless. */
void kb_compile__options_log_diags(kb_src_kind kind, const char *log, const kb_spec_option *opts,
				   int n, const kb_source *src, kb_diags *diags);

/* discover_text.c: the length of a conditional directive line (#if #ifdef
 * #elif #else #endif ...) starting at p, continuation lines included; 0 for
 * other lines. */
size_t kb_compile__directive_len(const char *p, const char *end);
/* A copy of text with the attributes the CUDA grammar does
 * not know (__cluster_dims__(...), __maxnreg__(...), ...) blanked, or NULL
 * when it has none (discover.c parses that). */
char *kb_compile__mask_unknown_attrs(const char *text, size_t len);

#endif
