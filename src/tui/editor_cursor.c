/*
 * editor_cursor.c - the editor's cursor and selection: motions (by unit,
 * word, line, page, to the line's first non-blank or the buffer's ends),
 * the preferred display column kept by vertical moves, placing the cursor,
 * and the selection between the anchor and the cursor.  Changes no text.
 *
 * Invariants: the cursor stays inside the buffer on a code point start;
 * the selection is [anchor, cur] in either order and counts only when
 * non-empty; any motion ends a typing group.
 */
#include "tui_int.h"

#include <ctype.h>

/* ===== Cursor and movement ===== */

/* pos clamped into the buffer and onto a code point start. */
kb_tui__ed_pos kb_tui__ed_clamp_pos(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	p.line = p.line < 0 ? 0 : p.line >= ed->nlines ? ed->nlines - 1 : p.line;
	const kb_tui__ed_row *l = &ed->lines[p.line];
	p.col = p.col < 0 ? 0 : p.col > l->len ? l->len : p.col;
	while (p.col > 0 && p.col < l->len && kb_tui__ed_is_cont(l->s[p.col]))
		p.col--;
	return p;
}

static int word_class(unsigned char c)
{
	if (c == ' ' || c == '\t')
		return 0;
	return isalnum(c) || c == '_' || c >= 0x80 ? 1 : 2;
}

static kb_tui__ed_pos word_right(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	const kb_tui__ed_row *l = &ed->lines[p.line];
	if (p.col == l->len)
		return p.line + 1 < ed->nlines ? (kb_tui__ed_pos){p.line + 1, 0} : p;
	while (p.col < l->len && word_class((unsigned char)l->s[p.col]) == 0)
		p.col++;
	if (p.col == l->len)
		return p;
	int c = word_class((unsigned char)l->s[p.col]);
	while (p.col < l->len && word_class((unsigned char)l->s[p.col]) == c)
		p.col++;
	return p;
}

static kb_tui__ed_pos word_left(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	if (p.col == 0)
		return p.line > 0 ? (kb_tui__ed_pos){p.line - 1, ed->lines[p.line - 1].len} : p;
	const char *s = ed->lines[p.line].s;
	while (p.col > 0 && word_class((unsigned char)s[p.col - 1]) == 0)
		p.col--;
	if (p.col == 0)
		return p;
	int c = word_class((unsigned char)s[p.col - 1]);
	while (p.col > 0 && word_class((unsigned char)s[p.col - 1]) == c)
		p.col--;
	return p;
}

/* The number of blanks (spaces, tabs) that s[0..len) starts with. */
int kb_tui__ed_blanks(const char *s, int len)
{
	int k = 0;
	while (k < len && (s[k] == ' ' || s[k] == '\t'))
		k++;
	return k;
}

int kb_tui__ed_first_nonblank(const kb_tui__ed_row *l)
{
	return kb_tui__ed_blanks(l->s, l->len);
}

static kb_tui__ed_pos step_left(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	const kb_tui__ed_row *l = &ed->lines[p.line];
	if (p.col > 0)
		return (kb_tui__ed_pos){p.line, kb_tui__ed_prev_unit(l->s, l->len, p.col)};
	return p.line > 0 ? (kb_tui__ed_pos){p.line - 1, ed->lines[p.line - 1].len} : p;
}

kb_tui__ed_pos kb_tui__ed_step_right(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	const kb_tui__ed_row *l = &ed->lines[p.line];
	if (p.col < l->len)
		return (kb_tui__ed_pos){p.line, kb_tui__ed_next_unit(l->s, l->len, p.col)};
	return p.line + 1 < ed->nlines ? (kb_tui__ed_pos){p.line + 1, 0} : p;
}

/* Where a horizontal motion takes the cursor. */
static kb_tui__ed_pos target(const kb_tui__ed *ed, kb_tui__ed_motion m)
{
	kb_tui__ed_pos p = ed->cur;
	const kb_tui__ed_row *l = &ed->lines[p.line];
	switch (m) {
	case KB_TUI__ED_LEFT: return step_left(ed, p);
	case KB_TUI__ED_RIGHT: return kb_tui__ed_step_right(ed, p);
	case KB_TUI__ED_WORD_LEFT: return word_left(ed, p);
	case KB_TUI__ED_WORD_RIGHT: return word_right(ed, p);
	case KB_TUI__ED_HOME:
		p.col = p.col == kb_tui__ed_first_nonblank(l) ? 0 : kb_tui__ed_first_nonblank(l);
		return p;
	case KB_TUI__ED_END: return (kb_tui__ed_pos){p.line, l->len};
	case KB_TUI__ED_BUF_START: return (kb_tui__ed_pos){0, 0};
	case KB_TUI__ED_BUF_END:
		return (kb_tui__ed_pos){ed->nlines - 1, ed->lines[ed->nlines - 1].len};
	default: return p;
	}
}

