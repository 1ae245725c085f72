/*
 * panes.c - the text of each result pane, made from the last compile and
 * run: Summary (the same text as `kbench compile` / `kbench run`), SASS
 * (the chosen kernel, with the lines of the editor's cursor line marked),
 * PTX, Occupancy (every limit and which binds), Metrics (counters when
 * profiled), Roofline (the session's variants against this GPU's ceilings),
 * Variants (`kbench log`), Diff (the newest two variants), Help.
 * Pure text in a kb_buf; drawing is tui.c's.
 */
#include "tui_int.h"

#include <stdio.h>
#include <string.h>

const char *const kb_tui__pane_names[KB_TUI__NPANES] = {
	"Summary", "SASS", "PTX", "Occupancy", "Metrics", "Roofline", "Variants", "Diff", "Help",
};

static void summary(const kb_tui__result *r, kb_buf *out)
{
	if (r->error[0])
		kb_buf_catf(out, "error: %s\n\n", r->error);
	if (r->compiled) {
		kb_diag_render(&r->unit.diags, out, false);
		kb_app_compile_render(&r->unit, out);
	}
	if (r->run) {
		kb_buf_cat(out, "\n");
		kb_app_run_render(r->run, out);
		if (r->deltas)
			kb_buf_cat(out, r->deltas);
	} else if (r->compiled && r->unit.status == 0) {
		kb_buf_cat(out, "\n(not run: running needs a GPU; this pane shows the compile)\n");
	}
	if (r->note[0])
		kb_buf_catf(out, "\n%s\n", r->note);
}

/* The SASS of the spec's kernel; instructions of source line `line` get a
 * '>' in the margin. */
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
		kb_buf_catf(out, "%s\n", fn->name);
		int n = kb_compile_sass_body_len(fn);
		for (int i = 0; i < n; i++) {
			const kb_sass_insn *in = &fn->v[i];
			kb_buf_catf(out, "%c%04x %4d  %s%s%s %s\n", in->line == line ? '>' : ' ', in->addr,
				    in->line, in->pred ? in->pred : "", in->pred ? " " : "", in->opcode,
				    in->operands ? in->operands : "");
		}
	}
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
	}
	if (!out->len)
		kb_buf_cat(out, "No occupancy: the spec has no `//! launch` line (block size).\n");
}

static void help(kb_buf *out)
{
	kb_buf_cat(out,
		   "Keys\n"
		   "  Ctrl-S        save, compile, check and time (in the background)\n"
		   "  F5            compile and run again without saving\n"
		   "  Ctrl-Q        quit (asks when there are unsaved edits)\n"
		   "  F1            this help\n"
		   "  F2 / F3       previous / next result pane (or click a tab)\n"
		   "  Alt-1..9      pane by number\n"
		   "  Ctrl-Z / Ctrl-Y   undo / redo\n"
		   "  Shift+arrows  select;  Ctrl-A select all\n"
		   "  Ctrl-C / Ctrl-X / Ctrl-V   copy / cut / paste\n"
		   "  Ctrl-F        find (Enter: next);  Ctrl-R replace all\n"
		   "  Ctrl-G        go to line\n"
		   "  Ctrl-Left/Right   word;  Home/End;  PgUp/PgDn;  Ctrl-Home/End\n"
		   "  F6 / F7       move the split left / right\n"
		   "\n"
		   "Every compile and run is kept as a variant in the session\n"
		   "(`kbench log`, `kbench diff vA vB`, `kbench report`).\n"
		   "Edits are autosaved to a recovery file every 2 s.\n");
}

void kb_tui__pane_text(int pane, const kb_tui__result *r, int cursor_line, int width,
		       int height, kb_buf *out)
{
	kb_err err = {0};
	const char *path = r && r->unit.src.path ? r->unit.src.path : NULL;
	if (pane == KB_TUI__PANE_HELP)
		return help(out);
	if (pane == KB_TUI__PANE_ROOFLINE) {
		/* the plot; its title, axes and legend take about 14 rows */
		int rows = height - 14 < 8 ? 8 : height - 14 > 30 ? 30 : height - 14;
		if (kb_app_roofline(path, width - 1, rows, out, &err) < 0)
			kb_buf_catf(out, "%s\n", err.msg);
		return;
	}
	if (pane == KB_TUI__PANE_VARIANTS || pane == KB_TUI__PANE_DIFF) {
		int rc = pane == KB_TUI__PANE_VARIANTS
			 ? kb_app_log(path, out, &err)
			 : kb_app_diff("v1", "v2", path, KB_DIFF_SOURCE | KB_DIFF_NUMBERS, out, &err);
		if (rc < 0)
			kb_buf_catf(out, "%s\n", err.msg);
		return;
	}
	if (!r) {
		kb_buf_cat(out, "Compiling...\n");
		return;
	}
	switch (pane) {
	case KB_TUI__PANE_SUMMARY: summary(r, out); break;
	case KB_TUI__PANE_SASS: sass(r, cursor_line, out); break;
	case KB_TUI__PANE_PTX:
		kb_buf_cat(out, r->unit.build.ptx ? r->unit.build.ptx : "(no PTX: the file did not compile)\n");
		break;
	case KB_TUI__PANE_OCCUPANCY: occupancy(r, out); break;
	case KB_TUI__PANE_METRICS:
		if (r->run)
			kb_app_profile_render(r->run, out);
		if (!r->run || !json_object_get(r->run, "counters"))
			kb_buf_cat(out, "No counters: `kbench profile FILE` collects them (needs a GPU).\n");
		break;
	}
}
