/*
 * report.c - a tuning session rendered for code review (architecture §6):
 * GitHub Markdown that reads well in a pull request, or one self-contained
 * HTML page (inline CSS and SVG, no script, no URL).  Both say the same
 * things in the same order: a summary (kernel, GPU, the best variant and
 * its speed-up), the variant table, the winning change (source diff and a
 * SASS excerpt), a chart (roofline, and achieved bandwidth against the
 * ceiling) and the correctness evidence.
 *
 * It owns the rendering only: the caller reads the variants and their
 * sources from the store and diffs the SASS.  Invariants: the output is a
 * pure function of the arguments (no clock, no files, no GPU); "best" is
 * the fastest variant whose verdict is CORRECT and that was timed, and the
 * speed-up is measured against the first such variant; every variant with
 * a result appears in the chart; numbers a Result lacks print as "n/a",
 * never as 0.
 */
#include "app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================== */
/* The model: one row per variant, read from its note                      */
/* ====================================================================== */

typedef struct {
	const kb_variant *v;
	json_t *res;           /* note.result, or NULL */
	json_t *kernel;        /* {name, resources, occupancy}, or NULL */
	const char *verdict;   /* CORRECT, INCORRECT, COMPILED, ... */
	bool correct, timed, impossible;
	double median, sd, min, max;
	double gbps, pct;      /* pct < 0: no ceiling known */
	const char *basis;     /* what pct is a share of */
	bool has_flops;
	double ai, flops_s;
} row;

typedef struct {
	const kb_app_report_opts *o;
	row *r;
	int n, first, best;
	const char *kernel, *file, *gpu;
	bool mixed_gpu;
	double copy_GBps, dram_GBps, peak_TFLOPs; /* chart ceilings, 0: unknown */
	int nrun, nflops;      /* variants with a result; of those, timed with FLOPs */
} report;

static const char *str(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : "";
}

static double num(json_t *j, const char *key)
{
	return json_number_value(json_object_get(j, key));
}

static bool has(json_t *j, const char *key)
{
	return json_is_number(json_object_get(j, key));
}

static const char *status_word(json_t *res)
{
	static const struct { const char *status, *word; } words[] = {
		{"fault", "FAULT"}, {"timeout", "TIMEOUT"}, {"crash", "CRASH"},
		{"spec_error", "SPEC ERROR"}, {"compile_error", "COMPILE ERROR"},
		{"no_gpu", "NO GPU"}, {"launch_error", "LAUNCH ERROR"},
	};
	const char *status = str(res, "status");
	if (!strcmp(status, "ok"))
		return str(res, "verdict")[0] ? str(res, "verdict") : "ERROR";
	for (size_t i = 0; i < KB_ARRAY_LEN(words); i++)
		if (!strcmp(status, words[i].status))
			return words[i].word;
	return "ERROR";
}

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
	const char *name = str(c, "kernel");
	json_t *ks = json_object_get(json_object_get(c, "build"), "kernels");
	for (size_t i = 0; i < json_array_size(ks); i++)
		if (!strcmp(str(json_array_get(ks, i), "name"), name))
			return json_array_get(ks, i);
	return json_array_size(ks) == 1 ? json_array_get(ks, 0) : NULL;
}

static void read_speed(row *r)
{
	json_t *t = json_object_get(r->res, "timing"), *rf = json_object_get(r->res, "roofline");
	r->timed = has(t, "median_us") && num(t, "median_us") > 0;
	r->pct = -1;
	if (!r->timed)
		return;
	r->median = num(t, "median_us");
	r->sd = num(t, "cv") * r->median;
	r->min = num(t, "min_us");
	r->max = num(t, "max_us");
	r->gbps = has(rf, "GBps") ? num(rf, "GBps") : -1;
	r->impossible = json_is_true(json_object_get(rf, "impossible"));
	if (!strcmp(str(rf, "side"), "compute") && has(rf, "pct_of_fp32_peak"))
		r->pct = num(rf, "pct_of_fp32_peak"), r->basis = "FP32 peak";
	else if (has(rf, "pct_of_measured_copy"))
		r->pct = num(rf, "pct_of_measured_copy"), r->basis = "copy";
	else if (has(rf, "pct_of_datasheet_dram"))
		r->pct = num(rf, "pct_of_datasheet_dram"), r->basis = "DRAM spec";
	r->has_flops = has(rf, "arithmetic_intensity") && num(rf, "arithmetic_intensity") > 0 &&
		       has(rf, "TFLOPs") && num(rf, "TFLOPs") > 0;
	r->ai = num(rf, "arithmetic_intensity");
	r->flops_s = num(rf, "TFLOPs") * 1e12;
}

static void read_row(const kb_variant *v, row *r)
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
		r->verdict = status_word(r->res);
	} else if (c) {
		const char *st = str(c, "status");
		if (json_is_false(json_object_get(c, "ok")))
			st = "compile_error";
		r->verdict = !st[0] || !strcmp(st, "ok") ? "COMPILED"
			     : !strcmp(st, "spec_error") ? "SPEC ERROR" : "COMPILE ERROR";
	} else {
		r->verdict = "NO RESULT";
	}
	r->correct = !strcmp(r->verdict, "CORRECT");
	if (r->res)
		read_speed(r);
}

static void pick_rows(const row *r, int n, int *first, int *best)
{
	*first = *best = -1;
	for (int i = 0; i < n; i++) {
		if (!r[i].correct || !r[i].timed)
			continue;
		if (*first < 0)
			*first = i;
		if (*best < 0 || r[i].median < r[*best].median)
			*best = i;
	}
}

void kb_app_report_pick(const kb_variant *vs, int n, int *first, int *best)
{
	row *r = kb_xcalloc(n > 0 ? (size_t)n : 1, sizeof *r);
	for (int i = 0; i < n; i++)
		read_row(&vs[i], &r[i]);
	pick_rows(r, n, first, best);
	free(r);
}

/* The ceilings the chart draws, from the reference variant's Result: the
 * measured copy bandwidth (GB/s over its share of it), the datasheet DRAM
 * and the FP32 peak (measured when calibrated, else the datasheet's). */
static void read_ceilings(report *R, const row *ref)
{
	json_t *rf = json_object_get(ref->res, "roofline");
	json_t *dev = json_object_get(json_object_get(ref->res, "env"), "device");
	if (has(rf, "pct_of_measured_copy") && num(rf, "pct_of_measured_copy") > 0)
		R->copy_GBps = num(rf, "GBps") * 100.0 / num(rf, "pct_of_measured_copy");
	R->dram_GBps = num(dev, "dram_peak_GBps");
	if (has(rf, "pct_of_fp32_peak") && num(rf, "pct_of_fp32_peak") > 0)
		R->peak_TFLOPs = num(rf, "TFLOPs") * 100.0 / num(rf, "pct_of_fp32_peak");
	else
		R->peak_TFLOPs = num(dev, "fp32_peak_TFLOPs");
}

static void read_report(report *R)
{
	const row *ref = NULL;
	const char *uuid = NULL;
	pick_rows(R->r, R->n, &R->first, &R->best);
	for (int i = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		json_t *dev = json_object_get(json_object_get(r->res, "env"), "device");
		if (r->res)
			R->nrun++;
		if (r->timed && r->has_flops)
			R->nflops++;
		if (!R->kernel && r->kernel && str(r->kernel, "name")[0])
			R->kernel = str(r->kernel, "name");
		if (!R->file && r->v->path)
			R->file = r->v->path;
		if (!R->file && r->res && str(r->res, "file")[0])
			R->file = str(r->res, "file");
		if (dev && str(dev, "uuid")[0]) {
			if (uuid && strcmp(uuid, str(dev, "uuid")))
				R->mixed_gpu = true;
			uuid = uuid ? uuid : str(dev, "uuid");
		}
		if (!ref && r->timed)
			ref = r;
	}
	if (R->best >= 0)
		ref = &R->r[R->best];
	if (ref) {
		read_ceilings(R, ref);
		R->gpu = str(json_object_get(json_object_get(ref->res, "env"), "device"), "name");
	}
	if (R->o->file)
		R->file = R->o->file;
}

