/*
 * editor_edit.c - the editor's editing commands: typing (replacing the
 * selection; "}" on a blank line dedents), Enter with auto-indent,
 * Backspace and Delete, insert and delete of a range, and the internal
 * clipboard (copy, cut, paste, pasting external text).  Each is one undo
 * step made of recorded edits (editor_undo.c); consecutive typing,
 * Backspace or Delete merge.  Does not own the system clipboard or keys.
 *
 * Invariants: every command opens its step with kb_tui__ed_begin and
 * closes it with kb_tui__ed_finish; pasted text is LF-only.
 */
#include "tui_int.h"

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
