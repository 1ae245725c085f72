/*
 * check.c - names and statements of the tile DSL (docs/tile.md): each
 * kernel's parameters and sizes (the dim names, appended to k.params),
 * consts with their -D overrides, variables and loop variables in their
 * scopes, and the rules of every statement (assignment, const, for, if,
 * store) and of grid(...) and threads(...).  Expression types are
 * check_expr.c's, built-in functions check_call.c's, finding a name (and
 * the message for an unknown one) check_scope.c's.
 *
 * Scopes: a kernel's parameters and sizes, then its body; a for or if
 * opens a block, and a name first assigned (or a loop variable, or a
 * const) in a block is visible only until the block ends.  The top-level
 * consts are visible to grid(...) and threads(...), checked last.
 *
 * Invariants: every error goes to diags at its place and is counted once;
 * a name whose definition had an error is kept (bad) so its uses stay
 * quiet; parts the parser left NULL (syntax errors) are skipped silently,
 * and so are unknown names in a kernel whose header did not parse; the
 * tree only gains types, cvals, `defines`, `written` and the size params.
 */
#include "tile_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ERR_AT(C, e, ...) kb_tile__cerr((C), (e)->line, (e)->col, (e)->len, __VA_ARGS__)

static void check_stmts(kb_tile__checker *C, kb_tile__stmt **v, int n);

static kb_tile__type scalar(kb_tile_dtype d)
{
	kb_tile__type t = {d, 0, {0, 0}};
	return t;
}

static bool is_int_scalar(const kb_tile__type *t)
{
	return !t->rank && (t->dtype == KB_TILE_I32 || t->dtype == KB_TILE_I64);
}

/* ===== names ===== */

static const char *sym_what_short(kb_tile__symkind k)
{
	return k == KB_TSYM_SIZE ? "size" : k == KB_TSYM_CONST ? "const" : "parameter";
}

/* Names the generated CUDA keeps: those ending in '_' are its own locals;
 * a parameter, size or const keeps its name there (the spec binds by it,
 * tune lines name it), so it cannot be a C++ or CUDA word (a local with one
 * is renamed instead). */
static void check_name(kb_tile__checker *C, const char *name, kb_tile__symkind kind, int line,
		       int col)
{
	size_t n = strlen(name);
	bool param = kind == KB_TSYM_TENSOR || kind == KB_TSYM_SCALAR || kind == KB_TSYM_SIZE ||
		     kind == KB_TSYM_CONST;
	if (n && name[n - 1] == '_')
		kb_tile__cerr(C, line, col, (int)n, "'%s' ends in '_': such names are kept for the "
			      "generated CUDA's own variables", name);
	else if (param && kb_tile__reserved(name))
		kb_tile__cerr(C, line, col, (int)n, "'%s' cannot name a %s: the generated CUDA keeps "
			      "%s names, and '%s' is a C++ or CUDA name there", name,
			      sym_what_short(kind), sym_what_short(kind), name);
}

/* A new name in the innermost scope (pointers to syms die on the next). */
static kb_tile__sym *define(kb_tile__checker *C, const char *name, kb_tile__symkind kind,
			    int line, int col)
{
	check_name(C, name, kind, line, col);
	kb_tile__sym *s = KB_PUSH(C->syms, C->nsyms, C->cap);
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->kind = kind;
	s->type = scalar(KB_TILE_I32);
	s->line = line;
	s->col = col;
	return s;
}

/* Ends the block of statement s that began when there were `mark` names. */
static void pop_scope(kb_tile__checker *C, int mark, const kb_tile__stmt *s, const char *block)
{
	for (int i = mark; i < C->nsyms; i++) {
		kb_tile__sym *g = KB_PUSH(C->gone, C->ngone, C->gcap);
		*g = C->syms[i];
		g->bline = s->line;
		g->bcol = s->col;
		g->block = block;
	}
	C->nsyms = mark;
}

