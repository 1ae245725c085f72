/*
 * tilegen_int.h - what the lowering's files share (lower*.c, plan_dot.c,
 * pipeline.c): the lowering's state and its functions.  The syntax tree and
 * the checker's results it reads are src/tile's (tile_int.h).
 */
#ifndef KB_TILEGEN_INT_H
#define KB_TILEGEN_INT_H

#include "../tile/tile_int.h"
#include "tilegen.h"

/* ===== the lowering (lower*.c, plan_dot.c): the state its files share ===== */

typedef struct {
	char *dsl, *c;        /* the source name and the C name */
	kb_tile__type type;
	int depth;
	const kb_tile__expr *load; /* a rank-1 variable that only a load defines: that load */
	const kb_tile__expr *stream; /* a streamed variable (never in registers whole): its
				      * load, which the one statement that uses it reads a
				      * group at a time (lower.c, "Streamed loads") */
	bool packed;               /* a 16-bit load in the row layout, kept as pairs of
				    * slots in 32-bit registers (lower_rows.c) */
	int64_t qsmem;             /* such a load kept in kb_smem instead, a dot's A
				    * fragments by ldmatrix: 1 + its offset (0: registers) */
} kb_tile__lsym;

typedef struct {
	const kb_tile__expr *e; /* a materialized expression */
	char *c;                /* its temporary */
	bool cols;              /* a rank-1 tile at this thread's columns of a dot's
				 * result (slot j: column pair j / 2, j % 2) */
	bool stream;            /* a load read a group at a time: c holds the
				 * group k_'s V elements (slot k_ * V + j_ is c[j_]) */
	bool tile2;             /* a [BM, BN] load beside a dot's result, read where it
				 * is used at the slot's row and column (c##p_, c##r_,
				 * c##c_: its first element, rows and columns left) */
	bool rowpick;           /* an [RW, 1] tile beside an [RW, C] value in the row
				 * layout (lower_rows.c): slot i reads c[i % (4 MT) / 2] */
	int rowsat;             /* arange in the row layout, computed where it is read:
				 * 1 the slot's column, 2 its row, 3 its row of an [RW, 1] */
} kb_tile__mat;

/* A load a statement's group loop reads a group at a time: into c[V], from
 * the pointer c##p_ (and c##lim_, c##ok_, c##al_) set up before the loop. */
typedef struct {
	const kb_tile__expr *load;
	char *c;
} kb_tile__stream;

typedef struct {
	char *key;              /* a slice's text with the loop variable abstracted */
	char *c;                /* the registers that hold it */
	bool filled;            /* loaded already (by the first loop that reads it) */
} kb_tile__kept;

/* lower_dot.c: an operand tile of a dot loop, and one `acc += dot(a, b)`. */
typedef struct {
	const char *name;          /* the variable it is loaded into, or NULL (loaded in place) */
	const kb_tile__expr *load; /* load(t[r : r + R, c : c + C]) */
	int line;                  /* of its statement (0: in place) */
} kb_tile__dotop;

typedef struct {
	const char *acc;           /* the accumulator's name */
	const kb_tile__expr *dot;
	int a, b;                  /* its operands' indexes in the loop's ops */
	bool bt;                   /* b is trans(w) of a loaded [n, k] tile w */
	int line;
} kb_tile__dotupd;

typedef struct {
	const kb_tile__stmt *loop;
	kb_tile__dotop *ops;
	int nops, capops;
	kb_tile__dotupd *upds;
	int nupds, capupds;
} kb_tile__dotloop;

/* The kernel's mma layout (lower_dot.c explains it). */
typedef struct {
	bool on, bad;
	int64_t BM, BN;            /* the dot result's shape */
	int WM, WN;                /* the warp grid over it */
	int MT, NT;                /* m16 and n8 pieces a warp holds */
	int MS;                    /* rows between a warp's m pieces: 16 (mma.sync), 64 (wgmma) */
	bool wg;                   /* wgmma on sm_90a (lower_wgmma.c) */
	bool tma;                  /* wgmma's operands by TMA where the tensors allow (else cp.async) */
	int stages;                /* operand tiles in flight (const STAGES, else 3) */
	int64_t smem;              /* dynamic shared memory bytes */
	const kb_tile__stmt *tstore; /* wgmma: the store staged in shared memory and sent by TMA */
	int tmode;                 /* ... its values worked out all first (1), each where written (2),
				    * a [64][64] block's before its buffer's wait (3): KB_WG_STORE */
	bool pp;                   /* wgmma pingpong: two consumer warpgroups, a program each */
} kb_tile__mma;

