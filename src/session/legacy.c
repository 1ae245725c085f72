/*
 * legacy.c - sessions recorded before files were kept apart by their real
 * path (kbench up to 4627e7e).  Such a session kept every file outside a
 * repository under its basename in the session's private repository, so
 * two files of one basename could put their variants on one path of one
 * repository.  Its journal says which file each commit was recorded for
 * ("commit", "saved_commit"): kb_session__foreign_commits gives the
 * commits recorded for other files, which are no variant of this one.
 * store_repo.c asks, when it opens a file's store; this file reads the
 * journal and the name map (journal.c) and knows no store.
 */
#include "session_int.h"

#include <stdlib.h>
#include <string.h>

bool kb_session__legacy(const kb_session *s)
{
	if (s->detached)
		return false;
	char *p = kb_xasprintf("%s/meta.json", s->dir);
	json_t *meta = json_load_file(p, 0, NULL);
	bool legacy = meta && !json_object_get(meta, KB_SESSION_KEYED);
	json_decref(meta);
	free(p);
	return legacy;
}

/* Adds commit id text to *out unless it is there. */
static void add_oid(const char *text, git_oid **out, int *n, int *cap)
{
	git_oid oid;
	if (!text || git_oid_fromstr(&oid, text) < 0)
		return;
	for (int i = 0; i < *n; i++)
		if (git_oid_equal(&(*out)[i], &oid))
			return;
	*KB_PUSH(*out, *n, *cap) = oid;
}

int kb_session__foreign_commits(const kb_session *s, const char *name, git_oid **out, int *n)
{
	json_t *evs = NULL;
	long trunc;
	git_oid *own = NULL, *other = NULL;
	int nown = 0, cown = 0, nother = 0, cother = 0;
	*out = NULL;
	*n = 0;
	if (kb_session_journal_read(s, &evs, &trunc, NULL) < 0)
		return KB_OK; /* no journal: no commit is known to be another file's */
	json_t *names = kb_session__names(s), *memo = json_object();
	char *mine = kb_session__file_identity(s, names, name);
	for (size_t i = 0; i < json_array_size(evs); i++) {
		json_t *ev = json_array_get(evs, i);
		const char *f = json_string_value(json_object_get(ev, "file"));
		if (!f)
			continue;
		json_t *theirs = json_object_get(memo, f);
		if (!theirs) {
			char *id = kb_session__file_identity(s, names, f);
			json_object_set_new(memo, f, theirs = json_boolean(strcmp(id, mine) != 0));
			free(id);
		}
		bool t = json_is_true(theirs);
		add_oid(json_string_value(json_object_get(ev, "commit")), t ? &other : &own,
			t ? &nother : &nown, t ? &cother : &cown);
		add_oid(json_string_value(json_object_get(ev, "saved_commit")), t ? &other : &own,
			t ? &nother : &nown, t ? &cother : &cown);
	}
	/* a commit recorded for this file too (the same text) stays its own */
	for (int i = 0; i < nother; i++) {
		bool shared = false;
		for (int k = 0; k < nown && !shared; k++)
			shared = git_oid_equal(&own[k], &other[i]);
		if (!shared)
			other[(*n)++] = other[i];
	}
	*out = other;
	free(own);
	free(mine);
	json_decref(memo);
	json_decref(names);
	json_decref(evs);
	return KB_OK;
}
