/*
 * test_report.c - kb_app_report on four hand-made variants of a row
 * softmax (no git, no GPU): v1 correct and slow, v2 incorrect (a first bad
 * coordinate), v3 correct and fastest, v4 compiled but never run.  Checks
 * the pick, the Markdown table, the chart, the HTML's hygiene, and (when
 * chromium is installed) that the page renders to a real screenshot.  Also
 * the hot-spot section of kb_app_profile_render without a disassembler.
 *
 * With KB_REPORT_EXAMPLE=DIR set, it also writes the sample report to
 * DIR/report-example.{md,html,roofline.svg} (docs/ holds them).
 */
#include "t.h"

#include "../../src/app/app.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- sample data ----------------------------------------------------------- */

#define ROWS 8192
#define COLS 8192
#define BYTES (2.0 * ROWS * COLS * 4)  /* read x, write y, fp32 */
#define FLOPS (4.0 * ROWS * COLS)      /* max, sub+exp, sum, scale */
#define COPY_GBPS 3012.4               /* measured by kbench calibrate */
#define DRAM_GBPS 3352.3
#define FP32_TFLOPS 66.9

static const char SRC_V1[] =
	"//! softmax_rows y[ROWS, COLS] = softmax(x[ROWS, COLS], dim=1)\n"
	"//! in x: f32[ROWS, COLS]  out y: f32[ROWS, COLS]\n"
	"//! grid ROWS  block 256  bytes 2*ROWS*COLS*4  flops 4*ROWS*COLS\n"
	"__global__ void softmax_rows(const float *x, float *y, int n)\n"
	"{\n"
	"\t__shared__ float red[256];\n"
	"\tconst float *row = x + (size_t)blockIdx.x * n;\n"
	"\tfloat m = -INFINITY;\n"
	"\tfor (int i = threadIdx.x; i < n; i += blockDim.x)\n"
	"\t\tm = fmaxf(m, row[i]);\n"
	"\tm = block_max(red, m);\n"
	"\tfloat s = 0.f;\n"
	"\tfor (int i = threadIdx.x; i < n; i += blockDim.x)\n"
	"\t\ts += __expf(row[i] - m);\n"
	"\ts = block_sum(red, s);\n"
	"\tfor (int i = threadIdx.x; i < n; i += blockDim.x)\n"
	"\t\ty[(size_t)blockIdx.x * n + i] = __expf(row[i] - m) / s;\n"
	"}\n";

static const char SRC_V3[] =
	"//! softmax_rows y[ROWS, COLS] = softmax(x[ROWS, COLS], dim=1)\n"
	"//! in x: f32[ROWS, COLS]  out y: f32[ROWS, COLS]\n"
	"//! grid ROWS  block 256  bytes 2*ROWS*COLS*4  flops 4*ROWS*COLS\n"
	"__global__ void softmax_rows(const float *x, float *y, int n)\n"
	"{\n"
	"\t__shared__ float red[2 * 32];\n"
	"\tconst float4 *row = (const float4 *)(x + (size_t)blockIdx.x * n);\n"
	"\tfloat m = -INFINITY, s = 0.f;\n"
	"\t/* one pass: online max and rescaled sum (Milakov & Gimelshein) */\n"
	"\tfor (int i = threadIdx.x; i < n / 4; i += blockDim.x) {\n"
	"\t\tfloat4 v = row[i];\n"
	"\t\tfloat mv = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)), mn = fmaxf(m, mv);\n"
	"\t\ts = s * __expf(m - mn) + __expf(v.x - mn) + __expf(v.y - mn)\n"
	"\t\t    + __expf(v.z - mn) + __expf(v.w - mn);\n"
	"\t\tm = mn;\n"
	"\t}\n"
	"\tblock_online_reduce(red, &m, &s);\n"
	"\tfloat inv = 1.f / s;\n"
	"\tfloat4 *out = (float4 *)(y + (size_t)blockIdx.x * n);\n"
	"\tfor (int i = threadIdx.x; i < n / 4; i += blockDim.x) {\n"
	"\t\tfloat4 v = row[i];\n"
	"\t\tout[i] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,\n"
	"\t\t\t\t      __expf(v.z - m) * inv, __expf(v.w - m) * inv);\n"
	"\t}\n"
	"}\n";

static const char SASS_DIFF[] =
	"--- v1 softmax_rows\n"
	"+++ v3 softmax_rows\n"
	"@@ -41,9 +41,7 @@\n"
	" S2R R, SR_TID.X\n"
	" ISETP.GE.AND P, PT, R, c[0x0][0x170], PT\n"
	"-LDG.E R, desc[UR][R.64]\n"
	"-LDG.E R, desc[UR][R.64]\n"
	"+LDG.E.128 R, desc[UR][R.64]\n"
	" FMNMX R, R, R, !PT\n"
	"-BAR.SYNC.DEFER_BLOCKING 0x0\n"
	"-LDG.E R, desc[UR][R.64]\n"
	"+MUFU.EX2 R, R\n"
	" FADD R, R, -R\n"
	"-STG.E desc[UR][R.64], R\n"
	"+STG.E.128 desc[UR][R.64], R\n";

static json_t *device(void)
{
	return json_pack("{s:s, s:s, s:s, s:f, s:f, s:f}", "name", "NVIDIA H100 80GB HBM3", "uuid",
			 "GPU-5d2c9a41-7e0b-4b8f-9c3e-1a2b3c4d5e6f", "arch", "sm_90", "dram_peak_GBps",
			 DRAM_GBPS, "fp32_peak_TFLOPs", FP32_TFLOPS, "bf16_peak_TFLOPs", 989.4);
}

static json_t *kernel(int regs, double occ)
{
	return json_pack("{s:s, s:{s:i, s:i, s:i}, s:{s:f, s:s}}", "name", "softmax_rows",
			 "resources", "registers", regs, "shared_static_bytes", 1024, "local_bytes", 0,
			 "occupancy", "occupancy_pct", occ, "limiter", regs > 40 ? "registers" : "warps");
}

