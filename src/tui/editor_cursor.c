/*
 * editor_cursor.c - where the editor's cursor can be and how it moves.
 * The bytes of a line as UTF-8: code points, the units the cursor steps
 * over (a code point with its combining marks, variation selectors and ZWJ
 * sequences) and their display columns (tabs to tab stops, wide and
 * zero-width characters), pure functions of a line's bytes and the tab
 * width.  Then the cursor and the selection: motions (by unit, word, line,
 * page, to the line's first non-blank or the buffer's ends), the preferred
 * display column kept by vertical moves, placing the cursor, and the
 * selection between the anchor and the cursor.  Changes no text.
 *
 * Invariants: any bytes are accepted (an invalid byte decodes as one unit,
 * U+FFFD); a unit never splits a code point; columns come from wcwidth, or
 * a built-in table when the locale does not know a code point; the cursor
 * stays inside the buffer on a code point start; the selection is
 * [anchor, cur] in either order and counts only when non-empty; any
 * motion ends a typing group.
 */
#include "tui_int.h"

#include <ctype.h>
#include <wchar.h>

/* ===== UTF-8 and display width ===== */

int kb_tui__utf8_decode(const char *s, int n, unsigned *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	int k;
	unsigned c, min;
	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xE0) == 0xC0)
		k = 2, c = u[0] & 0x1Fu, min = 0x80;
	else if ((u[0] & 0xF0) == 0xE0)
		k = 3, c = u[0] & 0x0Fu, min = 0x800;
	else if ((u[0] & 0xF8) == 0xF0)
		k = 4, c = u[0] & 0x07u, min = 0x10000;
	else
		goto bad;
	if (k > n)
		goto bad;
	for (int i = 1; i < k; i++) {
		if ((u[i] & 0xC0) != 0x80)
			goto bad;
		c = (c << 6) | (u[i] & 0x3Fu);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		goto bad;
	*cp = c;
	return k;
bad:
	*cp = 0xFFFD;
	return 1;
}

/* Used when the locale's wcwidth does not know a code point. */
static int fallback_width(unsigned cp)
{
	static const unsigned zero[][2] = {
		{0x0300, 0x036F}, {0x200B, 0x200F}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
		{0xFE20, 0xFE2F}, {0xE0100, 0xE01EF},
	};
	static const unsigned wide[][2] = {
		{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF},
		{0x4E00, 0x9FFF}, {0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
		{0xFE30, 0xFE4F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
		{0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(zero); i++)
		if (cp >= zero[i][0] && cp <= zero[i][1])
			return 0;
	for (size_t i = 0; i < KB_ARRAY_LEN(wide); i++)
		if (cp >= wide[i][0] && cp <= wide[i][1])
			return 2;
	return 1;
}

int kb_tui__cp_width(unsigned cp)
{
	if (cp < 0x20 || cp == 0x7F)
		return 2;
	if (cp < 0x7F)
		return 1;
	int w = wcwidth((wchar_t)cp);
	return w >= 0 ? w : fallback_width(cp);
}

/* Code points that belong to the unit before them: combining marks,
 * variation selectors, ZWJ, emoji skin tones. */
static bool is_extender(unsigned cp)
{
	if (cp == 0x200D || (cp >= 0x1F3FB && cp <= 0x1F3FF))
		return true;
	return cp >= 0x300 && kb_tui__cp_width(cp) == 0;
}

bool kb_tui__ed_is_cont(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

/* The start of the code point that ends at col (> 0). */
int kb_tui__ed_cp_before(const char *s, int col)
{
	int p = col - 1;
	while (p > 0 && col - p < 4 && kb_tui__ed_is_cont(s[p]))
		p--;
	unsigned cp;
	if (p < col - 1 && p + kb_tui__utf8_decode(s + p, col - p, &cp) != col)
		return col - 1;
	return p;
}

/* The end of the unit (code point plus extenders) that starts at col. */
int kb_tui__ed_next_unit(const char *s, int len, int col)
{
	unsigned cp;
	bool join = false;
	col += kb_tui__utf8_decode(s + col, len - col, &cp);
	while (col < len) {
		int k = kb_tui__utf8_decode(s + col, len - col, &cp);
		if (!join && !is_extender(cp))
			break;
		join = cp == 0x200D;
		col += k;
	}
	return col;
}

/* The start of the unit that ends at col (> 0). */
int kb_tui__ed_prev_unit(const char *s, int len, int col)
{
	unsigned cp;
	for (;;) {
		col = kb_tui__ed_cp_before(s, col);
		if (col == 0)
			return 0;
		kb_tui__utf8_decode(s + col, len - col, &cp);
		if (is_extender(cp))
			continue;
		int p = kb_tui__ed_cp_before(s, col);
		kb_tui__utf8_decode(s + p, len - p, &cp);
		if (cp != 0x200D)
			return col;
		col = p;
	}
}

/* The display column after the unit s[a..b) drawn at column x. */
static int unit_x(const char *s, int a, int b, int x, int tab)
{
	if (s[a] == '\t')
		return (x / tab + 1) * tab;
	unsigned cp;
	while (a < b) {
		a += kb_tui__utf8_decode(s + a, b - a, &cp);
		x += kb_tui__cp_width(cp);
	}
	return x;
}

int kb_tui__ed_x_of(const kb_tui__ed *ed, int line, int col)
{
	int len;
	const char *s = kb_tui__ed_line(ed, line, &len);
	int x = 0;
	for (int p = 0; p < col && p < len;) {
		int q = kb_tui__ed_next_unit(s, len, p);
		x = unit_x(s, p, q, x, ed->tab_width);
		p = q;
	}
	return x;
}

int kb_tui__ed_col_at_x(const kb_tui__ed *ed, int line, int x)
{
	int len;
	const char *s = kb_tui__ed_line(ed, line, &len);
	int cx = 0, p = 0;
	while (p < len) {
		int q = kb_tui__ed_next_unit(s, len, p);
		int nx = unit_x(s, p, q, cx, ed->tab_width);
		if (nx > x)
			break;
		cx = nx;
		p = q;
	}
	return p;
}

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