typedef struct kb_tile__lw {
	const kb_tile__file *f;
	const kb_tile__kernel_ast *k;
	kb_buf *o;
	kb_diags *diags;
	int T, V, depth, ntmp, errors;
	bool scratch;           /* the kernel needs kb_scratch (a reduction) */
	int64_t dot_bytes;      /* kb_dot_'s size: the largest dot in the 2-d layout (lower_reduce.c) */
	kb_tile__lsym *syms;
	int nsyms, capsyms;
	kb_tile__mat *mats;
	int nmats, capmats;
	kb_tile__kept *kept;             /* the row-in-registers branch: slices it keeps */
	int nkept, capkept;
	bool fast;              /* emitting that branch */
	const char *loopvar;    /* there: the top-level loop's variable */
	kb_tile__stmt *const *list; /* the statement list being lowered, and where */
	int nlist, at;
	kb_tile__stream *strs;  /* the statement's streamed loads */
	int nstrs, capstrs, nstream;
	kb_tile__mma mma;
	bool wgmma;             /* a kernel of the file lowers its dot to wgmma */
	bool wgmma_tma;         /* ... and copies its operands by TMA (tensormap parameters) */
	int wg_T;               /* there: its threads() (a kernel of those takes its launch) */
	bool wide;              /* the kernel takes that launch (lower.c) */
	bool wg_persist;        /* that launch is persistent: min(sm_count, grid) blocks */
	int wg_more;            /* the threads it adds to threads(): 128, 256 in pingpong */
	bool persist;           /* this kernel's blocks loop over its programs (pid(0) is kb_pid_) */
	int wg_role;            /* persistent wgmma: 0 both roles in one loop, else the loop being
				 * lowered, KB_TILE_WG_PRODUCER's or KB_TILE_WG_CONSUMERS' (lower_wgepi.c) */
	kb_tile__dotloop *dloops;        /* the loops that feed a dot */
	int ndloops, capdloops;
	bool rows;              /* the kernel's 2-d tiles are in the row layout (lower_rows.c) */
	int rows_mt;            /* there: a warp's m16 row tiles, 1 or 2 (RW = 16 rows_mt warps) */
	bool rows_wg;           /* there: the dots are wgmma (sm_90a, lower_rowwg.c): a warpgroup's
				 * m64 pieces, warp w's rows 16 (w % 4) + 64 mt */
	unsigned rows_wg_n;     /* the file's row-layout wgmma widths: bit N / 16 (their helpers) */
	bool rows_wg_ss;        /* ... and one with A from shared memory */
	bool rows_any;          /* a kernel of the file is (its helpers go before them) */
	bool tanh_approx;       /* a kernel calls tanh(x, exact = false): kb_tanh_approx */
	int64_t rows_smem;      /* the row layout's dynamic shared memory: the dots' b tiles */
	const kb_tile__expr *pf[8]; /* the row layout's loop: dots whose b is copied a trip ahead */
	int64_t pf_off[8], pf_bytes[8]; /* their two buffers: at off and off + bytes */
	int npf;
	bool rows_ovl;          /* that loop's two dots overlap (lower_rowwg.c): pf[1] issued a trip late */
	bool rows_ws, ws_prod;  /* ... b copied by a producer warpgroup (lower_rowwg.c); its copies now */
	char *ovl_acc, *ovl_cn, *ovl_hi, *ovl_step; /* its x (x = x * r + dot), the loop's variable, end, step */
	bool rows_tma;          /* ... its b tiles (ring_w, pf's order) by TMA (lower_rowwg_tma.c) */
	const kb_tile__expr *ring_w[8];
	int nring;
	bool rows_ring_any, rows_ring_tma_any; /* a kernel of the file has the ring (its helpers) */
#define KB_TILE_NDSUM 8
	const kb_tile__expr *dsum[KB_TILE_NDSUM]; /* row sums whose quad fold waits for their loop's end */
	char *dvar[KB_TILE_NDSUM];                /* (lower_rowacc.c): their variables' C names */
	int ndsum;
	const kb_tile__expr *hoisted[KB_TILE_NDSUM]; /* dot starts x * r whose x was rescaled where r */
	int hoisted_x[KB_TILE_NDSUM];                /* was assigned: x's side (args[hoisted_x]) */
	int nhoisted;
} kb_tile__lw;