static json_t *output(double abs, double rel, double l2, int bad)
{
	json_t *o = json_pack("{s:s, s:b, s:I, s:f, s:f, s:f, s:i, s:i, s:i, s:i}", "output", "y",
			      "ok", !bad, "elements", (json_int_t)ROWS * COLS, "max_abs_err", abs,
			      "max_rel_err", rel, "rel_l2_err", l2, "nan", 0, "inf", 0, "unwritten", 0,
			      "mismatches", bad);
	if (bad)
		json_object_set_new(o, "first_bad", json_pack("{s:I, s:s, s:f, s:f}", "index",
				    (json_int_t)17 * COLS + 4095, "at", "y[17, 4095]", "got",
				    0.000244, "want", 0.000122));
	return o;
}

/* A check of three trials; `bad` mismatches in the first one when > 0. */
static json_t *check(double abs, double rel, double l2, int bad)
{
	json_t *trials = json_array();
	for (int t = 0; t < 3; t++) {
		json_t *outs = json_array();
		json_array_append_new(outs, output(abs * (1 + 0.1 * t), rel, l2, t == 0 ? bad : 0));
		json_array_append_new(trials, json_pack("{s:I, s:{s:I}, s:o, s:b}", "seed",
				      (json_int_t)7340129 + t, "input_seeds", "x",
				      (json_int_t)3670064 + t, "outputs", outs, "ok", !(t == 0 && bad)));
	}
	return json_pack("{s:o, s:f, s:f, s:b, s:[]}", "trials", trials, "rtol", 1e-5, "atol", 1e-6,
			 "correct", !bad, "after_timing");
}

static json_t *roofline(double median_us)
{
	double s = median_us * 1e-6, ridge = FP32_TFLOPS * 1e12 / (COPY_GBPS * 1e9);
	return json_pack("{s:f, s:b, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:s, s:b}", "bytes",
			 BYTES, "calibrated", 1, "GBps", BYTES / s / 1e9, "pct_of_measured_copy",
			 100.0 * BYTES / s / (COPY_GBPS * 1e9), "pct_of_datasheet_dram",
			 100.0 * BYTES / s / (DRAM_GBPS * 1e9), "flops", FLOPS, "TFLOPs",
			 FLOPS / s / 1e12, "pct_of_fp32_peak", 100.0 * FLOPS / s / (FP32_TFLOPS * 1e12),
			 "arithmetic_intensity", FLOPS / BYTES, "ridge_flop_per_byte", ridge, "side",
			 FLOPS / BYTES < ridge ? "memory" : "compute", "impossible", 0);
}

/* A variant's note: {"compile": ..., "result": ...}; median_us <= 0: not timed. */
static json_t *note(int regs, double occ, bool correct, double median_us, double cv)
{
	json_t *res = json_pack("{s:s, s:s, s:s, s:s, s:I}", "type", "result", "status", "ok",
				"verdict", correct ? "CORRECT" : "INCORRECT", "file",
				"kernels/softmax.cu", "seed", (json_int_t)7340129);
	json_object_set_new(res, "check", correct ? check(1.19e-7, 3.4e-6, 2.1e-7, 0)
						  : check(1.22e-4, 1.0, 0.71, 8191));
	if (median_us > 0) {
		json_object_set_new(res, "timing", json_pack("{s:f, s:f, s:f, s:f, s:i, s:s, s:s}",
				    "median_us", median_us, "min_us", median_us * 0.993, "max_us",
				    median_us * 1.035, "cv", cv, "reps", 200, "mode", "graph", "l2",
				    "rotated buffers, 2x L2"));
		json_object_set_new(res, "roofline", roofline(median_us));
	}
	json_object_set_new(res, "compile", json_pack("{s:s, s:s, s:o}", "arch", "sm_90", "compiler",
			    "NVRTC 12.6", "kernel", kernel(regs, occ)));
	json_object_set_new(res, "env", json_pack("{s:o}", "device", device()));
	return json_pack("{s:{s:s, s:s}, s:o}", "compile", "status", "ok", "kernel", "softmax_rows",
			 "result", res);
}

static json_t *compile_only_note(void)
{
	return json_pack("{s:{s:s, s:s, s:s, s:[], s:{s:s, s:[o]}}}", "compile", "file",
			 "kernels/softmax.cu", "status", "ok", "kernel", "softmax_rows",
			 "diagnostics", "build", "arch", "sm_90", "kernels", kernel(64, 50.0));
}

typedef struct {
	kb_variant v[4];
	char *src[4];
	size_t len[4];
} sample;

static void variant(kb_variant *v, const char *name, const char *label, const char *msg,
		    json_t *n)
{
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s", name);
	snprintf(v->oid, sizeof v->oid, "%040d", 0);
	v->path = kb_xstrdup("kernels/softmax.cu");
	v->message = kb_xstrdup(msg);
	v->label = label ? kb_xstrdup(label) : NULL;
	v->time = 1795000000;
	v->note = n;
}

static void sample_make(sample *s)
{
	variant(&s->v[0], "v1", "naive", "three passes over the row", note(32, 100.0, true, 512.4, 0.011));
	variant(&s->v[1], "v2", "smem-row", "cache the row in shared memory",
		note(40, 100.0, false, 0, 0));
	variant(&s->v[2], "v3", "online-f4", "one-pass online softmax, float4 loads",
		note(48, 62.5, true, 207.8, 0.008));
	variant(&s->v[3], "v4", NULL, "try 8 rows per block", compile_only_note());
	const char *srcs[4] = {SRC_V1, SRC_V1, SRC_V3, SRC_V3};
	for (int i = 0; i < 4; i++) {
		s->src[i] = kb_xstrdup(srcs[i]);
		s->len[i] = strlen(srcs[i]);
	}
}

static void sample_free(sample *s)
{
	for (int i = 0; i < 4; i++) {
		json_decref(s->v[i].note);
		free(s->v[i].path);
		free(s->v[i].message);
		free(s->v[i].label);
		free(s->src[i]);
	}
}

static const kb_app_report_opts MD_OPTS = {
	.title = "kbench report: softmax_rows (sample data)",
	.session_id = "20261122-003012-ab12",
	.sass_diff = SASS_DIFF,
	.svg_name = "report-example.roofline.svg",
	.footer = "sample data from tests/unit/test_report.c, not a measurement",
};

