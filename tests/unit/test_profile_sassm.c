/* test_profile_sassm.c - per-instruction SASS metrics (sassm.c,
 * sassmetrics.c).  Without a GPU: records built from synthetic CUPTI
 * values (keyed and summed per function + pc, sorted), bank conflicts as
 * wavefronts beyond the ideal (CUPTI's own count only as a stand-in), n/a
 * for roles the chip lacks, the Result's JSON and the hot PCs annotated;
 * a collection without a device fails cleanly.  On a GPU: a kernel with a
 * 32-way bank-conflicted shared load (threads read smem[tid * 32]), a
 * 2-way one (smem[tid * 2]) and a conflict-free one (smem[tid]); each LDS
 * must show its executions and conflicts = (ways - 1) x executions, within
 * 2 %.  Prints the chip's SASS metric names that mention shared memory, so
 * a new GPU's names can be checked. */
#include "../../src/counters/counters.h"
#include "t.h"
#include "../gpu_build.h"

/* ---- no GPU needed ---------------------------------------------------------------- */

/* A collection whose chip has every role, as the flush would give it:
 * one instance per metric (GPU granularity), records out of order. */
static void fill(kb_sassm *s, bool with_ideal)
{
	memset(s, 0, sizeof *s);
	snprintf(s->name[KB_SASSM_EXEC], sizeof s->name[0], "smsp__sass_inst_executed");
	snprintf(s->name[KB_SASSM_WAVEFRONTS], sizeof s->name[0],
		 "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared");
	if (with_ideal)
		snprintf(s->name[KB_SASSM_IDEAL], sizeof s->name[0],
			 "smsp__sass_l1tex_pipe_lsu_wavefronts_mem_shared_ideal");
	else
		snprintf(s->why[KB_SASSM_IDEAL], sizeof s->why[0], "GH100 has no SASS metric x");
	s->launches = 1;
	/* 0x100: LDS, 32-way: 1024 executions, 32768 wavefronts, ideal 1024 */
	kb_profile_sassm_add(s, "k", 0x100, KB_SASSM_EXEC, 1024);
	kb_profile_sassm_add(s, "k", 0x100, KB_SASSM_WAVEFRONTS, 30000);
	kb_profile_sassm_add(s, "k", 0x100, KB_SASSM_WAVEFRONTS, 2768); /* a second instance */
	if (with_ideal)
		kb_profile_sassm_add(s, "k", 0x100, KB_SASSM_IDEAL, 1024);
	/* 0x080: STS, conflict-free */
	kb_profile_sassm_add(s, "k", 0x80, KB_SASSM_EXEC, 1024);
	kb_profile_sassm_add(s, "k", 0x80, KB_SASSM_WAVEFRONTS, 1024);
	if (with_ideal)
		kb_profile_sassm_add(s, "k", 0x80, KB_SASSM_IDEAL, 1024);
	/* 0x010: an FFMA, no shared memory */
	kb_profile_sassm_add(s, "k", 0x10, KB_SASSM_EXEC, 4096);
	kb_profile_sassm_add(s, "k", 0x10, KB_SASSM_WAVEFRONTS, 0);
	if (with_ideal)
		kb_profile_sassm_add(s, "k", 0x10, KB_SASSM_IDEAL, 0);
	/* another function's instruction at the same pc */
	kb_profile_sassm_add(s, "a_other", 0x100, KB_SASSM_EXEC, 7);
	/* a role id CUPTI gave that maps to none: ignored */
	kb_profile_sassm_add(s, "k", 0x100, -1, 99);
}

