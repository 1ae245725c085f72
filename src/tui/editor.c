/*
 * editor.c - the text model of the editor pane: no ncurses, no I/O.
 *
 * Owns: the lines of one buffer, the cursor and selection, an internal
 * clipboard, undo/redo, auto-indent, search/replace and the queue of edit
 * events (tree-sitter TSInputEdit terms) the highlighter drains.  Does not
 * own: drawing, scrolling, key bindings, files on disk (callers pass text in
 * and take text out), the system clipboard.
 *
 * Invariants:
 *  - the text is lines[0..nlines-1] joined by '\n'; nlines >= 1, so a file
 *    ending in '\n' has an empty last line and load/save is byte-exact;
 *  - line endings: when the first line ending of a loaded file is CRLF,
 *    every "\r\n" is held as '\n' and written back as "\r\n" (crlf); else
 *    bytes are kept as they are (a stray '\r' stays in its line);
 *  - positions are (line, byte col) with col on a code point boundary; the
 *    bytes are UTF-8 but anything is accepted (a bad byte is one unit);
 *  - every change goes through edit_insert/edit_delete, which bump
 *    `changes` and queue one edit event, so undo/redo are reported too;
 *  - lines[i].off (the byte offset of line i) is correct for i < off_valid;
 *    an edit on line L only lowers off_valid to L+1, so typing on one line
 *    costs O(line length), and offsets are recomputed lazily on demand;
 *  - an undo step is the run of records with the same gid on the stack.
 */
#include "tui_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

enum { GRP_NONE, GRP_TYPE, GRP_BS, GRP_DEL };

static bool pos_eq(kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	return a.line == b.line && a.col == b.col;
}

static bool pos_lt(kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	return a.line < b.line || (a.line == b.line && a.col < b.col);
}

/* ===== Lines ===== */

static void line_reserve(kb_tui__ed_row *l, int need)
{
	if (need + 1 <= l->cap)
		return;
	int cap = l->cap ? l->cap : 16;
	while (cap < need + 1)
		cap *= 2;
	l->s = kb_xrealloc(l->s, (size_t)cap);
	l->cap = cap;
}

static void line_insert(kb_tui__ed_row *l, int col, const char *s, int n)
{
	if (n <= 0)
		return;
	line_reserve(l, l->len + n);
	memmove(l->s + col + n, l->s + col, (size_t)(l->len - col));
	memcpy(l->s + col, s, (size_t)n);
	l->len += n;
	l->s[l->len] = '\0';
}

/* The bytes of l from col on; never NULL (an empty line may hold none). */
static const char *row_at(const kb_tui__ed_row *l, int col)
{
	return l->s ? l->s + col : "";
}

static void line_erase(kb_tui__ed_row *l, int col, int n)
{
	if (n <= 0)
		return;
	memmove(l->s + col, l->s + col + n, (size_t)(l->len - col - n));
	l->len -= n;
	l->s[l->len] = '\0';
}

/* Opens k empty lines before index at. */
static void lines_open(kb_tui__ed *ed, int at, int k)
{
	kb_xgrow((void **)&ed->lines, &ed->cap, ed->nlines + k, sizeof(*ed->lines));
	memmove(ed->lines + at + k, ed->lines + at,
		(size_t)(ed->nlines - at) * sizeof(*ed->lines));
	memset(ed->lines + at, 0, (size_t)k * sizeof(*ed->lines));
	ed->nlines += k;
}

/* Frees and removes k lines from index at. */
static void lines_close(kb_tui__ed *ed, int at, int k)
{
	for (int i = at; i < at + k; i++)
		free(ed->lines[i].s);
	memmove(ed->lines + at, ed->lines + at + k,
		(size_t)(ed->nlines - at - k) * sizeof(*ed->lines));
	ed->nlines -= k;
}

static void off_touch(kb_tui__ed *ed, int line)
{
	if (ed->off_valid > line + 1)
		ed->off_valid = line + 1;
}

