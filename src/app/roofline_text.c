/*
 * roofline_text.c - the roofline in a terminal (the TUI's Roofline pane,
 * through kb_app_roofline in sessions.c): a log-log plot of text cells,
 * the memory roofs as slopes up to the FP32 peak, one numbered mark per
 * timed variant with a FLOP count, y labels on the left and x labels below,
 * then a legend of the ceilings and of the marks.
 *
 * It owns the text only: the model and the decades it spans are
 * report_model.c's (the SVG chart, report_svg.c, spans the same).
 * Invariants: every plot row is max(width, 30) columns (8 of labels, the
 * rest cells), each cell one column of UTF-8; marks go on top of the roofs
 * (a roof draws only on blank cells); past the 29th mark every point shares
 * the last one; with no FLOP count or no FP32 peak there is no plot, only
 * a line saying why (and 1 returned).
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================== */
/* The grid                                                                 */
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

/* ====================================================================== */
/* The plot and its legend                                                  */
/* ====================================================================== */

static const char *const POINT_MARKS[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9",
					  "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
					  "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"};
#define NMARKS (int)(sizeof POINT_MARKS / sizeof *POINT_MARKS)

static void text_legend(const kb_app__model *R, kb_buf *out, double bw, const int *marks)
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
		const kb_app__row *r = &R->r[i];
		if (marks[i] < 0)
			continue;
		kb_buf_catf(out, "  %s %-10s %.3g FLOP/B  %.3g TFLOP/s  %.2f us  %s%s\n",
			    POINT_MARKS[marks[i]], kb_app__name_of(r), r->ai, r->flops_s / 1e12, r->median,
			    r->impossible ? "IMPOSSIBLE" : r->verdict, i == R->best ? "  (best)" : "");
	}
}

/* The plot, y labels on the left (7 columns), x labels below. */
static void text_plot(const kb_app__model *R, int width, int height, kb_buf *out, int *marks)
{
	enum { LEFT = 8 };
	grid g = {.rows = height, .cols = width - LEFT};
	g.cell = kb_xcalloc((size_t)g.rows * (size_t)g.cols, sizeof *g.cell);
	for (int i = 0; i < g.rows * g.cols; i++)
		g.cell[i] = " ";
	kb_app__roof_range(R, &g.lx0, &g.lx1, &g.ly0, &g.ly1);
	double peak = R->peak_TFLOPs * 1e12, bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	if (peak > 0 && bw > 0)
		grid_roof(&g, bw, peak, "\u2571");
	if (peak > 0 && R->copy_GBps > 0 && R->dram_GBps > R->copy_GBps * 1.01)
		grid_roof(&g, R->dram_GBps * 1e9, peak, "\u00b7");
	for (int i = 0, k = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
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
				kb_app__fmt_si(label, sizeof label, pow(10, d));
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
	kb_app__model R;
	kb_app__model_read(&R, &o, vs, n);
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
	kb_app__model_free(&R);
	return rc;
}