/* lower_expr.c: the materialized value of e (a load or reduction lower_reduce.c
 * made), or NULL; max or min of dtype t in C (fmaxf / fmax / max). */
const kb_tile__mat *kb_tile__mat_of(const kb_tile__lw *L, const kb_tile__expr *e);
const char *kb_tile__minmax(const char *name, kb_tile_dtype t);

/* lower_stmt.c */
/* The statements v[0..n) (one statement), lowered in place. */
void kb_tile__lower_stmts(kb_tile__lw *L, kb_tile__stmt *const *v, int n);
void kb_tile__lower_stmt(kb_tile__lw *L, const kb_tile__stmt *st);
/* A const as C++: a constexpr of its value (-D overrides applied). */
void kb_tile__const_decl(kb_tile__lw *L, const kb_tile__stmt *st);
/* Whether a statement of v[0..n) assigns name again. */
bool kb_tile__reassigned(kb_tile__stmt *const *v, int n, const char *name);
/* lower_load.c: the registers that hold load's slice in the
 * row-in-registers branch (lower.c), or NULL. */
kb_tile__kept *kb_tile__kept_of(kb_tile__lw *L, const kb_tile__expr *load);
/* lower_expr.c: the lowering's state, C types and slots (below every
 * other lower_*.c). */
void kb_tile__ind(kb_tile__lw *L);
void kb_tile__line_of(kb_tile__lw *L, int line);
/* A diagnostic: `what` is not supported yet by the lowering. */
void kb_tile__fail(kb_tile__lw *L, int line, int col, int len, const char *what);
/* The C name of a DSL variable: as written, or with '_' after a C++ word. */
char *kb_tile__cname(const char *dsl);
/* A loop's bounds as C: lo, hi, step ("1" when the loop has none). */
void kb_tile__range_text(kb_tile__lw *L, const kb_tile__stmt *st, kb_buf *lo, kb_buf *hi,
			 kb_buf *step);
const kb_tile__lsym *kb_tile__lw_lookup(const kb_tile__lw *L, const char *dsl);
const char *kb_tile__define(kb_tile__lw *L, const char *dsl, const char *c, kb_tile__type t);
void kb_tile__leave_scope(kb_tile__lw *L);
const kb_tile_param *kb_tile__param(const kb_tile__lw *L, const char *name);
bool kb_tile__is_float(kb_tile_dtype t);
/* The C type a value of dtype t computes in (f16 and bf16 as float). */
const char *kb_tile__ctype(kb_tile_dtype t);
int kb_tile__elem_size(kb_tile_dtype t);
/* Slots a thread holds of a rank-1 tile of e elements; whether all are elements. */
int64_t kb_tile__slots(const kb_tile__lw *L, int64_t e);
bool kb_tile__full(const kb_tile__lw *L, int64_t e);
/* "el(i)": the element slot i holds in this thread, as C. */
void kb_tile__cat_el(const kb_tile__lw *L, kb_buf *b, const char *i);
/* Slots a thread holds of an [R, C] tile in the kernel's 2-d layout; the
 * row layout's line defining r_, c_, f_ of slot i_ of an [RW, C] tile. */
int64_t kb_tile__slots_rc(const kb_tile__lw *L, int64_t R, int64_t C);
void kb_tile__rows_at(const kb_tile__lw *L, int64_t C, kb_buf *at);
void kb_tile__rows_row(const kb_tile__lw *L, const char *i, bool stat, kb_buf *b);
/* The axis reduction call e reduces along (sum(t, 1), max(t, axis = 0));
 * its identity (sum, max, min) in its dtype, as C. */
int kb_tile__axis_of(const kb_tile__expr *e);
const char *kb_tile__reduce_id(const kb_tile__expr *e);
/* Emits one line (printf-style, under 512 bytes) at the current depth. */
void kb_tile__line(kb_tile__lw *L, const char *fmt, ...) KB_PRINTF(2, 3);
/* Closes n blocks opened with a '{' line. */
void kb_tile__block_close(kb_tile__lw *L, int n);

/* lower_load.c: loads, and the access to a slice lower_value.c's streams
 * and stores share. */
/* The tensor access a slice makes: the pointer to its first element, the
 * elements left in its range dim, and whether its positions are in range. */
