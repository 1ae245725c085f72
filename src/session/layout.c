/*
 * layout.c - where sessions live: the data directory's layout and a
 * session directory's life (built under a private name, published,
 * opened, removed), below every other file of src/session.  Which session
 * is current, and creating, opening and listing them, are session.c's.
 *
 * $XDG_DATA_HOME/kbench (default ~/.local/share/kbench) holds
 * sessions/<id>/meta.json ({"id", "created", "file_keys": "real path"}, see
 * files.c) per session and a file `current` naming the current session's
 * id.  It does not own what lives inside a session directory (journal.c
 * writes journal.jsonl, store.c the private repository).
 *
 * Invariants: a session exists iff sessions/<id>/meta.json exists; ids are
 * [A-Za-z0-9._-]{1,64} and additionally usable as a directory and as a git
 * ref component (no leading '.', no "..", no trailing ".lock" or '.'), so
 * refs/kbench/<id> is always a valid ref.  A session directory is built
 * under a private name (sessions/.new.<id>.<pid>, meta.json written) and
 * then renamed to sessions/<id>, which rename(2) does only while that name
 * is free: two processes cannot both create the same id, and a kbench
 * killed mid-creation leaves no half session in the way of the name (its
 * building folder is removed by the next creation).
 */
#include "session_int.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ID_MAX 64

/* ===== paths ===== */

char *kb_session__data_dir(void)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		return kb_xasprintf("%s/kbench", xdg);
	return kb_xasprintf("%s/.local/share/kbench", (home && *home) ? home : "/tmp");
}

char *kb_session__dir_of(const char *id)
{
	char *base = kb_session__data_dir();
	char *dir = kb_xasprintf("%s/sessions/%s", base, id);
	free(base);
	return dir;
}

bool kb_session__has_meta(const char *dir)
{
	char *meta = kb_xasprintf("%s/meta.json", dir);
	bool ok = kb_file_exists(meta);
	free(meta);
	return ok;
}

bool kb_session__valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n < 1 || n > ID_MAX || id[0] == '.' || id[n - 1] == '.' || strstr(id, ".."))
		return false;
	if (n >= 5 && !strcmp(id + n - 5, ".lock"))
		return false;
	for (const char *p = id; *p; p++) {
		char c = *p;
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

/* ===== a session directory ===== */

int kb_session__write_meta(const char *dir, json_t *meta, kb_err *err)
{
	char *text = json_dumps(meta, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	char *path = kb_xasprintf("%s/meta.json", dir);
	kb_buf b = KB_BUF_INIT;
	kb_buf_cat(&b, text);
	kb_buf_catc(&b, '\n');
	int rc = kb_file_write(path, b.s, b.len, err);
	kb_buf_free(&b);
	free(path);
	free(text);
	return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	return ftw->level == 0 ? 0 : remove(path);
}

int kb_session__remove_tree(const char *dir, bool self)
{
	if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return KB_EIO;
	return self && rmdir(dir) < 0 ? KB_EIO : KB_OK;
}

void kb_session__sweep_unfinished(const char *parent)
{
	DIR *d = opendir(parent);
	for (struct dirent *de; d && (de = readdir(d));) {
		const char *dot = strrchr(de->d_name, '.');
		long pid = dot && !strncmp(de->d_name, ".new.", 5) ? strtol(dot + 1, NULL, 10) : 0;
		if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			char *p = kb_xasprintf("%s/%s", parent, de->d_name);
			kb_session__remove_tree(p, true);
			free(p);
		}
	}
	if (d)
		closedir(d);
}

int kb_session__make_dir(const char *id, char **tmpp, kb_err *err)
{
	char *dir = kb_session__dir_of(id);
	char *parent = kb_xasprintf("%.*s", (int)(strrchr(dir, '/') - dir), dir);
	char *tmp = kb_xasprintf("%s/.new.%s.%ld", parent, id, (long)getpid());
	int rc = kb_mkdirs(parent, err);
	if (rc == KB_OK) {
		kb_session__sweep_unfinished(parent);
		kb_session__remove_tree(tmp, true); /* this process's earlier try */
		if (mkdir(tmp, 0755) < 0)
			rc = kb_err_errno(err, "cannot create directory", tmp);
	}
	*tmpp = rc == KB_OK ? tmp : NULL;
	if (rc < 0)
		free(tmp);
	free(parent);
	free(dir);
	return rc;
}

int kb_session__publish_dir(char *tmp, const char *id, char **dirp, kb_err *err)
{
	char *dir = kb_session__dir_of(id);
	int rc = KB_OK;
	*dirp = NULL;
	/* rename(2) takes the name only if it is free (or an empty folder) */
	if (rename(tmp, dir) == 0) {
		*dirp = dir;
		free(tmp);
		return KB_OK;
	}
	if (errno != EEXIST && errno != ENOTEMPTY)
		rc = kb_err_errno(err, "cannot create the session folder", dir);
	else if (kb_session__has_meta(dir))
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_OS, EEXIST, "session '%s' already exists", id);
	else
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_OS, EEXIST,
			    "%s is in the way of session '%s': a session folder without meta.json "
			    "(a creation that was cut short?); remove it or choose another name", dir, id);
	kb_session__remove_tree(tmp, true);
	free(tmp);
	free(dir);
	return rc;
}

/* The id a session directory names itself by (meta.json's "id", else its
 * basename), and whether its files are names only (meta's "detached"). */
static void id_of_dir(const char *dir, char *id, size_t n, bool *detached)
{
	char *meta = kb_xasprintf("%s/meta.json", dir);
	json_t *j = json_load_file(meta, 0, NULL);
	const char *v = json_string_value(json_object_get(j, "id"));
	snprintf(id, n, "%s", v && kb_session__valid_id(v) ? v : kb_basename(dir));
	*detached = json_is_true(json_object_get(j, "detached"));
	json_decref(j);
	free(meta);
}

int kb_session__open_dir(char *dir, kb_session *s)
{
	memset(s, 0, sizeof *s);
	id_of_dir(dir, s->id, sizeof s->id, &s->detached);
	s->dir = dir;
	return KB_OK;
}
