/*
 * session.c - which tuning session is current, and where sessions live.
 *
 * Owns the data directory layout: $XDG_DATA_HOME/kbench (default
 * ~/.local/share/kbench) holds sessions/<id>/meta.json ({"id", "created",
 * "file_keys": "real path"}, see files.c)
 * per session and a file `current` naming the current session's id.  It
 * does not own what lives inside a session directory (journal.c writes
 * journal.jsonl, store.c the private repository).
 *
 * Invariants: a session exists iff sessions/<id>/meta.json exists; ids are
 * [A-Za-z0-9._-]{1,64} and additionally usable as a directory and as a git
 * ref component (no leading '.', no "..", no trailing ".lock" or '.'), so
 * refs/kbench/<id> is always a valid ref.  A session directory is built
 * under a private name (sessions/.new.<id>.<pid>, meta.json written) and
 * then renamed to sessions/<id>, which rename(2) does only while that name
 * is free: two processes cannot both create the same id, and a kbench
 * killed mid-creation leaves no half session in the way of the name (its
 * building folder is removed by the next creation).  "created" is unix seconds (microsecond fraction): list order is
 * by it, newest first, ties broken by id.
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
#include <sys/time.h>
#include <time.h>
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

static double now_unix(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* ===== creating and opening ===== */

static void time_id(char *out, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	unsigned char r[2] = {0, 0};
	if (getentropy(r, sizeof r) < 0) {
		unsigned x = (unsigned)getpid() ^ (unsigned)(now_unix() * 1e6);
		r[0] = (unsigned char)x;
		r[1] = (unsigned char)(x >> 8);
	}
	char stamp[32];
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	snprintf(out, n, "%s-%02x%02x", stamp, r[0], r[1]);
}

static int write_current(const char *id, kb_err *err)
{
	char *base = kb_session__data_dir();
	char *path = kb_xasprintf("%s/current", base);
	char *line = kb_xasprintf("%s\n", id);
	int rc = kb_file_write(path, line, strlen(line), err);
	free(line);
	free(path);
	free(base);
	return rc;
}

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

