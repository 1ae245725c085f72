/*
 * tile_int.h - what the files of src/tile share: tokens (tokenize.c), the
 * syntax tree (parse.c) with its types and one walker over it (tree.c),
 * the types the checker gives it (check*.c), which src/tilegen lowers to
 * CUDA C.  The tree owns its strings; every node keeps the line, column and
 * length of its source text for diagnostics and #line.  The files call
 * one way, never back (docs/decisions.md, issue 26).
 */
#ifndef KB_TILE_INT_H
#define KB_TILE_INT_H

#include "tile.h"

/* ===== tokenize.c ===== */

typedef enum {
	KB_TT_EOF,
	KB_TT_NEWLINE,   /* ends a statement (so does ';') */
	KB_TT_IDENT,     /* names and keywords (kernel const for in range if else grid threads) */
	KB_TT_INT,
	KB_TT_FLOAT,
	KB_TT_PUNCT,     /* ( ) [ ] { } , : = + - * / % < > ! & | ; and the two-character
			  * == != <= >= && || += -= *= /= ** << >> */
} kb_tile__tt;

typedef struct {
	kb_tile__tt kind;
	const char *p;   /* into the source text */
	int len;
	int line, col;   /* 1-based */
	int64_t ival;
	double fval;
} kb_tile__tok;

typedef struct {
	kb_tile__tok *v;
	int n, cap;
} kb_tile__toks;

/* Splits text into tokens (`//!` spec lines and `#` comments dropped, runs
 * of newlines and `;` folded into one KB_TT_NEWLINE); a bad character is an
 * error in diags and is skipped, a bad number an error that stays a number
 * token.  The list always ends with KB_TT_EOF (the caller frees out->v). */
void kb_tile__tokenize(const char *path, const char *text, size_t len, kb_tile__toks *out,
		       kb_diags *diags);
/* Whether t is the punctuation or keyword s. */
bool kb_tile__tok_is(const kb_tile__tok *t, const char *s);

/* ===== types (check.c fills them) ===== */

/* A value's type: its dtype, scalar (rank 0) or a tile, each extent a
 * compile-time integer. */
typedef struct {
	kb_tile_dtype dtype;
	int rank;           /* 0, 1 or 2 */
	int64_t ext[2];
} kb_tile__type;

/* ===== parse.c: the syntax tree ===== */

typedef enum {
	KB_TE_INT, KB_TE_FLOAT, KB_TE_BOOL, KB_TE_INF,
	KB_TE_NAME,     /* a variable, a const, a size, a scalar parameter */
	KB_TE_UNARY,    /* op: '-' or '!' ; args[0] */
	KB_TE_BINARY,   /* op: KB_TOP_*; args[0], args[1] */
	KB_TE_CALL,     /* name(args..., kw = value, ...) */
	KB_TE_SLICE,    /* name[idx, ...]: a tensor slice (load and store only) */
} kb_tile__ekind;

/* Binary operators (op of KB_TE_BINARY and of compound assignment). */
enum {
	KB_TOP_ADD = '+', KB_TOP_SUB = '-', KB_TOP_MUL = '*', KB_TOP_DIV = '/', KB_TOP_MOD = '%',
	KB_TOP_LT = '<', KB_TOP_GT = '>', KB_TOP_LE = 256, KB_TOP_GE, KB_TOP_EQ, KB_TOP_NE,
	KB_TOP_AND, KB_TOP_OR,
	KB_TOP_POW, KB_TOP_SHL, KB_TOP_SHR,       /* ** << >> */
	KB_TOP_BAND = '&', KB_TOP_BOR = '|',      /* integer bitwise & | */
};

/* One index of a slice: a position, or a range lo : hi. */
typedef struct kb_tile__expr kb_tile__expr;
typedef struct {
	kb_tile__expr *lo, *hi; /* a position: lo only (hi NULL) */
	int64_t extent;         /* check.c: hi - lo, a constant (1 for a position) */
} kb_tile__index;

