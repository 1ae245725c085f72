/*
 * editor_utf8.c - the editor's view of the bytes of a line as UTF-8: code
 * points, the units the cursor steps over (a code point with its combining
 * marks, variation selectors and ZWJ sequences) and their display columns
 * (tabs to tab stops, wide and zero-width characters).  Pure functions of
 * a line's bytes and the tab width; no edits, no cursor.
 *
 * Invariants: any bytes are accepted (an invalid byte decodes as one unit,
 * U+FFFD); a unit never splits a code point; columns come from wcwidth, or
 * a built-in table when the locale does not know a code point.
 */
#include "tui_int.h"

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