size_t kb_tui__ed_offset(kb_tui__ed *ed, kb_tui__ed_pos pos)
{
	if (ed->off_valid < 1) {
		ed->lines[0].off = 0;
		ed->off_valid = 1;
	}
	while (ed->off_valid <= pos.line) {
		kb_tui__ed_row *p = &ed->lines[ed->off_valid - 1];
		ed->lines[ed->off_valid++].off = p->off + (size_t)p->len + 1;
	}
	return ed->lines[pos.line].off + (size_t)pos.col;
}

const char *kb_tui__ed_line(const kb_tui__ed *ed, int i, int *len)
{
	i = i < 0 ? 0 : i >= ed->nlines ? ed->nlines - 1 : i;
	if (len)
		*len = ed->lines[i].len;
	return ed->lines[i].s ? ed->lines[i].s : "";
}

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

static bool is_cont(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

/* The start of the code point that ends at col (> 0). */
static int cp_before(const char *s, int col)
{
	int p = col - 1;
	while (p > 0 && col - p < 4 && is_cont(s[p]))
		p--;
	unsigned cp;
	if (p < col - 1 && p + kb_tui__utf8_decode(s + p, col - p, &cp) != col)
		return col - 1;
	return p;
}

/* The end of the unit (code point plus extenders) that starts at col. */
static int next_unit(const char *s, int len, int col)
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
static int prev_unit(const char *s, int len, int col)
{
	unsigned cp;
	for (;;) {
		col = cp_before(s, col);
		if (col == 0)
			return 0;
		kb_tui__utf8_decode(s + col, len - col, &cp);
		if (is_extender(cp))
			continue;
		int p = cp_before(s, col);
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
		int q = next_unit(s, len, p);
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
		int q = next_unit(s, len, p);
		int nx = unit_x(s, p, q, cx, ed->tab_width);
		if (nx > x)
			break;
		cx = nx;
		p = q;
	}
	return p;
}

/* ===== Primitive edits and events ===== */

static void note_edit(kb_tui__ed *ed, size_t start, size_t old_end, size_t new_end,
		      kb_tui__ed_pos sp, kb_tui__ed_pos op, kb_tui__ed_pos np)
{
	ed->changes++;
	if (ed->reparse_all)
		return;
	if (ed->nedits >= KB_TUI__ED_MAX_EDITS) {
		ed->reparse_all = true;
		ed->nedits = 0;
		return;
	}
	*KB_PUSH(ed->edits, ed->nedits, ed->edits_cap) =
		(kb_tui__ed_edit){start, old_end, new_end, sp, op, np};
}

/* Inserts s[0..n) at `at` (n > 0); returns where the text ends. */
static kb_tui__ed_pos raw_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	int k = 0;
	for (const char *q = s; (q = memchr(q, '\n', (size_t)(end - q))); q++)
		k++;
	off_touch(ed, at.line);
	if (k) {
		lines_open(ed, at.line + 1, k);
		kb_tui__ed_row *l = &ed->lines[at.line];
		line_insert(&ed->lines[at.line + k], 0, row_at(l, at.col), l->len - at.col);
		line_erase(l, at.col, l->len - at.col);
	}
	int li = at.line;
	for (;;) {
		const char *q = memchr(p, '\n', (size_t)(end - p));
		int seg = (int)((q ? q : end) - p);
		line_insert(&ed->lines[li], li == at.line ? at.col : 0, p, seg);
		if (!q)
			return (kb_tui__ed_pos){li, li == at.line ? at.col + seg : seg};
		p = q + 1;
		li++;
	}
}

/* Appends the text of [a, b) to out. */
static void range_text(const kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b, kb_buf *out)
{
	for (int l = a.line; l <= b.line; l++) {
		const kb_tui__ed_row *ln = &ed->lines[l];
		int from = l == a.line ? a.col : 0;
		int to = l == b.line ? b.col : ln->len;
		if (to > from)
			kb_buf_catn(out, ln->s + from, (size_t)(to - from));
		if (l < b.line)
			kb_buf_catc(out, '\n');
	}
}

static void raw_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	kb_tui__ed_row *la = &ed->lines[a.line];
	off_touch(ed, a.line);
	if (a.line == b.line) {
		line_erase(la, a.col, b.col - a.col);
		return;
	}
	kb_tui__ed_row *lb = &ed->lines[b.line];
	line_erase(la, a.col, la->len - a.col);
	line_insert(la, a.col, row_at(lb, b.col), lb->len - b.col);
	lines_close(ed, a.line + 1, b.line - a.line);
}

