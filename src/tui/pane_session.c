/*
 * pane_session.c - the panes that read the session: Variants (a table of
 * the file's variants made for the pane's width, a sparkline of their
 * times, the selected variant whole) and Diff (two variants' sources and
 * numbers).  In a replay the session is the replayed one ($KBENCH_SESSION,
 * tui_replay.c) and the file the step's, named as the session records it
 * (it need not exist where the workbench runs).  Pure text in a kb_buf.
 *
 * Invariants: no table line is wider than the pane (columns are left out,
 * least useful first, and labels shortened with '~'), so none wraps; the
 * selected variant's line starts with '>'.
 */
#include "tui_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_tui__step_variant(const kb_tui__view *v)
{
	json_t *s = json_array_get(v->steps, (size_t)v->step);
	const char *name = json_string_value(json_object_get(s, "variant"));
	return name && name[0] == 'v' && name[1] >= '1' && name[1] <= '9' ? atoi(name + 1) : 0;
}

/* ---- Variants ------------------------------------------------------------------- */

/* The table's columns, most useful first: each is shown when the ones
 * before it left room. */
enum { COL_VERDICT, COL_MEDIAN, COL_LABEL, COL_GBPS, COL_REGS, COL_OCC, COL_KERNEL, NCOLS };

typedef struct {
	const char *head;
	int width;             /* 0: the longest value's (label, kernel) */
	bool right;
} column;

static void cell(kb_buf *out, const column *c, const char *s)
{
	int len = (int)strlen(s);
	if (len > c->width) /* only labels and kernel names: shortened, marked */
		kb_buf_catf(out, " %.*s~", c->width - 1, s);
	else
		kb_buf_catf(out, c->right ? " %*s" : " %-*s", c->width, s);
}

static void num_cell(kb_buf *out, const column *c, int prec, double x)
{
	char s[32] = "-";
	if (x >= 0)
		snprintf(s, sizeof s, "%.*f", prec, x);
	cell(out, c, s);
}

/* Which columns fit `width` (the name column and its mark come first). */
static void fit_columns(column *c, const kb_app_variant_row *rows, int n, int width, bool *on)
{
	int label = 0, kernel = 0, kernels = 0;
	for (int i = 0; i < n; i++) {
		int l = (int)strlen(rows[i].label), k = (int)strlen(rows[i].kernel);
		label = l > label ? l : label;
		kernel = k > kernel ? k : kernel;
		kernels += i == 0 || strcmp(rows[i].kernel, rows[0].kernel);
	}
	c[COL_LABEL].width = label < 5 ? 5 : label > 16 ? 16 : label;
	c[COL_KERNEL].width = kernel < 6 ? 6 : kernel > 20 ? 20 : kernel;
	int used = 5; /* " >v12" */
	for (int k = 0; k < NCOLS; k++) {
		bool want = (k != COL_LABEL || label) && (k != COL_KERNEL || kernels > 1);
		/* a label shortened to what is left, 6 columns or more */
		if (want && k == COL_LABEL && used + 1 + c[k].width > width && width - used - 1 >= 6)
			c[k].width = width - used - 1;
		on[k] = want && used + 1 + c[k].width <= width;
		used += on[k] ? 1 + c[k].width : 0;
	}
}

static void table(const kb_app_variant_row *rows, int n, int sel, int width, kb_buf *out)
{
	column c[NCOLS] = {
		[COL_VERDICT] = {"verdict", 9, false}, [COL_MEDIAN] = {"median us", 9, true},
		[COL_LABEL] = {"label", 0, false},
		[COL_GBPS] = {"GB/s", 7, true}, [COL_REGS] = {"regs", 4, true},
		[COL_OCC] = {"occ%", 4, true}, [COL_KERNEL] = {"kernel", 0, false},
	};
	/* the order across the line: name (* the best), label, verdict, numbers */
	static const int order[NCOLS] = {COL_LABEL, COL_KERNEL, COL_VERDICT, COL_MEDIAN, COL_GBPS,
					 COL_REGS, COL_OCC};
	bool on[NCOLS];
	fit_columns(c, rows, n, width, on);
	kb_buf_catf(out, "%5s", "");
	for (int k = 0; k < NCOLS; k++)
		if (on[order[k]])
			cell(out, &c[order[k]], c[order[k]].head);
	kb_buf_cat(out, "\n");
	for (int i = 0; i < n; i++) {
		const kb_app_variant_row *r = &rows[i];
		int pad = 4 - (int)strlen(r->name);
		kb_buf_catf(out, "%c%s%-*s", i + 1 == sel ? '>' : ' ', r->name, pad > 0 ? pad : 0,
			    r->best ? "*" : r->kernel_best ? "+" : "");
		for (int k = 0; k < NCOLS; k++) {
			const column *col = &c[order[k]];
			if (!on[order[k]])
				continue;
			switch (order[k]) {
			case COL_LABEL: cell(out, col, r->label); break;
			case COL_KERNEL: cell(out, col, r->kernel); break;
			case COL_VERDICT: cell(out, col, r->verdict); break;
			case COL_MEDIAN: num_cell(out, col, 2, r->median_us); break;
			case COL_GBPS: num_cell(out, col, 1, r->gbps); break;
			case COL_REGS: num_cell(out, col, 0, r->regs); break;
			case COL_OCC: num_cell(out, col, 0, r->occ_pct); break;
			}
		}
		/* no trailing blanks: the line is exactly as wide as its text */
		while (out->len && out->s[out->len - 1] == ' ')
			out->s[--out->len] = '\0';
		kb_buf_cat(out, "\n");
	}
}