static void test_profile_sassm__records_keyed_and_summed(void)
{
	kb_sassm s;
	fill(&s, true);
	T_EQ_INT(s.n, 4);
	/* sorted by function, then pc */
	T_EQ_STR(s.recs[0].function, "a_other");
	T_EQ_INT(s.recs[1].pc_offset, 0x10);
	T_EQ_INT(s.recs[2].pc_offset, 0x80);
	T_EQ_INT(s.recs[3].pc_offset, 0x100);
	const kb_sassm_record *r = kb_profile_sassm_find(&s, "k", 0x100);
	T_OK(r != NULL);
	T_EQ_INT(r->v[KB_SASSM_WAVEFRONTS], 32768);
	T_EQ_INT(r->v[KB_SASSM_EXEC], 1024);
	T_OK(!kb_profile_sassm_find(&s, "k", 0x110));
	T_OK(!kb_profile_sassm_find(&s, NULL, 0x100));
	uint64_t c = 7;
	T_OK(kb_profile_sassm_conflicts(r, &c));
	T_EQ_INT(c, 31 * 1024); /* (32 - 1) x executions */
	T_OK(kb_profile_sassm_conflicts(kb_profile_sassm_find(&s, "k", 0x80), &c));
	T_EQ_INT(c, 0);
	/* a_other: executions only, no shared counts: conflicts n/a */
	T_OK(!kb_profile_sassm_conflicts(kb_profile_sassm_find(&s, "a_other", 0x100), &c));
	kb_profile_sassm_free(&s);
	T_EQ_INT(s.n, 0);
	kb_profile_sassm_free(&s);
}

static void test_profile_sassm__conflict_rules(void)
{
	kb_sassm_record r = {.function = (char *)"k"};
	uint64_t c;
	T_OK(!kb_profile_sassm_conflicts(&r, &c)); /* nothing known */
	r.v[KB_SASSM_CONFLICTS] = 5;
	r.valid = 1u << KB_SASSM_CONFLICTS;
	T_OK(kb_profile_sassm_conflicts(&r, &c)); /* CUPTI's own count stands in */
	T_EQ_INT(c, 5);
	r.v[KB_SASSM_WAVEFRONTS] = 10, r.v[KB_SASSM_IDEAL] = 4;
	r.valid |= 1u << KB_SASSM_WAVEFRONTS | 1u << KB_SASSM_IDEAL;
	T_OK(kb_profile_sassm_conflicts(&r, &c)); /* wavefronts beyond the ideal win */
	T_EQ_INT(c, 6);
	r.v[KB_SASSM_IDEAL] = 12; /* never negative */
	T_OK(kb_profile_sassm_conflicts(&r, &c));
	T_EQ_INT(c, 0);
}

static void test_profile_sassm__json(void)
{
	kb_sassm s;
	fill(&s, true);
	json_t *j = kb_profile_sassm_json(&s, 256);
	T_EQ_INT(json_integer_value(json_object_get(j, "launches")), 1);
	T_EQ_INT(json_integer_value(json_object_get(j, "bank_conflicts")), 31 * 1024);
	T_EQ_INT(json_integer_value(json_object_get(j, "shared_wavefronts")), 32768 + 1024);
	T_EQ_INT(json_integer_value(json_object_get(j, "shared_wavefronts_ideal")), 2048);
	T_EQ_INT(json_integer_value(json_object_get(j, "executions")), 1024 + 1024 + 4096 + 7);
	T_EQ_INT(json_integer_value(json_object_get(j, "instructions")), 4);
	T_EQ_INT(json_integer_value(json_object_get(j, "shared_instructions")), 2);
	json_t *names = json_object_get(j, "metrics");
	T_EQ_STR(json_string_value(json_object_get(names, "executions")), "smsp__sass_inst_executed");
	T_OK(json_is_null(json_object_get(names, "cupti_bank_conflicts")));
	T_OK(!json_object_get(j, "unsupported"));
	/* the shared instructions, most conflicts first; the FFMA is not one */
	json_t *sh = json_object_get(j, "shared");
	T_EQ_INT(json_array_size(sh), 2);
	json_t *lds = json_array_get(sh, 0);
	T_EQ_INT(json_integer_value(json_object_get(lds, "pc")), 0x100);
	T_EQ_STR(json_string_value(json_object_get(lds, "function")), "k");
	T_EQ_INT(json_integer_value(json_object_get(lds, "executions")), 1024);
	T_EQ_INT(json_integer_value(json_object_get(lds, "shared_wavefronts")), 32768);
	T_EQ_INT(json_integer_value(json_object_get(lds, "bank_conflicts")), 31 * 1024);
	T_EQ_INT(json_integer_value(json_object_get(json_array_get(sh, 1), "bank_conflicts")), 0);
	json_decref(j);
	j = kb_profile_sassm_json(&s, 1); /* capped */
	T_EQ_INT(json_array_size(json_object_get(j, "shared")), 1);
	json_decref(j);
	kb_profile_sassm_free(&s);
}