struct kb_tile__expr {
	kb_tile__ekind kind;
	int line, col, len;      /* the whole expression's source span */
	int op;
	char *name;              /* KB_TE_NAME, KB_TE_CALL, KB_TE_SLICE (the tensor) */
	int64_t ival;
	double fval;
	bool bval;
	kb_tile__expr **args;    /* operands, call arguments */
	int nargs;
	char **kw;               /* call keyword names and values ("other", "mask") */
	kb_tile__expr **kwv;
	int nkw;
	kb_tile__index *idx;     /* KB_TE_SLICE */
	int nidx;
	/* check.c */
	kb_tile__type type;
	bool is_const;           /* a compile-time integer (value in cval) */
	int64_t cval;
};

typedef enum {
	KB_TS_CONST,   /* const name = value (check.c: value->cval is the const's value,
			* a -D override included) */
	KB_TS_ASSIGN,  /* name (op)= value; op 0 for '=' */
	KB_TS_FOR,     /* for name in range(lo, hi, step) body */
	KB_TS_IF,      /* if cond body [else els] */
	KB_TS_STORE,   /* store(slice, value [, mask = m]), atomic_add(...), atomic_max(...) */
} kb_tile__skind;

/* What a KB_TS_STORE does with the slice's elements (its op). */
enum { KB_TATOM_ADD = 1, KB_TATOM_MAX = 2 };

typedef struct kb_tile__stmt kb_tile__stmt;
struct kb_tile__stmt {
	kb_tile__skind kind;
	int line, col, len;
	char *name;              /* CONST, ASSIGN, FOR: the name */
	int op;                  /* ASSIGN: 0, or the KB_TOP_* of += -= *= /=;
				  * STORE: 0, or KB_TATOM_ADD / KB_TATOM_MAX (atomic_add, atomic_max) */
	kb_tile__expr *value;    /* CONST, ASSIGN, STORE: the value; IF: the condition */
	kb_tile__expr *slice;    /* STORE */
	kb_tile__expr *mask;     /* STORE: or NULL */
	kb_tile__expr *lo, *hi, *step; /* FOR (step NULL: 1) */
	kb_tile__stmt **body;    /* FOR, IF */
	int nbody;
	kb_tile__stmt **els;     /* IF */
	int nels;
	/* check.c */
	bool defines;            /* ASSIGN: this one defines the variable */
	kb_tile__type type;      /* ASSIGN: the variable's type */
	/* the lowering (lower_expr.c sets it, lower.c reads it) */
	bool named;              /* CONST: the generated code writes its name (not its
				  * folded value); a top-level one is declared first */
};

/* A kernel as written. */
typedef struct {
	kb_tile_kernel k;        /* name, params (tensors and scalars; check.c appends the sizes) */
	kb_tile__expr *grid[3];
	kb_tile__expr *threads;
	kb_tile__stmt **body;
	int nbody;
	bool bad_header;         /* parse.c: a parameter failed to parse (it may be
				  * missing, so check.c does not report unknown names) */
} kb_tile__kernel_ast;

typedef struct {
	const char *path, *text;
	kb_tile__kernel_ast *kernels;
	int nkernels;
	const char *arch;        /* the target, or NULL (kb_tile_opts) */
	bool no_tma;             /* KB_TILE_NO_TMA among the defines: wgmma's copies stay cp.async */
	bool no_wgmma;           /* KB_TILE_NO_WGMMA: the row layout's dots stay mma.sync */
	bool no_wg_overlap;      /* KB_TILE_NO_WG_OVERLAP: each wgmma dot waited for where it is */
	bool no_wg_ws;           /* KB_TILE_NO_WG_WS: no producer warpgroup in the row layout */
	int wg_store;            /* KB_WG_STORE=0, =1 (=2, =3): a wgmma dot's result stored from registers, by TMA
				  * (each value where written, a block's before its buffer's wait); -1 auto */
	bool no_wg_roles;        /* KB_TILE_NO_WG_ROLES: a persistent wgmma kernel's roles in one loop */
	bool wg_cols;            /* KB_TILE_WG_COLS: a [BN] row at a wgmma result's columns read once */
	bool wg_pingpong;        /* KB_TILE_WG_PINGPONG: threads(128) wgmma as two warpgroups' own tiles */
} kb_tile__file;