typedef struct {
	const kb_tile_param *t;
	kb_buf base, lim, ok;
	kb_buf stride;       /* a range in another dim than the last: its step (a column
			      * x[r0 : r0 + B, c] steps by N); empty when contiguous */
	int64_t extent;
	int ranges;
} kb_tile__access;

/* The access slice s makes (s a slice of a tensor parameter); false after
 * reporting what cannot be lowered.  kb_tile__access_free frees it. */
bool kb_tile__slice_access(kb_tile__lw *L, const kb_tile__expr *s, kb_tile__access *a);
void kb_tile__access_free(kb_tile__access *a);
/* An access's names, each prefixed by P ("" or a stream's): Pp_ (its
 * first element), Plim_, Pok_, and Pal_ for vector access. */
void kb_tile__access_heads(kb_tile__lw *L, const kb_tile__access *a, bool is_const, bool vec,
			   const char *P);
/* The opening of an access to a slice (a block): p_, lim_, ok_ (al_ when vec). */
void kb_tile__group_open(kb_tile__lw *L, const kb_tile__access *a, bool is_const, bool vec);
/* A group loop over the S slots: `for (k_)` and its element index e_. */
void kb_tile__group_for(kb_tile__lw *L, int64_t S);
/* Whether dtype t has 16-byte accesses (f32, f16, bf16). */
bool kb_tile__vectorizable(kb_tile_dtype t);
/* " && what < E" when a tile of E elements has slots past them, else "". */
const char *kb_tile__past_end(const kb_tile__lw *L, int64_t E, const char *what, char *buf,
			      size_t n);
/* A load's other= as C (else "0") into other; its mask= or NULL. */
const kb_tile__expr *kb_tile__load_kws(kb_tile__lw *L, const kb_tile__expr *e, kb_buf *other);
/* One group of a load in a group loop (e_ set): dst[at j] for j < V from
 * the access named by P, 16 bytes at a time where it can be (streaming
 * loads when once), other out of range; what mask (or NULL) leaves out is
 * not read. */
void kb_tile__load_group(kb_tile__lw *L, kb_tile_dtype t, const char *ct, int64_t E, const char *dst,
			 const char *at, const char *P, const char *other, bool once,
			 const kb_tile__expr *mask);
/* Whether e reads memory (a load or a reduction under it, keywords too). */
bool kb_tile__reads_mem(const kb_tile__expr *e);
/* A load's key: its slice and keywords as text, the loop variable var
 * written as `@` (two loads with one key read the same values). */
char *kb_tile__load_key(const kb_tile__lw *L, const kb_tile__expr *load, const char *var);

/* lower_reduce.c (materialize, reductions), lower_load.c, lower_value.c */
/* e as a C expression of slot i (tiles indexed by i, scalars as they are). */
void kb_tile__cexpr(kb_tile__lw *L, const kb_tile__expr *e, const char *i, kb_buf *b);
/* Emits the load or reduction e into `into` (a new variable) or a
 * temporary; its arguments first.  Element-wise nodes are left to expr. */
void kb_tile__materialize(kb_tile__lw *L, const kb_tile__expr *e, const char *into);
/* Materializes every load and reduction under e (not e itself). */
void kb_tile__materialize_under(kb_tile__lw *L, const kb_tile__expr *e);
bool kb_tile__is_load(const kb_tile__expr *e);
/* The loads in slice s's indices (a gather), materialized. */
void kb_tile__materialize_index(kb_tile__lw *L, const kb_tile__expr *s);
bool kb_tile__is_reduction(const kb_tile__expr *e);
/* dst = load(...), dst = a reduction (declared when declare), store(...). */
void kb_tile__lower_load(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare);
void kb_tile__lower_reduction(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare);
void kb_tile__lower_store(kb_tile__lw *L, const kb_tile__stmt *st);
/* Fills the registers k keeps (not filled yet) with load e: a row read
 * once, its 16-byte loads streaming (__ldcs: evict first), so the L2 keeps
 * what is read again (a norm's weights). */
void kb_tile__fill_kept(kb_tile__lw *L, const kb_tile__expr *e, kb_tile__kept *k);
/* dst[NT * 2] = load(slice) of a [BN] slice at this thread's columns of a
 * dot's result (the mma layout's), declared; other where out of range. */