/* No ideal wavefronts on the chip: conflicts are n/a (absent), never 0,
 * and the Result says why. */
static void test_profile_sassm__missing_role_is_na(void)
{
	kb_sassm s;
	fill(&s, false);
	json_t *j = kb_profile_sassm_json(&s, 256);
	T_OK(!json_object_get(j, "bank_conflicts"));
	T_OK(!json_object_get(j, "shared_wavefronts_ideal"));
	T_EQ_INT(json_integer_value(json_object_get(j, "shared_wavefronts")), 32768 + 1024);
	T_CONTAINS(json_string_value(json_object_get(json_object_get(j, "unsupported"),
						     "shared_wavefronts_ideal")), "GH100 has no");
	json_t *lds = json_array_get(json_object_get(j, "shared"), 0);
	T_OK(lds && !json_object_get(lds, "bank_conflicts"));
	T_EQ_INT(json_integer_value(json_object_get(lds, "shared_wavefronts")), 32768);
	json_decref(j);
	kb_profile_sassm_free(&s);
}

static void test_profile_sassm__hot_annotated(void)
{
	kb_sassm s;
	fill(&s, true);
	json_t *hot = json_pack("[{s:s, s:I, s:I}, {s:s, s:I, s:I}]", "function", "k", "pc",
				(json_int_t)0x100, "samples", (json_int_t)50, "function", "k", "pc",
				(json_int_t)0x200, "samples", (json_int_t)10);
	kb_profile_sassm_annotate(&s, hot);
	json_t *a = json_array_get(hot, 0), *b = json_array_get(hot, 1);
	T_EQ_INT(json_integer_value(json_object_get(a, "executions")), 1024);
	T_EQ_INT(json_integer_value(json_object_get(a, "bank_conflicts")), 31 * 1024);
	T_EQ_INT(json_integer_value(json_object_get(a, "samples")), 50);
	T_OK(!json_object_get(b, "executions")); /* no record: nothing claimed */
	kb_profile_sassm_annotate(&s, NULL);
	json_decref(hot);
	kb_profile_sassm_free(&s);
}

static void test_profile_sassm__candidates(void)
{
	T_EQ_STR(kb_profile_sassm_candidates(KB_SASSM_EXEC)[0], "smsp__sass_inst_executed");
	for (int k = 0; k < KB_SASSM_NROLES; k++) {
		const char *const *c = kb_profile_sassm_candidates(k);
		T_OK(c && c[0]);
		for (int i = 0; c && c[i]; i++)
			T_OK(!strncmp(c[i], "smsp__sass_", 11));
	}
	T_OK(!kb_profile_sassm_candidates(KB_SASSM_NROLES));
}

static int no_launch(void *ctx, kb_err *err)
{
	return kb_err_set(err, KB_ERROR, KB_DOM_NONE, 0, "must not be called");
}

static void test_profile_sassm__no_device(void)
{
	kb_sassm s;
	kb_err err = {0};
	T_EQ_INT(kb_profile_sassm_collect(NULL, no_launch, NULL, &s, &err), KB_ENODEV);
	T_EQ_INT(s.n, 0);
	T_OK(err.msg[0] != '\0');
	kb_buf b = KB_BUF_INIT;
	T_EQ_INT(kb_profile_sassm_list(NULL, &b, &err), KB_ENODEV);
	kb_buf_free(&b);
}

/* ---- on a GPU ------------------------------------------------------------------------ */

/* One warp per block.  Line 5 stores the tile (conflict-free), line 7 reads
 * it 32-way conflicted (every thread in bank 0), line 8 2-way (banks 0, 2
 * .. 30, two threads each), line 9 conflict-free. */
