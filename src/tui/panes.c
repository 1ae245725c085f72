/*
 * panes.c - the text of each result pane, made from the last compile and
 * run: Summary (the headline `kbench run` opens with, then the same text
 * as `kbench compile` / `kbench run`, each section one row until F4), CUDA
 * (the generated CUDA of a .tile file, the code of the editor's cursor
 * line marked), SASS (the chosen kernel, with the lines of the editor's
 * cursor line marked), PTX, Occupancy (every limit and which binds),
 * Metrics (speed-of-light bars, stalls, hot lines and the counter
 * tables when profiled), Roofline (the session's variants against this
 * GPU's ceilings), Help; and which panes a file has (the tab bar's order
 * and gaps).  Variants and Diff are pane_session.c's.  Pure text in a
 * kb_buf; drawing is tui_pane.c's.
 */
#include "tui_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const kb_tui__pane_names[KB_TUI__NPANES] = {
	"Summary", "CUDA", "SASS", "PTX", "Occupancy", "Metrics", "Roofline", "Variants", "Diff", "LLM",
	"Help",
};

/* ===== which panes a file has ===== */

bool kb_tui__pane_shown(int pane, const char *path)
{
	if (pane < 0 || pane >= KB_TUI__NPANES)
		return false;
	return pane != KB_TUI__PANE_CUDA || kb_compile_source_kind(path) == KB_SRC_TILE;
}

int kb_tui__pane_step(int pane, int step, const char *path)
{
	int p = pane;
	do
		p = (p + step + KB_TUI__NPANES) % KB_TUI__NPANES;
	while (p != pane && !kb_tui__pane_shown(p, path));
	return p;
}

int kb_tui__pane_nth(int n, const char *path)
{
	for (int p = 0; p < KB_TUI__NPANES; p++)
		if (kb_tui__pane_shown(p, path) && n-- == 0)
			return p;
	return -1;
}

/* ===== the panes ===== */

/* Folded (the default): every line of text one row of the pane, cut with
 * an ellipsis, so each section (correctness, time, bandwidth, resources,
 * GPU ...) reads as one row; F4 shows them whole (wrapped). */
static void fold(const char *text, int width, kb_buf *out)
{
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p), cols = 0, i = 0;
		for (; i < n && cols < width; cols++) /* one column per code point */
			for (i++; i < n && ((unsigned char)p[i] & 0xC0) == 0x80; i++)
				;
		if (i < n) { /* cut: the last column becomes the ellipsis */
			while (i > 0 && ((unsigned char)p[--i] & 0xC0) == 0x80)
				;
			kb_buf_catf(out, "%.*s\u2026\n", i, p);
		} else {
			kb_buf_catf(out, "%.*s\n", n, p);
		}
		p = e ? e + 1 : p + n;
	}
}

/* The headline (one line, coloured), then the sections below it, folded
 * unless details. */
static void headed(const kb_tui__view *v, const char *body, kb_buf *out)
{
	if (v->head) {
		kb_app_headline_text(v->head, v->width, true, out);
		kb_buf_cat(out, "\n\n");
	}
	if (v->details || !v->head) {
		kb_buf_cat(out, body);
		kb_buf_cat(out, v->head ? "\n(F4: one row each)\n" : "");
		return;
	}
	fold(body, v->width, out);
	kb_buf_cat(out, "\n(F4: every section whole)\n");
}

static void summary(const kb_tui__view *v, const kb_tui__result *r, kb_buf *out)
{
	if (r->error[0])
		kb_buf_catf(out, "error: %s\n\n", r->error);
	/* errors first, then the verdict and time, then the compile's details */
	if (r->compiled)
		kb_diag_render(&r->unit.diags, out, false);
	if (r->run) {
		kb_buf body = KB_BUF_INIT;
		kb_app_run_render(r->run, &body);
		if (r->deltas && (v->details || !v->head)) /* folded: the headline has them */
			kb_buf_cat(&body, r->deltas);
		headed(v, body.s ? body.s : "", out);
		kb_buf_free(&body);
		kb_buf_cat(out, "\n");
	}
	if (r->compiled)
		kb_app_compile_render(&r->unit, out);
	if (r->running)
		kb_buf_cat(out, "\n(checking and timing in the runner: the verdict and the time come "
			   "here when it is done)\n");
	else if (!r->run && r->compiled && r->unit.status == 0)
		kb_buf_cat(out, "\n(not run: running needs a GPU; this pane shows the compile)\n");
	if (r->note[0])
		kb_buf_catf(out, "\n%s\n", r->note);
}

/* The share of PC samples on source line `line` when the run was
 * profiled (F8), else 0. */
