/*
 * tui_pane.c - the right-hand side of the workbench: the tab bar and the
 * result pane's text (panes.c makes it), scrolled and wrapped to the
 * pane's width, with the Variants, Diff and Roofline texts, which read the
 * session, cached, and the CUDA pane scrolled to the code of the editor's
 * cursor line.  Does not choose the pane (keys) or make its text; the tab
 * bar shows the panes the file has (kb_tui__pane_shown).
 *
 * Invariants: a wrapped line continues under its value column and never
 * splits a UTF-8 sequence; the session panes are made again only when
 * what they show can have changed, or after 2 s.
 */
#include "tui_int.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

/* Short tab names, for a bar too narrow for the whole ones. */
static const char *const short_names[KB_TUI__NPANES] = {
	"Sum", "CUDA", "SASS", "PTX", "Occ", "Metr", "Roof", "Var", "Diff", "LLM", "Help",
};

void kb_tui__tabs(const kb_tui__ui *t, int x[KB_TUI__NPANES], const char *name[KB_TUI__NPANES])
{
	kb_rect r = t->L.tabs;
	int full = -1;
	for (int i = 0; i < KB_TUI__NPANES; i++)
		if (kb_tui__pane_shown(i, t->o.path))
			full += (int)strlen(kb_tui__pane_names[i]) + 1;
	const char *const *names = full <= r.w ? kb_tui__pane_names : short_names;
	/* the first tab shown: the current one must fit, "<" marks tabs left out */
	int first = 0;
	for (;; first++) {
		int at = first ? 2 : 0;
		for (int i = first; i <= t->pane && i < KB_TUI__NPANES; i++)
			at += kb_tui__pane_shown(i, t->o.path) ? (int)strlen(names[i]) + 1 : 0;
		if (at - 1 <= r.w || first >= t->pane)
			break;
	}
	int at = r.x + (first ? 2 : 0);
	for (int i = 0; i < KB_TUI__NPANES; i++) {
		name[i] = names[i];
		x[i] = -1;
		if (i < first || !kb_tui__pane_shown(i, t->o.path))
			continue;
		if (at + (int)strlen(names[i]) > r.x + r.w)
			break;
		x[i] = at;
		at += (int)strlen(names[i]) + 1;
	}
}

void kb_tui__draw_tabs(kb_tui__ui *t)
{
	int x[KB_TUI__NPANES];
	const char *name[KB_TUI__NPANES];
	kb_tui__tabs(t, x, name);
	if (x[0] < 0)
		mvaddstr(t->L.tabs.y, t->L.tabs.x, "<");
	for (int i = 0; i < KB_TUI__NPANES; i++) {
		if (x[i] < 0)
			continue;
		int pair = i == t->pane ? KB_TUI__C_TAB_ON : KB_TUI__C_TAB;
		attron(COLOR_PAIR(pair) | (i == t->pane ? A_BOLD : 0));
		mvaddstr(t->L.tabs.y, x[i], name[i]);
		attroff(COLOR_PAIR(pair) | A_BOLD);
	}
}

/* Bytes of the longest prefix of p[0..n) that fills at most cols columns,
 * never splitting a UTF-8 sequence (pane text is ASCII and one-column
 * symbols such as box drawing). */
static int utf8_prefix(const char *p, int n, int cols)
{
	int i = 0;
	for (int c = 0; i < n && c < cols; c++)
		for (i++; i < n && ((unsigned char)p[i] & 0xC0) == 0x80; i++)
			;
	return i;
}

/* A prefix of p[0..n) for one row of cols columns: the whole text if it
 * fits, else up to the last space in the row's second half (a word is not
 * cut), else the row full. */
static int wrap_prefix(const char *p, int n, int cols)
{
	int fit = utf8_prefix(p, n, cols);
	if (fit >= n)
		return n;
	for (int i = fit; i > fit / 2; i--)
		if (p[i] == ' ')
			return i;
	return fit;
}

