/*
 * report_model.c - the variants as a report sees them (architecture §6):
 * one row per variant read from its note (verdict, timing, bandwidth and
 * its share of a ceiling, FLOP rate, the kernel's compile facts), the first
 * and the best variants, what the variants share (kernel, file, GPU), the
 * ceilings the charts draw, the decades a roofline spans, and a check's
 * correctness evidence (trials, seeds, worst errors, where it first went
 * wrong).
 *
 * It owns reading only: report.c and report_page.c render the pages,
 * report_svg.c the chart, roofline_text.c the terminal plot.  Invariants:
 * a model borrows its variants' notes (rows point into them), so the
 * variants outlive it; "best" is the fastest variant whose verdict is
 * CORRECT and that was timed, "first" the first such one; a number a Result
 * lacks is marked missing (pct < 0, gbps < 0, has_flops false), never 0.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================== */
/* The model: one row per variant, read from its note                      */
/* ====================================================================== */

/* The compile facts of the variant's kernel: the result's, else the
 * compile note's kernel found by name in its build. */
static json_t *find_kernel(json_t *note, json_t *res)
{
	json_t *k = json_object_get(json_object_get(res, "compile"), "kernel");
	if (json_is_object(k))
		return k;
	json_t *c = json_object_get(note, "compile");
	/* A recorded compile (kb_compile_unit_summary_json) has the kernel
	 * itself; `kbench compile --json` names it and lists the build's. */
	if (json_is_object(json_object_get(c, "kernel")))
		return json_object_get(c, "kernel");
	const char *name = kb_app__str(c, "kernel");
	json_t *ks = json_object_get(json_object_get(c, "build"), "kernels");
	for (size_t i = 0; i < json_array_size(ks); i++)
		if (!strcmp(kb_app__str(json_array_get(ks, i), "name"), name))
			return json_array_get(ks, i);
	return json_array_size(ks) == 1 ? json_array_get(ks, 0) : NULL;
}

static void read_speed(kb_app__row *r)
{
	json_t *t = json_object_get(r->res, "timing"), *rf = json_object_get(r->res, "roofline");
	r->timed = kb_app__has(t, "median_us") && kb_app__num(t, "median_us") > 0;
	r->pct = -1;
	if (!r->timed)
		return;
	r->median = kb_app__num(t, "median_us");
	r->sd = kb_app__num(t, "cv") * r->median;
	r->min = kb_app__num(t, "min_us");
	r->max = kb_app__num(t, "max_us");
	r->gbps = kb_app__has(rf, "GBps") ? kb_app__num(rf, "GBps") : -1;
	r->impossible = json_is_true(json_object_get(rf, "impossible"));
	if (!strcmp(kb_app__str(rf, "side"), "compute") && kb_app__has(rf, "pct_of_tensor_peak"))
		r->pct = kb_app__num(rf, "pct_of_tensor_peak"), r->basis = "tensor-core peak";
	else if (!strcmp(kb_app__str(rf, "side"), "compute") && kb_app__has(rf, "pct_of_fp32_peak"))
		r->pct = kb_app__num(rf, "pct_of_fp32_peak"), r->basis = "FP32 peak";
	else if (kb_app__has(rf, "pct_of_measured_copy"))
		r->pct = kb_app__num(rf, "pct_of_measured_copy"), r->basis = "copy";
	else if (kb_app__has(rf, "pct_of_datasheet_dram"))
		r->pct = kb_app__num(rf, "pct_of_datasheet_dram"), r->basis = "DRAM spec";
	r->has_flops = kb_app__has(rf, "arithmetic_intensity") &&
		       kb_app__num(rf, "arithmetic_intensity") > 0 && kb_app__has(rf, "TFLOPs") &&
		       kb_app__num(rf, "TFLOPs") > 0;
	r->ai = kb_app__num(rf, "arithmetic_intensity");
	r->flops_s = kb_app__num(rf, "TFLOPs") * 1e12;
}

