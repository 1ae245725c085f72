/*
 * bind_ref.c - the half of binding (bind.c) that checks a built-in
 * reference call (`//! ref softmax(x, dim=1) -> y`): the table of built-in
 * references, their positional and keyword arguments, and the shapes of
 * the tensors they get and give.  Errors point at the argument.
 */
#include "compile_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR(d, src, line, col, len, ...) \
	kb_diag_add(d, KB_DIAG_ERROR, (src)->path, (src)->text, line, col, len, __VA_ARGS__)
#define WARN(d, src, line, col, len, ...) \
	kb_diag_add(d, KB_DIAG_WARNING, (src)->path, (src)->text, line, col, len, __VA_ARGS__)

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* ===== built-in references ===== */

typedef struct {
	int rank;
	int64_t d[KB_MAX_RANK];
} shape;

typedef struct refctx {
	const kb_spec *spec;
	const kb_source *src;
	kb_diags *d;
	const kb_spec_ref *ref;
	const kb_ref_arg *pos[4];
	int npos;
	int out_line, out_col, out_len; /* where the output is written */
} refctx;

static void KB_PRINTF(3, 4) arg_err(refctx *c, const kb_ref_arg *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = kb_xvasprintf(fmt, ap);
	va_end(ap);
	int line = a ? a->loc.line : c->out_line, col = a ? a->loc.col : c->out_col;
	int len = a ? (int)strlen(a->text) : c->out_len;
	kb_diag_add(c->d, KB_DIAG_ERROR, c->src->path, c->src->text, line, col, len, "%s", msg);
	free(msg);
}

static const kb_ref_arg *kwarg(const refctx *c, const char *key)
{
	for (int i = 0; i < c->ref->nargs; i++)
		if (c->ref->args[i].key && !strcmp(c->ref->args[i].key, key))
			return &c->ref->args[i];
	return NULL;
}

/* The evaluated shape of tensor `name`; false when it cannot be had. */
static bool shape_of(const refctx *c, const char *name, shape *s)
{
	const kb_spec_tensor *t = kb_compile_spec_tensor(c->spec, name);
	if (!t)
		return false;
	s->rank = t->rank;
	for (int i = 0; i < t->rank; i++) {
		kb_value v;
		if (kb_compile_spec_eval(c->spec, t->dims[i], &v, c->src, NULL) || v.is_float)
			return false;
		s->d[i] = v.i;
	}
	return true;
}

static bool same_shape(const shape *a, const shape *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->d[i] != b->d[i])
			return false;
	return true;
}

static const char *fmt_shape(const shape *s, char *buf, size_t n)
{
	size_t at = (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < s->rank && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? ", " : "", (long long)s->d[i]);
	if (at < n)
		snprintf(buf + at, n - at, "]");
	return buf;
}

/* Checks that the output has shape want (what the reference computes). */
static void expect_out(refctx *c, const shape *want)
{
	shape got;
	char a[160], b[160];
	if (!shape_of(c, c->ref->outs[0], &got) || same_shape(&got, want))
		return;
	arg_err(c, NULL, "output '%s' has shape %s, but %s() gives %s", c->ref->outs[0],
		fmt_shape(&got, a, sizeof(a)), c->ref->fn, fmt_shape(want, b, sizeof(b)));
}

/* An integer kwarg; returns 0 (absent: *out untouched), or -1 after an error. */
static int int_kwarg(refctx *c, const char *key, int64_t *out)
{
	const kb_ref_arg *a = kwarg(c, key);
	if (!a)
		return 0;
	char *end;
	long long v = strtoll(a->text, &end, 10);
	if (*end || end == a->text) {
		arg_err(c, a, "%s= must be an integer", key);
		return -1;
	}
	*out = v;
	return 0;
}

static int bool_kwarg(refctx *c, const char *key, bool *out)
{
	const kb_ref_arg *a = kwarg(c, key);
	if (!a)
		return 0;
	bool t = !strcmp(a->text, "true") || !strcmp(a->text, "1");
	if (!t && strcmp(a->text, "false") && strcmp(a->text, "0")) {
		arg_err(c, a, "%s= must be true or false", key);
		return -1;
	}
	*out = t;
	return 0;
}