static int write_meta(const char *dir, const char *id, kb_err *err)
{
	json_t *meta = json_pack("{s:s, s:f, s:s}", "id", id, "created", now_unix(), KB_SESSION_KEYED,
				 "real path");
	int rc = kb_session__write_meta(dir, meta, err);
	json_decref(meta);
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

int kb_session_new(const char *name, kb_session *s, kb_err *err)
{
	char id[sizeof s->id];
	char *dir = NULL;
	int rc;
	memset(s, 0, sizeof *s);
	if (name && !kb_session__valid_id(name))
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0,
			      "bad session name '%s': use 1-64 of [A-Za-z0-9._-], "
			      "no leading '.', no '..', no trailing '.' or '.lock'", name);
	for (int tries = 0;; tries++) {
		char *tmp = NULL;
		if (name)
			snprintf(id, sizeof id, "%s", name);
		else
			time_id(id, sizeof id);
		if ((rc = kb_session__make_dir(id, &tmp, err)) < 0)
			return rc;
		if ((rc = write_meta(tmp, id, err)) < 0) {
			kb_session__remove_tree(tmp, true);
			free(tmp);
			return rc;
		}
		rc = kb_session__publish_dir(tmp, id, &dir, err);
		if (rc == KB_EINVAL && !name && tries < 8)
			continue; /* two sessions in one second drew the same suffix */
		if (rc < 0)
			return rc;
		break;
	}
	if ((rc = write_current(id, err)) < 0)
		goto fail;
	snprintf(s->id, sizeof s->id, "%s", id);
	s->dir = dir;
	return KB_OK;
fail:
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

/* The directory id_or_path names: an id, "sessions/<id>", or a directory holding meta.json. */
static char *resolve_dir(const char *id_or_path)
{
	const char *id = !strncmp(id_or_path, "sessions/", 9) ? id_or_path + 9 : id_or_path;
	if (kb_session__valid_id(id)) {
		char *dir = kb_session__dir_of(id);
		if (kb_session__has_meta(dir))
			return dir;
		free(dir);
	}
	return kb_session__has_meta(id_or_path) ? realpath(id_or_path, NULL) : NULL;
}

int kb_session_open(const char *id_or_path, kb_session *s, kb_err *err)
{
	memset(s, 0, sizeof *s);
	if (!id_or_path || !*id_or_path)
		return KB_ERR(err, KB_EINVAL, KB_DOM_NONE, 0, "empty session name");
	if (kb_session__is_export(id_or_path))
		return kb_session__open_export(id_or_path, s, err);
	char *dir = resolve_dir(id_or_path);
	if (!dir)
		return KB_ERR(err, KB_ENOTFOUND, KB_DOM_NONE, 0, "no session '%s'", id_or_path);
	return kb_session__open_dir(dir, s);
}

int kb_session__open_dir(char *dir, kb_session *s)
{
	memset(s, 0, sizeof *s);
	id_of_dir(dir, s->id, sizeof s->id, &s->detached);
	s->dir = dir;
	return KB_OK;
}

int kb_session_current_id(char id[96])
{
	const char *pinned = getenv("KBENCH_SESSION");
	kb_session s;
	if (pinned && *pinned) {
		if (kb_session_open(pinned, &s, NULL) < 0)
			return KB_ENOTFOUND;
		snprintf(id, 96, "%s", s.id);
		kb_session_free(&s);
		return KB_OK;
	}
	char *base = kb_session__data_dir();
	char *path = kb_xasprintf("%s/current", base);
	kb_buf b = KB_BUF_INIT;
	int rc = KB_ENOTFOUND;
	if (kb_file_read(path, &b, NULL) == 0) {
		b.s[strcspn(b.s, "\r\n")] = '\0';
		char *dir = kb_session__valid_id(b.s) ? kb_session__dir_of(b.s) : NULL;
		if (dir && kb_session__has_meta(dir)) {
			snprintf(id, 96, "%s", b.s);
			rc = KB_OK;
		}
		free(dir);
	}
	kb_buf_free(&b);
	free(path);
	free(base);
	return rc;
}

int kb_session_current(kb_session *s, kb_err *err)
{
	/* $KBENCH_SESSION pins this process (and its children) to a session,
	 * e.g. the one `kbench-tui --replay` shows. */
	const char *pinned = getenv("KBENCH_SESSION");
	if (pinned && *pinned)
		return kb_session_open(pinned, s, err);
	char id[sizeof s->id];
	if (kb_session_current_id(id) == 0 && kb_session_open(id, s, NULL) == 0)
		return KB_OK;
	return kb_session_new(NULL, s, err);
}

/* ===== listing ===== */

typedef struct {
	char *id;
	double created;
} entry;

static int newest_first(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->created != y->created)
		return x->created < y->created ? 1 : -1;
	return strcmp(y->id, x->id);
}

static double created_of(const char *id)
{
	char *dir = kb_session__dir_of(id);
	char *meta = kb_xasprintf("%s/meta.json", dir);
	json_t *j = json_load_file(meta, 0, NULL);
	double t = json_number_value(json_object_get(j, "created"));
	json_decref(j);
	free(meta);
	free(dir);
	return t;
}

int kb_session_list(char ***ids, int *n, kb_err *err)
{
	char *base = kb_session__data_dir();
	char *sdir = kb_xasprintf("%s/sessions", base);
	entry *es = NULL;
	int ne = 0, cap = 0, rc = KB_OK;
	DIR *d = opendir(sdir);
	*ids = NULL;
	*n = 0;
	if (!d) {
		if (errno != ENOENT)
			rc = kb_err_errno(err, "cannot list", sdir);
		goto out;
	}
	for (struct dirent *de; (de = readdir(d));) {
		char *dir = NULL;
		if (kb_session__valid_id(de->d_name) && kb_session__has_meta((dir = kb_session__dir_of(de->d_name))))
			*KB_PUSH(es, ne, cap) = (entry){kb_xstrdup(de->d_name), created_of(de->d_name)};
		free(dir);
	}
	closedir(d);
	qsort(es, (size_t)ne, sizeof *es, newest_first);
	*ids = kb_xcalloc((size_t)ne + 1, sizeof **ids);
	for (int i = 0; i < ne; i++)
		(*ids)[i] = es[i].id;
	*n = ne;
out:
	free(es);
	free(sdir);
	free(base);
	return rc;
}

void kb_session_free(kb_session *s)
{
	if (!s)
		return;
	free(s->dir);
	s->dir = NULL;
}
