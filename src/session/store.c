/*
 * store.c - the variant store: each variant of a kernel file is a git
 * commit on refs/kbench/<session id>, its Result a git note on
 * refs/notes/kbench (libgit2).
 *
 * Which repository: the one git_repository_discover finds from the file's
 * directory (not across filesystems, honouring GIT_CEILING_DIRECTORIES),
 * provided it has a working tree holding the file; the file's path in
 * commits is then its path relative to that working tree.  Otherwise a
 * private repository <session dir>/repo, created BARE (nothing there can
 * ever be checked out or written as files, and `git --git-dir=<it> log`
 * shows the session because its HEAD points at the session ref); the
 * file's path there is its real path without the leading '/' (two k.cu of
 * two folders are two paths), or in a session recorded by kbench up to
 * 4627e7e its basename (files.c: such a session's journal tells two files
 * on one path apart).
 *
 * Invariants: only objects, the session ref and the notes ref are ever
 * written.  The user's HEAD, index file and working tree are never read
 * for writing nor touched: trees are built in an in-memory index
 * (git_index_new) seeded from the session tip's tree, so a commit's tree
 * holds every file of the session at its latest version and each commit
 * changes one file.  A session holds many files: the variants of a file
 * are the commits of the first-parent chain of the session ref that
 * changed it (its blob differs from the first parent's), numbered v1..vN
 * per file; content equal to the file's latest variant is not a new one.
 * Sessions recorded before files were numbered apart have the same shape,
 * so they read the same way (nothing is rewritten).  A commit's message
 * starts "<path> vN: <summary>"; when a Result comes for the file's latest
 * variant and that commit is still the ref's tip, the commit is replaced
 * by one with the same tree, parent and author and the Result's summary
 * (the session ref is kbench's own; nothing else builds on it).  libgit2
 * error codes never leave src/session: every call goes through KB_GIT
 * (store_repo.c), which maps them to KB_E* with git_error_last()'s text.
 * Each write first clears the ref locks a killed kbench left
 * (kb_session__unlock_stale); each move of the session ref is followed by
 * the private repository's HEAD branch (kb_session__follow_tip).  A new
 * variant's note is written before the ref moves to its commit, so a
 * failure (a full disk, a read-only repository, a kill) leaves either the
 * whole variant or nothing but unreachable objects.  libgit2 is initialised once per process (the caller may call
 * git_libgit2_shutdown at exit).  Not thread safe.
 */
#include "session_int.h"

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ===== libgit2 at the edge (store_repo.c has KB_GIT) ===== */

static int signature(kb_store *st, git_signature **sig, kb_err *err)
{
	if (git_signature_default(sig, st->repo) == 0)
		return KB_OK;
	return KB_GIT(git_signature_now(sig, "kbench", "kbench@localhost"));
}

/* ===== reading the session ref ===== */

/* The session ref's tip; *has is false while the ref does not exist. */
static int tip(kb_store *st, git_oid *oid, bool *has, kb_err *err)
{
	bool absent;
	int rc = kb_session__absent_ok(KB_GIT(git_reference_name_to_id(oid, st->repo, st->ref)), &absent, err);
	*has = rc == KB_OK && !absent;
	return rc;
}

/* The first-parent chain of the session ref, oldest first: (*oids)[i] is v(i+1). */
static int chain(kb_store *st, git_oid **oids, int *n, kb_err *err)
{
	git_oid at;
	bool has;
	int cap = 0;
	*oids = NULL;
	*n = 0;
	int rc = tip(st, &at, &has, err);
	while (rc == KB_OK && has) {
		git_commit *c = NULL;
		*KB_PUSH(*oids, *n, cap) = at;
		if ((rc = KB_GIT(git_commit_lookup(&c, st->repo, &at))) < 0)
			break;
		has = git_commit_parentcount(c) > 0;
		if (has)
			at = *git_commit_parent_id(c, 0);
		git_commit_free(c);
	}
	if (rc < 0) {
		free(*oids);
		*oids = NULL;
		*n = 0;
		return rc;
	}
	for (int i = 0, j = *n - 1; i < j; i++, j--) {
		git_oid t = (*oids)[i];
		(*oids)[i] = (*oids)[j];
		(*oids)[j] = t;
	}
	return KB_OK;
}