/* Inserts with an edit event; returns the end of the text. */
static kb_tui__ed_pos edit_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n)
{
	size_t start = kb_tui__ed_offset(ed, at);
	kb_tui__ed_pos end = raw_insert(ed, at, s, n);
	note_edit(ed, start, start, start + n, at, at, end);
	return end;
}

/* Deletes [a, b) with an edit event; the text goes to saved when non-NULL. */
static void edit_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b, kb_buf *saved)
{
	size_t start = kb_tui__ed_offset(ed, a);
	size_t old_end = kb_tui__ed_offset(ed, b);
	if (saved)
		range_text(ed, a, b, saved);
	raw_delete(ed, a, b);
	note_edit(ed, start, old_end, start, a, b, a);
}

/* ===== Undo records and groups ===== */

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;
	while (c < n)
		c *= 2;
	return c;
}

static void recs_free(kb_tui__ed_rec *v, int *n)
{
	for (int i = 0; i < *n; i++)
		free(v[i].text);
	*n = 0;
}

/* Appends to the top record when it is this group's insert ending at `at`. */
static bool rec_merge(kb_tui__ed *ed, kb_tui__ed_pos at, kb_tui__ed_pos end,
		      const char *s, size_t n)
{
	if (!ed->nundo)
		return false;
	kb_tui__ed_rec *r = &ed->undo[ed->nundo - 1];
	if (r->gid != ed->cur_gid || !r->ins || !pos_eq(r->end, at))
		return false;
	if (pow2_at_least(r->n) < r->n + n)
		r->text = kb_xrealloc(r->text, pow2_at_least(r->n + n));
	memcpy(r->text + r->n, s, n);
	r->n += n;
	r->end = end;
	return true;
}

static void record(kb_tui__ed *ed, bool ins, kb_tui__ed_pos at, kb_tui__ed_pos end,
		   const char *s, size_t n)
{
	recs_free(ed->redo, &ed->nredo); /* a new edit ends the redo chain */
	if (ins && rec_merge(ed, at, end, s, n))
		return;
	kb_tui__ed_rec *r = KB_PUSH(ed->undo, ed->nundo, ed->undo_cap);
	*r = (kb_tui__ed_rec){ed->cur_gid, ins, at, end, NULL, n, ed->cur, end};
	r->text = kb_xmalloc(pow2_at_least(n));
	memcpy(r->text, s, n);
}

/* A recorded insert; returns the end of the text. */
static kb_tui__ed_pos do_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n)
{
	if (!n)
		return at;
	kb_tui__ed_pos end = edit_insert(ed, at, s, n);
	record(ed, true, at, end, s, n);
	return end;
}

/* A recorded delete of [a, b), a before b. */
static void do_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	if (!pos_lt(a, b))
		return;
	kb_buf t = KB_BUF_INIT;
	edit_delete(ed, a, b, &t);
	record(ed, false, a, b, t.s, t.len);
	kb_buf_free(&t);
}

static unsigned top_gid(const kb_tui__ed *ed)
{
	return ed->nundo ? ed->undo[ed->nundo - 1].gid : 0;
}

/* Starts (or continues, for typing of one kind at the same place within
 * KB_TUI__ED_GROUP_MS and with no selection) an undo step. */
static void begin(kb_tui__ed *ed, int kind, double now)
{
	bool cont = kind != GRP_NONE && kind == ed->open_kind &&
		    pos_eq(ed->cur, ed->open_pos) && !kb_tui__ed_selection(ed, NULL, NULL) &&
		    now >= ed->open_ms && now - ed->open_ms < KB_TUI__ED_GROUP_MS &&
		    top_gid(ed) == ed->cur_gid && ed->cur_gid != 0;
	if (!cont)
		ed->cur_gid = ++ed->next_gid;
	ed->open_kind = kind;
}

static void finish(kb_tui__ed *ed, double now)
{
	if (ed->nundo && ed->undo[ed->nundo - 1].gid == ed->cur_gid)
		ed->undo[ed->nundo - 1].after = ed->cur;
	ed->open_pos = ed->cur;
	ed->open_ms = now;
	ed->pref_x = -1;
}

