/*
 * tui_keys.c - the workbench's input: the keys read in one pass of the
 * loop, dispatched to the prompt being answered (find, replace, go to,
 * quit, recover), the mouse (tabs, the editor, scrolling), the replay's
 * stepping, function and editing keys, and control keys as commands
 * (save, undo, clipboard, variants).  Selecting and loading variants are
 * here too.  Does not draw: a key changes state and the next frame shows
 * it.  What keys share with the loop, the LLM pane and the replay
 * (messages, prompts, saving, submitting) is tui_actions.c's, which never
 * calls back here.
 *
 * Invariants: every key read is handled in the same pass; in a replay,
 * keys that would edit are refused (tui_replay.c); the time of the first
 * unanswered key is kept for the latency log.
 */
#include "tui_int.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- keys ----------------------------------------------------------------------- */

static void prompt_done(kb_tui__ui *t)
{
	const char *in = t->input.s ? t->input.s : "";
	kb_tui__prompt p = t->prompt;
	t->prompt = KB_TUI__P_NONE;
	bool wrapped = false;
	switch (p) {
	case KB_TUI__P_FIND:
		if (*in)
			snprintf(t->find, sizeof t->find, "%s", in);
		if (kb_tui__ed_search(t->ed, t->find, 0, &wrapped) < 0)
			kb_tui__set_msg(t, "not found: %s", t->find);
		else if (wrapped)
			kb_tui__set_msg(t, "search wrapped");
		break;
	case KB_TUI__P_REPLACE_FROM:
		snprintf(t->find, sizeof t->find, "%s", in);
		kb_tui__prompt_start(t, KB_TUI__P_REPLACE_TO);
		break;
	case KB_TUI__P_REPLACE_TO: {
		int n = kb_tui__ed_replace_all(t->ed, t->find, in, 0);
		kb_tui__set_msg(t, "%d replaced", n < 0 ? 0 : n);
		break;
	}
	case KB_TUI__P_GOTO:
		kb_tui__ed_goto(t->ed, atoi(in), 1);
		break;
	case KB_TUI__P_ASK:
		kb_tui__llm_ask(t, in);
		break;
	default:
		break;
	}
}

static void prompt_key(kb_tui__ui *t, int code, wint_t ch)
{
	if (!code && (ch == 27 || ch == KB_TUI__CTRL('c'))) {
		t->prompt = KB_TUI__P_NONE;
	} else if (t->prompt == KB_TUI__P_QUIT || t->prompt == KB_TUI__P_RECOVER) {
		bool yes = !code && (ch == 'y' || ch == 'Y');
		if (t->prompt == KB_TUI__P_QUIT && yes) {
			t->quit = true;
			if (t->recover_path) /* the edits are discarded: not offered again */
				unlink(t->recover_path);
		}
		if (t->prompt == KB_TUI__P_RECOVER && yes) {
			kb_buf b = KB_BUF_INIT;
			if (kb_file_read(t->recover_path, &b, NULL) == 0)
				kb_tui__ed_select_all(t->ed), kb_tui__ed_paste_text(t->ed, b.s, b.len);
			kb_buf_free(&b);
			kb_tui__set_msg(t, "recovered the unsaved buffer (Ctrl-S writes it to %s)",
					t->o.path);
			kb_tui__submit(t);
		}
		t->prompt = KB_TUI__P_NONE;
	} else if (!code && (ch == '\n' || ch == '\r')) {
		prompt_done(t);
	} else if ((code && ch == KEY_BACKSPACE) || (!code && (ch == 127 || ch == 8))) {
		if (t->input.len)
			t->input.s[--t->input.len] = '\0';
	} else if (!code && ch >= 32) {
		char mb[8];
		int n = wctomb(mb, (wchar_t)ch);
		if (n > 0)
			kb_buf_catn(&t->input, mb, (size_t)n);
	}
}

