/*
 * reference.c - the built-in CPU references of `//! ref FN(args) -> out`,
 * computed in double precision from the input tensors, whatever their
 * dtype (every element goes through the exact kb_tensor_get conversion, or
 * a loop equivalent to it).  Owns argument resolution, shape checks, the
 * reference kernels themselves and a small pthread parallel-for.  It does
 * not compare (compare.c) and never touches the GPU.
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
 *   sum(x, dim=D)  max(x, dim=D)   no dim: over all elements; the output
 *       may drop the dim or keep it as 1 (either rank is accepted)
 *
 * Output shape: the reference's natural shape must equal the spec's output
 * tensor's shape once size-1 dims are ignored; the result takes the spec's
 * shape so it lines up with the output tensor.  (bind.c checks this at spec
 * time too; this is the second line of defence.)
 *
 * Threads: rows (or element chunks, or matmul row blocks) are split evenly
 * over nthreads (<= 0: every online CPU), never more threads than there is
 * work for; a failed pthread_create runs that share on the calling thread.
 */
#include "profile.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXPOS 4
#define MAXKW 8
#define MIN_WORK_PER_THREAD 65536.0   /* element operations */
#define EW_CHUNK 4096                 /* elements per elementwise work item */
#define LANES 16                      /* strided rows gathered together */
#define SQRT_2_OVER_PI 0.79788456080286535588

/* ===== parallel for ===== */

typedef void (*range_fn)(void *ctx, int64_t lo, int64_t hi, double *scratch);

typedef struct {
	range_fn fn;
	void *ctx;
	int64_t nitems;
	size_t scratch_n;
} job;

/* kb_parallel's share t of n: its contiguous run of items, with its own
 * scratch, in 16 pieces so that the progress meter moves. */
static void job_share(void *arg, int t, int n)
{
	job *j = arg;
	double *s = j->scratch_n ? kb_xmalloc(j->scratch_n * sizeof(double)) : NULL;
	int64_t lo = j->nitems * t / n, hi = j->nitems * (t + 1) / n;
	for (int piece = 0; piece < 16; piece++) {
		int64_t a = lo + (hi - lo) * piece / 16, b = lo + (hi - lo) * (piece + 1) / 16;
		if (b > a) {
			j->fn(j->ctx, a, b, s);
			kb_progress_add(b - a);
		}
	}
	free(s);
}

/* Runs fn over [0, nitems) split into contiguous shares, each thread with
 * its own scratch of scratch_n doubles.  cost: element operations per item. */
static void parallel_for(int64_t nitems, double cost, int nthreads, size_t scratch_n,
			 range_fn fn, void *ctx)
{
	double by_work = (double)nitems * cost / MIN_WORK_PER_THREAD;
	int64_t units = by_work < (double)nitems ? (int64_t)by_work : nitems;
	int nt = kb_parallel_width(units, nthreads > 0 ? nthreads : 256);
	job j = {fn, ctx, nitems, scratch_n};
	kb_progress_start(nitems);
	kb_parallel(nt, job_share, &j);
}

/* Elements [i, i+n) of t as doubles (the dtype switch hoisted out of the loop). */
static void get_run(const kb_tensor *t, int64_t i, int64_t n, double *dst)
{
	switch (t->dtype) {
	case KB_DT_F64:
		memcpy(dst, (const double *)t->data + i, (size_t)n * sizeof(double));
		return;
	case KB_DT_F32: {
		const float *p = (const float *)t->data + i;
		for (int64_t k = 0; k < n; k++)
			dst[k] = p[k];
		return;
	}
	case KB_DT_F16: {
		const uint16_t *p = (const uint16_t *)t->data + i;
		for (int64_t k = 0; k < n; k++)
			dst[k] = kb_half_to_float(p[k]);
		return;
	}
	default:
		for (int64_t k = 0; k < n; k++)
			dst[k] = kb_tensor_get(t, i + k);
		return;
	}
}

typedef struct {
	const kb_tensor *t;
	double *dst;
} conv_ctx;

