/*
 * headline.c - the one line a tuning session is read by, shared by
 * `kbench run` (its first line) and kbench-tui (the top of the Summary,
 * the title bar): the verdict, the median and its spread, the share of the
 * binding ceiling as a small bar, the change against the previous and the
 * best variant (an arrow and a colour only beyond the noise, as
 * kb_diff_numbers decides), and a sparkline of every variant's time.
 * Also the rows of a file's variants as plain numbers, for tables that
 * choose their own columns (the TUI's Variants pane).
 *
 * Invariants: the line never holds a newline and is never wider than the
 * width asked for (parts are left out, least important first); colour is
 * SGR escapes only when asked for, and only beyond the noise.
 */
#include "app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the rows of a file's variants ------------------------------------------- */

static void row_of(const kb_variant *v, kb_app_variant_row *r)
{
	memset(r, 0, sizeof *r);
	snprintf(r->name, sizeof r->name, "%s", v->name);
	snprintf(r->label, sizeof r->label, "%s", v->label ? v->label : "");
	snprintf(r->verdict, sizeof r->verdict, "%s", kb_app__verdict_of(v));
	snprintf(r->kernel, sizeof r->kernel, "%s", v->kernel ? v->kernel : "");
	r->median_us = kb_app__median_of(v);
	r->gbps = kb_app__jnum(v->note, "result.roofline.GBps");
	r->regs = kb_app__jnum(v->note, "compile.kernel.resources.registers");
	r->occ_pct = kb_app__jnum(v->note, "compile.kernel.occupancy.occupancy_pct");
}

int kb_app_variant_rows(const char *file, kb_app_variant_row **rows, int *n, kb_err *err)
{
	kb_app__fstore f;
	*rows = NULL;
	*n = 0;
	int rc = kb_app__fstore_open(file, &f, err);
	if (rc < 0)
		return rc;
	kb_variant *vs = NULL;
	int nv = 0;
	rc = kb_session_store_list(f.st, &vs, &nv, err);
	if (rc == 0) {
		*rows = kb_xcalloc((size_t)(nv > 0 ? nv : 1), sizeof **rows);
		for (int i = 0; i < nv; i++)
			row_of(&vs[i], &(*rows)[i]);
		for (int i = 0; i < nv; i++) {
			kb_app__best_rank rank = kb_app__best_rank_of(vs, nv, i);
			(*rows)[i].best = rank == KB_APP__BEST;
			(*rows)[i].kernel_best = rank == KB_APP__KERNEL_BEST;
		}
		*n = nv;
		kb_session_variants_free(vs, nv);
	}
	kb_app__fstore_close(&f);
	return rc < 0 ? rc : KB_OK;
}

/* ---- the headline's numbers ----------------------------------------------------- */

/* The share of the ceiling that binds: the side of the ridge the kernel is
 * on, measured copy (else datasheet DRAM) or the compute peak. */
static void binding_ceiling(json_t *res, kb_app_headline *h)
{
	json_t *rf = json_object_get(res, "roofline");
	const char *side = json_string_value(json_object_get(rf, "side"));
	static const struct { const char *key, *name; bool compute; } c[] = {
		{"pct_of_tensor_peak", "tensor peak", true}, {"pct_of_fp32_peak", "FP32 peak", true},
		{"pct_of_measured_copy", "copy", false}, {"pct_of_datasheet_dram", "DRAM", false},
	};
	bool compute = side && !strcmp(side, "compute");
	h->roof_pct = -1;
	for (size_t i = 0; i < KB_ARRAY_LEN(c) && h->roof_pct < 0; i++) {
		json_t *v = json_object_get(rf, c[i].key);
		if (c[i].compute == compute && json_is_number(v)) {
			h->roof_pct = json_number_value(v);
			snprintf(h->roof, sizeof h->roof, "%s", c[i].name);
		}
	}
}