/* ====================================================================== */
/* Text helpers                                                             */
/* ====================================================================== */

static void html_escape(kb_buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': kb_buf_cat(out, "&amp;"); break;
		case '<': kb_buf_cat(out, "&lt;"); break;
		case '>': kb_buf_cat(out, "&gt;"); break;
		case '"': kb_buf_cat(out, "&quot;"); break;
		case '\'': kb_buf_cat(out, "&#39;"); break;
		default: kb_buf_catc(out, s[i]);
		}
	}
}

static void html(kb_buf *out, const char *s)
{
	html_escape(out, s, strlen(s));
}

/* A Markdown table cell: one line, no column break, no inline HTML. */
static void md_cell(kb_buf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '|': kb_buf_cat(out, "\\|"); break;
		case '<': kb_buf_cat(out, "&lt;"); break;
		case '>': kb_buf_cat(out, "&gt;"); break;
		case '\n': case '\r': case '\t': kb_buf_catc(out, ' '); break;
		default: kb_buf_catc(out, *s);
		}
	}
}

/* A code fence longer than any run of backticks inside the text. */
static void md_fence(kb_buf *out, const char *text, const char *lang)
{
	int run = 0, longest = 0;
	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	for (int i = 0; i < (longest >= 3 ? longest + 1 : 3); i++)
		kb_buf_catc(out, '`');
	kb_buf_cat(out, lang);
	kb_buf_catc(out, '\n');
}

static void md_code(kb_buf *out, const char *text, const char *lang)
{
	md_fence(out, text, lang);
	kb_buf_cat(out, text);
	if (text[0] && text[strlen(text) - 1] != '\n')
		kb_buf_catc(out, '\n');
	md_fence(out, text, "");
	kb_buf_catc(out, '\n');
}

/* A diff in <pre>, one block span per line, coloured by its first char. */
static void html_diff(kb_buf *out, const char *text)
{
	kb_buf_cat(out, "<pre class=\"diff\">");
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *cls = !strncmp(p, "+++", 3) || !strncmp(p, "---", 3) ? "m"
				  : *p == '+' ? "a" : *p == '-' ? "d" : *p == '@' ? "h" : "c";
		kb_buf_catf(out, "<span class=\"%s\">", cls);
		html_escape(out, p, n);
		kb_buf_cat(out, n ? "</span>" : " </span>");
		p += n + (e ? 1 : 0);
	}
	kb_buf_cat(out, "</pre>\n");
}

static const char *name_of(const row *r)
{
	return r->v->name[0] ? r->v->name : "?";
}

/* "512.4 ± 5.6" with one decimal at or above 100 us, two below. */
static void fmt_time(char *s, size_t n, double us, double sd)
{
	if (sd > 0)
		snprintf(s, n, us >= 100 ? "%.1f ± %.1f" : "%.2f ± %.2f", us, sd);
	else
		snprintf(s, n, us >= 100 ? "%.1f" : "%.2f", us);
}

static void fmt_us(char *s, size_t n, double us)
{
	snprintf(s, n, us >= 100 ? "%.1f µs" : "%.2f µs", us);
}

/* "10T" for axis ticks. */
static void fmt_si(char *s, size_t n, double v)
{
	static const char *pre[] = {"", "k", "M", "G", "T", "P", "E"};
	int i = 0;
	while (v >= 1000 && i < 6)
		v /= 1000, i++;
	snprintf(s, n, "%g%s", v, pre[i]);
}

/* ====================================================================== */
/* The chart (SVG): roofline, and bandwidth against the ceiling            */
/* ====================================================================== */

#define SVG_FONT "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\""
#define C_TEXT "#1f2328"
#define C_MUTED "#59636e"
#define C_GRID "#e6e9ec"
#define C_AXIS "#8c959f"
#define C_ROOF "#57606a"
#define C_POINT "#0969da"
#define C_BEST "#1a7f37"
#define C_BAD "#cf222e"

typedef struct {
	double x0, y0, w, h;   /* the plot area in pixels */
	double lx0, lx1, ly0, ly1;
} axes;

static double ax_x(const axes *a, double v)
{
	return a->x0 + (log10(v) - a->lx0) / (a->lx1 - a->lx0) * a->w;
}

static double ax_y(const axes *a, double v)
{
	return a->y0 + a->h - (log10(v) - a->ly0) / (a->ly1 - a->ly0) * a->h;
}

static void svg_text(kb_buf *o, double x, double y, const char *anchor, const char *style,
		     const char *text)
{
	kb_buf_catf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" %s>", x, y, anchor, style);
	html(o, text);
	kb_buf_cat(o, "</text>\n");
}

/* The decades the roofline spans: every point with a FLOP count, the
 * ridge, and the compute peak, a decade of margin around them (at least
 * three decades tall). */
static void roof_range(const report *R, double *lx0, double *lx1, double *ly0, double *ly1)
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, peak = R->peak_TFLOPs * 1e12;
	double bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	for (int i = 0; i < R->n; i++) {
		const row *r = &R->r[i];
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

static void roof_axes(const report *R, axes *a, double ox, double oy, double w, double h)
{
	*a = (axes){ox + 70, oy + 56, w - 94, h - 112, 0, 0, 0, 0};
	roof_range(R, &a->lx0, &a->lx1, &a->ly0, &a->ly1);
}

static void roof_grid(kb_buf *o, const axes *a)
{
	char t[32];
	for (double d = a->lx0; d <= a->lx1 + 1e-9; d++) {
		double x = ax_x(a, pow(10, d));
		kb_buf_catf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x,
			    a->y0, x, a->y0 + a->h, C_GRID);
		snprintf(t, sizeof t, "%g", pow(10, d));
		svg_text(o, x, a->y0 + a->h + 18, "middle", "font-size=\"12\" fill=\"" C_MUTED "\"", t);
	}
	for (double d = a->ly0; d <= a->ly1 + 1e-9; d++) {
		double y = ax_y(a, pow(10, d));
		kb_buf_catf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			    a->x0, y, a->x0 + a->w, y, C_GRID);
		fmt_si(t, sizeof t, pow(10, d));
		svg_text(o, a->x0 - 8, y + 4, "end", "font-size=\"12\" fill=\"" C_MUTED "\"", t);
	}
	kb_buf_catf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
		    "stroke=\"%s\"/>\n", a->x0, a->y0, a->w, a->h, C_AXIS);
	svg_text(o, a->x0 + a->w / 2, a->y0 + a->h + 40, "middle",
		 "font-size=\"12\" fill=\"" C_MUTED "\"", "arithmetic intensity (FLOP/byte)");
	kb_buf_catf(o, "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
		    "font-size=\"12\" fill=\"%s\">achieved FLOP/s</text>\n", a->x0 - 52,
		    a->y0 + a->h / 2, C_MUTED);
}

/* A memory roof of bw bytes/s from the left edge (or the bottom) up to
 * the compute peak, with its entry in the legend (the top-left corner of
 * the plot, above every roof, is always empty). */
