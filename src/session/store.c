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
 * file's path there is its basename.
 *
 * Invariants: only objects, the session ref and the notes ref are ever
 * written.  The user's HEAD, index file and working tree are never read
 * for writing nor touched: trees are built in an in-memory index
 * (git_index_new) seeded from the session tip's tree, so the first variant
 * holds only the kernel file.  Variants are v1..vN along the first-parent
 * chain from the root of the session ref; content equal to the tip's blob
 * is not a new variant.  libgit2 error codes never leave this file: every
 * call goes through KB_GIT, which maps them to KB_E* with git_error_last()'s
 * text.  libgit2 is initialised once per process (the caller may call
 * git_libgit2_shutdown at exit).  Not thread safe.
 */
#include "session.h"

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NOTES_REF "refs/notes/kbench"

struct kb_store {
	git_repository *repo;
	char *repo_path; /* the working tree (user's repository) or the git dir (private) */
	char *path;      /* the file, relative to the repository */
	char ref[128];   /* refs/kbench/<session id> */
};

/* ===== libgit2 at the edge ===== */

static int git_check(int code, const char *call, const char *file, int line, kb_err *err)
{
	if (code >= 0)
		return KB_OK;
	const git_error *e = git_error_last();
	int rc = code == GIT_ENOTFOUND ? KB_ENOTFOUND
		 : (code == GIT_EAMBIGUOUS || code == GIT_EINVALIDSPEC) ? KB_EINVAL
									 : KB_ERROR;
	int name_len = (int)strcspn(call, "(");
	return kb_err_set_at(err, file, line, rc, KB_DOM_GIT, code, "%.*s: %s", name_len, call,
			     e && e->message ? e->message : "failed");
}

/* Runs a libgit2 call; 0, or a KB_E* with file:line and libgit2's text in `err`. */
#define KB_GIT(call) git_check((call), #call, __FILE__, __LINE__, err)

static void lib_init(void)
{
	static bool done;
	if (!done) {
		git_libgit2_init();
		done = true;
	}
}

/* A KB_ENOTFOUND from KB_GIT that the caller treats as "absent": forget it. */
static int absent_ok(int rc, bool *absent, kb_err *err)
{
	*absent = rc == KB_ENOTFOUND;
	if (*absent) {
		kb_err_clear(err);
		return KB_OK;
	}
	return rc;
}

static int signature(kb_store *st, git_signature **sig, kb_err *err)
{
	if (git_signature_default(sig, st->repo) == 0)
		return KB_OK;
	return KB_GIT(git_signature_now(sig, "kbench", "kbench@localhost"));
}

/* ===== opening ===== */

/* The absolute, symlink-free directory holding path (a new string). */
static int abs_dir(const char *path, char **out, kb_err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir = !slash ? kb_xstrdup(".") : slash == path ? kb_xstrdup("/")
							      : kb_xstrndup(path, (size_t)(slash - path));
	*out = realpath(dir, NULL);
	int rc = *out ? KB_OK : kb_err_errno(err, "cannot resolve", dir);
	free(dir);
	return rc;
}

/* absdir relative to the working tree wd: "" for wd itself, NULL if outside. */
static const char *inside(const char *absdir, const char *wd)
{
	size_t n = strlen(wd);
	if (!strcmp(absdir, wd))
		return "";
	if (n == 1)
		return absdir + 1; /* the repository is "/" */
	if (!strncmp(absdir, wd, n) && absdir[n] == '/')
		return absdir + n + 1;
	return NULL;
}

/* The user's repository holding absdir/base, if any (*found). */
static int open_user_repo(kb_store *st, const char *absdir, const char *base, bool *found,
			  kb_err *err)
{
	git_buf gd = {0};
	char *wd = NULL;
	bool absent;
	*found = false;
	int rc = KB_GIT(git_repository_discover(&gd, absdir, 0, getenv("GIT_CEILING_DIRECTORIES")));
	if ((rc = absent_ok(rc, &absent, err)) < 0 || absent)
		goto out;
	if ((rc = KB_GIT(git_repository_open(&st->repo, gd.ptr))) < 0)
		goto out;
	const char *sub = NULL;
	if (!git_repository_is_bare(st->repo) &&
	    (wd = realpath(git_repository_workdir(st->repo), NULL)))
		sub = inside(absdir, wd);
	if (!sub || !strcmp(sub, ".git") || !strncmp(sub, ".git/", 5)) {
		git_repository_free(st->repo); /* bare, or the file is not in its tree */
		st->repo = NULL;
		goto out;
	}
	st->path = *sub ? kb_xasprintf("%s/%s", sub, base) : kb_xstrdup(base);
	st->repo_path = wd;
	wd = NULL;
	*found = true;
out:
	free(wd);
	git_buf_dispose(&gd);
	return rc;
}

