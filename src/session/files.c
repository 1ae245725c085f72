/*
 * files.c - which file of a session a name means, how each is shown, and
 * which commits belong to which file in a session recorded before files
 * were kept apart by their real path.
 *
 * A file is its real path (links resolved; in a detached session, the path
 * it is stored under): one history per file, whatever folder or repository
 * it is in.  What the user types is a path from the current directory
 * first: an existing file is that file and no other, whatever a name of
 * the session spells.  Only a path that names no existing file is looked
 * up among the session's names and the ends of its files' paths ("k.cu",
 * "b/k.cu"); when several files fit, the caller is told which (KB_EAMBIG),
 * never given one of them.  Files are shown by the shortest end of their
 * path that no other file of the session ends with.
 *
 * Sessions recorded by kbench up to 4627e7e kept every file outside a
 * repository under its basename in the session's private repository, and
 * looked a typed name up in files.json before the current directory, so
 * two files of one basename could put their variants on one path of one
 * repository.  Their journal says which file each commit was recorded
 * for ("commit", "saved_commit"): kb_session__foreign_commits gives the
 * commits recorded for other files, which are no variant of this one.
 * Does not own the name map itself (journal.c) nor the store (store*.c).
 */
#include "session_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether path ends with the whole components of end ("b/k.cu" ends with
 * "k.cu" and "b/k.cu", not with "/k.cu" nor "b/k"). */
static bool ends_with_path(const char *path, const char *end)
{
	size_t n = strlen(path), m = strlen(end);
	if (!m || m > n || strcmp(path + n - m, end))
		return false;
	return m == n || path[n - m - 1] == '/' || end[0] == '/';
}

/* The identities of the n files (kb_session__file_identity), a new array. */
static char **identities(const kb_session *s, json_t *names, char **files, int n)
{
	char **ids = kb_xcalloc((size_t)n + 1, sizeof *ids);
	for (int i = 0; i < n; i++)
		ids[i] = kb_session__file_identity(s, names, files[i]);
	return ids;
}

static void free_strs(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* The shortest end of ids[self] that no other of the n ends with: its
 * basename when that is unique, else one more folder at a time, else the
 * whole path. */
static const char *shortest_end(char **ids, int n, int self)
{
	const char *id = ids[self], *p = id + strlen(id);
	for (;;) {
		while (p > id && p[-1] != '/')
			p--;
		bool clash = false;
		for (int j = 0; j < n && !clash; j++)
			clash = j != self && strcmp(ids[j], id) && ends_with_path(ids[j], p);
		if (!clash || p == id)
			return p;
		if (--p == id)
			return id; /* "/k.cu" when "/x/k.cu" is a file too */
	}
}

char *kb_session_file_id(const kb_session *s, const char *name)
{
	json_t *names = kb_session__names(s);
	char *id = kb_session__file_identity(s, names, name);
	json_decref(names);
	return id;
}

char **kb_session_files_shown(const kb_session *s, char **files, int n)
{
	json_t *names = kb_session__names(s);
	char **ids = identities(s, names, files, n);
	char **out = kb_xcalloc((size_t)n + 1, sizeof *out);
	for (int i = 0; i < n; i++)
		out[i] = kb_xstrdup(shortest_end(ids, n, i));
	free_strs(ids, n);
	json_decref(names);
	return out;
}

char *kb_session_file_shown(const kb_session *s, const char *name)
{
	char **files = NULL;
	int n = kb_session_files(s, &files, NULL);
	json_t *names = kb_session__names(s);
	char *id = kb_session__file_identity(s, names, name), *out = NULL;
	char **shown = n > 0 ? kb_session_files_shown(s, files, n) : NULL;
	char **ids = n > 0 ? identities(s, names, files, n) : NULL;
	for (int i = 0; i < n && !out; i++)
		if (!strcmp(ids[i], id))
			out = kb_xstrdup(shown[i]);
	free_strs(ids, n);
	free_strs(shown, n);
	free_strs(files, n);
	json_decref(names);
	free(id);
	return out ? out : kb_xstrdup(name);
}

/* "a/k.cu, b/k.cu": the shown names of the files whose bit is set in pick
 * (NULL: every file). */
static void list_shown(char **shown, const bool *pick, int n, kb_buf *out)
{
	for (int i = 0, k = 0; i < n; i++)
		if (!pick || pick[i])
			kb_buf_catf(out, "%s%s", k++ ? ", " : "", shown[i]);
}

/* Sets pick[i] for each file that `typed` names without being an existing
 * file: one of its spellings, or the end of its path. The count. */
static int by_name(json_t *names, const kb_session *s, char **ids, int n, const char *typed,
		   bool *pick)
{
	const char *end = typed, *key;
	json_t *v;
	int hits = 0;
	while (!strncmp(end, "./", 2))
		end += 2;
	json_object_foreach(names, key, v) {
		if (strcmp(key, typed))
			continue;
		char *id = kb_session__file_identity(s, names, key);
		for (int i = 0; i < n; i++)
			pick[i] |= !strcmp(ids[i], id);
		free(id);
	}
	for (int i = 0; i < n; i++) {
		pick[i] |= ends_with_path(ids[i], end);
		hits += pick[i];
	}
	return hits;
}

int kb_session_file_find(const kb_session *s, const char *typed, char **name, kb_err *err)
{
	char **files = NULL;
	*name = NULL;
	int n = kb_session_files(s, &files, err);
	if (n < 0)
		return n;
	json_t *names = kb_session__names(s);
	char **ids = identities(s, names, files, n);
	char **shown = kb_session_files_shown(s, files, n);
	char *real = s->detached ? NULL : realpath(typed, NULL);
	bool *pick = kb_xcalloc((size_t)n + 1, sizeof *pick);
	int hits = 0, at = -1, rc = KB_OK;
	for (int i = 0; real && i < n; i++)
		if (!strcmp(ids[i], real))
			pick[i] = true, hits = 1;
	if (!real)
		hits = by_name(names, s, ids, n, typed, pick);
	for (int i = 0; i < n; i++)
		if (pick[i])
			at = i;
	kb_buf list = KB_BUF_INIT;
	if (hits == 1) {
		*name = kb_xstrdup(files[at]);
	} else if (hits > 1) {
		list_shown(shown, pick, n, &list);
		rc = kb_err_set(err, KB_EAMBIG, KB_DOM_NONE, 0,
				"'%s' is %d files of session %s (%s): say which with its path, as `--file %s`",
				typed, hits, s->id, list.s, shown[at]);
	} else {
		list_shown(shown, NULL, n, &list);
		bool other = real && strcmp(real, typed);
		rc = kb_err_set(err, KB_ENOTFOUND, KB_DOM_NONE, 0, "%s%s%s%s is not a file of session %s (%s%s)",
				typed, other ? " (" : "", other ? real : "", other ? ")" : "", s->id,
				n ? "its files: " : "nothing recorded yet", n ? list.s : "");
	}
	kb_buf_free(&list);
	free(pick);
	free(real);
	free_strs(shown, n);
	free_strs(ids, n);
	free_strs(files, n);
	json_decref(names);
	return rc;
}

/* ===== sessions recorded before files were kept apart ===== */

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