static int render(const sample *s, bool html, kb_buf *out, kb_buf *svg)
{
	kb_app_report_opts o = MD_OPTS;
	o.html = html;
	kb_err err = {0};
	int rc = kb_app_report(&o, s->v, 4, s->src, s->len, out, svg, &err);
	if (rc)
		printf("  kb_app_report: %s\n", err.msg);
	return rc;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The line of the Markdown table that starts with `start`, copied. */
static char *md_row(const char *md, const char *start)
{
	const char *p = strstr(md, start);
	if (!p)
		return kb_xstrdup("");
	return kb_xstrndup(p, strcspn(p, "\n"));
}

/* ---- cases ------------------------------------------------------------------- */

static void test_report__pick(void)
{
	sample s;
	sample_make(&s);
	int first, best;
	kb_app_report_pick(s.v, 4, &first, &best);
	T_EQ_INT(first, 0);
	T_EQ_INT(best, 2);
	kb_app_report_pick(s.v + 1, 1, &first, &best); /* only the incorrect one */
	T_EQ_INT(first, -1);
	T_EQ_INT(best, -1);
	sample_free(&s);
}

/* A file whose `//! kernel` line moved on (01_naive, 02_fa2, 03_fa3 in
 * sessions/attention): the best (v3, another kernel) is compared with the
 * first correct variant of its own kernel, and the page says so and names
 * that kernel, not the first variant's. */
static void test_report__kernel_moved_on(void)
{
	sample s;
	sample_make(&s);
	for (int i = 0; i < 4; i++)
		s.v[i].kernel = kb_xstrdup(i == 2 ? "softmax_online" : "softmax_rows");
	json_object_set_new(json_object_get(json_object_get(json_object_get(s.v[2].note, "result"),
							    "compile"), "kernel"),
			    "name", json_string("softmax_online"));
	int first, best;
	kb_app_report_pick(s.v, 4, &first, &best);
	T_EQ_INT(first, 2);
	T_EQ_INT(best, 2);
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_CONTAINS(md.s, "- **Kernel** `softmax_online` in `kernels/softmax.cu`");
	T_CONTAINS(md.s, "v3 (207.8 µs) is the first correct variant of kernel softmax_online (the variants "
			 "before it ran other kernels) and the fastest.");
	T_OK(!strstr(md.s, "is the first correct variant and"));
	kb_buf html = KB_BUF_INIT, svg2 = KB_BUF_INIT;
	T_EQ_INT(render(&s, true, &html, &svg2), 0);
	T_CONTAINS(html.s, "over v3, the first correct variant of kernel softmax_online");
	kb_buf_free(&svg2);
	kb_buf_free(&html);
	kb_buf_free(&svg);
	kb_buf_free(&md);
	for (int i = 0; i < 4; i++)
		free(s.v[i].kernel);
	sample_free(&s);
}

static void test_report__markdown_summary(void)
{
	sample s;
	sample_make(&s);
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_CONTAINS(md.s, "# kbench report: softmax_rows (sample data)");
	T_CONTAINS(md.s, "- **Kernel** `softmax_rows` in `kernels/softmax.cu`");
	T_CONTAINS(md.s, "- **GPU** NVIDIA H100 80GB HBM3");
	T_CONTAINS(md.s, "- **Variants** 4: 2 correct, 1 incorrect, 1 compiled only");
	/* 512.4 / 207.8 = 2.466 */
	T_CONTAINS(md.s, "v3 “online-f4”: 207.8 µs vs 512.4 µs for v1, the first correct variant: "
			 "2.47× faster.");
	T_CONTAINS(md.s, "## Winning change: v1 → v3");
	T_CONTAINS(md.s, "```diff\n--- v1/softmax.cu");
	T_CONTAINS(md.s, "+\t\tfloat4 v = row[i];");
	T_CONTAINS(md.s, "+LDG.E.128 R, desc[UR][R.64]");
	T_CONTAINS(md.s, "![Roofline and achieved bandwidth per variant](report-example.roofline.svg)");
	T_CONTAINS(md.s, "sample data");
	kb_buf_free(&svg);
	kb_buf_free(&md);
	sample_free(&s);
}

/* A check against a sampled reference (attention at large sizes) says in
 * the correctness table how many rows were compared, the fewest of a trial. */
static void test_report__sampled_rows(void)
{
	sample s;
	sample_make(&s);
	json_t *trials = json_object_get(json_object_get(json_object_get(s.v[0].note, "result"),
							 "check"), "trials");
	size_t i;
	json_t *t;
	json_array_foreach(trials, i, t)
		json_object_set_new(json_array_get(json_object_get(t, "outputs"), 0), "sampled",
				    json_pack("{s:I, s:I, s:I}", "compared", (json_int_t)(512 - i) * COLS,
					      "rows", (json_int_t)ROWS, "rows_checked",
					      (json_int_t)(512 - i)));
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_CONTAINS(md.s, "| 3/3 (values of 510 of 8192 rows) |");
	T_EQ_INT(count(md.s, "rows) |"), 1); /* v3 compared every value */
	kb_buf run = KB_BUF_INIT; /* and `kbench run` (the TUI's summary too) */
	kb_app_run_render(json_object_get(s.v[0].note, "result"), &run);
	T_CONTAINS(run.s, "  CORRECT     3/3 trials");
	T_CONTAINS(run.s, "values checked on 510 of 8192 rows a trial (sampled");
	kb_buf_reset(&run);
	kb_app_run_render(json_object_get(s.v[2].note, "result"), &run);
	T_OK(!strstr(run.s, "values checked on"));
	kb_buf_free(&run);
	kb_buf_free(&svg);
	kb_buf_free(&md);
	sample_free(&s);
}

/* The timing guard's verdict (docs/timing.md): a CORRECT run says every
 * timed launch was checked; a timed launch that wrote other than its
 * checked twin is the reason an INCORRECT run gives, in `kbench run` (the
 * TUI's summary, the LLM's feedback) and in the report. */
static void test_report__timed_launches(void)
{
	sample s;
	sample_make(&s);
	json_t *res = json_object_get(s.v[0].note, "result");
	json_t *check = json_object_get(res, "check");
	json_object_set_new(check, "timed_launches",
			    json_pack("{s:i, s:i, s:i, s:b}", "launches_checked", 312,
				      "launches_unchecked", 0, "input_sets", 3, "ok", 1));
	kb_buf run = KB_BUF_INIT;
	kb_app_run_render(res, &run);
	T_CONTAINS(run.s, "  CORRECT     3/3 trials");
	T_CONTAINS(run.s, "+ every timed launch (312, 3 input sets)");
	kb_buf_reset(&run);
	json_object_set_new(json_object_get(check, "timed_launches"), "bad",
			    json_pack("{s:i, s:s, s:i, s:i, s:s}", "launch", 17, "output", "y",
				      "elements", 1024, "of", 4194304, "first_bad", "y[4, 0]"));
	json_object_set_new(json_object_get(check, "timed_launches"), "ok", json_false());
	json_object_set_new(res, "verdict", json_string("INCORRECT"));
	json_object_set_new(check, "correct", json_false());
	json_object_del(res, "timing");
	kb_app_run_render(res, &run);
	T_CONTAINS(run.s, "  INCORRECT   timed launch 17 of 312 wrote y unlike its checked twin");
	T_CONTAINS(run.s, "1024 of 4194304 elements differ, first bad y[4, 0]");
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_CONTAINS(md.s, "timed launch 17 of 312 wrote y");
	kb_buf_free(&run);
	kb_buf_free(&svg);
	kb_buf_free(&md);
	sample_free(&s);
}

static void test_report__markdown_table(void)
{
	sample s;
	sample_make(&s);
	kb_buf md = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, NULL), 0);
	const char *t = strstr(md.s, "## Variants\n\n");
	T_OK(t != NULL);
	if (!t)
		goto out;
	t += strlen("## Variants\n\n");
	char *table = kb_xstrndup(t, strstr(t, "\n\n") ? (size_t)(strstr(t, "\n\n") - t) : strlen(t));
	T_EQ_INT(count(table, "\n") + 1, 2 + 4); /* header, rule, one row per variant */
	T_OK(!strncmp(table, "| Variant | Label | Verdict | Median µs (± σ) | GB/s | % of ceiling | "
			     "Regs | Occupancy |  |\n|---|---|---|---:|---:|---:|---:|---:|---|", 100));
	char *r1 = md_row(table, "| v1 |"), *r2 = md_row(table, "| v2 |");
	char *r3 = md_row(table, "| **v3** |"), *r4 = md_row(table, "| v4 |");
	T_EQ_STR(r1, "| v1 | naive | CORRECT | 512.4 ± 5.6 | 1048 | 34.8% copy | 32 | 100% |  |");
	T_EQ_STR(r2, "| v2 | smem-row | INCORRECT | not timed | n/a | n/a | 40 | 100% |  |");
	T_EQ_STR(r3, "| **v3** | online-f4 | CORRECT | 207.8 ± 1.7 | 2584 | 85.8% copy | 48 | 62.5% | ★ best |");
	T_EQ_STR(r4, "| v4 |  | COMPILED | not run | n/a | n/a | 64 | 50% |  |");
	T_EQ_INT(count(table, "★ best"), 1);
	free(r4), free(r3), free(r2), free(r1);
	free(table);
	/* correctness: every variant, and where v2 first went wrong */
	T_CONTAINS(md.s, "| v1 | CORRECT | 3/3 | 7340129, 7340130, 7340131 | 1.43e-07 | 3.4e-06 | "
			 "2.1e-07 | rtol 1e-05, atol 1e-06 |");
	T_CONTAINS(md.s, "| v2 | INCORRECT | 2/3 |");
	T_CONTAINS(md.s, "| v4 | COMPILED | not run |");
	T_CONTAINS(md.s, "- **v2** INCORRECT: trial 1 of 3 (seed 7340129), output y: first bad at "
			 "y[17, 4095], got 0.000244, want 0.000122; 8191 of 67108864 mismatched");