static void roof_memory(kb_buf *o, const axes *a, double bw, double peak, const char *dash,
			const char *label, int entry)
{
	double xl = pow(10, a->lx0), yb = pow(10, a->ly0);
	double x1 = bw * xl < yb ? yb / bw : xl, x2 = peak / bw;
	double lx = a->x0 + 14, ly = a->y0 + 20 + 19.0 * entry;
	kb_buf_catf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		    "stroke-width=\"2\"%s/>\n", ax_x(a, x1), ax_y(a, bw * x1), ax_x(a, x2),
		    ax_y(a, peak), C_ROOF, dash);
	kb_buf_catf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		    "stroke-width=\"2\"%s/>\n", lx, ly - 4, lx + 24, ly - 4, C_ROOF, dash);
	svg_text(o, lx + 32, ly, "start", "font-size=\"12\" fill=\"" C_TEXT "\"", label);
}

static void roof_lines(const report *R, kb_buf *o, const axes *a)
{
	double peak = R->peak_TFLOPs * 1e12;
	char t[96];
	int entry = 0;
	if (peak <= 0)
		return;
	double bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	double ridge = bw > 0 ? peak / bw : pow(10, a->lx0);
	if (bw > 0) {
		snprintf(t, sizeof t, "%s %.0f GB/s", R->copy_GBps > 0 ? "measured copy" : "DRAM datasheet",
			 bw / 1e9);
		roof_memory(o, a, bw, peak, "", t, entry++);
	}
	if (R->copy_GBps > 0 && R->dram_GBps > R->copy_GBps * 1.01) {
		snprintf(t, sizeof t, "DRAM datasheet %.0f GB/s", R->dram_GBps);
		roof_memory(o, a, R->dram_GBps * 1e9, peak, " stroke-dasharray=\"5 4\" opacity=\"0.55\"",
			    t, entry++);
	}
	kb_buf_catf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		    "stroke-width=\"2\"/>\n", ax_x(a, ridge), ax_y(a, peak), a->x0 + a->w,
		    ax_y(a, peak), C_ROOF);
	snprintf(t, sizeof t, "FP32 peak %.1f TFLOP/s", R->peak_TFLOPs);
	svg_text(o, a->x0 + a->w - 6, ax_y(a, peak) - 7, "end", "font-size=\"12\" fill=\"" C_TEXT "\"",
		 t);
	if (bw > 0) {
		snprintf(t, sizeof t, "ridge at %.3g FLOP/byte", ridge);
		svg_text(o, a->x0 + 46, a->y0 + 20 + 19.0 * entry, "start",
			 "font-size=\"12\" fill=\"" C_MUTED "\"", t);
	}
}

static void roof_points(const report *R, kb_buf *o, const axes *a)
{
	for (int i = 0, k = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		if (!r->timed || !r->has_flops)
			continue;
		bool best = i == R->best;
		const char *c = best ? C_BEST : r->impossible || !r->correct ? C_BAD : C_POINT;
		double x = ax_x(a, r->ai), y = ax_y(a, r->flops_s);
		kb_buf_catf(o, "<g class=\"pt\"><title>%s: %.3g FLOP/B, %.3g TFLOP/s, %.2f us</title>"
			    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" stroke=\"#fff\" "
			    "stroke-width=\"1.5\"/>", name_of(r), r->ai, r->flops_s / 1e12, r->median,
			    x, y, best ? 6 : 5, c);
		char t[64];
		snprintf(t, sizeof t, "%s%s", name_of(r), best ? " (best)" : "");
		svg_text(o, x + 10, y + 4 + (k++ % 2 ? 10 : -2), "start",
			 best ? "font-size=\"12.5\" font-weight=\"600\" fill=\"" C_BEST "\""
			      : "font-size=\"12.5\" fill=\"" C_TEXT "\"", t);
		kb_buf_cat(o, "</g>\n");
	}
}

static void svg_roofline(const report *R, kb_buf *o, double ox, double oy, double w, double h)
{
	axes a;
	roof_axes(R, &a, ox, oy, w, h);
	svg_text(o, ox + 8, oy + 22, "start", "font-size=\"15\" font-weight=\"600\" fill=\"" C_TEXT "\"",
		 "Roofline");
	svg_text(o, ox + 8, oy + 40, "start", "font-size=\"12\" fill=\"" C_MUTED "\"",
		 "log-log; one point per timed variant with a FLOP count");
	roof_grid(o, &a);
	roof_lines(R, o, &a);
	roof_points(R, o, &a);
}

static double bars_ceiling(const report *R, const char **what)
{
	*what = R->copy_GBps > 0 ? "measured copy" : "DRAM spec";
	return R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps;
}

static double bars_height(const report *R)
{
	return 84 + 34.0 * R->nrun;
}

static void bar_row(const row *r, bool best, kb_buf *o, double x0, double tw, double y,
		    double scale, double ceil_bw)
{
	char t[96];
	svg_text(o, x0 - 10, y + 15, "end", best ? "font-size=\"12.5\" font-weight=\"600\" fill=\"" C_BEST "\""
						 : "font-size=\"12.5\" fill=\"" C_TEXT "\"", name_of(r));
	kb_buf_catf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" rx=\"3\" "
		    "fill=\"#f6f8fa\"/>\n", x0, y + 1, tw);
	if (!r->timed || r->gbps < 0) {
		snprintf(t, sizeof t, "%s, not timed", r->verdict);
		svg_text(o, x0 + 8, y + 15, "start", "font-size=\"12\" font-style=\"italic\" fill=\""
			 C_BAD "\"", t);
		return;
	}
	double bw = fmin(r->gbps * scale, tw);
	const char *c = best ? C_BEST : r->impossible || !r->correct ? C_BAD : C_POINT;
	kb_buf_catf(o, "<g class=\"bar\"><title>%s: %.0f GB/s</title><rect x=\"%.1f\" y=\"%.1f\" "
		    "width=\"%.1f\" height=\"20\" rx=\"3\" fill=\"%s\"/></g>\n", name_of(r), r->gbps, x0,
		    y + 1, bw, c);
	if (ceil_bw > 0)
		snprintf(t, sizeof t, "%.0f GB/s · %.1f%%", r->gbps, 100.0 * r->gbps / ceil_bw);
	else
		snprintf(t, sizeof t, "%.0f GB/s", r->gbps);
	if (bw > tw * 0.6) /* inside the bar, clear of the ceiling line */
		svg_text(o, x0 + bw - 8, y + 15, "end", "font-size=\"12\" font-weight=\"600\" "
			 "fill=\"#ffffff\"", t);
	else
		svg_text(o, x0 + bw + 6, y + 15, "start", "font-size=\"12\" fill=\"" C_TEXT "\"", t);
}

static void svg_bars(const report *R, kb_buf *o, double ox, double oy, double w)
{
	const char *what;
	double ceil_bw = bars_ceiling(R, &what), top = 0;
	for (int i = 0; i < R->n; i++)
		top = fmax(top, R->r[i].timed ? R->r[i].gbps : 0);
	top = fmax(top, ceil_bw);
	double x0 = ox + 56, tw = w - 56 - 130, scale = top > 0 ? tw / top : 0, y = oy + 62;
	svg_text(o, ox + 8, oy + 22, "start", "font-size=\"15\" font-weight=\"600\" fill=\"" C_TEXT "\"",
		 "Achieved bandwidth");
	svg_text(o, ox + 8, oy + 40, "start", "font-size=\"12\" fill=\"" C_MUTED "\"",
		 "GB/s per variant against the ceiling");
	for (int i = 0; i < R->n; i++) {
		if (!R->r[i].res)
			continue;
		bar_row(&R->r[i], i == R->best, o, x0, tw, y, scale, ceil_bw);
		y += 34;
	}
	if (ceil_bw > 0) {
		char t[64];
		double x = x0 + ceil_bw * scale;
		kb_buf_catf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			    "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n", x, oy + 54, x, y + 4, C_ROOF);
		snprintf(t, sizeof t, "%s %.0f GB/s", what, ceil_bw);
		svg_text(o, x, y + 20, "end", "font-size=\"11.5\" fill=\"" C_MUTED "\"", t);
	}
}

