/*
 * test_session_faults.c - the variant store after a crash or a corruption
 * (docs/faults.md): the ref locks a kbench killed mid-update leaves are
 * cleared (an old one at once, a young one once it had time to go away);
 * a private repository's HEAD keeps `git fsck --strict` clean, and the
 * HEAD older kbench made is mended when the repository is opened; a note
 * that is not a JSON object is named, and its variant still listed.  Under a temporary directory, with
 * plain git checking what git sees.
 */
#include "../../src/session/session.h"
#include "t.h"

#include <git2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static char root[] = "/tmp/kbench-session-faults-XXXXXX";

/* The exit status of a shell command (its output discarded). */
static int shell(const char *fmt, ...) KB_PRINTF(1, 2);
static int shell(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = kb_xvasprintf(fmt, ap);
	va_end(ap);
	char *quiet = kb_xasprintf("(%s) >/dev/null 2>&1", cmd);
	int rc = system(quiet);
	free(quiet);
	free(cmd);
	return rc;
}

/* The first line a shell command prints, a new string ("" when none). */
static char *line_of(const char *fmt, ...) KB_PRINTF(1, 2);
static char *line_of(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = kb_xvasprintf(fmt, ap);
	va_end(ap);
	char buf[512] = "";
	FILE *p = popen(cmd, "r");
	if (p) {
		if (!fgets(buf, sizeof buf, p))
			buf[0] = '\0';
		pclose(p);
	}
	buf[strcspn(buf, "\n")] = '\0';
	free(cmd);
	return kb_xstrdup(buf);
}

/* A session, the store of a file in no repository (its private one, at
 * gitdir), and the variants a case commits. */
typedef struct {
	kb_session s;
	kb_store *st;
	char *gitdir;
	kb_variant a, b;
	kb_err err;
} fixture;

/* Session `id` and its store; false when the store cannot be opened. */
static bool setup(fixture *f, const char *id)
{
	char *dir = kb_xasprintf("%s/%s", root, id);
	char *file = kb_xasprintf("%s/k.cu", dir);
	memset(f, 0, sizeof *f);
	T_EQ_INT(kb_mkdirs(dir, NULL), 0);
	T_EQ_INT(kb_file_write(file, "x\n", 2, NULL), 0);
	T_EQ_INT(kb_session_new(id, &f->s, &f->err), 0);
	T_EQ_INT(kb_session_store_open(&f->s, file, &f->st, &f->err), 0);
	f->gitdir = kb_xasprintf("%s/repo", f->s.dir);
	free(file);
	free(dir);
	return f->st != NULL;
}

static void teardown(fixture *f)
{
	kb_session_variant_free(&f->a);
	kb_session_variant_free(&f->b);
	kb_session_store_close(f->st);
	kb_session_free(&f->s);
	free(f->gitdir);
}

/* Creates <gitdir>/<ref>.lock as a killed writer leaves it, age_s old. */
static char *plant_lock(const char *gitdir, const char *ref, double age_s)
{
	char *lock = kb_xasprintf("%s/%s.lock", gitdir, ref);
	char *dir = kb_xstrndup(lock, (size_t)(strrchr(lock, '/') - lock));
	T_EQ_INT(kb_mkdirs(dir, NULL), 0);
	free(dir);
	T_EQ_INT(kb_file_write(lock, "0123456789abcdef", 16, NULL), 0);
	struct timeval now, tv[2];
	gettimeofday(&now, NULL);
	double t = (double)now.tv_sec + now.tv_usec / 1e6 - age_s;
	tv[0].tv_sec = tv[1].tv_sec = (time_t)t;
	tv[0].tv_usec = tv[1].tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
	T_EQ_INT(utimes(lock, tv), 0);
	return lock;
}

static json_t *note_of(const char *label)
{
	return json_pack("{s:s}", "label", label);
}

/* ===== stale ref locks ===== */

