/*
 * report_svg.c - the report's chart as SVG (architecture §6): a log-log
 * roofline (the memory roofs, measured copy and datasheet DRAM, up to the
 * FP32 peak, one point per timed variant with a FLOP count) beside a bar
 * of achieved bandwidth per variant with a result, against the ceiling.
 * The HTML page inlines it; the Markdown page links it as a file.
 *
 * It owns the drawing only: the model (rows, ceilings, the roofline's
 * decades) is report_model.c's, and the terminal's roofline is
 * roofline_text.c's over the same decades.  Invariants: a pure function of
 * the model; every variant with a result has a bar (a "not timed" one says
 * so); the best variant is green, incorrect or impossible ones red; all
 * text is escaped (kb_app__html).
 */
#include "report.h"

#include <math.h>
#include <stdio.h>

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
	kb_app__html(o, text);
	kb_buf_cat(o, "</text>\n");
}

/* ====================================================================== */
/* The roofline                                                             */
/* ====================================================================== */

static void roof_axes(const kb_app__model *R, axes *a, double ox, double oy, double w,
		      double h)
{
	*a = (axes){ox + 70, oy + 56, w - 94, h - 112, 0, 0, 0, 0};
	kb_app__roof_range(R, &a->lx0, &a->lx1, &a->ly0, &a->ly1);
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
		kb_app__fmt_si(t, sizeof t, pow(10, d));
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

static void roof_lines(const kb_app__model *R, kb_buf *o, const axes *a)
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
	snprintf(t, sizeof t, "%s %.1f TFLOP/s", R->peak_name ? R->peak_name : "FP32 peak", R->peak_TFLOPs);
	svg_text(o, a->x0 + a->w - 6, ax_y(a, peak) - 7, "end", "font-size=\"12\" fill=\"" C_TEXT "\"",
		 t);
	if (bw > 0) {
		snprintf(t, sizeof t, "ridge at %.3g FLOP/byte", ridge);
		svg_text(o, a->x0 + 46, a->y0 + 20 + 19.0 * entry, "start",
			 "font-size=\"12\" fill=\"" C_MUTED "\"", t);
	}
}

static void roof_points(const kb_app__model *R, kb_buf *o, const axes *a)
{
	for (int i = 0, k = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		if (!r->timed || !r->has_flops)
			continue;
		bool best = i == R->best;
		const char *c = best ? C_BEST : r->impossible || !r->correct ? C_BAD : C_POINT;
		double x = ax_x(a, r->ai), y = ax_y(a, r->flops_s);
		kb_buf_catf(o, "<g class=\"pt\"><title>%s: %.3g FLOP/B, %.3g TFLOP/s, %.2f us</title>"
			    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\" stroke=\"#fff\" "
			    "stroke-width=\"1.5\"/>", kb_app__name_of(r), r->ai, r->flops_s / 1e12, r->median,
			    x, y, best ? 6 : 5, c);
		char t[64];
		snprintf(t, sizeof t, "%s%s", kb_app__name_of(r), best ? " (best)" : "");
		svg_text(o, x + 10, y + 4 + (k++ % 2 ? 10 : -2), "start",
			 best ? "font-size=\"12.5\" font-weight=\"600\" fill=\"" C_BEST "\""
			      : "font-size=\"12.5\" fill=\"" C_TEXT "\"", t);
		kb_buf_cat(o, "</g>\n");
	}
}

static void svg_roofline(const kb_app__model *R, kb_buf *o, double ox, double oy, double w,
			 double h)
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

/* ====================================================================== */
/* Achieved bandwidth against the ceiling                                   */
/* ====================================================================== */

static double bars_ceiling(const kb_app__model *R, const char **what)
{
	*what = R->copy_GBps > 0 ? "measured copy" : "DRAM spec";
	return R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps;
}

static double bars_height(const kb_app__model *R)
{
	return 84 + 34.0 * R->nrun;
}

static void bar_row(const kb_app__row *r, bool best, kb_buf *o, double x0, double tw, double y,
		    double scale, double ceil_bw)
{
	char t[96];
	svg_text(o, x0 - 10, y + 15, "end", best ? "font-size=\"12.5\" font-weight=\"600\" fill=\"" C_BEST "\""
						 : "font-size=\"12.5\" fill=\"" C_TEXT "\"",
		 kb_app__name_of(r));
	kb_buf_catf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"20\" rx=\"3\" "
		    "fill=\"#f6f8fa\"/>\n", x0, y + 1, tw);
	if (!r->timed || r->gbps < 0) {
		snprintf(t, sizeof t, "%s, not timed", kb_verdict_name(r->verdict));
		svg_text(o, x0 + 8, y + 15, "start", "font-size=\"12\" font-style=\"italic\" fill=\""
			 C_BAD "\"", t);
		return;
	}
	double bw = fmin(r->gbps * scale, tw);
	const char *c = best ? C_BEST : r->impossible || !r->correct ? C_BAD : C_POINT;
	kb_buf_catf(o, "<g class=\"bar\"><title>%s: %.0f GB/s</title><rect x=\"%.1f\" y=\"%.1f\" "
		    "width=\"%.1f\" height=\"20\" rx=\"3\" fill=\"%s\"/></g>\n", kb_app__name_of(r),
		    r->gbps, x0, y + 1, bw, c);
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

static void svg_bars(const kb_app__model *R, kb_buf *o, double ox, double oy, double w)
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

/* ====================================================================== */
/* The chart                                                                */
/* ====================================================================== */

/* An inline SVG in HTML needs no XML namespace, and the page carries no URL. */
void kb_app__svg_render(const kb_app__model *R, kb_buf *o, bool standalone)
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
