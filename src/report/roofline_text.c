/*
 * roofline_text.c - the roofline in a terminal (the TUI's Roofline pane,
 * through kb_app_roofline in variants.c): a log-log plot drawn with braille
 * cells (2x4 dots each, as btop and plotext draw), so a roof is a thin
 * line and the ridge a corner; each ceiling labelled at its line; one mark
 * per timed variant with a FLOP count (the current one a bold diamond);
 * y labels on the left and x labels below, then a legend of the ceilings
 * and of the marks, each with its distance to the roof.
 *
 * It owns the text only: the model and the decades it spans are
 * report_model.c's (the SVG chart, report_svg.c, spans the same).
 * Invariants: every plot row is max(width, 30) columns (8 of labels, the
 * rest cells), each cell one column of UTF-8 (the current mark's SGR
 * escapes take none); marks go on top of labels, labels on top of the
 * roofs, a mark whose cell another holds to the next free one on its
 * right; past the 29th mark every point shares the last one; with no FLOP
 * count or no FP32 peak there is no plot, only a line saying why (and 1
 * returned).
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================== */
/* The canvas: braille dots under text cells                                */
/* ====================================================================== */

typedef struct {
	int rows, cols;
	unsigned char *dots;    /* per cell: the braille dot bits */
	const char **cell;      /* per cell: text drawn instead of the dots, or NULL */
	double lx0, lx1, ly0, ly1;
} grid;

/* The dot column (0 .. 2*cols-1) of intensity v, the dot row (0 at the
 * top .. 4*rows-1) of FLOP/s v. */
static int dot_x(const grid *g, double v)
{
	return (int)floor((log10(v) - g->lx0) / (g->lx1 - g->lx0) * 2 * g->cols);
}

static int dot_y(const grid *g, double v)
{
	return 4 * g->rows - 1 - (int)floor((log10(v) - g->ly0) / (g->ly1 - g->ly0) * 4 * g->rows);
}

static int grid_col(const grid *g, double v)
{
	return dot_x(g, v) / 2;
}

static int grid_row(const grid *g, double v)
{
	int y = dot_y(g, v);
	return y < 0 ? -1 : y / 4;
}

static void dot(grid *g, int x, int y)
{
	static const unsigned char bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
	if (x < 0 || y < 0 || x >= 2 * g->cols || y >= 4 * g->rows)
		return;
	g->dots[(y / 4) * g->cols + x / 2] |= bit[y % 4][x % 2];
}

static void grid_put(grid *g, int y, int col, const char *c)
{
	if (y >= 0 && y < g->rows && col >= 0 && col < g->cols)
		g->cell[y * g->cols + col] = c;
}

/* A roof min(bw * I, peak) as a line of dots, each dot column joined to
 * the last so steep stretches stay one line; every `step`-th column only
 * (2: dotted). */
static void grid_roof(grid *g, double bw, double peak, int step)
{
	int last = -1;
	for (int x = 0; x < 2 * g->cols; x++) {
		double i = pow(10, g->lx0 + (g->lx1 - g->lx0) * (x + 0.5) / (2 * g->cols));
		int y = dot_y(g, fmin(bw * i, peak));
		if (x % step == 0)
			for (int k = last < 0 || step > 1 ? y : last; k >= y; k--)
				dot(g, x, k);
		last = y;
	}
}

/* Text over the dots, from cell (y, col) on, clipped at the right edge;
 * its bytes are one-column characters (ASCII). */
static void grid_label(grid *g, int y, int col, const char *text, char *store)
{
	for (int i = 0; text[i] && col + i < g->cols; i++) {
		store[2 * i] = text[i], store[2 * i + 1] = '\0';
		grid_put(g, y, col + i, &store[2 * i]);
	}
}

/* ====================================================================== */
/* The plot and its legend                                                  */
/* ====================================================================== */

static const char *const POINT_MARKS[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9",
					  "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
					  "k", "l", "m", "n", "o", "p", "q", "r", "s", "t"};
#define NMARKS (int)(sizeof POINT_MARKS / sizeof *POINT_MARKS)

/* The highest FLOP/s the roofs allow at intensity ai. */
static double roof_at(const kb_app__model *R, double ai)
{
	double peak = R->peak_TFLOPs * 1e12, bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	return bw > 0 ? fmin(bw * ai, peak) : peak;
}

static void text_legend(const kb_app__model *R, kb_buf *out, double bw, const int *marks, int current)
{
	if (bw > 0)
		kb_buf_catf(out, "  \u2571 %s %.0f GB/s", R->copy_GBps > 0 ? "measured copy" : "DRAM datasheet",
			    bw / 1e9);
	if (R->copy_GBps > 0 && R->dram_GBps > R->copy_GBps * 1.01)
		kb_buf_catf(out, "   \u2508 DRAM datasheet %.0f GB/s", R->dram_GBps);
	kb_buf_catf(out, "\n  \u2500 FP32 peak %.1f TFLOP/s", R->peak_TFLOPs);
	if (bw > 0)
		kb_buf_catf(out, "   ridge at %.3g FLOP/B", R->peak_TFLOPs * 1e12 / bw);
	kb_buf_cat(out, "\n\n");
	for (int i = 0; i < R->n; i++) {
		const kb_app__row *r = &R->r[i];
		if (marks[i] < 0)
			continue;
		kb_buf_catf(out, "  %s %-10s %.3g FLOP/B  %.3g TFLOP/s  %.2f us  %.0f%% of the roof  %s%s\n",
			    i == current ? "\u25c6" : POINT_MARKS[marks[i]], kb_app__name_of(r), r->ai,
			    r->flops_s / 1e12, r->median, 100 * r->flops_s / roof_at(R, r->ai),
			    kb_verdict_name(r->impossible ? KB_VERDICT_IMPOSSIBLE : r->verdict),
			    i == R->best ? "  (best)" : "");
	}
}