static const char *sym_what(kb_tile__symkind k)
{
	static const char *const what[] = {"a tensor parameter", "a scalar parameter", "a size",
					   "a const", "a variable", "a loop variable"};
	return what[k];
}

/* ===== consts and assignments ===== */

/* The -D value of const s: 1 (into *v), 0 when no define names it, -1
 * when the define's value is not an integer (reported). */
static int define_value(kb_tile__checker *C, const kb_tile__stmt *s, int64_t *v)
{
	size_t n = strlen(s->name);
	for (int i = C->o ? C->o->ndefines - 1 : -1; i >= 0; i--) {
		const char *d = C->o->defines[i];
		if (!d || strncmp(d, s->name, n) || d[n] != '=')
			continue;
		char *end;
		errno = 0;
		long long x = strtoll(d + n + 1, &end, 0);
		if (end == d + n + 1 || *end || errno) {
			ERR_AT(C, s, "the define %s does not give const %s an integer", d, s->name);
			return -1;
		}
		*v = x;
		return 1;
	}
	return 0;
}

static void check_const(kb_tile__checker *C, kb_tile__stmt *s)
{
	kb_tile__expr *e = s->value;
	bool ok = e && kb_tile__check_expr(C, e);
	if (ok && !e->is_const) {
		ERR_AT(C, e, "const %s needs a compile-time integer (literals, consts, + - * / %%, "
		       "cdiv, min, max), got %s%s", s->name, kb_tile__type_str(&e->type).s,
		       is_int_scalar(&e->type) ? " known only at run time" : "");
		ok = false;
	}
	int64_t v = ok ? e->cval : 0;
	int d = define_value(C, s, &v);
	if (d == 1 && e) {
		e->is_const = true;
		e->cval = v;
		e->type = scalar(v == (int32_t)v ? KB_TILE_I32 : KB_TILE_I64);
	}
	kb_tile__sym *old = kb_tile__lookup(C, s->name);
	if (old) {
		ERR_AT(C, s, "'%s' is already %s (defined at %d:%d)", s->name, sym_what(old->kind),
		       old->line, old->col);
		return;
	}
	kb_tile__sym *c = define(C, s->name, KB_TSYM_CONST, s->line, s->col);
	c->cval = v;
	c->bad = !ok && d != 1;
}

/* NAME op= VALUE: the same as NAME = NAME op VALUE, of NAME's type. */
static void check_update(kb_tile__checker *C, kb_tile__stmt *s, kb_tile__sym *v, bool ok)
{
	int len = (int)strlen(s->name);
	if (!v) {
		if (!C->ka->bad_header)
			kb_tile__cerr(C, s->line, s->col, len, "unknown variable '%s': '%s=' needs a "
				      "variable defined before", s->name, kb_tile__op_str(s->op));
		return;
	}
	s->type = v->type;
	kb_tile__type t;
	if (v->bad || !ok || !kb_tile__binary_type(C, s->op, &v->type, &s->value->type, &t, s->value))
		return;
	if (!kb_tile__type_eq(&t, &v->type))
		ERR_AT(C, s->value, "%s %s= ... gives %s, but %s is %s (defined at %d:%d)", s->name,
		       kb_tile__op_str(s->op), kb_tile__type_str(&t).s, s->name,
		       kb_tile__type_str(&v->type).s, v->line, v->col);
}

