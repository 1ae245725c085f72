/* test_profile_pcsample.c - hot spots from CUPTI PC sampling (pcsample.c):
 * without a GPU, a call fails cleanly; on a GPU, a kernel with one slow line
 * (a strided, uncoalesced load) next to cheap arithmetic is sampled through
 * a fresh module per call, and the hottest PC maps through the cubin's line
 * info (nvdisasm) to that line, waiting on its load (long_scoreboard).
 * Also: repeated calls in one process (CUPTI hands out the same cached
 * function-name pointer each time), the module-load rule, a module reloaded
 * per launch, and what each step costs. */
#include "../../src/counters/counters.h"
#include "t.h"
#include "../gpu_build.h"

#include <unistd.h>

#define STALL_PREFIX "smsp__pcsamp_warps_issue_stalled_"

/* ---- no GPU needed ---------------------------------------------------------------- */

static int no_launch(void *ctx, kb_err *err)
{
	return kb_err_set(err, KB_ERROR, KB_DOM_NONE, 0, "must not be called");
}

static void test_profile__pcsample_no_device(void)
{
	kb_pc_record *recs = (kb_pc_record *)&recs;
	int n = -1;
	uint64_t total = 7;
	kb_err err = {0};
	T_EQ_INT(kb_profile_pcsample(NULL, no_launch, NULL, 1, &recs, &n, &total, &err), KB_ENODEV);
	T_OK(recs == NULL);
	T_EQ_INT(n, 0);
	T_EQ_INT(total, 0);
	T_OK(err.msg[0] != '\0');
	kb_profile_pc_records_free(NULL, 0);
}

/* ---- on a GPU ------------------------------------------------------------------------ */

/* Line 8 is the slow one: every thread of a warp reads a different line
 * (stride 4097 floats) from a 64 MB array, so each load is 32 sectors from
 * DRAM; lines 6 and 7 are cheap integer and float arithmetic. */
static const char hot_src[] =
	"extern \"C\" __global__ void kb_pcs_hot(const float *x, float *y, unsigned mask, int iters)\n"
	"{\n"
	"  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  float acc = 0.0f, b = (float)(i & 255u);\n"
	"  for (int k = 0; k < iters; k++) {\n"
	"    unsigned j = (i * 4097u + (unsigned)k * 131u) & mask;\n"
	"    b = b * 0.999f + 0.5f;\n"
	"    acc += x[j];  /* the slow line: a strided, uncoalesced load */\n"
	"  }\n"
	"  y[i] = acc + b;\n"
	"}\n";
#define SLOW_LINE 8
#define HOT_NAME "kb_pcs_hot"
#define N_X (1u << 24)        /* 64 MB of floats: more than L2 */
#define BLOCK 256
#define REPEATS 10

typedef struct {
	kb_device *d;
	const kb_build *b;
	CUmodule mod;              /* loaded by the first launch of a call */
	CUfunction fn;
	CUdeviceptr x, y;
	unsigned mask;
	int iters;
	unsigned grid;
	bool reload_each;          /* load + unload the module around every launch */
	int loads, launches;
} hot;

static int hot_launch(void *ctx, kb_err *err)
{
	hot *h = ctx;
	int rc = KB_OK;
	if (!h->mod) {
		if ((rc = KB_CU(err, cuModuleLoadData(&h->mod, h->b->cubin))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuModuleGetFunction(&h->fn, h->mod, HOT_NAME))) < 0)
			goto out;
		h->loads++;
	}
	void *args[] = {&h->x, &h->y, &h->mask, &h->iters};
	if ((rc = KB_CU(err, cuLaunchKernel(h->fn, h->grid, 1, 1, BLOCK, 1, 1, 0, h->d->stream, args,
				            NULL))) < 0)
		goto out;
	h->launches++;
	if (h->reload_each) {
		if ((rc = KB_CU(err, cuStreamSynchronize(h->d->stream))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuModuleUnload(h->mod))) < 0)
			goto out;
		h->mod = NULL;
	}
out:
	return rc;
}