/* The note of commit oid as a JSON object, or NULL (no note; or a damaged
 * one: *why says what it holds, a new string, and the variant is listed
 * all the same). */
static int read_note(kb_store *st, const git_oid *oid, json_t **out, char **why, kb_err *err)
{
	git_note *note = NULL;
	bool absent;
	*out = NULL;
	int rc = kb_session__absent_ok(KB_GIT(git_note_read(&note, st->repo, KB_NOTES_REF, oid)),
				       &absent, err);
	if (rc < 0 || absent)
		return rc;
	const char *text = git_note_message(note) ? git_note_message(note) : "";
	*out = json_loads(text, JSON_DECODE_ANY, NULL);
	if (!json_is_object(*out)) {
		char shown[41];
		size_t n = 0, len = strlen(text);
		while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
			len--; /* git ends a note with a newline */
		for (; n < len && n < sizeof shown - 1; n++)
			shown[n] = text[n] >= 0x20 && text[n] < 0x7f ? text[n] : '?';
		shown[n] = '\0';
		*why = kb_xasprintf("its note (%s on %.10s) is not a JSON object: %s%s%s%s; `kbench "
				    "label` or `kbench note` writes a fresh one", KB_NOTES_REF,
				    git_oid_tostr_s(oid), n ? "\"" : "empty or binary", shown,
				    n < len ? "..." : "", n ? "\"" : "");
		json_decref(*out);
		*out = NULL;
	}
	git_note_free(note);
	return KB_OK;
}

/* Fills v for commit oid, the variant v(idx+1); v is freeable even on failure. */
static int fill_variant(kb_store *st, const git_oid *oid, int idx, kb_variant *v, kb_err *err)
{
	git_commit *c = NULL;
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "v%d", idx + 1);
	git_oid_tostr(v->oid, sizeof v->oid, oid);
	v->path = kb_xstrdup(st->path);
	int rc = KB_GIT(git_commit_lookup(&c, st->repo, oid));
	if (rc < 0)
		return rc;
	v->message = kb_xstrdup(git_commit_message(c) ? git_commit_message(c) : "");
	v->time = (int64_t)git_commit_time(c);
	git_commit_free(c);
	if ((rc = read_note(st, oid, &v->note, &v->note_error, err)) < 0)
		return rc;
	const char *label = json_string_value(json_object_get(v->note, "label"));
	v->label = label ? kb_xstrdup(label) : NULL;
	json_t *k = json_object_get(json_object_get(json_object_get(v->note, "compile"), "kernel"),
				    "name");
	v->kernel = json_is_string(k) ? kb_xstrdup(json_string_value(k)) : NULL;
	return KB_OK;
}

/* The file's blob and mode in commit oid; KB_ENOTFOUND when that commit lacks it. */
static int blob_in(kb_store *st, const git_oid *oid, git_oid *blob, git_filemode_t *mode,
		   kb_err *err)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_entry *e = NULL;
	int rc;
	if ((rc = KB_GIT(git_commit_lookup(&c, st->repo, oid))) < 0 ||
	    (rc = KB_GIT(git_commit_tree(&t, c))) < 0 ||
	    (rc = KB_GIT(git_tree_entry_bypath(&e, t, st->path))) < 0)
		goto out;
	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
		rc = KB_ERR(err, KB_ENOTFOUND, KB_DOM_GIT, 0, "%s is not a file in %s", st->path,
			    git_oid_tostr_s(oid));
		goto out;
	}
	*blob = *git_tree_entry_id(e);
	*mode = git_tree_entry_filemode(e);
out:
	git_tree_entry_free(e);
	git_tree_free(t);
	git_commit_free(c);
	return rc;
}

/* Whether a legacy session's journal says commit oid is another file's. */
static bool foreign(const kb_store *st, const git_oid *oid)
{
	for (int i = 0; i < st->nforeign; i++)
		if (git_oid_equal(&st->foreign[i], oid))
			return true;
	return false;
}

/* The file's variants: the commits of chain() that changed it (its blob
 * differs from the one before, or is new), oldest first. */
