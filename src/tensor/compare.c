/*
 * compare.c - checking an output tensor against its reference: the error
 * statistics of kb_check_stats and the default tolerances per dtype.  It
 * reads host memory only; the runner poisons, launches and copies back.
 *
 * Rules, per element (out o, reference r):
 *  - unwritten: o's bytes are all KB_POISON_BYTE.  For integer dtypes the
 *    poison is a legal value (-1, 255), so it counts as unwritten only where
 *    the reference differs from it; where the reference is that very value
 *    the kernel cannot be told apart from a kernel that wrote it.
 *  - r finite: o NaN -> nan_count, o +-Inf -> inf_count, otherwise o must
 *    satisfy |o - r| <= atol + rtol * |r| (torch.allclose), else mismatch.
 *  - r non-finite (the reference itself overflowed or is undefined): o must
 *    be the same (NaN for NaN, the same infinity), else mismatch.
 *  - max_abs, max_rel and rel_l2 cover written elements where both o and r
 *    are finite.  max_rel skips r == 0 (the error shows in max_abs).
 *    rel_l2 = ||o - r|| / ||r|| in double; when ||r|| == 0 it is ||o - r||
 *    itself, so it is still 0 exactly when they agree.
 *  - first_bad is the lowest flat index that is unwritten, NaN/Inf or a
 *    mismatch; ok = no unwritten, no NaN/Inf, no mismatch.
 *  - r KB_REF_UNCHECKED (a sampled reference's rows not drawn): o must be
 *    written and finite, nothing more; compared counts the other elements,
 *    rows_compared the rows (last dim) among them.
 *  - A size mismatch between out and ref compares the common prefix and
 *    counts every extra element as a mismatch (the shapes were checked at
 *    spec time; this is a second line of defence, never a crash).
 */
#include "tensor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The reference is either a double array or another tensor. */
typedef struct {
	const double *v;
	const kb_tensor *t;
} refsrc;

static double ref_at(const refsrc *r, int64_t i)
{
	return r->v ? r->v[i] : kb_tensor_get(r->t, i);
}

#define CHUNK 1024

/* Elements [i, i+n) of t as doubles, and whether each is all poison bytes
 * (the dtype switch hoisted out of the loops). */
static void load_chunk(const kb_tensor *t, int64_t i, int64_t n, double *v, bool *poison)
{
	int size = kb_dtype_size(t->dtype);
	const unsigned char *p = (const unsigned char *)t->data + (size_t)i * (size_t)size;
	for (int64_t k = 0; k < n; k++) {
		switch (size) {
		case 8: poison[k] = ((const uint64_t *)p)[k] == UINT64_MAX; break;
		case 4: poison[k] = ((const uint32_t *)p)[k] == UINT32_MAX; break;
		case 2: poison[k] = ((const uint16_t *)p)[k] == UINT16_MAX; break;
		default: poison[k] = p[k] == UINT8_MAX; break;
		}
	}
	if (t->dtype == KB_DT_F32) {
		const float *f = (const float *)p;
		for (int64_t k = 0; k < n; k++)
			v[k] = f[k];
		return;
	}
	for (int64_t k = 0; k < n; k++)
		v[k] = kb_tensor_get(t, i + k);
}

static bool is_int_dtype(kb_dtype t)
{
	return t != KB_DT_F64 && t != KB_DT_F32 && t != KB_DT_F16 && t != KB_DT_BF16;
}

typedef struct {
	double rtol, atol;
	bool ints;
	double poison_val;      /* the value the poison reads as, for integers */
	double sum_d2, sum_r2;
} acc;

/* An element that is unwritten, or where out or ref is not finite: counts
 * it and returns whether it is bad. */
static bool check_special(kb_check_stats *st, double o, double r, bool poison)
{
	if (poison) {
		st->unwritten++;
		return true;
	}
	if (!isfinite(r)) {
		bool same = isnan(r) ? isnan(o) : o == r;
		st->mismatches += !same;
		return !same;
	}
	if (isnan(o))
		st->nan_count++;
	else
		st->inf_count++;
	return true;
}