static void check_assign(kb_tile__checker *C, kb_tile__stmt *s)
{
	bool ok = s->value && kb_tile__check_expr(C, s->value);
	kb_tile__sym *v = kb_tile__lookup(C, s->name);
	int len = (int)strlen(s->name);
	if (v && v->kind != KB_TSYM_VAR) {
		kb_tile__cerr(C, s->line, s->col, len, "cannot assign to '%s': it is %s (defined at "
			      "%d:%d)", s->name, sym_what(v->kind), v->line, v->col);
		return;
	}
	if (s->op)
		return check_update(C, s, v, ok);
	if (!v) {
		v = define(C, s->name, KB_TSYM_VAR, s->line, s->col);
		v->type = s->type = ok ? s->value->type : scalar(KB_TILE_F32);
		v->bad = !ok;
		s->defines = true;
		return;
	}
	if (v->bad && ok) { /* its first definition failed: this one defines it */
		v->type = s->value->type;
		v->bad = false;
	}
	s->type = v->type;
	if (ok && !kb_tile__type_eq(&s->value->type, &v->type))
		ERR_AT(C, s->value, "%s is %s here but was %s at %d:%d", s->name,
		       kb_tile__type_str(&s->value->type).s, kb_tile__type_str(&v->type).s, v->line,
		       v->col);
}

/* ===== for, if, store ===== */

static void check_for(kb_tile__checker *C, kb_tile__stmt *s)
{
	static const char *const what[] = {"start", "end", "step"};
	kb_tile__expr *b[3] = {s->lo, s->hi, s->step};
	kb_tile_dtype d = KB_TILE_I32;
	for (int i = 0; i < 3; i++) {
		if (!b[i] || !kb_tile__check_expr(C, b[i]))
			continue;
		if (!is_int_scalar(&b[i]->type))
			ERR_AT(C, b[i], "the %s of range must be an integer scalar, got %s", what[i],
			       kb_tile__type_str(&b[i]->type).s);
		else if (b[i]->type.dtype == KB_TILE_I64)
			d = KB_TILE_I64;
	}
	if (s->step && s->step->is_const && s->step->cval <= 0)
		ERR_AT(C, s->step, "the step of range must be positive, got %lld",
		       (long long)s->step->cval);
	int mark = C->nsyms;
	kb_tile__sym *old = s->name ? kb_tile__lookup(C, s->name) : NULL;
	if (old)
		ERR_AT(C, s, "the loop variable '%s' would hide %s defined at %d:%d; give it "
		       "another name", s->name, sym_what(old->kind), old->line, old->col);
	else if (s->name)
		define(C, s->name, KB_TSYM_LOOP, s->line, s->col)->type = scalar(d);
	check_stmts(C, s->body, s->nbody);
	pop_scope(C, mark, s, "for loop");
}

static void check_if(kb_tile__checker *C, kb_tile__stmt *s)
{
	kb_tile__expr *c = s->value;
	if (c && kb_tile__check_expr(C, c) && (c->type.rank || c->type.dtype != KB_TILE_BOOL))
		ERR_AT(C, c, "the condition of if must be a bool scalar, got %s%s",
		       kb_tile__type_str(&c->type).s, c->type.rank ? " (a tile)" :
		       " (compare it, as in x != 0)");
	int mark = C->nsyms;
	check_stmts(C, s->body, s->nbody);
	pop_scope(C, mark, s, "if");
	check_stmts(C, s->els, s->nels);
	pop_scope(C, mark, s, "else");
}

/* store's first argument when it is not a slice. */
static void bad_target(kb_tile__checker *C, const kb_tile__expr *x)
{
	kb_tile__sym *s = x->kind == KB_TE_NAME ? kb_tile__lookup(C, x->name) : NULL;
	if (x->kind == KB_TE_NAME && !s)
		kb_tile__unknown(C, x);
	else if (s && s->kind == KB_TSYM_TENSOR)
		ERR_AT(C, x, "store(%s, ...) needs indices: store(%s[i, c : c + B], v)", x->name,
		       x->name);
	else if (s)
		ERR_AT(C, x, "store writes to a slice of a tensor parameter; '%s' is %s", x->name,
		       sym_what(s->kind));
	else
		ERR_AT(C, x, "store writes to a slice of a tensor parameter, like "
		       "store(y[i, c : c + B], v)");
}

