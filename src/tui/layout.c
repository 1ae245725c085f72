/*
 * layout.c - the screen layout as a pure function of the terminal size
 * (style rule 17), so it is tested at many sizes without a terminal.
 * Invariants: rectangles never overlap, stay on screen, and the editor and
 * the result pane each keep a usable width.
 */
#include "tui.h"

#define MIN_ROWS 24
#define MIN_COLS 80
#define MIN_PANE 34   /* narrowest result pane that still shows a table */
#define MIN_EDITOR 40 /* narrowest editor that still shows code */

bool kb_tui_layout(int rows, int cols, int split_pct, kb_layout *o)
{
	*o = (kb_layout){0};
	o->status = (kb_rect){rows > 0 ? rows - 1 : 0, 0, rows > 0 ? 1 : 0, cols > 0 ? cols : 0};
	if (rows < MIN_ROWS || cols < MIN_COLS)
		return false;
	if (split_pct < 30)
		split_pct = 30;
	if (split_pct > 75)
		split_pct = 75;
	int ew = cols * split_pct / 100;
	if (ew < MIN_EDITOR)
		ew = MIN_EDITOR;
	if (cols - ew - 1 < MIN_PANE)
		ew = cols - 1 - MIN_PANE;
	int body = rows - 2; /* minus the title and the status line */
	o->title = (kb_rect){0, 0, 1, cols};
	o->editor = (kb_rect){1, 0, body, ew};
	/* one column of separator between the editor and the right side */
	o->tabs = (kb_rect){1, ew + 1, 1, cols - ew - 1};
	o->pane = (kb_rect){2, ew + 1, body - 1, cols - ew - 1};
	return true;
}