/* The whole chart; standalone adds the XML namespace a file needs (an
 * inline SVG in HTML needs none, and the page carries no URL). */
static void svg_render(const report *R, kb_buf *o, bool standalone)
{
	double rw = R->nflops ? 600 : 0, bw = 480, gap = R->nflops ? 24 : 0;
	double h = fmax(R->nflops ? 420 : 0, bars_height(R)), w = rw + gap + bw;
	kb_buf_catf(o, "<svg %sviewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" %s "
		    "role=\"img\" aria-label=\"kbench chart\">\n",
		    standalone ? "xmlns=\"http://www.w3.org/2000/svg\" " : "", w, h, w, h, SVG_FONT);
	kb_buf_catf(o, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
	if (R->nflops)
		svg_roofline(R, o, 0, 0, rw, 420);
	svg_bars(R, o, rw + gap, 0, bw);
	kb_buf_cat(o, "</svg>\n");
}

/* ====================================================================== */
/* The chart in a terminal: a log-log roofline of text cells                */
/* ====================================================================== */

/* Cells are UTF-8 strings of one column each; the grid is rows x cols. */
typedef struct {
	int rows, cols;
	const char **cell;
	double lx0, lx1, ly0, ly1;
} grid;

static int grid_col(const grid *g, double v)
{
	return (int)floor((log10(v) - g->lx0) / (g->lx1 - g->lx0) * g->cols);
}

static int grid_row(const grid *g, double v)
{
	return g->rows - 1 - (int)floor((log10(v) - g->ly0) / (g->ly1 - g->ly0) * g->rows);
}

static void grid_put(grid *g, int y, int col, const char *c, bool over)
{
	if (y < 0 || y >= g->rows || col < 0 || col >= g->cols)
		return;
	const char **at = &g->cell[y * g->cols + col];
	if (over || !strcmp(*at, " "))
		*at = c;
}

/* A roof min(bw * I, peak): per column, the cells between the roof's
 * height at the column's two edges, so steep stretches stay joined. */
static void grid_roof(grid *g, double bw, double peak, const char *slope)
{
	for (int c = 0; c < g->cols; c++) {
		double i0 = pow(10, g->lx0 + (g->lx1 - g->lx0) * c / g->cols);
		double i1 = pow(10, g->lx0 + (g->lx1 - g->lx0) * (c + 1) / g->cols);
		if (bw * i0 >= peak) {
			grid_put(g, grid_row(g, peak), c, "\u2500", false);
			continue;
		}
		int top = grid_row(g, fmin(bw * i1, peak)), bottom = grid_row(g, bw * i0);
		for (int r = top; r <= bottom; r++)
			grid_put(g, r, c, bw * i1 >= peak && r == top ? "\u2500" : slope, false);
	}
}

static const char *const POINT_MARKS[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9",
					  "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
					  "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"};
#define NMARKS (int)(sizeof POINT_MARKS / sizeof *POINT_MARKS)

static void text_legend(const report *R, kb_buf *out, double bw, const int *marks)
{
	if (bw > 0)
		kb_buf_catf(out, "  \u2571 %s %.0f GB/s", R->copy_GBps > 0 ? "measured copy" : "DRAM datasheet",
			    bw / 1e9);
	if (R->copy_GBps > 0 && R->dram_GBps > R->copy_GBps * 1.01)
		kb_buf_catf(out, "   \u00b7 DRAM datasheet %.0f GB/s", R->dram_GBps);
	kb_buf_catf(out, "\n  \u2500 FP32 peak %.1f TFLOP/s", R->peak_TFLOPs);
	if (bw > 0)
		kb_buf_catf(out, "   ridge at %.3g FLOP/B", R->peak_TFLOPs * 1e12 / bw);
	kb_buf_cat(out, "\n\n");
	for (int i = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		if (marks[i] < 0)
			continue;
		kb_buf_catf(out, "  %s %-10s %.3g FLOP/B  %.3g TFLOP/s  %.2f us  %s%s\n",
			    POINT_MARKS[marks[i]], name_of(r), r->ai, r->flops_s / 1e12, r->median,
			    r->impossible ? "IMPOSSIBLE" : r->verdict, i == R->best ? "  (best)" : "");
	}
}

/* The plot, y labels on the left (7 columns), x labels below. */
static void text_plot(const report *R, int width, int height, kb_buf *out, int *marks)
{
	enum { LEFT = 8 };
	grid g = {.rows = height, .cols = width - LEFT};
	g.cell = kb_xcalloc((size_t)g.rows * (size_t)g.cols, sizeof *g.cell);
	for (int i = 0; i < g.rows * g.cols; i++)
		g.cell[i] = " ";
	roof_range(R, &g.lx0, &g.lx1, &g.ly0, &g.ly1);
	double peak = R->peak_TFLOPs * 1e12, bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	if (peak > 0 && bw > 0)
		grid_roof(&g, bw, peak, "\u2571");
	if (peak > 0 && R->copy_GBps > 0 && R->dram_GBps > R->copy_GBps * 1.01)
		grid_roof(&g, R->dram_GBps * 1e9, peak, "\u00b7");
	for (int i = 0, k = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		marks[i] = -1;
		if (!r->timed || !r->has_flops)
			continue;
		marks[i] = k < NMARKS ? k : NMARKS - 1;
		k++;
		grid_put(&g, grid_row(&g, r->flops_s), grid_col(&g, r->ai), POINT_MARKS[marks[i]], true);
	}
	for (int y = 0; y < g.rows; y++) {
		/* a label on the row each decade of FLOP/s falls in */
		char label[16] = "";
		for (double d = ceil(g.ly0); d <= g.ly1; d++)
			if (grid_row(&g, pow(10, d) * 1.0001) == y)
				fmt_si(label, sizeof label, pow(10, d));
		kb_buf_catf(out, "%6s \u2502", label);
		for (int c = 0; c < g.cols; c++)
			kb_buf_cat(out, g.cell[y * g.cols + c]);
		kb_buf_cat(out, "\n");
	}
	kb_buf_catf(out, "%6s \u2514", "");
	for (int c = 0; c < g.cols; c++)
		kb_buf_cat(out, "\u2500");
	kb_buf_catf(out, "\n%8s", "");
	int at = 0;
	for (double d = ceil(g.lx0); d <= g.lx1; d++) {
		char t[16];
		snprintf(t, sizeof t, "%g", pow(10, d));
		int c = grid_col(&g, pow(10, d) * 1.0001);
		if (c < at || c + (int)strlen(t) > g.cols)
			continue;
		kb_buf_catf(out, "%*s%s", c - at, "", t);
		at = c + (int)strlen(t) + 1;
		kb_buf_cat(out, " ");
	}
	kb_buf_catf(out, "\n%8sarithmetic intensity (FLOP/byte) \u2192   FLOP/s \u2191\n\n", "");
	free(g.cell);
}

int kb_app_roofline_text(const kb_variant *vs, int n, int width, int height, kb_buf *out)
{
	kb_app_report_opts o = {0};
	report R = {.o = &o, .n = n, .first = -1, .best = -1};
	R.r = kb_xcalloc(n > 0 ? (size_t)n : 1, sizeof *R.r);
	for (int i = 0; i < n; i++)
		read_row(&vs[i], &R.r[i]);
	read_report(&R);
	int rc = 0;
	if (!R.nflops || R.peak_TFLOPs <= 0) {
		kb_buf_catf(out, "No roofline yet: %s\n",
			    !R.nrun ? "no variant has been run (it needs a GPU)"
			    : !R.nflops ? "no timed variant has a FLOP count (add `//! flops EXPR` to the spec)"
					: "this GPU's FP32 peak is not known (run `kbench calibrate`)");
		rc = 1;
	} else {
		int *marks = kb_xcalloc((size_t)n, sizeof *marks);
		kb_buf_catf(out, "Roofline%s%s\n(log-log; one point per timed variant)\n\n",
			    R.gpu && R.gpu[0] ? ": " : "", R.gpu ? R.gpu : "");
		text_plot(&R, width < 30 ? 30 : width, height < 6 ? 6 : height, out, marks);
		text_legend(&R, out, (R.copy_GBps > 0 ? R.copy_GBps : R.dram_GBps) * 1e9, marks);
		free(marks);
	}
	free(R.r);
	return rc;
}

/* ====================================================================== */
/* Correctness evidence                                                     */
/* ====================================================================== */

typedef struct {
	int trials, passed;
	char seeds[160];
	double abs, rel, l2;   /* worst over trials and outputs; NAN when one was */
	double rtol, atol;
	char bad[512];         /* where it first went wrong, or "" */
} evidence;

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

static void fmt_num(char *s, size_t n, double v)
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
	fmt_num(got, sizeof got, value(json_object_get(fb, "got")));
	fmt_num(want, sizeof want, value(json_object_get(fb, "want")));
	int k = snprintf(s, n, "%s, output %s", when, str(o, "output"));
	if (fb && k > 0 && (size_t)k < n)
		k += snprintf(s + k, n - (size_t)k, ": first bad at %s, got %s, want %s", str(fb, "at"),
			      got, want);
	if (k > 0 && (size_t)k < n)
		snprintf(s + k, n - (size_t)k, "; %lld of %lld mismatched, %lld unwritten, %lld NaN, "
			 "%lld Inf", (long long)num(o, "mismatches"), (long long)num(o, "elements"),
			 (long long)num(o, "unwritten"), (long long)num(o, "nan"), (long long)num(o, "inf"));
}

