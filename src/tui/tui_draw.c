/*
 * tui_draw.c - one frame of the workbench: the colour pairs (one per
 * highlight class), the editor (line numbers, the text from the scrolled
 * column with its highlight spans and selection, a compile error after its
 * line) and the frame itself: layout, title, editor, tabs, pane, status,
 * then the cursor.  Feeds the editor's edit events to the highlighter
 * before drawing.  The pane and the status lines are drawn by tui_pane.c
 * and tui_status.c.
 *
 * Invariants: drawing changes no state but the scroll position (kept so
 * the cursor is on screen) and the highlighter's tree; below 80x24 only a
 * line saying so is drawn.
 */
#include "tui_int.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Lines with an error diagnostic of the last compile. */
const kb_diag *kb_tui__diag_on(const kb_tui__ui *t, int line)
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
	const kb_diag *d = kb_tui__diag_on(t, line + 1);
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
	kb_tui__draw_title(t);
	draw_editor(t);
	kb_tui__draw_tabs(t);
	kb_tui__draw_pane(t);
	kb_tui__draw_status(t);
	int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
	gutter = gutter < 5 ? 5 : gutter;
	if (t->prompt != KB_TUI__P_NONE)
		curs_set(1);
	else
		move(t->L.editor.y + t->ed->cur.line - t->top,
		     t->L.editor.x + gutter + kb_tui__ed_x_of(t->ed, t->ed->cur.line, t->ed->cur.col) - t->left);
	refresh();
}