static int file_chain_seq(kb_store *st, git_oid **oids, int **seqs, int *n, kb_err *err)
{
	git_oid *all = NULL, prev;
	int na = 0, cap = 0, scap = 0, ns = 0;
	bool have_prev = false;
	*oids = NULL;
	if (seqs)
		*seqs = NULL;
	*n = 0;
	int rc = chain(st, &all, &na, err);
	for (int i = 0; rc == KB_OK && i < na; i++) {
		git_oid blob;
		git_filemode_t mode;
		bool absent;
		rc = kb_session__absent_ok(blob_in(st, &all[i], &blob, &mode, err), &absent, err);
		if (rc < 0)
			break;
		if (foreign(st, &all[i]))
			continue; /* another file's, on this path in a legacy session */
		if (!absent && (!have_prev || !git_oid_equal(&blob, &prev))) {
			*KB_PUSH(*oids, *n, cap) = all[i];
			if (seqs)
				*KB_PUSH(*seqs, ns, scap) = i + 1;
		}
		have_prev = !absent;
		if (!absent)
			prev = blob;
	}
	free(all);
	if (rc < 0) {
		free(*oids);
		*oids = NULL;
		if (seqs) {
			free(*seqs);
			*seqs = NULL;
		}
		*n = 0;
	}
	return rc;
}

/* The file's variants, oldest first (file_chain_seq without the places). */
static int file_chain(kb_store *st, git_oid **oids, int *n, kb_err *err)
{
	return file_chain_seq(st, oids, NULL, n, err);
}

/* ===== writing ===== */

/* The tree of parent (or an empty one) with the file set to blob, built in memory. */
static int build_tree(kb_store *st, const git_oid *parent, const git_oid *blob,
		      git_filemode_t mode, git_oid *tree_oid, kb_err *err)
{
	git_index *idx = NULL;
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_index_entry e;
	int rc = KB_GIT(git_index_new(&idx));
	if (rc < 0)
		goto out;
	if (parent && ((rc = KB_GIT(git_commit_lookup(&c, st->repo, parent))) < 0 ||
		       (rc = KB_GIT(git_commit_tree(&t, c))) < 0 ||
		       (rc = KB_GIT(git_index_read_tree(idx, t))) < 0))
		goto out;
	memset(&e, 0, sizeof e);
	e.mode = mode;
	e.id = *blob;
	e.path = st->path;
	if ((rc = KB_GIT(git_index_add(idx, &e))) < 0)
		goto out;
	rc = KB_GIT(git_index_write_tree_to(tree_oid, idx, st->repo));
out:
	git_tree_free(t);
	git_commit_free(c);
	git_index_free(idx);
	return rc;
}

/* The message of variant `name` of the store's file: "<path> vN: " before
 * the first line of message ("<path> vN" alone when it is empty); in the
 * private repository the path is the file's name (the tree says where). */
static char *variant_message(const kb_store *st, const char *name, const char *message)
{
	kb_buf m = KB_BUF_INIT;
	kb_buf_catf(&m, "%s %s", st->private_repo ? kb_basename(st->path) : st->path, name);
	if (message && *message)
		kb_buf_catf(&m, ": %s", message);
	if (m.s[m.len - 1] != '\n')
		kb_buf_catc(&m, '\n');
	return kb_buf_detach(&m);
}

/* A commit of tree_oid with parent (or none) and the message, by author
 * (NULL: the user's signature, now) as author and committer; no ref moves. */
static int make_commit(kb_store *st, const git_oid *tree_oid, const git_oid *parent,
		       const char *message, const git_signature *author, git_oid *out, kb_err *err)
{
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *pc = NULL;
	int rc = signature(st, &sig, err);
	if (rc < 0 || (rc = KB_GIT(git_tree_lookup(&tree, st->repo, tree_oid))) < 0)
		goto out;
	if (parent && (rc = KB_GIT(git_commit_lookup(&pc, st->repo, parent))) < 0)
		goto out;
	const git_commit *parents[1] = {pc};
	rc = KB_GIT(git_commit_create(out, st->repo, NULL, author ? author : sig,
				      author ? author : sig, NULL,
				      message, tree, pc ? 1 : 0, parents));
out:
	git_commit_free(pc);
	git_tree_free(tree);
	git_signature_free(sig);
	return rc;
}

