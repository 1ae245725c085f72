/*
 * tui_status.c - the workbench's title and status lines: the file, dirty
 * mark, verdict and worker phase (or the replay step) on top; the cursor
 * place, the keys and one of the prompt, the latest message or the error on
 * the cursor's line at the bottom (the message is set by tui_actions.c and
 * expires after 5 s).
 *
 * Invariants: a message never hides a prompt; the keys stay beside a
 * message when both fit.
 */
#include "tui_int.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

void kb_tui__draw_title(kb_tui__ui *t)
{
	attron(COLOR_PAIR(KB_TUI__C_TITLE));
	mvhline(0, 0, ' ', COLS);
	char state[128] = "idle";
	pthread_mutex_lock(&t->w.lock);
	if (t->w.busy || t->w.has_next)
		snprintf(state, sizeof state, "%s...", t->w.phase[0] ? t->w.phase : "queued");
	pthread_mutex_unlock(&t->w.lock);
	const char *verdict = t->res && t->res->run ? kb_app_run_verdict(t->res->run)
			      : t->res && t->res->compiled ? (t->res->unit.status == 0 ? "compiled" : "errors")
			      : "";
	/* the headline where the Summary (which opens with it) is not shown */
	const kb_app_headline *h = t->pane != KB_TUI__PANE_SUMMARY ? kb_tui__headline(t) : NULL;
	kb_buf head = KB_BUF_INIT;
	if (t->steps)
		mvprintw(0, 0, " kbench-tui  replay %s  step %d/%d  %s  ", t->o.replay, t->step + 1,
			 (int)json_array_size(t->steps), t->o.path);
	else
		mvprintw(0, 0, " kbench-tui  %s%s  ", t->o.path, kb_tui__ed_dirty(t->ed) ? " *" : "");
	int x = getcurx(stdscr), room = COLS - x - (int)strlen(state) - 2;
	if (h && room >= 20) {
		kb_app_headline_text(h, room, false, &head);
		mvaddstr(0, x, head.s ? head.s : "");
		printw("  %s", state);
	} else if (t->steps) {
		printw("%s", state);
	} else {
		printw("[%s]  %s", verdict, state);
	}
	kb_buf_free(&head);
	attroff(COLOR_PAIR(KB_TUI__C_TITLE));
}

void kb_tui__draw_status(kb_tui__ui *t)
{
	attron(COLOR_PAIR(KB_TUI__C_STATUS));
	mvhline(LINES - 1, 0, ' ', COLS);
	static const char *const asks[] = {"", "find: ", "replace: ", "with: ", "go to line: ",
					  "unsaved edits: quit anyway? (y/n) ",
					  "a recovered buffer is newer than the file: use it? (y/n) ",
					  "ask the model (Enter alone: how can this be faster?): "};
	const kb_diag *d = kb_tui__diag_on(t, t->ed->cur.line + 1);
	char keys[160];
	snprintf(keys, sizeof keys, "%d:%d  %s", t->ed->cur.line + 1, t->ed->cur.col + 1,
		 t->steps ? "replay: n/p step  < > first/last  F2/F3 panes  ^F find  F1 help  ^Q quit"
			  : "^S save+run  F5 run  F8 profile  F2/F3 panes  ^Z undo  ^F find  F1 help  ^Q quit");
	char said[512] = "";
	if (t->prompt != KB_TUI__P_NONE)
		snprintf(said, sizeof said, "%s%s", asks[t->prompt], t->input.s ? t->input.s : "");
	else if (kb_now_ms() < t->msg_until)
		snprintf(said, sizeof said, "%s", t->msg);
	else if (d)
		snprintf(said, sizeof said, "%d:%d: %s", d->line, d->col, d->msg);
	if (!said[0])
		mvprintw(LINES - 1, 0, " %s", keys);
	else if (t->prompt == KB_TUI__P_NONE && (int)(strlen(said) + strlen(keys)) + 6 <= COLS)
		mvprintw(LINES - 1, 0, " %s  |  %s", said, keys); /* a message, and the keys still */
	else
		mvprintw(LINES - 1, 0, " %s", said);
	attroff(COLOR_PAIR(KB_TUI__C_STATUS));
}
