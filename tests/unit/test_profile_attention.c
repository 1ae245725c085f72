/* test_profile_attention.c - the attention built-in reference
 * (reference_attention.c) against a naive softmax(q k^T / sqrt(D)) v, its
 * sampled rows ($KBENCH_ATTENTION_BUDGET), and the comparison of an output
 * with a sampled reference (compare.c: unchecked rows are checked for
 * being written and finite, and the rows compared are counted).  No GPU. */
#include "../../src/reference/reference.h"
#include "t.h"
#include "../ref_spec.h"

#include <math.h>
#include <stdlib.h>

/* ===== helpers ===== */

static double rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 8) & 0xffff) / 32768.0 - 1.0;
}

/* A [b, h, n, d] tensor of random values (rank 3 when b is 0). */
static void mk(kb_tensor *t, const char *name, kb_dtype dt, int64_t b, int64_t h, int64_t n,
	       int64_t d, unsigned seed)
{
	int64_t dims[4] = {b, h, n, d};
	if (b)
		kb_tensor_init(t, name, dt, 4, dims);
	else
		kb_tensor_init(t, name, dt, 3, dims + 1);
	for (int64_t i = 0; i < t->n; i++)
		kb_tensor_set(t, i, rnd(&seed) * 2);
}

/* Runs the reference of a spec written as //! lines (q, k, v). */
static int run_ref(const char *lines, const kb_tensor *ins, kb_ref_out *out, int nthreads,
		   kb_err *err)
{
	return t_run_ref(lines, ins, 3, out, nthreads, err);
}

/* Row i of (batch, head) b the plain way: scores, max, exp, sum, weights. */
static void naive_row(const kb_tensor *in, int64_t b, int64_t i, bool causal, double scale,
		      double *o)
{
	const kb_tensor *q = &in[0], *k = &in[1], *v = &in[2];
	int r = q->rank;
	int64_t n = k->dims[r - 2], d = q->dims[r - 1], dv = v->dims[r - 1], nq = q->dims[r - 2];
	int64_t nk = causal && i + 1 < n ? i + 1 : n;
	double *s = malloc((size_t)nk * sizeof *s), m = -INFINITY, l = 0;
	for (int64_t t = 0; t < nk; t++) {
		s[t] = 0;
		for (int64_t x = 0; x < d; x++)
			s[t] += kb_tensor_get(q, (b * nq + i) * d + x) *
				kb_tensor_get(k, (b * n + t) * d + x);
		s[t] *= scale;
		m = fmax(m, s[t]);
	}
	for (int64_t t = 0; t < nk; t++)
		l += s[t] = exp(s[t] - m);
	for (int64_t x = 0; x < dv; x++) {
		o[x] = 0;
		for (int64_t t = 0; t < nk; t++)
			o[x] += s[t] / l * kb_tensor_get(v, (b * n + t) * dv + x);
	}
	free(s);
}

/* The largest difference from the naive rows, over the rows the reference
 * computed; *rows counts them per (batch, head) (-1 if they differ). */
static double max_err(const kb_tensor *in, const kb_ref_out *o, bool causal, double scale,
		      int64_t *rows)
{
	int r = in[0].rank;
	int64_t n = in[0].dims[r - 2], dv = in[2].dims[r - 1], bh = in[0].n / n / in[0].dims[r - 1];
	double err = 0, want[64];
	*rows = 0;
	for (int64_t b = 0; b < bh; b++) {
		int64_t got = 0;
		for (int64_t i = 0; i < n; i++) {
			const double *row = o->v + (b * n + i) * dv;
			if (kb_ref_is_unchecked(row[0]))
				continue;
			got++;
			naive_row(in, b, i, causal, scale, want);
			for (int64_t x = 0; x < dv; x++)
				err = fmax(err, fabs(row[x] - want[x]));
		}
		*rows = b == 0 || *rows == got ? got : -1;
	}
	return err;
}

/* ===== the reference ===== */