static void test_session_faults__old_locks_cleared(void)
{
	fixture f;
	if (!setup(&f, "oldlock"))
		return;
	T_EQ_INT(kb_session_store_commit(f.st, "a\n", 2, "a", note_of("a"), &f.a, &f.err), 0);
	char *ref_lock = plant_lock(f.gitdir, "refs/kbench/oldlock", 30);
	char *notes_lock = plant_lock(f.gitdir, "refs/notes/kbench", 30);
	char *head_lock = plant_lock(f.gitdir, "refs/heads/session", 30);
	/* what libgit2 does when they stay: the precondition of the case */
	T_OK(shell("git --git-dir=%s update-ref refs/kbench/oldlock %s", f.gitdir, f.a.oid) != 0);
	T_EQ_INT(kb_session_store_commit(f.st, "b\n", 2, "b", note_of("b"), &f.b, &f.err), 0);
	T_EQ_STR(f.b.name, "v2");
	T_OK(!kb_file_exists(ref_lock) && !kb_file_exists(notes_lock) && !kb_file_exists(head_lock));
	char *count = line_of("git --git-dir=%s rev-list --count refs/kbench/oldlock", f.gitdir);
	T_EQ_STR(count, "2");
	char *note = line_of("git --git-dir=%s notes --ref=kbench show %s", f.gitdir, f.b.oid);
	T_EQ_STR(note, "{\"label\":\"b\"}");
	/* a label (a note alone) clears them too */
	free(plant_lock(f.gitdir, "refs/notes/kbench", 30));
	T_EQ_INT(kb_session_store_set_note(f.st, "v1", note_of("again"), &f.err), 0);
	free(note);
	note = line_of("git --git-dir=%s notes --ref=kbench show %s", f.gitdir, f.a.oid);
	T_EQ_STR(note, "{\"label\":\"again\"}");
	free(note); free(count); free(head_lock); free(notes_lock); free(ref_lock);
	teardown(&f);
}

static void test_session_faults__young_lock_waited(void)
{
	fixture f;
	if (!setup(&f, "younglock"))
		return;
	/* 0.6 s old: it might still be a live writer's, so it is waited for
	 * (about 0.4 s here) before it counts as stale */
	char *lock = plant_lock(f.gitdir, "refs/kbench/younglock", 0.6);
	double t0 = kb_now_ms();
	T_EQ_INT(kb_session_store_commit(f.st, "a\n", 2, "a", NULL, &f.a, &f.err), 0);
	double waited = kb_now_ms() - t0;
	T_OK(waited > 300 && waited < 3000);
	T_OK(!kb_file_exists(lock));
	T_EQ_STR(f.a.name, "v1");
	free(lock);
	teardown(&f);
}

/* ===== a variant is whole or absent ===== */

static void test_session_faults__note_before_ref(void)
{
	fixture f;
	int n = -1;
	if (!setup(&f, "whole"))
		return;
	/* refs/notes as a file: the note cannot be written (as on a full disk) */
	char *notes = kb_xasprintf("%s/refs/notes", f.gitdir);
	T_EQ_INT(kb_file_write(notes, "", 0, NULL), 0);
	T_OK(kb_session_store_commit(f.st, "a\n", 2, "a", note_of("a"), &f.a, &f.err) < 0);
	T_EQ_INT(kb_session_store_count(f.st, &n, &f.err), 0);
	T_EQ_INT(n, 0); /* no variant without its note */
	T_OK(shell("git --git-dir=%s rev-parse --verify -q refs/kbench/whole", f.gitdir) != 0);
	unlink(notes);
	kb_session_variant_free(&f.a);
	T_EQ_INT(kb_session_store_commit(f.st, "a\n", 2, "a", note_of("a"), &f.a, &f.err), 0);
	T_EQ_STR(f.a.name, "v1");
	T_EQ_STR(f.a.label, "a");
	T_EQ_INT(shell("git --git-dir=%s fsck --strict --no-dangling", f.gitdir), 0);
	free(notes);
	teardown(&f);
}

/* ===== a session whose creation was cut short ===== */