/* Where continuation rows of a wrapped pane line start: under the value of
 * a "  label   value" line (a word, then two or more spaces), at the indent
 * of a line indented 4 or more, else two columns in; never more than a
 * third of the width. */
static int hang_indent(const char *p, int n, int cols)
{
	int i = 0;
	while (i < n && p[i] == ' ')
		i++;
	if (i >= 4 && i <= cols / 3) /* itself a continuation: keep its indent */
		return i;
	while (i < n && p[i] != ' ')
		i++;
	int gap = 0;
	while (i + gap < n && p[i + gap] == ' ')
		gap++;
	int col = i + gap;
	return gap >= 2 && col < n && col <= cols / 3 ? col : 2;
}

/* One SGR code: 0 resets, 1 is bold, 31 / 32 red / green (the others are
 * not used by the pane texts). */
static void sgr_code(int code, int *pair, attr_t *bold)
{
	if (code == 0)
		*pair = KB_TUI__C_NORMAL, *bold = 0;
	else if (code == 1)
		*bold = A_BOLD;
	else if (code == 31 || code == 32)
		*pair = code == 32 ? KB_TUI__C_GOOD : KB_TUI__C_BAD;
}

int kb_tui__draw_sgr(int y, int x, const char *s, int n, int width)
{
	int pair = KB_TUI__C_NORMAL, cols = 0;
	attr_t bold = 0;
	for (int i = 0; i < n && cols < width;) {
		if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
			int code = 0;
			for (i += 2; i < n && s[i] != 'm'; i++)
				if (s[i] == ';')
					sgr_code(code, &pair, &bold), code = 0;
				else
					code = code * 10 + (s[i] - '0');
			sgr_code(code, &pair, &bold);
			i++;
			continue;
		}
		int end = i;
		while (end < n && s[end] != '\033')
			end++;
		int fit = utf8_prefix(s + i, end - i, width - cols);
		attron(COLOR_PAIR(pair) | bold);
		mvaddnstr(y, x + cols, s + i, fit);
		attroff(COLOR_PAIR(pair) | bold);
		for (int k = i; k < i + fit; k++)
			cols += ((unsigned char)s[k] & 0xC0) != 0x80;
		bool cut = fit < end - i;
		i += fit;
		if (cut)
			break;
	}
	return cols;
}

const kb_app_headline *kb_tui__headline(const kb_tui__ui *t)
{
	if (t->steps)
		return t->replay_head.verdict[0] ? &t->replay_head : NULL;
	return t->res && t->res->has_head ? &t->res->head : NULL;
}

/* The panes read from the session (libgit2: ~10 ms for 60 variants) are
 * made again only when what they show can have changed: a new result, a
 * selection, the pane or its size, a replay step; or after 2 s, for
 * variants another kbench process recorded.  Not on every keystroke. */
static const kb_buf *session_pane(kb_tui__ui *t, const kb_tui__view *v)
{
	char key[sizeof t->session_key];
	snprintf(key, sizeof key, "%d %d %dx%d %u.%u %d %s", v->pane, v->variant, v->width, v->height,
		 t->res ? t->res->seq : 0, t->res ? t->res->gen : 0, t->step, v->path);
	double now = kb_now_ms();
	if (strcmp(key, t->session_key) || now - t->session_at > 2000) {
		kb_buf_free(&t->session_text);
		kb_tui__pane_text(v, &t->session_text);
		snprintf(t->session_key, sizeof t->session_key, "%s", key);
		t->session_at = now;
	}
	return &t->session_text;
}

/* The CUDA pane follows the editor: when the cursor is on another line, a
 * new result came or the pane was just chosen, the first line marked '>'
 * is scrolled into view (3 lines down) unless it is in view already; F9,
 * F10 and the wheel scroll freely until then.  A new result with nothing
 * marked (the file did not lower) shows from the top. */
