/*
 * reference_call.c - one call of a built-in reference bound to its spec and
 * inputs (kb_profile__refcall): its arguments resolved (input tensors by
 * name; scalars as numbers, true/false or spec args; dims normalised
 * against a rank), its errors said as "file:line:col: ref FN: message",
 * and its output checked against the spec's output tensor and allocated.
 * Computes nothing.
 *
 * Invariants: a keyword argument counts as used once looked up, and one
 * left unused when the output is allocated is an error; the output takes
 * the spec's shape, which must equal the reference's natural shape once
 * size-1 dims are ignored.
 */
#include "reference.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the call: arguments, errors, output ===== */

/* Fails with "file:line:col: ref FN: message"; returns KB_EINVAL. */
int KB_PRINTF(2, 3) kb_profile__ref_fail(kb_profile__refcall *c, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const kb_loc *l = &c->ref->loc;
	if (l->file && l->line > 0)
		return kb_err_set(c->err, KB_EINVAL, KB_DOM_SPEC, 0, "%s:%d:%d: ref %s: %s",
				  l->file, l->line, l->col, c->ref->fn, msg);
	return kb_err_set(c->err, KB_EINVAL, KB_DOM_SPEC, 0, "ref %s: %s", c->ref->fn, msg);
}

/* "[4, 6]" into buf. */
const char *kb_profile__ref_shape_str(int rank, const int64_t *dims, char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "[");
	for (int d = 0; d < rank && used < n; d++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? ", " : "",
					 (long long)dims[d]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
	return buf;
}

static const kb_tensor *find_input(const kb_profile__refcall *c, const char *name)
{
	for (int i = 0; i < c->nins; i++)
		if (c->ins[i].name && !strcmp(c->ins[i].name, name))
			return &c->ins[i];
	return NULL;
}

/* A number, true/false, or a spec arg's value.  Returns 0 or -1. */
int kb_profile__ref_scalar_value(const kb_profile__refcall *c, const char *text, double *v)
{
	char *end;
	if (!strcmp(text, "true") || !strcmp(text, "True")) {
		*v = 1;
		return 0;
	}
	if (!strcmp(text, "false") || !strcmp(text, "False")) {
		*v = 0;
		return 0;
	}
	*v = strtod(text, &end);
	if (end != text && *end == 0)
		return 0;
	for (int i = 0; c->spec && i < c->spec->nargs; i++) {
		const kb_spec_arg *a = &c->spec->args[i];
		if (a->name && !strcmp(a->name, text)) {
			*v = a->value.is_float ? a->value.f : (double)a->value.i;
			return 0;
		}
	}
	return -1;
}

/* The keyword argument `key`, marked as used, or NULL. */
const kb_ref_arg *kb_profile__ref_kw_find(kb_profile__refcall *c, const char *key)
{
	for (int i = 0; i < c->nkw; i++) {
		if (!strcmp(c->kw[i]->key, key)) {
			c->kw_used[i] = true;
			return c->kw[i];
		}
	}
	return NULL;
}

/* A scalar given at position pos (when there are that many positional
 * arguments) or as key=...; def when absent.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_param(kb_profile__refcall *c, int pos, const char *key, double def, double *v)
{
	const kb_ref_arg *a = pos >= 0 && pos < c->npos ? c->pos[pos]
							: kb_profile__ref_kw_find(c, key);
	*v = def;
	if (!a)
		return 0;
	if (kb_profile__ref_scalar_value(c, a->text, v))
		return kb_profile__ref_fail(c, "%s='%s' is not a number, true/false or an arg", key,
					    a->text);
	return 0;
}

/* An integer dim normalised against rank (negative from the end). */
int kb_profile__ref_dim_param(kb_profile__refcall *c, int pos, const kb_tensor *x, int def,
			      int *dim)
{
	double v;
	int rc = kb_profile__ref_param(c, pos, "dim", def, &v);
	if (rc)
		return rc;
	int r = x->rank > 0 ? x->rank : 1;
	if (v != floor(v) || v < -r || v >= r)
		return kb_profile__ref_fail(c, "dim=%g is out of range for %s of rank %d (use -%d .. %d)",
					    v, x->name, x->rank, r, r - 1);
	*dim = (int)(v < 0 ? v + r : v);
	return 0;
}

