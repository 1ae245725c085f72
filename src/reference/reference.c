/*
 * reference.c - the built-in CPU references of `//! ref FN(args) -> out`,
 * computed in double precision from the input tensors, whatever their
 * dtype (every element goes through the exact kb_tensor_get conversion, or
 * a loop equivalent to it).  This file owns the table of built-ins and the
 * entry point: finding FN, splitting its arguments into positional and
 * keyword ones, running it and freeing a result.  The references are
 * beside it by family: reference_rows.c (softmax, log_softmax, layernorm,
 * rmsnorm, sum, max), reference_elementwise.c (add, mul, axpy, relu, gelu,
 * silu, copy, transpose), reference_matmul.c and reference_attention.c; reference_call.c binds a
 * call to its spec (arguments, errors, the output) and
 * reference_parallel.c runs the work on threads.  None of them compares
 * (compare.c) or touches the GPU.  A Python reference (`ref numpy|torch`)
 * goes to pyref.c from the entry point.
 *
 * Arguments: positional ones name input tensors, or (for scalars such as
 * axpy's a) a spec arg or a number; keyword ones are numbers, true/false or
 * spec arg names (dim=1, eps=1e-5, transpose_b=true, approximate=tanh).
 * Negative dims count from the end.  An unknown keyword is an error.
 *
 * Built-ins (x, a, b, w, y tensors; D a dim, default -1):
 *   softmax(x, dim=D)  log_softmax(x, dim=D)
 *   layernorm(x[, weight[, bias]], eps=1e-5)   over the last dim, biased var
 *   rmsnorm(x[, weight], eps=1e-6)             over the last dim
 *   matmul(a, b, transpose_a=false, transpose_b=false)
 *       a[M, K] (a[K, M] transposed), b[K, N] (b[N, K]); either may carry a
 *       leading batch dim [B, ...]; a 2-D operand is shared by every batch
 *   add(a, b)  mul(a, b)  axpy(alpha, x, y) = alpha * x + y
 *       shapes equal, or one operand's shape (leading 1s dropped) equals the
 *       trailing dims of the other (a bias [N] over [M, N]), numpy-style
 *   relu(x)  gelu(x, approximate=none|tanh)  silu(x)  copy(x)  transpose(x)
 *   cross_entropy(logits, target)   logits [M, V], target [M] class indices:
 *       the loss of each row, logsumexp(row) - row[target] ([M], no mean)
 *   sum(x, dim=D)  max(x, dim=D)   no dim: over all elements; the output
 *       may drop the dim or keep it as 1 (either rank is accepted)
 *   attention(q, k, v, causal=false, scale=1/sqrt(D))   q [..., N, D]:
 *       sampled rows at large sizes (reference_attention.c)
 *
 * Output shape: the reference's natural shape must equal the spec's output
 * tensor's shape once size-1 dims are ignored; the result takes the spec's
 * shape so it lines up with the output tensor.  (bind.c checks this at spec
 * time too; this is the second line of defence.)
 */
#include "reference.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the table and the entry point ===== */

typedef struct {
	const char *name;
	int min_pos, max_pos;
	int (*run)(kb_profile__refcall *c);
} refop;

static const refop ops[] = {
	{"softmax", 1, 2, kb_profile__ref_softmax},
	{"log_softmax", 1, 2, kb_profile__ref_softmax},
	{"layernorm", 1, 3, kb_profile__ref_norm},
	{"rmsnorm", 1, 2, kb_profile__ref_norm},
	{"matmul", 2, 2, kb_profile__ref_matmul},
	{"add", 2, 2, kb_profile__ref_binary},
	{"mul", 2, 2, kb_profile__ref_binary},
	{"relu", 1, 1, kb_profile__ref_unary},
	{"gelu", 1, 1, kb_profile__ref_unary},
	{"silu", 1, 1, kb_profile__ref_unary},
	{"sum", 1, 2, kb_profile__ref_reduce},
	{"max", 1, 2, kb_profile__ref_reduce},
	{"transpose", 1, 1, kb_profile__ref_transpose},
	{"copy", 1, 1, kb_profile__ref_unary},
	{"axpy", 3, 3, kb_profile__ref_axpy},
	{"attention", 3, 3, kb_profile__ref_attention},
	{"cross_entropy", 2, 2, kb_profile__ref_cross_entropy},
};

