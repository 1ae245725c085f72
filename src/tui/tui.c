/*
 * tui.c - the workbench's loop: one poll() over the keyboard, the worker's
 * wake pipe and the watched file (inotify), a redraw when something
 * changed, never a blocking call on the UI thread (style rule 16).  Owns
 * the workbench's life cycle (the file or the replay opened, the worker
 * and the watch started, the terminal's modes, and the terminal restored
 * on every way out) and the merging of what the worker hands back into
 * the shown result.
 *
 * The rest of the workbench works on the same kb_tui__ui (tui_int.h), in
 * layers that call only downwards: tui_actions.c (messages, prompts, the
 * buffer handed to the worker, saving, autosave to a recovery file,
 * reloading a file changed on disk) at the bottom; tui_llm.c (the LLM
 * pane) and tui_replay.c (stepping through a recorded session) on it;
 * tui_pane.c (the tabs and the result pane) and tui_draw.c (one frame:
 * colours, the editor, the title and status lines) to show it;
 * tui_keys.c (keys, prompts, the mouse, variants) dispatching to all of
 * them; and this file on top.
 *
 * Invariants: one pass of the loop draws once, then waits at most 250 ms;
 * key handlers and merged results only change state, the next pass shows
 * it; the recovery file is removed on a clean exit.
 */
#include "tui_int.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* ---- the loop ------------------------------------------------------------------- */

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void take_result(kb_tui__ui *t)
{
	for (kb_tui__piece *p; (p = kb_tui__worker_take(&t->w));) {
		bool run = p->kind == KB_TUI__PIECE_RUN;
		char note[sizeof p->note];
		snprintf(note, sizeof note, "%s", run ? p->note : "");
		if (kb_tui__worker_merge(&t->res, p) && run && t->res->run) {
			const char *v = kb_app_run_verdict(t->res->run);
			const char *msg = json_string_value(json_object_get(t->res->run, "message"));
			/* which require line, and its values */
			bool why = kb_app_verdict(t->res->run) == KB_VERDICT_UNSUPPORTED && msg;
			kb_tui__set_msg(t, "%s%s%s", v, why ? ": " : "", why ? msg : "");
		}
		/* e.g. a run stopped by a newer save (whose compile may be shown
		 * already): the status bar says so either way */
		if (note[0])
			kb_tui__set_msg(t, "%s", note);
	}
}

static void loop(kb_tui__ui *t)
{
	struct pollfd pf[4] = {{0, POLLIN, 0}, {t->w.wake[0], POLLIN, 0}, {t->llm.wake[0], POLLIN, 0},
			       {t->inotify, POLLIN, 0}};
	while (!t->quit && !got_signal) {
		kb_tui__draw(t);
		if (t->key_ms && t->latency_log)
			fprintf(t->latency_log, "%.3f\n", kb_now_ms() - t->key_ms);
		t->key_ms = 0;
		int n = poll(pf, t->inotify >= 0 ? 4 : 3, 250);
		if (n < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			kb_tui__keys(t);
		if (pf[1].revents)
			take_result(t);
		if (pf[2].revents)
			kb_tui__llm_take(t);
		if (t->inotify >= 0 && pf[3].revents)
			kb_tui__file_changed(t);
		kb_tui__autosave(t);
	}
}

/* ---- start and stop ------------------------------------------------------------ */

static int start(kb_tui__ui *t, kb_err *err)
{
	kb_buf text = KB_BUF_INIT;
	int rc = t->o.replay ? kb_tui__start_replay(t, err) : kb_file_read(t->o.path, &text, err);
	if (rc < 0) {
		kb_buf_free(&text);
		return rc;
	}
	if (!t->o.replay) {
		t->ed = kb_tui__ed_new();
		kb_tui__ed_load(t->ed, text.s, text.len);
		t->final_newline = text.len && text.s[text.len - 1] == '\n';
	}
	kb_buf_free(&text);
	kb_tui__file_kind(t);
	kb_tui__llm_init(t);
	t->split = 55;
	t->inotify = -1;
	t->mtime = kb_tui__mtime_of(t->o.path);
	t->recover_path = t->o.replay ? NULL : kb_tui__recovery_path(t->o.path);
	if (t->o.watch && !t->o.replay) {
		t->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		char *dir = kb_xstrdup(t->o.path), *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (t->inotify >= 0)
			inotify_add_watch(t->inotify, slash ? dir : ".", IN_CLOSE_WRITE | IN_MOVED_TO);
		free(dir);
	}
	kb_tui__worker_opts wo = {
		.arch = t->o.arch, .options = t->o.options, .noptions = t->o.noptions,
		.timeout_ms = t->o.timeout_ms, .run = !t->o.no_run && !t->o.replay,
		/* the replayed texts are already in their session */
		.record = !t->o.replay && kb_app_recording(),
	};
	return kb_tui__worker_start(&t->w, &wo, err);
}

static void screen_on(kb_tui__ui *t)
{
	if (!getenv("ESCDELAY"))
		setenv("ESCDELAY", "25", 1);
	initscr();
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	kb_tui__init_colors(t);
}

int kb_tui_run(const kb_tui_opts *o)
{
	kb_tui__ui t;
	memset(&t, 0, sizeof t);
	t.o = *o;
	setlocale(LC_ALL, "");
	kb_err err = {0};
	if (start(&t, &err) < 0) {
		fprintf(stderr, "kbench-tui: %s\n", err.msg);
		return 3;
	}
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	const char *lat = getenv("KBENCH_TUI_LATENCY");
	t.latency_log = lat && *lat ? fopen(lat, "w") : NULL;
	screen_on(&t);
	if (!t.o.replay)
		kb_tui__offer_recovery(&t);
	kb_tui__submit(&t);
	loop(&t);
	endwin();
	kb_tui__llm_stop(&t);
	kb_tui__worker_stop(&t.w);
	if (t.recover_path && !kb_tui__ed_dirty(t.ed))
		unlink(t.recover_path);
	json_decref(t.steps);
	free(t.replay_file);
	kb_app_headline_free(&t.replay_head);
	kb_buf_free(&t.session_text);
	kb_tui__result_free(t.res);
	kb_tui__hl_free(t.hl);
	kb_tui__ed_free(t.ed);
	kb_buf_free(&t.input);
	free(t.recover_path);
	if (t.latency_log)
		fclose(t.latency_log);
	if (t.inotify >= 0)
		close(t.inotify);
	return got_signal ? 128 + got_signal : 0;
}
