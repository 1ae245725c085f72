/*
 * journal.c - the session's append-only event log, <dir>/journal.jsonl.
 *
 * Owns the file format: one JSON object per line, {"t": unix seconds as a
 * float, "event": type, ...fields}, each line ended by '\n'.  It does not
 * decide which events exist (app/ does).
 *
 * Durability: an event is appended with ONE write(2) of the whole line on a
 * descriptor opened O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC.  Once write(2)
 * returns, the bytes are in the kernel's page cache and survive the process
 * (kill -9, abort, crash) - only a machine crash or power loss could drop
 * them, which is why there is no fsync: it would cost milliseconds per
 * event to guard against something a tuning journal can afford to lose.
 * A process killed inside write(2) can leave a torn last line; the reader
 * skips it and reports its offset, and the next append cuts it off first
 * (under flock(2), so two kbench processes never cut each other's lines),
 * so a torn line never ends up in the middle of the file.
 *
 * Invariant: every line but possibly the last is a complete JSON object.
 * An invalid line in the middle is damage from outside (a hand edit, a bad
 * disk); the reader does not stop there, since the variants themselves are
 * in git and the journal is their index: it gives such a line as an event
 * {"event": "unreadable", "line": N, "text": its start}, which every
 * reader but `kbench log` (it says so) passes over.
 */
#include "session_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char *journal_path(const kb_session *s)
{
	return kb_xasprintf("%s/journal.jsonl", s->dir);
}

/* The serialised line (with '\n') for one event; fields is consumed. */
static int event_line(const char *event, json_t *fields, kb_buf *out, kb_err *err)
{
	struct timeval tv;
	int rc = KB_OK;
	gettimeofday(&tv, NULL);
	json_t *obj = json_object();
	json_object_set_new(obj, "t", json_real((double)tv.tv_sec + tv.tv_usec / 1e6));
	if (!event || json_object_set_new(obj, "event", json_string(event)) < 0) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "an event needs a UTF-8 type name");
		goto out;
	}
	if (fields && json_object_update_missing(obj, fields) < 0) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "event '%s': fields must be an object",
			    event);
		goto out;
	}
	char *text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(17));
	if (!text) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "event '%s' cannot be serialised", event);
		goto out;
	}
	kb_buf_cat(out, text);
	kb_buf_catc(out, '\n');
	free(text);
out:
	json_decref(obj);
	json_decref(fields);
	return rc;
}

/* Cuts a torn last line (a writer killed inside write(2)) so the next line starts clean. */
static int drop_torn_tail(int fd, const char *path, kb_err *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return kb_err_errno(err, "cannot stat", path);
	if (st.st_size == 0)
		return KB_OK;
	int rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return kb_err_errno(err, "cannot open", path);
	int rc = KB_OK;
	off_t end = st.st_size;
	char chunk[4096];
	while (end > 0) {
		off_t at = end > (off_t)sizeof chunk ? end - (off_t)sizeof chunk : 0;
		ssize_t got = pread(rfd, chunk, (size_t)(end - at), at);
		if (got != (ssize_t)(end - at)) {
			rc = kb_err_errno(err, "cannot read", path);
			goto out;
		}
		ssize_t i = got;
		while (i > 0 && chunk[i - 1] != '\n')
			i--;
		if (i > 0) {
			end = at + i;
			break;
		}
		end = at;
	}
	if (end != st.st_size && ftruncate(fd, end) < 0)
		rc = kb_err_errno(err, "cannot truncate", path);
out:
	close(rfd);
	return rc;
}

int kb_session_journal_append(const kb_session *s, const char *event, json_t *fields,
			      kb_err *err)
{
	kb_buf line = KB_BUF_INIT;
	char *path = journal_path(s);
	int fd = -1;
	int rc = event_line(event, fields, &line, err);
	if (rc < 0)
		goto out;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = kb_err_errno(err, "cannot open", path);
		goto out;
	}
	while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	if ((rc = drop_torn_tail(fd, path, err)) < 0)
		goto out;
	ssize_t w;
	while ((w = write(fd, line.s, line.len)) < 0 && errno == EINTR)
		;
	if (w < 0)
		rc = kb_err_errno(err, "cannot append to", path);
	else if ((size_t)w != line.len)
		rc = KB_ERR(err, KB_EIO, KB_DOM_OS, 0, "short write to %s (%zd of %zu bytes)",
			    path, w, line.len);
out:
	if (fd >= 0)
		close(fd); /* releases the flock */
	kb_buf_free(&line);
	free(path);
	return rc;
}

