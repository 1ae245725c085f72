/* test_profile_activity.c - kernel durations from the CUPTI Activity API
 * (activity.c): without a GPU, start/stop fail cleanly or see nothing; on a
 * GPU, one record per launch of the named kernel (others dropped), mangled
 * names, repeated sessions, and what a start/stop pair costs. */
#include "../../src/counters/counters.h"
#include "t.h"
#include "gpu_fixture.h"

#define N_ELEMS (16u << 20)   /* 64 MB per buffer: a ~40 us kernel */

/* ---- no GPU needed ---------------------------------------------------------------- */

static void test_profile__activity_no_gpu(void)
{
	for (int round = 0; round < 3; round++) {
		kb_err err = {0};
		double t = kb_now_ms();
		int rc = kb_profile__activity_start(&err);
		t = kb_now_ms() - t;
		T_OK(rc == 0 || rc == KB_EUNSUP);
		if (rc < 0)
			T_OK(err.msg[0] != '\0');
		if (round == 0)
			printf("    first activity_start: rc %d in %.3f ms%s%s\n", rc, t,
			       rc < 0 ? ": " : "", rc < 0 ? err.msg : "");
		double d[4] = {-1, -1, -1, -1};
		int n = -1;
		kb_err err2 = {0};
		int src = kb_profile__activity_stop("kb_nothing", d, 4, &n, &err2);
		T_EQ_INT(n, 0);
		T_OK(d[0] == -1);
		T_OK(rc == 0 ? src == 0 : src == KB_EUNSUP);
	}
	/* Stop without a session: nothing, cleanly. */
	int n = -1;
	kb_err err = {0};
	T_EQ_INT(kb_profile__activity_stop("kb_nothing", NULL, 0, &n, &err), KB_EUNSUP);
	T_EQ_INT(n, 0);
}

/* ---- on a GPU ------------------------------------------------------------------------ */

static const char act_src[] =
	"extern \"C\" __global__ void kb_act_scale(const float *x, float *y, unsigned long long n) {\n"
	"  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
	"}\n"
	"__global__ void kb_act_mangled(float *p) { if (threadIdx.x == 0) p[blockIdx.x] = 1.0f; }\n";

typedef struct {
	t_gpu g;
	CUfunction scale, mangled;
} fixture;

static int setup(fixture *f, kb_err *err)
{
	int rc = t_gpu_open(&f->g, "<activity test>.cu", act_src, N_ELEMS, err);
	if (rc == KB_OK && (rc = KB_CU(err, cuModuleGetFunction(&f->scale, f->g.mod,
								"kb_act_scale"))) < 0)
		goto out;
	if (rc == KB_OK && (rc = KB_CU(err, cuModuleGetFunction(&f->mangled, f->g.mod,
								"_Z14kb_act_mangledPf"))) < 0)
		goto out;
out:
	return rc;
}

static int launch_scale(fixture *f, kb_err *err)
{
	int rc = KB_OK;
	void *args[] = {&f->g.x, &f->g.y, &f->g.n};
	if ((rc = KB_CU(err, cuLaunchKernel(f->scale, (unsigned)((f->g.n + 255) / 256), 1, 1, 256, 1, 1, 0,
				            f->g.d->stream, args, NULL))) < 0)
		goto out;
out:
	return rc;
}

static int launch_mangled(fixture *f, kb_err *err)
{
	int rc = KB_OK;
	void *args[] = {&f->g.y};
	if ((rc = KB_CU(err, cuLaunchKernel(f->mangled, 4, 1, 1, 32, 1, 1, 0, f->g.d->stream, args,
					    NULL))) < 0)
		goto out;
out:
	return rc;
}

static int launch_scale_ctx(void *ctx, kb_err *err)
{
	return launch_scale(ctx, err);
}

/* Event-timed launches of kb_act_scale (each after an L2 flush), ms each. */
static int event_times(fixture *f, int reps, double *ms, kb_err *err)
{
	return t_gpu_event_ms(&f->g, launch_scale_ctx, f, reps, ms, err);
}

static double median(const double *v, int n)
{
	kb_stats st;
	kb_stats_compute(v, n, &st);
	return st.median;
}

/* One session: `launches` of kb_act_scale with flushes and kb_act_mangled
 * between; checks the count and signs; returns start+stop ms in cost. */
static void session(fixture *f, int launches, double *start_ms, double *stop_ms)
{
	kb_err err = {0};
	double t = kb_now_ms();
	int rc = kb_profile__activity_start(&err);
	*start_ms = kb_now_ms() - t;
	if (rc < 0) {
		T_FAIL_AT("activity_start: %s", err.msg);
		return;
	}
	T_EQ_INT(kb_profile__activity_start(&err), KB_EINVAL);
	for (int i = 0; i < launches && rc == 0; i++) {
		if ((rc = kb_profile__flush_l2(f->g.d, &err)) == 0 && (rc = launch_scale(f, &err)) == 0)
			rc = launch_mangled(f, &err);
	}
	if (rc == 0)
		rc = kb_profile__sync(f->g.d, &err);
	T_EQ_INT(rc, 0);
	double dur[64];
	int n = -1;
	t = kb_now_ms();
	rc = kb_profile__activity_stop("kb_act_scale", dur, 64, &n, &err);
	*stop_ms = kb_now_ms() - t;
	if (rc != 0)
		T_FAIL_AT("activity_stop: %d %s", rc, err.msg);
	T_EQ_INT(n, launches);
	for (int i = 0; i < n; i++)
		T_OK(dur[i] > 1.0 && dur[i] < 10000.0);
}