/* dim= in [-rank, rank) (default -1), normalised to [0, rank). */
static int dim_kwarg(refctx *c, const shape *x, int64_t *dim)
{
	*dim = -1;
	if (int_kwarg(c, "dim", dim))
		return -1;
	if (*dim < -x->rank || *dim >= x->rank) {
		const kb_ref_arg *a = kwarg(c, "dim");
		arg_err(c, a ? a : c->pos[0], "dim=%lld is out of range for '%s' of rank %d",
			(long long)*dim, c->pos[0]->text, x->rank);
		return -1;
	}
	if (*dim < 0)
		*dim += x->rank;
	return 0;
}

static bool is_number(const char *s)
{
	char *end;
	strtod(s, &end);
	return end != s && !*end;
}

static void check_softmax(refctx *c, const shape *x)
{
	int64_t dim;
	if (dim_kwarg(c, x, &dim) == 0)
		expect_out(c, x);
}

/* Whether small (leading 1s dropped) is the trailing dims of big: a bias
 * [N] repeats over [M, N] (the reference's broadcasting). */
static bool trails(const shape *small, const shape *big)
{
	int s0 = 0;
	while (s0 < small->rank && small->d[s0] == 1)
		s0++;
	if (small->rank - s0 > big->rank)
		return false;
	for (int i = s0; i < small->rank; i++)
		if (small->d[i] != big->d[big->rank - small->rank + i])
			return false;
	return true;
}

static void check_elementwise(refctx *c, const shape *x)
{
	shape big = *x;
	for (int i = 1; i < c->npos; i++) {
		shape y;
		char a[160], b[160];
		if (!shape_of(c, c->pos[i]->text, &y) || same_shape(x, &y))
			continue;
		if (trails(&y, x) || trails(x, &y)) {
			if (trails(x, &y))
				big = y;
			continue;
		}
		arg_err(c, c->pos[i], "'%s' has shape %s, but '%s' has %s; %s() needs the same "
			"shape, or one that is the other's last dims (a bias [N] over [M, N])",
			c->pos[i]->text, fmt_shape(&y, a, sizeof(a)), c->pos[0]->text,
			fmt_shape(x, b, sizeof(b)), c->ref->fn);
		return;
	}
	const kb_ref_arg *ap = kwarg(c, "approximate");
	const char *t = ap ? ap->text + (ap->text[0] == '"' || ap->text[0] == '\'') : NULL;
	if (t && strncmp(t, "tanh", 4) && strncmp(t, "none", 4))
		return arg_err(c, ap, "approximate=%s: gelu() takes approximate=none or tanh", ap->text);
	expect_out(c, &big);
}

/* cross_entropy(logits [M, V], target [M]): the loss of each row, [M]. */
static void check_cross_entropy(refctx *c, const shape *x)
{
	shape t;
	char a[160], b[160];
	if (!shape_of(c, c->pos[1]->text, &t))
		return;
	if (x->rank != 2)
		return arg_err(c, c->pos[0], "cross_entropy() needs logits [M, V]; '%s' has rank %d",
			       c->pos[0]->text, x->rank);
	shape want = {1, {x->d[0]}};
	if (!same_shape(&t, &want))
		return arg_err(c, c->pos[1], "'%s' has shape %s, but cross_entropy() needs the targets "
			       "%s (one class index a row of '%s')", c->pos[1]->text,
			       fmt_shape(&t, a, sizeof(a)), fmt_shape(&want, b, sizeof(b)),
			       c->pos[0]->text);
	expect_out(c, &want);
}