/* The first failing output of trials (a check's "trials" or "after_timing"). */
static bool find_bad(json_t *trials, bool after, evidence *e)
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
					 json_array_size(trials), (long long)num(t, "seed"));
			describe_bad(o, when, e->bad, sizeof e->bad);
			return true;
		}
	}
	return false;
}

static void read_evidence(json_t *check, evidence *e)
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
					i ? ", " : "", (long long)num(t, "seed"));
		json_array_foreach(json_object_get(t, "outputs"), k, o) {
			e->abs = worst(e->abs, value(json_object_get(o, "max_abs_err")));
			e->rel = worst(e->rel, value(json_object_get(o, "max_rel_err")));
			e->l2 = worst(e->l2, value(json_object_get(o, "rel_l2_err")));
		}
	}
	e->rtol = num(check, "rtol");
	e->atol = num(check, "atol");
	if (!find_bad(trials, false, e))
		find_bad(json_object_get(check, "after_timing"), true, e);
}

/* ====================================================================== */
/* Tables: one description, rendered as GitHub Markdown or HTML            */
/* ====================================================================== */

#define MAX_COLS 10

typedef struct {
	char text[MAX_COLS][160];
	const char *cls[MAX_COLS]; /* HTML: a span class (a badge), or NULL */
	bool strong[MAX_COLS];
	const char *row_cls;       /* HTML: the <tr> class, or NULL */
} trow;

/* align: one 'l' or 'r' per column; narrow: HTML sizes it to its content. */
static void table_begin(const report *R, kb_buf *o, const char *const *heads, const char *align,
			bool narrow)
{
	int n = (int)strlen(align);
	if (R->o->html) {
		kb_buf_catf(o, "<div class=\"scroll%s\"><table>\n<thead><tr>", narrow ? " narrow" : "");
		for (int i = 0; i < n; i++) {
			kb_buf_cat(o, align[i] == 'r' ? "<th class=\"num\">" : "<th>");
			html(o, heads[i]);
			kb_buf_cat(o, "</th>");
		}
		kb_buf_cat(o, "</tr></thead>\n<tbody>\n");
		return;
	}
	for (int i = 0; i < n; i++) {
		kb_buf_cat(o, "| ");
		md_cell(o, heads[i]);
		kb_buf_catc(o, ' ');
	}
	kb_buf_cat(o, "|\n");
	for (int i = 0; i < n; i++)
		kb_buf_cat(o, align[i] == 'r' ? "|---:" : "|---");
	kb_buf_cat(o, "|\n");
}

static void table_row(const report *R, kb_buf *o, const trow *t, const char *align)
{
	int n = (int)strlen(align);
	if (!R->o->html) {
		for (int i = 0; i < n; i++) {
			kb_buf_cat(o, t->strong[i] && t->text[i][0] ? "| **" : "| ");
			md_cell(o, t->text[i]);
			kb_buf_cat(o, t->strong[i] && t->text[i][0] ? "** " : " ");
		}
		kb_buf_cat(o, "|\n");
		return;
	}
	kb_buf_cat(o, "<tr");
	if (t->row_cls)
		kb_buf_catf(o, " class=\"%s\"", t->row_cls);
	kb_buf_cat(o, ">");
	for (int i = 0; i < n; i++) {
		kb_buf_cat(o, align[i] == 'r' ? "<td class=\"num\">" : "<td>");
		if (t->cls[i])
			kb_buf_catf(o, "<span class=\"%s\">", t->cls[i]);
		kb_buf_cat(o, t->strong[i] ? "<strong>" : "");
		html(o, t->text[i]);
		kb_buf_cat(o, t->strong[i] ? "</strong>" : "");
		kb_buf_cat(o, t->cls[i] ? "</span>" : "");
		kb_buf_cat(o, "</td>");
	}
	kb_buf_cat(o, "</tr>\n");
}

static void table_end(const report *R, kb_buf *o)
{
	kb_buf_cat(o, R->o->html ? "</tbody>\n</table></div>\n" : "\n");
}

static void heading(const report *R, kb_buf *o, const char *text)
{
	if (R->o->html) {
		kb_buf_cat(o, "<h2>");
		html(o, text);
		kb_buf_cat(o, "</h2>\n");
	} else {
		kb_buf_catf(o, "## %s\n\n", text);
	}
}

/* A paragraph of plain text (escaped), muted in HTML when note is set. */
static void para(const report *R, kb_buf *o, bool note, const char *text)
{
	if (R->o->html) {
		kb_buf_cat(o, note ? "<p class=\"note\">" : "<p>");
		html(o, text);
		kb_buf_cat(o, "</p>\n");
	} else {
		kb_buf_catf(o, "%s%s%s\n\n", note ? "_" : "", text, note ? "_" : "");
	}
}

static const char *badge(const char *verdict)
{
	return !strcmp(verdict, "CORRECT") ? "badge b-ok"
	       : !strcmp(verdict, "COMPILED") || !strcmp(verdict, "NO RESULT") ? "badge b-muted"
	       : "badge b-bad";
}

/* ====================================================================== */
/* Sections                                                                 */
/* ====================================================================== */

