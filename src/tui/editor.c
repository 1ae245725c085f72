/*
 * editor.c - the text model of the editor pane: no ncurses, no I/O.
 *
 * The model is three files on one kb_tui__ed, sharing the kb_tui__ed_*
 * internals of tui_int.h, each calling only those before it.  This one
 * owns the buffer itself: the lines of one buffer and their byte offsets,
 * the two primitive edits every change goes through, the queue of edit
 * events (tree-sitter TSInputEdit terms) they fill for the highlighter,
 * and the buffer's life cycle (new, load, the text out, saved or dirty;
 * the undo records freed).  Beside it: editor_cursor.c (code points,
 * units and display columns; cursor motion and the selection) and
 * editor_edit.c (undo records and steps; typing, auto-indent, deleting,
 * the internal clipboard, search and replace).  None of them owns
 * drawing, scrolling, key bindings, files on disk (callers pass text in
 * and take text out) or the system clipboard.
 *
 * Invariants:
 *  - the text is lines[0..nlines-1] joined by '\n'; nlines >= 1, so a file
 *    ending in '\n' has an empty last line and load/save is byte-exact;
 *  - line endings: when the first line ending of a loaded file is CRLF,
 *    every "\r\n" is held as '\n' and written back as "\r\n" (crlf); else
 *    bytes are kept as they are (a stray '\r' stays in its line);
 *  - positions are (line, byte col) with col on a code point boundary; the
 *    bytes are UTF-8 but anything is accepted (a bad byte is one unit);
 *  - every change goes through kb_tui__ed_edit_insert/_delete, which bump
 *    `changes` and queue one edit event, so undo/redo are reported too;
 *  - lines[i].off (the byte offset of line i) is correct for i < off_valid;
 *    an edit on line L only lowers off_valid to L+1, so typing on one line
 *    costs O(line length), and offsets are recomputed lazily on demand;
 *  - an undo step is the run of records with the same gid on the stack.
 */
#include "tui_int.h"

#include <stdlib.h>
#include <string.h>

bool kb_tui__ed_pos_eq(kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	return a.line == b.line && a.col == b.col;
}

bool kb_tui__ed_pos_lt(kb_tui__ed_pos a, kb_tui__ed_pos b)
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
const char *kb_tui__ed_row_at(const kb_tui__ed_row *l, int col)
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
		line_insert(&ed->lines[at.line + k], 0, kb_tui__ed_row_at(l, at.col),
			    l->len - at.col);
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
void kb_tui__ed_range_text(const kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b, kb_buf *out)
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
	line_insert(la, a.col, kb_tui__ed_row_at(lb, b.col), lb->len - b.col);
	lines_close(ed, a.line + 1, b.line - a.line);
}

/* Inserts with an edit event; returns the end of the text. */
kb_tui__ed_pos kb_tui__ed_edit_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n)
{
	size_t start = kb_tui__ed_offset(ed, at);
	kb_tui__ed_pos end = raw_insert(ed, at, s, n);
	note_edit(ed, start, start, start + n, at, at, end);
	return end;
}

/* Deletes [a, b) with an edit event; the text goes to saved when non-NULL. */
void kb_tui__ed_edit_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b, kb_buf *saved)
{
	size_t start = kb_tui__ed_offset(ed, a);
	size_t old_end = kb_tui__ed_offset(ed, b);
	if (saved)
		kb_tui__ed_range_text(ed, a, b, saved);
	raw_delete(ed, a, b);
	note_edit(ed, start, old_end, start, a, b, a);
}

/* ===== Buffer life cycle ===== */

/* The undo records' texts: freed with the buffer or a new load. */
void kb_tui__ed_recs_free(kb_tui__ed_rec *v, int *n)
{
	for (int i = 0; i < *n; i++)
		free(v[i].text);
	*n = 0;
}

/* The step the buffer is at: the newest undo record's gid (0: none), which
 * kb_tui__ed_dirty compares with the saved one. */
unsigned kb_tui__ed_top_gid(const kb_tui__ed *ed)
{
	return ed->nundo ? ed->undo[ed->nundo - 1].gid : 0;
}

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
	kb_tui__ed_recs_free(ed->undo, &ed->nundo);
	kb_tui__ed_recs_free(ed->redo, &ed->nredo);
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
	ed->open_kind = KB_TUI__ED_GRP_NONE;
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
	ed->saved_gid = kb_tui__ed_top_gid(ed);
	ed->open_kind = KB_TUI__ED_GRP_NONE;
}

bool kb_tui__ed_dirty(const kb_tui__ed *ed)
{
	return kb_tui__ed_top_gid(ed) != ed->saved_gid;
}

void kb_tui__ed_set_tab_width(kb_tui__ed *ed, int width)
{
	ed->tab_width = width < 1 ? 1 : width > 32 ? 32 : width;
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