static void hot_unload(hot *h)
{
	if (h->mod)
		kb_cu.cuModuleUnload(h->mod);
	h->mod = NULL;
}

/* Line n (1-based) of hot_src, into out. */
static void src_line(int n, char *out, size_t cap)
{
	const char *p = hot_src;
	for (int i = 1; i < n && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p || n < 1) {
		snprintf(out, cap, "?");
		return;
	}
	const char *e = strchr(p, '\n');
	while (*p == ' ')
		p++;
	snprintf(out, cap, "%.*s", e ? (int)(e - p) : (int)strlen(p), p);
}

static const kb_sass_insn *find_insn(const kb_sass *s, const char *fn, uint64_t pc)
{
	for (int i = 0; s->available && i < s->nfuncs; i++) {
		if (strcmp(s->funcs[i].name, fn))
			continue;
		for (int j = 0; j < s->funcs[i].n; j++)
			if (s->funcs[i].v[j].addr == pc)
				return &s->funcs[i].v[j];
	}
	return NULL;
}

static void print_top(const kb_pc_record *r, int n, uint64_t total, const kb_sass *s)
{
	printf("    top %d of %d PCs (%llu samples):\n", n < 5 ? n : 5, n,
	       (unsigned long long)total);
	for (int i = 0; i < n && i < 5; i++) {
		const kb_sass_insn *in = find_insn(s, r[i].function, r[i].pc_offset);
		char line[160] = "", insn[160] = "(no SASS)";
		if (in && in->line)
			src_line(in->line, line, sizeof line);
		if (in)
			snprintf(insn, sizeof insn, "%s%s%s %s", in->pred ? in->pred : "",
				 in->pred ? " " : "", in->opcode, in->operands ? in->operands : "");
		printf("    #%d %s+0x%04llx %5.1f%%  %-34.34s line %d: %s\n", i + 1, r[i].function,
		       (unsigned long long)r[i].pc_offset, 100.0 * (double)r[i].samples / (double)total,
		       insn, in ? in->line : 0, line);
		printf("         ");
		for (int j = 0; j < r[i].nstalls && j < 4; j++)
			printf("%s%s %.1f%%", j ? ", " : "", r[i].stalls[j].name,
			       100.0 * (double)r[i].stalls[j].samples / (double)r[i].samples);
		printf("\n");
	}
}

static void print_stats(const char *what, const kb_profile__pcs_stats *st, int n, uint64_t total,
			double wall)
{
	printf("    %s: %d PCs, %llu samples (CUPTI total %llu, dropped %llu, non-user %llu, "
	       "hw buffer full %d); reasons %d listed, %d counted; PCs at Stop %d, read %d, "
	       "GetData calls %d\n", what, n, (unsigned long long)total,
	       (unsigned long long)st->cupti_total, (unsigned long long)st->dropped,
	       (unsigned long long)st->non_user, st->hw_buffer_full, st->nreasons, st->nbase,
	       st->pcs_at_stop, st->pcs_read, st->getdata_calls);
	printf("      ms: enable %.1f, reasons+config %.1f, start..launches..stop %.1f, "
	       "getdata %.2f, disable %.1f; whole call %.1f\n", st->ms_enable, st->ms_config,
	       st->ms_run, st->ms_getdata, st->ms_disable, wall);
}

/* Sorted, consistent records: samples desc, reasons desc and adding up,
 * no _not_issued or prefixed names, sum = total. */
static void check_shape(const kb_pc_record *r, int n, uint64_t total)
{
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		uint64_t rs = 0;
		T_OK(r[i].samples > 0);
		if (i)
			T_OK(r[i - 1].samples >= r[i].samples);
		for (int j = 0; j < r[i].nstalls; j++) {
			rs += r[i].stalls[j].samples;
			if (j)
				T_OK(r[i].stalls[j - 1].samples >= r[i].stalls[j].samples);
			T_OK(!strstr(r[i].stalls[j].name, "not_issued"));
			T_OK(strncmp(r[i].stalls[j].name, STALL_PREFIX, 10));
		}
		T_EQ_INT(rs, r[i].samples);
		sum += r[i].samples;
	}
	T_EQ_INT(sum, total);
}

