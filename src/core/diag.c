/*
 * diag.c - diagnostics about places in users' files (spec lines, compiler
 * messages, later the tile DSL), collected in lists and rendered like a
 * compiler's: "file:line:col: error: msg", the source line, a caret.
 * The CLI and the TUI render the same list, so golden tests compare text.
 */
#include "kb.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kb_src_line(const char *src, int line)
{
	if (!src || line < 1)
		return NULL;
	const char *p = src;
	for (int l = 1; l < line; l++) {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	if (n && p[n - 1] == '\r')
		n--;
	return kb_xstrndup(p, n);
}

void kb_diag_add(kb_diags *d, kb_diag_level level, const char *file, const char *src,
		 int line, int col, int len, const char *fmt, ...)
{
	kb_diag *g = KB_PUSH(d->v, d->n, d->cap);
	g->level = level;
	g->file = kb_xstrdup(file ? file : "");
	g->line = line;
	g->col = col;
	g->len = len > 0 ? len : 1;
	g->src_line = kb_src_line(src, line);
	va_list ap;
	va_start(ap, fmt);
	g->msg = kb_xvasprintf(fmt, ap);
	va_end(ap);
}

int kb_diag_count(const kb_diags *d, kb_diag_level level)
{
	int n = 0;
	for (int i = 0; i < d->n; i++)
		n += d->v[i].level == level;
	return n;
}

static const char *level_name(kb_diag_level l)
{
	return l == KB_DIAG_ERROR ? "error" : l == KB_DIAG_WARNING ? "warning" : "note";
}

/* Writes the source line and a caret line under column col, gutter-aligned. */
static void render_excerpt(const kb_diag *g, kb_buf *out)
{
	int gutter = snprintf(NULL, 0, "%d", g->line);
	kb_buf_catf(out, " %d | ", g->line);
	/* Tabs become single spaces so the caret lines up in any terminal. */
	for (const char *p = g->src_line; *p; p++)
		kb_buf_catc(out, *p == '\t' ? ' ' : *p);
	kb_buf_catf(out, "\n %*s | ", gutter, "");
	if (g->col < 1)
		return (void)kb_buf_catc(out, '\n');
	for (int i = 1; i < g->col; i++)
		kb_buf_catc(out, ' ');
	kb_buf_catc(out, '^');
	for (int i = 1; i < g->len; i++)
		kb_buf_catc(out, '~');
	kb_buf_catc(out, '\n');
}

void kb_diag_render(const kb_diags *d, kb_buf *out, bool color)
{
	for (int i = 0; i < d->n; i++) {
		const kb_diag *g = &d->v[i];
		const char *on = "", *off = "";
		if (color) {
			on = g->level == KB_DIAG_ERROR ? "\033[1;31m"
			     : g->level == KB_DIAG_WARNING ? "\033[1;35m" : "\033[1;36m";
			off = "\033[0m";
		}
		kb_buf_cat(out, g->file);
		if (g->line > 0)
			kb_buf_catf(out, ":%d", g->line);
		if (g->line > 0 && g->col > 0)
			kb_buf_catf(out, ":%d", g->col);
		kb_buf_catf(out, ": %s%s:%s %s\n", on, level_name(g->level), off, g->msg);
		if (g->src_line)
			render_excerpt(g, out);
	}
}

static int cmp_diag(const void *a, const void *b)
{
	const kb_diag *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return 0;
}

void kb_diag_sort(kb_diags *d)
{
	/* Insertion sort: stable, and lists are short. */
	for (int i = 1; i < d->n; i++) {
		kb_diag t = d->v[i];
		int j = i - 1;
		while (j >= 0 && cmp_diag(&d->v[j], &t) > 0) {
			d->v[j + 1] = d->v[j];
			j--;
		}
		d->v[j + 1] = t;
	}
}

void kb_diags_free(kb_diags *d)
{
	for (int i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
		free(d->v[i].src_line);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->cap = 0;
}

int kb_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	if (na > KB_EDIT_MAX || nb > KB_EDIT_MAX)
		return INT_MAX;
	int row[KB_EDIT_MAX + 1]; /* row[j]: distance of a[0..i) and b[0..j) */
	for (size_t j = 0; j <= nb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= na; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= nb; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[nb];
}
