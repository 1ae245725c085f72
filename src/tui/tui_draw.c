/*
 * tui_draw.c - one frame of the workbench: the colour pairs (one per
 * highlight class), the editor (line numbers, the text from the scrolled
 * column with its highlight spans and selection, a compile error after its
 * line), the title line (the file, dirty mark, verdict and worker phase,
 * or the replay step), the status line (the cursor place, the keys and one
 * of the prompt, the latest message or the error on the cursor's line) and
 * the frame itself: layout, title, editor, tabs, pane, status, then the
 * cursor.  Feeds the editor's edit events to the highlighter before
 * drawing.  The tabs and the pane are drawn by tui_pane.c.
 *
 * Invariants: drawing changes no state but the scroll position (kept so
 * the cursor is on screen) and the highlighter's tree; below 80x24 only a
 * line saying so is drawn; a message never hides a prompt.
 */
#include "tui_int.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ---- highlighting -------------------------------------------------------- */

static int ed_nrows(void *ctx)
{
	return ((kb_tui__ed *)ctx)->nlines;
}

static const char *ed_row(void *ctx, int r, int *len)
{
	return kb_tui__ed_line(ctx, r, len);
}

/* Hands the editor's edits to the highlighter (incremental re-parse). */
static void sync_highlight(kb_tui__ui *t)
{
	if (!t->hl)
		return;
	int n;
	bool all;
	const kb_tui__ed_edit *e = kb_tui__ed_edits(t->ed, &n, &all);
	if (all) {
		kb_tui__hl_reset(t->hl);
	} else {
		for (int i = 0; i < n; i++) {
			TSInputEdit te = {
				(uint32_t)e[i].start_byte, (uint32_t)e[i].old_end_byte,
				(uint32_t)e[i].new_end_byte,
				{(uint32_t)e[i].start_point.line, (uint32_t)e[i].start_point.col},
				{(uint32_t)e[i].old_end_point.line, (uint32_t)e[i].old_end_point.col},
				{(uint32_t)e[i].new_end_point.line, (uint32_t)e[i].new_end_point.col},
			};
			kb_tui__hl_edit(t->hl, &te);
		}
	}
	kb_tui__ed_edits_clear(t->ed);
}

/* ---- drawing ---------------------------------------------------------------- */

static int hl_pair(kb_hl_class c)
{
	return c == KB_HL_NONE ? KB_TUI__C_NORMAL : KB_TUI__C_HL_BASE + (int)c;
}

void kb_tui__init_colors(kb_tui__ui *t)
{
	const char *nc = getenv("NO_COLOR");
	t->color = has_colors() && !(nc && *nc);
	if (!t->color)
		return;
	start_color();
	use_default_colors();
	bool rich = COLORS >= 256;
	init_pair(KB_TUI__C_NORMAL, -1, -1);
	init_pair(KB_TUI__C_TITLE, COLOR_BLACK, COLOR_CYAN);
	init_pair(KB_TUI__C_STATUS, COLOR_BLACK, COLOR_WHITE);
	init_pair(KB_TUI__C_LINENO, rich ? 244 : COLOR_BLUE, -1);
	init_pair(KB_TUI__C_TAB, -1, -1);
	init_pair(KB_TUI__C_TAB_ON, COLOR_BLACK, COLOR_YELLOW);
	init_pair(KB_TUI__C_ERROR, COLOR_WHITE, COLOR_RED);
	init_pair(KB_TUI__C_SEL, COLOR_BLACK, rich ? 153 : COLOR_CYAN);
	init_pair(KB_TUI__C_MARK, COLOR_BLACK, rich ? 229 : COLOR_YELLOW);
	init_pair(KB_TUI__C_GOOD, rich ? 28 : COLOR_GREEN, -1);
	init_pair(KB_TUI__C_BAD, rich ? 160 : COLOR_RED, -1);
	static const short fg[KB_HL__COUNT][2] = { /* 256-colour, 16-colour */
		[KB_HL_KEYWORD] = {127, COLOR_MAGENTA}, [KB_HL_TYPE] = {31, COLOR_CYAN},
		[KB_HL_FUNCTION] = {25, COLOR_BLUE}, [KB_HL_STRING] = {28, COLOR_GREEN},
		[KB_HL_NUMBER] = {130, COLOR_YELLOW}, [KB_HL_COMMENT] = {245, COLOR_BLUE},
		[KB_HL_SPEC] = {166, COLOR_RED}, [KB_HL_PREPROC] = {97, COLOR_MAGENTA},
		[KB_HL_CONSTANT] = {130, COLOR_YELLOW}, [KB_HL_BUILTIN] = {30, COLOR_CYAN},
		[KB_HL_PROPERTY] = {24, COLOR_BLUE}, [KB_HL_OPERATOR] = {-1, -1},
		[KB_HL_LABEL] = {94, COLOR_YELLOW}, [KB_HL_REGISTER] = {31, COLOR_CYAN},
	};
	for (int c = 1; c < KB_HL__COUNT; c++)
		init_pair((short)(KB_TUI__C_HL_BASE + c), fg[c][rich ? 0 : 1], -1);
}

