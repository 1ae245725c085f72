/*
 * reference_elementwise.c - the element-by-element built-in references:
 * add, mul and axpy (one operand may repeat over the other's leading
 * dims, numpy-style), relu, gelu (exact, or approximate=tanh), silu and
 * copy; and transpose of a 2-D tensor, tile by tile.
 *
 * Invariants: a broadcast operand is converted to doubles once and read
 * wrapped around; a work item is KB_REF_EW_CHUNK elements
 * (transpose: 32 rows); NaN passes through relu.
 */
#include "reference.h"

#include <math.h>
#include <string.h>

#define SQRT_2_OVER_PI 0.79788456080286535588

/* ===== elementwise: add, mul, axpy, relu, gelu, silu, copy ===== */

typedef enum { E_ADD, E_MUL, E_AXPY, E_RELU, E_GELU, E_GELU_TANH, E_SILU, E_COPY } ewop;

typedef struct {
	ewop op;
	double alpha;
	const kb_tensor *a, *b;     /* b NULL for unary ops */
	const double *abc, *bbc;    /* a broadcast operand converted whole, or NULL */
	int64_t n;
	double *out;
} ewjob;

static double ew_one(const ewjob *j, double x, double y)
{
	switch (j->op) {
	case E_ADD: return x + y;
	case E_MUL: return x * y;
	case E_AXPY: return j->alpha * x + y;
	case E_RELU: return x > 0 || isnan(x) ? x : 0;
	case E_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
	case E_GELU_TANH:
		return 0.5 * x * (1 + tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)));
	case E_SILU: return x / (1 + exp(-x));
	case E_COPY: return x;
	}
	KB_UNREACHABLE();
}

/* Operand elements [i, i+n) into dst: a run, or wrapped from a broadcast copy. */
static void ew_load(const kb_tensor *t, const double *bc, int64_t i, int64_t n, double *dst)
{
	if (!bc) {
		kb_profile__ref_get_run(t, i, n, dst);
		return;
	}
	for (int64_t k = 0; k < n; k++)
		dst[k] = bc[(i + k) % t->n];
}

static void ew_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const ewjob *j = p;
	for (int64_t i = lo * KB_REF_EW_CHUNK; i < hi * KB_REF_EW_CHUNK && i < j->n;
	     i += KB_REF_EW_CHUNK) {
		int64_t n = j->n - i < KB_REF_EW_CHUNK ? j->n - i : KB_REF_EW_CHUNK;
		ew_load(j->a, j->abc, i, n, s);
		if (j->b)
			ew_load(j->b, j->bbc, i, n, s + KB_REF_EW_CHUNK);
		for (int64_t k = 0; k < n; k++)
			j->out[i + k] = ew_one(j, s[k], j->b ? s[KB_REF_EW_CHUNK + k] : 0);
	}
}

/* Whether small (leading 1s dropped) equals the trailing dims of big. */
static bool broadcasts(const kb_tensor *small, const kb_tensor *big)
{
	int s0 = 0;
	while (s0 < small->rank && small->dims[s0] == 1)
		s0++;
	int rs = small->rank - s0;
	if (rs > big->rank)
		return false;
	for (int d = 0; d < rs; d++)
		if (small->dims[s0 + d] != big->dims[big->rank - rs + d])
			return false;
	return true;
}

static int run_binary(kb_profile__refcall *c, ewjob *j)
{
	const kb_tensor *big = j->b->n > j->a->n ? j->b : j->a;
	const kb_tensor *small = big == j->a ? j->b : j->a;
	char sa[160], sb[160];
	if (!broadcasts(small, big))
		return kb_profile__ref_fail(c, "'%s' %s and '%s' %s do not broadcast (an operand may only repeat "
					    "over leading dims, like a bias [N] over [M, N])", j->a->name,
					    kb_profile__ref_shape_str(j->a->rank, j->a->dims, sa,
								      sizeof(sa)),
					    j->b->name,
					    kb_profile__ref_shape_str(j->b->rank, j->b->dims, sb,
								      sizeof(sb)));
	int rc = kb_profile__ref_alloc_out(c, big->rank, big->dims);
	if (rc)
		return rc;
	double *bc = small->n < big->n && small->n > 0 ? kb_profile__ref_to_doubles(small, 1)
						       : NULL;
	j->abc = small == j->a ? bc : NULL;
	j->bbc = small == j->b ? bc : NULL;
	j->n = big->n;
	j->out = c->out->v;
	if (j->n > 0 && small->n > 0)
		kb_profile__ref_parallel_for((j->n + KB_REF_EW_CHUNK - 1) / KB_REF_EW_CHUNK,
					     KB_REF_EW_CHUNK * 2.0, c->nthreads,
					     2 * KB_REF_EW_CHUNK, ew_range, j);
	kb_big_free(bc);
	return 0;
}