/* One sampled call through a fresh module; checks the hot spot. */
static void sampled_call(hot *h, const kb_sass *sass, int round)
{
	kb_pc_record *r = NULL;
	int n = 0;
	uint64_t total = 0;
	kb_profile__pcs_stats st;
	kb_err err = {0};
	h->loads = h->launches = 0;
	double t = kb_now_ms();
	int rc = kb_profile__pcsample(h->d, hot_launch, h, REPEATS, &r, &n, &total, &st, &err);
	t = kb_now_ms() - t;
	hot_unload(h);
	if (rc != 0) {
		T_FAIL_AT("pcsample round %d: %d %s", round, rc, err.msg);
		return;
	}
	char what[32];
	snprintf(what, sizeof what, "round %d", round);
	print_stats(what, &st, n, total, t);
	T_EQ_INT(h->loads, 1);
	T_EQ_INT(h->launches, REPEATS);
	T_OK(n > 0);
	T_OK(total > 1000);
	T_EQ_INT(st.dropped, 0);
	check_shape(r, n, total);
	if (n > 0) {
		if (round == 1)
			print_top(r, n, total, sass);
		T_EQ_STR(r[0].function, HOT_NAME);
		const kb_sass_insn *in = find_insn(sass, r[0].function, r[0].pc_offset);
		if (!sass->available)
			printf("    (no nvdisasm: %s; line not checked)\n", sass->unavailable_why);
		else if (!in)
			T_FAIL_AT("no SASS instruction at %s+0x%llx", r[0].function,
				  (unsigned long long)r[0].pc_offset);
		else
			T_EQ_INT(in->line, SLOW_LINE);
		T_OK(r[0].nstalls > 0);
		const char *why = r[0].nstalls ? r[0].stalls[0].name : "";
		if (round == 1)
			printf("    top PC's top stall reason: %s\n", why);
		T_EQ_STR(why, "long_scoreboard"); /* the FADD waiting for its LDG */
	}
	kb_profile_pc_records_free(r, n);
}

/* The module-load rule (gpu-apis.md: kernels of a module launched before
 * cuptiPCSamplingEnable gave no records on the H100): the warm module was
 * launched before this, the process's first session.  Reported, not
 * asserted. */
static void launched_before(hot *h, CUmodule warm, CUfunction warm_fn)
{
	kb_pc_record *r = NULL;
	int n = 0;
	uint64_t total = 0;
	kb_profile__pcs_stats st;
	kb_err err = {0};
	h->mod = warm;
	h->fn = warm_fn;
	double t = kb_now_ms();
	int rc = kb_profile__pcsample(h->d, hot_launch, h, REPEATS, &r, &n, &total, &st, &err);
	t = kb_now_ms() - t;
	h->mod = NULL;
	if (rc != 0)
		T_FAIL_AT("pcsample (module launched before Enable): %d %s", rc, err.msg);
	else
		print_stats("first session, module launched before Enable", &st, n, total, t);
	kb_profile_pc_records_free(r, n);
}

/* A module loaded and unloaded around every launch: one CUPTI record set
 * per module instance, merged per (function, pc). */
static void module_per_launch(hot *h)
{
	kb_pc_record *r = NULL;
	int n = 0;
	uint64_t total = 0;
	kb_profile__pcs_stats st;
	kb_err err = {0};
	h->reload_each = true;
	h->loads = h->launches = 0;
	double t = kb_now_ms();
	int rc = kb_profile__pcsample(h->d, hot_launch, h, REPEATS, &r, &n, &total, &st, &err);
	t = kb_now_ms() - t;
	h->reload_each = false;
	hot_unload(h);
	if (rc != 0) {
		T_FAIL_AT("pcsample (module per launch): %d %s", rc, err.msg);
		return;
	}
	print_stats("module loaded+unloaded per launch", &st, n, total, t);
	T_EQ_INT(h->loads, REPEATS);
	T_OK(n > 0 && st.pcs_read > n);
	check_shape(r, n, total);
	if (n > 0)
		T_EQ_STR(r[0].function, HOT_NAME);
	kb_profile_pc_records_free(r, n);
}

