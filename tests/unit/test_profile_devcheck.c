/*
 * test_profile_devcheck.c - outputs compared on the GPU (devcheck.c) give
 * the verdicts and figures of the host comparison (compare.c): planted
 * mismatches, NaN, Inf, unwritten elements, non-finite references and the
 * integer poison rule, in every dtype class, over sizes that span many
 * blocks; against a CPU reference uploaded as doubles and against another
 * tensor (a reference kernel's output).  Needs a GPU; skipped without.
 */
#include "../../src/gpu/gpu.h"
#include "t.h"

#include <math.h>

static kb_device *dev;

/* A fault to plant at index `at` of the output (or the reference). */
/* UNCHECKED_ROW: the row of `at` left uncomputed by a sampled reference
 * (KB_REF_UNCHECKED), its output value at `at` off (not judged there). */
typedef enum { OK_NOISE, OFF, NAN_OUT, INF_OUT, UNWRITTEN, REF_NAN_SAME, REF_NAN_DIFF,
	       UNCHECKED_ROW } fault;

typedef struct {
	const char *name;
	kb_dtype dt;
	int64_t n;
	fault faults[4];
	int64_t at[4];
	int nfaults;
} scenario;

/* The reference: smooth values, some exactly -1 for the integer poison rule. */
static double ref_value(kb_dtype dt, int64_t i)
{
	if (dt == KB_DT_U8)
		return (double)((i * 7) % 255);
	if (dt >= KB_DT_I64)
		return (double)((i * 13) % 201) - 100.0; /* includes -1 */
	return sin(0.001 * (double)i) * 3.0 + 0.5;
}

static void plant(const scenario *s, kb_tensor *out, kb_ref_out *ref)
{
	for (int f = 0; f < s->nfaults; f++) {
		int64_t i = s->at[f];
		switch (s->faults[f]) {
		case OFF: kb_tensor_set(out, i, ref->v[i] + 1000.0); break;
		case NAN_OUT: kb_tensor_set(out, i, NAN); break;
		case INF_OUT: kb_tensor_set(out, i, -INFINITY); break;
		case UNWRITTEN:
			memset((char *)out->data + i * kb_dtype_size(s->dt), KB_POISON_BYTE,
			       (size_t)kb_dtype_size(s->dt));
			break;
		case REF_NAN_SAME: ref->v[i] = NAN; kb_tensor_set(out, i, NAN); break;
		case REF_NAN_DIFF: ref->v[i] = NAN; break;
		case UNCHECKED_ROW:
			for (int64_t k = i / 1000 * 1000; k < i / 1000 * 1000 + 1000; k++)
				ref->v[k] = kb_ref_unchecked();
			kb_tensor_set(out, i, 1000.0);
			break;
		case OK_NOISE: break;
		}
	}
}