static double hot_share(const kb_tui__result *r, int line)
{
	size_t i;
	json_t *l;
	json_array_foreach(json_object_get(r->run, "hot_lines"), i, l)
		if (!json_object_get(l, "file") && json_integer_value(json_object_get(l, "line")) == line)
			return json_number_value(json_object_get(l, "share_pct"));
	return 0;
}

/* The SASS of the spec's kernel; instructions of source line `line` get a
 * '>' in the margin, and after a profile (F8) every instruction its source
 * line's share of the PC samples. */
static void sass(const kb_tui__result *r, int line, kb_buf *out)
{
	const kb_sass *s = &r->unit.build.sass;
	if (!s->available) {
		kb_buf_catf(out, "SASS not shown: %s\n", s->unavailable_why ? s->unavailable_why : "no build");
		return;
	}
	const char *sym = NULL;
	for (int i = 0; i < r->unit.build.nkernels; i++)
		if (!r->unit.chosen || !strcmp(r->unit.build.kernels[i].name, r->unit.chosen->name))
			sym = r->unit.build.kernels[i].lowered;
	for (int f = 0; f < s->nfuncs; f++) {
		const kb_sass_func *fn = &s->funcs[f];
		if (sym && strcmp(fn->name, sym))
			continue;
		bool hot = json_array_size(json_object_get(r->run, "hot_lines")) > 0;
		kb_buf_catf(out, "%s%s%s\n", fn->name,
			    hot ? "\n(left: the source line's share of the PC samples)" : "",
			    json_object_get(r->run, "sass_metrics")
				    ? "\n(right: executions, shared-memory wavefronts and bank "
				      "conflicts of one launch)"
				    : "");
		int n = kb_compile_sass_body_len(fn);
		for (int i = 0; i < n; i++) {
			const kb_sass_insn *in = &fn->v[i];
			/* the editor's line: inlined helpers count at their call */
			int at = kb_compile_sass_src_line(in, r->unit.src.path);
			double share = hot && at ? hot_share(r, at) : 0;
			kb_buf_catf(out, "%c", at && at == line ? '>' : ' ');
			if (hot && share > 0)
				kb_buf_catf(out, "%5.1f%% ", share);
			else if (hot)
				kb_buf_cat(out, "       ");
			char ln[16] = "   -"; /* no line of this file */
			if (at)
				snprintf(ln, sizeof ln, "%4d", at);
			kb_buf_catf(out, "%04x %s  %s%s%s %s", in->addr, ln, in->pred ? in->pred : "",
				    in->pred ? " " : "", in->opcode, in->operands ? in->operands : "");
			/* after a profile: executions, and the bank conflicts of
			 * shared-memory instructions (SASS metrics) */
			json_t *sm = kb_app_sassm_insn(r->run, fn->name, in->addr);
			if (sm)
				kb_app_sassm_counts(sm, out);
			kb_buf_catc(out, '\n');
		}
	}
}

/* Appends one line of generated code s[0..n) for a narrow pane: tabs as
 * spaces to 4-column stops (generated code nests deep, and curses would
 * stop a tab at the screen's columns, not the pane's), and a macro line's
 * continuation backslash, which the generator pads out to column 76,
 * after one space. */
static void cat_code_line(kb_buf *out, const char *s, size_t n)
{
	size_t end = n, col = 0;
	if (n && s[n - 1] == '\\')
		for (end = n - 1; end && (s[end - 1] == ' ' || s[end - 1] == '\t');)
			end--;
	for (size_t i = 0; i < end; i++) {
		if (s[i] != '\t') {
			kb_buf_catc(out, s[i]);
			col++;
			continue;
		}
		for (size_t stop = (col / 4 + 1) * 4; col < stop; col++)
			kb_buf_catc(out, ' ');
	}
	if (end < n)
		kb_buf_cat(out, end ? " \\" : "\\");
}

/* The CUDA a .tile file lowers to (what `kbench compile --emit-cuda`
 * prints, #line directives and all); the lines of .tile line `line` (from
 * a `#line line "FILE"` to the next directive) get a '>' in the margin. */