void kb_tile__lower_load_cols(kb_tile__lw *L, const kb_tile__expr *e, const char *dst);
/* A 2-d tile's slots (lower_load.c, for lower_reduce.c): a loop head over
 * S slots i_ defining `at` then `unused`; one with f_, r_, c_ of an [R, C]
 * layout; slice s's first element, rows and columns left (false after
 * reporting); the access's scope open; whether rows go a float4 a group,
 * and their loop; dst = the [R, C] load e. */
void kb_tile__shape2(const kb_tile__type *t, int64_t *r, int64_t *c); /* [n] is [1, n] */
void kb_tile__slot_head(kb_tile__lw *L, int64_t S, const char *at, const char *unused);
void kb_tile__slot_loop(kb_tile__lw *L, int64_t S, int64_t C);
bool kb_tile__slice2(kb_tile__lw *L, const kb_tile__expr *s, kb_buf *base, kb_buf *rows, kb_buf *cols,
		     kb_buf *ld);
void kb_tile__access2_open(kb_tile__lw *L, const kb_tile_param *t, bool is_const, const kb_buf *base,
			   const kb_buf *rows, const kb_buf *cols);
bool kb_tile__vec4(kb_tile__lw *L, const kb_tile_param *t, bool full, int64_t C);
void kb_tile__group4_loop(kb_tile__lw *L, int64_t S, int64_t C);
void kb_tile__load2(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, int64_t R, int64_t C);
/* A new temporary's name: _t1, _t2, ... */
char *kb_tile__new_tmp(kb_tile__lw *L);
/* Records a materialized expression e in temporary c (taken over). */
void kb_tile__add_mat(kb_tile__lw *L, const kb_tile__expr *e, char *c, bool cols);
/* The compute value v (C text) as tensor dtype t. */
void kb_tile__to_elem(kb_tile_dtype t, const char *v, kb_buf *b);
/* Whether load e can be read a group at a time by an element-wise
 * statement: a range slice, its keywords reading no memory. */
bool kb_tile__streamable(const kb_tile__lw *L, const kb_tile__expr *e);
/* dst[S] (declared) = a rank-1 element-wise value, by a group loop that
 * reads the streamed loads under it a group at a time; op as in `op=`. */
void kb_tile__assign_groups(kb_tile__lw *L, const char *dst, const kb_tile__type *t,
			    const kb_tile__expr *value, bool declare, int op);
/* Whether e names a streamed variable (or a streamed load's group). */
bool kb_tile__uses_stream(const kb_tile__lw *L, const kb_tile__expr *e);
/* Whether an element-wise e would read a stream: it names a streamed
 * variable, or has a streamable load in an element-wise place. */
bool kb_tile__has_streams(kb_tile__lw *L, const kb_tile__expr *e);

/* lower.c: name (C) = an element-wise value, every slot (declared when
 * declare); op as in `op=`. */
void kb_tile__assign_elementwise(kb_tile__lw *L, const char *c, const kb_tile__type *t,
				 const kb_tile__expr *value, bool declare, int op);

/* lower_reduce.c: 2-d element-wise tiles in a kernel without dot. */
/* Slots a thread holds of 2-d tile type t (its R * C elements in row order). */
int64_t kb_tile__slots2(const kb_tile__lw *L, const kb_tile__type *t);
/* c (declared when declare) = st's [R, C] value; false-free: what cannot be
 * lowered is reported. */
void kb_tile__assign2(kb_tile__lw *L, const kb_tile__stmt *st, const char *c, bool declare);
/* store(t[r : r + R, c : c + C], v [, mask = m]) of an [R, C] value. */
void kb_tile__lower_store2(kb_tile__lw *L, const kb_tile__stmt *st);
/* The kb_strided helper (p_[i] steps by a stride), when a slice of the
 * file has its range in another dim than the last. */
/* dst[S] (declared when declare) = a reduction of an [R, C] tile along an
 * axis, as a rank-1 tile. */
void kb_tile__reduce2(kb_tile__lw *L, const kb_tile__expr *e, const char *dst, bool declare);

/* lower_dot.c */
bool kb_tile__kernel_has_dot(const kb_tile__kernel_ast *k);
/* Finds the kernel's dot loops and picks the mma layout (L->mma, L->dloops);
 * false after reporting what it cannot lower. */
bool kb_tile__plan_mma(kb_tile__lw *L);
void kb_tile__mma_free(kb_tile__lw *L);
/* Slots a thread holds of a [BM, BN] tile; whether t is that shape (and
 * the kernel has a dot). */