static void read_row(const kb_variant *v, kb_app__row *r)
{
	memset(r, 0, sizeof *r);
	r->v = v;
	r->pct = -1;
	r->gbps = -1;
	json_t *c = json_object_get(v->note, "compile");
	r->res = json_object_get(v->note, "result");
	if (!json_is_object(r->res))
		r->res = NULL;
	r->kernel = find_kernel(v->note, r->res);
	if (r->res) {
		r->verdict = kb_app_verdict(r->res);
	} else if (c) {
		const char *st = kb_app__str(c, "status");
		if (json_is_false(json_object_get(c, "ok")))
			st = "compile_error";
		r->verdict = !st[0] || !strcmp(st, "ok") ? KB_VERDICT_COMPILED
			     : !strcmp(st, "spec_error") ? KB_VERDICT_SPEC_ERROR
			     : KB_VERDICT_COMPILE_ERROR;
	} else {
		r->verdict = v->note_error ? KB_VERDICT_BAD_NOTE : KB_VERDICT_NO_RESULT;
	}
	r->correct = r->verdict == KB_VERDICT_CORRECT;
	if (r->res)
		read_speed(r);
}

/* best: the fastest CORRECT timed row; first: the first such row of the
 * kernel best ran (a file whose spec switched kernels compares like with
 * like). */
static void pick_rows(const kb_app__row *r, int n, int *first, int *best)
{
	*first = *best = -1;
	for (int i = 0; i < n; i++)
		if (r[i].correct && r[i].timed && (*best < 0 || r[i].median < r[*best].median))
			*best = i;
	for (int i = 0; *best >= 0 && i < n && *first < 0; i++)
		if (r[i].correct && r[i].timed && r[i].v &&
		    kb_app__same_kernel(r[i].v, r[*best].v ? r[*best].v->kernel : NULL))
			*first = i;
}

void kb_app_report_pick(const kb_variant *vs, int n, int *first, int *best)
{
	kb_app__row *r = kb_xcalloc(n > 0 ? (size_t)n : 1, sizeof *r);
	for (int i = 0; i < n; i++)
		read_row(&vs[i], &r[i]);
	pick_rows(r, n, first, best);
	free(r);
}

/* The ceilings the chart draws, from the reference variant's Result: the
 * measured copy bandwidth (GB/s over its share of it), the datasheet DRAM
 * and the FP32 peak (measured when calibrated, else the datasheet's), or
 * for a tensor-core kernel the tensor-core peak its Result was judged by. */
static void read_ceilings(kb_app__model *R, const kb_app__row *ref)
{
	json_t *rf = json_object_get(ref->res, "roofline");
	json_t *dev = json_object_get(json_object_get(ref->res, "env"), "device");
	if (kb_app__has(rf, "pct_of_measured_copy") && kb_app__num(rf, "pct_of_measured_copy") > 0)
		R->copy_GBps = kb_app__num(rf, "GBps") * 100.0 /
			       kb_app__num(rf, "pct_of_measured_copy");
	R->dram_GBps = kb_app__num(dev, "dram_peak_GBps");
	R->peak_name = "FP32 peak";
	if (kb_app__has(rf, "tensor_peak_TFLOPs") && kb_app__num(rf, "tensor_peak_TFLOPs") > 0)
		R->peak_TFLOPs = kb_app__num(rf, "tensor_peak_TFLOPs"), R->peak_name = "tensor-core peak";
	else if (kb_app__has(rf, "pct_of_fp32_peak") && kb_app__num(rf, "pct_of_fp32_peak") > 0)
		R->peak_TFLOPs = kb_app__num(rf, "TFLOPs") * 100.0 /
				 kb_app__num(rf, "pct_of_fp32_peak");
	else
		R->peak_TFLOPs = kb_app__num(dev, "fp32_peak_TFLOPs");
}

