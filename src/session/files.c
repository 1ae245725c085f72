/*
 * files.c - which files a session has, how each is shown, and which file
 * of a session a name means.
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
 * A session's files are those its journal names, each once whatever name
 * it goes by, and those files.json names whose store holds a variant (a
 * kbench killed between a first commit and its journal line).
 *
 * Sessions recorded by kbench up to 4627e7e also looked a typed name up in
 * files.json before the current directory; which commits are a file's in
 * such a session is legacy.c's.  Does not own the name map itself
 * (journal.c) nor the store (store*.c), which it asks.
 */
#include "session_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===== the files of a session ===== */

/* The files of a session, each once (by identity), in the order added. */
typedef struct {
	char **files, **ids;
	int n, cap, idcap;
} file_set;

/* Whether file f is one fs already holds (under any name); *id is its identity. */
static bool has_file(const kb_session *s, json_t *names, const file_set *fs, const char *f,
		     char **id)
{
	*id = kb_session__file_identity(s, names, f);
	for (int k = 0; k < fs->n; k++)
		if (!strcmp(fs->ids[k], *id))
			return true;
	return false;
}

static void add_file(file_set *fs, const char *f, char *id)
{
	int n = fs->n;
	*KB_PUSH(fs->files, n, fs->cap) = kb_xstrdup(f);
	*KB_PUSH(fs->ids, fs->n, fs->idcap) = id;
}

/* A kbench killed between a file's first commit and the journal line that
 * says so leaves a file with a variant that no event names, but whose name
 * files.json holds (written before the commit): such a file counts when
 * its store holds a variant. */
static void add_unjournaled(const kb_session *s, json_t *names, file_set *fs)
{
	const char *name;
	json_t *v;
	if (s->detached)
		return;
	json_object_foreach(names, name, v) {
		char *id;
		kb_store *st = NULL;
		int count = 0;
		if (has_file(s, names, fs, name, &id) || kb_session_store_open(s, name, &st, NULL) < 0 ||
		    kb_session_store_count(st, &count, NULL) < 0 || count == 0)
			free(id);
		else
			add_file(fs, name, id);
		kb_session_store_close(st);
	}
}

int kb_session_files(const kb_session *s, char ***files, kb_err *err)
{
	json_t *evs = NULL;
	long trunc;
	file_set fs = {0};
	int rc = kb_session_journal_read(s, &evs, &trunc, err);
	*files = NULL;
	if (rc < 0)
		return rc;
	json_t *names = kb_session__names(s);
	for (size_t i = 0; i < json_array_size(evs); i++) {
		const char *f = json_string_value(json_object_get(json_array_get(evs, i), "file"));
		char *id;
		if (!f)
			continue;
		if (has_file(s, names, &fs, f, &id))
			free(id);
		else
			add_file(&fs, f, id);
	}
	add_unjournaled(s, names, &fs);
	for (int i = 0; i < fs.n; i++)
		free(fs.ids[i]);
	free(fs.ids);
	json_decref(names);
	json_decref(evs);
	*files = fs.files;
	return fs.n;
}

/* ===== how each is shown, which one a name means ===== */

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