out:
	kb_buf_free(&md);
	sample_free(&s);
}

/* A compute-bound path: TFLOP/s, the tensor pipe and how the SASS changed. */
static void test_report__gemm_columns(void)
{
	sample s;
	sample_make(&s);
	static const char *mix[3] = {
		"{\"FFMA\": 512, \"LDS.128\": 64, \"EXIT\": 1}",
		"{\"HMMA.16816.F32.BF16\": 128, \"LDSM.16.M88.4\": 32, \"LDS.128\": 8, \"EXIT\": 1}",
		"{\"HGMMA.64x256x16.F32.BF16\": 4, \"UTMALDG.2D\": 2, \"LDSM.16.M88.4\": 32, \"EXIT\": 1}"};
	double pipe[3] = {0.0, 18.1, 93.0};
	for (int i = 0; i < 3; i++) {
		json_t *res = json_object_get(s.v[i].note, "result");
		json_t *rf = json_object_get(res, "roofline");
		if (rf)
			json_object_set_new(rf, "side", json_string("compute"));
		json_object_set_new(res, "sections", json_pack("{s:{s:f}}", "compute", "tensor_pipe_pct",
							       pipe[i]));
		json_t *k = json_object_get(json_object_get(res, "compile"), "kernel");
		json_object_set_new(k, "instruction_mix", json_loads(mix[i], 0, NULL));
	}
	kb_buf md = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, NULL), 0);
	T_CONTAINS(md.s, "| Variant | Label | Verdict | Median µs (± σ) | GB/s | TFLOP/s | % of ceiling "
		   "| Tensor pipe | Regs | Occupancy | SASS vs previous |  |");
	char *r2 = md_row(md.s, "| v2 |"), *r3 = md_row(md.s, "| **v3** |");
	T_CONTAINS(r2, "| 18.1% |");
	T_CONTAINS(r2, "| −FFMA 512, +HMMA 128, +LDSM 32, −LDS 56 |");
	T_CONTAINS(r3, "| 93.0% |");
	T_CONTAINS(r3, "| −HMMA 128, −LDS 8, +HGMMA 4, +UTMALDG 2 |");
	free(r2), free(r3);
	kb_buf_free(&md);
	sample_free(&s);
}