/* Function and editing keys; true when handled. */
static bool special_key(kb_tui__ui *t, int k)
{
	const char *name = keyname(k);
	kb_tui__ed *ed = t->ed;
	int page = t->L.editor.h > 1 ? t->L.editor.h - 1 : 1;
	switch (k) {
	case KEY_LEFT: kb_tui__ed_move(ed, KB_TUI__ED_LEFT, 1, false); return true;
	case KEY_RIGHT: kb_tui__ed_move(ed, KB_TUI__ED_RIGHT, 1, false); return true;
	case KEY_UP: kb_tui__ed_move(ed, KB_TUI__ED_UP, 1, false); return true;
	case KEY_DOWN: kb_tui__ed_move(ed, KB_TUI__ED_DOWN, 1, false); return true;
	case KEY_SLEFT: kb_tui__ed_move(ed, KB_TUI__ED_LEFT, 1, true); return true;
	case KEY_SRIGHT: kb_tui__ed_move(ed, KB_TUI__ED_RIGHT, 1, true); return true;
	case KEY_SR: kb_tui__ed_move(ed, KB_TUI__ED_UP, 1, true); return true;
	case KEY_SF: kb_tui__ed_move(ed, KB_TUI__ED_DOWN, 1, true); return true;
	case KEY_HOME: kb_tui__ed_move(ed, KB_TUI__ED_HOME, 1, false); return true;
	case KEY_END: kb_tui__ed_move(ed, KB_TUI__ED_END, 1, false); return true;
	case KEY_PPAGE: kb_tui__ed_move(ed, KB_TUI__ED_PAGE_UP, page, false); return true;
	case KEY_NPAGE: kb_tui__ed_move(ed, KB_TUI__ED_PAGE_DOWN, page, false); return true;
	case KEY_BACKSPACE: kb_tui__ed_backspace(ed, kb_now_ms()); return true;
	case KEY_DC: kb_tui__ed_delete_char(ed, kb_now_ms()); return true;
	case KEY_F(1): t->pane = KB_TUI__PANE_HELP, t->pane_top = 0; return true;
	case KEY_F(2): t->pane = kb_tui__pane_step(t->pane, -1, t->o.path), t->pane_top = 0; return true;
	case KEY_F(3): t->pane = kb_tui__pane_step(t->pane, +1, t->o.path), t->pane_top = 0; return true;
	case KEY_F(4): t->details = !t->details; return true;
	case KEY_F(5):
		kb_tui__submit(t), kb_tui__set_msg(t, "compiling and running the buffer");
		return true;
	case KEY_F(8): kb_tui__profile(t); return true;
	case KEY_F(6): t->split -= 5; return true;
	case KEY_F(7): t->split += 5; return true;
	case KEY_F(9): t->pane_top = t->pane_top > 10 ? t->pane_top - 10 : 0; return true;
	case KEY_F(10): t->pane_top += 10; return true;
	case KEY_RESIZE: return true;
	}
	if (!name)
		return false;
	static const struct { const char *name; kb_tui__ed_motion m; bool sel; } ext[] = {
		{"kLFT5", KB_TUI__ED_WORD_LEFT, false}, {"kRIT5", KB_TUI__ED_WORD_RIGHT, false},
		{"kLFT6", KB_TUI__ED_WORD_LEFT, true}, {"kRIT6", KB_TUI__ED_WORD_RIGHT, true},
		{"kHOM5", KB_TUI__ED_BUF_START, false}, {"kEND5", KB_TUI__ED_BUF_END, false},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(ext); i++)
		if (!strcmp(name, ext[i].name)) {
			kb_tui__ed_move(ed, ext[i].m, 1, ext[i].sel);
			return true;
		}
	return false;
}

static void mouse(kb_tui__ui *t)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & (BUTTON4_PRESSED)) {
		t->pane_top = t->pane_top > 3 ? t->pane_top - 3 : 0;
		return;
	}
	if (ev.bstate & (BUTTON5_PRESSED)) {
		t->pane_top += 3;
		return;
	}
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
		return;
	if (ev.y == t->L.tabs.y && ev.x >= t->L.tabs.x) {
		int x[KB_TUI__NPANES];
		const char *name[KB_TUI__NPANES];
		kb_tui__tabs(t, x, name);
		for (int i = 0; i < KB_TUI__NPANES; i++)
			if (x[i] >= 0 && ev.x >= x[i] && ev.x < x[i] + (int)strlen(name[i]))
				t->pane = i, t->pane_top = 0;
	} else if (ev.x < t->L.editor.x + t->L.editor.w && ev.y >= t->L.editor.y &&
		   ev.y < t->L.editor.y + t->L.editor.h) {
		int gutter = snprintf(NULL, 0, "%d", t->ed->nlines) + 2;
		gutter = gutter < 5 ? 5 : gutter;
		int line = t->top + ev.y - t->L.editor.y;
		kb_tui__ed_pos p = {line, kb_tui__ed_col_at_x(t->ed, line, ev.x - gutter + t->left)};
		kb_tui__ed_set_cursor(t->ed, p, false);
	}
}

/* ---- variants: select, diff, load ---------------------------------------- */

/* Ctrl-N / Ctrl-P: the first press selects the newest. */
static void select_variant(kb_tui__ui *t, int step)
{
	kb_err err = {0};
	int n = kb_app_variant_count(t->o.path, &err);
	if (n <= 0) {
		kb_tui__set_msg(t, "%s",
				n < 0 ? err.msg : "no variants yet: save a version that compiles");
		return;
	}
	int v = t->variant ? t->variant + step : n;
	t->variant = v < 1 ? 1 : v > n ? n : v;
	t->pane = KB_TUI__PANE_VARIANTS, t->pane_top = 0;
}

/* Ctrl-O: the selected variant's text replaces the buffer as one edit, so
 * Ctrl-Z brings back what was there; the file changes only on save. */