/* Parses the tokens into f (kernels as far as they parse); every syntax
 * error goes to diags, and parsing resumes at the next statement.  The
 * caller sets f->path and f->text (diagnostics name and quote them).  A
 * statement that failed to parse stays in the tree with its value (or
 * slice, condition, bounds) NULL, so check.c knows its name and stays quiet
 * about it; lower.c never sees a tree with errors. */
void kb_tile__parse(const kb_tile__toks *toks, kb_tile__file *f, kb_diags *diags);
void kb_tile__file_free(kb_tile__file *f);

/* ===== tree.c: dtypes, types, words, and one walk over the tree (below
 * every other file of src/tile) ===== */

/* The dtype named by the len bytes at s (f32 f16 bf16 f64 i32 i64 u8);
 * false when s names none.  (kb_tile_dtype_name and kb_tile_ctype, tile.h,
 * name one.) */
bool kb_tile__dtype_from(const char *s, int len, kb_tile_dtype *out);
/* How a message names a type: "f32 scalar", "f32[4096]", "bf16[64, 32]". */
typedef struct {
	char s[64];
} kb_tile__typestr;
kb_tile__typestr kb_tile__type_str(const kb_tile__type *t);
bool kb_tile__type_eq(const kb_tile__type *a, const kb_tile__type *b);
/* The dtype a value of dtype d computes in (f16, bf16 -> f32; u8 -> i32). */
kb_tile_dtype kb_tile__compute(kb_tile_dtype d);
/* The dtype of arithmetic between numbers of dtypes a and b (f64 > f32 >
 * i64 > i32, each computed as kb_tile__compute says). */
kb_tile_dtype kb_tile__promote(kb_tile_dtype a, kb_tile_dtype b);
/* The shape a and b broadcast to (a scalar to anything; extents equal or
 * 1, a rank-1 tile against the last dim of a rank-2 one), into out's rank
 * and ext; false when they do not. */
bool kb_tile__broadcast(const kb_tile__type *a, const kb_tile__type *b, kb_tile__type *out);
/* Whether a value of type v broadcasts to exactly t's shape (a store's
 * value or a mask against its slice). */
bool kb_tile__fits(const kb_tile__type *v, const kb_tile__type *t);
/* The name of an operator: "+", "<=", "&&". */
const char *kb_tile__op_str(int op);
/* Whether n is a C++ or CUDA word (or has a prefix the generated code
 * keeps: kb_, _t, __, ...): a parameter cannot have such a name, a local
 * is renamed (kb_tile__cname). */
bool kb_tile__reserved(const char *n);


/* What a walk's callback answers for a node: go on into what it holds,
 * pass that by, or stop the whole walk. */
typedef enum { KB_TWALK_ON, KB_TWALK_SKIP, KB_TWALK_STOP } kb_tile__walkret;
typedef kb_tile__walkret (*kb_tile__expr_fn)(const kb_tile__expr *e, void *ctx);
typedef kb_tile__walkret (*kb_tile__stmt_fn)(const kb_tile__stmt *st, void *ctx);

/* Calls fn on e (none when NULL) and on every expression under it, a node
 * before its children (arguments, keyword values, a slice's indices);
 * true when fn stopped the walk. */
bool kb_tile__walk_expr(const kb_tile__expr *e, kb_tile__expr_fn fn, void *ctx);
/* Walks the expressions statement st holds itself (value, slice, mask,
 * a loop's bounds), not those of the statements nested in it. */