static void read_report(kb_app__model *R)
{
	const kb_app__row *ref = NULL;
	const char *uuid = NULL;
	pick_rows(R->r, R->n, &R->first, &R->best);
	for (int i = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		json_t *dev = json_object_get(json_object_get(r->res, "env"), "device");
		/* a compile's errors are kept as its Result, yet nothing ran */
		if (r->res && strcmp(kb_app__str(r->res, "status"), "spec_error") &&
		    strcmp(kb_app__str(r->res, "status"), "compile_error"))
			R->nrun++;
		if (r->timed && r->has_flops)
			R->nflops++;
		if (!R->kernel && r->kernel && kb_app__str(r->kernel, "name")[0])
			R->kernel = kb_app__str(r->kernel, "name");
		if (i < R->first && r->correct && r->timed)
			R->other_kernels = true;
		if (!R->file && r->v->path)
			R->file = r->v->path;
		if (!R->file && r->res && kb_app__str(r->res, "file")[0])
			R->file = kb_app__str(r->res, "file");
		if (dev && kb_app__str(dev, "uuid")[0]) {
			if (uuid && strcmp(uuid, kb_app__str(dev, "uuid")))
				R->mixed_gpu = true;
			uuid = uuid ? uuid : kb_app__str(dev, "uuid");
		}
		if (!ref && r->timed)
			ref = r;
	}
	if (R->best >= 0) {
		ref = &R->r[R->best];
		/* the cards and the summary speak of the best: name its kernel */
		if (ref->kernel && kb_app__str(ref->kernel, "name")[0])
			R->kernel = kb_app__str(ref->kernel, "name");
	}
	if (ref) {
		read_ceilings(R, ref);
		R->gpu = kb_app__str(json_object_get(json_object_get(ref->res, "env"), "device"), "name");
	}
	if (R->o->file)
		R->file = R->o->file;
}

void kb_app__model_read(kb_app__model *R, const kb_app_report_opts *o, const kb_variant *vs, int n)
{
	*R = (kb_app__model){.o = o, .n = n, .first = -1, .best = -1};
	R->r = kb_xcalloc(n > 0 ? (size_t)n : 1, sizeof *R->r);
	for (int i = 0; i < n; i++)
		read_row(&vs[i], &R->r[i]);
	read_report(R);
}

void kb_app__model_free(kb_app__model *R)
{
	free(R->r);
	R->r = NULL;
}

const char *kb_app__name_of(const kb_app__row *r)
{
	return r->v->name[0] ? r->v->name : "?";
}

/* ====================================================================== */
/* The roofline's axes, shared by the SVG chart and the terminal plot       */
/* ====================================================================== */

void kb_app__fmt_si(char *s, size_t n, double v)
{
	static const char *pre[] = {"", "k", "M", "G", "T", "P", "E"};
	int i = 0;
	while (v >= 1000 && i < 6)
		v /= 1000, i++;
	snprintf(s, n, "%g%s", v, pre[i]);
}

/* The decades the roofline spans: every point with a FLOP count, the
 * ridge, and the compute peak, a decade of margin around them (at least
 * three decades tall). */
void kb_app__roof_range(const kb_app__model *R, double *lx0, double *lx1, double *ly0,
			double *ly1)
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, peak = R->peak_TFLOPs * 1e12;
	double bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	for (int i = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		if (!r->timed || !r->has_flops)
			continue;
		xmin = fmin(xmin, r->ai), xmax = fmax(xmax, r->ai);
		ymin = fmin(ymin, r->flops_s);
	}
	if (bw > 0 && peak > 0)
		xmin = fmin(xmin, peak / bw), xmax = fmax(xmax, peak / bw);
	double ymax = fmax(peak, ymin);
	*lx0 = floor(log10(xmin)) - 1, *lx1 = ceil(log10(xmax)) + 1;
	*ly0 = floor(log10(ymin)) - 1, *ly1 = ceil(log10(ymax * 1.5));
	if (*ly1 - *ly0 < 3)
		*ly0 = *ly1 - 3;
}

/* ====================================================================== */
/* Correctness evidence                                                     */
/* ====================================================================== */