static void conv_range(void *p, int64_t lo, int64_t hi, double *scratch)
{
	conv_ctx *c = p;
	int64_t n = c->t->n;
	for (int64_t i = lo * EW_CHUNK; i < hi * EW_CHUNK && i < n; i += EW_CHUNK)
		get_run(c->t, i, n - i < EW_CHUNK ? n - i : EW_CHUNK, c->dst + i);
}

/* A new double copy of the whole tensor, converted in parallel. */
static double *to_doubles(const kb_tensor *t, int nthreads)
{
	double *v = kb_big_alloc((size_t)(t->n > 0 ? t->n : 1) * sizeof(double));
	conv_ctx c = {t, v};
	parallel_for((t->n + EW_CHUNK - 1) / EW_CHUNK, EW_CHUNK, nthreads, 0, conv_range, &c);
	return v;
}

/* ===== the call: arguments, errors, output ===== */

typedef struct {
	const kb_spec *spec;
	const kb_source *src;
	const kb_spec_ref *ref;
	const kb_tensor *ins;
	int nins;
	const kb_ref_arg *pos[MAXPOS];
	int npos;
	const kb_ref_arg *kw[MAXKW];
	bool kw_used[MAXKW];
	int nkw;
	const char *out_name;
	kb_ref_out *out;
	int nthreads;
	kb_err *err;
} refcall;

/* Fails with "file:line:col: ref FN: message"; returns KB_EINVAL. */
static int KB_PRINTF(2, 3) fail(refcall *c, const char *fmt, ...)
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
static const char *shape_str(int rank, const int64_t *dims, char *buf, size_t n)
{
	size_t used = (size_t)snprintf(buf, n, "[");
	for (int d = 0; d < rank && used < n; d++)
		used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? ", " : "",
					 (long long)dims[d]);
	if (used < n)
		snprintf(buf + used, n - used, "]");
	return buf;
}

static const kb_tensor *find_input(const refcall *c, const char *name)
{
	for (int i = 0; i < c->nins; i++)
		if (c->ins[i].name && !strcmp(c->ins[i].name, name))
			return &c->ins[i];
	return NULL;
}

/* A number, true/false, or a spec arg's value.  Returns 0 or -1. */
static int scalar_value(const refcall *c, const char *text, double *v)
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
static const kb_ref_arg *kw_find(refcall *c, const char *key)
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
static int param(refcall *c, int pos, const char *key, double def, double *v)
{
	const kb_ref_arg *a = pos >= 0 && pos < c->npos ? c->pos[pos] : kw_find(c, key);
	*v = def;
	if (!a)
		return 0;
	if (scalar_value(c, a->text, v))
		return fail(c, "%s='%s' is not a number, true/false or an arg", key, a->text);
	return 0;
}

/* An integer dim normalised against rank (negative from the end). */
static int dim_param(refcall *c, int pos, const kb_tensor *x, int def, int *dim)
{
	double v;
	int rc = param(c, pos, "dim", def, &v);
	if (rc)
		return rc;
	int r = x->rank > 0 ? x->rank : 1;
	if (v != floor(v) || v < -r || v >= r)
		return fail(c, "dim=%g is out of range for %s of rank %d (use -%d .. %d)", v,
			    x->name, x->rank, r, r - 1);
	*dim = (int)(v < 0 ? v + r : v);
	return 0;
}

/* The tensor at position pos or key=NAME; NULL (and 0) when optional and absent. */
static int tensor_arg(refcall *c, int pos, const char *key, bool required,
		      const kb_tensor **t)
{
	const kb_ref_arg *a = pos < c->npos ? c->pos[pos] : key ? kw_find(c, key) : NULL;
	*t = NULL;
	if (!a)
		return required ? fail(c, "missing argument %d (%s)", pos + 1, key ? key : "a tensor")
				: 0;
	if (!(*t = find_input(c, a->text)))
		return fail(c, "'%s' is not an input tensor (argument %d)", a->text, pos + 1);
	return 0;
}

/* Evaluates the dims of the spec's tensor `name`; returns its rank, or -1
 * when the spec has no such tensor, or -2 when a dim does not evaluate. */