static void follow_cursor(kb_tui__ui *t, const char *text, int h)
{
	int line = t->ed->cur.line + 1;
	unsigned seq = t->res ? t->res->seq : 0;
	if (line == t->followed_line && seq == t->followed_seq)
		return;
	bool new_result = seq != t->followed_seq;
	t->followed_line = line;
	t->followed_seq = seq;
	int k = 0;
	for (const char *p = text; *p != '>'; k++) {
		const char *nl = strchr(p, '\n');
		if (!nl) {
			if (new_result)
				t->pane_top = 0;
			return;
		}
		p = nl + 1;
	}
	if (k < t->pane_top || k >= t->pane_top + h - 4)
		t->pane_top = k > 3 ? k - 3 : 0;
}

void kb_tui__draw_pane(kb_tui__ui *t)
{
	kb_rect r = t->L.pane;
	kb_buf text = KB_BUF_INIT;
	const char *replay = t->steps ? json_string_value(json_object_get(
						json_array_get(t->steps, (size_t)t->step), "summary"))
				      : NULL;
	kb_tui__view view = {t->pane, t->res, t->o.path, t->ed->cur.line + 1, r.w, r.h, t->variant,
			     replay, kb_tui__headline(t), t->steps, t->step, t->details};
	const kb_buf *shown = &text;
	if (t->pane == KB_TUI__PANE_VARIANTS || t->pane == KB_TUI__PANE_DIFF ||
	    t->pane == KB_TUI__PANE_ROOFLINE)
		shown = session_pane(t, &view);
	else if (t->pane == KB_TUI__PANE_LLM)
		kb_tui__llm_text(t, &text);
	else
		kb_tui__pane_text(&view, &text);
	const char *p = shown->s ? shown->s : "";
	if (t->pane == KB_TUI__PANE_CUDA)
		follow_cursor(t, p, r.h);
	else
		t->followed_line = 0; /* coming back to it follows again */
	int row = 0;
	for (int skip = t->pane_top; skip > 0 && *p; skip--) {
		const char *e = strchr(p, '\n');
		p = e ? e + 1 : p + strlen(p);
	}
	for (; *p && row < r.h; row++) {
		const char *e = strchr(p, '\n');
		int n = e ? (int)(e - p) : (int)strlen(p);
		bool mark = (t->pane == KB_TUI__PANE_SASS || t->pane == KB_TUI__PANE_CUDA ||
			     t->pane == KB_TUI__PANE_VARIANTS) && *p == '>';
		if (memchr(p, '\033', (size_t)n)) { /* coloured (the headline): one row, never wrapped */
			kb_tui__draw_sgr(r.y + row, r.x, p, n, r.w);
			p = e ? e + 1 : p + n;
			continue;
		}
		/* the Diff pane's added and removed lines in green and red */
		int diff = t->pane != KB_TUI__PANE_DIFF || n < 1 || !strncmp(p, "+++", 3) ||
				   !strncmp(p, "---", 3) ? 0
			   : *p == '+' ? KB_TUI__C_GOOD : *p == '-' ? KB_TUI__C_BAD : 0;
		if (mark || diff)
			attron(COLOR_PAIR(mark ? KB_TUI__C_MARK : diff));
		/* long lines wrap at a space where one is near, continued under
		 * the value column ("  label     value") */
		int hang = hang_indent(p, n, r.w);
		int off = wrap_prefix(p, n, r.w);
		mvaddnstr(r.y + row, r.x, p, off);
		while (off < n && row + 1 < r.h) {
			while (off < n && p[off] == ' ')
				off++;
			int part = wrap_prefix(p + off, n - off, r.w - hang);
			mvaddnstr(r.y + ++row, r.x + hang, p + off, part);
			off += part;
		}
		if (mark || diff)
			attroff(COLOR_PAIR(mark ? KB_TUI__C_MARK : diff));
		p = e ? e + 1 : p + n;
	}
	kb_buf_free(&text);
}