int64_t kb_tile__mma_slots(const kb_tile__lw *L);
bool kb_tile__mma_shape(const kb_tile__lw *L, const kb_tile__type *t);
/* Whether e can be computed in the mma layout (scalars, [BM, BN] tiles,
 * [BN] tiles loaded from memory); false after reporting. */
bool kb_tile__mma_value_ok(kb_tile__lw *L, const kb_tile__expr *e);
/* Loads the [BN] tiles under e at this thread's columns (before the
 * statement that computes e in the mma layout); a [BM, BN] load gets its
 * pointer and bounds, and is read where it is used. */
void kb_tile__mma_materialize(kb_tile__lw *L, const kb_tile__expr *e);
void kb_tile__mma_reduce(kb_tile__lw *L, const kb_tile__expr *e);
/* The element of [BM, BN] load e (materialized into c) at slot i of the
 * mma layout, as C (other= past the tensor's edges). */
void kb_tile__mma_read2(kb_tile__lw *L, const kb_tile__expr *e, const char *c, const char *i,
			kb_buf *b);
/* The dot loop of statement st, or NULL. */
const kb_tile__dotloop *kb_tile__dot_loop(const kb_tile__lw *L, const kb_tile__stmt *st);
/* The kernel's shared memory and warp offsets; a dot loop; a 2-d store. */
void kb_tile__mma_decls(kb_tile__lw *L);
void kb_tile__lower_dot_loop(kb_tile__lw *L, const kb_tile__dotloop *lp);
void kb_tile__lower_store_mma(kb_tile__lw *L, const kb_tile__stmt *st);
/* The helpers the file's kernels with dot call. */
void kb_tile__mma_prologue(kb_buf *out);
/* The fragments of a dot(x, trans(w)), for a file with one (plan_dot.c finds it). */
bool kb_tile__kernel_has_dot_nt(const kb_tile__kernel_ast *k);
void kb_tile__mma_prologue_nt(kb_buf *out);

/* lower_rows.c: the row layout of a kernel whose dots sit among other
 * statements (below lower_reduce.c, above lower_load.c). */
/* Whether the kernel's 2-d tiles take the row layout (sets L->rows). */
bool kb_tile__rows_plan(kb_tile__lw *L);
/* Whether st defines a 2-d variable as a 16-bit load the row layout keeps
 * packed (the caller knows it is never assigned again); the load into
 * c, packed: 0, or where with two row tiles it and the dots' results would
 * take over 192 registers and only dots' A operands read it, into kb_smem:
 * 1 + its offset there. */
bool kb_tile__rows_packable(const kb_tile__lw *L, const kb_tile__stmt *st);
int64_t kb_tile__rows_load_packed(kb_tile__lw *L, const kb_tile__stmt *st, const char *c);
/* A loop of the row layout (st; its variable cn and bounds as C) whose
 * dots' b tiles can be copied a trip ahead: before the loop (the first
 * trip's copies; true when there are such dots), at the top of its body
 * (the next trip's, then a wait and a barrier), at the end of its body
 * (a barrier) and after it. */
bool kb_tile__rows_loop_open(kb_tile__lw *L, const kb_tile__stmt *st, const char *cn, const char *lo,
			     const char *hi, const char *step);
void kb_tile__rows_loop_top(kb_tile__lw *L, const char *cn, const char *hi, const char *step);
void kb_tile__rows_loop_end(kb_tile__lw *L);
void kb_tile__rows_loop_close(kb_tile__lw *L);
/* dot e (its a materialized) into a new temporary of the result's slots,
 * which start as init's (materialized; NULL: zeros). */
void kb_tile__rows_dot(kb_tile__lw *L, const kb_tile__expr *e, const kb_tile__expr *init);

/* lower_rowacc.c: the row layout's kept reductions along axis 1, a loop's row
 * sums folded across the quad after it, and
 * the lazy rescale moved to its factor's statement */
/* A kept reduction along axis 1 (its operand materialized) into a new
 * [RW, 1] temporary, read beside an [RW, C] value (C > 1) at the slot's row. */
void kb_tile__rows_reduce(kb_tile__lw *L, const kb_tile__expr *e, int64_t C);
/* An [RW, 1] variable e read beside an [RW, C] value: at the slot's row. */
void kb_tile__rows_pick(kb_tile__lw *L, const kb_tile__expr *e);
/* The lazy rescale of the C * MT / 2 slots of c by the [RW, 1] registers r:
 * skipped where r is 1 in every row of the warp (KB_LAZY_RESCALE). */