static void variant_row(const report *R, int i, trow *t)
{
	const row *r = &R->r[i];
	json_t *res = json_object_get(r->kernel, "resources"), *occ = json_object_get(r->kernel, "occupancy");
	memset(t, 0, sizeof *t);
	snprintf(t->text[0], sizeof t->text[0], "%s", name_of(r));
	snprintf(t->text[1], sizeof t->text[1], "%s", r->v->label ? r->v->label : "");
	snprintf(t->text[2], sizeof t->text[2], "%s", r->verdict);
	t->cls[2] = badge(r->verdict);
	if (r->timed)
		fmt_time(t->text[3], sizeof t->text[3], r->median, r->sd);
	else
		snprintf(t->text[3], sizeof t->text[3], r->res ? "not timed" : "not run");
	snprintf(t->text[4], sizeof t->text[4], r->gbps >= 0 ? "%.0f" : "n/a", r->gbps);
	if (r->pct >= 0)
		snprintf(t->text[5], sizeof t->text[5], "%.1f%% %s", r->pct, r->basis);
	else
		snprintf(t->text[5], sizeof t->text[5], "n/a");
	snprintf(t->text[6], sizeof t->text[6], has(res, "registers") ? "%.0f" : "n/a",
		 num(res, "registers"));
	double pct = num(occ, "occupancy_pct");
	snprintf(t->text[7], sizeof t->text[7], !has(occ, "occupancy_pct") ? "n/a"
		 : pct == floor(pct) ? "%.0f%%" : "%.1f%%", pct);
	if (i == R->best) {
		snprintf(t->text[8], sizeof t->text[8], "★ best");
		t->cls[8] = "badge b-best";
		t->strong[0] = true;
		t->row_cls = "best";
	} else if (!r->correct && r->res) {
		t->row_cls = "fail";
	}
}

static void section_variants(const report *R, kb_buf *o)
{
	static const char *heads[] = {"Variant", "Label", "Verdict", "Median µs (± σ)", "GB/s",
				      "% of ceiling", "Regs", "Occupancy", ""};
	const char *align = "lllrrrrrl";
	trow t;
	heading(R, o, "Variants");
	table_begin(R, o, heads, align, false);
	for (int i = 0; i < R->n; i++) {
		variant_row(R, i, &t);
		table_row(R, o, &t, align);
	}
	table_end(R, o);
	para(R, o, true, "± is one standard deviation (CV × median) of the timed launches. "
	     "% of ceiling: of the measured copy bandwidth (kbench calibrate), of the datasheet "
	     "DRAM bandwidth when none was measured, or of the FP32 peak for compute-bound kernels. "
	     "Incorrect kernels are not timed.");
}

static void numbers_value(char *s, size_t n, json_t *v)
{
	if (json_is_string(v))
		snprintf(s, n, "%s", json_string_value(v));
	else if (json_is_number(v))
		snprintf(s, n, "%.4g", json_number_value(v));
	else
		snprintf(s, n, "n/a");
}

/* The numbers of kb_diff_numbers: Δ time, bandwidth, registers ... */
static void section_numbers(const report *R, kb_buf *o, const row *a, const row *b)
{
	json_t *d = kb_diff_numbers(a->res, b->res), *rw;
	static const char *heads[5] = {"Metric", NULL, NULL, "Δ", "Δ %"};
	const char *hs[5] = {heads[0], name_of(a), name_of(b), heads[3], heads[4]};
	size_t i;
	trow t;
	if (!d || !json_array_size(json_object_get(d, "rows"))) {
		json_decref(d);
		return;
	}
	table_begin(R, o, hs, "lrrrr", true);
	json_array_foreach(json_object_get(d, "rows"), i, rw) {
		memset(&t, 0, sizeof t);
		snprintf(t.text[0], sizeof t.text[0], "%s", str(rw, "name"));
		numbers_value(t.text[1], sizeof t.text[1], json_object_get(rw, "a"));
		numbers_value(t.text[2], sizeof t.text[2], json_object_get(rw, "b"));
		numbers_value(t.text[3], sizeof t.text[3], json_object_get(rw, "delta"));
		numbers_value(t.text[4], sizeof t.text[4], json_object_get(rw, "delta_pct"));
		table_row(R, o, &t, "lrrrr");
	}
	table_end(R, o);
	if (str(d, "verdict")[0]) {
		char *s = kb_xasprintf("Verdict: %s%s%s", str(d, "verdict"), str(d, "why")[0] ? " — " : "",
				       str(d, "why"));
		para(R, o, true, s);
		free(s);
	}
	json_decref(d);
}

static void code_block(const report *R, kb_buf *o, const char *text)
{
	if (R->o->html)
		html_diff(o, text);
	else
		md_code(o, text, "diff");
}

static void subheading(const report *R, kb_buf *o, const char *text)
{
	if (R->o->html) {
		kb_buf_cat(o, "<h3>");
		html(o, text);
		kb_buf_cat(o, "</h3>\n");
	} else {
		kb_buf_catf(o, "### %s\n\n", text);
	}
}

static void source_diff(const report *R, kb_buf *o, int a, int b, char *const *src,
			const size_t *lens)
{
	const char *sa = src ? src[a] : NULL, *sb = src ? src[b] : NULL;
	if (!sa || !sb) {
		para(R, o, true, "The sources of these variants were not available.");
		return;
	}
	const char *base = R->file ? kb_basename(R->file) : "kernel";
	char *la = kb_xasprintf("%s/%s", name_of(&R->r[a]), base);
	char *lb = kb_xasprintf("%s/%s", name_of(&R->r[b]), base);
	kb_buf d = KB_BUF_INIT;
	kb_err err = {0};
	int rc = kb_diff_text(sa, lens ? lens[a] : strlen(sa), sb, lens ? lens[b] : strlen(sb), la, lb,
			      3, &d, &err);
	if (rc < 0) {
		char *s = kb_xasprintf("No source diff: %s", err.msg);
		para(R, o, true, s);
		free(s);
	} else if (rc == 0 || !d.len) {
		para(R, o, true, "The sources are identical: the change is in the build (defines, "
		     "architecture) or in the inputs.");
	} else {
		code_block(R, o, d.s);
	}
	kb_buf_free(&d);
	free(lb);
	free(la);
}

static void section_change(const report *R, kb_buf *o, char *const *src, const size_t *lens)
{
	if (R->best < 0 || R->first < 0 || R->best == R->first)
		return;
	const row *a = &R->r[R->first], *b = &R->r[R->best];
	char *h = kb_xasprintf("Winning change: %s → %s", name_of(a), name_of(b));
	heading(R, o, h);
	free(h);
	if (b->v->message && b->v->message[0]) {
		char *m = kb_xstrdup(b->v->message);
		m[strcspn(m, "\n")] = '\0';
		char *s = kb_xasprintf("%s: “%s”", name_of(b), m);
		para(R, o, false, s);
		free(s);
		free(m);
	}
	section_numbers(R, o, a, b);
	subheading(R, o, "Source");
	source_diff(R, o, R->first, R->best, src, lens);
	if (R->o->sass_diff && R->o->sass_diff[0]) {
		subheading(R, o, "SASS (normalised, excerpt)");
		code_block(R, o, R->o->sass_diff);
	}
}

/* Variants with a result that the chart shows as text only. */
static void chart_notes(const report *R, kb_buf *o)
{
	kb_buf s = KB_BUF_INIT;
	for (int i = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		if (r->res && !r->timed)
			kb_buf_catf(&s, "%s%s (%s, not timed)", s.len ? "; " : "", name_of(r), r->verdict);
		else if (r->timed && !r->has_flops && R->nflops)
			kb_buf_catf(&s, "%s%s (no FLOP count: bandwidth only)", s.len ? "; " : "",
				    name_of(r));
	}
	if (s.len) {
		char *t = kb_xasprintf("Not on the roofline: %s.", s.s);
		para(R, o, true, t);
		free(t);
	}
	kb_buf_free(&s);
}

static void section_chart(const report *R, kb_buf *o, kb_buf *svg)
{
	heading(R, o, R->nflops ? "Roofline and bandwidth" : "Bandwidth");
	if (!R->nrun) {
		para(R, o, true, "No variant has been run yet.");
		return;
	}
	if (R->o->html) {
		kb_buf_cat(o, "<figure class=\"chart\">\n");
		svg_render(R, o, false);
		kb_buf_cat(o, "</figure>\n");
	} else {
		const char *name = R->o->svg_name ? R->o->svg_name : "roofline.svg";
		kb_buf_cat(o, "![Roofline and achieved bandwidth per variant](");
		md_cell(o, name);
		kb_buf_cat(o, ")\n\n");
	}
	if (svg)
		svg_render(R, svg, true);
	chart_notes(R, o);
}