/* Moves delta lines keeping the preferred display column; past the first
 * or last line it goes to that line's start or end. */
static void move_vertical(kb_tui__ed *ed, int delta)
{
	int l = ed->cur.line + delta;
	if (l < 0 || l >= ed->nlines) {
		ed->cur = l < 0 ? (kb_tui__ed_pos){0, 0}
				: (kb_tui__ed_pos){ed->nlines - 1, ed->lines[ed->nlines - 1].len};
		ed->pref_x = -1;
		return;
	}
	if (ed->pref_x < 0)
		ed->pref_x = kb_tui__ed_x_of(ed, ed->cur.line, ed->cur.col);
	ed->cur = (kb_tui__ed_pos){l, kb_tui__ed_col_at_x(ed, l, ed->pref_x)};
}

void kb_tui__ed_move(kb_tui__ed *ed, kb_tui__ed_motion m, int n, bool select)
{
	kb_tui__ed_pos a, b;
	ed->open_kind = KB_TUI__ED_GRP_NONE;
	if (n < 1)
		n = 1;
	if (!select && kb_tui__ed_selection(ed, &a, &b) &&
	    (m == KB_TUI__ED_LEFT || m == KB_TUI__ED_RIGHT)) {
		ed->cur = m == KB_TUI__ED_LEFT ? a : b;
		ed->sel = false;
		ed->pref_x = -1;
		return;
	}
	if (select && !ed->sel)
		ed->anchor = ed->cur;
	ed->sel = select;
	if (m == KB_TUI__ED_UP || m == KB_TUI__ED_PAGE_UP)
		move_vertical(ed, -n);
	else if (m == KB_TUI__ED_DOWN || m == KB_TUI__ED_PAGE_DOWN)
		move_vertical(ed, n);
	else {
		ed->cur = target(ed, m);
		ed->pref_x = -1;
	}
}

void kb_tui__ed_set_cursor(kb_tui__ed *ed, kb_tui__ed_pos pos, bool select)
{
	if (select && !ed->sel)
		ed->anchor = ed->cur;
	ed->sel = select;
	ed->cur = kb_tui__ed_clamp_pos(ed, pos);
	ed->pref_x = -1;
	ed->open_kind = KB_TUI__ED_GRP_NONE;
}

void kb_tui__ed_goto(kb_tui__ed *ed, int line, int col)
{
	kb_tui__ed_set_cursor(ed, (kb_tui__ed_pos){line - 1, col - 1}, false);
}

/* ===== Selection ===== */

void kb_tui__ed_select_all(kb_tui__ed *ed)
{
	ed->anchor = (kb_tui__ed_pos){0, 0};
	ed->cur = target(ed, KB_TUI__ED_BUF_END);
	ed->sel = true;
	ed->pref_x = -1;
	ed->open_kind = KB_TUI__ED_GRP_NONE;
}

bool kb_tui__ed_selection(const kb_tui__ed *ed, kb_tui__ed_pos *a, kb_tui__ed_pos *b)
{
	if (!ed->sel || kb_tui__ed_pos_eq(ed->anchor, ed->cur))
		return false;
	bool fwd = kb_tui__ed_pos_lt(ed->anchor, ed->cur);
	if (a)
		*a = fwd ? ed->anchor : ed->cur;
	if (b)
		*b = fwd ? ed->cur : ed->anchor;
	return true;
}

char *kb_tui__ed_selected_text(const kb_tui__ed *ed, size_t *n)
{
	kb_buf t = KB_BUF_INIT;
	kb_tui__ed_pos a, b;
	if (kb_tui__ed_selection(ed, &a, &b))
		kb_tui__ed_range_text(ed, a, b, &t);
	if (n)
		*n = t.len;
	return kb_buf_detach(&t);
}