/* How often a write is tried again after another writer of the same ref
 * got there first (the TUI and a `kbench run` in another terminal,
 * `kbench optimize` beside manual runs: each try loses only to a write
 * that landed, so this bounds a pathological storm, not a normal race). */
#define MAX_RACES 50

/* Whether libgit2's code g says another writer held or moved the ref. */
static bool lost_race(int g)
{
	return g == GIT_EMODIFIED || g == GIT_ELOCKED;
}

/* A pause of this process's own before try n + 1, out of step with the
 * other writer's. */
static void race_pause(int n)
{
	usleep((useconds_t)(500 + ((unsigned)getpid() * 7919u + (unsigned)n * 104729u) % 2000u));
}

/* Attaches note (consumed) to commit oid on refs/notes/kbench, replacing any. */
static int put_note(kb_store *st, const git_oid *oid, json_t *note, kb_err *err)
{
	git_signature *sig = NULL;
	git_oid note_oid;
	char *text = json_dumps(note, JSON_COMPACT | JSON_ENCODE_ANY);
	char *line = text ? kb_xasprintf("%s\n", text) : NULL;
	int rc;
	if (!line) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_JSON, 0, "the note cannot be serialised");
		goto out;
	}
	if ((rc = signature(st, &sig, err)) < 0)
		goto out;
	/* refs/notes/kbench is every session's: another writer may hold its
	 * lock or move it under us for a moment; each try reads it afresh */
	int g, tries = 0;
	while ((g = git_note_create(&note_oid, st->repo, KB_NOTES_REF, sig, sig, oid, line, 1)) < 0 &&
	       lost_race(g) && tries < MAX_RACES)
		race_pause(tries++);
	rc = KB_GIT(g);
out:
	git_signature_free(sig);
	free(line);
	free(text);
	json_decref(note);
	return rc;
}

/* Gives the file's latest variant *at a new message and note (consumed)
 * when it is still the ref's tip: a commit with its tree, parent and author
 * is written and noted first, then the ref moves to it only if it still
 * points at *at (so a concurrent writer is never undone).  Otherwise, or
 * when the message is the same, only the note changes.  *at is the variant
 * afterwards. */
static int reword(kb_store *st, git_oid *at, const char *message, json_t *note, kb_err *err)
{
	git_commit *c = NULL;
	git_reference *moved = NULL;
	git_oid head, fresh;
	bool has;
	int rc = tip(st, &head, &has, err);
	if (rc < 0 || !has || !git_oid_equal(&head, at) ||
	    (rc = KB_GIT(git_commit_lookup(&c, st->repo, at))) < 0 ||
	    !strcmp(git_commit_message(c) ? git_commit_message(c) : "", message))
		goto note_only;
	rc = make_commit(st, git_commit_tree_id(c), git_commit_parentcount(c) ? git_commit_parent_id(c, 0)
									       : NULL,
			 message, git_commit_author(c), &fresh, err);
	if (rc < 0 || (rc = put_note(st, &fresh, json_incref(note), err)) < 0)
		goto out;
	rc = git_reference_create_matching(&moved, st->repo, st->ref, &fresh, 1, at, "kbench: result");
	git_reference_free(moved);
	if (lost_race(rc)) { /* another writer has the ref: keep the old commit */
		rc = KB_OK;
		goto note_only;
	}
	if ((rc = KB_GIT(rc)) == KB_OK) {
		*at = fresh;
		kb_session__follow_tip(st, &fresh);
	}
	goto out;
note_only:
	if (rc == KB_OK)
		rc = put_note(st, at, json_incref(note), err);
out:
	git_commit_free(c);
	json_decref(note);
	return rc;
}

/* Moves the session ref to commit from commit's parent (a first commit:
 * from nothing), so that a writer who moved it meanwhile is never undone.
 * *raced: another writer moved or held the ref first (nothing moved; the
 * caller builds its commit again on the new tip). */