/* cur against other (Results): the trend beyond the noise and the change. */
static void compare(json_t *cur, const kb_variant *other, kb_app_headline_delta *d)
{
	json_t *o = kb_app__jget(other->note, "result");
	json_t *dn = kb_diff_numbers(o, cur);
	const char *v = json_string_value(json_object_get(dn, "verdict"));
	snprintf(d->name, sizeof d->name, "%s", other->name);
	d->trend = !v ? KB_APP_TREND_NONE
		   : !strcmp(v, "faster") ? KB_APP_TREND_FASTER
		   : !strcmp(v, "slower") ? KB_APP_TREND_SLOWER
		   : !strncmp(v, "same", 4) ? KB_APP_TREND_SAME : KB_APP_TREND_NONE;
	double a = kb_app__jnum(o, "timing.median_us"), b = kb_app__jnum(cur, "timing.median_us");
	d->pct = a > 0 && b > 0 ? 100.0 * (b - a) / a : 0;
	json_decref(dn);
}

static bool timed_correct(json_t *res)
{
	return res && kb_app_verdict(res) == KB_VERDICT_CORRECT &&
	       kb_app__jnum(res, "timing.median_us") > 0;
}

/* The previous and the best timed CORRECT variants of the same kernel
 * (other than cur), and every variant's time for the sparkline. */
static void against_session(const kb_variant *vs, int n, int cur, json_t *res, kb_app_headline *h)
{
	const char *kernel = cur >= 0 ? vs[cur].kernel
			     : json_string_value(kb_app__jget(res, "compile.kernel.name"));
	int prev = -1, best = -1, upto = cur >= 0 ? cur : n;
	h->times = kb_xcalloc((size_t)(n + 1), sizeof *h->times);
	for (int i = 0; i < n; i++) {
		h->times[h->ntimes++] = kb_app__median_of(&vs[i]);
		if (i == cur || !timed_correct(kb_app__jget(vs[i].note, "result")) ||
		    !kb_app__same_kernel(&vs[i], kernel))
			continue;
		if (i < upto)
			prev = i;
		if (best < 0 || kb_app__median_of(&vs[i]) < kb_app__median_of(&vs[best]))
			best = i;
	}
	if (cur < 0)
		h->times[h->ntimes++] = kb_app__jnum(res, "timing.median_us");
	h->current = cur >= 0 ? cur : h->ntimes - 1;
	if (!timed_correct(res))
		return;
	if (prev >= 0)
		compare(res, &vs[prev], &h->prev);
	if (best >= 0 && best != prev)
		compare(res, &vs[best], &h->best);
	/* the best so far is beaten beyond the noise (or there was none) */
	kb_app_headline_delta *b = best >= 0 && best != prev ? &h->best : &h->prev;
	h->new_best = best < 0 || b->trend == KB_APP_TREND_FASTER;
	h->best_is_prev = best >= 0 && best == prev;
}

int kb_app_headline_of(const char *file, const char *name, json_t *result, kb_app_headline *h,
		       kb_err *err)
{
	memset(h, 0, sizeof *h);
	h->current = -1;
	h->roof_pct = h->median_us = h->spread_pct = -1;
	kb_app__fstore f;
	kb_variant *vs = NULL;
	int n = 0, rc = KB_OK;
	bool open = file && kb_app__fstore_open(file, &f, err) == 0;
	if (open && (rc = kb_session_store_list(f.st, &vs, &n, err)) < 0)
		n = 0;
	int cur = -1;
	for (int i = 0; name && i < n; i++)
		if (!strcmp(vs[i].name, name))
			cur = i;
	json_t *res = result ? result : cur >= 0 ? kb_app__jget(vs[cur].note, "result") : NULL;
	if (!res) {
		rc = name && rc == 0 ? kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
						  "%s has no run recorded", name)
				     : rc;
		snprintf(h->verdict, sizeof h->verdict, "%s", cur >= 0 ? kb_app__verdict_of(&vs[cur]) : "");
		goto out;
	}
	snprintf(h->verdict, sizeof h->verdict, "%s", kb_app_run_verdict(res));
	h->median_us = kb_app__jnum(res, "timing.median_us");
	double cv = kb_app__jnum(res, "timing.cv");
	h->spread_pct = cv >= 0 ? 100 * cv : -1;
	binding_ceiling(res, h);
	if (open)
		against_session(vs, n, cur, res, h);
	rc = KB_OK;
