/*
 * pane_metrics.c - the Metrics pane after F8, read as Nsight Compute's
 * speed-of-light section is: a bar per throughput (compute and memory, as
 * a share of the peak), the occupancy reached, the stall reasons as a bar
 * chart (the counters' when collected, else the PC samples' stalls
 * weighted by each line's share), the hot source lines with their share;
 * then every table `kbench profile` prints (kb_app_profile_render).  Pure
 * text from the run's Result.
 *
 * Invariants: a bar row fits the pane (name, bar, value), never wraps; a
 * counter that is missing has no bar (the tables below say n/a and why).
 */
#include "tui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Eighths of a cell, for bars. */
static const char *const part[] = {"", "\u258f", "\u258e", "\u258d", "\u258c",
				   "\u258b", "\u258a", "\u2589"};

/* "  name      ████▌····  42.0%" in `width` columns. */
static void bar_row(kb_buf *out, int width, const char *name, double pct, const char *value)
{
	int cells = width - 2 - 16 - 1 - 8;
	cells = cells < 6 ? 6 : cells > 40 ? 40 : cells;
	kb_buf_catf(out, "  %-16.16s ", name);
	int eighths = (int)lround(fmin(fmax(pct, 0), 100) / 100 * cells * 8);
	for (int i = 0; i < cells; i++, eighths -= 8)
		kb_buf_cat(out, eighths >= 8 ? "\u2588" : eighths > 0 ? part[eighths] : "\u00b7");
	kb_buf_catf(out, " %7s\n", value);
}

static void pct_row(kb_buf *out, int width, const char *name, json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return;
	char s[16];
	snprintf(s, sizeof s, "%.1f%%", json_number_value(v));
	bar_row(out, width, name, json_number_value(v), s);
}

static void speed_of_light(json_t *secs, int width, kb_buf *out)
{
	json_t *sol = json_object_get(secs, "sol"), *occ = json_object_get(secs, "occupancy");
	json_t *d = json_object_get(sol, "duration_us");
	kb_buf_cat(out, "Speed of light");
	if (json_is_number(d))
		kb_buf_catf(out, "  (%.2f us)", json_number_value(d));
	kb_buf_cat(out, "\n");
	pct_row(out, width, "SM (compute)", sol, "sm_pct");
	pct_row(out, width, "memory", sol, "memory_pct");
	pct_row(out, width, "DRAM", sol, "dram_pct");
	pct_row(out, width, "L2", sol, "l2_pct");
	pct_row(out, width, "L1/TEX", sol, "l1_pct");
	if (json_is_string(json_object_get(sol, "bottleneck")))
		kb_buf_catf(out, "  bottleneck: %s\n",
			    json_string_value(json_object_get(sol, "bottleneck")));
	pct_row(out, width, "occupancy theor.", occ, "theoretical_pct");
	pct_row(out, width, "occupancy achvd.", occ, "achieved_pct");
}

typedef struct {
	const char *reason;
	double pct;
} stall;

static int by_pct(const void *a, const void *b)
{
	double x = ((const stall *)a)->pct, y = ((const stall *)b)->pct;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* The stall reasons: the warp-state counters' shares, else the PC
 * samples' (each line's stalls times the line's share). */
static void stalls(json_t *r, int width, kb_buf *out)
{
	stall v[32];
	int n = 0;
	size_t i, k;
	json_t *s, *l;
	const char *from = "warp-state counters";
	json_array_foreach(json_object_get(json_object_get(json_object_get(r, "sections"), "stalls"),
					   "reasons"), i, s)
		if (n < 32)
			v[n++] = (stall){json_string_value(json_object_get(s, "reason")),
					 json_number_value(json_object_get(s, "share_pct"))};
	if (!n) {
		from = "PC samples";
		json_array_foreach(json_object_get(r, "hot_lines"), i, l) {
			double share = json_number_value(json_object_get(l, "share_pct"));
			json_array_foreach(json_object_get(l, "stalls"), k, s) {
				const char *why = json_string_value(json_object_get(s, "reason"));
				double p = share * json_number_value(json_object_get(s, "share_pct")) / 100;
				int j = 0;
				while (j < n && strcmp(v[j].reason, why))
					j++;
				if (j == n && n == 32)
					continue;
				if (j == n)
					v[n++] = (stall){why, 0};
				v[j].pct += p;
			}
		}
	}
	if (!n)
		return;
	qsort(v, (size_t)n, sizeof *v, by_pct);
	kb_buf_catf(out, "\nStall reasons (share of stalls, %s)\n", from);
	for (int j = 0; j < n && j < 6; j++) {
		char val[16];
		snprintf(val, sizeof val, "%.1f%%", v[j].pct);
		bar_row(out, width, v[j].reason ? v[j].reason : "?", v[j].pct, val);
	}
}

/* The hot lines: share, a bar, the line and its text (cut to the pane). */
static void hot_lines(json_t *r, int width, kb_buf *out)
{
	json_t *lines = json_object_get(r, "hot_lines"), *l;
	size_t i;
	if (!json_array_size(lines))
		return;
	kb_buf_cat(out, "\nHot spots (PC sampling: each line's share; SASS shows them per instruction)\n");
	json_array_foreach(lines, i, l) {
		if (i >= 8)
			break;
		double share = json_number_value(json_object_get(l, "share_pct"));
		const char *file = json_string_value(json_object_get(l, "file"));
		const char *text = json_string_value(json_object_get(l, "text"));
		char loc[300];
		snprintf(loc, sizeof loc, " %s%s%lld  ", file ? file : "", file ? ":" : "",
			 (long long)json_integer_value(json_object_get(l, "line")));
		kb_buf_catf(out, "  %5.1f%% ", share);
		int eighths = (int)lround(fmin(fmax(share, 0), 100) / 100 * 8 * 8);
		for (int c = 0; c < 8; c++, eighths -= 8)
			kb_buf_cat(out, eighths >= 8 ? "\u2588" : eighths > 0 ? part[eighths] : " ");
		/* the source text, its leading blanks dropped, cut at the pane */
		const char *t = text ? text + strspn(text, " \t") : "";
		int room = width - 2 - 7 - 8 - (int)strlen(loc);
		kb_buf_catf(out, "%s%.*s\n", loc, room > 0 ? room : 0, t);
	}
}

void kb_tui__metrics_text(const kb_tui__view *v, kb_buf *out)
{
	json_t *r = v->r ? v->r->run : NULL;
	if (!r || !(json_object_get(r, "counters") || json_object_get(r, "hot_lines"))) {
		kb_buf_cat(out, "No counters: F8 profiles the run (quick counters and PC-sampling hot "
				"spots; needs a GPU), as `kbench profile FILE` does.\n");
		return;
	}
	speed_of_light(json_object_get(r, "sections"), v->width, out);
	stalls(r, v->width, out);
	hot_lines(r, v->width, out);
	kb_buf_cat(out, "\nEvery counter (as `kbench profile` prints them)\n");
	kb_app_profile_render(r, out);
}