/* The built-in reference names, NULL-terminated. */
const char *const *kb_profile_reference_names(void)
{
	static const char *names[KB_ARRAY_LEN(ops) + 1];
	for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
		names[i] = ops[i].name;
	return names;
}

/* Splits the ref's arguments into positional and keyword ones. */
static int split_args(kb_profile__refcall *c, const refop *op)
{
	for (int i = 0; i < c->ref->nargs; i++) {
		const kb_ref_arg *a = &c->ref->args[i];
		if (!a->text)
			return kb_profile__ref_fail(c, "argument %d has no value", i + 1);
		if (a->key && c->nkw < KB_REF_MAXKW)
			c->kw[c->nkw++] = a;
		else if (!a->key && c->npos < KB_REF_MAXPOS)
			c->pos[c->npos++] = a;
		else
			return kb_profile__ref_fail(c, "too many arguments");
	}
	if (c->npos < op->min_pos || c->npos > op->max_pos) {
		char range[32];
		if (op->min_pos == op->max_pos)
			snprintf(range, sizeof(range), "%d", op->min_pos);
		else
			snprintf(range, sizeof(range), "%d to %d", op->min_pos, op->max_pos);
		return kb_profile__ref_fail(c, "takes %s positional argument(s), got %d", range,
					    c->npos);
	}
	return 0;
}

static const refop *find_op(const char *name)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

/* Computes the spec's built-in reference into outs[0] (every built-in has
 * one output).  Returns 0, or KB_EINVAL with err naming the problem. */
int kb_profile_reference(const kb_spec *spec, const kb_source *src, const kb_tensor *ins,
			 int nins, kb_ref_out *outs, int nthreads, kb_err *err)
{
	kb_profile__refcall c = {.spec = spec, .src = src, .ref = &spec->ref, .ins = ins,
				 .nins = nins, .out = outs, .nthreads = nthreads, .err = err};
	const kb_spec_ref *r = &spec->ref;
	if (outs && r->nouts > 0)
		memset(outs, 0, (size_t)r->nouts * sizeof(*outs));
	if (r->present && r->py.lang != KB_PYREF_NONE) {
		int rc = r->nouts > 0 ? kb_profile__pyref_run(&c) : 0;
		for (int i = 0; rc && i < r->nouts; i++)
			kb_ref_out_free(&outs[i]);
		return rc;
	}
	if (!r->present || r->is_kernel || !r->fn)
		return kb_err_set(err, KB_EINVAL, KB_DOM_SPEC, 0, "the spec has no built-in reference");
	const refop *op = find_op(r->fn);
	if (!op) {
		kb_buf known = KB_BUF_INIT;
		for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
			kb_buf_catf(&known, "%s%s", i ? ", " : "", ops[i].name);
		int rc = kb_profile__ref_fail(&c, "unknown reference (built-ins: %s)", known.s);
		kb_buf_free(&known);
		return rc;
	}
	if (r->nouts != 1 || !r->outs || !r->outs[0])
		return kb_profile__ref_fail(&c, "gives one output; the spec names %d after '->'",
					    r->nouts);
	c.out_name = r->outs[0];
	int rc = split_args(&c, op);
	if (!rc)
		rc = op->run(&c);
	if (rc)
		kb_ref_out_free(outs);
	return rc;
}

/* Frees a reference result; o may be reused. */
void kb_ref_out_free(kb_ref_out *o)
{
	free(o->name);
	free(o->ran);
	kb_big_free(o->v);
	memset(o, 0, sizeof(*o));
}