static void evidence_row(const report *R, const row *r, const evidence *e, trow *t)
{
	memset(t, 0, sizeof *t);
	snprintf(t->text[0], sizeof t->text[0], "%s", name_of(r));
	snprintf(t->text[1], sizeof t->text[1], "%s", r->verdict);
	t->cls[1] = badge(r->verdict);
	t->strong[0] = r == &R->r[R->best >= 0 ? R->best : 0] && R->best >= 0;
	if (!e->trials) {
		snprintf(t->text[2], sizeof t->text[2], r->res ? "no check" : "not run");
		return;
	}
	snprintf(t->text[2], sizeof t->text[2], "%d/%d", e->passed, e->trials);
	snprintf(t->text[3], sizeof t->text[3], "%s", e->seeds);
	fmt_num(t->text[4], sizeof t->text[4], e->abs);
	fmt_num(t->text[5], sizeof t->text[5], e->rel);
	fmt_num(t->text[6], sizeof t->text[6], e->l2);
	snprintf(t->text[7], sizeof t->text[7], "rtol %g, atol %g", e->rtol, e->atol);
	if (!r->correct && !e->bad[0])
		t->row_cls = "fail";
}

static void evidence_detail(const report *R, kb_buf *o, const row *r, const char *what)
{
	if (R->o->html) {
		kb_buf_cat(o, "<div class=\"failnote\"><strong>");
		html(o, name_of(r));
		kb_buf_cat(o, " · ");
		html(o, r->verdict);
		kb_buf_cat(o, "</strong> <span>");
		html(o, what);
		kb_buf_cat(o, "</span></div>\n");
	} else {
		kb_buf_catf(o, "- **%s** %s: ", name_of(r), r->verdict);
		md_cell(o, what);
		kb_buf_catc(o, '\n');
	}
}

static void section_correctness(const report *R, kb_buf *o)
{
	static const char *heads[] = {"Variant", "Verdict", "Trials passed", "Seeds", "Max abs err",
				      "Max rel err", "Rel L2", "Tolerance"};
	const char *align = "llrlrrrl";
	evidence *e = kb_xcalloc((size_t)R->n + 1, sizeof *e);
	trow t;
	bool details = false;
	heading(R, o, "Correctness");
	table_begin(R, o, heads, align, false);
	for (int i = 0; i < R->n; i++) {
		read_evidence(json_object_get(R->r[i].res, "check"), &e[i]);
		evidence_row(R, &R->r[i], &e[i], &t);
		table_row(R, o, &t, align);
	}
	table_end(R, o);
	for (int i = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		const char *why = e[i].bad[0] ? e[i].bad : str(r->res, "message")[0]
				  ? str(r->res, "message")
				  : str(json_object_get(r->res, "roofline"), "impossible_why");
		if (!r->res || r->correct || !why[0])
			continue;
		if (!details && !R->o->html)
			kb_buf_cat(o, "Where the incorrect variants first went wrong:\n\n");
		details = true;
		evidence_detail(R, o, r, why);
	}
	if (details && !R->o->html)
		kb_buf_catc(o, '\n');
	free(e);
}

/* ====================================================================== */
/* Summary                                                                  */
/* ====================================================================== */

/* "4: 2 correct, 1 incorrect, 1 compiled only". */
static char *variant_counts(const report *R)
{
	int ok = 0, bad = 0, failed = 0, compiled = 0;
	for (int i = 0; i < R->n; i++) {
		const row *r = &R->r[i];
		if (r->correct)
			ok++;
		else if (!r->res)
			compiled++;
		else if (!strcmp(r->verdict, "INCORRECT") || !strcmp(r->verdict, "IMPOSSIBLE"))
			bad++;
		else
			failed++;
	}
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "%d correct", ok);
	if (bad)
		kb_buf_catf(&b, ", %d incorrect", bad);
	if (failed)
		kb_buf_catf(&b, ", %d failed", failed);
	if (compiled)
		kb_buf_catf(&b, ", %d compiled only", compiled);
	return kb_buf_detach(&b);
}

/* One sentence on the best variant, or why there is none. */
static char *best_sentence(const report *R)
{
	if (R->best < 0)
		return kb_xstrdup("No variant is correct and timed yet: there is no best variant.");
	const row *b = &R->r[R->best], *f = &R->r[R->first];
	char tb[32], tf[32];
	fmt_us(tb, sizeof tb, b->median);
	fmt_us(tf, sizeof tf, f->median);
	if (R->best == R->first)
		return kb_xasprintf("%s (%s) is the first correct variant and still the fastest.",
				    name_of(b), tb);
	return kb_xasprintf("%s%s%s%s: %s vs %s for %s, the first correct variant: %.2f× faster.",
			    name_of(b), b->v->label ? " “" : "", b->v->label ? b->v->label : "",
			    b->v->label ? "”" : "", tb, tf, name_of(f), f->median / b->median);
}

static void md_summary(const report *R, kb_buf *o, const char *title)
{
	char *counts = variant_counts(R), *best = best_sentence(R);
	kb_buf_cat(o, "# ");
	md_cell(o, title);
	kb_buf_cat(o, "\n\n- **Kernel** `");
	md_cell(o, R->kernel ? R->kernel : "?");
	kb_buf_cat(o, "`");
	if (R->file) {
		kb_buf_cat(o, " in `");
		md_cell(o, R->file);
		kb_buf_cat(o, "`");
	}
	kb_buf_cat(o, "\n- **GPU** ");
	md_cell(o, R->gpu && R->gpu[0] ? R->gpu : "n/a (no variant was run)");
	if (R->mixed_gpu)
		kb_buf_cat(o, " (variants ran on different GPUs: compare with care)");
	if (R->o->session_id) {
		kb_buf_cat(o, "\n- **Session** `");
		md_cell(o, R->o->session_id);
		kb_buf_cat(o, "`");
	}
	kb_buf_catf(o, "\n- **Variants** %d: %s\n- **Best** ", R->n, counts);
	md_cell(o, best);
	kb_buf_cat(o, "\n\n");
	free(best);
	free(counts);
}

static void html_card(kb_buf *o, const char *label, const char *big, const char *small, bool accent)
{
	kb_buf_catf(o, "<div class=\"card%s\"><div class=\"k\">", accent ? " accent" : "");
	html(o, label);
	kb_buf_cat(o, "</div><div class=\"v\">");
	html(o, big);
	kb_buf_cat(o, "</div><div class=\"s\">");
	html(o, small);
	kb_buf_cat(o, "</div></div>\n");
}

static void html_cards(const report *R, kb_buf *o)
{
	char big[64], small[160];
	char *counts = variant_counts(R);
	kb_buf_cat(o, "<section class=\"cards\">\n");
	if (R->best >= 0) {
		const row *b = &R->r[R->best], *f = &R->r[R->first];
		html_card(o, "Best variant", name_of(b), b->v->label ? b->v->label : "", true);
		snprintf(big, sizeof big, "%.2f×", f->median / b->median);
		snprintf(small, sizeof small, "over %s, the first correct variant", name_of(f));
		html_card(o, "Speed-up", big, small, true);
		fmt_us(big, sizeof big, b->median);
		fmt_us(small, sizeof small, f->median);
		char *s = kb_xasprintf("median; %s: %s", name_of(f), small);
		html_card(o, "Time", big, s, false);
		free(s);
		snprintf(big, sizeof big, b->gbps >= 0 ? "%.0f GB/s" : "n/a", b->gbps);
		if (b->pct >= 0)
			snprintf(small, sizeof small, "%.1f%% of %s", b->pct, b->basis);
		else
			snprintf(small, sizeof small, "no ceiling known");
		html_card(o, "Bandwidth", big, small, false);
	} else {
		html_card(o, "Best variant", "none", "no variant is correct and timed yet", false);
	}
	snprintf(big, sizeof big, "%d", R->n);
	html_card(o, "Variants", big, counts, false);
	kb_buf_cat(o, "</section>\n");
	free(counts);
}