/* The error diagnostic of the last compile on 1-based line, or NULL. */
static const kb_diag *diag_on(const kb_tui__ui *t, int line)
{
	if (!t->res || !t->res->compiled)
		return NULL;
	for (int i = 0; i < t->res->unit.diags.n; i++)
		if (t->res->unit.diags.v[i].line == line && t->res->unit.diags.v[i].level == KB_DIAG_ERROR)
			return &t->res->unit.diags.v[i];
	return NULL;
}

static bool in_selection(const kb_tui__ui *t, int line, int col)
{
	kb_tui__ed_pos a, b;
	if (!kb_tui__ed_selection(t->ed, &a, &b))
		return false;
	if (line < a.line || line > b.line)
		return false;
	if (line == a.line && col < a.col)
		return false;
	return !(line == b.line && col >= b.col);
}

static int span_class(const kb_hl_spans *sp, int row, int col)
{
	for (int i = 0; i < sp->n; i++)
		if (sp->v[i].row == row && col >= sp->v[i].start && col < sp->v[i].end)
			return hl_pair(sp->v[i].cls);
	return KB_TUI__C_NORMAL;
}

/* One editor row: line number, then the text from display column t->left. */
static void draw_line(kb_tui__ui *t, int y, int line, int gutter, const kb_hl_spans *sp)
{
	kb_rect r = t->L.editor;
	int len;
	const char *s = kb_tui__ed_line(t->ed, line, &len);
	const kb_diag *d = diag_on(t, line + 1);
	attron(COLOR_PAIR(d ? KB_TUI__C_ERROR : KB_TUI__C_LINENO));
	mvprintw(y, r.x, "%*d ", gutter - 1, line + 1);
	attroff(COLOR_PAIR(d ? KB_TUI__C_ERROR : KB_TUI__C_LINENO));
	int x = 0, width = r.w - gutter;
	for (int col = 0; col < len;) {
		unsigned cp;
		int nb = kb_tui__utf8_decode(s + col, len - col, &cp);
		int w = cp == '\t' ? t->ed->tab_width - x % t->ed->tab_width : kb_tui__cp_width(cp);
		if (x - t->left + w > width)
			break;
		if (x >= t->left) {
			int pair = in_selection(t, line, col) ? KB_TUI__C_SEL
								 : span_class(sp, line, col);
			attron(COLOR_PAIR(pair));
			if (cp == '\t' || cp < 32) {
				mvprintw(y, r.x + gutter + x - t->left, "%*s", w, "");
			} else {
				wchar_t wc[2] = {(wchar_t)cp, 0};
				mvaddwstr(y, r.x + gutter + x - t->left, wc);
			}
			attroff(COLOR_PAIR(pair));
		}
		x += w;
		col += nb;
	}
	/* the error itself, after the line's text where it fits */
	int at = (x > t->left ? x - t->left : 0) + 2;
	if (d && at + 4 < width) {
		attron(COLOR_PAIR(KB_TUI__C_ERROR));
		mvaddwstr(y, r.x + gutter + at, L"\u25c0 ");
		mvaddnstr(y, r.x + gutter + at + 2, d->msg, width - at - 2);
		attroff(COLOR_PAIR(KB_TUI__C_ERROR));
	}
}

static void scroll_to_cursor(kb_tui__ui *t, int gutter)
{
	int h = t->L.editor.h, w = t->L.editor.w - gutter;
	if (t->ed->cur.line < t->top)
		t->top = t->ed->cur.line;
	if (t->ed->cur.line >= t->top + h)
		t->top = t->ed->cur.line - h + 1;
	int x = kb_tui__ed_x_of(t->ed, t->ed->cur.line, t->ed->cur.col);
	if (x < t->left)
		t->left = x;
	if (x >= t->left + w - 1)
		t->left = x - w + 2;
}

static void draw_editor(kb_tui__ui *t)
{
	int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
	gutter = gutter < 5 ? 5 : gutter;
	scroll_to_cursor(t, gutter);
	kb_hl_spans sp = {0};
	kb_hl_text text = {t->ed, ed_nrows, ed_row};
	if (t->hl && t->color)
		kb_tui__hl_spans(t->hl, &text, t->top, t->L.editor.h, &sp, NULL);
	for (int i = 0; i < t->L.editor.h && t->top + i < t->ed->nlines; i++)
		draw_line(t, t->L.editor.y + i, t->top + i, gutter, &sp);
	kb_tui__hl_spans_free(&sp);
	/* the separator */
	for (int y = t->L.editor.y; y < t->L.editor.y + t->L.editor.h; y++)
		mvaddwstr(y, t->L.editor.x + t->L.editor.w, L"\u2502");
}

/* ---- the title and status lines ---------------------------------------------- */