/* A number JSON carries as a number or as "nan" / "inf" / "-inf". */
static double value(json_t *v)
{
	const char *s = json_string_value(v);
	if (!s)
		return json_number_value(v);
	return !strcmp(s, "nan") ? NAN : !strcmp(s, "-inf") ? -INFINITY : INFINITY;
}

static double worst(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : fmax(a, b);
}

void kb_app__fmt_num(char *s, size_t n, double v)
{
	if (isnan(v))
		snprintf(s, n, "nan");
	else if (isinf(v))
		snprintf(s, n, "%sinf", v < 0 ? "-" : "");
	else
		snprintf(s, n, "%.3g", v);
}

static void describe_bad(json_t *o, const char *when, char *s, size_t n)
{
	json_t *fb = json_object_get(o, "first_bad");
	char got[32], want[32];
	kb_app__fmt_num(got, sizeof got, value(json_object_get(fb, "got")));
	kb_app__fmt_num(want, sizeof want, value(json_object_get(fb, "want")));
	int k = snprintf(s, n, "%s, output %s", when, kb_app__str(o, "output"));
	if (fb && k > 0 && (size_t)k < n)
		k += snprintf(s + k, n - (size_t)k, ": first bad at %s, got %s, want %s",
			      kb_app__str(fb, "at"), got, want);
	if (k > 0 && (size_t)k < n)
		snprintf(s + k, n - (size_t)k, "; %lld of %lld mismatched, %lld unwritten, %lld NaN, "
			 "%lld Inf", (long long)kb_app__num(o, "mismatches"),
			 (long long)kb_app__num(o, "elements"), (long long)kb_app__num(o, "unwritten"),
			 (long long)kb_app__num(o, "nan"), (long long)kb_app__num(o, "inf"));
}

/* The first failing output of trials (a check's "trials" or "after_timing"). */
static bool find_bad(json_t *trials, bool after, kb_app__evidence *e)
{
	size_t i, k;
	json_t *t, *o;
	json_array_foreach(trials, i, t) {
		if (json_is_true(json_object_get(t, "ok")))
			continue;
		json_array_foreach(json_object_get(t, "outputs"), k, o) {
			if (json_is_true(json_object_get(o, "ok")))
				continue;
			char when[96];
			if (after)
				snprintf(when, sizeof when, "re-check after timing");
			else
				snprintf(when, sizeof when, "trial %zu of %zu (seed %lld)", i + 1,
					 json_array_size(trials), (long long)kb_app__num(t, "seed"));
			describe_bad(o, when, e->bad, sizeof e->bad);
			return true;
		}
	}
	return false;
}

void kb_app__read_evidence(json_t *check, kb_app__evidence *e)
{
	memset(e, 0, sizeof *e);
	json_t *trials = json_object_get(check, "trials"), *t, *o;
	size_t i, k;
	int len = 0;
	json_array_foreach(trials, i, t) {
		e->trials++;
		e->passed += json_is_true(json_object_get(t, "ok"));
		if ((size_t)len < sizeof e->seeds)
			len += snprintf(e->seeds + len, sizeof e->seeds - (size_t)len, "%s%lld",
					i ? ", " : "", (long long)kb_app__num(t, "seed"));
		json_array_foreach(json_object_get(t, "outputs"), k, o) {
			e->abs = worst(e->abs, value(json_object_get(o, "max_abs_err")));
			e->rel = worst(e->rel, value(json_object_get(o, "max_rel_err")));
			e->l2 = worst(e->l2, value(json_object_get(o, "rel_l2_err")));
			json_t *sm = json_object_get(o, "sampled");
			if (sm && (!e->rows || kb_app__num(sm, "rows_checked") < e->rows_checked)) {
				e->rows = kb_app__num(sm, "rows");
				e->rows_checked = kb_app__num(sm, "rows_checked");
			}
		}
	}
	e->rtol = kb_app__num(check, "rtol");
	e->atol = kb_app__num(check, "atol");
	if (!find_bad(trials, false, e) && !kb_app__timed_bad(check, e->bad, sizeof e->bad))
		find_bad(json_object_get(check, "after_timing"), true, e);
}
