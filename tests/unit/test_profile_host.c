/* test_profile_host.c - the host side of a run (src/tensor, src/reference,
 * src/gpu/stats.c): f16/bf16 codecs and tensors, the built-in CPU
 * references, output comparison, timing statistics and .npy/raw input
 * files.  No GPU. */
#include "../../src/reference/reference.h"
#include "../../src/counters/counters.h"
#include "t.h"
#include "../ref_spec.h"

#include <cupti_result.h>
#include <stdlib.h>
#include <unistd.h>

/* ===== helpers ===== */

static void fill(kb_tensor *t, const double *v)
{
	for (int64_t i = 0; i < t->n; i++)
		kb_tensor_set(t, i, v[i]);
}

static void mk(kb_tensor *t, const char *name, kb_dtype dt, int rank, int64_t d0, int64_t d1,
	       int64_t d2, const double *v)
{
	int64_t dims[3] = {d0, d1, d2};
	kb_tensor_init(t, name, dt, rank, dims);
	if (v)
		fill(t, v);
}

static double rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return ((*s >> 8) & 0xffff) / 32768.0 - 1.0;
}

static void fill_rand(kb_tensor *t, unsigned seed)
{
	for (int64_t i = 0; i < t->n; i++)
		kb_tensor_set(t, i, rnd(&seed) * 3);
}

/* Runs the reference of a spec written as //! lines. */
static int run_ref(const char *lines, const kb_tensor *ins, int nins, kb_ref_out *out,
		   int nthreads, kb_err *err)
{
	return t_run_ref(lines, ins, nins, out, nthreads, err);
}

#define T_VEC(ref, want, tol) do { \
	for (int64_t t_i_ = 0; t_i_ < (int64_t)KB_ARRAY_LEN(want); t_i_++) \
		T_NEAR((ref)->v[t_i_], (want)[t_i_], tol); } while (0)

/* ===== tensor.c ===== */