static void test_profile__ref_attention_full(void)
{
	kb_tensor in[3];
	kb_ref_out o, o4;
	kb_err err = {0};
	int64_t rows;
	mk(&in[0], "q", KB_DT_BF16, 2, 3, 37, 16, 1);
	mk(&in[1], "k", KB_DT_BF16, 2, 3, 37, 16, 2);
	mk(&in[2], "v", KB_DT_F32, 2, 3, 37, 8, 3);
	const char *hdr = "//! arg C = 1\n//! in q : bf16[2, 3, 37, 16]\n//! in k : bf16[2, 3, 37, 16]\n"
			  "//! in v : f32[2, 3, 37, 8]\n//! out o : bf16[2, 3, 37, 8]\n";
	struct { const char *call; bool causal; double scale; } cases[] = {
		{"attention(q, k, v)", false, 0.25},
		{"attention(q, k, v, causal=true)", true, 0.25},
		{"attention(q, k, v, causal=C, scale=0.5)", true, 0.5},
	};
	for (size_t c = 0; c < KB_ARRAY_LEN(cases); c++) {
		char spec[512];
		snprintf(spec, sizeof spec, "%s//! ref %s -> o\n", hdr, cases[c].call);
		T_EQ_INT(run_ref(spec, in, &o, 1, &err), 0);
		if (!o.v)
			return;
		T_EQ_INT(o.rank, 4);
		T_EQ_INT(o.dims[3], 8);
		T_OK(max_err(in, &o, cases[c].causal, cases[c].scale, &rows) < 1e-12);
		T_EQ_INT(rows, 37); /* small: every row */
		T_EQ_INT(run_ref(spec, in, &o4, 4, &err), 0);
		T_OK(memcmp(o.v, o4.v, (size_t)o.n * sizeof(double)) == 0);
		kb_ref_out_free(&o);
		kb_ref_out_free(&o4);
	}
	for (int i = 0; i < 3; i++)
		kb_tensor_free(&in[i]);
}

/* Over the budget: the same number of rows of every (batch, head), its
 * first and last among them, fresh rows for fresh inputs. */
static void test_profile__ref_attention_sampled(void)
{
	kb_tensor in[3], in2[3];
	kb_ref_out o, o2, o4;
	kb_err err = {0};
	int64_t rows, rows2;
	mk(&in[0], "q", KB_DT_BF16, 0, 4, 1000, 32, 1);
	mk(&in[1], "k", KB_DT_BF16, 0, 4, 1000, 32, 2);
	mk(&in[2], "v", KB_DT_BF16, 0, 4, 1000, 32, 3);
	mk(&in2[0], "q", KB_DT_BF16, 0, 4, 1000, 32, 4);
	in2[1] = in[1];
	in2[2] = in[2];
	const char *spec = "//! in q : bf16[4, 1000, 32]\n//! in k : bf16[4, 1000, 32]\n"
			   "//! in v : bf16[4, 1000, 32]\n//! out o : bf16[4, 1000, 32]\n"
			   "//! ref attention(q, k, v, causal=true) -> o\n";
	setenv("KBENCH_ATTENTION_BUDGET", "8e6", 1); /* 32000 a row, x 4: 62 rows of each */
	T_EQ_INT(run_ref(spec, in, &o, 1, &err), 0);
	T_EQ_INT(run_ref(spec, in, &o4, 3, &err), 0);
	T_EQ_INT(run_ref(spec, in2, &o2, 1, &err), 0);
	unsetenv("KBENCH_ATTENTION_BUDGET");
	T_OK(max_err(in, &o, true, 1 / sqrt(32.0), &rows) < 1e-12);
	T_EQ_INT(rows, 62);
	T_OK(max_err(in2, &o2, true, 1 / sqrt(32.0), &rows2) < 1e-12);
	T_EQ_INT(rows2, 62);
	T_OK(memcmp(o.v, o4.v, (size_t)o.n * sizeof(double)) == 0);
	int64_t same = 0;
	for (int64_t b = 0; b < 4; b++) {
		T_OK(!kb_ref_is_unchecked(o.v[b * 1000 * 32]));
		T_OK(!kb_ref_is_unchecked(o.v[(b * 1000 + 999) * 32]));
		for (int64_t i = 0; i < 1000; i++)
			same += kb_ref_is_unchecked(o.v[(b * 1000 + i) * 32]) ==
				kb_ref_is_unchecked(o2.v[(b * 1000 + i) * 32]);
	}
	T_OK(same < 4 * 1000 - 4 * 10); /* other inputs, other rows */
	kb_ref_out_free(&o);
	kb_ref_out_free(&o2);
	kb_ref_out_free(&o4);
	for (int i = 0; i < 3; i++)
		kb_tensor_free(&in[i]);
	kb_tensor_free(&in2[0]);
}

