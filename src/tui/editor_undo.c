/*
 * editor_undo.c - the editor's undo and redo.  Owns the undo and redo
 * stacks of records, the grouping of records into steps (one command, or a
 * run of typing of one kind at the cursor), and the recorded edits
 * (kb_tui__ed_do_insert / kb_tui__ed_do_delete) that every command of
 * editor_edit.c and editor_search.c makes.  Does not own the text: records
 * are applied through the primitive edits of editor.c, so undo and redo
 * queue edit events like any other change.
 *
 * Invariants: an undo step is the run of records with the same gid on the
 * stack; a new recorded edit empties the redo stack; kb_tui__ed_begin opens
 * (or continues) the step and kb_tui__ed_finish closes it, keeping the
 * cursor after it for redo.
 */
#include "tui_int.h"

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