static void generated(const kb_tui__result *r, int line, kb_buf *out)
{
	const kb_compile_unit *u = &r->unit;
	if (!u->gen.text) {
		kb_buf_catf(out, "No generated CUDA: the file did not lower to CUDA.\n%s\n",
			    r->error[0] ? r->error
					: "Its errors are in the Summary, and at their lines in the editor.");
		return;
	}
	kb_buf body = KB_BUF_INIT;
	long cur = 0, n;
	int places = 0;
	bool mark = false;
	for (const char *s = u->gen.text; *s;) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		if (!strncmp(s, "#line ", 6)) /* into the .tile file, or the prologue (0) */
			cur = kb_tile_line_directive(s, u->src.path, &n) ? n : 0;
		places += !mark && cur == line; /* a line's code may be in several places */
		mark = cur == line;
		kb_buf_catc(&body, mark ? '>' : ' ');
		cat_code_line(&body, s, len);
		kb_buf_catc(&body, '\n');
		s += len + (nl ? 1 : 0);
	}
	if (places == 1)
		kb_buf_catf(out, "'>' marks the code of line %d (the cursor's)\n", line);
	else if (places)
		kb_buf_catf(out, "'>' marks the code of line %d (the cursor's), in %d places\n", line,
			    places);
	else
		kb_buf_catf(out, "line %d (the cursor's) has no code of its own\n", line);
	kb_buf_cat(out, body.s ? body.s : "");
	kb_buf_free(&body);
}

/* The run's clusters at once (the driver's figure), where it ran kernel. */
static void clusters(json_t *run, const char *kernel, kb_buf *out)
{
	json_t *l = json_object_get(run, "launch");
	json_t *at = json_object_get(l, "driver_clusters_at_once");
	const char *ran = json_string_value(json_object_get(l, "kernel"));
	if (!json_is_integer(at) || !ran || strcmp(ran, kernel))
		return;
	long long n = json_integer_value(at);
	long long hold = json_integer_value(json_object_get(l, "clusters_sms_hold"));
	kb_buf_catf(out, "\n  clusters of %lld blocks: %lld at once (driver), of %lld launched\n",
		    json_integer_value(json_object_get(l, "cluster_blocks")), n,
		    json_integer_value(json_object_get(l, "clusters_launched")));
	if (n < hold)
		kb_buf_catf(out, "  the SMs alone would hold %lld: a cluster stays in one GPC, and this\n"
			    "  GPU's GPCs leave SMs over\n", hold);
}

static void occupancy(const kb_tui__result *r, kb_buf *out)
{
	for (int i = 0; i < r->unit.build.nkernels; i++) {
		const kb_build_kernel *k = &r->unit.build.kernels[i];
		if (!k->has_occupancy)
			continue;
		const kb_occupancy *o = &k->occ;
		kb_buf_catf(out, "%s: %.0f%% (%d blocks of %d threads, %d/%d warps per SM)\n\n", k->name,
			    100 * o->occupancy, o->blocks_per_sm, o->block_threads, o->warps_per_sm,
			    o->max_warps_per_sm);
		kb_buf_cat(out, "  limit            blocks/SM\n");
		for (int l = KB_LIMIT_WARPS; l <= KB_LIMIT_BARRIERS; l++)
			if (o->limit_blocks[l] >= 0)
				kb_buf_catf(out, "  %-16s %5d%s\n", kb_limit_name((kb_limit)l), o->limit_blocks[l],
					    (kb_limit)l == o->limiter ? "   <- binds" : "");
		kb_buf_catf(out, "\n  registers %d/thread (%d per block), smem %d B per block\n\n  %s\n",
			    k->res.regs, o->regs_per_block, o->smem_per_block, o->why);
		clusters(r->run, k->name, out);
	}
	if (!out->len)
		kb_buf_cat(out, "No occupancy: the spec has no `//! launch` line (block size).\n");
}

/* The keys: one "key  what" line each where the pane is wide enough for
 * both, else the key on a line of its own and what it does below it. */