out:
	if (open) {
		kb_session_variants_free(vs, n);
		kb_app__fstore_close(&f);
	}
	return rc;
}

void kb_app_headline_free(kb_app_headline *h)
{
	free(h->times);
	h->times = NULL;
	h->ntimes = 0;
}

/* ---- the line ------------------------------------------------------------------- */

/* Display columns of UTF-8 s, escapes not counted (every symbol used here
 * is one column). */
static int cols_of(const char *s)
{
	int c = 0;
	for (; *s; s++) {
		if (*s == '\033') {
			while (*s && *s != 'm')
				s++;
			if (!*s)
				break;
			continue;
		}
		c += ((unsigned char)*s & 0xC0) != 0x80;
	}
	return c;
}

/* A bar of `cells` columns filled to pct (eighths of a cell). */
static void bar(double pct, int cells, kb_buf *out)
{
	static const char *const part[] = {"", "\u258f", "\u258e", "\u258d", "\u258c",
					   "\u258b", "\u258a", "\u2589"};
	int eighths = (int)lround(fmin(fmax(pct, 0), 100) / 100 * cells * 8);
	for (int i = 0; i < cells; i++, eighths -= 8)
		kb_buf_cat(out, eighths >= 8 ? "\u2588" : eighths > 0 ? part[eighths] : "\u00b7");
}

void kb_app_sparkline(const double *v, int n, int width, kb_buf *out)
{
	static const char *const lv[] = {"\u2581", "\u2582", "\u2583", "\u2584",
					 "\u2585", "\u2586", "\u2587", "\u2588"};
	int from = n > width ? n - width : 0;
	double lo = INFINITY, hi = -INFINITY;
	for (int i = from; i < n; i++)
		if (v[i] > 0)
			lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
	for (int i = from; i < n; i++) {
		if (!(v[i] > 0)) {
			kb_buf_cat(out, " ");
			continue;
		}
		int k = hi > lo ? (int)lround((v[i] - lo) / (hi - lo) * 7) : 3;
		kb_buf_cat(out, lv[k]);
	}
}

/* "715.5 us": four significant digits, never an exponent. */
static void cat_time(kb_buf *out, double us)
{
	if (us >= 1e4)
		kb_buf_catf(out, "%.0f us", us);
	else
		kb_buf_catf(out, "%.4g us", us);
}

/* The SGR escape of code (one of the few used here) when on, else "". */
static const char *SGR(bool on, const char *code)
{
	static const char *const known[][2] = {{"0", "\033[0m"}, {"1", "\033[1m"},
					       {"31", "\033[31m"}, {"32", "\033[32m"},
					       {"1;31", "\033[1;31m"}, {"1;32", "\033[1;32m"}};
	for (size_t i = 0; on && i < KB_ARRAY_LEN(known); i++)
		if (!strcmp(known[i][0], code))
			return known[i][1];
	return "";
}

static void delta_part(const kb_app_headline_delta *d, const char *role, bool ansi, kb_buf *out)
{
	if (d->trend == KB_APP_TREND_FASTER || d->trend == KB_APP_TREND_SLOWER) {
		bool f = d->trend == KB_APP_TREND_FASTER;
		kb_buf_catf(out, "%s%s%.1f%% vs %s%s%s", SGR(ansi, f ? "32" : "31"), f ? "\u2193" : "\u2191",
			    fabs(d->pct), role, d->name, SGR(ansi, "0"));
	} else if (d->trend == KB_APP_TREND_SAME) {
		kb_buf_catf(out, "= %s%s", role, d->name);
	} else {
		kb_buf_catf(out, "? %s%s", role, d->name);
	}
}