static void test_report__svg(void)
{
	sample s;
	sample_make(&s);
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_OK(!strncmp(svg.s, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39));
	T_EQ_INT(count(svg.s, "<svg"), 1);
	T_EQ_INT(count(svg.s, "</svg>"), 1);
	/* a roofline point and a bandwidth bar per timed variant, v2 named as
	 * not timed, v4 (no result) absent */
	T_EQ_INT(count(svg.s, "<g class=\"pt\">"), 2);
	T_EQ_INT(count(svg.s, "<g class=\"bar\">"), 2);
	T_CONTAINS(svg.s, "<title>v1: ");
	T_CONTAINS(svg.s, "<title>v3: ");
	T_CONTAINS(svg.s, ">v2</text>");
	T_CONTAINS(svg.s, "INCORRECT, not timed");
	T_OK(!strstr(svg.s, ">v4</text>"));
	T_CONTAINS(svg.s, "FP32 peak 66.9 TFLOP/s");
	T_CONTAINS(svg.s, "measured copy 3012 GB/s");
	kb_buf_free(&svg);
	kb_buf_free(&md);
	sample_free(&s);
}

static void test_report__html(void)
{
	sample s;
	sample_make(&s);
	kb_buf h = KB_BUF_INIT;
	T_EQ_INT(render(&s, true, &h, NULL), 0);
	T_OK(!strncmp(h.s, "<!DOCTYPE html>", 15));
	T_OK(!strstr(h.s, "http"));
	T_OK(!strstr(h.s, "<script"));
	T_OK(!strstr(h.s, "url("));
	T_OK(!strstr(h.s, "@import"));
	T_EQ_INT(count(h.s, "<table>"), count(h.s, "</table>"));
	T_EQ_INT(count(h.s, "<table>"), 3); /* variants, numbers, correctness */
	T_EQ_INT(count(h.s, "<svg "), 1);
	T_EQ_INT(count(h.s, "</svg>"), 1);
	T_EQ_INT(count(h.s, "<pre"), count(h.s, "</pre>"));
	T_EQ_INT(count(h.s, "<tr"), count(h.s, "</tr>"));
	T_EQ_INT(count(h.s, "<td"), count(h.s, "</td>"));
	T_EQ_INT(count(h.s, "<g class=\"pt\">"), 2);
	/* the source is escaped: '<' in loops, '&' nowhere raw */
	T_CONTAINS(h.s, "for (int i = threadIdx.x; i &lt; n; i += blockDim.x)");
	T_OK(!strstr(h.s, "i < n"));
	T_CONTAINS(h.s, "<title>kbench report: softmax_rows (sample data)</title>");
	T_CONTAINS(h.s, "2.47×");
	T_CONTAINS(h.s, "<tr class=\"best\">");
	kb_buf_free(&h);
	sample_free(&s);
}

static void test_report__escaping(void)
{
	sample s;
	sample_make(&s);
	free(s.v[2].label);
	s.v[2].label = kb_xstrdup("<b>a|b</b> & \"c\"");
	kb_buf h = KB_BUF_INIT, md = KB_BUF_INIT;
	T_EQ_INT(render(&s, true, &h, NULL), 0);
	T_EQ_INT(render(&s, false, &md, NULL), 0);
	T_CONTAINS(h.s, "&lt;b&gt;a|b&lt;/b&gt; &amp; &quot;c&quot;");
	T_OK(!strstr(h.s, "<b>a"));
	T_CONTAINS(md.s, "| **v3** | &lt;b&gt;a\\|b&lt;/b&gt; & \"c\" |");
	kb_buf_free(&md);
	kb_buf_free(&h);
	sample_free(&s);
}

static void test_report__bandwidth_only(void)
{
	sample s;
	sample_make(&s);
	for (int i = 0; i < 4; i++) {
		json_t *rf = json_object_get(json_object_get(s.v[i].note, "result"), "roofline");
		json_object_del(rf, "flops");
		json_object_del(rf, "TFLOPs");
		json_object_del(rf, "arithmetic_intensity");
	}
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_CONTAINS(md.s, "## Bandwidth\n");
	T_OK(!strstr(md.s, "## Roofline"));
	T_EQ_INT(count(svg.s, "<g class=\"pt\">"), 0);
	T_EQ_INT(count(svg.s, "<g class=\"bar\">"), 2);
	T_CONTAINS(svg.s, "INCORRECT, not timed");
	kb_buf_free(&svg);
	kb_buf_free(&md);
	sample_free(&s);
}

/* Display columns of a UTF-8 line (every code point here is one column). */
static int columns(const char *s, size_t n)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* Row and column of the first plot cell holding `mark` (between the
 * y axis and the end of the line), or row -1. */
static void find_mark(const char *text, char mark, int *row, int *col)
{
	*row = -1;
	int y = 0;
	for (const char *l = text; *l; y++) {
		size_t n = strcspn(l, "\n");
		const char *axis = strstr(l, "\u2502");
		if (axis && axis < l + n) {
			const char *cells = axis + strlen("\u2502");
			for (const char *p = cells; p < l + n; p++)
				if (*p == mark && !isalnum((unsigned char)p[1]) && p[1] != '.' &&
				    !isalnum((unsigned char)p[-1])) { /* not in a label */
					*row = y, *col = columns(cells, (size_t)(p - cells));
					return;
				}
		}
		l += n + (l[n] == '\n');
	}
}

static void test_report__text_roofline(void)
{
	sample s;
	sample_make(&s);
	kb_buf t = KB_BUF_INIT;
	T_EQ_INT(kb_app_roofline_text(s.v, 4, 60, 14, &t), 0);
	printf("%s", t.s);
	T_CONTAINS(t.s, "measured copy 3012 GB/s");
	T_CONTAINS(t.s, "DRAM datasheet 3352 GB/s");
	T_CONTAINS(t.s, "FP32 peak 66.9 TFLOP/s");
	T_CONTAINS(t.s, "ridge at 22.2 FLOP/B");
	/* v1 and v3 are the timed ones, same intensity: v3 (faster) sits above. */
	T_CONTAINS(t.s, "  1 ");
	T_CONTAINS(t.s, "(best)");
	int r1, c1, r2, c2;
	find_mark(t.s, '1', &r1, &c1);
	find_mark(t.s, '2', &r2, &c2);
	T_OK(r1 >= 0 && r2 >= 0);
	T_EQ_INT(c1, c2);
	T_OK(r2 < r1);
	/* 512.4 / 207.8 us is 0.39 of a decade: 14 rows over the axis's
	 * decades put them this many rows apart. */
	T_OK(r1 - r2 >= 1 && r1 - r2 <= 3);
	/* Plot rows are all the same width: 8 columns of labels + 52 cells. */
	int plot_rows = 0;
	for (const char *l = t.s; *l;) {
		size_t n = strcspn(l, "\n");
		const char *axis = strstr(l, "\u2502");
		if (axis && axis < l + n) {
			T_EQ_INT(columns(l, n), 60);
			plot_rows++;
		}
		l += n + (l[n] == '\n');
	}
	T_EQ_INT(plot_rows, 14);
	kb_buf_free(&t);

	/* Without FLOP counts there is nothing to plot, and it says why. */
	for (int i = 0; i < 4; i++)
		json_object_del(json_object_get(json_object_get(s.v[i].note, "result"), "roofline"),
				"flops");
	for (int i = 0; i < 4; i++)
		json_object_del(json_object_get(json_object_get(s.v[i].note, "result"), "roofline"),
				"TFLOPs");
	T_EQ_INT(kb_app_roofline_text(s.v, 4, 60, 14, &t), 1);
	T_CONTAINS(t.s, "add `//! flops EXPR`");
	kb_buf_free(&t);
	T_EQ_INT(kb_app_roofline_text(s.v + 3, 1, 60, 14, &t), 1);
	T_CONTAINS(t.s, "no variant has been run");
	kb_buf_free(&t);
	sample_free(&s);
}