static void test_profile__ref_attention_errors(void)
{
	kb_tensor in[3];
	kb_ref_out o;
	kb_err err = {0};
	mk(&in[0], "q", KB_DT_F32, 0, 2, 5, 4, 1);
	mk(&in[1], "k", KB_DT_F32, 0, 2, 5, 3, 2);
	mk(&in[2], "v", KB_DT_F32, 0, 2, 5, 4, 3);
	const char *spec = "//! in q : f32[2, 5, 4]\n//! in k : f32[2, 5, 3]\n"
			   "//! in v : f32[2, 5, 4]\n//! out o : f32[2, 5, 4]\n"
			   "//! ref attention(q, k, v) -> o\n";
	T_EQ_INT(run_ref(spec, in, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "k must be [..., Nk, D]");
	for (int i = 0; i < 3; i++)
		kb_tensor_free(&in[i]);
}

/* ===== comparing with a sampled reference ===== */

static void test_profile__compare_unchecked_rows(void)
{
	int64_t dims[2] = {4, 3};
	kb_tensor out;
	kb_ref_out ref = {.rank = 2, .dims = {4, 3}, .n = 12};
	double r[12];
	kb_check_stats st;
	kb_tensor_init(&out, "o", KB_DT_F32, 2, dims);
	for (int i = 0; i < 12; i++) {
		r[i] = i < 3 || i >= 9 ? i : kb_ref_unchecked(); /* rows 0 and 3 */
		kb_tensor_set(&out, i, i);
	}
	ref.v = r;
	kb_profile_compare(&out, &ref, 1e-5, 1e-6, &st);
	T_OK(st.ok);
	T_EQ_INT(st.compared, 6);
	T_EQ_INT(st.rows, 4);
	T_EQ_INT(st.rows_compared, 2);
	kb_tensor_set(&out, 4, 1e30); /* an unchecked row's value: not judged */
	kb_profile_compare(&out, &ref, 1e-5, 1e-6, &st);
	T_OK(st.ok);
	kb_tensor_set(&out, 5, NAN); /* but it must be finite */
	kb_profile_compare(&out, &ref, 1e-5, 1e-6, &st);
	T_OK(!st.ok);
	T_EQ_INT(st.nan_count, 1);
	T_EQ_INT(st.first_bad, 5);
	kb_tensor_set(&out, 5, 5);
	memset((float *)out.data + 7, KB_POISON_BYTE, sizeof(float)); /* and written */
	kb_profile_compare(&out, &ref, 1e-5, 1e-6, &st);
	T_OK(!st.ok);
	T_EQ_INT(st.unwritten, 1);
	kb_tensor_set(&out, 7, 7);
	kb_tensor_set(&out, 10, 11); /* a checked row's value is judged */
	kb_profile_compare(&out, &ref, 1e-5, 1e-6, &st);
	T_OK(!st.ok);
	T_EQ_INT(st.mismatches, 1);
	kb_tensor_free(&out);
}

int main(void)
{
	T_RUN(test_profile__ref_attention_full);
	T_RUN(test_profile__ref_attention_sampled);
	T_RUN(test_profile__ref_attention_errors);
	T_RUN(test_profile__compare_unchecked_rows);
	return t_report();
}