/* <session dir>/repo, a bare repository created on first use. */
static int open_private_repo(kb_store *st, const kb_session *s, const char *base, kb_err *err)
{
	git_reference *head = NULL;
	bool absent;
	st->repo_path = kb_xasprintf("%s/repo", s->dir);
	st->path = kb_xstrdup(base);
	int rc = KB_GIT(git_repository_open_ext(&st->repo, st->repo_path,
						GIT_REPOSITORY_OPEN_NO_SEARCH, NULL));
	if ((rc = absent_ok(rc, &absent, err)) < 0 || !absent)
		return rc;
	if ((rc = KB_GIT(git_repository_init(&st->repo, st->repo_path, 1))) < 0)
		return rc;
	rc = KB_GIT(git_reference_symbolic_create(&head, st->repo, "HEAD", st->ref, 1,
						  "kbench: HEAD is the session"));
	git_reference_free(head);
	return rc;
}

int kb_session_store_open(const kb_session *s, const char *path, kb_store **out, kb_err *err)
{
	kb_store *st = kb_xcalloc(1, sizeof *st);
	const char *base = kb_basename(path);
	char *absdir = NULL;
	bool found = false;
	int valid = 0, rc;
	lib_init();
	*out = NULL;
	snprintf(st->ref, sizeof st->ref, "refs/kbench/%s", s->id);
	if ((rc = KB_GIT(git_reference_name_is_valid(&valid, st->ref))) < 0)
		goto fail;
	if (!valid || !*base) {
		rc = KB_ERR(err, KB_EINVAL, KB_DOM_GIT, 0, "cannot store '%s' on %s", path, st->ref);
		goto fail;
	}
	if ((rc = abs_dir(path, &absdir, err)) < 0 ||
	    (rc = open_user_repo(st, absdir, base, &found, err)) < 0)
		goto fail;
	if (!found && (rc = open_private_repo(st, s, base, err)) < 0)
		goto fail;
	free(absdir);
	*out = st;
	return KB_OK;
fail:
	free(absdir);
	kb_session_store_close(st);
	return rc;
}

void kb_session_store_close(kb_store *st)
{
	if (!st)
		return;
	git_repository_free(st->repo);
	free(st->repo_path);
	free(st->path);
	free(st);
}

const char *kb_session_store_repo(const kb_store *st)
{
	return st->repo_path;
}

const char *kb_session_store_ref(const kb_store *st)
{
	return st->ref;
}

/* ===== reading the session ref ===== */

