/*
 * reference_rows.c - the built-in references that work row by row along
 * one dim: softmax and log_softmax, layernorm and rmsnorm (over the last
 * dim, biased variance, optional per-column weight and bias), and the sum
 * and max reductions (over a dim, or over every element), and
 * cross_entropy (each row's logsumexp minus its target's logit).  Rows along an
 * inner dim are gathered LANES at a time so that reads stay contiguous.
 *
 * Invariants: a row is computed in double in its thread's scratch; max and
 * softmax propagate NaN; empty rows leave the output zero.
 */
#include "reference.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define LANES 16                      /* strided rows gathered together */

/* ===== rows: softmax, log_softmax, layernorm, rmsnorm, sum, max ===== */

typedef enum { R_SOFTMAX, R_LOGSOFTMAX, R_LAYERNORM, R_RMSNORM, R_SUM, R_MAX } rowop;

typedef struct {
	rowop op;
	const kb_tensor *x;
	const double *w, *b;        /* norms: per-column weight and bias, or NULL */
	double eps;
	int64_t outer, len, inner;  /* x viewed as [outer, len, inner], reducing len */
	int64_t lanes, groups;      /* rows gathered per item; items per outer index */
	double *out;
} rowjob;

static void row_softmax(double *x, int64_t n, bool take_log)
{
	double m = -INFINITY, s = 0;
	for (int64_t k = 0; k < n; k++)
		m = x[k] > m || isnan(x[k]) ? x[k] : m;
	if (take_log) {
		for (int64_t k = 0; k < n; k++)
			s += exp(x[k] - m);
		double lse = m + log(s);
		for (int64_t k = 0; k < n; k++)
			x[k] -= lse;
		return;
	}
	for (int64_t k = 0; k < n; k++)
		s += (x[k] = exp(x[k] - m));
	double inv = 1 / s;
	for (int64_t k = 0; k < n; k++)
		x[k] *= inv;
}

static void row_norm(const rowjob *j, double *x, int64_t n)
{
	double mean = 0, var = 0;
	if (j->op == R_LAYERNORM) {
		for (int64_t k = 0; k < n; k++)
			mean += x[k];
		mean /= (double)n;
	}
	for (int64_t k = 0; k < n; k++)
		var += (x[k] - mean) * (x[k] - mean);
	double inv = 1 / sqrt(var / (double)n + j->eps);
	for (int64_t k = 0; k < n; k++) {
		double y = (x[k] - mean) * inv;
		x[k] = y * (j->w ? j->w[k] : 1) + (j->b ? j->b[k] : 0);
	}
}

/* Reduces one row (sum or max, NaN propagating); others transform in place. */
static double row_apply(const rowjob *j, double *x)
{
	double r;
	switch (j->op) {
	case R_SOFTMAX: row_softmax(x, j->len, false); return 0;
	case R_LOGSOFTMAX: row_softmax(x, j->len, true); return 0;
	case R_LAYERNORM:
	case R_RMSNORM: row_norm(j, x, j->len); return 0;
	case R_SUM:
		r = 0;
		for (int64_t k = 0; k < j->len; k++)
			r += x[k];
		return r;
	case R_MAX:
		r = -INFINITY;
		for (int64_t k = 0; k < j->len; k++)
			r = x[k] > r || isnan(x[k]) ? x[k] : r;
		return r;
	}
	KB_UNREACHABLE();
}

static void row_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const rowjob *j = p;
	bool reduce = j->op == R_SUM || j->op == R_MAX;
	double tmp[LANES];
	for (int64_t it = lo; it < hi; it++) {
		int64_t o = it / j->groups, g0 = (it % j->groups) * j->lanes;
		int64_t gn = j->inner - g0 < j->lanes ? j->inner - g0 : j->lanes;
		int64_t base = o * j->len * j->inner + g0;
		if (j->inner == 1)
			kb_profile__ref_get_run(j->x, base, j->len, s);
		for (int64_t k = 0; j->inner > 1 && k < j->len; k++) {
			kb_profile__ref_get_run(j->x, base + k * j->inner, gn, tmp);
			for (int64_t g = 0; g < gn; g++)
				s[g * j->len + k] = tmp[g];
		}
		for (int64_t g = 0; g < gn; g++) {
			double *row = s + g * j->len, r = row_apply(j, row);
			if (reduce) {
				j->out[o * j->inner + g0 + g] = r;
				continue;
			}
			for (int64_t k = 0; k < j->len; k++)
				j->out[base + k * j->inner + g] = row[k];
		}
	}
}

/* Runs a row op over dim of x (all elements when dim < 0). */
static void run_rows(kb_profile__refcall *c, rowjob *j, int dim)
{
	const kb_tensor *x = j->x;
	j->outer = 1;
	j->len = 1;
	j->inner = 1;
	for (int d = 0; d < x->rank; d++) {
		int64_t *part = dim < 0 || d == dim ? &j->len : d < dim ? &j->outer : &j->inner;
		*part *= x->dims[d];
	}
	j->lanes = j->inner < LANES ? j->inner : LANES;
	j->groups = j->lanes ? (j->inner + j->lanes - 1) / j->lanes : 0;
	j->out = c->out->v;
	if (j->len == 0 || j->lanes == 0)
		return;   /* empty rows: sums stay 0 (max of nothing is left 0 too) */
	kb_profile__ref_parallel_for(j->outer * j->groups, (double)(j->len * j->lanes) * 4,
				     c->nthreads, (size_t)(j->len * j->lanes), row_range, j);
}