static void html_summary(const report *R, kb_buf *o, const char *title)
{
	char *best = best_sentence(R);
	kb_buf_cat(o, "<header>\n<div class=\"eyebrow\">kbench report</div>\n<h1>");
	html(o, title);
	kb_buf_cat(o, "</h1>\n<p class=\"meta\"><span><b>Kernel</b> <code>");
	html(o, R->kernel ? R->kernel : "?");
	kb_buf_cat(o, "</code></span>");
	if (R->file) {
		kb_buf_cat(o, "<span><b>File</b> <code>");
		html(o, R->file);
		kb_buf_cat(o, "</code></span>");
	}
	kb_buf_cat(o, "<span><b>GPU</b> ");
	html(o, R->gpu && R->gpu[0] ? R->gpu : "n/a");
	kb_buf_cat(o, R->mixed_gpu ? " (mixed: compare with care)</span>" : "</span>");
	if (R->o->session_id) {
		kb_buf_cat(o, "<span><b>Session</b> <code>");
		html(o, R->o->session_id);
		kb_buf_cat(o, "</code></span>");
	}
	kb_buf_cat(o, "</p>\n</header>\n");
	html_cards(R, o);
	kb_buf_cat(o, "<p class=\"lead\">");
	html(o, best);
	kb_buf_cat(o, "</p>\n");
	free(best);
}

/* ====================================================================== */
/* The page                                                                 */
/* ====================================================================== */

static const char CSS[] =
	":root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--ok:#1a7f37;"
	"--okbg:#dafbe1;--bad:#cf222e;--badbg:#ffebe9;--blue:#0969da}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:#fff;color:var(--fg);font:14px/1.55 system-ui,-apple-system,"
	"'Segoe UI',Roboto,Helvetica,Arial,sans-serif}\n"
	"main{max-width:1180px;margin:0 auto;padding:32px 32px 48px}\n"
	"code,pre,td.num{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',"
	"'Liberation Mono',monospace}\n"
	"code{font-size:12.5px;background:var(--soft);padding:1px 5px;border-radius:4px}\n"
	"header{border-bottom:1px solid var(--line);padding-bottom:14px;margin-bottom:20px}\n"
	".eyebrow{color:var(--muted);font-size:12px;letter-spacing:.08em;text-transform:uppercase}\n"
	"h1{font-size:26px;margin:4px 0 8px;font-weight:650}\n"
	"h2{font-size:18px;margin:34px 0 12px;padding-bottom:6px;border-bottom:1px solid var(--line)}\n"
	"h3{font-size:14px;margin:20px 0 8px;color:var(--muted);text-transform:uppercase;"
	"letter-spacing:.05em}\n"
	".meta{margin:0;color:var(--muted);display:flex;flex-wrap:wrap;gap:6px 22px}\n"
	".meta b{color:var(--fg);font-weight:600;margin-right:4px}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px}\n"
	".card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fff}\n"
	".card.accent{border-color:#4ac26b;background:#f3fcf5}\n"
	".card .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}\n"
	".card .v{font-size:24px;font-weight:650;margin:2px 0;font-variant-numeric:tabular-nums}\n"
	".card.accent .v{color:var(--ok)}\n"
	".card .s{font-size:12.5px;color:var(--muted)}\n"
	".lead{font-size:15px;margin:16px 0 0}\n"
	".note{color:var(--muted);font-size:12.5px;margin:8px 0}\n"
	".scroll{overflow-x:auto}\n"
	".narrow table{width:auto;min-width:560px}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px}\n"
	"th,td{padding:7px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}\n"
	"th{background:var(--soft);font-weight:600;color:var(--muted);font-size:12px}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	"td.num{font-size:12.5px}\n"
	"tr.best td{background:#f3fcf5}\n"
	"tr.fail td{background:#fff8f7}\n"
	".badge{display:inline-block;font-size:11px;font-weight:600;padding:1px 8px;border-radius:10px;"
	"letter-spacing:.03em}\n"
	".b-ok{color:var(--ok);background:var(--okbg)}\n"
	".b-bad{color:var(--bad);background:var(--badbg)}\n"
	".b-muted{color:var(--muted);background:var(--soft);border:1px solid var(--line)}\n"
	".b-best{color:#fff;background:var(--ok)}\n"
	"pre.diff{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:8px 0;"
	"font-size:12.5px;line-height:1.5;overflow-x:auto;margin:8px 0}\n"
	"pre.diff span{display:block;padding:0 14px;white-space:pre;tab-size:4}\n"
	"pre.diff .a{background:var(--okbg)}\n"
	"pre.diff .d{background:var(--badbg)}\n"
	"pre.diff .h{color:#0550ae;background:#ddf4ff}\n"
	"pre.diff .m{color:var(--muted);font-weight:600}\n"
	"figure.chart{margin:8px 0;border:1px solid var(--line);border-radius:8px;padding:8px;"
	"overflow-x:auto}\n"
	"figure.chart svg{display:block;max-width:100%;height:auto}\n"
	".failnote{border-left:3px solid var(--bad);background:var(--badbg);padding:8px 12px;margin:10px 0;"
	"border-radius:0 6px 6px 0;font-size:13px}\n"
	".failnote span{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}\n"
	"footer{margin-top:40px;padding-top:12px;border-top:1px solid var(--line);color:var(--muted);"
	"font-size:12px}\n";

static void page_begin(const report *R, kb_buf *o, const char *title)
{
	if (!R->o->html) {
		md_summary(R, o, title);
		return;
	}
	kb_buf_cat(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	html(o, title);
	kb_buf_catf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", CSS);
	html_summary(R, o, title);
}

static void page_end(const report *R, kb_buf *o)
{
	const char *f = R->o->footer;
	if (!R->o->html) {
		kb_buf_cat(o, "---\n\n_Generated by kbench");
		if (f) {
			kb_buf_cat(o, " · ");
			md_cell(o, f);
		}
		kb_buf_cat(o, "_\n");
		return;
	}
	kb_buf_cat(o, "<footer>Generated by kbench");
	if (f) {
		kb_buf_cat(o, " · ");
		html(o, f);
	}
	kb_buf_cat(o, "</footer>\n</main>\n</body>\n</html>\n");
}

int kb_app_report(const kb_app_report_opts *o, const kb_variant *vs, int n, char *const *sources,
		  const size_t *lens, kb_buf *out, kb_buf *svg_out, kb_err *err)
{
	if (!o || !out || n < 0 || (n > 0 && !vs))
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "report: no options, output or variants");
	report R = {.o = o, .n = n, .first = -1, .best = -1};
	R.r = kb_xcalloc(n > 0 ? (size_t)n : 1, sizeof *R.r);
	for (int i = 0; i < n; i++)
		read_row(&vs[i], &R.r[i]);
	read_report(&R);
	char *title = o->title ? kb_xstrdup(o->title)
			       : kb_xasprintf("kbench report: %s", R.kernel ? R.kernel : "kernel");
	page_begin(&R, out, title);
	section_variants(&R, out);
	section_change(&R, out, sources, lens);
	section_chart(&R, out, svg_out);
	section_correctness(&R, out);
	page_end(&R, out);
	free(title);
	free(R.r);
	return 0;
}
