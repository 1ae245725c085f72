/*
 * tui_files.c - the workbench's file on disk: saving the buffer (then a
 * compile and run), the safety net of autosave to a recovery file (and
 * offering it at start when it differs from the file), and reloading the
 * file when another editor changed it.  Does not watch (the loop polls the
 * inotify descriptor tui.c opens) and does not parse or draw.
 *
 * Invariants: the recovery file of a path lives under
 * $XDG_DATA_HOME/kbench/recover (or ~/.local/share/...), named by a hash
 * of the real path; it is written only with unsaved edits, at most every
 * AUTOSAVE_MS, and removed by a save or by quitting without saving; a
 * file changed on disk never replaces unsaved edits; a file that ends with
 * a line ending is saved with one.
 */
#include "tui_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AUTOSAVE_MS 2000.0

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