static void help(int width, kb_buf *out)
{
	static const char *const keys[][2] = {
		{"Ctrl-S", "save, compile, check and time (in the background)"},
		{"F5", "compile and run again without saving"},
		{"F8", "profile: the run, quick counters and PC-sampling hot spots "
		       "(Metrics; SASS shows each line's share)"},
		{"F4", "Summary: every section whole, or one row each"},
		{"Ctrl-Q", "quit (asks when there are unsaved edits)"},
		{"F1", "this help"},
		{"F2/F3", "previous / next result pane (or click a tab)"},
		{"Alt-1..9", "the pane of that tab (Alt-1 Summary)"},
		{"Ctrl-Z/Ctrl-Y", "undo / redo"},
		{"Shift+arrows", "select; Ctrl-A selects all"},
		{"Ctrl-C/X/V", "copy / cut / paste"},
		{"Ctrl-F", "find (Enter: next); Ctrl-R replaces all"},
		{"Ctrl-G", "go to line"},
		{"Ctrl-Left/Right", "a word left / right; Home/End; PgUp/PgDn; Ctrl-Home/End"},
		{"F6/F7", "move the split left / right"},
		{"F9/F10", "scroll the pane up / down (or the mouse wheel)"},
		{"Ctrl-N/Ctrl-P", "select the next / previous variant (Variants pane)"},
		{"Ctrl-D", "diff the selected variant with the newest (Diff pane)"},
		{"Ctrl-O", "load the selected variant into the editor (Ctrl-Z undoes)"},
		{"Ctrl-L", "ask the model (LLM pane; Enter alone: how can this be faster?)"},
		{"Ctrl-T/Ctrl-W", "apply its proposal (one edit, then saved and run) / reject it"},
		{"Esc", "cancel a question on its way"},
	};
	kb_buf_cat(out, "Keys\n");
	for (size_t i = 0; i < KB_ARRAY_LEN(keys); i++)
		if (width >= 60) /* continuation rows go under the text (tui_pane.c) */
			kb_buf_catf(out, "  %-15s  %s\n", keys[i][0], keys[i][1]);
		else
			kb_buf_catf(out, "  %s\n    %s\n", keys[i][0], keys[i][1]);
	kb_buf_cat(out,
		   "\n"
		   "A .tile file has a CUDA pane (after Summary): the CUDA it lowers to, the code "
		   "of the cursor's line marked '>' (the pane follows the cursor; F9/F10 scroll "
		   "it).  Its errors show at their .tile lines.\n"
		   "\n"
		   "Every compile and run is kept as a variant in the session (`kbench log`, "
		   "`kbench diff vA vB`, `kbench report`).  Edits are autosaved to a recovery "
		   "file every 2 s.\n");
}

/* ===== Metrics ===== */

/* The Metrics pane after F8, read as Nsight Compute's speed-of-light
 * section is: a bar per throughput (compute and memory, as a share of the
 * peak), the occupancy reached, the stall reasons as a bar chart (the
 * counters' when collected, else the PC samples' stalls weighted by each
 * line's share), the hot source lines with their share; then every table
 * `kbench profile` prints (kb_app_profile_render).  A bar row fits the
 * pane (name, bar, value), never wraps; a counter that is missing has no
 * bar (the tables below say n/a and why). */

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

static void metrics(const kb_tui__view *v, kb_buf *out)
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

/* ===== the pane's text ===== */

void kb_tui__pane_text(const kb_tui__view *v, kb_buf *out)
{
	kb_err err = {0};
	const kb_tui__result *r = v->r;
	switch (v->pane) {
	case KB_TUI__PANE_HELP: help(v->width, out); return;
	case KB_TUI__PANE_VARIANTS: kb_tui__variants_text(v, out); return;
	case KB_TUI__PANE_DIFF: kb_tui__diff_text(v, out); return;
	case KB_TUI__PANE_LLM: kb_buf_cat(out, "(the conversation: tui_llm.c)\n"); return;
	case KB_TUI__PANE_ROOFLINE: {
		/* the plot; its title, axes and legend take about 14 rows */
		int rows = v->height - 14 < 8 ? 8 : v->height - 14 > 30 ? 30 : v->height - 14;
		char cur[16] = "";
		int n = v->variant ? v->variant : kb_tui__step_variant(v);
		if (n)
			snprintf(cur, sizeof cur, "v%d", n);
		if (kb_app_roofline(v->path, cur[0] ? cur : NULL, v->width - 1, rows, out, &err) < 0)
			kb_buf_catf(out, "%s\n", err.msg);
		return;
	}
	}
	if (v->pane == KB_TUI__PANE_CUDA && kb_compile_source_kind(v->path) != KB_SRC_TILE) {
		kb_buf_cat(out, "No generated CUDA: only .tile files are lowered to CUDA.\n");
		return;
	}
	if (!r && !(v->replay && v->pane == KB_TUI__PANE_SUMMARY)) {
		kb_buf_cat(out, "Compiling...\n");
		return;
	}
	switch (v->pane) {
	case KB_TUI__PANE_SUMMARY:
		if (v->replay) {
			headed(v, v->replay, out);
			kb_buf_cat(out, "(the other panes show a fresh compile of this text)\n");
		} else {
			summary(v, r, out);
		}
		break;
	case KB_TUI__PANE_CUDA: generated(r, v->cursor_line, out); break;
	case KB_TUI__PANE_SASS: sass(r, v->cursor_line, out); break;
	case KB_TUI__PANE_PTX:
		kb_buf_cat(out, r->unit.build.ptx ? r->unit.build.ptx : "(no PTX: the file did not compile)\n");
		break;
	case KB_TUI__PANE_OCCUPANCY: occupancy(r, out); break;
	case KB_TUI__PANE_METRICS: metrics(v, out); break;
	}
}