/* Applies r forward (redo) or backward (undo), with events, unrecorded. */
static void rec_apply(kb_tui__ed *ed, const kb_tui__ed_rec *r, bool inverse)
{
	if (r->ins != inverse)
		edit_insert(ed, r->at, r->text, r->n);
	else
		edit_delete(ed, r->at, r->end, NULL);
}

/* Moves the newest group of records from the undo stack to the redo stack
 * (undoing: each applied backwards) or back (redoing); the cursor goes to
 * where the group began (undo) or ended (redo). */
static int move_group(kb_tui__ed *ed, bool undoing)
{
	kb_tui__ed_rec **from = undoing ? &ed->undo : &ed->redo;
	kb_tui__ed_rec **to = undoing ? &ed->redo : &ed->undo;
	int *nfrom = undoing ? &ed->nundo : &ed->nredo, *nto = undoing ? &ed->nredo : &ed->nundo;
	int *to_cap = undoing ? &ed->redo_cap : &ed->undo_cap;
	if (!*nfrom)
		return KB_ENOTFOUND;
	unsigned g = (*from)[*nfrom - 1].gid;
	kb_tui__ed_pos pos = ed->cur;
	while (*nfrom && (*from)[*nfrom - 1].gid == g) {
		kb_tui__ed_rec r = (*from)[--*nfrom];
		rec_apply(ed, &r, undoing);
		pos = undoing ? r.before : r.after;
		*KB_PUSH(*to, *nto, *to_cap) = r;
	}
	ed->cur = pos;
	ed->sel = false;
	ed->open_kind = GRP_NONE;
	ed->pref_x = -1;
	return 0;
}

int kb_tui__ed_undo(kb_tui__ed *ed)
{
	return move_group(ed, true);
}

int kb_tui__ed_redo(kb_tui__ed *ed)
{
	return move_group(ed, false);
}

/* ===== Buffer life cycle ===== */

kb_tui__ed *kb_tui__ed_new(void)
{
	kb_tui__ed *ed = kb_xcalloc(1, sizeof(*ed));
	KB_PUSH(ed->lines, ed->nlines, ed->cap);
	ed->tab_width = 8;
	ed->indent_tabs = true;
	ed->indent_width = 4;
	ed->pref_x = -1;
	return ed;
}

static void reset(kb_tui__ed *ed)
{
	for (int i = 0; i < ed->nlines; i++)
		free(ed->lines[i].s);
	ed->nlines = 0;
	ed->off_valid = 0;
	recs_free(ed->undo, &ed->nundo);
	recs_free(ed->redo, &ed->nredo);
	ed->nedits = 0;
}

void kb_tui__ed_free(kb_tui__ed *ed)
{
	if (!ed)
		return;
	reset(ed);
	free(ed->lines);
	free(ed->undo);
	free(ed->redo);
	free(ed->edits);
	kb_buf_free(&ed->clip);
	free(ed);
}

/* Indent unit from the file: tabs when as many lines start with a tab as
 * with spaces; else the most common indent step of 2..8 spaces. */
static void detect_indent(kb_tui__ed *ed)
{
	int tabs = 0, spaces = 0, prev = 0, hist[9] = {0};
	for (int i = 0; i < ed->nlines; i++) {
		const kb_tui__ed_row *l = &ed->lines[i];
		int k = 0;
		if (l->len && l->s[0] == '\t') {
			tabs++;
			continue;
		}
		while (k < l->len && l->s[k] == ' ')
			k++;
		if (k == l->len || l->s[k] == '*')
			continue; /* blank, or a block comment's " * " */
		spaces += k > 0;
		if (k - prev >= 2 && k - prev <= 8)
			hist[k - prev]++;
		prev = k;
	}
	ed->indent_tabs = tabs >= spaces;
	ed->indent_width = 4;
	for (int d = 2, best = 0; d <= 8; d++)
		if (hist[d] > best)
			best = hist[d], ed->indent_width = d;
}