static int move_ref(kb_store *st, const git_oid *commit, bool *raced, kb_err *err)
{
	git_commit *c = NULL;
	git_reference *r = NULL;
	*raced = false;
	int rc = KB_GIT(git_commit_lookup(&c, st->repo, commit));
	if (rc < 0)
		return rc;
	const git_oid *parent = git_commit_parentcount(c) ? git_commit_parent_id(c, 0) : NULL;
	int g = parent ? git_reference_create_matching(&r, st->repo, st->ref, commit, 1, parent,
						       "kbench: a variant")
		       : git_reference_create(&r, st->repo, st->ref, commit, 0, "kbench: a variant");
	if (lost_race(g) || (!parent && g == GIT_EEXISTS)) {
		*raced = true;
		git_error_clear();
	} else if ((rc = KB_GIT(g)) == KB_OK) {
		kb_session__follow_tip(st, commit);
	}
	git_reference_free(r);
	git_commit_free(c);
	return rc;
}

/* The commit for content: the file's latest variant when its blob is the
 * same (*same), else a new commit (not yet on the ref: move_ref) whose
 * parent is the tip, named `name` (the next vN). */
static int commit_blob(kb_store *st, const git_oid *blob, const char *name, const char *message,
		       git_oid *out, bool *same, kb_err *err)
{
	git_oid head, old, tree, *vars = NULL;
	git_filemode_t mode = GIT_FILEMODE_BLOB;
	bool has;
	int nv = 0;
	*same = false;
	int rc = tip(st, &head, &has, err);
	if (rc == KB_OK)
		rc = file_chain(st, &vars, &nv, err);
	if (rc == KB_OK && nv > 0)
		rc = blob_in(st, &vars[nv - 1], &old, &mode, err);
	if (rc == KB_OK && nv > 0 && git_oid_equal(&old, blob)) {
		*out = vars[nv - 1]; /* the file's latest variant has this text */
		*same = true;
		free(vars);
		return KB_OK;
	}
	free(vars);
	if (rc < 0)
		return rc;
	if (mode != GIT_FILEMODE_BLOB_EXECUTABLE)
		mode = GIT_FILEMODE_BLOB;
	char *msg = variant_message(st, name, message);
	if ((rc = build_tree(st, has ? &head : NULL, blob, mode, &tree, err)) == KB_OK)
		rc = make_commit(st, &tree, has ? &head : NULL, msg, NULL, out, err);
	free(msg);
	return rc;
}

/* One attempt of kb_session_store_commit against the ref's tip now. */
static int commit_once(kb_store *st, const git_oid *blob, const char *message, json_t *note,
		       kb_variant *v, bool *raced, kb_err *err)
{
	git_oid commit, *oids = NULL;
	int n = 0, at = -1;
	bool same = false;
	char name[16];
	*raced = false;
	int rc = file_chain(st, &oids, &n, err);
	if (rc < 0)
		goto out;
	snprintf(name, sizeof name, "v%d", n + 1);
	if ((rc = commit_blob(st, blob, name, message, &commit, &same, err)) < 0)
		goto out;
	if (same) {
		for (int i = 0; i < n; i++)
			if (git_oid_equal(&oids[i], &commit))
				at = i;
		snprintf(name, sizeof name, "v%d", at + 1);
	}
	if (note) {
		char *msg = same ? variant_message(st, name, message) : NULL;
		rc = same && message ? reword(st, &commit, msg, json_incref(note), err)
				     : put_note(st, &commit, json_incref(note), err);
		free(msg);
		if (rc < 0)
			goto out;
	}
	/* the note first: a variant is on the ref with its Result or not at all */
	if (!same && ((rc = move_ref(st, &commit, raced, err)) < 0 || *raced))
		goto out;
	rc = fill_variant(st, &commit, same ? at : n, v, err);
out:
	free(oids);
	return rc;
}

int kb_session_store_commit(kb_store *st, const char *content, size_t len, const char *message,
			    json_t *note, kb_variant *v, kb_err *err)
{
	git_oid blob;
	bool raced = false;
	memset(v, 0, sizeof *v);
	kb_session__unlock_stale(st);
	int rc = KB_GIT(git_blob_create_from_buffer(&blob, st->repo, content, len));
	for (int tries = 0; rc == KB_OK; tries++) {
		rc = commit_once(st, &blob, message, note, v, &raced, err);
		if (rc < 0 || !raced)
			break;
		if (tries == MAX_RACES) {
			rc = KB_ERR(err, KB_EIO, KB_DOM_GIT, GIT_EMODIFIED,
				    "%s kept moving under %d other writes", st->ref, MAX_RACES);
			break;
		}
		race_pause(tries);
	}
	json_decref(note);
	return rc;
}