void kb_tui__variants_text(const kb_tui__view *v, kb_buf *out)
{
	kb_err err = {0};
	kb_app_variant_row *rows = NULL;
	int n = 0;
	int width = v->width > 20 ? v->width : 20;
	kb_buf_cat(out, v->width >= 60 ? "^N/^P select  ^D diff with the newest  ^O load into the editor\n"
				       : "^N/^P select  ^D diff  ^O load\n");
	if (kb_app_variant_rows(v->path, &rows, &n, &err) < 0) {
		kb_buf_catf(out, "%s\n", err.msg);
		return;
	}
	int sel = v->variant ? v->variant : v->steps ? kb_tui__step_variant(v) : 0;
	bool kernels = false; /* a file that ran several kernels: each one's fastest marked */
	for (int i = 0; i < n; i++)
		kernels |= rows[i].kernel_best;
	kb_buf_catf(out, "%s: %d variant%s (* the best%s)\n", kb_basename(v->path), n, n == 1 ? "" : "s",
		    kernels ? ", + its kernel's best" : "");
	if (!n) {
		kb_buf_cat(out, "  (none yet: every save that compiles is one)\n");
		free(rows);
		return;
	}
	table(rows, n, sel, width, out);
	double *t = kb_xcalloc((size_t)n, sizeof *t);
	int timed = 0;
	for (int i = 0; i < n; i++)
		timed += (t[i] = rows[i].median_us) > 0;
	if (timed > 1) {
		kb_buf_cat(out, "time ");
		kb_app_sparkline(t, n, width - 5, out);
		kb_buf_cat(out, "\n");
	}
	free(t);
	free(rows);
	if (sel > 0) {
		char name[16];
		snprintf(name, sizeof name, "v%d", sel);
		kb_buf_cat(out, "\n");
		if (kb_app_show(name, v->path, out, &err) < 0)
			kb_buf_catf(out, "%s\n", err.msg);
	}
}

/* ---- Diff --------------------------------------------------------------------------- */

/* Replay, the step's variant is the first of its file: against the
 * session's variant just before it (another file's, which it most likely
 * grew from), the sources only. */
static bool diff_across_files(const kb_tui__view *v, kb_buf *out)
{
	json_t *cur = json_array_get(v->steps, (size_t)v->step), *prev = NULL;
	const char *text = json_string_value(json_object_get(cur, "text"));
	for (int k = v->step - 1; k >= 0 && text && !prev; k--) {
		json_t *s = json_array_get(v->steps, (size_t)k);
		const char *t = json_string_value(json_object_get(s, "text"));
		if (t && strcmp(t, text))
			prev = s;
	}
	if (!prev)
		return false;
	char la[300], lb[300];
	snprintf(la, sizeof la, "%s %s", json_string_value(json_object_get(prev, "file")),
		 json_string_value(json_object_get(prev, "variant")));
	snprintf(lb, sizeof lb, "%s %s", json_string_value(json_object_get(cur, "file")),
		 json_string_value(json_object_get(cur, "variant")));
	kb_buf_catf(out, "%s is the first variant of its file: against the session's variant "
			 "before it, %s\n\n", lb, la);
	kb_err err = {0};
	const char *pt = json_string_value(json_object_get(prev, "text"));
	if (kb_diff_text(pt, strlen(pt), text, strlen(text), la, lb, 3, out, &err) < 0)
		kb_buf_catf(out, "%s\n", err.msg);
	return true;
}

void kb_tui__diff_text(const kb_tui__view *v, kb_buf *out)
{
	kb_err err = {0};
	int n = kb_app_variant_count(v->path, &err);
	if (n < 0) {
		kb_buf_catf(out, "%s\n", err.msg);
		return;
	}
	int b = n, a;
	if (v->steps && !v->variant && kb_tui__step_variant(v) > 1) {
		b = kb_tui__step_variant(v); /* the step's variant against the one before it */
		a = b - 1;
	} else if (v->steps && !v->variant && kb_tui__step_variant(v) == 1 && diff_across_files(v, out)) {
		return;
	} else { /* the selected (the session's very first; else the one
		  * before the newest) against the newest */
		a = v->variant > 0 && v->variant < n ? v->variant
		    : v->steps && !v->variant && kb_tui__step_variant(v) == 1 ? 1 : n - 1;
	}
	if (n < 2 || a < 1) {
		kb_buf_catf(out, "No diff yet: %s has one variant; every save that compiles is one, "
				 "and two are needed.\n", kb_basename(v->path));
		return;
	}
	char na[16], nb[16];
	snprintf(na, sizeof na, "v%d", a);
	snprintf(nb, sizeof nb, "v%d", b);
	if (kb_app_diff(na, nb, v->path, KB_DIFF_SOURCE | KB_DIFF_NUMBERS, out, &err) < 0)
		kb_buf_catf(out, "%s\n", err.msg);
}