/* Checks elements [i0, i0+n) (values in ov/rv, poison flags in pv). */
static void check_chunk(kb_check_stats *st, acc *a, const double *ov, const bool *pv,
			const double *rv, int64_t i0, int64_t n)
{
	double max_abs = st->max_abs, max_rel = st->max_rel, d2 = a->sum_d2, r2 = a->sum_r2;
	for (int64_t k = 0; k < n; k++) {
		double o = ov[k], r = rv[k];
		bool poison = pv[k] && !(a->ints && r == a->poison_val);
		bool unchecked = kb_ref_is_unchecked(r);
		st->compared += !unchecked;
		if (unchecked) { /* written and finite is all it must be */
			if (!poison && isfinite(o))
				continue;
			if (poison)
				st->unwritten++;
			else
				*(isnan(o) ? &st->nan_count : &st->inf_count) += 1;
		} else if (!poison && isfinite(o) && isfinite(r)) {
			double d = fabs(o - r), ar = fabs(r);
			max_abs = d > max_abs ? d : max_abs;
			if (ar != 0 && d / ar > max_rel)
				max_rel = d / ar;
			d2 += d * d;
			r2 += r * r;
			if (d <= a->atol + a->rtol * ar)
				continue;
			st->mismatches++;
		} else if (!check_special(st, o, r, poison)) {
			continue;
		}
		if (st->first_bad < 0) {
			st->first_bad = i0 + k;
			st->first_bad_got = poison ? NAN : o;
			st->first_bad_want = r;
		}
	}
	st->max_abs = max_abs;
	st->max_rel = max_rel;
	a->sum_d2 = d2;
	a->sum_r2 = r2;
}

double kb_ref_unchecked(void)
{
	uint64_t bits = KB_REF_UNCHECKED_BITS;
	double r;
	memcpy(&r, &bits, sizeof r);
	return r;
}

bool kb_ref_is_unchecked(double r)
{
	uint64_t bits;
	memcpy(&bits, &r, sizeof bits);
	return bits == KB_REF_UNCHECKED_BITS;
}

/* The value an all-poison element of an integer dtype reads as. */
double kb_profile__check_poison_value(kb_dtype t)
{
	unsigned char bytes[8];
	memset(bytes, KB_POISON_BYTE, sizeof(bytes));
	kb_tensor one = {.dtype = t, .rank = 1, .dims = {1}, .n = 1, .data = bytes};
	return kb_tensor_get(&one, 0);
}

bool kb_profile__check_ints(kb_dtype t)
{
	return is_int_dtype(t);
}

void kb_profile__check_begin(const kb_tensor *out, kb_check_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->first_bad = -1;
	st->n = out->n;
}

/* first_bad_coord for st->first_bad, in out's own shape. */
static void set_coord(const kb_tensor *out, kb_check_stats *st)
{
	if (st->first_bad >= 0 && out->n > 0)
		kb_tensor_coord(out, st->first_bad < out->n ? st->first_bad : out->n - 1,
				st->first_bad_coord, sizeof(st->first_bad_coord));
	else if (st->first_bad >= 0)
		snprintf(st->first_bad_coord, sizeof(st->first_bad_coord), "%s (empty)",
			 out->name ? out->name : "?");
}

void kb_profile__check_end(const kb_tensor *out, kb_check_stats *st, int64_t ref_n, double sum_d2,
			   double sum_r2)
{
	int64_t extra = out->n > ref_n ? out->n - ref_n : ref_n - out->n;
	st->mismatches += extra;
	if (extra && st->first_bad < 0)
		st->first_bad = out->n < ref_n ? out->n : ref_n;
	set_coord(out, st);
	int64_t row = out->rank > 0 && out->dims[out->rank - 1] > 0 ? out->dims[out->rank - 1] : 1;
	st->rows = out->n / row;
	st->rows_compared = (st->compared < out->n ? st->compared : out->n) / row;
	st->rel_l2 = sum_r2 > 0 ? sqrt(sum_d2) / sqrt(sum_r2) : sqrt(sum_d2);
	st->ok = st->unwritten == 0 && st->nan_count == 0 && st->inf_count == 0 &&
		 st->mismatches == 0;
}

/* One thread's share of a comparison: elements [i0, i1). */
typedef struct {
	const kb_tensor *out;
	const refsrc *ref;
	int64_t i0, i1;
	acc a;
	kb_check_stats st;
} slice;

/* kb_parallel's share t: slice t of the slices at ctx. */
static void compare_share(void *ctx, int t, int n)
{
	(void)n;
	slice *sl = (slice *)ctx + t;
	double ov[CHUNK], rv[CHUNK];
	bool pv[CHUNK];
	for (int64_t i0 = sl->i0; i0 < sl->i1; i0 += CHUNK) {
		int64_t cn = sl->i1 - i0 < CHUNK ? sl->i1 - i0 : CHUNK;
		load_chunk(sl->out, i0, cn, ov, pv);
		for (int64_t k = 0; k < cn; k++)
			rv[k] = ref_at(sl->ref, i0 + k);
		check_chunk(&sl->st, &sl->a, ov, pv, rv, i0, cn);
	}
}

/* Adds slice b into the totals; slices are merged in index order, so the
 * first bad element is the lowest one. */
static void merge(kb_check_stats *st, acc *a, const slice *b)
{
	st->unwritten += b->st.unwritten;
	st->compared += b->st.compared;
	st->nan_count += b->st.nan_count;
	st->inf_count += b->st.inf_count;
	st->mismatches += b->st.mismatches;
	st->max_abs = b->st.max_abs > st->max_abs ? b->st.max_abs : st->max_abs;
	st->max_rel = b->st.max_rel > st->max_rel ? b->st.max_rel : st->max_rel;
	a->sum_d2 += b->a.sum_d2;
	a->sum_r2 += b->a.sum_r2;
	if (st->first_bad < 0 && b->st.first_bad >= 0) {
		st->first_bad = b->st.first_bad;
		st->first_bad_got = b->st.first_bad_got;
		st->first_bad_want = b->st.first_bad_want;
	}
}