static int spec_dims(const refcall *c, const char *name, int64_t *dims)
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
static int alloc_out(refcall *c, int rank, const int64_t *dims)
{
	for (int i = 0; i < c->nkw; i++)
		if (!c->kw_used[i])
			return fail(c, "unknown keyword '%s'", c->kw[i]->key);
	kb_ref_out *o = c->out;
	int64_t sd[KB_MAX_RANK];
	int sr = spec_dims(c, c->out_name, sd);
	char a[160], b[160];
	if (sr == -2)
		return fail(c, "the shape of output '%s' does not evaluate", c->out_name);
	if (sr >= 0 && !same_squeezed(rank, dims, sr, sd))
		return fail(c, "the reference gives %s but '%s' is %s", shape_str(rank, dims, a, sizeof(a)),
			    c->out_name, shape_str(sr, sd, b, sizeof(b)));
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
			get_run(j->x, base, j->len, s);
		for (int64_t k = 0; j->inner > 1 && k < j->len; k++) {
			get_run(j->x, base + k * j->inner, gn, tmp);
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
static void run_rows(refcall *c, rowjob *j, int dim)
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
	parallel_for(j->outer * j->groups, (double)(j->len * j->lanes) * 4, c->nthreads,
		     (size_t)(j->len * j->lanes), row_range, j);
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

static int op_softmax(refcall *c)
{
	const kb_tensor *x;
	int dim, rc;
	if ((rc = tensor_arg(c, 0, NULL, true, &x)) || (rc = dim_param(c, 1, x, -1, &dim)) ||
	    (rc = alloc_out(c, x->rank, x->dims)))
		return rc;
	rowjob j = {.op = strcmp(c->ref->fn, "softmax") ? R_LOGSOFTMAX : R_SOFTMAX, .x = x};
	run_rows(c, &j, dim);
	return 0;
}

static int op_reduce(refcall *c)
{
	const kb_tensor *x;
	int64_t dims[KB_MAX_RANK];
	int dim = -1, rc;
	double keep;
	bool has_dim = c->npos > 1 || kw_find(c, "dim");
	if ((rc = tensor_arg(c, 0, NULL, true, &x)) ||
	    (has_dim && (rc = dim_param(c, 1, x, -1, &dim))) ||
	    (rc = param(c, -1, "keepdim", 0, &keep)) ||
	    (rc = alloc_out(c, reduced_shape(x, dim, dims), dims)))
		return rc;
	rowjob j = {.op = strcmp(c->ref->fn, "sum") ? R_MAX : R_SUM, .x = x};
	if (x->rank == 0)
		dim = -1;
	run_rows(c, &j, dim);
	return 0;
}

/* weight/bias of a norm: n must equal the last dim of x; NULL when absent. */
static int norm_vec(refcall *c, int pos, const char *key, const kb_tensor *x, double **v)
{
	const kb_tensor *t;
	char buf[160];
	int rc = tensor_arg(c, pos, key, false, &t);
	*v = NULL;
	if (rc || !t)
		return rc;
	int64_t last = x->rank ? x->dims[x->rank - 1] : 1;
	if (t->n != last)
		return fail(c, "%s '%s' is %s (%lld elements) but the last dim of '%s' is %lld", key,
			    t->name, shape_str(t->rank, t->dims, buf, sizeof(buf)),
			    (long long)t->n, x->name, (long long)last);
	*v = to_doubles(t, 1);
	return 0;
}

static int op_norm(refcall *c)
{
	bool layer = !strcmp(c->ref->fn, "layernorm");
	const kb_tensor *x;
	double *w = NULL, *b = NULL, eps;
	int rc;
	if ((rc = tensor_arg(c, 0, NULL, true, &x)) || (rc = norm_vec(c, 1, "weight", x, &w)) ||
	    (layer && (rc = norm_vec(c, 2, "bias", x, &b))) ||
	    (rc = param(c, -1, "eps", layer ? 1e-5 : 1e-6, &eps)) ||
	    (rc = alloc_out(c, x->rank, x->dims)))
		goto out;
	rowjob j = {.op = layer ? R_LAYERNORM : R_RMSNORM, .x = x, .w = w, .b = b, .eps = eps};
	run_rows(c, &j, x->rank ? x->rank - 1 : -1);
out:
	kb_big_free(b);
	kb_big_free(w);
	return rc;
}

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
		get_run(t, i, n, dst);
		return;
	}
	for (int64_t k = 0; k < n; k++)
		dst[k] = bc[(i + k) % t->n];
}

