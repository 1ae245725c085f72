/*
 * tui.h - kbench-tui, the interactive workbench (architecture.md §7): an
 * editor pane beside result panes (Summary, SASS, PTX, Occupancy, Variants,
 * Diff, Metrics, Help), a live loop that compiles and runs on every save
 * without ever blocking the keyboard, and every variant kept in the session.
 * It never touches the GPU itself: runs go through `kbench serve`.
 */
#ifndef KB_TUI_H
#define KB_TUI_H

#include "../core/kb.h"

/* ===== tui.c ===== */

typedef struct {
	const char *path;      /* the kernel file */
	const char *arch;      /* NULL: the GPU's, else sm_90 */
	const char **options;  /* --option: compiler options after the spec's */
	int noptions;
	bool watch;            /* also follow edits made by other editors */
	bool no_run;           /* compile only (also when there is no GPU) */
	double timeout_ms;     /* a GPU phase longer than this is a hang (0: 10 s) */
	const char *replay;    /* step through this session (id or directory),
				* read-only; path is then unused */
} kb_tui_opts;

/* Runs the workbench until the user quits; the terminal is restored on
 * every way out. Returns the process exit status. */
int kb_tui_run(const kb_tui_opts *o);

/* ===== layout.c ===== */

typedef struct {
	int y, x, h, w;
} kb_rect;

/* Where everything goes on a rows x cols screen: a title line, the editor
 * on the left (split_pct of the width, clamped), the tab bar and the result
 * pane on the right, the status line at the bottom. Pure: no curses.
 * Returns false when the screen is below 80x24 (then only `status` is set). */
typedef struct {
	kb_rect title, editor, tabs, pane, status;
} kb_layout;

bool kb_tui_layout(int rows, int cols, int split_pct, kb_layout *out);

#endif
