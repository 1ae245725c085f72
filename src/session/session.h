/*
 * session.h - a tuning session: every variant of a kernel file kept as a
 * git commit (libgit2) on refs/kbench/<session> of the repository that
 * holds the file (or of a private repository when it is in none), its
 * Result as a git note on refs/notes/kbench, and an append-only journal of
 * events.  Design: architecture.md §6.  Sessions live under
 * $XDG_DATA_HOME/kbench/sessions/<id>/ (default ~/.local/share/kbench),
 * never in the user's working tree.
 */
#ifndef KB_SESSION_H
#define KB_SESSION_H

#include "../core/kb.h"

#include <jansson.h>

/* ===== session.c: which session is current ===== */

typedef struct {
	char id[96];          /* "20261122-003012-ab12" or a user-given NAME */
	char *dir;            /* $XDG_DATA_HOME/kbench/sessions/<id> */
	bool detached;        /* imported or opened from an exported folder: its
			       * files are names, its variants all in its private
			       * repository, whatever folder the files are in */
} kb_session;

/* The current session: $KBENCH_SESSION (an id or directory) when set, else
 * the saved one, started now (and made current) if there is none.
 * Returns 0 or a KB_E* with err. */
int kb_session_current(kb_session *s, kb_err *err);
/* The current session's id (the same rule) without starting one: 0, or
 * KB_ENOTFOUND. */
int kb_session_current_id(char id[96]);
/* Starts a new session (name may be NULL: a time-based id) and makes it
 * current. Returns 0, KB_EINVAL for a bad name, or KB_EIO. */
int kb_session_new(const char *name, kb_session *s, kb_err *err);
/* Opens an existing session by id or by path ("sessions/<id>", a session
 * directory, or a folder kb_session_export wrote). Returns 0 or KB_ENOTFOUND. */
int kb_session_open(const char *id_or_path, kb_session *s, kb_err *err);
/* All session ids, newest first (a new array of new strings). */
int kb_session_list(char ***ids, int *n, kb_err *err);
void kb_session_free(kb_session *s);

/* ===== export.c: a session as a plain-text folder, and back ===== */

/* Writes session s to folder dir (created; an earlier export there is
 * replaced, any other non-empty folder refused): manifest.json (the id, the
 * GPUs and dates it was recorded on, every file with its variants),
 * README.md (a table a pull request shows), journal.jsonl as recorded, and
 * per file <path>/vN<ext> (the source) and <path>/vN.json (its Result).
 * Deterministic: the same session gives the same bytes.  Returns 0 or a
 * KB_E* with err. */
int kb_session_export(const kb_session *s, const char *dir, kb_err *err);
/* Brings an exported folder into the local store as session `name` (NULL:
 * the id it was exported with), not made current; exporting it again gives
 * the same bytes. Returns 0 with *s, or KB_EINVAL when that session exists. */
int kb_session_import(const char *dir, const char *name, kb_session *s, kb_err *err);

/* ===== journal.c ===== */

/* Appends one event {"t": unix seconds with ms, "event": type, ...fields}
 * to <dir>/journal.jsonl with a single write(2) on an O_APPEND descriptor,
 * so a crash loses at most the event in flight. fields is consumed. */
int kb_session_journal_append(const kb_session *s, const char *event, json_t *fields,
			      kb_err *err);
/* Reads every event; a truncated last line is skipped and reported in
 * *truncated (its byte offset, or -1 when none); a line in the middle that
 * is not one comes as {"event": "unreadable", "line": N, "text": ...}. */
int kb_session_journal_read(const kb_session *s, json_t **events, long *truncated,
			    kb_err *err);

/* The name the session records file `path` under: path as given, kept with
 * its absolute path (in <dir>/files.json, never exported) so that any
 * later command finds the file from any directory; when that name already
 * means another file, the shortest end of its real path that means none
 * ("b/k.cu"; names travel in exports).  A new string. */
char *kb_session_file_name(const kb_session *s, const char *path);
/* The file a name of the session means: the absolute path recorded for it,
 * else the name itself (a detached session: the name); a new string. */
char *kb_session_file_path(const kb_session *s, const char *name);

/* ===== files.c: a session's files, which one a name means, how each is shown ===== */

/* The distinct kernel files the journal names, in first-use order (the
 * first spelling of each; two spellings of one file are one: by real
 * path, or in a detached session by stored path), then any file that
 * files.json names and no event does but whose store holds a variant (a
 * kbench killed between that first commit and its journal line). Returns
 * their count (new strings in *files; free each and the array) or a KB_E*. */