void kb_tui__ed_load(kb_tui__ed *ed, const char *text, size_t n)
{
	reset(ed);
	const char *end = text + n, *nl = memchr(text, '\n', n);
	ed->crlf = nl && nl > text && nl[-1] == '\r';
	const char *p = text;
	for (;;) {
		const char *q = memchr(p, '\n', (size_t)(end - p));
		const char *e = q ? q : end;
		if (q && ed->crlf && e > p && e[-1] == '\r')
			e--;
		kb_tui__ed_row *l = KB_PUSH(ed->lines, ed->nlines, ed->cap);
		*l = (kb_tui__ed_row){0};
		line_insert(l, 0, p, (int)(e - p));
		if (!q)
			break;
		p = q + 1;
	}
	detect_indent(ed);
	ed->cur = ed->anchor = (kb_tui__ed_pos){0, 0};
	ed->sel = false;
	ed->pref_x = -1;
	ed->next_gid = ed->cur_gid = ed->saved_gid = 0;
	ed->open_kind = GRP_NONE;
	ed->reparse_all = true;
	ed->changes++;
}

static void join_lines(const kb_tui__ed *ed, kb_buf *out, const char *eol)
{
	for (int i = 0; i < ed->nlines; i++) {
		if (i)
			kb_buf_cat(out, eol);
		if (ed->lines[i].len)
			kb_buf_catn(out, ed->lines[i].s, (size_t)ed->lines[i].len);
	}
	if (!out->s)
		kb_buf_catn(out, "", 0);
}

void kb_tui__ed_text(const kb_tui__ed *ed, kb_buf *out)
{
	join_lines(ed, out, "\n");
}

void kb_tui__ed_save_text(const kb_tui__ed *ed, kb_buf *out)
{
	join_lines(ed, out, ed->crlf ? "\r\n" : "\n");
}

void kb_tui__ed_mark_saved(kb_tui__ed *ed)
{
	ed->saved_gid = top_gid(ed);
	ed->open_kind = GRP_NONE;
}

bool kb_tui__ed_dirty(const kb_tui__ed *ed)
{
	return top_gid(ed) != ed->saved_gid;
}

void kb_tui__ed_set_tab_width(kb_tui__ed *ed, int width)
{
	ed->tab_width = width < 1 ? 1 : width > 32 ? 32 : width;
}

/* ===== Cursor and movement ===== */