static void check_norm(refctx *c, const shape *x)
{
	const kb_ref_arg *eps = kwarg(c, "eps");
	if (eps && !is_number(eps->text))
		arg_err(c, eps, "eps= must be a number");
	if (x->rank == 0)
		return arg_err(c, c->pos[0], "%s() needs a tensor of rank >= 1", c->ref->fn);
	shape want = {1, {x->d[x->rank - 1]}};
	for (int i = 1; i < c->npos; i++) {
		shape w;
		char a[160], b[160];
		if (shape_of(c, c->pos[i]->text, &w) && !same_shape(&w, &want))
			arg_err(c, c->pos[i], "'%s' has shape %s, but %s() needs %s (the last dim of "
				"'%s')", c->pos[i]->text, fmt_shape(&w, a, sizeof(a)), c->ref->fn,
				fmt_shape(&want, b, sizeof(b)), c->pos[0]->text);
	}
	expect_out(c, x);
}

static void check_matmul(refctx *c, const shape *a)
{
	shape b;
	bool ta = false, tb = false;
	if (bool_kwarg(c, "transpose_a", &ta) || bool_kwarg(c, "transpose_b", &tb) ||
	    !shape_of(c, c->pos[1]->text, &b))
		return;
	for (int i = 0; i < 2; i++) {
		const shape *s = i ? &b : a;
		if (s->rank != 2)
			return arg_err(c, c->pos[i], "matmul() needs 2-D tensors; '%s' has rank %d",
				       c->pos[i]->text, s->rank);
	}
	int64_t m = a->d[ta], k1 = a->d[!ta], k2 = b.d[tb], n = b.d[!tb];
	if (k1 != k2)
		return arg_err(c, c->pos[1], "matmul() inner dimensions differ: '%s' gives K=%lld, "
			       "'%s' gives K=%lld", c->pos[0]->text, (long long)k1, c->pos[1]->text,
			       (long long)k2);
	shape want = {2, {m, n}};
	expect_out(c, &want);
}

static void check_reduce(refctx *c, const shape *x)
{
	shape got, drop = {0, {0}}, keep = *x;
	bool keepdim = false, has_keep = kwarg(c, "keepdim") != NULL;
	char a[160], b[160];
	if (bool_kwarg(c, "keepdim", &keepdim) || !shape_of(c, c->ref->outs[0], &got))
		return;
	if (!kwarg(c, "dim")) {
		int64_t n = 1;
		for (int i = 0; i < got.rank; i++)
			n *= got.d[i];
		if (n != 1)
			arg_err(c, NULL, "output '%s' has shape %s, but %s() without dim= gives one "
				"value", c->ref->outs[0], fmt_shape(&got, a, sizeof(a)), c->ref->fn);
		return;
	}
	int64_t dim;
	if (dim_kwarg(c, x, &dim))
		return;
	for (int i = 0; i < x->rank; i++)
		if (i != dim)
			drop.d[drop.rank++] = x->d[i];
	keep.d[dim] = 1;
	bool ok = has_keep ? same_shape(&got, keepdim ? &keep : &drop)
		  : same_shape(&got, &drop) || same_shape(&got, &keep);
	if (!ok)
		arg_err(c, NULL, "output '%s' has shape %s, but %s(dim=%lld) gives %s",
			c->ref->outs[0], fmt_shape(&got, a, sizeof(a)), c->ref->fn, (long long)dim,
			fmt_shape(has_keep && keepdim ? &keep : &drop, b, sizeof(b)));
}

static void check_transpose(refctx *c, const shape *x)
{
	if (x->rank != 2)
		return arg_err(c, c->pos[0], "transpose() needs a 2-D tensor; '%s' has rank %d",
			       c->pos[0]->text, x->rank);
	shape want = {2, {x->d[1], x->d[0]}};
	expect_out(c, &want);
}

/* attention(q, k, v, causal=, scale=): q [..., N, D], k [..., Nk, D],
 * v [..., Nk, Dv] give o [..., N, Dv]; causal and scale may name an arg. */