/* The title line: the file (or the replay's step), dirty mark, verdict,
 * what the worker does; the headline where the Summary is not shown. */
static void draw_title(kb_tui__ui *t)
{
	attron(COLOR_PAIR(KB_TUI__C_TITLE));
	mvhline(0, 0, ' ', COLS);
	char state[128] = "idle";
	pthread_mutex_lock(&t->w.lock);
	if (t->w.busy || t->w.has_next)
		snprintf(state, sizeof state, "%s...", t->w.phase[0] ? t->w.phase : "queued");
	pthread_mutex_unlock(&t->w.lock);
	const char *verdict = t->res && t->res->run ? kb_app_run_verdict(t->res->run)
			      : t->res && t->res->compiled ? (t->res->unit.status == 0 ? "compiled" : "errors")
			      : "";
	/* the headline where the Summary (which opens with it) is not shown */
	const kb_app_headline *h = t->pane != KB_TUI__PANE_SUMMARY ? kb_tui__headline(t) : NULL;
	kb_buf head = KB_BUF_INIT;
	if (t->steps)
		mvprintw(0, 0, " kbench-tui  replay %s  step %d/%d  %s  ", t->o.replay, t->step + 1,
			 (int)json_array_size(t->steps), t->o.path);
	else
		mvprintw(0, 0, " kbench-tui  %s%s  ", t->o.path, kb_tui__ed_dirty(t->ed) ? " *" : "");
	int x = getcurx(stdscr), room = COLS - x - (int)strlen(state) - 2;
	if (h && room >= 20) {
		kb_app_headline_text(h, room, false, &head);
		mvaddstr(0, x, head.s ? head.s : "");
		printw("  %s", state);
	} else if (t->steps) {
		printw("%s", state);
	} else {
		printw("[%s]  %s", verdict, state);
	}
	kb_buf_free(&head);
	attroff(COLOR_PAIR(KB_TUI__C_TITLE));
}

/* The status line: the cursor's place and the keys, with one of the
 * prompt, the latest message or the error on the cursor's line.  A message
 * never hides a prompt; the keys stay beside a message when both fit. */
static void draw_status(kb_tui__ui *t)
{
	attron(COLOR_PAIR(KB_TUI__C_STATUS));
	mvhline(LINES - 1, 0, ' ', COLS);
	static const char *const asks[] = {"", "find: ", "replace: ", "with: ", "go to line: ",
					  "unsaved edits: quit anyway? (y/n) ",
					  "a recovered buffer is newer than the file: use it? (y/n) ",
					  "ask the model (Enter alone: how can this be faster?): "};
	const kb_diag *d = diag_on(t, t->ed->cur.line + 1);
	char keys[160];
	snprintf(keys, sizeof keys, "%d:%d  %s", t->ed->cur.line + 1, t->ed->cur.col + 1,
		 t->steps ? "replay: n/p step  < > first/last  F2/F3 panes  ^F find  F1 help  ^Q quit"
			  : "^S save+run  F5 run  F8 profile  F2/F3 panes  ^Z undo  ^F find  F1 help  ^Q quit");
	char said[512] = "";
	if (t->prompt != KB_TUI__P_NONE)
		snprintf(said, sizeof said, "%s%s", asks[t->prompt], t->input.s ? t->input.s : "");
	else if (kb_now_ms() < t->msg_until)
		snprintf(said, sizeof said, "%s", t->msg);
	else if (d)
		snprintf(said, sizeof said, "%d:%d: %s", d->line, d->col, d->msg);
	if (!said[0])
		mvprintw(LINES - 1, 0, " %s", keys);
	else if (t->prompt == KB_TUI__P_NONE && (int)(strlen(said) + strlen(keys)) + 6 <= COLS)
		mvprintw(LINES - 1, 0, " %s  |  %s", said, keys); /* a message, and the keys still */
	else
		mvprintw(LINES - 1, 0, " %s", said);
	attroff(COLOR_PAIR(KB_TUI__C_STATUS));
}

/* ---- the frame ------------------------------------------------------------------ */

void kb_tui__draw(kb_tui__ui *t)
{
	erase();
	t->ok_size = kb_tui_layout(LINES, COLS, t->split, &t->L);
	if (!t->ok_size) {
		mvprintw(LINES / 2, 0, "kbench-tui needs at least 80x24 (now %dx%d)", COLS, LINES);
		refresh();
		return;
	}
	sync_highlight(t);
	draw_title(t);
	draw_editor(t);
	kb_tui__draw_tabs(t);
	kb_tui__draw_pane(t);
	draw_status(t);
	int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
	gutter = gutter < 5 ? 5 : gutter;
	if (t->prompt != KB_TUI__P_NONE)
		curs_set(1);
	else
		move(t->L.editor.y + t->ed->cur.line - t->top,
		     t->L.editor.x + gutter + kb_tui__ed_x_of(t->ed, t->ed->cur.line, t->ed->cur.col) - t->left);
	refresh();
}