static void test_report__deltas(void)
{
	sample s;
	sample_make(&s);
	kb_buf t = KB_BUF_INIT;
	/* v3 after v1 (v2 is INCORRECT and v4 not run: neither counts) */
	kb_app_deltas_text(s.v, 4, "v3", &t);
	printf("%s", t.s);
	T_CONTAINS(t.s, "  \u0394           vs v1 (previous, best so far): faster, -59.4% time");
	T_CONTAINS(t.s, "beyond the noise");
	T_CONTAINS(t.s, "v3 is the new best\n");
	T_EQ_INT(count(t.s, "\n"), 2);
	kb_buf_free(&t);
	/* v1 has no previous one; the best other is v3 */
	kb_app_deltas_text(s.v, 4, "v1", &t);
	T_CONTAINS(t.s, "vs v3 (best): slower");
	T_OK(!strstr(t.s, "previous"));
	T_OK(!strstr(t.s, "new best"));
	kb_buf_free(&t);
	/* 0.5% under v1 with a 1.1% CV is a tie, not a new best */
	json_decref(s.v[2].note);
	s.v[2].note = note(48, 62.5, true, 512.4 * 0.995, 0.011);
	kb_app_deltas_text(s.v, 4, "v3", &t);
	T_CONTAINS(t.s, "vs v1 (previous, best so far): same within noise");
	T_CONTAINS(t.s, "v3 ties v1, the best so far, within the noise\n");
	T_OK(!strstr(t.s, "new best"));
	kb_buf_free(&t);
	/* an INCORRECT or unrun variant gets no delta at all */
	kb_app_deltas_text(s.v, 4, "v2", &t);
	kb_app_deltas_text(s.v, 4, "v4", &t);
	kb_app_deltas_text(s.v, 4, "v9", &t);
	T_OK(t.len == 0);
	kb_buf_free(&t);
	/* within noise: v3 at 511 us against v1's 512.4 (CV 1.1%) */
	json_object_set_new(json_object_get(json_object_get(s.v[2].note, "result"), "timing"),
			    "median_us", json_real(511.0));
	kb_app_deltas_text(s.v, 4, "v3", &t);
	T_CONTAINS(t.s, "vs v1 (previous, best so far): same within noise");
	kb_buf_free(&t);
	/* alone in the session: nothing to compare with */
	kb_app_deltas_text(s.v, 1, "v1", &t);
	T_OK(t.len == 0);
	kb_buf_free(&t);
	sample_free(&s);
}

static void test_report__no_result(void)
{
	kb_variant v;
	memset(&v, 0, sizeof v);
	snprintf(v.name, sizeof v.name, "v1");
	kb_buf out = KB_BUF_INIT, svg = KB_BUF_INIT;
	kb_app_report_opts o = {0};
	kb_err err = {0};
	T_EQ_INT(kb_app_report(&o, &v, 1, NULL, NULL, &out, &svg, &err), 0);
	T_CONTAINS(out.s, "No variant is correct and timed yet");
	T_CONTAINS(out.s, "| v1 |  | NO RESULT | not run |");
	T_CONTAINS(out.s, "No variant has been run yet.");
	T_EQ_INT(svg.len, 0);
	T_EQ_INT(kb_app_report(&o, NULL, 2, NULL, NULL, &out, NULL, &err), KB_EINVAL);
	kb_buf_free(&svg);
	kb_buf_free(&out);
}

/* ---- the page in a real browser ---------------------------------------------- */

static void write_examples(const sample *s, const char *dir)
{
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT, h = KB_BUF_INIT;
	kb_err err = {0};
	render(s, false, &md, &svg);
	render(s, true, &h, NULL);
	char *p = kb_xasprintf("%s/report-example.md", dir);
	T_EQ_INT(kb_file_write(p, md.s, md.len, &err), 0);
	free(p);
	p = kb_xasprintf("%s/report-example.roofline.svg", dir);
	T_EQ_INT(kb_file_write(p, svg.s, svg.len, &err), 0);
	free(p);
	p = kb_xasprintf("%s/report-example.html", dir);
	T_EQ_INT(kb_file_write(p, h.s, h.len, &err), 0);
	free(p);
	kb_buf_free(&h);
	kb_buf_free(&svg);
	kb_buf_free(&md);
}