static void check_sessions(fixture *f)
{
	double s0, p0, s[20], p[20];
	session(f, 5, &s0, &p0);
	for (int i = 0; i < 20; i++)
		session(f, 8, &s[i], &p[i]);
	printf("    CUPTI start/stop: first %.3f/%.3f ms, then median %.3f/%.3f ms (max %.3f/%.3f)\n",
	       s0, p0, median(s, 20), median(p, 20), s[0] > s[19] ? s[0] : s[19],
	       p[0] > p[19] ? p[0] : p[19]);
	/* A mangled (C++) kernel is found by its mangled name. */
	kb_err err = {0};
	T_EQ_INT(kb_profile__activity_start(&err), 0);
	for (int i = 0; i < 3; i++)
		T_EQ_INT(launch_mangled(f, &err), 0);
	T_EQ_INT(kb_profile__sync(f->g.d, &err), 0);
	double dur[8];
	int n = -1;
	T_EQ_INT(kb_profile__activity_stop("_Z14kb_act_mangledPf", dur, 8, &n, &err), 0);
	T_EQ_INT(n, 3);
	/* Kernels ran, none so named: ENOTFOUND with the names seen. */
	T_EQ_INT(kb_profile__activity_start(&err), 0);
	T_EQ_INT(launch_mangled(f, &err), 0);
	T_EQ_INT(kb_profile__sync(f->g.d, &err), 0);
	T_EQ_INT(kb_profile__activity_stop("kb_act_scale", dur, 8, &n, &err), KB_ENOTFOUND);
	T_EQ_INT(n, 0);
	T_CONTAINS(err.msg, "_Z14kb_act_mangledPf");
	/* Nothing launched: 0 records, rc 0. */
	T_EQ_INT(kb_profile__activity_start(&err), 0);
	T_EQ_INT(kb_profile__activity_stop("kb_act_scale", dur, 8, &n, &err), 0);
	T_EQ_INT(n, 0);
}

/* Events with CUPTI off and on, interleaved (so clock drift hits both), and
 * CUPTI's own figure; then off again, to see that disable undoes it. */
static void check_perturbation(fixture *f)
{
	enum { REPS = 40, ROUNDS = 4 };
	double off[ROUNDS + 1][REPS], on[ROUNDS][REPS], dur[ROUNDS][REPS + 8];
	kb_err err = {0};
	for (int r = 0; r < ROUNDS; r++) {
		T_EQ_INT(event_times(f, REPS, off[r], &err), 0);
		T_EQ_INT(kb_profile__activity_start(&err), 0);
		T_EQ_INT(event_times(f, REPS, on[r], &err), 0);
		int n = 0;
		T_EQ_INT(kb_profile__activity_stop("kb_act_scale", dur[r], REPS + 8, &n, &err), 0);
		T_EQ_INT(n, REPS);
		if (n != REPS)
			return;
	}
	T_EQ_INT(event_times(f, REPS, off[ROUNDS], &err), 0);
	printf("    128 MB scale, medians per round (us): events CUPTI off | events CUPTI on | "
	       "CUPTI kernel\n");
	for (int r = 0; r < ROUNDS; r++) {
		double m_on = median(on[r], REPS) * 1e3, m_k = median(dur[r], REPS);
		printf("      %8.2f | %8.2f | %8.2f\n", median(off[r], REPS) * 1e3, m_on, m_k);
		T_OK(m_k > 0.5 * m_on && m_k <= m_on + 1.0);
	}
	printf("      %8.2f (off, after all sessions)\n", median(off[ROUNDS], REPS) * 1e3);
}

static void test_profile__activity_gpu(void)
{
	kb_err err = {0};
	if (kb_profile_device_count(&err) <= 0)
		T_SKIP("no GPU");
	fixture f = {0};
	if (setup(&f, &err) < 0) {
		T_FAIL_AT("setup: %s", err.msg);
		t_gpu_close(&f.g);
		return;
	}
	/* Warm up: module load on first launch. */
	T_EQ_INT(launch_scale(&f, &err), 0);
	T_EQ_INT(kb_profile__sync(f.g.d, &err), 0);
	check_sessions(&f);
	check_perturbation(&f);
	t_gpu_close(&f.g);
}

int main(void)
{
	T_RUN(test_profile__activity_no_gpu);
	T_RUN(test_profile__activity_gpu);
	return t_report();
}