bool kb_tile__stmt_exprs(const kb_tile__stmt *st, kb_tile__expr_fn fn, void *ctx);
/* Calls sfn (when not NULL) on statement st, then walks its expressions
 * with efn (when not NULL), then the statements nested in it (body, else)
 * the same way; true when a callback stopped the walk. */
bool kb_tile__walk_stmt(const kb_tile__stmt *st, kb_tile__stmt_fn sfn, kb_tile__expr_fn efn,
			void *ctx);
/* The same for each statement of v[0..n). */
bool kb_tile__walk_stmts(kb_tile__stmt *const *v, int n, kb_tile__stmt_fn sfn, kb_tile__expr_fn efn,
			 void *ctx);
/* Whether e (NULL: no) names `name` anywhere; whether statement st (the
 * statements nested in it too) does. */
bool kb_tile__names(const kb_tile__expr *e, const char *name);
bool kb_tile__stmt_names(const kb_tile__stmt *st, const char *name);
/* An expression callback: stops the walk at a name equal to ctx (a string). */
kb_tile__walkret kb_tile__is_name(const kb_tile__expr *e, void *name);

/* ===== parse.c, parse_expr.c: the parser's state and helpers ===== */

typedef struct {
	const char *path, *text;
	const char *end;                  /* the end of the text */
	kb_diags *diags;
	const kb_tile__tok *unclosed_at;  /* where a '{' was last found unclosed */
	const kb_tile__tok *misopen;      /* this kernel's first block whose '}' ... */
	const kb_tile__tok *misclose;     /* ... is not indented like its '{' line */
	char miswhat[64];                 /* what that block is ("the for loop") */
} kb_tile__parser;

/* How a message names a token: "'x'", "end of line", "end of file". */
typedef struct {
	char s[64];
} kb_tile__tokname;
kb_tile__tokname kb_tile__tok_desc(const kb_tile__tok *t);
/* The token's text, a new string. */
char *kb_tile__tok_str(const kb_tile__tok *t);
/* The first token at or after tok that is not a newline. */
kb_tile__tok *kb_tile__skip_nl(kb_tile__tok *tok);
/* The columns from first's start to last's end, cut at the end of the line. */
int kb_tile__span(const kb_tile__tok *first, const kb_tile__tok *last);
/* Whether t is a reserved word (kernel const for in if else). */
bool kb_tile__is_keyword(const kb_tile__tok *t);
/* A syntax error at token t (its length underlined) or at expression e. */
void kb_tile__perr(kb_tile__parser *P, const kb_tile__tok *t, const char *fmt, ...) KB_PRINTF(3, 4);
void kb_tile__perr_at(kb_tile__parser *P, const kb_tile__expr *e, const char *fmt, ...)
	KB_PRINTF(3, 4);
/* "MSG, got X" at token t, X naming it ('x', end of line, end of file). */
void kb_tile__perr_got(kb_tile__parser *P, const kb_tile__tok *t, const char *fmt, ...)
	KB_PRINTF(3, 4);
/* An expression at tok, or NULL after reporting (with *rest at the
 * offending token). */
kb_tile__expr *kb_tile__parse_expr(kb_tile__parser *P, kb_tile__tok **rest, kb_tile__tok *tok);
/* NAME '(' args ')' at tok (tok[1] is the '('), or NULL after reporting. */
kb_tile__expr *kb_tile__parse_call(kb_tile__parser *P, kb_tile__tok **rest, kb_tile__tok *tok);
void kb_tile__expr_free(kb_tile__expr *e);

/* ===== check.c ===== */

/* Resolves names (params, sizes, consts with their -D overrides,
 * variables in scope), gives every expression its type and shape, folds
 * compile-time integers, appends each kernel's sizes to its params, and
 * reports every error (unknown name, wrong dtype, shape mismatch, a slice
 * whose extent is not constant, a store of a shape its slice does not
 * have, ...) at its place. Returns the number of errors. */
int kb_tile__check(kb_tile__file *f, const kb_tile_opts *o, kb_diags *diags);

/* ===== check.c, check_expr.c, check_call.c, check_scope.c: the checker's state and helpers ===== */

