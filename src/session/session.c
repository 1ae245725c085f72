/*
 * session.c - which tuning session is current, and creating, opening and
 * listing sessions: by id, by a session directory, or an exported folder
 * (export.c imports it).  Where sessions live, and how a session directory
 * is built and published, is layout.c's.  "created" is unix seconds
 * (microsecond fraction): list order is by it, newest first, ties broken by
 * id.
 */
#include "session_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

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

static int write_meta(const char *dir, const char *id, kb_err *err)
{
	json_t *meta = json_pack("{s:s, s:f, s:s}", "id", id, "created", now_unix(), KB_SESSION_KEYED,
				 "real path");
	int rc = kb_session__write_meta(dir, meta, err);
	json_decref(meta);
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