/* Each ceiling's name at its line: the peak's above its flat stretch at
 * the right, the bandwidth's under its slope a sixth of the way in. */
static void roof_labels(const kb_app__model *R, grid *g, double bw, char *store, size_t n)
{
	char text[64];
	snprintf(text, sizeof text, "%s %.1f TFLOP/s", R->peak_name ? R->peak_name : "FP32 peak",
		 R->peak_TFLOPs);
	int row = grid_row(g, R->peak_TFLOPs * 1e12), len = (int)strlen(text);
	if (2 * (size_t)len + 2 <= n / 2)
		grid_label(g, row > 0 ? row - 1 : row + 1, g->cols - len, text, store);
	if (bw <= 0)
		return;
	int col = g->cols / 6;
	double i = pow(10, g->lx0 + (g->lx1 - g->lx0) * (col + 0.5) / g->cols);
	snprintf(text, sizeof text, "%s %.0f GB/s", R->copy_GBps > 0 ? "copy" : "DRAM", bw / 1e9);
	if (bw * i < R->peak_TFLOPs * 1e12)
		grid_label(g, grid_row(g, bw * i) + 1, col + 1, text, store + n / 2);
}

/* The plot, y labels on the left (7 columns), x labels below. */
static void text_plot(const kb_app__model *R, int width, int height, int current, kb_buf *out,
		      int *marks)
{
	enum { LEFT = 8 };
	grid g = {.rows = height, .cols = width - LEFT};
	g.dots = kb_xcalloc((size_t)g.rows * (size_t)g.cols, 1);
	g.cell = kb_xcalloc((size_t)g.rows * (size_t)g.cols, sizeof *g.cell);
	char labels[256];
	kb_app__roof_range(R, &g.lx0, &g.lx1, &g.ly0, &g.ly1);
	double peak = R->peak_TFLOPs * 1e12, bw = (R->copy_GBps > 0 ? R->copy_GBps : R->dram_GBps) * 1e9;
	if (peak > 0 && bw > 0)
		grid_roof(&g, bw, peak, 1);
	if (peak > 0 && R->copy_GBps > 0 && R->dram_GBps > R->copy_GBps * 1.01)
		grid_roof(&g, R->dram_GBps * 1e9, peak, 2);
	if (peak > 0)
		roof_labels(R, &g, bw, labels, sizeof labels);
	/* the current mark first, in its place; a mark whose cell another
	 * holds goes to the next free cell on its right (points of one
	 * intensity and close times stay apart) */
	bool *taken = kb_xcalloc((size_t)g.rows * (size_t)g.cols, sizeof *taken);
	for (int i = 0, k = 0; i < R->n; i++) {
		marks[i] = -1;
		if (R->r[i].timed && R->r[i].has_flops)
			marks[i] = k < NMARKS ? k : NMARKS - 1, k++;
	}
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < R->n; i++) {
			const kb_app__row *r = &R->r[i];
			if (marks[i] < 0 || (i == current) != (pass == 0))
				continue;
			int y = grid_row(&g, r->flops_s), c = grid_col(&g, r->ai);
			if (y < 0 || y >= g.rows)
				continue;
			while (c >= 0 && c < g.cols - 1 && taken[y * g.cols + c])
				c++;
			if (c >= 0 && c < g.cols)
				taken[y * g.cols + c] = true;
			grid_put(&g, y, c, i == current ? "\033[1;32m\u25c6\033[0m" : POINT_MARKS[marks[i]]);
		}
	free(taken);
	for (int y = 0; y < g.rows; y++) {
		/* a label on the row each decade of FLOP/s falls in */
		char label[16] = "";
		for (double d = ceil(g.ly0); d <= g.ly1; d++)
			if (grid_row(&g, pow(10, d) * 1.0001) == y)
				kb_app__fmt_si(label, sizeof label, pow(10, d));
		kb_buf_catf(out, "%6s \u2502", label);
		for (int c = 0; c < g.cols; c++) {
			const char *t = g.cell[y * g.cols + c];
			unsigned char d = g.dots[y * g.cols + c];
			char b[4] = {(char)0xE2, (char)(0xA0 | d >> 6), (char)(0x80 | (d & 0x3F)), 0};
			kb_buf_cat(out, t ? t : d ? b : " ");
		}
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
	free(g.dots);
}

int kb_app__roofline_text(const kb_variant *vs, int n, const char *current, int width, int height,
			  kb_buf *out)
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
		int *marks = kb_xcalloc((size_t)n, sizeof *marks), cur = -1;
		for (int i = 0; current && i < R.n; i++)
			if (R.r[i].v && !strcmp(R.r[i].v->name, current))
				cur = i;
		kb_buf_catf(out, "Roofline%s%s\n(log-log; one point per timed variant%s)\n\n",
			    R.gpu && R.gpu[0] ? ": " : "", R.gpu ? R.gpu : "",
			    cur >= 0 ? ", \u25c6 the current one" : "");
		text_plot(&R, width < 30 ? 30 : width, height < 6 ? 6 : height, cur, out, marks);
		text_legend(&R, out, (R.copy_GBps > 0 ? R.copy_GBps : R.dram_GBps) * 1e9, marks, cur);
		free(marks);
	}
	kb_app__model_free(&R);
	return rc;
}

int kb_app_roofline_text(const kb_variant *vs, int n, int width, int height, kb_buf *out)
{
	return kb_app__roofline_text(vs, n, NULL, width, height, out);
}