/* pos clamped into the buffer and onto a code point start. */
static kb_tui__ed_pos clamp_pos(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	p.line = p.line < 0 ? 0 : p.line >= ed->nlines ? ed->nlines - 1 : p.line;
	const kb_tui__ed_row *l = &ed->lines[p.line];
	p.col = p.col < 0 ? 0 : p.col > l->len ? l->len : p.col;
	while (p.col > 0 && p.col < l->len && is_cont(l->s[p.col]))
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
static int blanks(const char *s, int len)
{
	int k = 0;
	while (k < len && (s[k] == ' ' || s[k] == '\t'))
		k++;
	return k;
}

static int first_nonblank(const kb_tui__ed_row *l)
{
	return blanks(l->s, l->len);
}

static kb_tui__ed_pos step_left(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	const kb_tui__ed_row *l = &ed->lines[p.line];
	if (p.col > 0)
		return (kb_tui__ed_pos){p.line, prev_unit(l->s, l->len, p.col)};
	return p.line > 0 ? (kb_tui__ed_pos){p.line - 1, ed->lines[p.line - 1].len} : p;
}

static kb_tui__ed_pos step_right(const kb_tui__ed *ed, kb_tui__ed_pos p)
{
	const kb_tui__ed_row *l = &ed->lines[p.line];
	if (p.col < l->len)
		return (kb_tui__ed_pos){p.line, next_unit(l->s, l->len, p.col)};
	return p.line + 1 < ed->nlines ? (kb_tui__ed_pos){p.line + 1, 0} : p;
}

/* Where a horizontal motion takes the cursor. */
static kb_tui__ed_pos target(const kb_tui__ed *ed, kb_tui__ed_motion m)
{
	kb_tui__ed_pos p = ed->cur;
	const kb_tui__ed_row *l = &ed->lines[p.line];
	switch (m) {
	case KB_TUI__ED_LEFT: return step_left(ed, p);
	case KB_TUI__ED_RIGHT: return step_right(ed, p);
	case KB_TUI__ED_WORD_LEFT: return word_left(ed, p);
	case KB_TUI__ED_WORD_RIGHT: return word_right(ed, p);
	case KB_TUI__ED_HOME:
		p.col = p.col == first_nonblank(l) ? 0 : first_nonblank(l);
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
	ed->open_kind = GRP_NONE;
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
	ed->cur = clamp_pos(ed, pos);
	ed->pref_x = -1;
	ed->open_kind = GRP_NONE;
}

void kb_tui__ed_goto(kb_tui__ed *ed, int line, int col)
{
	kb_tui__ed_set_cursor(ed, (kb_tui__ed_pos){line - 1, col - 1}, false);
}

/* ===== Selection and clipboard ===== */

void kb_tui__ed_select_all(kb_tui__ed *ed)
{
	ed->anchor = (kb_tui__ed_pos){0, 0};
	ed->cur = target(ed, KB_TUI__ED_BUF_END);
	ed->sel = true;
	ed->pref_x = -1;
	ed->open_kind = GRP_NONE;
}

bool kb_tui__ed_selection(const kb_tui__ed *ed, kb_tui__ed_pos *a, kb_tui__ed_pos *b)
{
	if (!ed->sel || pos_eq(ed->anchor, ed->cur))
		return false;
	bool fwd = pos_lt(ed->anchor, ed->cur);
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
		range_text(ed, a, b, &t);
	if (n)
		*n = t.len;
	return kb_buf_detach(&t);
}

/* Deletes the selection inside the current step; false when none. */
static bool del_sel(kb_tui__ed *ed)
{
	kb_tui__ed_pos a, b;
	bool had = kb_tui__ed_selection(ed, &a, &b);
	if (had) {
		do_delete(ed, a, b);
		ed->cur = a;
	}
	ed->sel = false;
	return had;
}

bool kb_tui__ed_delete_selection(kb_tui__ed *ed)
{
	if (!kb_tui__ed_selection(ed, NULL, NULL))
		return false;
	begin(ed, GRP_NONE, 0);
	del_sel(ed);
	finish(ed, 0);
	return true;
}

void kb_tui__ed_copy(kb_tui__ed *ed)
{
	kb_tui__ed_pos a, b;
	if (!kb_tui__ed_selection(ed, &a, &b))
		return;
	kb_buf_reset(&ed->clip);
	range_text(ed, a, b, &ed->clip);
}

void kb_tui__ed_cut(kb_tui__ed *ed)
{
	kb_tui__ed_copy(ed);
	kb_tui__ed_delete_selection(ed);
}

/* Replaces the selection (if any) by s as one step. */
static void replace_sel(kb_tui__ed *ed, const char *s, size_t n)
{
	begin(ed, GRP_NONE, 0);
	del_sel(ed);
	ed->cur = do_insert(ed, ed->cur, s, n);
	finish(ed, 0);
}

void kb_tui__ed_paste(kb_tui__ed *ed)
{
	if (ed->clip.len)
		replace_sel(ed, ed->clip.s, ed->clip.len);
}

void kb_tui__ed_paste_text(kb_tui__ed *ed, const char *s, size_t n)
{
	kb_buf t = KB_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')
			continue;
		kb_buf_catc(&t, s[i] == '\r' ? '\n' : s[i]);
	}
	if (t.len)
		replace_sel(ed, t.s, t.len);
	kb_buf_free(&t);
}

/* ===== Edits ===== */

void kb_tui__ed_insert(kb_tui__ed *ed, kb_tui__ed_pos pos, const char *s, size_t n)
{
	begin(ed, GRP_NONE, 0);
	ed->sel = false;
	ed->cur = do_insert(ed, clamp_pos(ed, pos), s, n);
	finish(ed, 0);
}

void kb_tui__ed_delete_range(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	a = clamp_pos(ed, a);
	b = clamp_pos(ed, b);
	if (pos_lt(b, a)) {
		kb_tui__ed_pos t = a;
		a = b;
		b = t;
	}
	begin(ed, GRP_NONE, 0);
	ed->sel = false;
	do_delete(ed, a, b);
	ed->cur = a;
	finish(ed, 0);
}

static void indent_unit(const kb_tui__ed *ed, kb_buf *out)
{
	if (ed->indent_tabs)
		kb_buf_catc(out, '\t');
	else
		for (int i = 0; i < ed->indent_width; i++)
			kb_buf_catc(out, ' ');
}

/* Typing '}' on a blank line: takes one indent unit off before it. */
static void dedent_for_brace(kb_tui__ed *ed)
{
	const kb_tui__ed_row *l = &ed->lines[ed->cur.line];
	int col = ed->cur.col, k = 0;
	if (col == 0 || first_nonblank(l) < col)
		return;
	if (l->s[col - 1] == '\t')
		k = 1;
	else
		while (k < col && k < (ed->indent_tabs ? ed->tab_width : ed->indent_width) &&
		       l->s[col - 1 - k] == ' ')
			k++;
	do_delete(ed, (kb_tui__ed_pos){ed->cur.line, col - k}, ed->cur);
	ed->cur.col -= k;
}

void kb_tui__ed_type(kb_tui__ed *ed, const char *s, size_t n, double now_ms)
{
	if (!n)
		return;
	begin(ed, GRP_TYPE, now_ms);
	del_sel(ed);
	if (n == 1 && s[0] == '}')
		dedent_for_brace(ed);
	ed->cur = do_insert(ed, ed->cur, s, n);
	finish(ed, now_ms);
}

void kb_tui__ed_newline(kb_tui__ed *ed, double now_ms)
{
	begin(ed, GRP_NONE, now_ms);
	del_sel(ed);
	const kb_tui__ed_row *l = &ed->lines[ed->cur.line];
	int ws = first_nonblank(l), col = ed->cur.col, e = col;
	if (ws > col)
		ws = col;
	while (e > 0 && (l->s[e - 1] == ' ' || l->s[e - 1] == '\t'))
		e--;
	int a = blanks(row_at(l, col), l->len - col);
	bool open = e > 0 && l->s[e - 1] == '{';
	bool close = open && col + a < l->len && l->s[col + a] == '}';
	kb_buf t = KB_BUF_INIT, unit = KB_BUF_INIT;
	indent_unit(ed, &unit);
	kb_buf_catc(&t, '\n');
	kb_buf_catn(&t, l->s, (size_t)ws);
	if (open)
		kb_buf_catn(&t, unit.s, unit.len);
	kb_tui__ed_pos mid = {ed->cur.line + 1, (int)t.len - 1};
	if (close) {
		kb_buf_catc(&t, '\n');
		kb_buf_catn(&t, l->s, (size_t)ws);
	}
	ed->cur = do_insert(ed, ed->cur, t.s, t.len);
	if (close)
		ed->cur = mid;
	kb_buf_free(&t);
	kb_buf_free(&unit);
	finish(ed, now_ms);
}

void kb_tui__ed_backspace(kb_tui__ed *ed, double now_ms)
{
	begin(ed, GRP_BS, now_ms);
	if (!del_sel(ed)) {
		kb_tui__ed_pos a = ed->cur;
		if (a.col > 0)
			a.col = cp_before(ed->lines[a.line].s, a.col);
		else if (a.line > 0)
			a = (kb_tui__ed_pos){a.line - 1, ed->lines[a.line - 1].len};
		do_delete(ed, a, ed->cur);
		ed->cur = a;
	}
	finish(ed, now_ms);
}

void kb_tui__ed_delete_char(kb_tui__ed *ed, double now_ms)
{
	begin(ed, GRP_DEL, now_ms);
	if (!del_sel(ed))
		do_delete(ed, ed->cur, step_right(ed, ed->cur));
	finish(ed, now_ms);
}

/* ===== Search and replace ===== */

static bool match_at(const kb_tui__ed_row *l, int i, const char *p, int m, bool nocase)
{
	if (i < 0 || i + m > l->len)
		return false;
	if (!nocase)
		return memcmp(l->s + i, p, (size_t)m) == 0;
	for (int k = 0; k < m; k++)
		if (tolower((unsigned char)l->s[i + k]) != tolower((unsigned char)p[k]))
			return false;
	return true;
}

/* The first match starting at or after from, or -1. */
static int find_fwd(const kb_tui__ed_row *l, int from, const char *p, int m, bool nocase)
{
	for (int i = from; i + m <= l->len; i++)
		if (match_at(l, i, p, m, nocase))
			return i;
	return -1;
}

/* The last match starting before `before`, or -1. */
static int find_bwd(const kb_tui__ed_row *l, int before, const char *p, int m, bool nocase)
{
	int i = before - 1 < l->len - m ? before - 1 : l->len - m;
	for (; i >= 0; i--)
		if (match_at(l, i, p, m, nocase))
			return i;
	return -1;
}

static void select_range(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	ed->anchor = a;
	ed->cur = b;
	ed->sel = true;
	ed->pref_x = -1;
	ed->open_kind = GRP_NONE;
}

int kb_tui__ed_search(kb_tui__ed *ed, const char *pat, int flags, bool *wrapped)
{
	int m = (int)strlen(pat), n = ed->nlines;
	bool back = flags & KB_TUI__ED_BACKWARD, nocase = flags & KB_TUI__ED_NOCASE;
	if (!m || strchr(pat, '\n'))
		return KB_EINVAL;
	kb_tui__ed_pos a = ed->cur, b = ed->cur;
	kb_tui__ed_selection(ed, &a, &b);
	kb_tui__ed_pos s = back ? a : b;
	for (int i = 0; i <= n; i++) {
		int l = back ? ((s.line - i) % n + n) % n : (s.line + i) % n;
		const kb_tui__ed_row *ln = &ed->lines[l];
		int k = back ? find_bwd(ln, i ? INT_MAX : s.col, pat, m, nocase)
			     : find_fwd(ln, i ? 0 : s.col, pat, m, nocase);
		if (k < 0)
			continue;
		if (wrapped)
			*wrapped = back ? s.line - i < 0 : s.line + i >= n;
		select_range(ed, (kb_tui__ed_pos){l, k}, (kb_tui__ed_pos){l, k + m});
		return 0;
	}
	if (wrapped)
		*wrapped = false;
	return KB_ENOTFOUND;
}

int kb_tui__ed_replace(kb_tui__ed *ed, const char *pat, const char *rep, int flags)
{
	int m = (int)strlen(pat), rc = KB_ENOTFOUND;
	kb_tui__ed_pos a, b;
	if (!m || strchr(pat, '\n'))
		return KB_EINVAL;
	if (kb_tui__ed_selection(ed, &a, &b) && a.line == b.line && b.col - a.col == m &&
	    match_at(&ed->lines[a.line], a.col, pat, m, flags & KB_TUI__ED_NOCASE)) {
		replace_sel(ed, rep, strlen(rep));
		if (flags & KB_TUI__ED_BACKWARD)
			ed->cur = a;
		rc = 0;
	}
	kb_tui__ed_search(ed, pat, flags, NULL);
	return rc;
}

int kb_tui__ed_replace_all(kb_tui__ed *ed, const char *pat, const char *rep, int flags)
{
	int m = (int)strlen(pat), count = 0;
	size_t rn = strlen(rep);
	if (!m || strchr(pat, '\n'))
		return KB_EINVAL;
	begin(ed, GRP_NONE, 0);
	kb_tui__ed_pos p = {0, 0};
	while (p.line < ed->nlines) {
		int k = find_fwd(&ed->lines[p.line], p.col, pat, m, flags & KB_TUI__ED_NOCASE);
		if (k < 0) {
			p = (kb_tui__ed_pos){p.line + 1, 0};
			continue;
		}
		kb_tui__ed_pos at = {p.line, k};
		do_delete(ed, at, (kb_tui__ed_pos){p.line, k + m});
		p = do_insert(ed, at, rep, rn);
		ed->cur = p;
		count++;
	}
	ed->sel = false;
	ed->cur = clamp_pos(ed, ed->cur);
	finish(ed, 0);
	return count;
}

/* ===== Edit events ===== */

const kb_tui__ed_edit *kb_tui__ed_edits(const kb_tui__ed *ed, int *n, bool *reparse_all)
{
	*n = ed->nedits;
	if (reparse_all)
		*reparse_all = ed->reparse_all;
	return ed->edits;
}

void kb_tui__ed_edits_clear(kb_tui__ed *ed)
{
	ed->nedits = 0;
	ed->reparse_all = false;
}