void kb_tile__rows_lazy_scale(kb_tile__lw *L, const char *c, const char *r, long long C);
/* init's factor r (args[k]) when init is x * r of an [RW, C] f32 x and an
 * f32 [RW, 1] variable r; else NULL. */
const kb_tile__expr *kb_tile__rows_lazy_factor(const kb_tile__lw *L, const kb_tile__expr *init, int k);
/* Before loop's `for`: its row sums kept as lanes' parts (their lane-0 start
 * written); returns the mark kb_tile__rows_defer_close takes after it. */
int kb_tile__rows_defer_open(kb_tile__lw *L, const kb_tile__stmt *loop);
void kb_tile__rows_defer_close(kb_tile__lw *L, int mark);
/* Whether sum (a kept reduction) skips its quad shuffles. */
bool kb_tile__rows_deferred(const kb_tile__lw *L, const kb_tile__expr *sum);
/* After v[i]: a later dot's start x * r rescaled here when v[i] assigns r. */
void kb_tile__rows_hoist(kb_tile__lw *L, kb_tile__stmt *const *v, int n, int i);
/* x when init (a dot's start x * r) was rescaled in place already; else NULL. */
const kb_tile__expr *kb_tile__rows_prescaled(const kb_tile__lw *L, const kb_tile__expr *init);
void kb_tile__rows_decls(kb_tile__lw *L);
void kb_tile__rows_prologue(kb_buf *out);
/* lower_rowwg.c: the row layout's dots as wgmma on sm_90a (the rows of a
 * warp: kb_tile__rows_row). */
/* Whether the kernel's row-layout dots can be wgmma (L->rows_wg). */
bool kb_tile__rows_wg_plan(const kb_tile__lw *L);
/* The wgmmas of a dot into c (A fragments in aw[k][mt], or with RA > 0 an
 * [RA][K] tile in shared memory at al_; b's tile at bl_); zero: c holds no
 * start (the first k16 step's scale-d is 0).  mode 0: waited for (c in
 * registers after it); 1: committed, not waited for; 2: neither the
 * wgmma.fence before nor the commit (the caller's). */
void kb_tile__rows_wg_issue(kb_tile__lw *L, const char *c, const char *aw, bool bt, long long K, long long C,
			    bool f16, long long RA, bool zero, int mode);
/* Whether loop st's two dots (L->pf, copied a trip ahead) overlap: S =
 * dot(a, b) first, then x = x * r + dot(p, v) with x read nowhere else in
 * the loop; sets L->rows_ovl and its names. */
bool kb_tile__rows_wg_ovl_plan(kb_tile__lw *L, const kb_tile__stmt *st);
/* After the first dot's wgmmas (its group committed): the second dot of
 * the last trip into x, then the wait for the first alone. */
void kb_tile__rows_wg_ovl_issue(kb_tile__lw *L, const char *c, long long n);
/* Before the second dot's statement: the wait for the last trip's, then
 * the next trip's copy of its b tile into the buffer that dot read
 * (lower_rows.c, beside the other copies). */
void kb_tile__rows_wg_ovl_wait(kb_tile__lw *L);
/* After the loop: the last trip's second dot. */
void kb_tile__rows_wg_ovl_close(kb_tile__lw *L);
/* The producer warpgroup (L->rows_ws): ws_loop, the kernel's loop it may copy for (lower_rows.c
 * checks its copies); ws_bar (lower_rowwg_tma.c): bar.sync (wait) or bar.arrive of named
 * barrier id for n threads.  lower_rowio.c: b's copy, the loop's. */
const kb_tile__stmt *kb_tile__rows_ws_loop(const kb_tile__lw *L);
void kb_tile__rows_copy_issue(kb_tile__lw *L, const kb_tile__expr *w, const char *off, const char *et, bool sw);
void kb_tile__rows_pf_issue(kb_tile__lw *L, const char *parity, int i0, int i1);
void kb_tile__rows_ws_bar(kb_tile__lw *L, bool wait, const char *id, int n, const char *why);
/* lower_rowwg_tma.c: the producer's rings of the loop's b tiles (mbarriers, TMA where
 * the plan found every tile a box copy): plan (loop: the producer's, or NULL), the
 * spec's tensormap lines and the kernel's parameters for them; open: the barriers,
 * the producer, the consumers' start; wait (full) and free (empty, each consumer
 * warp's lane 0) of b tile i's stage st (C text) in trip it. */