static void ew_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const ewjob *j = p;
	for (int64_t i = lo * EW_CHUNK; i < hi * EW_CHUNK && i < j->n; i += EW_CHUNK) {
		int64_t n = j->n - i < EW_CHUNK ? j->n - i : EW_CHUNK;
		ew_load(j->a, j->abc, i, n, s);
		if (j->b)
			ew_load(j->b, j->bbc, i, n, s + EW_CHUNK);
		for (int64_t k = 0; k < n; k++)
			j->out[i + k] = ew_one(j, s[k], j->b ? s[EW_CHUNK + k] : 0);
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

static int run_binary(refcall *c, ewjob *j)
{
	const kb_tensor *big = j->b->n > j->a->n ? j->b : j->a;
	const kb_tensor *small = big == j->a ? j->b : j->a;
	char sa[160], sb[160];
	if (!broadcasts(small, big))
		return fail(c, "'%s' %s and '%s' %s do not broadcast (an operand may only repeat "
			    "over leading dims, like a bias [N] over [M, N])", j->a->name,
			    shape_str(j->a->rank, j->a->dims, sa, sizeof(sa)), j->b->name,
			    shape_str(j->b->rank, j->b->dims, sb, sizeof(sb)));
	int rc = alloc_out(c, big->rank, big->dims);
	if (rc)
		return rc;
	double *bc = small->n < big->n && small->n > 0 ? to_doubles(small, 1) : NULL;
	j->abc = small == j->a ? bc : NULL;
	j->bbc = small == j->b ? bc : NULL;
	j->n = big->n;
	j->out = c->out->v;
	if (j->n > 0 && small->n > 0)
		parallel_for((j->n + EW_CHUNK - 1) / EW_CHUNK, EW_CHUNK * 2.0, c->nthreads,
			     2 * EW_CHUNK, ew_range, j);
	kb_big_free(bc);
	return 0;
}

static int op_binary(refcall *c)
{
	ewjob j = {.op = strcmp(c->ref->fn, "add") ? E_MUL : E_ADD};
	int rc;
	if ((rc = tensor_arg(c, 0, NULL, true, &j.a)) || (rc = tensor_arg(c, 1, NULL, true, &j.b)))
		return rc;
	return run_binary(c, &j);
}

static int op_axpy(refcall *c)
{
	ewjob j = {.op = E_AXPY};
	int rc;
	if (c->npos < 1 || scalar_value(c, c->pos[0]->text, &j.alpha))
		return fail(c, "the first argument must be a number or an arg (axpy(a, x, y))");
	if ((rc = tensor_arg(c, 1, NULL, true, &j.a)) || (rc = tensor_arg(c, 2, NULL, true, &j.b)))
		return rc;
	return run_binary(c, &j);
}

static int op_unary(refcall *c)
{
	static const struct { const char *fn; ewop op; } ops[] = {
		{"relu", E_RELU}, {"gelu", E_GELU}, {"silu", E_SILU}, {"copy", E_COPY},
	};
	ewjob j = {.op = E_COPY};
	for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
		if (!strcmp(c->ref->fn, ops[i].fn))
			j.op = ops[i].op;
	const kb_ref_arg *ap = j.op == E_GELU ? kw_find(c, "approximate") : NULL;
	if (ap) {
		const char *t = ap->text + (ap->text[0] == '"' || ap->text[0] == '\'');
		if (!strncmp(t, "tanh", 4))
			j.op = E_GELU_TANH;
		else if (strncmp(t, "none", 4))
			return fail(c, "approximate=%s: expected none or tanh", ap->text);
	}
	int rc;
	if ((rc = tensor_arg(c, 0, NULL, true, &j.a)) || (rc = alloc_out(c, j.a->rank, j.a->dims)))
		return rc;
	j.n = j.a->n;
	j.out = c->out->v;
	parallel_for((j.n + EW_CHUNK - 1) / EW_CHUNK, EW_CHUNK * 8.0, c->nthreads, EW_CHUNK,
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
				get_run(j->x, i * j->n + j0, nb, s);
				for (int64_t k = 0; k < nb; k++)
					j->out[(j0 + k) * j->m + i] = s[k];
			}
		}
	}
}