static void load_variant(kb_tui__ui *t)
{
	if (!t->variant) {
		kb_tui__set_msg(t, "select a variant first (Ctrl-N / Ctrl-P)");
		return;
	}
	char name[16], *text = NULL;
	size_t len = 0;
	kb_err err = {0};
	snprintf(name, sizeof name, "v%d", t->variant);
	if (kb_app_variant_text(name, t->o.path, &text, &len, &err) < 0) {
		kb_tui__set_msg(t, "%s", err.msg);
		return;
	}
	kb_tui__ed_select_all(t->ed);
	if (len)
		kb_tui__ed_paste_text(t->ed, text, len);
	else
		kb_tui__ed_delete_selection(t->ed);
	kb_tui__ed_goto(t->ed, 1, 0);
	free(text);
	kb_tui__set_msg(t, "%s is in the editor (Ctrl-Z undoes; Ctrl-S saves and runs it)", name);
}

/* A plain key: control keys are commands, the rest is typed. */
static void char_key(kb_tui__ui *t, wint_t ch)
{
	kb_tui__ed *ed = t->ed;
	double now = kb_now_ms();
	switch (ch) {
	case KB_TUI__CTRL('s'): kb_tui__save(t); return;
	case KB_TUI__CTRL('q'):
		if (kb_tui__ed_dirty(ed))
			kb_tui__prompt_start(t, KB_TUI__P_QUIT);
		else
			t->quit = true;
		return;
	case KB_TUI__CTRL('z'):
		if (kb_tui__ed_undo(ed) < 0)
			kb_tui__set_msg(t, "nothing to undo");
		return;
	case KB_TUI__CTRL('y'):
		if (kb_tui__ed_redo(ed) < 0)
			kb_tui__set_msg(t, "nothing to redo");
		return;
	case KB_TUI__CTRL('a'): kb_tui__ed_select_all(ed); return;
	case KB_TUI__CTRL('c'): kb_tui__ed_copy(ed); return;
	case KB_TUI__CTRL('x'): kb_tui__ed_cut(ed); return;
	case KB_TUI__CTRL('v'): kb_tui__ed_paste(ed); return;
	case KB_TUI__CTRL('f'): kb_tui__prompt_start(t, KB_TUI__P_FIND); return;
	case KB_TUI__CTRL('r'): kb_tui__prompt_start(t, KB_TUI__P_REPLACE_FROM); return;
	case KB_TUI__CTRL('g'): kb_tui__prompt_start(t, KB_TUI__P_GOTO); return;
	case KB_TUI__CTRL('n'): select_variant(t, +1); return;
	case KB_TUI__CTRL('p'): select_variant(t, -1); return;
	case KB_TUI__CTRL('d'): t->pane = KB_TUI__PANE_DIFF, t->pane_top = 0; return;
	case KB_TUI__CTRL('o'): load_variant(t); return;
	case KB_TUI__CTRL('l'): kb_tui__llm_prompt(t); return;
	case KB_TUI__CTRL('t'): kb_tui__llm_apply(t); return;
	case KB_TUI__CTRL('w'): kb_tui__llm_reject(t); return;
	case '\r':
	case '\n': kb_tui__ed_newline(ed, now); return;
	case 127:
	case 8: kb_tui__ed_backspace(ed, now); return;
	}
	if (ch < 32 && ch != '\t')
		return;
	char mb[8];
	int n = wctomb(mb, (wchar_t)ch);
	if (n > 0)
		kb_tui__ed_type(ed, mb, (size_t)n, now);
}

/* ESC: Alt-digit picks a pane (the N-th tab); a lone ESC clears the
 * selection. */
static void escape_key(kb_tui__ui *t)
{
	wint_t next;
	timeout(30);
	int rc = get_wch(&next);
	nodelay(stdscr, TRUE);
	int pane = rc == OK && next >= '1' && next <= '9' ? kb_tui__pane_nth((int)(next - '1'), t->o.path)
							       : -1;
	if (pane >= 0) {
		t->pane = pane;
		t->pane_top = 0;
	} else if (rc == ERR && !kb_tui__llm_cancel(t)) {
		kb_tui__ed_set_cursor(t->ed, t->ed->cur, false);
	}
}

void kb_tui__keys(kb_tui__ui *t)
{
	wint_t ch;
	int rc;
	while ((rc = get_wch(&ch)) != ERR) {
		if (!t->key_ms)
			t->key_ms = kb_now_ms();
		bool code = rc == KEY_CODE_YES;
		if (t->prompt != KB_TUI__P_NONE)
			prompt_key(t, code, ch);
		else if (code && ch == KEY_MOUSE)
			mouse(t);
		else if (t->steps && !code && ch != 27 && kb_tui__replay_key(t, ch))
			;
		else if (t->steps && code && (ch == KEY_BACKSPACE || ch == KEY_DC))
			kb_tui__replay_key(t, 0);
		else if (code)
			special_key(t, (int)ch);
		else if (ch == 27)
			escape_key(t);
		else
			char_key(t, ch);
	}
}
