/*
 * reference_attention.c - the attention built-in reference,
 * softmax(scale * q k^T [causal mask]) v in double precision, for every
 * (batch, head) of [..., N, D] tensors, with the rows it checks sampled
 * when checking them all would take too long.
 *
 *   attention(q, k, v, causal=false, scale=1/sqrt(D)) -> o
 *       q [..., Nq, D], k [..., Nk, D], v [..., Nk, Dv], o [..., Nq, Dv];
 *       the leading dims (batch, heads) are flattened and must agree;
 *       causal: query row i sees keys 0..i (top-left aligned, as PyTorch's
 *       scaled_dot_product_attention(is_causal=True)).
 *
 * Sampling: when every row would cost more than ROW_BUDGET multiply-adds
 * (B·H = 32, N = 8192, D = 128 is 550 G; $KBENCH_ATTENTION_BUDGET sets
 * another, "inf" checks every row whatever it costs), each (batch, head) gets the same
 * number of query rows, at least MIN_ROWS: its first and last row (the
 * masked tails) and the rest drawn at random without replacement, the draw
 * seeded from the input values, so each trial (fresh inputs) checks fresh
 * rows and the same inputs always give the same rows (the reference caches
 * key on the inputs' seeds).  The rows not drawn hold KB_REF_UNCHECKED:
 * compare.c and devcheck.c check those elements only for being written and
 * finite, and count the elements they compared (kb_check_stats.compared),
 * so a Result says how many rows were checked.
 *
 * Invariants: each row is computed by one thread, in key order, so the
 * result does not depend on the number of threads; the row plan depends
 * only on the shapes and the input values.
 */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROW_BUDGET (4.0 * 1024 * 1024 * 1024) /* multiply-adds of a check */
#define MIN_ROWS 16     /* rows per (batch, head) at the least */
#define ROWS_PER_ITEM 32 /* rows of one (batch, head) per work item */

typedef struct {
	int64_t bh, nq, nk, d, dv;
	bool causal;
	double scale;
	const kb_tensor *q, *k, *v;
	int64_t nrows;      /* rows checked per (batch, head) */
	const int32_t *rows; /* [bh][nrows], ascending */
	double *o;
} attjob;

static uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A hash of 64 evenly spread elements of t: new inputs, new rows. */
static uint64_t hash_values(const kb_tensor *t, uint64_t h)
{
	for (int64_t s = 0; s < 64 && t->n > 0; s++) {
		double x = kb_tensor_get(t, t->n * s / 64);
		uint64_t bits;
		memcpy(&bits, &x, sizeof bits);
		h = mix64(h ^ bits);
	}
	return h;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Picks j->nrows rows of each (batch, head): all of them, or the first,
 * the last and a random draw of the others.  Returns the [bh][nrows] plan. */
static int32_t *plan_rows(attjob *j)
{
	double per_row = (double)j->nk * (double)(j->d + j->dv) * (j->causal ? 0.5 : 1.0);
	double all = per_row * (double)j->nq * (double)j->bh, budget = ROW_BUDGET;
	const char *env = getenv(KB_REF_BUDGET_ENV);
	if (env && *env && strtod(env, NULL) > 0)
		budget = strtod(env, NULL);
	int64_t r = j->nq;
	if (all > budget) {
		r = (int64_t)(budget / (per_row * (double)j->bh));
		r = r < MIN_ROWS ? MIN_ROWS : r > j->nq ? j->nq : r;
	}
	j->nrows = r;
	int32_t *rows = kb_xmalloc((size_t)(j->bh * r + 1) * sizeof *rows);
	unsigned char *seen = kb_xcalloc((size_t)j->nq + 1, 1);
	uint64_t seed = hash_values(j->v, hash_values(j->k, hash_values(j->q, 0x5eed)));
	for (int64_t b = 0; b < j->bh; b++) {
		int32_t *p = rows + b * r;
		if (r == j->nq) {
			for (int64_t i = 0; i < r; i++)
				p[i] = (int32_t)i;
			continue;
		}
		memset(seen, 0, (size_t)j->nq);
		int64_t n = 0;
		p[n++] = 0;
		p[n++] = (int32_t)(j->nq - 1);
		seen[0] = seen[j->nq - 1] = 1;
		for (uint64_t s = mix64(seed ^ (uint64_t)b); n < r; s = mix64(s)) {
			int64_t i = (int64_t)(s % (uint64_t)j->nq);
			if (!seen[i]) {
				seen[i] = 1;
				p[n++] = (int32_t)i;
			}
		}
		qsort(p, (size_t)r, sizeof *p, cmp_i32);
	}
	free(seen);
	return rows;
}

/* Two doubles (a GNU vector, SSE2 on x86-64); unaligned loads via memcpy. */
typedef double v2d __attribute__((vector_size(16)));

static inline v2d ld2(const double *p)
{
	v2d v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* sum a[i] * b[i] in eight partial sums (four vectors), the same order on
 * every thread. */
static double dot(const double *a, const double *b, int64_t n)
{
	v2d s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		s0 += ld2(a + i) * ld2(b + i);
		s1 += ld2(a + i + 2) * ld2(b + i + 2);
		s2 += ld2(a + i + 4) * ld2(b + i + 4);
		s3 += ld2(a + i + 6) * ld2(b + i + 6);
	}
	v2d s = (s0 + s1) + (s2 + s3);
	double r = s[0] + s[1];
	for (; i < n; i++)
		r += a[i] * b[i];
	return r;
}

/* One query row: o[row] = softmax(scale * q k^T) v over keys [0, nk). */
static void one_row(const attjob *j, const double *q, const double *kd, const double *vd,
		    int64_t nk, double *p, double *o)
{
	double m = -INFINITY, l = 0;
	for (int64_t t = 0; t < nk; t++) {
		p[t] = j->scale * dot(q, kd + t * j->d, j->d);
		m = p[t] > m ? p[t] : m;
	}
	memset(o, 0, (size_t)j->dv * sizeof *o);
	for (int64_t t = 0; t < nk; t++) {
		double e = exp(p[t] - m);
		const double *vr = vd + t * j->dv;
		l += e;
		for (int64_t x = 0; x < j->dv; x++)
			o[x] += e * vr[x];
	}
	for (int64_t x = 0; x < j->dv; x++)
		o[x] /= l;
}

/* Work items [lo, hi): up to ROWS_PER_ITEM planned rows of one (batch,
 * head) each, its keys and values converted once per item. */
static void att_range(void *p, int64_t lo, int64_t hi, double *s)
{
	const attjob *j = p;
	int64_t per_bh = (j->nrows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
	double *kd = s, *vd = kd + j->nk * j->d, *pr = vd + j->nk * j->dv, *q = pr + j->nk;
	for (int64_t it = lo; it < hi; it++) {
		int64_t b = it / per_bh, r0 = it % per_bh * ROWS_PER_ITEM;
		int64_t r1 = r0 + ROWS_PER_ITEM < j->nrows ? r0 + ROWS_PER_ITEM : j->nrows;
		const int32_t *rows = j->rows + b * j->nrows;
		int64_t nk = j->causal && rows[r1 - 1] + 1 < j->nk ? rows[r1 - 1] + 1 : j->nk;
		kb_profile__ref_get_run(j->k, b * j->nk * j->d, nk * j->d, kd);
		kb_profile__ref_get_run(j->v, b * j->nk * j->dv, nk * j->dv, vd);
		for (int64_t r = r0; r < r1; r++) {
			int64_t i = rows[r];
			kb_profile__ref_get_run(j->q, (b * j->nq + i) * j->d, j->d, q);
			one_row(j, q, kd, vd, j->causal && i + 1 < nk ? i + 1 : nk, pr,
				j->o + (b * j->nq + i) * j->dv);
		}
	}
}

/* Fills j's sizes from q, k and v; returns 0 or KB_EINVAL. */
static int att_shapes(kb_profile__refcall *c, const kb_tensor *q, const kb_tensor *k,
		      const kb_tensor *v, attjob *j)
{
	char sq[160], sk[160], sv[160];
	kb_profile__ref_shape_str(q->rank, q->dims, sq, sizeof sq);
	kb_profile__ref_shape_str(k->rank, k->dims, sk, sizeof sk);
	kb_profile__ref_shape_str(v->rank, v->dims, sv, sizeof sv);
	if (q->rank < 2 || k->rank != q->rank || v->rank != q->rank)
		return kb_profile__ref_fail(c, "q %s, k %s, v %s: attention takes [..., N, D] tensors "
					    "of one rank (>= 2)", sq, sk, sv);
	int r = q->rank;
	for (int d = 0; d < r - 2; d++)
		if (k->dims[d] != q->dims[d] || v->dims[d] != q->dims[d])
			return kb_profile__ref_fail(c, "q %s, k %s, v %s: the leading (batch, head) "
						    "dims differ", sq, sk, sv);
	j->nq = q->dims[r - 2];
	j->d = q->dims[r - 1];
	j->nk = k->dims[r - 2];
	j->dv = v->dims[r - 1];
	if (k->dims[r - 1] != j->d || v->dims[r - 2] != j->nk)
		return kb_profile__ref_fail(c, "q %s, k %s, v %s: k must be [..., Nk, D] and v "
					    "[..., Nk, Dv]", sq, sk, sv);
	j->bh = j->nq > 0 && j->d > 0 ? q->n / (j->nq * j->d) : 0;
	return 0;
}

int kb_profile__ref_attention(kb_profile__refcall *c)
{
	const kb_tensor *q, *k, *v;
	double causal, scale;
	attjob j = {0};
	int rc;
	if ((rc = kb_profile__ref_tensor_arg(c, 0, NULL, true, &q)) ||
	    (rc = kb_profile__ref_tensor_arg(c, 1, NULL, true, &k)) ||
	    (rc = kb_profile__ref_tensor_arg(c, 2, NULL, true, &v)) ||
	    (rc = att_shapes(c, q, k, v, &j)) ||
	    (rc = kb_profile__ref_param(c, -1, "causal", 0, &causal)) ||
	    (rc = kb_profile__ref_param(c, -1, "scale", j.d ? 1 / sqrt((double)j.d) : 1, &scale)))
		return rc;
	int64_t dims[KB_MAX_RANK];
	memcpy(dims, q->dims, sizeof dims);
	dims[q->rank - 1] = j.dv;
	if ((rc = kb_profile__ref_alloc_out(c, q->rank, dims)))
		return rc;
	if (!j.bh || !j.nq || !j.nk || !j.dv)
		return 0;
	j.causal = causal != 0;
	j.scale = scale;
	j.q = q, j.k = k, j.v = v;
	j.o = c->out->v;
	int32_t *rows = plan_rows(&j);
	j.rows = rows;
	if (j.nrows < j.nq)
		for (int64_t i = 0; i < c->out->n; i++)
			c->out->v[i] = kb_ref_unchecked();
	int64_t per_bh = (j.nrows + ROWS_PER_ITEM - 1) / ROWS_PER_ITEM;
	double cost = (double)ROWS_PER_ITEM * (double)j.nk * (double)(j.d + j.dv);
	kb_profile__ref_parallel_for(j.bh * per_bh, cost, c->nthreads,
				     (size_t)(j.nk * (j.d + j.dv + 1) + j.d + j.dv), att_range, &j);
	free(rows);
	return 0;
}