static void test_report__chromium_screenshot(void)
{
	const char *chromium = "/usr/bin/chromium";
	if (access(chromium, X_OK) != 0)
		T_SKIP("chromium not installed");
	sample s;
	sample_make(&s);
	if (getenv("KB_REPORT_EXAMPLE"))
		write_examples(&s, getenv("KB_REPORT_EXAMPLE"));
	char dir[] = "/tmp/kb_report_XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	kb_buf h = KB_BUF_INIT, log = KB_BUF_INIT;
	kb_err err = {0};
	render(&s, true, &h, NULL);
	char *html = kb_xasprintf("%s/report.html", dir), *shot = kb_xasprintf("%s/shot.png", dir);
	char *profile = kb_xasprintf("--user-data-dir=%s/profile", dir);
	char *shot_arg = kb_xasprintf("--screenshot=%s", shot), *url = kb_xasprintf("file://%s", html);
	T_EQ_INT(kb_file_write(html, h.s, h.len, &err), 0);
	char *argv[] = {"timeout", "90", (char *)chromium, "--headless", "--no-sandbox",
			"--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", profile,
			shot_arg, "--window-size=1280,1600", url, NULL};
	int rc = kb_spawn_capture(argv, &log, &log, &err);
	struct stat st;
	T_EQ_INT(rc, 0);
	T_OK(stat(shot, &st) == 0);
	T_OK(st.st_size > 20 * 1024);
	if (rc != 0 || stat(shot, &st) != 0)
		printf("  chromium said:\n%s\n", log.s ? log.s : "");
	char *rm[] = {"rm", "-rf", dir, NULL};
	kb_spawn_capture(rm, NULL, NULL, &err);
	free(url), free(shot_arg), free(profile), free(shot), free(html);
	kb_buf_free(&log);
	kb_buf_free(&h);
	sample_free(&s);
}

/* kbench profile --hot: a hot line's busiest instructions, most first,
 * each with its share and the reason it stalled most. */
static void test_report__hot_instructions(void)
{
	json_t *r = json_pack("{s:[], s:I, s:I, s:[{s:i, s:s, s:I, s:f, s:[{s:s, s:I, s:f}], s:[s, s],"
			      " s:[{s:s, s:I, s:f, s:s, s:f}, {s:s, s:I, s:f, s:s, s:f}]}]}",
			      "hot", "hot_samples", (json_int_t)100, "hot_launches", (json_int_t)5, "hot_lines",
			      "line", 40, "text", "acc += dot(x, w)", "samples", (json_int_t)80, "share_pct", 80.0,
			      "stalls", "reason", "wait", "samples", (json_int_t)40, "share_pct", 50.0, "sass", "LDSM", "HMMA",
			      "insns", "sass", "LDSM.16.M88.4 R4, [R2]", "pc", (json_int_t)16, "share_pct", 20.0,
			      "stall", "short_scoreboard", "stall_pct", 70.0, "sass", "HMMA.16816.F32.BF16 R8, R4, R6, R8", "pc",
			      (json_int_t)32, "share_pct", 60.0, "stall", "wait", "stall_pct", 55.0);
	if (!r)
		return;
	T_OK(r != NULL);
	kb_buf out = KB_BUF_INIT;
	kb_app_profile_render(r, &out);
	T_CONTAINS(out.s, "  80.0 %  line 40   acc += dot(x, w)\n");
	T_CONTAINS(out.s, "   60.0%  HMMA.16816.F32.BF16 R8, R4, R6, R8   [wait 55%]\n"
			  "                   20.0%  LDSM.16.M88.4 R4, [R2]   [short_scoreboard 70%]\n");
	kb_buf_free(&out);
	json_decref(r);
}

/* kbench profile --hot / --sass-metrics: the shared-memory instructions of
 * one instrumented launch, most bank conflicts first, the kernel's total,
 * a role CUPTI lacks as n/a with why, and a hot instruction's counts. */
static void test_report__sass_metrics(void)
{
	json_t *r = json_pack(
		"{s:{s:I, s:I, s:I, s:I, s:I, s:{s:s}, s:[{s:s, s:I, s:I, s:I, s:I, s:i, s:s},"
		" {s:s, s:I, s:I, s:I, s:I, s:s}]}}", "sass_metrics", "launches", (json_int_t)1,
		"executions", (json_int_t)9000, "shared_wavefronts", (json_int_t)33792, "bank_conflicts",
		(json_int_t)31744, "shared_instructions", (json_int_t)2, "unsupported",
		"cupti_bank_conflicts", "GH100 has no SASS metric x", "shared", "function", "k", "pc",
		(json_int_t)0x1a0, "executions", (json_int_t)1024, "shared_wavefronts", (json_int_t)32768,
		"bank_conflicts", (json_int_t)31744, "line", 26, "sass", "LDS R5, [R4]", "function", "k",
		"pc", (json_int_t)0x80, "executions", (json_int_t)1024, "shared_wavefronts",
		(json_int_t)1024, "bank_conflicts", (json_int_t)0, "sass", "STS [R2], R3");
	kb_buf out = KB_BUF_INIT;
	kb_app_profile_render(r, &out);
	T_CONTAINS(out.s, "Shared memory per instruction (SASS metrics, 1 instrumented launch)\n"
			  "    bank conflicts 31744 in 33792 wavefronts of 2 shared-memory instructions "
			  "(9000 executed)\n"
			  "    cupti_bank_conflicts: n/a (GH100 has no SASS metric x)\n");
	T_CONTAINS(out.s, "    01a0         1024       32768       31744   32.0    26  LDS R5, [R4]\n"
			  "    0080         1024        1024           0    1.0     -  STS [R2], R3\n");
	kb_buf_free(&out);
	json_t *in = json_pack("{s:I, s:I, s:I}", "executions", (json_int_t)1024, "shared_wavefronts",
			       (json_int_t)2048, "bank_conflicts", (json_int_t)1024);
	kb_app_sassm_counts(in, &out);
	T_EQ_STR(out.s, "  exec 1024  smem wavefronts 2048  bank conflicts 1024 (2.0-way)");
	kb_buf_free(&out);
	/* an HGMMA reads 20 wavefronts a time by design: with its ideal count, 1-way */
	json_t *mma = json_pack("{s:I, s:I, s:I, s:I}", "executions", (json_int_t)1048576,
				"shared_wavefronts", (json_int_t)20971520, "shared_wavefronts_ideal",
				(json_int_t)20971520, "bank_conflicts", (json_int_t)0);
	kb_app_sassm_counts(mma, &out);
	T_EQ_STR(out.s, "  exec 1048576  smem wavefronts 20971520  bank conflicts 0 (1.0-way)");
	kb_buf_free(&out);
	json_decref(mma);
	json_object_set_new(in, "shared_wavefronts", json_integer(0)); /* not a shared-memory one */
	json_object_set_new(in, "bank_conflicts", json_integer(0));
	kb_app_sassm_counts(in, &out);
	T_EQ_STR(out.s, "  exec 1024");
	kb_buf_free(&out);
	T_OK(kb_app_sassm_insn(r, "k", 0x80) != NULL);
	T_OK(kb_app_sassm_insn(r, "k", 0x90) == NULL);
	json_object_set_new(r, "sass_metrics_error", json_pack("{s:s}", "message", "refused"));
	json_object_del(r, "sass_metrics");
	kb_app_profile_render(r, &out);
	T_CONTAINS(out.s, "  SASS metrics: unavailable - refused\n");
	kb_buf_free(&out);
	json_decref(in);
	json_decref(r);
}

