/*
 * store_repo.c - the repository a variant store writes to: finding it (the
 * user's repository holding the file) or creating it (<session dir>/repo),
 * libgit2's error codes turned into KB_E*, and what keeps a repository
 * writable and `git fsck`-clean after a kbench was killed mid-write.
 *
 * A kill -9 between libgit2's lock of a ref (<ref>.lock, created O_EXCL)
 * and its rename leaves the lock behind, and every later update of that ref
 * fails with "File exists": a session that could never record again.  A
 * live writer holds such a lock for the microseconds of a 41-byte write, so
 * a lock on one of kbench's refs that is older than STALE_LOCK_MS was left
 * by a dead process and is removed (and logged); a younger one is waited for.
 *
 * A file is found by its real path (links resolved): in the repository
 * whose working tree holds it, under its path there; else in the private
 * repository under its real path without the leading '/', or its basename
 * in a session recorded before that (kb_session__legacy; the journal then
 * tells apart two files on one path: kb_session__foreign_commits).
 *
 * A private repository's HEAD is the branch KB_PRIVATE_HEAD, moved to the
 * session ref's tip after each commit, so that `git --git-dir=<it> log`
 * shows the session and git fsck finds HEAD below refs/heads/ (HEAD used to
 * point at refs/kbench/<id>, which fsck reports as an error; such a HEAD is
 * changed when the repository is opened).
 */
#include "session_int.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STALE_LOCK_MS 1000.0

/* ===== libgit2 at the edge ===========================================*/

int kb_session__git_check(int code, const char *call, const char *file, int line, kb_err *err)
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


static void lib_init(void)
{
	static bool done;
	if (!done) {
		git_libgit2_init();
		done = true;
	}
}

int kb_session__absent_ok(int rc, bool *absent, kb_err *err)
{
	*absent = rc == KB_ENOTFOUND;
	if (*absent) {
		kb_err_clear(err);
		return KB_OK;
	}
	return rc;
}

/* ===== opening =====================================================*/

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
	if ((rc = kb_session__absent_ok(rc, &absent, err)) < 0 || absent)
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

/* A private repository made before its HEAD was a branch pointed HEAD at the
 * session ref, which git fsck calls "something strange": HEAD becomes the
 * branch (kept at the tip).  A repository that cannot be written stays as
 * it is: reading it needs no change. */
static void head_to_branch(kb_store *st)
{
	git_reference *head = NULL, *moved = NULL;
	git_oid at;
	const char *target = git_reference_lookup(&head, st->repo, "HEAD") == 0 &&
				     git_reference_type(head) == GIT_REFERENCE_SYMBOLIC
			     ? git_reference_symbolic_target(head)
			     : NULL;
	if (target && !strncmp(target, "refs/kbench/", 12) &&
	    git_reference_symbolic_create(&moved, st->repo, "HEAD", KB_PRIVATE_HEAD, 1,
					  "kbench: HEAD is a branch at the session's tip") == 0 &&
	    git_reference_name_to_id(&at, st->repo, st->ref) == 0)
		kb_session__follow_tip(st, &at);
	git_reference_free(moved);
	git_reference_free(head);
}

static bool opens(const char *path)
{
	git_repository *r = NULL;
	int rc = git_repository_open_ext(&r, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	git_repository_free(r);
	return rc == 0;
}

/* Makes the bare repository at path whole or not at all: it is built under
 * <session dir>/.new.repo-N.PID and renamed into place, so a kill -9 mid-way
 * (libgit2 writes a dozen files) leaves no half repository that git and
 * the next command would stumble on.  Another process that got there first
 * wins; ours is removed. */
static int init_private_repo(const char *sdir, const char *path, kb_err *err)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	static atomic_uint calls; /* two threads of one process (the TUI's) apart */
	kb_session__sweep_unfinished(sdir);
	char *tmp = kb_xasprintf("%s/.new.repo-%u.%ld", sdir, atomic_fetch_add(&calls, 1),
				 (long)getpid());
	kb_session__remove_tree(tmp, true); /* a dead namesake's, were this pid reused */
	int rc = KB_GIT(git_repository_init(&repo, tmp, 1));
	if (rc == 0)
		rc = KB_GIT(git_reference_symbolic_create(&head, repo, "HEAD", KB_PRIVATE_HEAD, 1,
							  "kbench: HEAD is the session's branch"));
	git_reference_free(head);
	git_repository_free(repo);
	if (rc == 0 && rename(tmp, path) < 0) {
		int e = errno;
		if ((e == EEXIST || e == ENOTEMPTY) && opens(path)) {
			e = 0; /* another process made it first: that one serves */
		} else if (e == EEXIST || e == ENOTEMPTY) {
			/* a half repository an older kbench left: kept aside, not lost */
			char *aside = kb_xasprintf("%s.damaged-%ld", path, (long)time(NULL));
			if (rename(path, aside) == 0)
				kb_log("store: %s was not a whole repository; moved to %s", path, aside);
			free(aside);
			e = rename(tmp, path) == 0 ? 0 : errno;
		}
		if (e)
			rc = KB_ERR(err, KB_EIO, KB_DOM_OS, e, "cannot create %s", path);
	}
	kb_session__remove_tree(tmp, true); /* gone after the rename; left when another won */
	free(tmp);
	return rc;
}