static int op_transpose(refcall *c)
{
	const kb_tensor *x;
	int rc;
	char buf[160];
	if ((rc = tensor_arg(c, 0, NULL, true, &x)))
		return rc;
	if (x->rank != 2)
		return fail(c, "'%s' is %s; transpose takes a 2-D tensor", x->name,
			    shape_str(x->rank, x->dims, buf, sizeof(buf)));
	int64_t dims[2] = {x->dims[1], x->dims[0]};
	if ((rc = alloc_out(c, 2, dims)))
		return rc;
	trjob j = {x, x->dims[0], x->dims[1], c->out->v};
	parallel_for((j.m + 31) / 32, 32.0 * (double)j.n, c->nthreads, 64, tr_range, &j);
	return 0;
}

/* ===== matmul ===== */

#define MM_ROWS 32
#define MM_KB 128
#define MM_NB 64

typedef struct {
	int64_t batch, m, k, n;
	bool a_batched, b_batched;
	const double *a, *b;    /* packed [B][M][K] and [B][K][N] */
	double *c;              /* [B][M][N], zeroed */
} mmjob;

/* Two doubles (a GNU vector, SSE2 on x86-64); unaligned loads via memcpy. */
typedef double v2d __attribute__((vector_size(16)));

static inline v2d ld2(const double *p)
{
	v2d v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void st2(double *p, v2d v)
{
	memcpy(p, &v, sizeof(v));
}

/* c[4][4] += a[4 rows, kn] * b[kn, 4 cols], the 16 sums kept in registers. */
static void mm_micro(const double *a, int64_t lda, const double *b, int64_t ldb, double *c,
		     int64_t ldc, int64_t kn)
{
	v2d c0l = ld2(c), c0h = ld2(c + 2), c1l = ld2(c + ldc), c1h = ld2(c + ldc + 2);
	v2d c2l = ld2(c + 2 * ldc), c2h = ld2(c + 2 * ldc + 2);
	v2d c3l = ld2(c + 3 * ldc), c3h = ld2(c + 3 * ldc + 2);
	const double *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
	for (int64_t k = 0; k < kn; k++) {
		v2d bl = ld2(b + k * ldb), bh = ld2(b + k * ldb + 2), x;
		x = (v2d){a[k], a[k]};
		c0l += x * bl;
		c0h += x * bh;
		x = (v2d){a1[k], a1[k]};
		c1l += x * bl;
		c1h += x * bh;
		x = (v2d){a2[k], a2[k]};
		c2l += x * bl;
		c2h += x * bh;
		x = (v2d){a3[k], a3[k]};
		c3l += x * bl;
		c3h += x * bh;
	}
	st2(c, c0l), st2(c + 2, c0h), st2(c + ldc, c1l), st2(c + ldc + 2, c1h);
	st2(c + 2 * ldc, c2l), st2(c + 2 * ldc + 2, c2h);
	st2(c + 3 * ldc, c3l), st2(c + 3 * ldc + 2, c3h);
}

/* One element of c, the plain way (block edges). */
static void mm_edge(const double *a, const double *b, int64_t ldb, double *c, int64_t kn)
{
	double s = *c;
	for (int64_t k = 0; k < kn; k++)
		s += a[k] * b[k * ldb];
	*c = s;
}

/* Rows [i0, i1) of c += a * b, blocked over k and n, 4x4 register tiles. */
static void mm_block(const mmjob *j, const double *a, const double *b, double *c,
		     int64_t i0, int64_t i1)
{
	int64_t K = j->k, N = j->n;
	for (int64_t k0 = 0; k0 < K; k0 += MM_KB) {
		int64_t kn = K - k0 < MM_KB ? K - k0 : MM_KB;
		for (int64_t n0 = 0; n0 < N; n0 += MM_NB) {
			int64_t n1 = N - n0 < MM_NB ? N : n0 + MM_NB;
			for (int64_t i = i0; i < i1; i += 4) {
				bool full = i + 4 <= i1;
				for (int64_t x = n0; x < n1; x += 4) {
					const double *ak = a + i * K + k0, *bk = b + k0 * N + x;
					if (full && x + 4 <= n1) {
						mm_micro(ak, K, bk, N, c + i * N + x, N, kn);
						continue;
					}
					for (int64_t r = i; r < i1 && r < i + 4; r++)
						for (int64_t y = x; y < n1 && y < x + 4; y++)
							mm_edge(a + r * K + k0, b + k0 * N + y, N,
								c + r * N + y, kn);
				}
			}
		}
	}
}

static void mm_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const mmjob *j = p;
	int64_t blocks = (j->m + MM_ROWS - 1) / MM_ROWS;
	for (int64_t it = lo; it < hi; it++) {
		int64_t bi = it / blocks, i0 = (it % blocks) * MM_ROWS;
		int64_t i1 = i0 + MM_ROWS < j->m ? i0 + MM_ROWS : j->m;
		const double *a = j->a + (j->a_batched ? bi * j->m * j->k : 0);
		const double *b = j->b + (j->b_batched ? bi * j->k * j->n : 0);
		mm_block(j, a, b, j->c + bi * j->m * j->n, i0, i1);
	}
}

