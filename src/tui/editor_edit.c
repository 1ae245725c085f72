/*
 * editor_edit.c - every change the editor's commands make, and its undo.
 * Undo and redo: the stacks of records, the grouping of records into steps
 * (one command, or a run of typing of one kind at the cursor), and the
 * recorded edits (kb_tui__ed_do_insert / kb_tui__ed_do_delete) that every
 * command below makes; records are applied through the primitive edits of
 * editor.c, so undo and redo queue edit events like any other change.
 * The commands: typing (replacing the selection; "}" on a blank line
 * dedents), Enter with auto-indent, Backspace and Delete, insert and
 * delete of a range, the internal clipboard (copy, cut, paste, pasting
 * external text), and search and replace (plain text within a line, ASCII
 * case folding on request, forwards or backwards with wrap-around,
 * selecting the match; replacing the selected match, or every match as
 * one undo step; no regular expressions, no matches across lines).  Does
 * not own the text (editor.c), the cursor (editor_cursor.c), the system
 * clipboard or keys.
 *
 * Invariants: an undo step is the run of records with the same gid on the
 * stack; a new recorded edit empties the redo stack; every command opens
 * its step with kb_tui__ed_begin and closes it with kb_tui__ed_finish,
 * which keeps the cursor after it for redo; consecutive typing, Backspace
 * or Delete merge into one step; pasted text is LF-only; a search pattern
 * that is empty or holds '\n' is KB_EINVAL and changes nothing; a search
 * starts after (before) the selection when the selection is the previous
 * match.
 */
#include "tui_int.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ===== Undo records and groups ===== */

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;
	while (c < n)
		c *= 2;
	return c;
}

/* Appends to the top record when it is this group's insert ending at `at`. */
static bool rec_merge(kb_tui__ed *ed, kb_tui__ed_pos at, kb_tui__ed_pos end,
		      const char *s, size_t n)
{
	if (!ed->nundo)
		return false;
	kb_tui__ed_rec *r = &ed->undo[ed->nundo - 1];
	if (r->gid != ed->cur_gid || !r->ins || !kb_tui__ed_pos_eq(r->end, at))
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
	kb_tui__ed_recs_free(ed->redo, &ed->nredo); /* a new edit ends the redo chain */
	if (ins && rec_merge(ed, at, end, s, n))
		return;
	kb_tui__ed_rec *r = KB_PUSH(ed->undo, ed->nundo, ed->undo_cap);
	*r = (kb_tui__ed_rec){ed->cur_gid, ins, at, end, NULL, n, ed->cur, end};
	r->text = kb_xmalloc(pow2_at_least(n));
	memcpy(r->text, s, n);
}

/* A recorded insert; returns the end of the text. */
kb_tui__ed_pos kb_tui__ed_do_insert(kb_tui__ed *ed, kb_tui__ed_pos at, const char *s, size_t n)
{
	if (!n)
		return at;
	kb_tui__ed_pos end = kb_tui__ed_edit_insert(ed, at, s, n);
	record(ed, true, at, end, s, n);
	return end;
}

/* A recorded delete of [a, b), a before b. */
void kb_tui__ed_do_delete(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	if (!kb_tui__ed_pos_lt(a, b))
		return;
	kb_buf t = KB_BUF_INIT;
	kb_tui__ed_edit_delete(ed, a, b, &t);
	record(ed, false, a, b, t.s, t.len);
	kb_buf_free(&t);
}

/* Starts (or continues, for typing of one kind at the same place within
 * KB_TUI__ED_GROUP_MS and with no selection) an undo step. */
void kb_tui__ed_begin(kb_tui__ed *ed, int kind, double now)
{
	bool cont = kind != KB_TUI__ED_GRP_NONE && kind == ed->open_kind &&
		    kb_tui__ed_pos_eq(ed->cur, ed->open_pos) &&
		    !kb_tui__ed_selection(ed, NULL, NULL) &&
		    now >= ed->open_ms && now - ed->open_ms < KB_TUI__ED_GROUP_MS &&
		    kb_tui__ed_top_gid(ed) == ed->cur_gid && ed->cur_gid != 0;
	if (!cont)
		ed->cur_gid = ++ed->next_gid;
	ed->open_kind = kind;
}

void kb_tui__ed_finish(kb_tui__ed *ed, double now)
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
		kb_tui__ed_edit_insert(ed, r->at, r->text, r->n);
	else
		kb_tui__ed_edit_delete(ed, r->at, r->end, NULL);
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
	ed->open_kind = KB_TUI__ED_GRP_NONE;
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

/* ===== Selection and clipboard ===== */

/* Deletes the selection inside the current step; false when none. */
bool kb_tui__ed_del_sel(kb_tui__ed *ed)
{
	kb_tui__ed_pos a, b;
	bool had = kb_tui__ed_selection(ed, &a, &b);
	if (had) {
		kb_tui__ed_do_delete(ed, a, b);
		ed->cur = a;
	}
	ed->sel = false;
	return had;
}

bool kb_tui__ed_delete_selection(kb_tui__ed *ed)
{
	if (!kb_tui__ed_selection(ed, NULL, NULL))
		return false;
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_NONE, 0);
	kb_tui__ed_del_sel(ed);
	kb_tui__ed_finish(ed, 0);
	return true;
}

void kb_tui__ed_copy(kb_tui__ed *ed)
{
	kb_tui__ed_pos a, b;
	if (!kb_tui__ed_selection(ed, &a, &b))
		return;
	kb_buf_reset(&ed->clip);
	kb_tui__ed_range_text(ed, a, b, &ed->clip);
}