/* The tensor at position pos or key=NAME; NULL (and 0) when optional and absent. */
int kb_profile__ref_tensor_arg(kb_profile__refcall *c, int pos, const char *key, bool required,
			       const kb_tensor **t)
{
	const kb_ref_arg *a = pos < c->npos ? c->pos[pos]
			      : key ? kb_profile__ref_kw_find(c, key) : NULL;
	*t = NULL;
	if (!a)
		return required ? kb_profile__ref_fail(c, "missing argument %d (%s)", pos + 1,
						       key ? key : "a tensor")
				: 0;
	if (!(*t = find_input(c, a->text)))
		return kb_profile__ref_fail(c, "'%s' is not an input tensor (argument %d)", a->text,
					    pos + 1);
	return 0;
}

/* Evaluates the dims of the spec's tensor `name`; returns its rank, or -1
 * when the spec has no such tensor, or -2 when a dim does not evaluate. */
int kb_profile__ref_spec_dims(const kb_profile__refcall *c, const char *name, int64_t *dims)
{
	for (int i = 0; c->spec && i < c->spec->ntensors; i++) {
		const kb_spec_tensor *t = &c->spec->tensors[i];
		if (!t->name || strcmp(t->name, name))
			continue;
		for (int d = 0; d < t->rank; d++) {
			kb_value v;
			if (!t->dims[d] || kb_compile_spec_eval(c->spec, t->dims[d], &v, c->src, NULL))
				return -2;
			dims[d] = v.is_float ? (int64_t)v.f : v.i;
		}
		return t->rank;
	}
	return -1;
}

/* Shapes equal once size-1 dims are dropped. */
static bool same_squeezed(int ra, const int64_t *a, int rb, const int64_t *b)
{
	int i = 0, j = 0;
	for (;;) {
		while (i < ra && a[i] == 1)
			i++;
		while (j < rb && b[j] == 1)
			j++;
		if (i == ra || j == rb)
			return i == ra && j == rb;
		if (a[i++] != b[j++])
			return false;
	}
}

/* Checks leftover keywords and the natural shape against the spec's output,
 * then allocates the (zeroed) result.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_alloc_out(kb_profile__refcall *c, int rank, const int64_t *dims)
{
	for (int i = 0; i < c->nkw; i++)
		if (!c->kw_used[i])
			return kb_profile__ref_fail(c, "unknown keyword '%s'", c->kw[i]->key);
	kb_ref_out *o = c->out;
	int64_t sd[KB_MAX_RANK];
	int sr = kb_profile__ref_spec_dims(c, c->out_name, sd);
	char a[160], b[160];
	if (sr == -2)
		return kb_profile__ref_fail(c, "the shape of output '%s' does not evaluate",
					    c->out_name);
	if (sr >= 0 && !same_squeezed(rank, dims, sr, sd))
		return kb_profile__ref_fail(c, "the reference gives %s but '%s' is %s",
					    kb_profile__ref_shape_str(rank, dims, a, sizeof(a)),
					    c->out_name,
					    kb_profile__ref_shape_str(sr, sd, b, sizeof(b)));
	if (sr < 0) {
		sr = rank;
		memcpy(sd, dims, (size_t)rank * sizeof(*dims));
	}
	o->name = kb_xstrdup(c->out_name);
	o->rank = sr;
	o->n = 1;
	for (int d = 0; d < sr; d++)
		o->n *= (o->dims[d] = sd[d]);
	o->v = kb_big_calloc((size_t)(o->n > 0 ? o->n : 1) * sizeof(double));
	return 0;
}