static bool same_num(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* The two comparisons of one scenario agree in every field. */
static void agree(const scenario *s, const kb_check_stats *h, const kb_check_stats *g)
{
	T_EQ_INT(g->ok, h->ok);
	T_EQ_INT(g->n, h->n);
	T_EQ_INT(g->compared, h->compared);
	T_EQ_INT(g->rows_compared, h->rows_compared);
	T_EQ_INT(g->mismatches, h->mismatches);
	T_EQ_INT(g->unwritten, h->unwritten);
	T_EQ_INT(g->nan_count, h->nan_count);
	T_EQ_INT(g->inf_count, h->inf_count);
	T_EQ_INT(g->first_bad, h->first_bad);
	T_EQ_STR(g->first_bad_coord, h->first_bad_coord);
	T_OK(same_num(g->first_bad_got, h->first_bad_got));
	T_OK(same_num(g->first_bad_want, h->first_bad_want));
	T_OK(g->max_abs == h->max_abs);
	T_OK(g->max_rel == h->max_rel);
	T_NEAR(g->rel_l2, h->rel_l2, 1e-12 * (h->rel_l2 > 1 ? h->rel_l2 : 1));
	T_EQ_INT(g->near_n, h->near_n);
	T_EQ_INT(g->near_first, h->near_first);
	for (int k = 0; k < g->near_n && k < h->near_n; k++) {
		T_OK(same_num(g->near_got[k], h->near_got[k]));
		T_OK(same_num(g->near_want[k], h->near_want[k]));
		T_EQ_INT(g->near_unwritten[k], h->near_unwritten[k]);
	}
	if (t_case_failed)
		printf("    in scenario %s\n", s->name);
}

/* Runs a scenario both ways; *h and *g get the host and GPU figures. */
static void run_scenario(const scenario *s, kb_check_stats *h, kb_check_stats *g)
{
	int64_t dims[2] = {s->n / 1000, 1000};
	kb_tensor out;
	kb_tensor_init(&out, "y", s->dt, 2, dims);
	kb_ref_out ref = {.name = "y", .rank = 2, .dims = {dims[0], dims[1]}, .n = out.n};
	ref.v = malloc(sizeof(double) * (size_t)out.n);
	for (int64_t i = 0; i < out.n; i++) {
		ref.v[i] = ref_value(s->dt, i);
		/* within tolerance: the dtype's rounding, plus a little for floats */
		kb_tensor_set(&out, i, ref.v[i] * (s->dt <= KB_DT_BF16 ? 1 + 1e-9 : 1));
	}
	plant(s, &out, &ref);
	double rtol, atol;
	kb_profile_default_tol(s->dt, &rtol, &atol);
	kb_profile_compare(&out, &ref, rtol, atol, h);
	kb_err err = {0};
	CUdeviceptr d_out = 0;
	char key[KB_HASH_HEX];
	snprintf(key, sizeof key, "test-%s", s->name);
	int rc = KB_OK;
	size_t bytes = (size_t)out.n * (size_t)kb_dtype_size(s->dt);
	if ((rc = KB_CU(&err, cuMemAlloc(&d_out, bytes))) < 0)
		goto out;
	if ((rc = KB_CU(&err, cuMemcpyHtoDAsync(d_out, out.data, bytes, dev->stream))) < 0)
		goto out;
	T_EQ_INT(kb_profile__devref_put(dev, key, &ref, 1, &err), 0);
	int64_t rn = 0;
	CUdeviceptr d_ref = kb_profile__devref_buf(kb_profile__devref_get(dev, key), "y", &rn);
	T_OK(d_ref != 0);
	T_EQ_INT(rn, out.n);
	kb_profile__devside o = {d_out, s->dt}, r = {d_ref, KB_DT_F64};
	rc = kb_profile__devcheck(dev, &out, &o, &r, rn, rtol, atol, g, &err);
out:
	T_EQ_INT(rc, 0);
	if (rc < 0)
		printf("    %s\n", err.msg);
	if (d_out)
		kb_cu.cuMemFree(d_out);
	kb_tensor_free(&out);
	free(ref.v);
}

static void test_profile__devcheck_scenarios(void)
{
	if (!dev)
		T_SKIP("no GPU");
	const scenario all[] = {
		{"f32 correct", KB_DT_F32, 3000000, {OK_NOISE}, {0}, 0},
		{"f32 faults", KB_DT_F32, 3000000, {OFF, NAN_OUT, INF_OUT, UNWRITTEN},
		 {2999990, 1234567, 17, 2500001}, 4},
		{"f32 first bad at 0", KB_DT_F32, 2000, {OFF}, {0}, 1},
		{"f32 ref nan", KB_DT_F32, 200000, {REF_NAN_SAME, REF_NAN_DIFF}, {5, 150000}, 2},
		{"f64 faults", KB_DT_F64, 1000000, {UNWRITTEN, OFF}, {999999, 400000}, 2},
		{"f16 faults", KB_DT_F16, 500000, {INF_OUT, OFF}, {499000, 250000}, 2},
		{"bf16 correct", KB_DT_BF16, 500000, {OK_NOISE}, {0}, 0},
		{"bf16 nan", KB_DT_BF16, 500000, {NAN_OUT}, {77777}, 1},
		{"i32 poison rule", KB_DT_I32, 1000000, {UNWRITTEN, OFF}, {99, 700000}, 2},
		{"u8 unwritten", KB_DT_U8, 300000, {UNWRITTEN}, {1000}, 1},
		{"i64 correct", KB_DT_I64, 100000, {OK_NOISE}, {0}, 0},
		{"bf16 sampled rows", KB_DT_BF16, 500000, {UNCHECKED_ROW, UNCHECKED_ROW, NAN_OUT, UNWRITTEN},
		 {5004, 77777, 5100, 77000}, 4},
	};
	for (size_t k = 0; k < KB_ARRAY_LEN(all); k++) {
		kb_check_stats h, g;
		run_scenario(&all[k], &h, &g);
		agree(&all[k], &h, &g);
		printf("    %-20s %s: %lld bad, first %lld (%s)\n", all[k].name, g.ok ? "ok " : "BAD",
		       (long long)(g.mismatches + g.nan_count + g.inf_count + g.unwritten),
		       (long long)g.first_bad, g.first_bad_coord);
	}
	/* the planted faults were seen: */
	kb_check_stats h, g;
	run_scenario(&all[1], &h, &g);
	T_EQ_INT(g.first_bad, 17);
	T_EQ_INT(g.inf_count, 1);
	T_EQ_INT(g.nan_count, 1);
	T_EQ_INT(g.unwritten, 1);
	T_EQ_INT(g.mismatches, 1);
	T_OK(!g.ok);
	/* integers: an all-0xFF element is unwritten only where the reference
	 * is not -1 itself (every 201st element from 54 here) */
	T_EQ_INT(ref_value(KB_DT_I32, 54), -1);
	run_scenario(&all[8], &h, &g);
	T_EQ_INT(g.unwritten, 1);
	run_scenario(&all[10], &h, &g);
	T_OK(g.ok);
	T_EQ_INT(g.unwritten, 0);
	/* a sampled reference: two rows not compared (their wrong values pass),
	 * but written and finite is still asked of them */
	run_scenario(&all[11], &h, &g);
	T_EQ_INT(g.compared, 500000 - 2000);
	T_EQ_INT(g.rows_compared, 500 - 2);
	T_EQ_INT(g.mismatches, 0);
	T_EQ_INT(g.nan_count, 1);
	T_EQ_INT(g.unwritten, 1);
	T_EQ_INT(g.first_bad, 5100);
}

/* Against another tensor on the device (a reference kernel's output). */
static void test_profile__devcheck_tensor_ref(void)
{
	if (!dev)
		T_SKIP("no GPU");
	int64_t dims[1] = {100000};
	kb_tensor out, ref;
	kb_tensor_init(&out, "y", KB_DT_F32, 1, dims);
	kb_tensor_init(&ref, "y", KB_DT_BF16, 1, dims);
	for (int64_t i = 0; i < out.n; i++) {
		kb_tensor_set(&ref, i, cos(0.01 * (double)i));
		kb_tensor_set(&out, i, kb_tensor_get(&ref, i) * (i == 4321 ? 1.5 : 1.0));
	}
	kb_check_stats h, g;
	kb_profile_compare_tensors(&out, &ref, 1e-5, 1e-6, &h);
	kb_err err = {0};
	CUdeviceptr a = 0, b = 0;
	int rc = KB_OK;
	if ((rc = KB_CU(&err, cuMemAlloc(&a, (size_t)out.n * 4))) < 0)
		goto out;
	if ((rc = KB_CU(&err, cuMemAlloc(&b, (size_t)ref.n * 2))) < 0)
		goto out;
	if ((rc = KB_CU(&err, cuMemcpyHtoDAsync(a, out.data, (size_t)out.n * 4, dev->stream))) < 0)
		goto out;
	if ((rc = KB_CU(&err, cuMemcpyHtoDAsync(b, ref.data, (size_t)ref.n * 2, dev->stream))) < 0)
		goto out;
	kb_profile__devside o = {a, KB_DT_F32}, r = {b, KB_DT_BF16};
	rc = kb_profile__devcheck(dev, &out, &o, &r, ref.n, 1e-5, 1e-6, &g, &err);
	scenario s = {.name = "tensor ref"};
	agree(&s, &h, &g);
	T_EQ_INT(g.first_bad, 4321);
	T_EQ_INT(g.mismatches, 1);
out:
	T_EQ_INT(rc, 0);
	if (a)
		kb_cu.cuMemFree(a);
	if (b)
		kb_cu.cuMemFree(b);
	kb_tensor_free(&out);
	kb_tensor_free(&ref);
}

/* A reference larger than the device budget is refused, not half-kept. */
static void test_profile__devref_budget(void)
{
	if (!dev)
		T_SKIP("no GPU");
	size_t total = kb_profile_device_info(dev)->total_mem;
	kb_ref_out big = {.name = "y", .rank = 1, .n = (int64_t)(total / 4 / sizeof(double)) + 1};
	kb_err err = {0};
	T_EQ_INT(kb_profile__devref_put(dev, "too-big", &big, 1, &err), KB_ENOMEM);
	T_OK(!kb_profile__devref_get(dev, "too-big"));
	T_CONTAINS(err.msg, "does not fit");
}

/* Past the budget the least recently used references go, free slots or
 * not: every put is kept (it once refused the fourth of 1 KiB references
 * under a 3 KiB budget, with 13 slots free). */
static void test_profile__devref_evicts(void)
{
	if (!dev)
		T_SKIP("no GPU");
	double v[128] = {0};
	kb_ref_out one = {.name = "y", .rank = 1, .n = 128, .dims = {128}, .v = v};
	dev->devref_budget = 3 * sizeof v;
	char key[8][KB_HASH_HEX];
	for (int i = 0; i < 8; i++) {
		memset(key[i], 0, KB_HASH_HEX);
		snprintf(key[i], KB_HASH_HEX, "evict-%d", i);
		kb_err err = {0};
		T_EQ_INT(kb_profile__devref_put(dev, key[i], &one, 1, &err), KB_OK);
		T_OK(dev->devref_bytes <= 3 * sizeof v);
		T_OK(kb_profile__devref_get(dev, key[i]) != NULL);
	}
	T_OK(!kb_profile__devref_get(dev, key[0])); /* the oldest went */
	T_OK(kb_profile__devref_get(dev, key[5]) != NULL);
	dev->devref_budget = 0;
}

int main(void)
{
	kb_err err = {0};
	if (kb_profile_device_open(&dev, 0, &err) < 0)
		dev = NULL;
	T_RUN(test_profile__devcheck_scenarios);
	T_RUN(test_profile__devcheck_tensor_ref);
	T_RUN(test_profile__devref_budget);
	T_RUN(test_profile__devref_evicts);
	kb_profile_device_close(dev);
	return t_report();
}
