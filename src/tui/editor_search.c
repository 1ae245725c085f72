/*
 * editor_search.c - search and replace in the editor's buffer: plain
 * text within a line (ASCII case folding on request), forwards or
 * backwards with wrap-around, selecting the match; replacing the selected
 * match, or every match as one undo step.  No regular expressions, no
 * matches across lines.
 *
 * Invariants: a pattern that is empty or holds '\n' is KB_EINVAL and
 * changes nothing; a search starts after (before) the selection when the
 * selection is the previous match.
 */
#include "tui_int.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>

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