/* Compiles hot_src (-lineinfo, as kbench does) and disassembles it. */
static int build_hot(kb_device *d, kb_build *b, kb_sass *sass, kb_err *err)
{
	return t_build_with_sass(d, "pcsample_hot.cu", hot_src, b, sass, err);
}

/* The kernel's duration (events, one launch) and a module already launched. */
static int warm_up(hot *h, CUmodule *warm, CUfunction *warm_fn, kb_err *err)
{
	int rc = KB_OK;
	CUevent a = NULL, e = NULL;
	if ((rc = hot_launch(h, err)) < 0)
		goto out;
	*warm = h->mod;
	*warm_fn = h->fn;
	h->mod = NULL;
	if ((rc = KB_CU(err, cuEventCreate(&a, CU_EVENT_DEFAULT))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventCreate(&e, CU_EVENT_DEFAULT))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventRecord(a, h->d->stream))) < 0)
		goto out;
	void *args[] = {&h->x, &h->y, &h->mask, &h->iters};
	if ((rc = KB_CU(err, cuLaunchKernel(*warm_fn, h->grid, 1, 1, BLOCK, 1, 1, 0, h->d->stream, args,
				            NULL))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventRecord(e, h->d->stream))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventSynchronize(e))) < 0)
		goto out;
	float ms = 0;
	if ((rc = KB_CU(err, cuEventElapsedTime(&ms, a, e))) < 0)
		goto out;
	printf("    %s: grid %u x %d, %d iterations, %.3f ms per launch\n", HOT_NAME, h->grid,
	       BLOCK, h->iters, ms);
out:
	if (a)
		kb_cu.cuEventDestroy(a);
	if (e)
		kb_cu.cuEventDestroy(e);
	return rc;
}

static void test_profile__pcsample_gpu(void)
{
	kb_err err = {0};
	if (kb_profile_device_count(&err) <= 0)
		T_SKIP("no GPU");
	kb_device *d = NULL;
	kb_build b = {0};
	kb_sass sass = {0};
	hot h = {0};
	CUmodule warm = NULL;
	CUfunction warm_fn = NULL;
	if (kb_profile_device_open(&d, 0, &err) < 0 || build_hot(d, &b, &sass, &err) < 0) {
		T_FAIL_AT("setup: %s", err.msg);
		goto out;
	}
	h.d = d;
	h.b = &b;
	h.mask = N_X - 1;
	h.iters = 64;
	h.grid = (unsigned)kb_profile_device_info(d)->sm_count * 8;
	if (kb_cu.cuMemAlloc(&h.x, (size_t)N_X * 4) || kb_cu.cuMemAlloc(&h.y, (size_t)h.grid * BLOCK * 4) ||
	    kb_cu.cuMemsetD8(h.x, 0, (size_t)N_X * 4)) {
		T_FAIL_AT("cuMemAlloc");
		goto out;
	}
	if (warm_up(&h, &warm, &warm_fn, &err) < 0) {
		T_FAIL_AT("warm-up: %s", err.msg);
		goto out;
	}
	launched_before(&h, warm, warm_fn);
	for (int round = 1; round <= 3; round++)
		sampled_call(&h, &sass, round);
	module_per_launch(&h);
out:
	if (warm)
		kb_cu.cuModuleUnload(warm);
	if (h.x)
		kb_cu.cuMemFree(h.x);
	if (h.y)
		kb_cu.cuMemFree(h.y);
	kb_compile_sass_free(&sass);
	kb_compile_build_free(&b);
	kb_profile_device_close(d);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* lines out before a crash inside CUPTI */
	T_RUN(test_profile__pcsample_no_device);
	T_RUN(test_profile__pcsample_gpu);
	return t_report();
}