typedef enum {
	KB_TSYM_TENSOR, KB_TSYM_SCALAR, KB_TSYM_SIZE, KB_TSYM_CONST, KB_TSYM_VAR, KB_TSYM_LOOP,
} kb_tile__symkind;

/* A name in scope (or, in gone, one whose block has ended). */
typedef struct {
	const char *name;        /* borrowed from the tree or k.params */
	kb_tile__symkind kind;
	kb_tile__type type;      /* VAR; SCALAR, SIZE, CONST and LOOP are scalars */
	int64_t cval;            /* CONST: its value (-D overrides included) */
	int param;               /* TENSOR, SCALAR, SIZE: its index in k.params */
	int line, col;           /* where it was defined */
	bool bad;                /* its definition had an error: uses stay quiet */
	int bline, bcol;         /* gone: the statement whose block it lived in */
	const char *block;       /* gone: "for loop", "if" or "else" */
} kb_tile__sym;

typedef struct {
	const kb_tile__file *f;
	const kb_tile_opts *o;
	kb_diags *diags;
	kb_tile__kernel_ast *ka;  /* the kernel being checked */
	kb_tile__sym *syms;       /* the names in scope, innermost last */
	int nsyms, cap;
	kb_tile__sym *gone;       /* names whose block ended (for a better message) */
	int ngone, gcap;
	int nerr;
	bool header;              /* checking grid(...) and threads(...) */
} kb_tile__checker;

/* check_scope.c (below the other three): an error at a place of the file;
 * counts in C->nerr. */
void kb_tile__cerr(kb_tile__checker *C, int line, int col, int len, const char *fmt, ...)
	KB_PRINTF(5, 6);
/* The innermost visible name, or NULL. */
kb_tile__sym *kb_tile__lookup(kb_tile__checker *C, const char *name);
/* Reports e->name (a name or a slice's tensor) as unknown, saying where a
 * name that went out of scope was, or the closest visible name. */
void kb_tile__unknown(kb_tile__checker *C, const kb_tile__expr *e);
/* The closest of n words to word when close enough, else NULL. */
const char *kb_tile__closest(const char *word, const char *const *words, int n);
/* Up to max of the n words close enough to word, closest first, into out;
 * returns how many. */
int kb_tile__close_words(const char *word, const char *const *words, int n, const char **out,
			 int max);
/* Checks e: its type, and whether it is a compile-time integer (cval).
 * False when e has an error (reported now, or earlier and kept quiet). */
bool kb_tile__check_expr(kb_tile__checker *C, kb_tile__expr *e);
/* Checks a slice x[...] (for load and store): its type, the tensor's
 * dtype with one extent per range; *param gets the tensor's index. */
bool kb_tile__check_slice(kb_tile__checker *C, kb_tile__expr *e, int *param);
/* The type of `a op b` for an arithmetic, comparison or logical op;
 * false after reporting a mismatch at `at`. */
bool kb_tile__binary_type(kb_tile__checker *C, int op, const kb_tile__type *a,
			  const kb_tile__type *b, kb_tile__type *out, const kb_tile__expr *at);
/* check_call.c: the built-in function call e names, the call allowed
 * where it is (grid(...) and threads(...) take cdiv, min and max), with
 * the arguments and keywords the function takes; NULL after reporting.
 * Then, once its arguments checked (check_expr.c), the function's own
 * rules: e's type and folded cval; false after reporting. */
typedef struct kb_tile__builtin kb_tile__builtin;
const kb_tile__builtin *kb_tile__builtin_of(kb_tile__checker *C, const kb_tile__expr *e);
bool kb_tile__builtin_check(kb_tile__checker *C, kb_tile__expr *e, const kb_tile__builtin *b);
/* Whether the n bytes at s name a built-in function (check_call.c's table:
 * load ... cdiv and the casts; not store, a statement). */
bool kb_tile__is_builtin(const char *s, size_t n);

#endif