/* Packs t (its last two dims [r, c], maybe transposed) as [B][rows][cols]. */
static double *mm_pack(const kb_tensor *t, bool trans, int nthreads)
{
	double *v = to_doubles(t, nthreads);
	if (!trans)
		return v;
	int64_t r = t->dims[t->rank - 2], cl = t->dims[t->rank - 1], nb = t->n / (r * cl);
	double *p = kb_big_alloc((size_t)t->n * sizeof(double));
	for (int64_t b = 0; b < nb; b++)
		for (int64_t i = 0; i < r; i++)
			for (int64_t k = 0; k < cl; k++)
				p[b * r * cl + k * r + i] = v[b * r * cl + i * cl + k];
	kb_big_free(v);
	return p;
}

/* Fills j's sizes from a and b; returns 0 or KB_EINVAL. */
static int mm_shapes(refcall *c, const kb_tensor *a, const kb_tensor *b, bool ta, bool tb,
		     mmjob *j)
{
	char sa[160], sb[160];
	shape_str(a->rank, a->dims, sa, sizeof(sa));
	shape_str(b->rank, b->dims, sb, sizeof(sb));
	if (a->rank < 2 || a->rank > 3 || b->rank < 2 || b->rank > 3)
		return fail(c, "'%s' %s and '%s' %s: matmul takes 2-D or batched 3-D tensors",
			    a->name, sa, b->name, sb);
	const int64_t *ad = a->dims + a->rank - 2, *bd = b->dims + b->rank - 2;
	j->m = ta ? ad[1] : ad[0];
	j->k = ta ? ad[0] : ad[1];
	int64_t kb = tb ? bd[1] : bd[0];
	j->n = tb ? bd[0] : bd[1];
	j->a_batched = a->rank == 3;
	j->b_batched = b->rank == 3;
	j->batch = j->a_batched ? a->dims[0] : j->b_batched ? b->dims[0] : 1;
	if (j->k != kb)
		return fail(c, "'%s' %s%s and '%s' %s%s: inner dims %lld and %lld differ", a->name,
			    sa, ta ? " (transposed)" : "", b->name, sb, tb ? " (transposed)" : "",
			    (long long)j->k, (long long)kb);
	if (j->a_batched && j->b_batched && a->dims[0] != b->dims[0])
		return fail(c, "'%s' %s and '%s' %s: batch sizes differ", a->name, sa, b->name, sb);
	return 0;
}