/* <session dir>/repo, a bare repository created on first use, its HEAD
 * the branch KB_PRIVATE_HEAD (follow_tip keeps it at the session's tip). */
static int open_private_repo(kb_store *st, const kb_session *s, const char *base, kb_err *err)
{
	bool absent;
	st->repo_path = kb_xasprintf("%s/repo", s->dir);
	st->path = kb_xstrdup(base);
	st->private_repo = true;
	int rc = KB_GIT(git_repository_open_ext(&st->repo, st->repo_path,
						GIT_REPOSITORY_OPEN_NO_SEARCH, NULL));
	if ((rc = kb_session__absent_ok(rc, &absent, err)) < 0)
		return rc;
	if (!absent) {
		head_to_branch(st);
		return KB_OK;
	}
	if ((rc = init_private_repo(s->dir, st->repo_path, err)) < 0)
		return rc;
	return KB_GIT(git_repository_open_ext(&st->repo, st->repo_path,
					      GIT_REPOSITORY_OPEN_NO_SEARCH, NULL));
}

/* The file the session name `path` means, links resolved (*dir its folder,
 * *base its name; new strings): the recorded file, else path itself. */
static int real_file(const kb_session *s, const char *path, char **dir, char **base, kb_err *err)
{
	char *named = kb_session_file_path(s, path), *real = realpath(named, NULL);
	int rc = KB_OK;
	*dir = *base = NULL;
	if (real) { /* the file itself may be a link */
		char *slash = strrchr(real, '/');
		*dir = slash == real ? kb_xstrdup("/") : kb_xstrndup(real, (size_t)(slash - real));
		*base = kb_xstrdup(slash + 1);
	} else if ((rc = abs_dir(named, dir, err)) == 0) {
		*base = kb_xstrdup(kb_basename(named));
	}
	free(real);
	free(named);
	return rc;
}

/* The store of a file in no repository: the private repository, the file
 * under its real path without the leading '/' (a legacy session: under
 * its basename, as it was recorded). */
static int open_private_for(kb_store *st, const kb_session *s, const char *dir, const char *base,
			    bool legacy, kb_err *err)
{
	char *key = legacy || !strcmp(dir, "/") ? kb_xstrdup(base) : kb_xasprintf("%s/%s", dir + 1, base);
	int rc = open_private_repo(st, s, key, err);
	free(key);
	return rc;
}

int kb_session_store_open(const kb_session *s, const char *path, kb_store **out, kb_err *err)
{
	kb_store *st = kb_xcalloc(1, sizeof *st);
	const char *base = kb_basename(path);
	char *absdir = NULL, *fbase = NULL;
	bool found = false, legacy = kb_session__legacy(s);
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
	if (s->detached) {
		char *stored = kb_session__detached_path(s, path);
		rc = open_private_repo(st, s, stored, err);
		free(stored);
	} else if ((rc = real_file(s, path, &absdir, &fbase, err)) == 0 &&
		   (rc = open_user_repo(st, absdir, fbase, &found, err)) == 0 && !found) {
		rc = open_private_for(st, s, absdir, fbase, legacy, err);
	}
	if (rc == 0 && legacy)
		rc = kb_session__foreign_commits(s, path, &st->foreign, &st->nforeign);
	if (rc < 0)
		goto fail;
	free(fbase);
	free(absdir);
	*out = st;
	return KB_OK;
fail:
	free(fbase);
	free(absdir);
	kb_session_store_close(st);
	return rc;
}

void kb_session_store_close(kb_store *st)
{
	if (!st)
		return;
	git_repository_free(st->repo);
	free(st->foreign);
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

const char *kb_session_store_path(const kb_store *st)
{
	return st->path;
}

/* ===== after a crash ===================================================*/

/* Milliseconds since path was last modified, or -1 when it does not exist. */
static double age_ms(const char *path)
{
	struct stat sb;
	struct timespec now;
	if (stat(path, &sb) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	return (double)(now.tv_sec - sb.st_mtim.tv_sec) * 1e3 +
	       (double)(now.tv_nsec - sb.st_mtim.tv_nsec) / 1e6;
}

/* Waits while <gitdir>/<ref>.lock is younger than STALE_LOCK_MS, then
 * removes it if it is still there. */
static void unlock_ref(kb_store *st, const char *ref)
{
	char *lock = kb_xasprintf("%s%s.lock", git_repository_path(st->repo), ref);
	double age;
	while ((age = age_ms(lock)) >= 0 && age < STALE_LOCK_MS)
		usleep(20 * 1000);
	if (age >= 0 && unlink(lock) == 0)
		kb_log("removed %s, %.1f s old: left by a kbench killed while it updated %s", lock,
		       age / 1e3, ref);
	free(lock);
}

void kb_session__unlock_stale(kb_store *st)
{
	unlock_ref(st, st->ref);
	unlock_ref(st, KB_NOTES_REF);
	if (st->private_repo)
		unlock_ref(st, KB_PRIVATE_HEAD);
}

void kb_session__follow_tip(kb_store *st, const git_oid *tip)
{
	git_reference *r = NULL;
	if (st->private_repo &&
	    git_reference_create(&r, st->repo, KB_PRIVATE_HEAD, tip, 1, "kbench: the session's tip") < 0)
		kb_log("%s: cannot move %s to the session's tip: %s", st->repo_path, KB_PRIVATE_HEAD,
		       git_error_last() ? git_error_last()->message : "?");
	git_reference_free(r);
}