static void test_profile__half_roundtrip_all(void)
{
	int bad = 0, bad_bf = 0, bad_dbl = 0;
	kb_tensor t;
	mk(&t, "h", KB_DT_F16, 1, 1, 0, 0, NULL);
	for (uint32_t h = 0; h < 65536; h++) {
		float f = kb_half_to_float((uint16_t)h);
		bad += kb_float_to_half(f) != h;
		bad_bf += kb_float_to_bf16(kb_bf16_to_float((uint16_t)h)) != h;
		if (!isnan(f)) {   /* via double: kb_tensor_set */
			kb_tensor_set(&t, 0, (double)f);
			bad_dbl += ((uint16_t *)t.data)[0] != h || kb_tensor_get(&t, 0) != f;
		}
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(bad_bf, 0);
	T_EQ_INT(bad_dbl, 0);
	kb_tensor_free(&t);
}

static void test_profile__half_known(void)
{
	T_OK(kb_half_to_float(0x3c00) == 1.0f);
	T_OK(kb_half_to_float(0xc000) == -2.0f);
	T_OK(kb_half_to_float(0x7bff) == 65504.0f);
	T_OK(kb_half_to_float(0x0001) == ldexpf(1, -24));
	T_OK(kb_half_to_float(0x03ff) == ldexpf(1023, -24));
	T_OK(kb_half_to_float(0x0400) == ldexpf(1, -14));
	T_OK(kb_half_to_float(0x3555) == 0.333251953125f);
	T_OK(isinf(kb_half_to_float(0x7c00)) && kb_half_to_float(0xfc00) < 0);
	T_OK(isnan(kb_half_to_float(0x7e00)));
	T_OK(signbit(kb_half_to_float(0x8000)) && kb_half_to_float(0x8000) == 0);
	T_EQ_INT(kb_float_to_half(1.0f), 0x3c00);
	T_EQ_INT(kb_float_to_half(0.1f), 0x2e66);
	T_EQ_INT(kb_float_to_half(-0.0f), 0x8000);
	T_EQ_INT(kb_float_to_half(65504.0f), 0x7bff);
	T_EQ_INT(kb_float_to_half(65519.0f), 0x7bff);   /* below the halfway point */
	T_EQ_INT(kb_float_to_half(65520.0f), 0x7c00);   /* halfway: rounds to inf */
	T_EQ_INT(kb_float_to_half(1e6f), 0x7c00);
	T_EQ_INT(kb_float_to_half(-INFINITY), 0xfc00);
	T_EQ_INT(kb_float_to_half(NAN) & 0x7e00, 0x7e00);
	T_EQ_INT(kb_float_to_half(1.0f + ldexpf(1, -11)), 0x3c00);       /* tie -> even */
	T_EQ_INT(kb_float_to_half(1.0f + 3 * ldexpf(1, -11)), 0x3c02);   /* tie -> even */
	T_EQ_INT(kb_float_to_half(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01);
	T_EQ_INT(kb_float_to_half(ldexpf(1, -25)), 0x0000);              /* tie -> 0 */
	T_EQ_INT(kb_float_to_half(ldexpf(3, -26)), 0x0001);              /* above tie */
	T_EQ_INT(kb_float_to_half(ldexpf(3, -25)), 0x0002);              /* 1.5 ulp tie -> 2 */
	T_EQ_INT(kb_float_to_half(ldexpf(1023.5f, -24)), 0x0400);        /* into the normals */
	T_EQ_INT(kb_float_to_half(ldexpf(1, -40)), 0x0000);
	T_EQ_INT(kb_float_to_half(-ldexpf(1, -40)), 0x8000);
	/* bf16 */
	T_EQ_INT(kb_float_to_bf16(1.0f), 0x3f80);
	T_EQ_INT(kb_float_to_bf16(3.140625f), 0x4049);
	T_EQ_INT(kb_float_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);        /* tie -> even */
	T_EQ_INT(kb_float_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
	T_EQ_INT(kb_float_to_bf16(3.4e38f), 0x7f80);                     /* overflow */
	T_OK(kb_bf16_to_float(0x0001) == ldexpf(1, -133));
	/* A double that float would round onto a tie rounds correctly when
	 * stored straight from double (no double rounding). */
	kb_tensor t;
	mk(&t, "h", KB_DT_F16, 1, 2, 0, 0, NULL);
	kb_tensor_set(&t, 0, 1.0 + ldexp(1, -11) + ldexp(1, -40));
	T_EQ_INT(((uint16_t *)t.data)[0], 0x3c01);
	T_EQ_INT(kb_float_to_half((float)(1.0 + ldexp(1, -11) + ldexp(1, -40))), 0x3c00);
	kb_tensor_free(&t);
}

/* Cross-checks the encoders against the compiler (_Float16) and the classic
 * bf16 rounding trick over a sweep of float bit patterns. */
static void test_profile__half_vs_reference_impl(void)
{
	int bad = 0, bad_bf = 0;
	for (uint64_t b = 0; b < (1ull << 32); b += 997) {
		uint32_t bits = (uint32_t)b;
		float f;
		memcpy(&f, &bits, sizeof(f));
		if (isnan(f))
			continue;
		uint32_t r = bits + 0x7fffu + ((bits >> 16) & 1);
		bad_bf += kb_float_to_bf16(f) != (uint16_t)(r >> 16);
#ifdef __FLT16_MAX__
		_Float16 h = (_Float16)f;
		uint16_t hb;
		memcpy(&hb, &h, sizeof(hb));
		bad += kb_float_to_half(f) != hb;
#endif
	}
	T_EQ_INT(bad, 0);
	T_EQ_INT(bad_bf, 0);
}

static void test_profile__tensor_basics(void)
{
	kb_tensor t;
	int64_t dims[2] = {64, 4096};
	kb_tensor_init(&t, "y", KB_DT_F32, 2, dims);
	T_EQ_INT(t.n, 64 * 4096);
	T_OK(kb_tensor_get(&t, 5) == 0);
	char c[96];
	kb_tensor_coord(&t, 17 * 4096 + 4095, c, sizeof(c));
	T_EQ_STR(c, "y[17, 4095]");
	kb_tensor_coord(&t, 0, c, 6);
	T_EQ_STR(c, "y[0, ");
	kb_tensor_free(&t);
	kb_tensor_init(&t, "s", KB_DT_I32, 0, NULL);
	T_EQ_INT(t.n, 1);
	kb_tensor_coord(&t, 0, c, sizeof(c));
	T_EQ_STR(c, "s[]");
	kb_tensor_set(&t, 0, 2.5);
	T_OK(kb_tensor_get(&t, 0) == 2);        /* nearest even */
	kb_tensor_set(&t, 0, 1e12);
	T_OK(kb_tensor_get(&t, 0) == INT32_MAX);
	kb_tensor_set(&t, 0, NAN);
	T_OK(kb_tensor_get(&t, 0) == 0);
	kb_tensor_free(&t);
	kb_tensor_init(&t, "u", KB_DT_U8, 1, (int64_t[]){2});
	kb_tensor_set(&t, 0, -3);
	kb_tensor_set(&t, 1, 300);
	T_OK(kb_tensor_get(&t, 0) == 0 && kb_tensor_get(&t, 1) == 255);
	kb_tensor_free(&t);
}

/* ===== reference.c ===== */

static void test_profile__ref_softmax(void)
{
	kb_tensor x;
	kb_ref_out o;
	kb_err err = {0};
	mk(&x, "x", KB_DT_F32, 2, 2, 3, 0, (double[]){1, 2, 3, 1, 1, 1});
	const char *spec = "//! in x : f32[2, 3]\n//! out y : f32[2, 3]\n"
			   "//! ref softmax(x, dim=1) -> y\n";
	T_EQ_INT(run_ref(spec, &x, 1, &o, 1, &err), 0);
	double want[] = {0.09003057317038046, 0.24472847105479764, 0.6652409557748219,
			 1 / 3.0, 1 / 3.0, 1 / 3.0};
	T_VEC(&o, want, 1e-15);
	T_EQ_STR(o.name, "y");
	T_EQ_INT(o.rank, 2);
	T_EQ_INT(o.n, 6);
	kb_ref_out_free(&o);
	/* dim=-1 is the same; log_softmax */
	T_EQ_INT(run_ref("//! in x : f32[2, 3]\n//! out y : f32[2, 3]\n"
			 "//! ref log_softmax(x, dim=-1) -> y\n", &x, 1, &o, 1, &err), 0);
	double lwant[] = {-2.4076059644443806, -1.4076059644443806, -0.4076059644443806};
	T_VEC(&o, lwant, 1e-14);
	kb_ref_out_free(&o);
	/* dim=0: columns */
	T_EQ_INT(run_ref("//! in x : f32[2, 3]\n//! out y : f32[2, 3]\n"
			 "//! ref softmax(x, dim=0) -> y\n", &x, 1, &o, 2, &err), 0);
	double s = 1 / (1 + exp(-1.0)), cwant[] = {0.5, 1 / (1 + exp(-1.0)), 1 / (1 + exp(-2.0)),
						    0.5, 1 - s, 1 - 1 / (1 + exp(-2.0))};
	T_VEC(&o, cwant, 1e-15);
	kb_ref_out_free(&o);
	kb_tensor_free(&x);
}

/* softmax over the middle dim of [3, 37, 40] (strided rows, partial lane
 * groups) against a naive loop, with 1 and 3 threads. */
static void test_profile__ref_softmax_strided(void)
{
	kb_tensor x;
	kb_ref_out o;
	kb_err err = {0};
	mk(&x, "x", KB_DT_BF16, 3, 3, 37, 40, NULL);
	fill_rand(&x, 7);
	const char *spec = "//! in x : bf16[3, 37, 40]\n//! out y : bf16[3, 37, 40]\n"
			   "//! ref softmax(x, dim=1) -> y\n";
	for (int nt = 1; nt <= 3; nt += 2) {
		T_EQ_INT(run_ref(spec, &x, 1, &o, nt, &err), 0);
		double maxerr = 0;
		for (int a = 0; a < 3; a++)
			for (int c = 0; c < 40; c++) {
				double s = 0;
				for (int b = 0; b < 37; b++)
					s += exp(kb_tensor_get(&x, (a * 37 + b) * 40 + c));
				for (int b = 0; b < 37; b++) {
					int64_t i = (a * 37 + b) * 40 + c;
					maxerr = fmax(maxerr, fabs(o.v[i] - exp(kb_tensor_get(&x, i)) / s));
				}
			}
		T_OK(maxerr < 1e-15);
		kb_ref_out_free(&o);
	}
	kb_tensor_free(&x);
}

static void test_profile__ref_norms(void)
{
	kb_tensor in[3];
	kb_ref_out o;
	kb_err err = {0};
	mk(&in[0], "x", KB_DT_F32, 2, 2, 4, 0, (double[]){1, 2, 3, 4, 2, 2, 2, 2});
	mk(&in[1], "w", KB_DT_F16, 1, 4, 0, 0, (double[]){1, 2, 1, 2});
	mk(&in[2], "b", KB_DT_F32, 1, 4, 0, 0, (double[]){0, 0, 1, 1});
	const char *hdr = "//! in x : f32[2, 4]\n//! in w : f16[4]\n//! in b : f32[4]\n"
			  "//! out y : f32[2, 4]\n";
	char spec[512];
	snprintf(spec, sizeof(spec), "%s//! ref layernorm(x) -> y\n", hdr);
	T_EQ_INT(run_ref(spec, in, 3, &o, 1, &err), 0);
	double r = 1 / sqrt(1.25 + 1e-5);
	double want[] = {-1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r, 0, 0, 0, 0};
	T_VEC(&o, want, 1e-14);
	kb_ref_out_free(&o);
	snprintf(spec, sizeof(spec), "%s//! ref layernorm(x, w, b, eps=0.25) -> y\n", hdr);
	T_EQ_INT(run_ref(spec, in, 3, &o, 1, &err), 0);
	r = 1 / sqrt(1.25 + 0.25);
	double want2[] = {-1.5 * r, -1.0 * r, 0.5 * r + 1, 3 * r + 1, 0, 0, 1, 1};
	T_VEC(&o, want2, 1e-14);
	kb_ref_out_free(&o);
	snprintf(spec, sizeof(spec), "%s//! ref rmsnorm(x, w) -> y\n", hdr);
	T_EQ_INT(run_ref(spec, in, 3, &o, 1, &err), 0);
	r = 1 / sqrt(7.5 + 1e-6);
	double q = 1 / sqrt(4 + 1e-6);
	double want3[] = {r, 4 * r, 3 * r, 8 * r, 2 * q, 4 * q, 2 * q, 4 * q};
	T_VEC(&o, want3, 1e-14);
	kb_ref_out_free(&o);
	/* a weight of the wrong length */
	snprintf(spec, sizeof(spec), "%s//! in v : f32[3]\n//! ref rmsnorm(x, v) -> y\n", hdr);
	kb_tensor v;
	mk(&v, "v", KB_DT_F32, 1, 3, 0, 0, NULL);
	kb_tensor all[4] = {in[0], in[1], in[2], v};
	T_EQ_INT(run_ref(spec, all, 4, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "weight 'v' is [3] (3 elements) but the last dim of 'x' is 4");
	T_OK(o.v == NULL);
	kb_tensor_free(&v);
	for (int i = 0; i < 3; i++)
		kb_tensor_free(&in[i]);
}

static void naive_mm(const kb_tensor *a, const kb_tensor *b, bool ta, bool tb, int64_t m,
		     int64_t k, int64_t n, double *c)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t p = 0; p < k; p++)
				s += kb_tensor_get(a, ta ? p * m + i : i * k + p) *
				     kb_tensor_get(b, tb ? j * k + p : p * n + j);
			c[i * n + j] = s;
		}
}

static void test_profile__ref_matmul_small(void)
{
	kb_tensor in[4];
	kb_ref_out o;
	kb_err err = {0};
	mk(&in[0], "a", KB_DT_F32, 2, 2, 3, 0, (double[]){1, 2, 3, 4, 5, 6});
	mk(&in[1], "b", KB_DT_F16, 2, 3, 2, 0, (double[]){7, 8, 9, 10, 11, 12});
	mk(&in[2], "at", KB_DT_F32, 2, 3, 2, 0, (double[]){1, 4, 2, 5, 3, 6});
	mk(&in[3], "bt", KB_DT_BF16, 2, 2, 3, 0, (double[]){7, 9, 11, 8, 10, 12});
	const char *hdr = "//! in a : f32[2, 3]\n//! in b : f16[3, 2]\n//! in at : f32[3, 2]\n"
			  "//! in bt : bf16[2, 3]\n//! out c : f32[2, 2]\n";
	const char *calls[] = {"matmul(a, b)", "matmul(at, b, transpose_a=true)",
			       "matmul(a, bt, transpose_b=true)",
			       "matmul(at, bt, transpose_a=true, transpose_b=true)"};
	double want[] = {58, 64, 139, 154};
	for (size_t i = 0; i < KB_ARRAY_LEN(calls); i++) {
		char spec[512];
		snprintf(spec, sizeof(spec), "%s//! ref %s -> c\n", hdr, calls[i]);
		T_EQ_INT(run_ref(spec, in, 4, &o, 0, &err), 0);
		T_VEC(&o, want, 0);
		kb_ref_out_free(&o);
	}
	char spec[512];
	snprintf(spec, sizeof(spec), "%s//! ref matmul(a, a) -> c\n", hdr);
	T_EQ_INT(run_ref(spec, in, 4, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "'a' [2, 3] and 'a' [2, 3]: inner dims 3 and 2 differ");
	snprintf(spec, sizeof(spec), "%s//! ref matmul(a, b, transpose_b=true) -> c\n", hdr);
	T_EQ_INT(run_ref(spec, in, 4, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "inner dims 3 and 2 differ");
	snprintf(spec, sizeof(spec), "%s//! ref matmul(a, b, trans_b=true) -> c\n", hdr);
	T_EQ_INT(run_ref(spec, in, 4, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "unknown keyword 'trans_b'");
	for (int i = 0; i < 4; i++)
		kb_tensor_free(&in[i]);
}

/* Sizes that are not multiples of the blocks, batched, transposed, 1 vs 4
 * threads against a naive triple loop. */
static void test_profile__ref_matmul_blocked(void)
{
	kb_tensor in[2];
	kb_ref_out o, o4;
	kb_err err = {0};
	mk(&in[0], "a", KB_DT_F32, 3, 2, 300, 70, NULL);   /* transposed: [B, K, M] */
	mk(&in[1], "b", KB_DT_F16, 2, 300, 90, 0, NULL);   /* shared by both batches */
	fill_rand(&in[0], 1);
	fill_rand(&in[1], 2);
	const char *spec = "//! in a : f32[2, 300, 70]\n//! in b : f16[300, 90]\n"
			   "//! out c : f32[2, 70, 90]\n"
			   "//! ref matmul(a, b, transpose_a=true) -> c\n";
	T_EQ_INT(run_ref(spec, in, 2, &o, 1, &err), 0);
	T_EQ_INT(run_ref(spec, in, 2, &o4, 4, &err), 0);
	T_EQ_INT(o.rank, 3);
	T_EQ_INT(o.n, 2 * 70 * 90);
	double *want = malloc(70 * 90 * sizeof(double)), maxerr = 0;
	kb_tensor a1 = in[0];
	for (int bi = 0; bi < 2; bi++) {
		a1.data = (float *)in[0].data + bi * 300 * 70;
		naive_mm(&a1, &in[1], true, false, 70, 300, 90, want);
		for (int i = 0; i < 70 * 90; i++)
			maxerr = fmax(maxerr, fabs(o.v[bi * 70 * 90 + i] - want[i]));
	}
	T_OK(maxerr < 1e-12);
	T_OK(memcmp(o.v, o4.v, (size_t)o.n * sizeof(double)) == 0);
	free(want);
	kb_ref_out_free(&o);
	kb_ref_out_free(&o4);
	kb_tensor_free(&in[0]);
	kb_tensor_free(&in[1]);
}

static void test_profile__ref_elementwise(void)
{
	kb_tensor in[3];
	kb_ref_out o;
	kb_err err = {0};
	mk(&in[0], "x", KB_DT_F32, 2, 2, 3, 0, (double[]){-2, -1, 0, 1, 2, 3});
	mk(&in[1], "y", KB_DT_F32, 2, 2, 3, 0, (double[]){10, 20, 30, 40, 50, 60});
	mk(&in[2], "bias", KB_DT_F16, 1, 3, 0, 0, (double[]){0.5, 1, 2});
	const char *hdr = "//! arg alpha = 2.5\n//! in x : f32[2, 3]\n//! in y : f32[2, 3]\n"
			  "//! in bias : f16[3]\n//! out z : f32[2, 3]\n";
	struct { const char *call; double want[6]; } cases[] = {
		{"add(x, y)", {8, 19, 30, 41, 52, 63}},
		{"mul(x, y)", {-20, -20, 0, 40, 100, 180}},
		{"add(x, bias)", {-1.5, 0, 2, 1.5, 3, 5}},
		{"mul(bias, x)", {-1, -1, 0, 0.5, 2, 6}},
		{"axpy(alpha, x, y)", {5, 17.5, 30, 42.5, 55, 67.5}},
		{"axpy(-1, x, y)", {12, 21, 30, 39, 48, 57}},
		{"relu(x)", {0, 0, 0, 1, 2, 3}},
		{"copy(y)", {10, 20, 30, 40, 50, 60}},
		{"gelu(x)", {-0.04550026389635842, -0.15865525393145707, 0, 0.8413447460685429,
			     1.9544997361036416, 2.99595030590511}},
		{"gelu(x, approximate=tanh)", {-0.04540230591222494, -0.15880800939172324, 0,
					       0.8411919906082768, 1.954597694087775,
					       2.996362607918227}},
		{"silu(x)", {-0.2384058440442351, -0.2689414213699951, 0, 0.7310585786300049,
			     1.7615941559557646, 2.8577223804673}},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		char spec[512];
		snprintf(spec, sizeof(spec), "%s//! ref %s -> z\n", hdr, cases[i].call);
		T_EQ_INT(run_ref(spec, in, 3, &o, 2, &err), 0);
		if (!o.v)
			continue;
		for (int k = 0; k < 6; k++)
			if (fabs(o.v[k] - cases[i].want[k]) > 1e-12)
				T_FAIL_AT("%s[%d] = %.17g, want %.17g", cases[i].call, k, o.v[k],
					  cases[i].want[k]);
		kb_ref_out_free(&o);
	}
	kb_tensor_free(&in[0]);
	kb_tensor_free(&in[1]);
	kb_tensor_free(&in[2]);
}

static void test_profile__ref_broadcast_error(void)
{
	kb_tensor in[2];
	kb_ref_out o;
	kb_err err = {0};
	mk(&in[0], "x", KB_DT_F32, 2, 2, 3, 0, NULL);
	mk(&in[1], "c", KB_DT_F32, 2, 2, 1, 0, NULL);
	T_EQ_INT(run_ref("//! in x : f32[2, 3]\n//! in c : f32[2, 1]\n//! out z : f32[2, 3]\n"
			 "//! ref add(x, c) -> z\n", in, 2, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "'x' [2, 3] and 'c' [2, 1] do not broadcast");
	T_CONTAINS(err.msg, "k.cu:4:9: ref add:");
	kb_tensor_free(&in[0]);
	kb_tensor_free(&in[1]);
}

static void test_profile__ref_reduce_transpose(void)
{
	kb_tensor x;
	kb_ref_out o;
	kb_err err = {0};
	mk(&x, "x", KB_DT_F32, 2, 2, 3, 0, (double[]){1, 5, 3, 4, 2, 6});
	const char *in = "//! in x : f32[2, 3]\n";
	struct { const char *rest; int rank; double want[6]; int n; } cases[] = {
		{"//! out y : f32[2]\n//! ref sum(x, dim=1) -> y\n", 1, {9, 12}, 2},
		{"//! out y : f32[2, 1]\n//! ref sum(x, dim=-1) -> y\n", 2, {9, 12}, 2},
		{"//! out y : f32[3]\n//! ref max(x, dim=0) -> y\n", 1, {4, 5, 6}, 3},
		{"//! out y : f32[1, 3]\n//! ref max(x, dim=0, keepdim=true) -> y\n", 2, {4, 5, 6}, 3},
		{"//! out y : f32[1]\n//! ref sum(x) -> y\n", 1, {21}, 1},
		{"//! out y : f32[3, 2]\n//! ref transpose(x) -> y\n", 2, {1, 4, 5, 2, 3, 6}, 6},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		char spec[256];
		snprintf(spec, sizeof(spec), "%s%s", in, cases[i].rest);
		T_EQ_INT(run_ref(spec, &x, 1, &o, 0, &err), 0);
		T_EQ_INT(o.rank, cases[i].rank);
		T_EQ_INT(o.n, cases[i].n);
		for (int k = 0; k < cases[i].n && o.v; k++)
			T_NEAR(o.v[k], cases[i].want[k], 0);
		kb_ref_out_free(&o);
	}
	/* the output's shape must agree with what the reference gives */
	T_EQ_INT(run_ref("//! in x : f32[2, 3]\n//! out y : f32[3]\n"
			 "//! ref sum(x, dim=1) -> y\n", &x, 1, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "the reference gives [2] but 'y' is [3]");
	T_EQ_INT(run_ref("//! in x : f32[2, 3]\n//! out y : f32[2]\n"
			 "//! ref sum(x, dim=2) -> y\n", &x, 1, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "dim=2 is out of range for x of rank 2");
	kb_tensor_free(&x);
	/* a large transpose crosses tile edges */
	mk(&x, "x", KB_DT_F16, 2, 70, 130, 0, NULL);
	fill_rand(&x, 3);
	T_EQ_INT(run_ref("//! in x : f16[70, 130]\n//! out y : f16[130, 70]\n"
			 "//! ref transpose(x) -> y\n", &x, 1, &o, 3, &err), 0);
	int bad = 0;
	for (int i = 0; i < 70; i++)
		for (int j = 0; j < 130; j++)
			bad += o.v[j * 70 + i] != kb_tensor_get(&x, i * 130 + j);
	T_EQ_INT(bad, 0);
	kb_ref_out_free(&o);
	kb_tensor_free(&x);
}

/* cross_entropy: logsumexp of each row minus its target's logit, worked by
 * hand; a target out of range gives NaN. */
static void test_profile__ref_cross_entropy(void)
{
	kb_tensor in[2];
	kb_ref_out o;
	kb_err err = {0};
	mk(&in[0], "x", KB_DT_F32, 2, 3, 3, 0, (double[]){0, 0, 0, 1, 2, 3, 1000, 0, -1000});
	mk(&in[1], "t", KB_DT_I32, 1, 3, 0, 0, (double[]){1, 0, 1});
	const char *spec = "//! in x : f32[3, 3]\n//! in t : i32[3]\n//! out l : f32[3]\n"
			   "//! ref cross_entropy(x, t) -> l\n";
	T_EQ_INT(run_ref(spec, in, 2, &o, 2, &err), 0);
	double lse1 = 3 + log(1 + exp(-1) + exp(-2));
	T_NEAR(o.v[0], log(3.0), 1e-12);
	T_NEAR(o.v[1], lse1 - 1, 1e-12);
	T_NEAR(o.v[2], 1000, 1e-9); /* no overflow: the row's max is taken out first */
	kb_ref_out_free(&o);
	kb_tensor_set(&in[1], 2, 7);
	T_EQ_INT(run_ref(spec, in, 2, &o, 1, &err), 0);
	T_OK(isnan(o.v[2]));
	kb_ref_out_free(&o);
	kb_tensor_free(&in[0]);
	kb_tensor_free(&in[1]);
}

static void test_profile__ref_errors(void)
{
	kb_tensor x;
	kb_ref_out o;
	kb_err err = {0};
	mk(&x, "x", KB_DT_F32, 1, 4, 0, 0, NULL);
	const char *hdr = "//! in x : f32[4]\n//! out y : f32[4]\n";
	struct { const char *ref; const char *msg; } cases[] = {
		{"softmaxx(x)", "unknown reference (built-ins: softmax, log_softmax"},
		{"softmax(y)", "'y' is not an input tensor (argument 1)"},
		{"softmax(x, dims=0)", "unknown keyword 'dims'"},
		{"softmax(x, dim=zz)", "dim='zz' is not a number"},
		{"relu(x, x)", "takes 1 positional argument(s), got 2"},
		{"axpy(x, x, x)", "the first argument must be a number or an arg"},
		{"gelu(x, approximate=fast)", "approximate=fast: expected none or tanh"},
		{"transpose(x)", "'x' is [4]; transpose takes a 2-D tensor"},
		{"matmul(x, x)", "matmul takes 2-D or batched 3-D tensors"},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		char spec[256];
		snprintf(spec, sizeof(spec), "%s//! ref %s -> y\n", hdr, cases[i].ref);
		kb_err_clear(&err);
		T_EQ_INT(run_ref(spec, &x, 1, &o, 1, &err), KB_EINVAL);
		T_CONTAINS(err.msg, cases[i].msg);
		T_OK(o.v == NULL && o.name == NULL);
	}
	/* a hand-built spec: no tensors (natural shape), no file location */
	kb_spec spec = {0};
	kb_ref_arg args[1] = {{NULL, "x", {0}}};
	char *outs[1] = {"r"};
	spec.ref = (kb_spec_ref){.present = true, .fn = "relu", .args = args, .nargs = 1,
				 .outs = outs, .nouts = 1};
	T_EQ_INT(kb_profile_reference(&spec, NULL, &x, 1, &o, 1, &err), 0);
	T_EQ_INT(o.rank, 1);
	T_EQ_INT(o.dims[0], 4);
	kb_ref_out_free(&o);
	spec.ref.is_kernel = true;
	T_EQ_INT(kb_profile_reference(&spec, NULL, &x, 1, &o, 1, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "no built-in reference");
	const char *const *names = kb_profile_reference_names();
	int n = 0;
	while (names[n])
		n++;
	T_EQ_INT(n, 17); /* 15, attention, cross_entropy */
	kb_tensor_free(&x);
}

/* ===== compare.c ===== */

static void test_profile__compare_basic(void)
{
	kb_tensor y;
	kb_ref_out r = {0};
	kb_check_stats st;
	mk(&y, "y", KB_DT_F32, 2, 4, 8, 0, NULL);
	r.n = 32;
	r.v = calloc(32, sizeof(double));
	for (int i = 0; i < 32; i++) {
		r.v[i] = 1 + i * 0.25;
		kb_tensor_set(&y, i, r.v[i]);
	}
	kb_profile_compare(&y, &r, 1e-5, 1e-6, &st);
	T_OK(st.ok);
	T_EQ_INT(st.first_bad, -1);
	T_OK(st.max_abs == 0 && st.rel_l2 == 0);
	((float *)y.data)[11] += 1e-3f;   /* y[1, 3] */
	((float *)y.data)[20] += 1e-6f;   /* within tolerance */
	kb_profile_compare(&y, &r, 1e-5, 1e-6, &st);
	T_OK(!st.ok);
	T_EQ_INT(st.mismatches, 1);
	T_EQ_INT(st.first_bad, 11);
	T_EQ_STR(st.first_bad_coord, "y[1, 3]");
	T_NEAR(st.first_bad_got, 3.751, 1e-6);
	T_NEAR(st.first_bad_want, 3.75, 0);
	T_NEAR(st.max_abs, 1e-3, 1e-7);
	T_NEAR(st.max_rel, 1e-3 / 3.75, 1e-7);
	/* unwritten, NaN and Inf are counted apart, and the first of all wins */
	memset((float *)y.data + 30, 0xFF, 4);
	memset((float *)y.data + 31, 0xFF, 4);
	((float *)y.data)[5] = NAN;
	((float *)y.data)[7] = INFINITY;
	kb_profile_compare(&y, &r, 1e-5, 1e-6, &st);
	T_EQ_INT(st.unwritten, 2);
	T_EQ_INT(st.nan_count, 1);
	T_EQ_INT(st.inf_count, 1);
	T_EQ_INT(st.mismatches, 1);
	T_EQ_INT(st.first_bad, 5);
	T_EQ_STR(st.first_bad_coord, "y[0, 5]");
	T_OK(isnan(st.first_bad_got));
	T_EQ_INT(st.n, 32);
	free(r.v);
	kb_tensor_free(&y);
}

static void test_profile__compare_norms_and_nonfinite(void)
{
	kb_tensor y;
	kb_ref_out r = {0};
	kb_check_stats st;
	mk(&y, "y", KB_DT_F64, 1, 2, 0, 0, (double[]){3, 4.5});
	r.n = 2;
	r.v = (double[]){3, 4};
	kb_profile_compare(&y, &r, 0, 0, &st);
	T_NEAR(st.rel_l2, 0.1, 1e-15);
	T_NEAR(st.max_abs, 0.5, 0);
	T_NEAR(st.max_rel, 0.125, 0);
	T_EQ_STR(st.first_bad_coord, "y[1]");
	r.v = (double[]){0, 0};   /* ||ref|| = 0: rel_l2 is ||out - ref|| */
	kb_profile_compare(&y, &r, 0, 0, &st);
	T_NEAR(st.rel_l2, sqrt(9 + 4.5 * 4.5), 1e-12);
	T_NEAR(st.max_rel, 0, 0);
	/* the reference's own NaN/Inf must be matched exactly */
	fill(&y, (double[]){NAN, -INFINITY});
	r.v = (double[]){NAN, -INFINITY};
	kb_profile_compare(&y, &r, 1e-5, 1e-6, &st);
	T_OK(st.ok);
	T_EQ_INT(st.nan_count, 0);
	fill(&y, (double[]){1, INFINITY});
	kb_profile_compare(&y, &r, 1e-5, 1e-6, &st);
	T_EQ_INT(st.mismatches, 2);
	T_EQ_INT(st.nan_count + st.inf_count, 0);
	kb_tensor_free(&y);
}

static void test_profile__compare_ints_and_tensors(void)
{
	kb_tensor y, ref;
	kb_check_stats st;
	mk(&y, "idx", KB_DT_I32, 1, 3, 0, 0, (double[]){-1, -1, 7});
	mk(&ref, "r", KB_DT_I32, 1, 3, 0, 0, (double[]){-1, 5, 7});
	kb_profile_compare_tensors(&y, &ref, 0, 0, &st);
	T_EQ_INT(st.unwritten, 1);   /* -1 where 5 was expected; the first -1 is legal */
	T_EQ_INT(st.first_bad, 1);
	T_EQ_STR(st.first_bad_coord, "idx[1]");
	kb_tensor_free(&y);
	kb_tensor_free(&ref);
	/* f16 output against an f32 reference tensor, default f16 tolerances */
	double rt, at;
	kb_profile_default_tol(KB_DT_F16, &rt, &at);
	mk(&y, "h", KB_DT_F16, 1, 3, 0, 0, (double[]){0.1, 1.0 / 3, 1000.3});
	mk(&ref, "r", KB_DT_F32, 1, 3, 0, 0, (double[]){0.1, 1.0 / 3, 1000.3});
	kb_profile_compare_tensors(&y, &ref, rt, at, &st);
	T_OK(st.ok);
	T_OK(st.max_rel > 0 && st.max_rel < 4.9e-4);
	kb_tensor_free(&ref);
	mk(&ref, "r", KB_DT_F32, 1, 4, 0, 0, NULL);
	kb_profile_compare_tensors(&y, &ref, rt, at, &st);   /* sizes differ */
	T_OK(!st.ok);
	T_EQ_INT(st.first_bad, 0);
	kb_tensor_free(&ref);
	kb_tensor_free(&y);
}

static void test_profile__default_tol(void)
{
	double r, a;
	kb_profile_default_tol(KB_DT_F32, &r, &a);
	T_OK(r == 1e-5 && a == 1e-6);
	kb_profile_default_tol(KB_DT_F64, &r, &a);
	T_OK(r == 1e-7 && a == 1e-7);
	kb_profile_default_tol(KB_DT_BF16, &r, &a);
	T_OK(r == 1.6e-2 && a == 1e-5);
	kb_profile_default_tol(KB_DT_F16, &r, &a);
	T_OK(r == 1e-3 && a == 1e-5);
	kb_profile_default_tol(KB_DT_I8, &r, &a);
	T_OK(r == 0 && a == 0);
}

/* ===== stats.c ===== */

static void test_profile__stats(void)
{
	double v[] = {5, 1, 4, 2, 3};
	kb_stats st;
	kb_stats_compute(v, 5, &st);
	T_EQ_INT(st.n, 5);
	T_NEAR(st.median, 3, 0);
	T_NEAR(st.min, 1, 0);
	T_NEAR(st.max, 5, 0);
	T_NEAR(st.mean, 3, 0);
	T_NEAR(st.stdev, sqrt(2.5), 1e-15);
	T_NEAR(st.cv, sqrt(2.5) / 3, 1e-15);
	T_NEAR(st.p10, 1.4, 1e-15);
	T_NEAR(st.p90, 4.6, 1e-15);
	T_OK(v[0] == 5 && v[1] == 1);   /* untouched */
	kb_stats_compute((double[]){4, 1, 3, 2}, 4, &st);
	T_NEAR(st.median, 2.5, 0);
	kb_stats_compute((double[]){7}, 1, &st);
	T_OK(st.median == 7 && st.stdev == 0 && st.p90 == 7);
	kb_stats_compute(NULL, 0, &st);
	T_OK(st.n == 0 && st.median == 0);
}

static void test_profile__should_stop(void)
{
	kb_rep_policy p = {.min_reps = 5, .max_reps = 8, .max_ms = 100, .rel_tol = 0.01};
	double flat[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	double drift[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	T_OK(!kb_stats_should_stop(&p, flat, 4, 1));    /* below min_reps */
	T_OK(kb_stats_should_stop(&p, flat, 5, 1));     /* settled */
	T_OK(!kb_stats_should_stop(&p, drift, 5, 1));   /* medians 3 vs 4.5 */
	T_OK(kb_stats_should_stop(&p, drift, 8, 1));    /* max_reps */
	T_OK(kb_stats_should_stop(&p, drift, 6, 100));  /* time budget */
	double noisy[] = {1.00, 1.02, 0.99, 1.01, 1.00, 1.001};
	T_OK(kb_stats_should_stop(&p, noisy, 6, 1));    /* medians 1.005 vs 1.0055 */
	p.rel_tol = 1e-5;
	T_OK(!kb_stats_should_stop(&p, noisy, 6, 1));
	p.max_reps = 0;
	p.max_ms = 0;
	T_OK(!kb_stats_should_stop(&p, drift, 9, 1e9)); /* 0 = no limit */
	T_OK(!kb_stats_should_stop(&p, NULL, 0, 0));
}

/* ===== npy.c ===== */

static char tmpdir[64];

/* Writes a .npy file by hand: version major.0, dict text padded to 64. */
static char *write_npy(const char *name, int major, const char *dict, const void *data,
		       size_t n)
{
	char *path = kb_xasprintf("%s/%s", tmpdir, name);
	size_t pre = major == 1 ? 10 : 12, len = strlen(dict) + 1;
	size_t pad = (64 - (pre + len) % 64) % 64, hlen = len + pad;
	FILE *f = fopen(path, "wb");
	fwrite("\x93NUMPY", 1, 6, f);
	unsigned char v[6] = {(unsigned char)major, 0, (unsigned char)hlen,
			      (unsigned char)(hlen >> 8), 0, 0};
	fwrite(v, 1, pre - 6, f);
	fputs(dict, f);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	fwrite(data, 1, n, f);
	fclose(f);
	return path;
}

static void test_profile__npy_load(void)
{
	float d[6] = {1, 2, 3, 4, 5, 6.5f};
	kb_tensor t;
	kb_err err = {0};
	mk(&t, "x", KB_DT_F32, 2, 2, 3, 0, NULL);
	for (int major = 1; major <= 3; major++) {
		char *p = write_npy("x.npy", major, "{'descr': '<f4', 'fortran_order': False, "
				    "'shape': (2, 3), }", d, sizeof(d));
		memset(t.data, 0, sizeof(d));
		T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
		T_OK(memcmp(t.data, d, sizeof(d)) == 0);
		free(p);
	}
	char *p = write_npy("y.npy", 1, "{\"shape\":(2,3),\"fortran_order\":False,\"descr\":\"<f4\"}",
			    d, sizeof(d));
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	free(p);
	kb_tensor_free(&t);
	/* rank 1 and rank 0 shapes; bf16 from raw 2-byte patterns */
	uint16_t bits[3] = {0x3f80, 0x4000, 0xc040};
	mk(&t, "b", KB_DT_BF16, 1, 3, 0, 0, NULL);
	p = write_npy("b.npy", 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }",
		      bits, sizeof(bits));
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	T_OK(kb_tensor_get(&t, 2) == -3);
	free(p);
	kb_tensor_free(&t);
	int64_t s = 42;
	kb_tensor_init(&t, "s", KB_DT_I64, 0, NULL);
	p = write_npy("s.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
		      &s, sizeof(s));
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	T_OK(kb_tensor_get(&t, 0) == 42);
	free(p);
	kb_tensor_free(&t);
}

static void test_profile__npy_errors(void)
{
	float d[24] = {0};
	kb_tensor t;
	kb_err err = {0};
	mk(&t, "x", KB_DT_F32, 2, 4, 6, 0, NULL);
	struct { const char *dict; int major; size_t n; const char *msg; } cases[] = {
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 5), }", 1, 80,
		 "x.npy: shape (4, 5) but the spec says f32[4, 6]"},
		{"{'descr': '<f8', 'fortran_order': False, 'shape': (4, 6), }", 1, 96,
		 "x.npy: dtype '<f8' (f64) but the spec says f32[4, 6]"},
		{"{'descr': '>f4', 'fortran_order': False, 'shape': (4, 6), }", 1, 96,
		 "x.npy: big-endian data ('>f4')"},
		{"{'descr': '<f4', 'fortran_order': True, 'shape': (4, 6), }", 1, 96,
		 "x.npy: fortran_order is True"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }", 1, 92,
		 "x.npy: 92 bytes of data but the spec says f32[4, 6] (96 bytes)"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }", 2, 100,
		 "x.npy: 100 bytes of data"},
		{"{'descr': '<f4', 'shape': (4, 6), }", 1, 96, "lacks 'descr', 'fortran_order'"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6 }", 1, 96,
		 "bad .npy header: malformed header dict"},
		{"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }", 1, 16,
		 "structured dtypes are not supported"},
		{"{'descr': '<c8', 'fortran_order': False, 'shape': (4, 6), }", 1, 192,
		 "dtype '<c8' (not supported)"},
		{"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }", 4, 96,
		 "unsupported .npy format version 4.0"},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(cases); i++) {
		char buf[200] = {0};
		char *p = write_npy("x.npy", cases[i].major, cases[i].dict, buf, cases[i].n);
		kb_err_clear(&err);
		T_EQ_INT(kb_profile_load_file(p, &t, &err), KB_EINVAL);
		T_CONTAINS(err.msg, cases[i].msg);
		free(p);
	}
	char *p = kb_xasprintf("%s/junk.npy", tmpdir);
	FILE *f = fopen(p, "wb");
	fputs("PK\x03\x04 not numpy", f);
	fclose(f);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "junk.npy: not a .npy file");
	free(p);
	p = kb_xasprintf("%s/missing.npy", tmpdir);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), KB_ENOTFOUND);
	T_CONTAINS(err.msg, "missing.npy");
	free(p);
	/* raw files: exactly n * size bytes */
	p = kb_xasprintf("%s/x.bin", tmpdir);
	d[23] = 9;
	f = fopen(p, "wb");
	fwrite(d, 1, sizeof(d), f);
	fclose(f);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	T_OK(kb_tensor_get(&t, 23) == 9);
	f = fopen(p, "ab");
	fputc(0, f);
	fclose(f);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "x.bin: 97 bytes of data but the spec says f32[4, 6] (96 bytes)");
	free(p);
	kb_tensor_free(&t);
}