void kb_tui__ed_cut(kb_tui__ed *ed)
{
	kb_tui__ed_copy(ed);
	kb_tui__ed_delete_selection(ed);
}

/* Replaces the selection (if any) by s as one step. */
void kb_tui__ed_replace_sel(kb_tui__ed *ed, const char *s, size_t n)
{
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_NONE, 0);
	kb_tui__ed_del_sel(ed);
	ed->cur = kb_tui__ed_do_insert(ed, ed->cur, s, n);
	kb_tui__ed_finish(ed, 0);
}

void kb_tui__ed_paste(kb_tui__ed *ed)
{
	if (ed->clip.len)
		kb_tui__ed_replace_sel(ed, ed->clip.s, ed->clip.len);
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
		kb_tui__ed_replace_sel(ed, t.s, t.len);
	kb_buf_free(&t);
}

/* ===== Edits ===== */

void kb_tui__ed_insert(kb_tui__ed *ed, kb_tui__ed_pos pos, const char *s, size_t n)
{
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_NONE, 0);
	ed->sel = false;
	ed->cur = kb_tui__ed_do_insert(ed, kb_tui__ed_clamp_pos(ed, pos), s, n);
	kb_tui__ed_finish(ed, 0);
}

void kb_tui__ed_delete_range(kb_tui__ed *ed, kb_tui__ed_pos a, kb_tui__ed_pos b)
{
	a = kb_tui__ed_clamp_pos(ed, a);
	b = kb_tui__ed_clamp_pos(ed, b);
	if (kb_tui__ed_pos_lt(b, a)) {
		kb_tui__ed_pos t = a;
		a = b;
		b = t;
	}
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_NONE, 0);
	ed->sel = false;
	kb_tui__ed_do_delete(ed, a, b);
	ed->cur = a;
	kb_tui__ed_finish(ed, 0);
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
	if (col == 0 || kb_tui__ed_first_nonblank(l) < col)
		return;
	if (l->s[col - 1] == '\t')
		k = 1;
	else
		while (k < col && k < (ed->indent_tabs ? ed->tab_width : ed->indent_width) &&
		       l->s[col - 1 - k] == ' ')
			k++;
	kb_tui__ed_do_delete(ed, (kb_tui__ed_pos){ed->cur.line, col - k}, ed->cur);
	ed->cur.col -= k;
}

void kb_tui__ed_type(kb_tui__ed *ed, const char *s, size_t n, double now_ms)
{
	if (!n)
		return;
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_TYPE, now_ms);
	kb_tui__ed_del_sel(ed);
	if (n == 1 && s[0] == '}')
		dedent_for_brace(ed);
	ed->cur = kb_tui__ed_do_insert(ed, ed->cur, s, n);
	kb_tui__ed_finish(ed, now_ms);
}

void kb_tui__ed_newline(kb_tui__ed *ed, double now_ms)
{
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_NONE, now_ms);
	kb_tui__ed_del_sel(ed);
	const kb_tui__ed_row *l = &ed->lines[ed->cur.line];
	int ws = kb_tui__ed_first_nonblank(l), col = ed->cur.col, e = col;
	if (ws > col)
		ws = col;
	while (e > 0 && (l->s[e - 1] == ' ' || l->s[e - 1] == '\t'))
		e--;
	int a = kb_tui__ed_blanks(kb_tui__ed_row_at(l, col), l->len - col);
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
	ed->cur = kb_tui__ed_do_insert(ed, ed->cur, t.s, t.len);
	if (close)
		ed->cur = mid;
	kb_buf_free(&t);
	kb_buf_free(&unit);
	kb_tui__ed_finish(ed, now_ms);
}

void kb_tui__ed_backspace(kb_tui__ed *ed, double now_ms)
{
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_BS, now_ms);
	if (!kb_tui__ed_del_sel(ed)) {
		kb_tui__ed_pos a = ed->cur;
		if (a.col > 0)
			a.col = kb_tui__ed_cp_before(ed->lines[a.line].s, a.col);
		else if (a.line > 0)
			a = (kb_tui__ed_pos){a.line - 1, ed->lines[a.line - 1].len};
		kb_tui__ed_do_delete(ed, a, ed->cur);
		ed->cur = a;
	}
	kb_tui__ed_finish(ed, now_ms);
}

void kb_tui__ed_delete_char(kb_tui__ed *ed, double now_ms)
{
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_DEL, now_ms);
	if (!kb_tui__ed_del_sel(ed))
		kb_tui__ed_do_delete(ed, ed->cur, kb_tui__ed_step_right(ed, ed->cur));
	kb_tui__ed_finish(ed, now_ms);
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
	ed->open_kind = KB_TUI__ED_GRP_NONE;
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
		kb_tui__ed_replace_sel(ed, rep, strlen(rep));
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
	kb_tui__ed_begin(ed, KB_TUI__ED_GRP_NONE, 0);
	kb_tui__ed_pos p = {0, 0};
	while (p.line < ed->nlines) {
		int k = find_fwd(&ed->lines[p.line], p.col, pat, m, flags & KB_TUI__ED_NOCASE);
		if (k < 0) {
			p = (kb_tui__ed_pos){p.line + 1, 0};
			continue;
		}
		kb_tui__ed_pos at = {p.line, k};
		kb_tui__ed_do_delete(ed, at, (kb_tui__ed_pos){p.line, k + m});
		p = kb_tui__ed_do_insert(ed, at, rep, rn);
		ed->cur = p;
		count++;
	}
	ed->sel = false;
	ed->cur = kb_tui__ed_clamp_pos(ed, ed->cur);
	kb_tui__ed_finish(ed, 0);
	return count;
}
