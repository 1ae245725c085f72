/*
 * tui_actions.c - what the workbench does on request of the keys, the
 * loop, the LLM pane and the replay alike, and which asks nothing of them
 * back: a message in the status line, a question asked there (a prompt),
 * the buffer handed to the worker (a compile and run, F8's profile), the
 * highlighter and panes of the file's kind, and the file on disk: saving
 * the buffer (then a compile and run), the safety net of autosave to a
 * recovery file (and offering it at start when it differs from the file),
 * and reloading the file when another editor changed it.  Does not read
 * keys, watch (the loop polls the inotify descriptor tui.c opens), parse
 * or draw.
 *
 * Invariants: this file calls no other tui*.c file (tui.c, tui_keys.c,
 * tui_llm.c and tui_replay.c call it), so an action never re-enters the
 * key dispatcher; a message shows for 5 s; the recovery file of a path
 * lives under $XDG_DATA_HOME/kbench/recover (or ~/.local/share/...), named
 * by a hash of the real path; it is written only with unsaved edits, at
 * most every AUTOSAVE_MS, and removed by a save or by quitting without
 * saving; a file changed on disk never replaces unsaved edits; a file that
 * ends with a line ending is saved with one.
 */
#include "tui_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUTOSAVE_MS 2000.0

/* ---- the status line: messages and prompts ------------------------------- */

void kb_tui__set_msg(kb_tui__ui *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
	t->msg_until = kb_now_ms() + 5000;
}

void kb_tui__prompt_start(kb_tui__ui *t, kb_tui__prompt p)
{
	t->prompt = p;
	kb_buf_reset(&t->input);
	kb_buf_catn(&t->input, "", 0);
}

/* ---- the worker's jobs --------------------------------------------------------- */

static void submit_job(kb_tui__ui *t, bool profile)
{
	kb_buf text = KB_BUF_INIT;
	kb_tui__ed_text(t->ed, &text);
	kb_tui__worker_submit(&t->w, t->o.path, text.s ? text.s : "", ++t->seq, profile);
	kb_buf_free(&text);
}

void kb_tui__submit(kb_tui__ui *t)
{
	submit_job(t, false);
}

/* F8: the run plus the quick counters and hot spots (Metrics, SASS). */
void kb_tui__profile(kb_tui__ui *t)
{
	bool no_gpu = t->res && t->res->run && kb_app_verdict(t->res->run) == KB_VERDICT_NO_GPU;
	if (!t->w.run || no_gpu) {
		kb_tui__set_msg(t,
				"profiling needs a GPU (and is off with --no-run or in a replay)");
		return;
	}
	submit_job(t, true);
	kb_tui__set_msg(t, "profiling: the run, quick counters and PC-sampling hot spots");
}

/* ---- the file's kind ------------------------------------------------------------- */

void kb_tui__file_kind(kb_tui__ui *t)
{
	kb_hl_lang lang = kb_tui__hl_lang_of(t->o.path);
	if (!t->hl || t->hl->lang != lang) {
		kb_tui__hl_free(t->hl);
		if (kb_tui__hl_new(&t->hl, lang, NULL, NULL) < 0)
			t->hl = NULL; /* plain text, still editable */
	}
	if (!kb_tui__pane_shown(t->pane, t->o.path))
		t->pane = KB_TUI__PANE_SUMMARY, t->pane_top = 0;
}

/* ---- files: save, recovery, reloading ------------------------------------ */

long long kb_tui__mtime_of(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec : 0;
}

char *kb_tui__recovery_path(const char *path)
{
	char *abs = realpath(path, NULL);
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, abs ? abs : path);
	char hex[KB_HASH_HEX];
	kb_hash_final(h, hex);
	free(abs);
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	char *dir = xdg && *xdg ? kb_xasprintf("%s/kbench/recover", xdg)
		    : kb_xasprintf("%s/.local/share/kbench/recover", home ? home : "/tmp");
	kb_mkdirs(dir, NULL);
	char *p = kb_xasprintf("%s/%.16s-%s", dir, hex, kb_basename(path));
	free(dir);
	return p;
}

int kb_tui__save(kb_tui__ui *t)
{
	kb_buf text = KB_BUF_INIT;
	kb_err err = {0};
	kb_tui__ed_save_text(t->ed, &text);
	/* the file's own ending: a buffer whose last line was taken away (a
	 * proposal or a paste without one) still ends the file with one */
	if (t->final_newline && text.len && text.s[text.len - 1] != '\n')
		kb_buf_cat(&text, t->ed->crlf ? "\r\n" : "\n");
	int rc = kb_file_write(t->o.path, text.s ? text.s : "", text.len, &err);
	kb_buf_free(&text);
	if (rc < 0) {
		kb_tui__set_msg(t, "NOT SAVED: %s", err.msg);
		return rc;
	}
	kb_tui__ed_mark_saved(t->ed);
	t->mtime = kb_tui__mtime_of(t->o.path);
	unlink(t->recover_path);
	kb_tui__set_msg(t, "saved %s", t->o.path);
	kb_tui__submit(t);
	return KB_OK;
}

/* Every 2 s with unsaved edits: the buffer goes to the recovery file. */
void kb_tui__autosave(kb_tui__ui *t)
{
	if (!t->recover_path)
		return;
	double now = kb_now_ms();
	if (now - t->last_autosave < AUTOSAVE_MS || t->ed->changes == t->autosaved_changes)
		return;
	t->last_autosave = now;
	t->autosaved_changes = t->ed->changes;
	if (!kb_tui__ed_dirty(t->ed))
		return;
	kb_buf text = KB_BUF_INIT;
	kb_tui__ed_save_text(t->ed, &text);
	kb_file_write(t->recover_path, text.s ? text.s : "", text.len, NULL);
	kb_buf_free(&text);
}

/* The file changed on disk (another editor saved it): reload it unless the
 * buffer has unsaved edits, and run the loop as for a save. */
void kb_tui__file_changed(kb_tui__ui *t)
{
	char ev[4096];
	while (t->inotify >= 0 && read(t->inotify, ev, sizeof ev) > 0)
		;
	long long m = kb_tui__mtime_of(t->o.path);
	if (m == t->mtime)
		return;
	t->mtime = m;
	if (kb_tui__ed_dirty(t->ed)) {
		kb_tui__set_msg(t, "%s changed on disk; your unsaved edits are kept (Ctrl-S overwrites)",
				t->o.path);
		return;
	}
	kb_buf text = KB_BUF_INIT;
	if (kb_file_read(t->o.path, &text, NULL) == 0) {
		kb_tui__ed_pos keep = t->ed->cur;
		kb_tui__ed_load(t->ed, text.s, text.len);
		t->final_newline = text.len && text.s[text.len - 1] == '\n';
		kb_tui__ed_set_cursor(t->ed, keep, false);
		kb_tui__set_msg(t, "reloaded %s", t->o.path);
		kb_tui__submit(t);
	}
	kb_buf_free(&text);
}

/* A recovery file that differs from the file: offer it. */
void kb_tui__offer_recovery(kb_tui__ui *t)
{
	kb_buf rec = KB_BUF_INIT, now = KB_BUF_INIT;
	if (kb_file_read(t->recover_path, &rec, NULL) == 0) {
		kb_tui__ed_save_text(t->ed, &now);
		if (rec.len != now.len || memcmp(rec.s, now.s, rec.len))
			kb_tui__prompt_start(t, KB_TUI__P_RECOVER);
	}
	kb_buf_free(&rec);
	kb_buf_free(&now);
}