static void test_session_faults__half_made_session(void)
{
	kb_session s;
	kb_err err = {0};
	char *sessions = kb_xasprintf("%s/data/kbench/sessions", root);
	/* what a kill left: an empty session folder (kbench before building
	 * folders), a building folder of a dead process */
	T_EQ_INT(shell("mkdir -p %s/half %s/.new.gone.999999999 %s/stuck && touch %s/stuck/x",
		       sessions, sessions, sessions, sessions), 0);
	T_EQ_INT(kb_session_new("half", &s, &err), 0);
	char *meta = kb_xasprintf("%s/meta.json", s.dir);
	T_OK(kb_file_exists(meta));
	free(meta);
	kb_session_free(&s);
	T_OK(shell("test -e %s/.new.gone.999999999", sessions) != 0);
	T_EQ_INT(kb_session_new("half", &s, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "session 'half' already exists");
	T_EQ_INT(kb_session_new("stuck", &s, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "/stuck is in the way of session 'stuck'");
	char *left = line_of("ls -A %s | grep '^.new' | wc -l", sessions);
	T_EQ_STR(left, "0");
	free(left);
	free(sessions);
}

/* ===== a damaged note ===== */

static void test_session_faults__bad_note(void)
{
	fixture f;
	kb_variant *vs = NULL;
	int n = 0;
	if (!setup(&f, "badnote"))
		return;
	T_EQ_INT(kb_session_store_commit(f.st, "a\n", 2, "a", note_of("a"), &f.a, &f.err), 0);
	T_EQ_INT(kb_session_store_commit(f.st, "b\n", 2, "b", note_of("b"), &f.b, &f.err), 0);
	T_EQ_INT(shell("git --git-dir=%s notes --ref=kbench add -f -m '[1, 2' %s", f.gitdir, f.a.oid), 0);
	T_EQ_INT(shell("git --git-dir=%s notes --ref=kbench add -f -m '\"text\"' %s", f.gitdir, f.b.oid), 0);
	T_EQ_INT(kb_session_store_list(f.st, &vs, &n, &f.err), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_OK(vs[0].note == NULL && vs[0].label == NULL);
		T_CONTAINS(vs[0].note_error, "is not a JSON object: \"[1, 2\"");
		T_CONTAINS(vs[1].note_error, "is not a JSON object: \"\"text\"\"");
		T_CONTAINS(vs[1].note_error, "(refs/notes/kbench on ");
	}
	kb_session_variants_free(vs, n);
	teardown(&f);
}

/* ===== a private repository's HEAD ===== */

static void test_session_faults__private_head(void)
{
	fixture f;
	if (!setup(&f, "head"))
		return;
	T_EQ_INT(kb_session_store_commit(f.st, "a\n", 2, "a", NULL, &f.a, &f.err), 0);
	T_EQ_INT(kb_session_store_commit(f.st, "b\n", 2, "b", note_of("b"), &f.b, &f.err), 0);
	T_EQ_INT(shell("git --git-dir=%s fsck --strict --no-dangling", f.gitdir), 0);
	char *head = line_of("git --git-dir=%s symbolic-ref HEAD", f.gitdir);
	T_EQ_STR(head, "refs/heads/session");
	char *at = line_of("git --git-dir=%s rev-parse HEAD", f.gitdir);
	T_EQ_STR(at, f.b.oid);
	free(at); free(head);
	teardown(&f);
}

static void test_session_faults__old_head_mended(void)
{
	fixture f;
	if (!setup(&f, "oldhead"))
		return;
	T_EQ_INT(kb_session_store_commit(f.st, "a\n", 2, "a", NULL, &f.a, &f.err), 0);
	kb_session_store_close(f.st);
	/* the HEAD kbench made before: git fsck calls it "something strange" */
	T_EQ_INT(shell("git --git-dir=%s symbolic-ref HEAD refs/kbench/oldhead && "
		       "git --git-dir=%s update-ref -d refs/heads/session", f.gitdir, f.gitdir), 0);
	T_OK(shell("git --git-dir=%s fsck --strict --no-dangling", f.gitdir) != 0);
	char *file = kb_xasprintf("%s/oldhead/k.cu", root);
	T_EQ_INT(kb_session_store_open(&f.s, file, &f.st, &f.err), 0);
	T_EQ_INT(shell("git --git-dir=%s fsck --strict --no-dangling", f.gitdir), 0);
	char *at = line_of("git --git-dir=%s rev-parse HEAD", f.gitdir);
	T_EQ_STR(at, f.a.oid);
	free(at); free(file);
	teardown(&f);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	char *data = kb_xasprintf("%s/data", root);
	setenv("HOME", root, 1); /* before libgit2 reads its global config path */
	setenv("XDG_CONFIG_HOME", root, 1);
	setenv("XDG_DATA_HOME", data, 1);
	setenv("GIT_CEILING_DIRECTORIES", root, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "t", 1); /* plain git writes notes too */
	setenv("GIT_AUTHOR_EMAIL", "t@t", 1);
	setenv("GIT_COMMITTER_NAME", "t", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@t", 1);

	T_RUN(test_session_faults__old_locks_cleared);
	T_RUN(test_session_faults__young_lock_waited);
	T_RUN(test_session_faults__note_before_ref);
	T_RUN(test_session_faults__half_made_session);
	T_RUN(test_session_faults__bad_note);
	T_RUN(test_session_faults__private_head);
	T_RUN(test_session_faults__old_head_mended);

	git_libgit2_shutdown();
	if (!getenv("T_KEEP"))
		shell("rm -rf %s", root);
	free(data);
	return t_report();
}