static const char banks_src[] =
	"extern \"C\" __global__ void kb_banks(const float *x, float *y)\n"
	"{\n"
	"  __shared__ float s[1024];\n"
	"  unsigned t = threadIdx.x;\n"
	"  for (unsigned i = t; i < 1024; i += 32) s[i] = x[blockIdx.x * 1024 + i];\n"
	"  __syncthreads();\n"
	"  float a = s[t * 32];  /* 32-way */\n"
	"  float b = s[t * 2];   /* 2-way */\n"
	"  float c = s[t];       /* conflict-free */\n"
	"  y[blockIdx.x * 32 + t] = a + 2.0f * b + 3.0f * c;\n"
	"}\n";
#define LINE_32WAY 7
#define LINE_2WAY 8
#define LINE_FREE 9
#define BANKS_GRID 1024u

typedef struct {
	kb_device *d;
	const kb_build *b;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr x, y;
	int launches;
} banks;

static int banks_launch(void *ctx, kb_err *err)
{
	banks *k = ctx;
	int rc = KB_OK;
	if (!k->mod) { /* a fresh module, as the runner's */
		if ((rc = KB_CU(err, cuModuleLoadData(&k->mod, k->b->cubin))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuModuleGetFunction(&k->fn, k->mod, "kb_banks"))) < 0)
			goto out;
	}
	void *args[] = {&k->x, &k->y};
	if ((rc = KB_CU(err, cuLaunchKernel(k->fn, BANKS_GRID, 1, 1, 32, 1, 1, 0, k->d->stream,
					    args, NULL))) < 0)
		goto out;
	k->launches++;
out:
	return rc;
}

static int build_banks(kb_device *d, kb_build *b, kb_sass *sass, kb_err *err)
{
	return t_build_with_sass(d, "sassm_banks.cu", banks_src, b, sass, err);
}

/* The chip's SASS metrics about shared memory and executions. */
static void print_names(kb_device *d)
{
	kb_buf b = KB_BUF_INIT;
	kb_err err = {0};
	if (kb_profile_sassm_list(d, &b, &err) < 0) {
		printf("    SASS metric list: %s\n", err.msg);
		return;
	}
	for (char *l = b.s, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		int n = e ? (int)(e - l) : (int)strlen(l);
		if (l == b.s || strstr(l, "shared") || strstr(l, "bank") || strstr(l, "inst_executed:"))
			printf("    %.*s\n", n > 200 ? 200 : n, l);
	}
	kb_buf_free(&b);
}

static const kb_sass_insn *insn_of(const kb_sass *s, const char *fn, uint64_t pc)
{
	for (int i = 0; s->available && i < s->nfuncs; i++)
		for (int j = 0; !strcmp(s->funcs[i].name, fn) && j < s->funcs[i].n; j++)
			if (s->funcs[i].v[j].addr == pc)
				return &s->funcs[i].v[j];
	return NULL;
}

/* Checks the shared-memory records: one 32-way, one 2-way, the others
 * conflict-free, each with one execution per block. */
static void check_banks(const kb_sassm *s, const kb_sass *sass)
{
	int n32 = 0, n2 = 0, nfree = 0;
	for (int i = 0; i < s->n; i++) {
		const kb_sassm_record *r = &s->recs[i];
		uint64_t c = 0, ex = r->v[KB_SASSM_EXEC], wf = r->v[KB_SASSM_WAVEFRONTS];
		const kb_sass_insn *in = insn_of(sass, r->function, r->pc_offset);
		bool conf = kb_profile_sassm_conflicts(r, &c);
		if (!wf)
			continue;
		printf("    %s+0x%04llx %-28s line %2d: exec %llu, wavefronts %llu, ideal %llu, "
		       "conflicts %s%llu\n", r->function, (unsigned long long)r->pc_offset,
		       in ? in->opcode : "?", in ? in->line : 0, (unsigned long long)ex,
		       (unsigned long long)wf, (unsigned long long)r->v[KB_SASSM_IDEAL],
		       conf ? "" : "n/a ", (unsigned long long)c);
		T_OK(conf);
		double per = ex ? (double)c / (double)ex : -1;
		if (per > 16) {
			n32++;
			T_EQ_INT(ex, BANKS_GRID);
			T_NEAR((double)c, 31.0 * (double)ex, 0.02 * 31.0 * (double)ex);
			if (in)
				T_EQ_INT(in->line, LINE_32WAY);
		} else if (per > 0.5) {
			n2++;
			T_EQ_INT(ex, BANKS_GRID);
			T_NEAR((double)c, (double)ex, 0.02 * (double)ex);
			if (in)
				T_EQ_INT(in->line, LINE_2WAY);
		} else {
			nfree++;
			T_NEAR((double)c, 0, 0.02 * (double)ex);
		}
		if (in && (in->line == LINE_32WAY || in->line == LINE_2WAY || in->line == LINE_FREE))
			T_OK(!strncmp(in->opcode, "LDS", 3));
	}
	T_EQ_INT(n32, 1);
	T_EQ_INT(n2, 1);
	T_OK(nfree >= 2); /* the load of line 9 and the stores of line 5 */
}