int kb_session_files(const kb_session *s, char ***files, kb_err *err);
/* The file of session s that `typed` means, as the session's name for it
 * (*name, a new string): a path to an existing file is that file (from the
 * current directory, links resolved) and no other; a path to nothing is
 * looked up among the session's names and the ends of its files' paths
 * ("k.cu", "b/k.cu").  Returns 0; KB_EAMBIG when several files fit (err
 * lists them), KB_ENOTFOUND when none does (err names the file and lists
 * the session's). */
int kb_session_file_find(const kb_session *s, const char *typed, char **name, kb_err *err);
/* How each of the n files (kb_session_files' names) is shown: the
 * shortest end of its path that no other of them ends with ("k.cu" alone,
 * "a/k.cu" beside "b/k.cu"). A new array of n new strings. */
char **kb_session_files_shown(const kb_session *s, char **files, int n);
/* What tells the session's file `name` from every other whatever it is
 * called: its real path (a detached session: its stored path); a new string. */
char *kb_session_file_id(const kb_session *s, const char *name);
/* How the file `name` of the session is shown (the same rule), a new string. */
char *kb_session_file_shown(const kb_session *s, const char *name);

/* ===== store.c: the variant store (libgit2) ===== */

typedef struct {
	char name[16];        /* "v3" */
	char oid[41];         /* commit id */
	char *path;           /* the file's path relative to the repository */
	char *message;
	int64_t time;         /* commit time, unix seconds */
	json_t *note;         /* the Result (git note), or NULL */
	char *note_error;     /* why the note is not read (not a JSON object), or NULL */
	char *label;          /* from the note's "label", or NULL */
	char *kernel;         /* the kernel its spec ran (note.compile.kernel.name), or NULL */
	int seq;              /* its commit's place on the session ref (from 1) */
} kb_variant;

typedef struct kb_store kb_store;

/* Opens the store for file `path` in session s (a name of the session, or
 * a path: kb_session_file_path): the git repository that holds the file,
 * links resolved (its object store only), or <session dir>/repo when the
 * file is in none or the session is detached. Returns 0 or a KB_E* with err. */
int kb_session_store_open(const kb_session *s, const char *path, kb_store **out, kb_err *err);
void kb_session_store_close(kb_store *st);
/* The repository path and the ref, for messages and plain git. */
const char *kb_session_store_repo(const kb_store *st);
const char *kb_session_store_ref(const kb_store *st);
/* Commits `content` as the file's next variant (vN, numbered per file) on
 * the session ref, with the message "<path> vN: <message>" (message: a
 * summary line, maybe a blank line and more; NULL: none) and the note
 * (consumed, may be NULL). The user's HEAD, index and working tree are
 * never touched. Content identical to the file's latest variant is not a
 * new variant: that one is returned, and when note is non-NULL its note is
 * replaced and (while it is the ref's tip) its message too.
 * Fills v (free with kb_session_variant_free). Returns 0 or a KB_E*. */
int kb_session_store_commit(kb_store *st, const char *content, size_t len, const char *message,
			    json_t *note, kb_variant *v, kb_err *err);
/* Commits content as the file's next variant exactly as given: the whole
 * message, author and committer time `time` (unix seconds, UTC), the note
 * (consumed, may be NULL); for bringing a session back (import). */
int kb_session_store_commit_at(kb_store *st, const char *content, size_t len, const char *message,
			       int64_t time, json_t *note, kb_variant *v, kb_err *err);
/* The file's path in the store's repository ("softmax.cu", "kernels/x.cu"). */
const char *kb_session_store_path(const kb_store *st);
/* Every variant of the store's file on the session ref, oldest first (v1 ...). */
int kb_session_store_list(kb_store *st, kb_variant **vs, int *n, kb_err *err);
/* How many variants the file has on the session ref (no note is read). */
int kb_session_store_count(kb_store *st, int *n, kb_err *err);
/* The file's content in variant `name` ("v2", a label, or a commit id). */
int kb_session_store_read(kb_store *st, const char *name, kb_variant *v, char **content,
			  size_t *len, kb_err *err);
/* The file's content in a variant already listed (no second walk of the
 * ref: for callers that read many). */
int kb_session_store_text(kb_store *st, const kb_variant *v, char **content, size_t *len,
			  kb_err *err);
/* The id of the n-th commit (from 1) of the session ref, whichever file it
 * changed: what "vN" named in journals written before variants were
 * numbered per file. 0, or KB_ENOTFOUND. */
int kb_session_store_nth_commit(kb_store *st, int n, char oid[41], kb_err *err);
/* Replaces a variant's note (consumed). */
int kb_session_store_set_note(kb_store *st, const char *name, json_t *note, kb_err *err);
void kb_session_variant_free(kb_variant *v);
void kb_session_variants_free(kb_variant *vs, int n);

#endif