/* The value of a store against its slice (of tensor p, type t). */
static void check_stored(kb_tile__checker *C, const kb_tile__expr *v, const kb_tile_param *p,
			 const kb_tile__type *t)
{
	kb_tile__typestr vs = kb_tile__type_str(&v->type), ts = kb_tile__type_str(t);
	bool vint = v->type.dtype == KB_TILE_I32 || v->type.dtype == KB_TILE_I64 ||
		    v->type.dtype == KB_TILE_U8;
	bool pint = p->dtype == KB_TILE_I32 || p->dtype == KB_TILE_I64 || p->dtype == KB_TILE_U8;
	if (v->type.dtype == KB_TILE_BOOL)
		ERR_AT(C, v, "store writes numbers, got %s", vs.s);
	else if (!kb_tile__fits(&v->type, t))
		ERR_AT(C, v, "the value is %s but the slice of %s is %s: a store's value must have "
		       "its slice's shape (or broadcast to it)", vs.s, p->name, ts.s);
	else if (pint && !vint)
		ERR_AT(C, v, "storing %s into %s, a %s tensor, needs a cast: %s(...)", vs.s, p->name,
		       kb_tile_dtype_name(p->dtype), kb_tile_dtype_name(p->dtype));
}

static void check_store(kb_tile__checker *C, kb_tile__stmt *s)
{
	kb_tile__expr *x = s->slice, *m = s->mask;
	if (!x)
		return; /* a syntax error */
	int param = -1;
	bool ok = x->kind == KB_TE_SLICE && kb_tile__check_slice(C, x, &param);
	if (x->kind != KB_TE_SLICE)
		bad_target(C, x);
	if (param >= 0)
		C->ka->k.params[param].written = true;
	bool vok = kb_tile__check_expr(C, s->value);
	bool mok = !m || kb_tile__check_expr(C, m);
	if (!ok)
		return;
	if (vok)
		check_stored(C, s->value, &C->ka->k.params[param], &x->type);
	kb_tile_dtype d = C->ka->k.params[param].dtype;
	if (s->op == KB_TATOM_ADD && d != KB_TILE_F32 && d != KB_TILE_F64 && d != KB_TILE_I32)
		ERR_AT(C, x, "atomic_add adds into f32, f64 or i32 tensors; %s is %s", x->name,
		       kb_tile_dtype_name(d));
	if (s->op == KB_TATOM_MAX && d != KB_TILE_F32 && d != KB_TILE_I32)
		ERR_AT(C, x, "atomic_max works on f32 or i32 tensors; %s is %s", x->name,
		       kb_tile_dtype_name(d));
	if (m && mok && (m->type.dtype != KB_TILE_BOOL || !kb_tile__fits(&m->type, &x->type)))
		ERR_AT(C, m, "mask= must be bool of the slice's shape (%s), got %s",
		       kb_tile__type_str(&x->type).s, kb_tile__type_str(&m->type).s);
}

static void check_stmts(kb_tile__checker *C, kb_tile__stmt **v, int n)
{
	for (int i = 0; i < n; i++) {
		kb_tile__stmt *s = v[i];
		switch (s->kind) {
		case KB_TS_CONST: check_const(C, s); break;
		case KB_TS_ASSIGN: check_assign(C, s); break;
		case KB_TS_FOR: check_for(C, s); break;
		case KB_TS_IF: check_if(C, s); break;
		case KB_TS_STORE: check_store(C, s); break;
		}
	}
}

/* ===== kernels ===== */

/* Appends size `dim` (of parameter i) to k.params unless it is known. */
static void add_size(kb_tile__checker *C, const char *dim, int i)
{
	kb_tile_kernel *k = &C->ka->k;
	kb_tile__sym *s = kb_tile__lookup(C, dim);
	if (s && s->kind == KB_TSYM_SIZE)
		return;
	if (s) {
		kb_tile__cerr(C, k->params[i].line, k->params[i].col, (int)strlen(k->params[i].name),
			      "the dim '%s' of %s is a size, but '%s' is %s", dim, k->params[i].name,
			      dim, sym_what(s->kind));
		return;
	}
	kb_tile_param p = {kb_xstrdup(dim), KB_TILE_I32, 0, {NULL, NULL}, true, false,
			   k->params[i].line, k->params[i].col};
	k->params = kb_xrealloc(k->params, (size_t)(k->nparams + 1) * sizeof(*k->params));
	k->params[k->nparams] = p;
	define(C, p.name, KB_TSYM_SIZE, p.line, p.col)->param = k->nparams++;
}