static void test_profile_sassm__gpu(void)
{
	kb_err err = {0};
	if (kb_profile_device_count(&err) <= 0)
		T_SKIP("no GPU");
	kb_device *d = NULL;
	kb_build b = {0};
	kb_sass sass = {0};
	banks k = {0};
	kb_sassm s = {0};
	if (kb_profile_device_open(&d, 0, &err) < 0 || build_banks(d, &b, &sass, &err) < 0) {
		T_FAIL_AT("setup: %s", err.msg);
		goto out;
	}
	k.d = d;
	k.b = &b;
	if (kb_cu.cuMemAlloc(&k.x, (size_t)BANKS_GRID * 1024 * 4) ||
	    kb_cu.cuMemAlloc(&k.y, (size_t)BANKS_GRID * 32 * 4) ||
	    kb_cu.cuMemsetD8(k.x, 0, (size_t)BANKS_GRID * 1024 * 4)) {
		T_FAIL_AT("cuMemAlloc");
		goto out;
	}
	print_names(d);
	double t = kb_now_ms();
	int rc = kb_profile_sassm_collect(d, banks_launch, &k, &s, &err);
	printf("    collect: rc %d, %d records, %d launch(es), %.1f ms (call %.1f ms)%s%s\n", rc, s.n,
	       k.launches, s.ms, kb_now_ms() - t, rc ? ": " : "", rc ? err.msg : "");
	for (int r = 0; r < KB_SASSM_NROLES; r++)
		printf("    role %d: %s%s\n", r, s.name[r][0] ? s.name[r] : "n/a - ", s.why[r]);
	if (rc != 0) {
		T_FAIL_AT("collect: %d %s", rc, err.msg);
		goto out;
	}
	T_EQ_INT(k.launches, 1);
	T_EQ_INT(s.launches, 1);
	check_banks(&s, &sass);
	/* A second session in the same process is not asked for: on an H100
	 * (CUPTI 13.0) its cuptiSassMetricsSetConfig fails with
	 * CUPTI_ERROR_OUT_OF_MEMORY, so the runner collects in a fresh worker
	 * each time (runner/sassm.c; tests/cli/run_gpu.sh profiles twice). */
out:
	kb_profile_sassm_free(&s);
	if (k.mod)
		kb_cu.cuModuleUnload(k.mod);
	if (k.x)
		kb_cu.cuMemFree(k.x);
	if (k.y)
		kb_cu.cuMemFree(k.y);
	kb_compile_sass_free(&sass);
	kb_compile_build_free(&b);
	kb_profile_device_close(d);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* lines out before a crash inside CUPTI */
	T_RUN(test_profile_sassm__records_keyed_and_summed);
	T_RUN(test_profile_sassm__conflict_rules);
	T_RUN(test_profile_sassm__json);
	T_RUN(test_profile_sassm__missing_role_is_na);
	T_RUN(test_profile_sassm__hot_annotated);
	T_RUN(test_profile_sassm__candidates);
	T_RUN(test_profile_sassm__no_device);
	T_RUN(test_profile_sassm__gpu);
	return t_report();
}