/* Large outputs are compared on all cores (a 33M-element f32 output takes
 * ~200 ms on one): each thread owns a contiguous slice. */
static void compare_all(const kb_tensor *out, const refsrc *ref, int64_t n, acc *a,
			kb_check_stats *st)
{
	int nt = kb_parallel_width(n / (1 << 18) + 1, 64);
	slice sl[64];
	for (int t = 0; t < nt; t++) {
		sl[t] = (slice){out, ref, n * t / nt, n * (t + 1) / nt, *a, {0}};
		sl[t].a.sum_d2 = sl[t].a.sum_r2 = 0;
		sl[t].st.first_bad = -1;
	}
	kb_parallel(nt, compare_share, sl);
	for (int t = 0; t < nt; t++)
		merge(st, a, &sl[t]);
}

/* The elements around the first bad one, as devcheck.c reads them. */
static void near_bad(const kb_tensor *out, const refsrc *ref, int64_t n, const acc *a,
		     kb_check_stats *st)
{
	int64_t from = st->first_bad - KB_CHECK_NEAR / 2;
	from = from < 0 ? 0 : from;
	st->near_first = from;
	for (int64_t i = from; i < n && st->near_n < KB_CHECK_NEAR; i++) {
		double got, want = ref_at(ref, i);
		bool pz;
		load_chunk(out, i, 1, &got, &pz);
		bool unwritten = pz && !(a->ints && want == a->poison_val);
		st->near_got[st->near_n] = unwritten ? NAN : got;
		st->near_want[st->near_n] = want;
		st->near_unwritten[st->near_n++] = unwritten;
	}
}

static void compare(const kb_tensor *out, const refsrc *ref, int64_t ref_n, double rtol,
		    double atol, kb_check_stats *st)
{
	kb_profile__check_begin(out, st);
	int64_t n = out->n < ref_n ? out->n : ref_n;
	acc a = {rtol, atol, is_int_dtype(out->dtype), 0, 0, 0};
	if (a.ints && out->n > 0)
		a.poison_val = kb_profile__check_poison_value(out->dtype);
	compare_all(out, ref, n, &a, st);
	if (out->n != ref_n && st->first_bad < 0) {
		st->first_bad_got = n < out->n ? kb_tensor_get(out, n) : NAN;
		st->first_bad_want = n < ref_n ? ref_at(ref, n) : NAN;
	}
	if (st->first_bad >= 0)
		near_bad(out, ref, n, &a, st);
	kb_profile__check_end(out, st, ref_n, a.sum_d2, a.sum_r2);
}

/* Compares out with a CPU reference; fills st (see the rules above). */
void kb_profile_compare(const kb_tensor *out, const kb_ref_out *ref, double rtol,
			double atol, kb_check_stats *st)
{
	refsrc r = {ref->v, NULL};
	compare(out, &r, ref->n, rtol, atol, st);
}

/* Compares out with another tensor (a reference kernel's output). */
void kb_profile_compare_tensors(const kb_tensor *out, const kb_tensor *ref, double rtol,
				double atol, kb_check_stats *st)
{
	refsrc r = {NULL, ref};
	compare(out, &r, ref->n, rtol, atol, st);
}

/*
 * Default tolerances, as (rtol, atol).  torch.testing.assert_close uses
 * f64 1e-7/1e-7, f32 1.3e-6/1e-5, f16 1e-3/1e-5, bf16 1.6e-2/1e-5 and 0/0
 * for integers.  kbench takes those for f64, f16, bf16 and integers.  For
 * f32 it keeps the documented kbench default (architecture.md §3, the `tol`
 * example): rtol 1e-5, atol 1e-6 - a little looser in rtol than torch's
 * same-dtype comparison because the reference here is exact double, so the
 * kernel's whole f32 rounding error shows up (still ~80 f32 ulps), and
 * tighter in atol so that small outputs (softmax tails) are really checked.
 * A spec's `tol` line overrides these.
 */
void kb_profile_default_tol(kb_dtype t, double *rtol, double *atol)
{
	switch (t) {
	case KB_DT_F64: *rtol = 1e-7; *atol = 1e-7; return;
	case KB_DT_F32: *rtol = 1e-5; *atol = 1e-6; return;
	case KB_DT_F16: *rtol = 1e-3; *atol = 1e-5; return;
	case KB_DT_BF16: *rtol = 1.6e-2; *atol = 1e-5; return;
	default: *rtol = 0; *atol = 0; return;
	}
}