/* Files that numpy itself wrote (Debian's python3-numpy, which `make deps`
 * installs; the GPU machines have numpy on their own python3). */
static void test_profile__npy_numpy(void)
{
	const char *py = NULL;
	if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0)
		py = "/usr/bin/python3";
	else if (system("python3 -c 'import numpy' >/dev/null 2>&1") == 0)
		py = "python3";
	else
		T_SKIP("python3 with numpy is not installed (make deps installs python3-numpy)");
	char *cmd = kb_xasprintf("cd %s && %s -c \"import numpy as np; "
				 "np.save('n1.npy', np.arange(12, dtype='<f4').reshape(3, 4) / 8); "
				 "np.save('n2.npy', np.arange(5, dtype=np.float16) - 2.5); "
				 "np.save('n3.npy', np.full((2, 2, 2), -7, dtype=np.int8))\"", tmpdir, py);
	T_EQ_INT(system(cmd), 0);
	free(cmd);
	kb_tensor t;
	kb_err err = {0};
	char *p = kb_xasprintf("%s/n1.npy", tmpdir);
	mk(&t, "a", KB_DT_F32, 2, 3, 4, 0, NULL);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	T_OK(kb_tensor_get(&t, 11) == 11 / 8.0);
	kb_tensor_free(&t);
	free(p);
	p = kb_xasprintf("%s/n2.npy", tmpdir);
	mk(&t, "h", KB_DT_F16, 1, 5, 0, 0, NULL);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	T_OK(kb_tensor_get(&t, 0) == -2.5 && kb_tensor_get(&t, 4) == 1.5);
	kb_tensor_free(&t);
	free(p);
	p = kb_xasprintf("%s/n3.npy", tmpdir);
	mk(&t, "i", KB_DT_I8, 3, 2, 2, 2, NULL);
	T_EQ_INT(kb_profile_load_file(p, &t, &err), 0);
	T_OK(kb_tensor_get(&t, 7) == -7);
	kb_tensor_free(&t);
	free(p);
}