/* The shape of x with dim removed (all removed when dim < 0). */
static int reduced_shape(const kb_tensor *x, int dim, int64_t *dims)
{
	int r = 0;
	for (int d = 0; dim >= 0 && d < x->rank; d++)
		if (d != dim)
			dims[r++] = x->dims[d];
	return r;
}

int kb_profile__ref_softmax(kb_profile__refcall *c)
{
	const kb_tensor *x;
	int dim, rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &x)) ||
	    (rc = kb_profile__ref_dim_param(c, 1, x, -1, &dim)) ||
	    (rc = kb_profile__ref_alloc_out(c, x->rank, x->dims)))
		return rc;
	rowjob j = {.op = strcmp(c->ref->fn, "softmax") ? R_LOGSOFTMAX : R_SOFTMAX, .x = x};
	run_rows(c, &j, dim);
	return 0;
}

int kb_profile__ref_reduce(kb_profile__refcall *c)
{
	const kb_tensor *x;
	int64_t dims[KB_MAX_RANK];
	int dim = -1, rc;
	double keep;
	bool has_dim = c->npos > 1 || kb_profile__ref_kw_find(c, "dim");
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &x)) ||
	    (has_dim && (rc = kb_profile__ref_dim_param(c, 1, x, -1, &dim))) ||
	    (rc = kb_profile__ref_param(c, -1, "keepdim", 0, &keep)) ||
	    (rc = kb_profile__ref_alloc_out(c, reduced_shape(x, dim, dims), dims)))
		return rc;
	rowjob j = {.op = strcmp(c->ref->fn, "sum") ? R_MAX : R_SUM, .x = x};
	if (x->rank == 0)
		dim = -1;
	run_rows(c, &j, dim);
	return 0;
}

/* weight/bias of a norm: n must equal the last dim of x; NULL when absent. */
static int norm_vec(kb_profile__refcall *c, int pos, const char *key, const kb_tensor *x,
		    double **v)
{
	const kb_tensor *t;
	char buf[160];
	int rc = kb_profile__ref_tensor_arg(c, pos, key, false, &t);
	*v = NULL;
	if (rc || !t)
		return rc;
	int64_t last = x->rank ? x->dims[x->rank - 1] : 1;
	if (t->n != last)
		return kb_profile__ref_fail(c, "%s '%s' is %s (%lld elements) but the last dim of '%s' is %lld",
					    key, t->name,
					    kb_profile__ref_shape_str(t->rank, t->dims, buf,
								      sizeof(buf)),
					    (long long)t->n, x->name, (long long)last);
	*v = kb_profile__ref_to_doubles(t, 1);
	return 0;
}

int kb_profile__ref_norm(kb_profile__refcall *c)
{
	bool layer = !strcmp(c->ref->fn, "layernorm");
	const kb_tensor *x;
	double *w = NULL, *b = NULL, eps;
	int rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &x)) ||
	    (rc = norm_vec(c, 1, "weight", x, &w)) ||
	    (layer && (rc = norm_vec(c, 2, "bias", x, &b))) ||
	    (rc = kb_profile__ref_param(c, -1, "eps", layer ? 1e-5 : 1e-6, &eps)) ||
	    (rc = kb_profile__ref_alloc_out(c, x->rank, x->dims)))
		goto out;
	rowjob j = {.op = layer ? R_LAYERNORM : R_RMSNORM, .x = x, .w = w, .b = b, .eps = eps};
	run_rows(c, &j, x->rank ? x->rank - 1 : -1);
out:
	kb_big_free(b);
	kb_big_free(w);
	return rc;
}

/* ===== cross_entropy ===== */

typedef struct {
	const kb_tensor *x, *t;
	int64_t v;
	double *out;
} cejob;

/* Rows [lo, hi): logsumexp(row) - row[target] (NaN for a target out of range). */
static void ce_range(void *p, int64_t lo, int64_t hi, double *row)
{
	const cejob *j = p;
	for (int64_t r = lo; r < hi; r++) {
		double mx = -INFINITY, s = 0, tv;
		kb_profile__ref_get_run(j->x, r * j->v, j->v, row);
		kb_profile__ref_get_run(j->t, r, 1, &tv);
		for (int64_t k = 0; k < j->v; k++)
			mx = row[k] > mx ? row[k] : mx;
		for (int64_t k = 0; k < j->v; k++)
			s += exp(row[k] - mx);
		int64_t ti = (int64_t)tv;
		j->out[r] = ti >= 0 && ti < j->v ? log(s) + mx - row[ti] : NAN;
	}
}

int kb_profile__ref_cross_entropy(kb_profile__refcall *c)
{
	cejob j = {0};
	char buf[160];
	int rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &j.x)) ||
	    (rc = kb_profile__ref_tensor_arg(c, 1, NULL, true, &j.t)))
		return rc;
	if (j.x->rank != 2 || j.t->n != j.x->dims[0])
		return kb_profile__ref_fail(c, "'%s' is %s; cross_entropy takes logits [M, V] and "
					    "targets [M]", j.x->name, kb_profile__ref_shape_str(
					    j.x->rank, j.x->dims, buf, sizeof(buf)));
	int64_t m = j.x->dims[0];
	if ((rc = kb_profile__ref_alloc_out(c, 1, &m)))
		return rc;
	j.v = j.x->dims[1];
	j.out = c->out->v;
	if (m > 0 && j.v > 0)
		kb_profile__ref_parallel_for(m, (double)j.v * 8, c->nthreads, (size_t)j.v, ce_range, &j);
	return 0;
}