static void check_attention(refctx *c, const shape *q)
{
	static const char *const keys[] = {"causal", "scale"};
	for (int i = 0; i < 2; i++) {
		const kb_ref_arg *a = kwarg(c, keys[i]);
		if (a && !is_number(a->text) && !kb_compile_spec_arg(c->spec, a->text) &&
		    strcmp(a->text, "true") && strcmp(a->text, "false"))
			return arg_err(c, a, "%s= must be a number, true/false or an arg", keys[i]);
	}
	shape k, v;
	char a[160], b[160];
	if (!shape_of(c, c->pos[1]->text, &k) || !shape_of(c, c->pos[2]->text, &v))
		return;
	if (q->rank < 2 || k.rank != q->rank || v.rank != q->rank)
		return arg_err(c, c->pos[0], "attention() needs q, k and v of one rank >= 2 "
			       "([..., N, D]); they have ranks %d, %d, %d", q->rank, k.rank, v.rank);
	int r = q->rank;
	bool lead = true;
	for (int i = 0; i < r - 2; i++)
		lead = lead && k.d[i] == q->d[i] && v.d[i] == q->d[i];
	if (!lead || k.d[r - 1] != q->d[r - 1] || v.d[r - 2] != k.d[r - 2])
		return arg_err(c, c->pos[1], "attention() needs k [..., Nk, D] and v [..., Nk, Dv] "
			       "for q %s; k is %s", fmt_shape(q, a, sizeof(a)),
			       fmt_shape(&k, b, sizeof(b)));
	shape want = *q;
	want.d[r - 1] = v.d[r - 1];
	expect_out(c, &want);
}

static const struct builtin {
	const char *name;
	int min_pos, max_pos;
	const char *kwargs[3];
	void (*check)(refctx *, const shape *);
} builtins[] = {
	{"softmax", 1, 1, {"dim"}, check_softmax},
	{"log_softmax", 1, 1, {"dim"}, check_softmax},
	{"layernorm", 1, 3, {"eps"}, check_norm},
	{"rmsnorm", 1, 2, {"eps"}, check_norm},
	{"matmul", 2, 2, {"transpose_a", "transpose_b"}, check_matmul},
	{"add", 2, 2, {NULL}, check_elementwise},
	{"mul", 2, 2, {NULL}, check_elementwise},
	{"relu", 1, 1, {NULL}, check_elementwise},
	{"gelu", 1, 1, {"approximate"}, check_elementwise},
	{"silu", 1, 1, {NULL}, check_elementwise},
	{"copy", 1, 1, {NULL}, check_elementwise},
	{"sum", 1, 1, {"dim", "keepdim"}, check_reduce},
	{"max", 1, 1, {"dim", "keepdim"}, check_reduce},
	{"transpose", 1, 1, {NULL}, check_transpose},
	{"axpy", 3, 3, {NULL}, check_elementwise}, /* axpy(a, x, y): pos[0] is the scalar */
	{"attention", 3, 3, {"causal", "scale"}, check_attention},
	{"cross_entropy", 2, 2, {NULL}, check_cross_entropy},
};

/* Keyword arguments are known ones, given once. */
static int check_kwargs(refctx *c, const struct builtin *b)
{
	int rc = 0;
	for (int i = 0; i < c->ref->nargs; i++) {
		const kb_ref_arg *a = &c->ref->args[i];
		bool known = false;
		if (!a->key)
			continue;
		for (int j = 0; j < 3 && b->kwargs[j]; j++)
			known |= !strcmp(a->key, b->kwargs[j]);
		if (!known) {
			kb_buf k = KB_BUF_INIT;
			for (int j = 0; j < 3 && b->kwargs[j]; j++)
				kb_buf_catf(&k, "%s%s=", j ? ", " : "", b->kwargs[j]);
			arg_err(c, a, "%s() has no argument '%s'%s%s%s", b->name, a->key,
				k.len ? " (known: " : "", k.len ? k.s : "", k.len ? ")" : "");
			kb_buf_free(&k);
			rc = -1;
		} else if (kwarg(c, a->key) != a) {
			arg_err(c, a, "'%s' is given twice", a->key);
			rc = -1;
		}
	}
	return rc;
}