/* kbench profile --hot without a disassembler says where it looked for one
 * (the runner's "hot_why"), not only that nvdisasm is needed. */
static void test_report__hot_without_disassembler(void)
{
	json_t *r = json_pack("{s:[], s:[], s:i, s:i, s:s}", "hot", "hot_lines", "hot_samples", 12,
			      "hot_launches", 3, "hot_why",
			      "nvdisasm not found (nor cuobjdump): looked in /x/bin (the CUDA toolkit)");
	kb_buf out = KB_BUF_INIT;
	kb_app_profile_render(r, &out);
	T_CONTAINS(out.s, "(no samples mapped to source lines: SASS line info needs nvdisasm: "
			  "nvdisasm not found (nor cuobjdump): looked in /x/bin (the CUDA toolkit))");
	kb_buf_free(&out);
	json_object_del(r, "hot_why");
	kb_app_profile_render(r, &out);
	T_CONTAINS(out.s, "(no samples mapped to source lines: SASS line info needs nvdisasm)\n");
	kb_buf_free(&out);
	json_decref(r);
}

/* A session of a .tile file: the winning change shows the .tile diff and
 * the diff of the CUDA the tile compiler makes of each variant. */
static void test_report__tile_generated_diff(void)
{
	static const char tile_a[] =
		"//! arg N = 4096\n//! in x : f32[N] = randn(seed=1)\n//! out y : f32[N]\n"
		"//! ref copy(x) -> y\n"
		"kernel cp(x: f32[N], y: f32[N]) grid(cdiv(N, BLOCK)) threads(256) {\n"
		"    const BLOCK = 1024\n"
		"    i = pid(0) * BLOCK\n"
		"    store(y[i : i + BLOCK], load(x[i : i + BLOCK]))\n"
		"}\n";
	sample s;
	sample_make(&s);
	for (int i = 0; i < 4; i++) {
		free(s.v[i].path);
		s.v[i].path = kb_xstrdup("kernels/cp.tile");
		free(s.src[i]);
		s.src[i] = kb_xstrdup(tile_a);
		if (i >= 2) { /* the winner tiles by 4096 */
			char *at = strstr(s.src[i], "BLOCK = 1024");
			memcpy(at, "BLOCK = 4096", 12);
		}
		s.len[i] = strlen(s.src[i]);
	}
	kb_buf md = KB_BUF_INIT, svg = KB_BUF_INIT;
	T_EQ_INT(render(&s, false, &md, &svg), 0);
	T_CONTAINS(md.s, "-    const BLOCK = 1024\n+    const BLOCK = 4096");
	T_CONTAINS(md.s, "The CUDA the tile compiler made of each (#line directives left out):");
	T_CONTAINS(md.s, "-\tconstexpr int BLOCK = 1024;\n+\tconstexpr int BLOCK = 4096;");
	T_CONTAINS(md.s, "+\t\tfor (int k_ = 0; k_ < 4; k_++) {"); /* 4096 over 256 threads */
	kb_buf_free(&svg);
	kb_buf_free(&md);
	sample_free(&s);
}

/* A Result from elsewhere (an older kbench, an edited note, fuzz_result)
 * whose members are missing or not strings: rendered with nothing in their
 * place, never a NULL to strcmp or "%s" (a stall without "reason" crashed
 * stall_meaning). */
static void test_report__result_not_strings(void)
{
	json_t *r = json_loads("{\"hot_lines\": [{\"line\": 40, \"text\": 1, \"share_pct\": 80.0,"
			       " \"stalls\": [{\"share_pct\": 50.0}, {\"reason\": 7, \"share_pct\": 20.0}],"
			       " \"insns\": [{\"sass\": 3, \"share_pct\": 20.0, \"stall\": \"wait\"}]}],"
			       " \"hot\": [{\"function\": 1, \"pc\": 16}], \"hot_why\": 5,"
			       " \"compile\": {\"kernel\": {\"name\": \"k\"}, \"options\": [1]},"
			       " \"status\": \"ok\", \"verdict\": \"CORRECT\"}", 0, NULL);
	json_t *sweeps = json_loads("{\"tune\": [{\"defines\": [\"B=1\", 2], \"result\": {\"status\":"
				    " \"ok\", \"check\": {\"trials\": [{\"outputs\": [{\"first_bad\": {}}]}]}}}]}",
				    0, NULL);
	T_OK(r && sweeps);
	kb_buf out = KB_BUF_INIT;
	kb_app_profile_render(r, &out);
	T_CONTAINS(out.s, "stalls:  50%,  20%\n");
	T_CONTAINS(out.s, "line 40   \n");
	kb_app_run_render(r, &out);
	kb_app_sweep_render(sweeps, &out);
	T_CONTAINS(out.s, "B=1 ");
	T_OK(!strstr(out.s, "(null)"));
	T_EQ_INT(kb_app_sassm_insn(r, "k", 16) == NULL, 1);
	kb_buf_free(&out);
	json_decref(sweeps);
	json_decref(r);
}

int main(void)
{
	T_RUN(test_report__pick);
	T_RUN(test_report__markdown_summary);
	T_RUN(test_report__kernel_moved_on);
	T_RUN(test_report__markdown_table);
	T_RUN(test_report__sampled_rows);
	T_RUN(test_report__timed_launches);
	T_RUN(test_report__gemm_columns);
	T_RUN(test_report__svg);
	T_RUN(test_report__html);
	T_RUN(test_report__escaping);
	T_RUN(test_report__bandwidth_only);
	T_RUN(test_report__text_roofline);
	T_RUN(test_report__deltas);
	T_RUN(test_report__no_result);
	T_RUN(test_report__hot_without_disassembler);
	T_RUN(test_report__chromium_screenshot);
	T_RUN(test_report__tile_generated_diff);
	T_RUN(test_report__hot_instructions);
	T_RUN(test_report__sass_metrics);
	T_RUN(test_report__result_not_strings);
	return t_report();
}