int kb_session_store_commit_at(kb_store *st, const char *content, size_t len, const char *message,
			       int64_t time, json_t *note, kb_variant *v, kb_err *err)
{
	git_oid blob, head, tree, commit, *oids = NULL;
	git_signature *sig = NULL;
	bool has;
	int n = 0;
	memset(v, 0, sizeof *v);
	kb_session__unlock_stale(st);
	int rc = KB_GIT(git_blob_create_from_buffer(&blob, st->repo, content, len));
	if (rc < 0 || (rc = tip(st, &head, &has, err)) < 0 ||
	    (rc = build_tree(st, has ? &head : NULL, &blob, GIT_FILEMODE_BLOB, &tree, err)) < 0 ||
	    (rc = KB_GIT(git_signature_new(&sig, "kbench", "kbench@localhost", (git_time_t)time, 0))) < 0 ||
	    (rc = make_commit(st, &tree, has ? &head : NULL, message, sig, &commit, err)) < 0)
		goto out;
	if (note) {
		rc = put_note(st, &commit, note, err);
		note = NULL;
		if (rc < 0)
			goto out;
	}
	bool raced;
	if ((rc = move_ref(st, &commit, &raced, err)) < 0)
		goto out;
	if (raced) { /* an import writes a session of its own: nobody else does */
		rc = KB_ERR(err, KB_EIO, KB_DOM_GIT, GIT_EMODIFIED, "%s moved under the import", st->ref);
		goto out;
	}
	if ((rc = file_chain(st, &oids, &n, err)) == 0)
		rc = fill_variant(st, &commit, n - 1, v, err);
out:
	free(oids);
	git_signature_free(sig);
	json_decref(note);
	return rc;
}

/* ===== listing and looking up ===== */

int kb_session_store_list(kb_store *st, kb_variant **vs, int *n, kb_err *err)
{
	git_oid *oids = NULL;
	int no = 0, *seqs = NULL;
	*vs = NULL;
	*n = 0;
	int rc = file_chain_seq(st, &oids, &seqs, &no, err);
	if (rc < 0)
		return rc;
	kb_variant *arr = kb_xcalloc((size_t)no + 1, sizeof *arr);
	for (int i = 0; i < no; i++) {
		if ((rc = fill_variant(st, &oids[i], i, &arr[i], err)) < 0) {
			kb_session_variants_free(arr, i + 1);
			goto out;
		}
		arr[i].seq = seqs[i];
	}
	*vs = arr;
	*n = no;
out:
	free(seqs);
	free(oids);
	return rc;
}

int kb_session_store_count(kb_store *st, int *n, kb_err *err)
{
	git_oid *oids = NULL;
	int rc = file_chain(st, &oids, n, err);
	free(oids);
	return rc;
}

int kb_session_store_nth_commit(kb_store *st, int n, char oid[41], kb_err *err)
{
	git_oid *all = NULL;
	int na = 0;
	int rc = chain(st, &all, &na, err);
	if (rc == KB_OK && (n < 1 || n > na))
		rc = KB_ERR(err, KB_ENOTFOUND, KB_DOM_GIT, GIT_ENOTFOUND,
			    "the session ref has %d commits, not %d", na, n);
	if (rc == KB_OK)
		git_oid_tostr(oid, 41, &all[n - 1]);
	free(all);
	return rc;
}