/* The session ref's tip; *has is false while the ref does not exist. */
static int tip(kb_store *st, git_oid *oid, bool *has, kb_err *err)
{
	bool absent;
	int rc = absent_ok(KB_GIT(git_reference_name_to_id(oid, st->repo, st->ref)), &absent, err);
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

/* The note of commit oid as JSON (a JSON string when the text is not JSON), or NULL. */
static int read_note(kb_store *st, const git_oid *oid, json_t **out, kb_err *err)
{
	git_note *note = NULL;
	bool absent;
	*out = NULL;
	int rc = absent_ok(KB_GIT(git_note_read(&note, st->repo, NOTES_REF, oid)), &absent, err);
	if (rc < 0 || absent)
		return rc;
	const char *text = git_note_message(note);
	*out = json_loads(text, JSON_DECODE_ANY, NULL);
	if (!*out)
		*out = json_string(text);
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
	if ((rc = read_note(st, oid, &v->note, err)) < 0)
		return rc;
	const char *label = json_string_value(json_object_get(v->note, "label"));
	v->label = label ? kb_xstrdup(label) : NULL;
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

/* A commit of tree_oid on the session ref whose parent is the tip (if any). */
static int make_commit(kb_store *st, const git_oid *tree_oid, const git_oid *parent,
		       const char *message, git_oid *out, kb_err *err)
{
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit *pc = NULL;
	kb_buf msg = KB_BUF_INIT;
	kb_buf_cat(&msg, message && *message ? message : "kbench variant");
	if (msg.s[msg.len - 1] != '\n')
		kb_buf_catc(&msg, '\n');
	int rc = signature(st, &sig, err);
	if (rc < 0 || (rc = KB_GIT(git_tree_lookup(&tree, st->repo, tree_oid))) < 0)
		goto out;
	if (parent && (rc = KB_GIT(git_commit_lookup(&pc, st->repo, parent))) < 0)
		goto out;
	const git_commit *parents[1] = {pc};
	rc = KB_GIT(git_commit_create(out, st->repo, st->ref, sig, sig, NULL, msg.s, tree,
				      pc ? 1 : 0, parents));
out:
	git_commit_free(pc);
	git_tree_free(tree);
	git_signature_free(sig);
	kb_buf_free(&msg);
	return rc;
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
	rc = KB_GIT(git_note_create(&note_oid, st->repo, NOTES_REF, sig, sig, oid, line, 1));
out:
	git_signature_free(sig);
	free(line);
	free(text);
	json_decref(note);
	return rc;
}

/* The commit for content: the tip when its blob is the same, else a new one. */
static int commit_blob(kb_store *st, const git_oid *blob, const char *message, git_oid *out,
		       kb_err *err)
{
	git_oid head, old, tree;
	git_filemode_t mode = GIT_FILEMODE_BLOB;
	bool has, absent = true;
	int rc = tip(st, &head, &has, err);
	if (rc == KB_OK && has)
		rc = absent_ok(blob_in(st, &head, &old, &mode, err), &absent, err);
	if (rc < 0)
		return rc;
	if (!absent && git_oid_equal(&old, blob)) {
		*out = head;
		return KB_OK;
	}
	if (mode != GIT_FILEMODE_BLOB_EXECUTABLE)
		mode = GIT_FILEMODE_BLOB;
	if ((rc = build_tree(st, has ? &head : NULL, blob, mode, &tree, err)) < 0)
		return rc;
	return make_commit(st, &tree, has ? &head : NULL, message, out, err);
}

int kb_session_store_commit(kb_store *st, const char *content, size_t len, const char *message,
			    json_t *note, kb_variant *v, kb_err *err)
{
	git_oid blob, commit, *oids = NULL;
	int n = 0;
	memset(v, 0, sizeof *v);
	int rc = KB_GIT(git_blob_create_from_buffer(&blob, st->repo, content, len));
	if (rc < 0 || (rc = commit_blob(st, &blob, message, &commit, err)) < 0)
		goto out;
	if (note) {
		rc = put_note(st, &commit, note, err);
		note = NULL;
		if (rc < 0)
			goto out;
	}
	if ((rc = chain(st, &oids, &n, err)) < 0)
		goto out;
	rc = fill_variant(st, &commit, n - 1, v, err); /* commit is the tip */
out:
	free(oids);
	json_decref(note);
	return rc;
}

/* ===== listing and looking up ===== */

int kb_session_store_list(kb_store *st, kb_variant **vs, int *n, kb_err *err)
{
	git_oid *oids = NULL;
	int no = 0;
	*vs = NULL;
	*n = 0;
	int rc = chain(st, &oids, &no, err);
	if (rc < 0)
		return rc;
	kb_variant *arr = kb_xcalloc((size_t)no + 1, sizeof *arr);
	for (int i = 0; i < no; i++) {
		if ((rc = fill_variant(st, &oids[i], i, &arr[i], err)) < 0) {
			kb_session_variants_free(arr, i + 1);
			goto out;
		}
	}
	*vs = arr;
	*n = no;
out:
	free(oids);
	return rc;
}

int kb_session_store_count(kb_store *st, int *n, kb_err *err)
{
	git_oid *oids = NULL;
	int rc = chain(st, &oids, n, err);
	free(oids);
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
	json_decref(v->note);
	memset(v, 0, sizeof *v);
}

void kb_session_variants_free(kb_variant *vs, int n)
{
	for (int i = 0; vs && i < n; i++)
		kb_session_variant_free(&vs[i]);
	free(vs);
}