/* Positional arguments: count, and tensors where tensors go. */
static int check_positional(refctx *c, const struct builtin *b)
{
	bool axpy = !strcmp(b->name, "axpy");
	const kb_loc *l = &c->ref->loc;
	if (c->npos < b->min_pos) {
		ERR(c->d, c->src, l->line, l->col, (int)strlen(b->name), "%s() takes %d%s "
		    "argument%s, got %d", b->name, b->min_pos, b->max_pos > b->min_pos ? " or more" : "",
		    b->min_pos == 1 ? "" : "s", c->npos);
		return -1;
	}
	if (c->npos > b->max_pos) {
		arg_err(c, c->pos[b->max_pos], "%s() takes at most %d argument%s", b->name, b->max_pos,
			b->max_pos == 1 ? "" : "s");
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < c->npos; i++) {
		const char *t = c->pos[i]->text;
		bool tensor = kb_compile_spec_tensor(c->spec, t) != NULL;
		if (axpy && i == 0) {
			if (tensor) {
				arg_err(c, c->pos[i], "axpy()'s first argument is a scalar (an arg or a "
					"number), but '%s' is a tensor", t);
				rc = -1;
			}
		} else if (!tensor) {
			if (kb_compile_spec_arg(c->spec, t) || is_number(t) || !strcmp(t, "true") ||
			    !strcmp(t, "false"))
				arg_err(c, c->pos[i], "%s() needs a tensor here; '%s' is not one", b->name, t);
			rc = -1; /* an undefined name was reported by the parser */
		}
	}
	return rc;
}

/* Finds where the first output is written on the ref line (after "->"). */
static void locate_out(refctx *c)
{
	const kb_loc *l = &c->ref->loc;
	char *line = kb_src_line(c->src->text, l->line);
	const char *name = c->ref->outs[0];
	size_t n = strlen(name);
	c->out_line = l->line;
	c->out_col = l->col;
	c->out_len = (int)strlen(c->ref->fn);
	const char *p = line ? strstr(line, "->") : NULL;
	for (; p && (p = strstr(p, name)); p += n) {
		if (!is_word_char(p[-1]) && !is_word_char(p[n])) {
			c->out_col = (int)(p - line) + 1;
			c->out_len = (int)n;
			break;
		}
	}
	free(line);
}

void kb_compile__bind_builtin(const kb_spec *spec, const kb_source *src, kb_diags *d)
{
	const kb_spec_ref *r = &spec->ref;
	const struct builtin *b = NULL;
	for (size_t i = 0; i < KB_ARRAY_LEN(builtins); i++)
		if (!strcmp(builtins[i].name, r->fn))
			b = &builtins[i];
	if (!b) {
		kb_buf k = KB_BUF_INIT;
		for (size_t i = 0; i < KB_ARRAY_LEN(builtins); i++)
			kb_buf_catf(&k, "%s%s", i ? ", " : "", builtins[i].name);
		ERR(d, src, r->loc.line, r->loc.col, (int)strlen(r->fn), "unknown reference '%s' "
		    "(built-ins: %s; or `ref kernel NAME`)", r->fn, k.s);
		kb_buf_free(&k);
		return;
	}
	refctx c = {spec, src, d, r, {NULL}, 0, 0, 0, 0};
	for (int i = 0; i < r->nargs; i++)
		if (!r->args[i].key && c.npos < 4)
			c.pos[c.npos++] = &r->args[i];
	if (r->nouts != 1) {
		ERR(d, src, r->loc.line, r->loc.col, (int)strlen(r->fn), "%s() writes one output, "
		    "not %d", b->name, r->nouts);
		return;
	}
	locate_out(&c);
	shape x;
	int rc1 = check_positional(&c, b), rc2 = check_kwargs(&c, b);
	int first = !strcmp(b->name, "axpy");
	if (!rc1 && !rc2 && shape_of(&c, c.pos[first]->text, &x)) {
		if (first) { /* axpy: x and y after the scalar */
			c.pos[0] = c.pos[1];
			c.pos[1] = c.pos[2];
			c.npos = 2;
		}
		b->check(&c, &x);
	}
}