int kb_profile__ref_binary(kb_profile__refcall *c)
{
	ewjob j = {.op = strcmp(c->ref->fn, "add") ? E_MUL : E_ADD};
	int rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &j.a)) ||
	    (rc = kb_profile__ref_tensor_arg(c, 1, NULL, true, &j.b)))
		return rc;
	return run_binary(c, &j);
}

int kb_profile__ref_axpy(kb_profile__refcall *c)
{
	ewjob j = {.op = E_AXPY};
	int rc;
	if (c->npos < 1 || kb_profile__ref_scalar_value(c, c->pos[0]->text, &j.alpha))
		return kb_profile__ref_fail(c, "the first argument must be a number or an arg (axpy(a, x, y))");
	if ((rc = kb_profile__ref_tensor_arg(c, 1, NULL, true, &j.a)) ||
	    (rc = kb_profile__ref_tensor_arg(c, 2, NULL, true, &j.b)))
		return rc;
	return run_binary(c, &j);
}

int kb_profile__ref_unary(kb_profile__refcall *c)
{
	static const struct { const char *fn; ewop op; } ops[] = {
		{"relu", E_RELU}, {"gelu", E_GELU}, {"silu", E_SILU}, {"copy", E_COPY},
	};
	ewjob j = {.op = E_COPY};
	for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
		if (!strcmp(c->ref->fn, ops[i].fn))
			j.op = ops[i].op;
	const kb_ref_arg *ap = j.op == E_GELU ? kb_profile__ref_kw_find(c, "approximate") : NULL;
	if (ap) {
		const char *t = ap->text + (ap->text[0] == '"' || ap->text[0] == '\'');
		if (!strncmp(t, "tanh", 4))
			j.op = E_GELU_TANH;
		else if (strncmp(t, "none", 4))
			return kb_profile__ref_fail(c, "approximate=%s: expected none or tanh",
						    ap->text);
	}
	int rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &j.a)) ||
	    (rc = kb_profile__ref_alloc_out(c, j.a->rank, j.a->dims)))
		return rc;
	j.n = j.a->n;
	j.out = c->out->v;
	kb_profile__ref_parallel_for((j.n + KB_REF_EW_CHUNK - 1) / KB_REF_EW_CHUNK,
				     KB_REF_EW_CHUNK * 8.0, c->nthreads, KB_REF_EW_CHUNK,
				     ew_range, &j);
	return 0;
}

/* ===== transpose ===== */

typedef struct {
	const kb_tensor *x;
	int64_t m, n;
	double *out;
} trjob;

static void tr_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const trjob *j = p;
	for (int64_t i0 = lo * 32; i0 < hi * 32 && i0 < j->m; i0 += 32) {
		int64_t ie = i0 + 32 < j->m ? i0 + 32 : j->m;
		for (int64_t j0 = 0; j0 < j->n; j0 += 64) {
			int64_t nb = j->n - j0 < 64 ? j->n - j0 : 64;
			for (int64_t i = i0; i < ie; i++) {
				kb_profile__ref_get_run(j->x, i * j->n + j0, nb, s);
				for (int64_t k = 0; k < nb; k++)
					j->out[(j0 + k) * j->m + i] = s[k];
			}
		}
	}
}

int kb_profile__ref_transpose(kb_profile__refcall *c)
{
	const kb_tensor *x;
	int rc;
	char buf[160];
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &x)))
		return rc;
	if (x->rank != 2)
		return kb_profile__ref_fail(c, "'%s' is %s; transpose takes a 2-D tensor", x->name,
					    kb_profile__ref_shape_str(x->rank, x->dims, buf,
								      sizeof(buf)));
	int64_t dims[2] = {x->dims[1], x->dims[0]};
	if ((rc = kb_profile__ref_alloc_out(c, 2, dims)))
		return rc;
	trjob j = {x, x->dims[0], x->dims[1], c->out->v};
	kb_profile__ref_parallel_for((j.m + 31) / 32, 32.0 * (double)j.n, c->nthreads, 64, tr_range,
				     &j);
	return 0;
}