/* One mapping of CUPTI's results for counters, PC sampling and timestamps:
 * the code each maps to, and the fix a user needs for permissions. */
static void test_profile__cupti_errors(void)
{
	kb_err err = {0};
	T_EQ_INT(kb_profile__cupti_fail(&err, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiX",
					"GPU performance counters", "f.c", 7), KB_EPERM);
	T_CONTAINS(err.msg, "no permission for GPU performance counters");
	T_CONTAINS(err.msg, "in cuptiX");
	T_CONTAINS(err.msg, "NVreg_RestrictProfilingToAdminUsers=0");
	T_CONTAINS(err.msg, "--cap-add=SYS_ADMIN");
	T_EQ_INT(err.code, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
	T_EQ_INT(kb_profile__cupti_fail(&err, CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
					"cuptiX", "PC sampling", "f.c", 7), KB_EPERM);
	T_CONTAINS(err.msg, "no permission for PC sampling on this virtual GPU");
	T_EQ_INT(kb_profile__cupti_fail(&err, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiX",
					"GPU performance counters", "f.c", 7), KB_EUNSUP);
	T_CONTAINS(err.msg, "another profiler is attached");
	T_EQ_INT(kb_profile__cupti_fail(&err, CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "cuptiX",
					"PC sampling", "f.c", 7), KB_EUNSUP);
	T_CONTAINS(err.msg, "PC sampling not supported here");
	T_EQ_INT(kb_profile__cupti_fail(&err, CUPTI_ERROR_INVALID_METRIC_NAME, "cuptiX",
					"GPU performance counters", "f.c", 7), KB_EINVAL);
	T_EQ_INT(kb_profile__cupti_fail(&err, CUPTI_ERROR_UNKNOWN, "cuptiX",
					"GPU performance counters", "f.c", 7), KB_ERROR);
	T_CONTAINS(err.msg, "cuptiX: ");
	T_EQ_INT(kb_profile__cupti_fail(NULL, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiX",
					"x", "f.c", 7), KB_EPERM);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kbench-prof-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	T_RUN(test_profile__cupti_errors);
	T_RUN(test_profile__half_roundtrip_all);
	T_RUN(test_profile__half_known);
	T_RUN(test_profile__half_vs_reference_impl);
	T_RUN(test_profile__tensor_basics);
	T_RUN(test_profile__ref_softmax);
	T_RUN(test_profile__ref_softmax_strided);
	T_RUN(test_profile__ref_norms);
	T_RUN(test_profile__ref_matmul_small);
	T_RUN(test_profile__ref_matmul_blocked);
	T_RUN(test_profile__ref_elementwise);
	T_RUN(test_profile__ref_cross_entropy);
	T_RUN(test_profile__ref_broadcast_error);
	T_RUN(test_profile__ref_reduce_transpose);
	T_RUN(test_profile__ref_errors);
	T_RUN(test_profile__compare_basic);
	T_RUN(test_profile__compare_norms_and_nonfinite);
	T_RUN(test_profile__compare_ints_and_tensors);
	T_RUN(test_profile__default_tol);
	T_RUN(test_profile__stats);
	T_RUN(test_profile__should_stop);
	T_RUN(test_profile__npy_load);
	T_RUN(test_profile__npy_errors);
	T_RUN(test_profile__npy_numpy);
	char *rm = kb_xasprintf("rm -rf %s", tmpdir);
	if (system(rm) != 0)
		printf("could not remove %s\n", tmpdir);
	free(rm);
	return t_report();
}