enum { P_VERDICT, P_TIME, P_ROOF, P_PREV, P_BEST, P_SPREAD, P_BAR, P_SPARK, NPARTS };

/* Whether v says the kernel is wrong or failed (red), not what says
 * nothing about it (NO GPU, compiled, UNSUPPORTED, CANCELLED: plain bold). */
static bool kernel_failed(kb_verdict v)
{
	switch (v) {
	case KB_VERDICT_INCORRECT: case KB_VERDICT_IMPOSSIBLE: case KB_VERDICT_FAULT:
	case KB_VERDICT_TIMEOUT: case KB_VERDICT_CRASH: case KB_VERDICT_ERROR:
	case KB_VERDICT_SPEC_ERROR: case KB_VERDICT_COMPILE_ERROR:
		return true;
	default:
		return false;
	}
}

void kb_app_headline_text(const kb_app_headline *h, int width, bool ansi, kb_buf *out)
{
	kb_buf part[NPARTS];
	for (int i = 0; i < NPARTS; i++)
		part[i] = (kb_buf)KB_BUF_INIT;
	kb_verdict v = kb_verdict_parse(h->verdict);
	const char *colour = v == KB_VERDICT_CORRECT ? "1;32" : kernel_failed(v) ? "1;31" : "1";
	if (h->verdict[0])
		kb_buf_catf(&part[P_VERDICT], "%s%s%s", SGR(ansi, colour), h->verdict, SGR(ansi, "0"));
	if (h->median_us > 0)
		cat_time(&part[P_TIME], h->median_us);
	if (h->median_us > 0 && h->spread_pct >= 0)
		kb_buf_catf(&part[P_SPREAD], "\u00b1%.1f%%", h->spread_pct);
	if (h->roof_pct >= 0) {
		kb_buf_catf(&part[P_ROOF], "%.0f%% of %s", h->roof_pct, h->roof);
		bar(h->roof_pct, 5, &part[P_BAR]);
	}
	if (h->prev.name[0])
		delta_part(&h->prev, h->best_is_prev ? "best " : "", ansi, &part[P_PREV]);
	if (h->best.name[0])
		delta_part(&h->best, "best ", ansi, &part[P_BEST]);
	else if (h->new_best && h->prev.name[0])
		kb_buf_catf(&part[P_BEST], "%s\u2605 new best%s", SGR(ansi, "32"), SGR(ansi, "0"));
	if (h->ntimes > 1)
		kb_app_sparkline(h->times, h->ntimes, 16, &part[P_SPARK]);
	/* the most important parts that fit, in the line's own order; two
	 * spaces between them, one when that is what makes them fit */
	static const int order[NPARTS] = {P_VERDICT, P_TIME, P_SPREAD, P_BAR, P_ROOF, P_PREV, P_BEST,
					  P_SPARK};
	bool keep[NPARTS];
	for (int sep = 2; sep >= 1; sep--) {
		int used = 0;
		for (int p = 0; p < NPARTS; p++) { /* by importance (the enum's order) */
			int w = part[p].len ? cols_of(part[p].s) : 0;
			keep[p] = w && used + (used ? sep : 0) + w <= width;
			used += keep[p] ? (used ? sep : 0) + w : 0;
		}
		bool all = true;
		for (int p = 0; p < NPARTS; p++)
			all = all && (keep[p] || !part[p].len);
		if (all || sep == 1) {
			bool first = true;
			for (int i = 0; i < NPARTS; i++) {
				if (!keep[order[i]])
					continue;
				kb_buf_catf(out, "%*s%s", first ? 0 : sep, "", part[order[i]].s);
				first = false;
			}
			break;
		}
	}
	for (int i = 0; i < NPARTS; i++)
		kb_buf_free(&part[i]);
}
