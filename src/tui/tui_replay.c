/*
 * tui_replay.c - stepping through a recorded session (kbench-tui --replay):
 * the session's events as steps, the editor holding the newest text
 * recorded at or before the current step, compiled afresh, and the keys
 * of a replay.  Does not record, run or write files.
 *
 * Invariants: a replay is read-only (edits are refused with a message);
 * the editor is reloaded only when the step's text or file differ from
 * what it holds.
 */
#include "tui_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- replay: stepping through a recorded session -------------------------- */

/* The headline of the step's variant, against its file's variants. */
static void step_headline(kb_tui__ui *t, json_t *step)
{
	kb_app_headline_free(&t->replay_head);
	const char *name = json_string_value(json_object_get(step, "variant"));
	kb_app_headline_of(json_string_value(json_object_get(step, "file")), name, NULL,
			   &t->replay_head, NULL);
}

/* Step i: the editor holds the newest text recorded at or before it (an
 * edit event has none of its own), compiled afresh for SASS/PTX/occupancy. */
static void go_step(kb_tui__ui *t, int i)
{
	int n = (int)json_array_size(t->steps);
	t->step = i < 0 ? 0 : i >= n ? n - 1 : i;
	json_t *with_text = NULL;
	for (int k = t->step; k >= 0 && !with_text; k--)
		if (json_object_get(json_array_get(t->steps, (size_t)k), "text"))
			with_text = json_array_get(t->steps, (size_t)k);
	if (!with_text)
		return;
	step_headline(t, with_text);
	const char *text = json_string_value(json_object_get(with_text, "text"));
	const char *file = json_string_value(json_object_get(with_text, "file"));
	size_t len = json_string_length(json_object_get(with_text, "text"));
	kb_buf now = KB_BUF_INIT;
	kb_tui__ed_save_text(t->ed, &now);
	bool same = now.len == len && (!len || !memcmp(now.s, text, len)) && t->replay_file &&
		    !strcmp(t->replay_file, file);
	kb_buf_free(&now);
	if (same)
		return;
	free(t->replay_file);
	t->replay_file = kb_xstrdup(file);
	t->o.path = t->replay_file;
	kb_tui__ed_load(t->ed, text, len);
	kb_tui__file_kind(t);
	t->top = t->left = 0;
	kb_tui__submit(t);
}

/* The session's steps; the editor starts at the first that has a text. */
int kb_tui__start_replay(kb_tui__ui *t, kb_err *err)
{
	int rc = kb_app_replay_steps(t->o.replay, &t->steps, err);
	if (rc < 0)
		return rc;
	/* Variants, Diff and Roofline then show the replayed session. */
	setenv("KBENCH_SESSION", t->o.replay, 1);
	size_t first = 0;
	while (first < json_array_size(t->steps) &&
	       !json_object_get(json_array_get(t->steps, first), "text"))
		first++;
	if (first == json_array_size(t->steps))
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0,
				  "session %s has no recorded variant to replay", t->o.replay);
	json_t *s = json_array_get(t->steps, first);
	t->replay_file = kb_xstrdup(json_string_value(json_object_get(s, "file")));
	t->o.path = t->replay_file;
	t->step = (int)first;
	step_headline(t, s);
	t->ed = kb_tui__ed_new();
	kb_tui__ed_load(t->ed, json_string_value(json_object_get(s, "text")),
			json_string_length(json_object_get(s, "text")));
	return 0;
}

/* Replay is read-only: n/p/</> step, moving and finding work, edits do not. */
bool kb_tui__replay_key(kb_tui__ui *t, wint_t ch)
{
	switch (ch) {
	case 'n': case ' ': go_step(t, t->step + 1); return true;
	case 'p': go_step(t, t->step - 1); return true;
	case '<': go_step(t, 0); return true;
	case '>': go_step(t, (int)json_array_size(t->steps) - 1); return true;
	case KB_TUI__CTRL('q'): case KB_TUI__CTRL('f'): case KB_TUI__CTRL('g'):
	case KB_TUI__CTRL('c'): case KB_TUI__CTRL('a'): case KB_TUI__CTRL('d'):
	case KB_TUI__CTRL('n'): case KB_TUI__CTRL('p'):
		return false;
	}
	kb_tui__set_msg(t,
			"replay is read-only: n / p next / previous step, < > first / last, ^Q quits");
	return true;
}