static int op_matmul(refcall *c)
{
	const kb_tensor *a, *b;
	double ta, tb;
	mmjob j = {0};
	int rc;
	if ((rc = tensor_arg(c, 0, NULL, true, &a)) || (rc = tensor_arg(c, 1, NULL, true, &b)) ||
	    (rc = param(c, -1, "transpose_a", 0, &ta)) || (rc = param(c, -1, "transpose_b", 0, &tb)) ||
	    (rc = mm_shapes(c, a, b, ta != 0, tb != 0, &j)))
		return rc;
	int64_t dims[3] = {j.batch, j.m, j.n};
	bool batched = j.a_batched || j.b_batched;
	if ((rc = alloc_out(c, batched ? 3 : 2, batched ? dims : dims + 1)))
		return rc;
	double *pa = mm_pack(a, ta != 0, c->nthreads), *pb = mm_pack(b, tb != 0, c->nthreads);
	j.a = pa;
	j.b = pb;
	j.c = c->out->v;
	int64_t blocks = (j.m + MM_ROWS - 1) / MM_ROWS;
	if (j.m && j.n && j.k)
		parallel_for(j.batch * blocks, 2.0 * MM_ROWS * (double)(j.k * j.n), c->nthreads, 0,
			     mm_range, &j);
	kb_big_free(pb);
	kb_big_free(pa);
	return 0;
}

/* ===== the table and the entry point ===== */

typedef struct {
	const char *name;
	int min_pos, max_pos;
	int (*run)(refcall *c);
} refop;

static const refop ops[] = {
	{"softmax", 1, 2, op_softmax},   {"log_softmax", 1, 2, op_softmax},
	{"layernorm", 1, 3, op_norm},    {"rmsnorm", 1, 2, op_norm},
	{"matmul", 2, 2, op_matmul},     {"add", 2, 2, op_binary},
	{"mul", 2, 2, op_binary},        {"relu", 1, 1, op_unary},
	{"gelu", 1, 1, op_unary},        {"silu", 1, 1, op_unary},
	{"sum", 1, 2, op_reduce},        {"max", 1, 2, op_reduce},
	{"transpose", 1, 1, op_transpose}, {"copy", 1, 1, op_unary},
	{"axpy", 3, 3, op_axpy},
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
static int split_args(refcall *c, const refop *op)
{
	for (int i = 0; i < c->ref->nargs; i++) {
		const kb_ref_arg *a = &c->ref->args[i];
		if (!a->text)
			return fail(c, "argument %d has no value", i + 1);
		if (a->key && c->nkw < MAXKW)
			c->kw[c->nkw++] = a;
		else if (!a->key && c->npos < MAXPOS)
			c->pos[c->npos++] = a;
		else
			return fail(c, "too many arguments");
	}
	if (c->npos < op->min_pos || c->npos > op->max_pos) {
		char range[32];
		if (op->min_pos == op->max_pos)
			snprintf(range, sizeof(range), "%d", op->min_pos);
		else
			snprintf(range, sizeof(range), "%d to %d", op->min_pos, op->max_pos);
		return fail(c, "takes %s positional argument(s), got %d", range, c->npos);
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
	refcall c = {.spec = spec, .src = src, .ref = &spec->ref, .ins = ins, .nins = nins,
		     .out = outs, .nthreads = nthreads, .err = err};
	const kb_spec_ref *r = &spec->ref;
	if (outs && r->nouts > 0)
		memset(outs, 0, (size_t)r->nouts * sizeof(*outs));
	if (!r->present || r->is_kernel || !r->fn)
		return kb_err_set(err, KB_EINVAL, KB_DOM_SPEC, 0, "the spec has no built-in reference");
	const refop *op = find_op(r->fn);
	if (!op) {
		kb_buf known = KB_BUF_INIT;
		for (size_t i = 0; i < KB_ARRAY_LEN(ops); i++)
			kb_buf_catf(&known, "%s%s", i ? ", " : "", ops[i].name);
		int rc = fail(&c, "unknown reference (built-ins: %s)", known.s);
		kb_buf_free(&known);
		return rc;
	}
	if (r->nouts != 1 || !r->outs || !r->outs[0])
		return fail(&c, "gives one output; the spec names %d after '->'", r->nouts);
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
	kb_big_free(o->v);
	memset(o, 0, sizeof(*o));
}
