/*
 * reference_parallel.c - what the CPU references share to do their work:
 * a parallel for over work items, each thread with its own scratch and
 * the progress meter fed as pieces finish, and tensor elements converted
 * to doubles (a run of them, or a whole tensor in parallel).  Knows
 * nothing of any particular reference.
 *
 * Threads: rows (or element chunks, or matmul row blocks) are split evenly
 * over nthreads (<= 0: every online CPU), never more threads than there is
 * work for; a failed pthread_create runs that share on the calling thread.
 */
#include "reference.h"

#include <stdlib.h>
#include <string.h>

#define MIN_WORK_PER_THREAD 65536.0   /* element operations */

/* ===== parallel for ===== */

typedef struct {
	kb_profile__ref_range_fn fn;
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
void kb_profile__ref_parallel_for(int64_t nitems, double cost, int nthreads, size_t scratch_n,
				  kb_profile__ref_range_fn fn, void *ctx)
{
	double by_work = (double)nitems * cost / MIN_WORK_PER_THREAD;
	int64_t units = by_work < (double)nitems ? (int64_t)by_work : nitems;
	int nt = kb_parallel_width(units, nthreads > 0 ? nthreads : 256);
	job j = {fn, ctx, nitems, scratch_n};
	kb_progress_start(nitems);
	kb_parallel(nt, job_share, &j);
}

/* Elements [i, i+n) of t as doubles (the dtype switch hoisted out of the loop). */
void kb_profile__ref_get_run(const kb_tensor *t, int64_t i, int64_t n, double *dst)
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
	case KB_DT_BF16: {
		const uint16_t *p = (const uint16_t *)t->data + i;
		for (int64_t k = 0; k < n; k++)
			dst[k] = kb_bf16_to_float(p[k]);
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
	for (int64_t i = lo * KB_REF_EW_CHUNK; i < hi * KB_REF_EW_CHUNK && i < n;
	     i += KB_REF_EW_CHUNK)
		kb_profile__ref_get_run(c->t, i, n - i < KB_REF_EW_CHUNK ? n - i : KB_REF_EW_CHUNK,
					c->dst + i);
}

/* A new double copy of the whole tensor, converted in parallel. */
double *kb_profile__ref_to_doubles(const kb_tensor *t, int nthreads)
{
	double *v = kb_big_alloc((size_t)(t->n > 0 ? t->n : 1) * sizeof(double));
	conv_ctx c = {t, v};
	kb_profile__ref_parallel_for((t->n + KB_REF_EW_CHUNK - 1) / KB_REF_EW_CHUNK,
				     KB_REF_EW_CHUNK, nthreads, 0, conv_range, &c);
	return v;
}