/* The parameters as written, then their sizes appended (once: sizes a
 * previous check appended are dropped first). */
static void check_params(kb_tile__checker *C)
{
	kb_tile_kernel *k = &C->ka->k;
	if (k->name && kb_tile__reserved(k->name))
		kb_tile__cerr(C, k->line, k->col, (int)strlen(k->name), "'%s' cannot name a kernel: it "
			      "is a C++ or CUDA name", k->name);
	while (k->nparams && k->params[k->nparams - 1].is_size)
		free(k->params[--k->nparams].name);
	int n = k->nparams;
	for (int i = 0; i < n; i++) {
		kb_tile_param *p = &k->params[i];
		p->written = false;
		kb_tile__sym *old = kb_tile__lookup(C, p->name);
		if (old)
			kb_tile__cerr(C, p->line, p->col, (int)strlen(p->name), "parameter '%s' is "
				      "defined twice (first at %d:%d)", p->name, old->line, old->col);
		else
			define(C, p->name, p->rank ? KB_TSYM_TENSOR : KB_TSYM_SCALAR, p->line,
			       p->col)->param = i;
	}
	for (int i = 0; i < n; i++)
		for (int d = 0; d < k->params[i].rank; d++)
			if (!isdigit((unsigned char)k->params[i].dims[d][0]))
				add_size(C, k->params[i].dims[d], i);
}

/* grid(...) and threads(...), in the scope of the body's top level. */
static void check_launch(kb_tile__checker *C)
{
	kb_tile__kernel_ast *ka = C->ka;
	C->header = true;
	for (int i = 0; i < 3; i++) {
		kb_tile__expr *g = ka->grid[i];
		if (g && kb_tile__check_expr(C, g) && !is_int_scalar(&g->type))
			ERR_AT(C, g, "grid(...) takes integer scalars, got %s",
			       kb_tile__type_str(&g->type).s);
	}
	kb_tile__expr *t = ka->threads;
	ka->k.threads = 0;
	if (t && kb_tile__check_expr(C, t)) {
		if (!t->is_const)
			ERR_AT(C, t, "threads(...) must be a compile-time integer, got %s",
			       kb_tile__type_str(&t->type).s);
		else if (t->cval < 32 || t->cval > 1024 || t->cval % 32)
			ERR_AT(C, t, "threads(%lld): the threads of a program are a multiple of 32 "
			       "from 32 to 1024", (long long)t->cval);
		else
			ka->k.threads = (int)t->cval;
	}
	C->header = false;
}

int kb_tile__check(kb_tile__file *f, const kb_tile_opts *o, kb_diags *diags)
{
	kb_tile__checker C = {.f = f, .o = o, .diags = diags};
	for (int i = 0; i < f->nkernels; i++) {
		kb_tile__kernel_ast *ka = &f->kernels[i];
		for (int j = 0; j < i; j++)
			if (!strcmp(f->kernels[j].k.name, ka->k.name)) {
				kb_tile__cerr(&C, ka->k.line, ka->k.col, (int)strlen(ka->k.name),
					      "kernel '%s' is defined twice (first at %d:%d)", ka->k.name,
					      f->kernels[j].k.line, f->kernels[j].k.col);
				break;
			}
		C.ka = ka;
		C.nsyms = C.ngone = 0;
		check_params(&C);
		check_stmts(&C, ka->body, ka->nbody);
		check_launch(&C);
	}
	free(C.syms);
	free(C.gone);
	return C.nerr;
}