/* The index of variant `name`: "vN", else the newest with that label, else an id prefix. */
static int find_variant(const kb_variant *vs, int n, const char *name, int *at, kb_err *err)
{
	size_t len = strlen(name);
	if (len > 1 && name[0] == 'v' && strspn(name + 1, "0123456789") == len - 1) {
		long k = strtol(name + 1, NULL, 10);
		if (k >= 1 && k <= n) {
			*at = (int)k - 1;
			return KB_OK;
		}
	}
	for (int i = n - 1; i >= 0; i--) {
		if (vs[i].label && !strcmp(vs[i].label, name)) {
			*at = i;
			return KB_OK;
		}
	}
	int hit = -1;
	if (len >= 4 && len <= 40 && strspn(name, "0123456789abcdefABCDEF") == len) {
		for (int i = 0; i < n; i++) {
			if (strncasecmp(vs[i].oid, name, len))
				continue;
			if (hit >= 0)
				return KB_ERR(err, KB_EINVAL, KB_DOM_GIT, GIT_EAMBIGUOUS,
					      "commit id prefix '%s' is ambiguous", name);
			hit = i;
		}
	}
	if (hit < 0)
		return KB_ERR(err, KB_ENOTFOUND, KB_DOM_GIT, GIT_ENOTFOUND,
			      "no variant '%s' (a vN, a label or a commit id)", name);
	*at = hit;
	return KB_OK;
}

/* A NUL-terminated copy of the file's content in commit oid. */
static int read_content(kb_store *st, const git_oid *oid, char **content, size_t *len,
			kb_err *err)
{
	git_oid boid;
	git_filemode_t mode;
	git_blob *blob = NULL;
	int rc = blob_in(st, oid, &boid, &mode, err);
	if (rc < 0 || (rc = KB_GIT(git_blob_lookup(&blob, st->repo, &boid))) < 0)
		goto out;
	size_t n = (size_t)git_blob_rawsize(blob);
	*content = kb_xmalloc(n + 1);
	memcpy(*content, git_blob_rawcontent(blob), n);
	(*content)[n] = '\0';
	if (len)
		*len = n;
out:
	git_blob_free(blob);
	return rc;
}

int kb_session_store_text(kb_store *st, const kb_variant *v, char **content, size_t *len,
			  kb_err *err)
{
	git_oid oid;
	*content = NULL;
	*len = 0;
	int rc = KB_GIT(git_oid_fromstr(&oid, v->oid));
	return rc < 0 ? rc : read_content(st, &oid, content, len, err);
}

int kb_session_store_read(kb_store *st, const char *name, kb_variant *v, char **content,
			  size_t *len, kb_err *err)
{
	kb_variant *vs = NULL;
	git_oid oid;
	int n = 0, at = 0;
	if (v)
		memset(v, 0, sizeof *v);
	if (content)
		*content = NULL;
	if (len)
		*len = 0;
	int rc = kb_session_store_list(st, &vs, &n, err);
	if (rc < 0 || (rc = find_variant(vs, n, name, &at, err)) < 0)
		goto out;
	if ((rc = KB_GIT(git_oid_fromstr(&oid, vs[at].oid))) < 0)
		goto out;
	if (content && (rc = read_content(st, &oid, content, len, err)) < 0)
		goto out;
	if (v) {
		*v = vs[at];
		memset(&vs[at], 0, sizeof vs[at]);
	}
out:
	kb_session_variants_free(vs, n);
	return rc;
}

int kb_session_store_set_note(kb_store *st, const char *name, json_t *note, kb_err *err)
{
	kb_variant *vs = NULL;
	git_oid oid;
	int n = 0, at = 0;
	int rc = kb_session_store_list(st, &vs, &n, err);
	if (rc < 0 || (rc = find_variant(vs, n, name, &at, err)) < 0 ||
	    (rc = KB_GIT(git_oid_fromstr(&oid, vs[at].oid))) < 0)
		goto out;
	kb_session__unlock_stale(st);
	rc = put_note(st, &oid, note, err);
	note = NULL;
out:
	json_decref(note);
	kb_session_variants_free(vs, n);
	return rc;
}

void kb_session_variant_free(kb_variant *v)
{
	if (!v)
		return;
	free(v->path);
	free(v->message);
	free(v->label);
	free(v->kernel);
	free(v->note_error);
	json_decref(v->note);
	memset(v, 0, sizeof *v);
}

void kb_session_variants_free(kb_variant *vs, int n)
{
	for (int i = 0; vs && i < n; i++)
		kb_session_variant_free(&vs[i]);
	free(vs);
}