void kb_tile__rows_ring_plan(kb_tile__lw *L, const kb_tile__stmt *loop);
char *kb_tile__rows_ring_spec(const kb_tile__lw *L);
void kb_tile__rows_ring_params(kb_tile__lw *L);
void kb_tile__rows_ring_open(kb_tile__lw *L, const char *cn, const char *lo, const char *hi, const char *step);
void kb_tile__rows_ring_wait(kb_tile__lw *L, int i, const char *st, const char *it, const char *why);
void kb_tile__rows_ring_free(kb_tile__lw *L, int i, const char *st, const char *why);
/* Their helpers, for the widths in ns (wgmma: the file has the wgmma
 * prologue already). */
void kb_tile__rows_wg_prologue(kb_buf *out, unsigned ns, bool ss, bool wgmma);

/* lower_rowio.c: a row-layout store's slot loop, two slots (columns c, c +
 * 1 of a row) a store where the row's start is aligned to a pair and both
 * are stored; el and m (or "") texts in slot i_, ct the element's type. */
void kb_tile__rows_store_pairs(kb_tile__lw *L, int64_t R, int64_t C, const char *ld, const char *el,
			       const char *m, const char *ct);

/* lower_wgmma.c: a dot loop on sm_90a as a producer warpgroup's copies
 * and consumer warpgroups' wgmma (below plan_dot.c, above lower_expr.c). */
/* Whether f's target has wgmma (sm_90a). */
bool kb_tile__wgmma_target(const kb_tile__file *f);
/* Switches L->mma (planned for mma.sync) to wgmma when the kernel's dot is
 * the canonical loop and its shapes fit; else leaves it as it is. */
void kb_tile__plan_wgmma(kb_tile__lw *L);
void kb_tile__wgmma_decls(kb_tile__lw *L);
void kb_tile__lower_wgmma_loop(kb_tile__lw *L, const kb_tile__dotloop *lp);
/* A persistent wgmma kernel's part before its loop over programs: the
 * ring, its mbarriers, the warp roles (setmaxnreg), the ring's trip count. */
void kb_tile__wgmma_persist_head(kb_tile__lw *L);
/* ... after it (the TMA stores done reading). */
void kb_tile__wgmma_persist_tail(kb_tile__lw *L);
/* The TMA path's CUtensorMap parameters (a's, b's, the store's) after the
 * kernel's own; the `//! tensormap` lines that bind them, or NULL. */
void kb_tile__wgmma_params(kb_tile__lw *L);
char *kb_tile__wgmma_spec(const kb_tile__lw *L);
/* The helpers every wgmma kernel calls, and with tma the TMA producer's. */
void kb_tile__wgmma_prologue(kb_buf *out, bool tma);

/* lower_wgepi.c: a persistent wgmma kernel's loop over the programs as
 * two, the producer's and the consumers' (setmaxnreg kept by ptxas; below
 * lower.c and lower_wgmma.c, above lower_expr.c). */
enum { KB_TILE_WG_PRODUCER = 1, KB_TILE_WG_CONSUMERS = 2 };
/* Whether the persistent kernel's roles get loops of their own. */
bool kb_tile__wgepi_roles(const kb_tile__lw *L);
/* The statements of the producer's loop into v (room for the body's):
 * the consts and scalars before the dot loop, and the loop; their count. */
int kb_tile__wgepi_producer_stmts(const kb_tile__lw *L, kb_tile__stmt **v);
/* The head of the producer's part (`if (producer_) {`, its registers
 * given back, the TMA thread alone going on), then after its loop the
 * consumers' (its `return; }`, their registers taken); P the producer's
 * first thread. */
void kb_tile__wgepi_head(kb_tile__lw *L, int P);
/* L->mma.tstore's TMA store (lower_wgepi.c), `if (...) {...} else`. */
void kb_tile__wgmma_store(kb_tile__lw *L, const kb_tile__stmt *st);
/* kb_wg_desc alone (a wgmma matrix descriptor, 128-byte swizzle). */
void kb_tile__wgmma_desc_prologue(kb_buf *out);

/* ===== lower.c ===== */

/* Appends the CUDA C of every kernel of a checked file to out; what the
 * lowering does not support yet is an error in diags at its place. */
void kb_tile__lower(kb_tile__file *f, kb_buf *out, kb_diags *diags);

#endif