/* Parses one line (NUL-terminated in place) into an object, or NULL. */
static json_t *parse_line(const char *text, size_t len)
{
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* The event that stands for a damaged line: its number and its first 80
 * bytes, each byte that is not printable ASCII shown as '?' (the line may
 * be anything, the event must be valid JSON). */
static json_t *unreadable(int line, const char *text, size_t len)
{
	char start[81];
	size_t n = len < 80 ? len : 80;
	for (size_t i = 0; i < n; i++)
		start[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
	start[n] = '\0';
	return json_pack("{s:s, s:i, s:s}", "event", "unreadable", "line", line, "text", start);
}

int kb_session_journal_read(const kb_session *s, json_t **events, long *truncated,
			    kb_err *err)
{
	char *path = journal_path(s);
	kb_buf b = KB_BUF_INIT;
	json_t *arr = json_array();
	int rc = kb_file_read(path, &b, err);
	*events = NULL;
	*truncated = -1;
	if (rc == KB_ENOTFOUND) {
		rc = KB_OK; /* no events yet */
		kb_err_clear(err);
		goto done;
	}
	if (rc < 0)
		goto out;
	int lineno = 0;
	for (size_t at = 0; at < b.len; lineno++) {
		char *nl = memchr(b.s + at, '\n', b.len - at);
		size_t end = nl ? (size_t)(nl - b.s) : b.len;
		json_t *ev = (end > at && nl) ? parse_line(b.s + at, end - at) : NULL;
		bool last = !nl || end + 1 == b.len;
		if (ev) {
			json_array_append_new(arr, ev);
		} else if (end == at && nl) {
			/* an empty line: nothing to read */
		} else if (last) {
			*truncated = (long)at;
		} else {
			kb_log("journal: %s:%d: not an event, passed over", path, lineno + 1);
			json_array_append_new(arr, unreadable(lineno + 1, b.s + at, end - at));
		}
		at = end + 1;
	}
done:
	*events = arr;
	arr = NULL;
out:
	json_decref(arr);
	kb_buf_free(&b);
	free(path);
	return rc;
}

/* ===== the files a session names ===== */

char *kb_session__detached_path(const kb_session *s, const char *name)
{
	json_t *names = kb_session__names(s);
	char *out = kb_session__file_identity(s, names, name);
	json_decref(names);
	return out;
}

/* ===== which file a name means: <dir>/files.json ===== */

/* {name: absolute path} of the files the session recorded (never exported:
 * it holds this machine's paths), or an empty object. */
static json_t *load_files(const kb_session *s)
{
	char *p = kb_xasprintf("%s/files.json", s->dir);
	json_t *m = json_load_file(p, 0, NULL);
	free(p);
	if (!json_is_object(m)) {
		json_decref(m);
		m = json_object();
	}
	return m;
}

/* Writes the map through a temporary file and a rename (never half a file). */
static void save_files(const kb_session *s, json_t *m)
{
	char *p = kb_xasprintf("%s/files.json", s->dir);
	char *text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (text)
		kb_file_write(p, text, strlen(text), NULL);
	free(text);
	free(p);
}

/* Holds <dir>/files.lock while a process reads, adds to and writes the map:
 * two writers of one session (the TUI and a `kbench run` elsewhere) adding
 * their first files at once each wrote the map without the other's name.
 * Returns the descriptor to give to unlock_files (-1: unlocked, best effort). */
static int lock_files(const kb_session *s)
{
	char *p = kb_xasprintf("%s/files.lock", s->dir);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(p);
	while (fd >= 0 && flock(fd, LOCK_EX) < 0 && errno == EINTR)
		;
	return fd;
}

static void unlock_files(int fd)
{
	if (fd >= 0)
		close(fd); /* the lock goes with it */
}

/* Whether map m has name for a file other than abs. */
static bool taken(json_t *m, const char *name, const char *abs)
{
	const char *known = json_string_value(json_object_get(m, name));
	return known && strcmp(known, abs);
}

/* The name of the file at abs, given as path, in map m: path, unless m has
 * path for another file; then the shortest end of abs that m has for no
 * other ("b/k.cu": names travel in exports, this machine's folders must
 * not), the absolute path only when every end is taken. */
static char *name_in(json_t *m, const char *path, const char *abs)
{
	if (!taken(m, path, abs))
		return kb_xstrdup(path);
	for (const char *p = abs + strlen(abs); p > abs; p--)
		if (p[-1] == '/' && !taken(m, p, abs))
			return kb_xstrdup(p);
	return kb_xstrdup(abs);
}

char *kb_session_file_name(const kb_session *s, const char *path)
{
	char *abs = s->detached ? NULL : realpath(path, NULL);
	if (!abs)
		return kb_xstrdup(path);
	json_t *m = load_files(s);
	char *name = name_in(m, path, abs);
	if (!json_object_get(m, name)) { /* a new name: added under the lock, read again */
		int lock = lock_files(s);
		json_decref(m);
		m = load_files(s);
		free(name);
		name = name_in(m, path, abs);
		if (!json_object_get(m, name)) {
			json_object_set_new(m, name, json_string(abs));
			save_files(s, m);
		}
		unlock_files(lock);
	}
	json_decref(m);
	free(abs);
	return name;
}

char *kb_session_file_path(const kb_session *s, const char *name)
{
	if (s->detached)
		return kb_xstrdup(name);
	json_t *m = load_files(s);
	const char *abs = json_string_value(json_object_get(m, name));
	char *out = kb_xstrdup(abs ? abs : name);
	json_decref(m);
	return out;
}

json_t *kb_session__names(const kb_session *s)
{
	if (!s->detached)
		return load_files(s);
	char *meta = kb_xasprintf("%s/meta.json", s->dir);
	json_t *j = json_load_file(meta, 0, NULL);
	json_t *paths = json_incref(json_object_get(j, "paths"));
	json_decref(j);
	free(meta);
	return paths ? paths : json_object();
}

char *kb_session__file_identity(const kb_session *s, json_t *names, const char *name)
{
	const char *mapped = json_string_value(json_object_get(names, name));
	if (s->detached)
		return kb_xstrdup(mapped ? mapped : kb_basename(name));
	char *real = realpath(mapped ? mapped : name, NULL);
	return real ? real : kb_xstrdup(mapped ? mapped : name);
}
