/*
 * session_int.h - declarations shared between the files of src/session
 * only (style rule 1); other folders use session.h.
 */
#ifndef KB_SESSION_INT_H
#define KB_SESSION_INT_H

#include "session.h"

#include <git2.h>

/* ===== layout.c: where sessions live (below every other file here) ===== */

/* $XDG_DATA_HOME/kbench (default ~/.local/share/kbench), a new string. */
char *kb_session__data_dir(void);
/* <data dir>/sessions/<id>, a new string. */
char *kb_session__dir_of(const char *id);
/* Whether dir holds a session (its meta.json). */
bool kb_session__has_meta(const char *dir);
/* Whether id is a usable session id (a directory name and a ref component). */
bool kb_session__valid_id(const char *id);
/* Writes meta (borrowed) as <dir>/meta.json. Returns 0 or KB_EIO. */
int kb_session__write_meta(const char *dir, json_t *meta, kb_err *err);
/* A fresh building folder for session id (<data dir>/sessions/.new.<id>.<pid>)
 * in *tmpp; building folders of killed creations are removed. 0 or KB_EIO. */
int kb_session__make_dir(const char *id, char **tmpp, kb_err *err);
/* Gives the building folder tmp (taken over) the name sessions/<id>: 0 with
 * *dirp, or KB_EINVAL when that session exists (tmp is then removed). */
int kb_session__publish_dir(char *tmp, const char *id, char **dirp, kb_err *err);
/* Removes everything below dir, and dir itself when self. 0 or KB_EIO. */
int kb_session__remove_tree(const char *dir, bool self);
/* Removes the folders .new.<name>.<pid> in parent whose process is gone:
 * what a kbench killed while it built a session or a repository left. */
void kb_session__sweep_unfinished(const char *parent);
/* Fills s for the session directory dir (taken over). Returns 0. */
int kb_session__open_dir(char *dir, kb_session *s);

/* ===== export.c ===== */

/* Whether path is a folder written by kb_session_export (its manifest.json). */
bool kb_session__is_export(const char *path);
/* Opens an exported folder as a session: imported once into a cache
 * directory named by the folder's content ($XDG_CACHE_HOME/kbench/exported/
 * <id>-<hash>), a detached session. Returns 0 or a KB_E*. */
int kb_session__open_export(const char *path, kb_session *s, kb_err *err);

/* ===== journal.c ===== */

/* The repository path a detached session stores the file `name` under
 * (meta.json's "paths", else its basename), a new string. */
char *kb_session__detached_path(const kb_session *s, const char *name);


/* The session's map from the names its journal uses to files: their
 * absolute paths (files.json), or in a detached session their stored
 * paths (meta.json's "paths"). A new reference, an empty object at least. */
json_t *kb_session__names(const kb_session *s);
/* What identifies a file whatever name the journal uses for it (names:
 * kb_session__names): its real path (a detached session: its stored
 * path); a new string. */
char *kb_session__file_identity(const kb_session *s, json_t *names, const char *name);

/* ===== legacy.c ===== */

/* meta.json's key that a session keeps each file outside a repository
 * under its own path in the private repository (the real path without its
 * leading '/'); sessions without it (kbench up to 4627e7e) kept the
 * basename there. */
#define KB_SESSION_KEYED "file_keys"
/* Whether s was recorded before files were kept apart (no KB_SESSION_KEYED). */
bool kb_session__legacy(const kb_session *s);
/* The commits the journal says were recorded for files other than `name`
 * and not for it (in a legacy session two files could share a path of a
 * repository): *n ids in *out (free it). Returns 0. */
int kb_session__foreign_commits(const kb_session *s, const char *name, git_oid **out, int *n);

/* ===== store_repo.c: the store's repository (store.c writes and reads it) ===== */

#define KB_NOTES_REF "refs/notes/kbench"
/* A private repository's HEAD: a branch kept at the session ref's tip. */
#define KB_PRIVATE_HEAD "refs/heads/session"

struct kb_store {
	git_repository *repo;
	char *repo_path;   /* the working tree (user's repository) or the git dir (private) */
	char *path;        /* the file, relative to the repository */
	char ref[128];     /* refs/kbench/<session id> */
	bool private_repo; /* <session dir>/repo, kbench's own */
	git_oid *foreign;  /* commits another file's (a legacy session's journal says) */
	int nforeign;
};

/* 0 for a libgit2 code >= 0, else a KB_E* with file:line and libgit2's text. */
int kb_session__git_check(int code, const char *call, const char *file, int line, kb_err *err);
/* Runs a libgit2 call; 0, or a KB_E* with file:line and libgit2's text in `err`. */
#define KB_GIT(call) kb_session__git_check((call), #call, __FILE__, __LINE__, err)
/* A KB_ENOTFOUND from KB_GIT that the caller treats as "absent": forgets it. */
int kb_session__absent_ok(int rc, bool *absent, kb_err *err);
/* Before writing: removes the ref locks (<ref>.lock) of the refs kbench
 * writes that a killed kbench left, waiting for a live writer's to go. */
void kb_session__unlock_stale(kb_store *st);
/* A private repository's HEAD branch moves to the session tip (a no-op
 * for a user's repository). */
void kb_session__follow_tip(kb_store *st, const git_oid *tip);

#endif
