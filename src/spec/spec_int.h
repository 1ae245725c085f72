/*
 * spec_int.h - declarations shared between the files of src/spec only
 * (style rule 1); other folders use spec.h.
 */
#ifndef KB_SPEC_INT_H
#define KB_SPEC_INT_H

#include "spec.h"

#include <stdarg.h>
#include <string.h>

/* ===== the //! spec, shared by spec.c, spec_lex.c, spec_expr.c,
 * spec_tensor.c, spec_check.c, spec_require.c and spec_pyref.c ===== */

/* Appends one zeroed element to a spec array that keeps no capacity. */
#define KB_SPEC_PUSH1(arr, n) \
	((arr) = kb_xrealloc((arr), ((size_t)(n) + 1) * sizeof(*(arr))), \
	 memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

typedef enum {
	KB_TK_EOF, KB_TK_IDENT, KB_TK_NUM, KB_TK_STR, KB_TK_PUNCT, KB_TK_ARROW, KB_TK_BAD
} kb_spec__tok_kind;

/* A token of one //! line: a slice of the source text. */
typedef struct {
	kb_spec__tok_kind kind;
	const char *p;
	int len;
	int col;   /* 1-based, in the physical line */
} kb_spec__tok;

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
	kb_spec__tok tok;     /* the current token */
	bool failed;          /* a syntax error was reported on this line */
	int first[KB_SPEC_NDIRECTIVES]; /* line of the first kernel/launch/... line, 0 if none */
	kb_loc *out_locs;     /* where the ref's outputs are written */
} kb_spec__parser;

/* spec_lex.c: diagnostics, lookups, "did you mean", and the lexer. */
void kb_spec__vdiag(kb_diags *d, const kb_source *src, kb_diag_level lv, int line, int col,
		    int len, const char *fmt, va_list ap);
void KB_PRINTF(6, 7) kb_spec__diag_err(kb_diags *d, const kb_source *src, int line, int col,
				       int len, const char *fmt, ...);
/* Index of the arg / tensor called name, or -1. */
int kb_spec__find_arg(const kb_spec *s, const char *name);
/* The index of tune `name`, or -1. */
int kb_spec__find_tune(const kb_spec *s, const char *name);
int kb_spec__find_tensor(const kb_spec *s, const char *name);
/* Whether the name in t is still free; reports a duplicate if not. */
bool kb_spec__define_ok(kb_spec__parser *P, const kb_spec__tok *t);
/* The closest of names[] to word when it is close enough, else NULL. */
const char *kb_spec__closest(const char *word, const char *const *names, int n);
/* "a, b, c", a new string. */
char *kb_spec__join_names(const char *const *names, int n);
bool kb_spec__is_ident_start(char c);
/* Reads the next token of the line into P->tok. */
void kb_spec__lex(kb_spec__parser *P);
/* Whether the next non-blank character after the current token is c. */
bool kb_spec__peek_char(const kb_spec__parser *P, char c);
bool kb_spec__is_punct(const kb_spec__parser *P, char c);
bool kb_spec__tok_is(const kb_spec__tok *t, const char *word);
kb_loc kb_spec__loc_at(const kb_spec__parser *P, int col);
/* An error at column col of the current line. */
void KB_PRINTF(4, 5) kb_spec__perr(kb_spec__parser *P, int col, int len,
				   const char *fmt, ...);
/* "expected WHAT" at the current token, once per line; these return 0 or -1. */
int kb_spec__syntax(kb_spec__parser *P, const char *what);
int kb_spec__expect(kb_spec__parser *P, char c, const char *what);
int kb_spec__expect_ident(kb_spec__parser *P, const char *what, kb_spec__tok *out);
int kb_spec__expect_eol(kb_spec__parser *P);

/* spec_expr.c: expressions, parsed and evaluated. */
typedef struct {
	const kb_spec *spec;  /* NULL: constants only (init and tol values) */
	const kb_source *src;
	kb_diags *diags;      /* NULL: silent */
	const bool *bad;      /* args whose evaluation failed already, or NULL */
	bool quiet_names;     /* undefined names were reported already */
	int depth;
} kb_spec__evalctx;

void kb_spec__expr_free(kb_expr *e);
double kb_spec__as_double(kb_value v);
/* Evaluates e: 0, KB_ESPEC with a diag, or 1 when the reason was given before. */
int kb_spec__eval(kb_spec__evalctx *c, const kb_expr *e, kb_value *out);
/* The same, and e must be an integer >= min (what names it in messages). */
int kb_spec__eval_int(kb_spec__evalctx *c, const kb_expr *e, const char *what,
		      int64_t min, int64_t *out);
/* Launch dims into out (default 1, smem 0); the first failure into *rc. */
void kb_spec__eval_launch(kb_spec__evalctx *c, const kb_spec_launch *l,
			  kb_launch_dims *out, int *rc);
/* expr := term (('+' | '-') term)*, C precedence; NULL after a syntax error. */
kb_expr *kb_spec__parse_expr(kb_spec__parser *P);
/* A constant expression (no args) into *out (and the tree into *keep when
 * keep is non-NULL); -1 after an error. */
int kb_spec__parse_const(kb_spec__parser *P, kb_value *out, kb_expr **keep);


/* spec_tensor.c: `//! in` and `//! out`; `//! tensormap`. */
void kb_spec__dir_tensor(kb_spec__parser *P, const kb_spec__tok *dir, bool is_out);
void kb_spec__dir_tensormap(kb_spec__parser *P, const kb_spec__tok *dir);

/* spec_pyref.c: `//! ref numpy|torch [key=value ...] CALL` up to the
 * `->`, where it leaves the lexer; 0, or -1 after an error. */
int kb_spec__dir_ref_python(kb_spec__parser *P, const kb_spec__tok *lang);
/* Frees what a Python reference holds; leaves it zeroed. */
void kb_spec__pyref_free(kb_spec_pyref *py);

/* spec_require.c: `//! require EXPR CMP EXPR`. */
void kb_spec__dir_require(kb_spec__parser *P, const kb_spec__tok *dir);

/* spec_check.c: after all lines, every name is defined where it is used
 * and every expression evaluates (arg values are stored). */
void kb_spec__check(kb_spec__parser *P);

/* options.c: the compiler options a user adds (`//! options`, --option). */

/* Whether word is a known option that needs a value and has none ("-Xptxas"). */
bool kb_spec__option_wants_value(kb_src_kind kind, const char *word);
/* The example of the i-th option the table allows (tests); NULL past the end. */
const char *kb_spec__option_example(kb_src_kind kind, int i);

#endif
