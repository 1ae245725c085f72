/*
 * test_session.c - sessions, the journal and the git variant store, on
 * real repositories under a temporary directory.  HOME, XDG_DATA_HOME and
 * GIT_CEILING_DIRECTORIES point into that directory, so neither the user's
 * git configuration nor any repository above it takes part.  The `git`
 * command line checks what plain git sees.
 */
#include "../../src/session/session.h"
#include "t.h"

#include <git2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char root[] = "/tmp/kbench-session-XXXXXX";

/* ===== helpers ===== */

/* Runs a shell command; its stdout (without the last newline) goes to out. */
static int sh(kb_buf *out, const char *fmt, ...) KB_PRINTF(2, 3);
static int sh(kb_buf *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = kb_xvasprintf(fmt, ap);
	va_end(ap);
	char *argv[] = {"sh", "-c", cmd, NULL};
	kb_buf tmp = KB_BUF_INIT;
	int rc = kb_spawn_capture(argv, out ? out : &tmp, NULL, NULL);
	kb_buf *o = out ? out : &tmp;
	while (o->len && o->s[o->len - 1] == '\n')
		o->s[--o->len] = '\0';
	kb_buf_free(&tmp);
	free(cmd);
	return rc;
}

/* The output of a shell command as a new string ("" on failure). */
static char *cap(const char *fmt, ...) KB_PRINTF(1, 2);
static char *cap(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = kb_xvasprintf(fmt, ap);
	va_end(ap);
	kb_buf b = KB_BUF_INIT;
	sh(&b, "%s", cmd);
	free(cmd);
	return b.s ? kb_buf_detach(&b) : kb_xstrdup("");
}

static char *slurp(const char *path, size_t *len)
{
	kb_buf b = KB_BUF_INIT;
	if (kb_file_read(path, &b, NULL) < 0)
		kb_buf_catn(&b, "", 0);
	if (len)
		*len = b.len;
	return kb_buf_detach(&b);
}

/* A repository with a commit on main, a staged change, an unstaged edit and an untracked file. */
static char *make_user_repo(const char *name)
{
	char *repo = kb_xasprintf("%s/%s", root, name);
	int rc = sh(NULL, "mkdir -p %s/src/k && cd %s && git init -q -b main && "
			  "printf 'readme 1\\n' > README && printf 'kernel 0\\n' > src/k/kern.cu && "
			  "git add -A && git commit -q -m init && "
			  "printf 'readme staged\\n' > README && git add README && "
			  "printf 'readme unstaged\\n' > README && printf 'kernel edit\\n' > src/k/kern.cu && "
			  "printf 'scratch\\n' > untracked.txt", repo, repo);
	T_EQ_INT(rc, 0);
	return repo;
}

static json_t *note_for(const char *label, double ms)
{
	return json_pack("{s:s, s:f}", "label", label, "time_ms", ms);
}

/* ===== (1) a scripted session in the user's repository ===== */

typedef struct {
	char *head, *symref, *status, *index, *readme, *kern, *branches;
	size_t index_len;
} repo_state;

static void snapshot(const char *repo, repo_state *rs)
{
	rs->head = cap("git -C %s rev-parse HEAD", repo);
	rs->symref = cap("git -C %s symbolic-ref HEAD", repo);
	rs->status = cap("git -C %s --no-optional-locks status --porcelain", repo);
	rs->branches = cap("git -C %s for-each-ref --format='%%(refname) %%(objectname)' refs/heads",
			   repo);
	char *p = kb_xasprintf("%s/.git/index", repo);
	rs->index = slurp(p, &rs->index_len);
	free(p);
	p = kb_xasprintf("%s/README", repo);
	rs->readme = slurp(p, NULL);
	free(p);
	p = kb_xasprintf("%s/src/k/kern.cu", repo);
	rs->kern = slurp(p, NULL);
	free(p);
}

static void snapshot_free(repo_state *rs)
{
	free(rs->head); free(rs->symref); free(rs->status); free(rs->index);
	free(rs->readme); free(rs->kern); free(rs->branches);
}

static void commit3(kb_store *st, kb_variant out[3])
{
	static const char *bodies[] = {"one\n", "two\n", "three\n"};
	static const char *labels[] = {"base", "tiled", "vec"};
	kb_err err = {0};
	for (int i = 0; i < 3; i++) {
		char msg[32];
		snprintf(msg, sizeof msg, "variant %d", i + 1);
		int rc = kb_session_store_commit(st, bodies[i], strlen(bodies[i]), msg,
						 note_for(labels[i], 1.5 * (i + 1)), &out[i], &err);
		T_EQ_INT(rc, 0);
		if (rc)
			printf("    %s\n", err.msg);
	}
}

/* What plain git shows of the session "scripted" in repo. */
static void plain_git_sees(const char *repo, const kb_variant v[3])
{
	char *count = cap("git -C %s rev-list --count refs/kbench/scripted", repo);
	T_EQ_STR(count, "3");
	for (int i = 0; i < 3; i++) {
		char *note = cap("git -C %s notes --ref=kbench show %s", repo, v[i].oid);
		T_CONTAINS(note, i == 0 ? "\"label\":\"base\"" : i == 1 ? "\"tiled\"" : "\"vec\"");
		free(note);
	}
	char *log = cap("git -C %s log --format=%%s refs/kbench/scripted", repo);
	T_EQ_STR(log, "src/k/kern.cu v3: variant 3\nsrc/k/kern.cu v2: variant 2\n"
		      "src/k/kern.cu v1: variant 1");
	char *shown = cap("git -C %s show refs/kbench/scripted:src/k/kern.cu", repo);
	T_EQ_STR(shown, "three");
	char *files = cap("git -C %s ls-tree -r --name-only refs/kbench/scripted", repo);
	T_EQ_STR(files, "src/k/kern.cu");
	char *author = cap("git -C %s log -1 --format=%%an refs/kbench/scripted", repo);
	T_EQ_STR(author, "Test User");
	T_EQ_INT(sh(NULL, "git -C %s fsck --no-progress --no-dangling >/dev/null 2>&1", repo), 0);

	free(author); free(files); free(shown); free(log); free(count);
}

static void test_session__user_repo(void)
{
	char *repo = make_user_repo("user");
	repo_state before, after;
	snapshot(repo, &before);
	T_CONTAINS(before.status, "MM README");
	T_OK(before.index_len > 0);

	kb_session s;
	kb_err err = {0};
	kb_store *st = NULL;
	T_EQ_INT(kb_session_new("scripted", &s, &err), 0);
	char *file = kb_xasprintf("%s/src/k/kern.cu", repo);
	T_EQ_INT(kb_session_store_open(&s, file, &st, &err), 0);
	if (!st)
		return;
	T_EQ_STR(kb_session_store_ref(st), "refs/kbench/scripted");
	char *real = realpath(repo, NULL);
	T_EQ_STR(kb_session_store_repo(st), real);
	kb_variant v[3];
	commit3(st, v);
	T_EQ_STR(v[0].path, "src/k/kern.cu");
	T_EQ_STR(v[0].name, "v1");
	T_EQ_STR(v[2].name, "v3");
	T_EQ_STR(v[1].label, "tiled");

	/* The user's repository is exactly as it was. */
	char *idx = kb_xasprintf("%s/.git/index", repo);
	size_t idx_len;
	char *idx_now = slurp(idx, &idx_len);
	T_EQ_INT(idx_len, before.index_len);
	T_OK(idx_len == before.index_len && !memcmp(idx_now, before.index, idx_len));
	snapshot(repo, &after);
	T_EQ_STR(after.head, before.head);
	T_EQ_STR(after.symref, "refs/heads/main");
	T_EQ_STR(after.status, before.status);
	T_EQ_STR(after.branches, before.branches);
	T_EQ_STR(after.readme, "readme unstaged\n");
	T_EQ_STR(after.kern, "kernel edit\n");

	plain_git_sees(repo, v);
	free(idx_now); free(idx); free(real); free(file);
	for (int i = 0; i < 3; i++)
		kb_session_variant_free(&v[i]);
	kb_session_store_close(st);
	kb_session_free(&s);
	snapshot_free(&before);
	snapshot_free(&after);
	free(repo);
}

/* ===== (2) identical content is not a new variant ===== */

static void test_session__identical(void)
{
	char *repo = make_user_repo("dedupe");
	char *file = kb_xasprintf("%s/src/k/kern.cu", repo);
	kb_session s;
	kb_err err = {0};
	kb_store *st = NULL;
	kb_variant v[3], same, again, next;
	T_EQ_INT(kb_session_new("dedupe", &s, &err), 0);
	T_EQ_INT(kb_session_store_open(&s, file, &st, &err), 0);
	if (!st)
		return;
	commit3(st, v);
	T_EQ_INT(kb_session_store_commit(st, "three\n", 6, "same", NULL, &same, &err), 0);
	T_EQ_STR(same.oid, v[2].oid);
	T_EQ_STR(same.name, "v3");
	T_EQ_STR(same.label, "vec"); /* no note given: the old one stays */
	/* A Result for the tip: the same variant, its message now the Result's
	 * (a commit with the same tree, parent and author replaces it). */
	T_EQ_INT(kb_session_store_commit(st, "three\n", 6, "same", note_for("vec2", 9), &again,
					 &err), 0);
	T_EQ_STR(again.name, "v3");
	T_EQ_STR(again.label, "vec2");
	T_EQ_STR(again.message, "src/k/kern.cu v3: same\n");
	char *note = cap("git -C %s notes --ref=kbench show refs/kbench/dedupe", repo);
	T_CONTAINS(note, "\"vec2\"");
	char *count = cap("git -C %s rev-list --count refs/kbench/dedupe", repo);
	T_EQ_STR(count, "3");
	char *parents = cap("git -C %s rev-parse refs/kbench/dedupe^ %s^", repo, v[2].oid);
	char *p1 = strtok(parents, "\n"), *p2 = strtok(NULL, "\n");
	T_OK(p1 && p2 && !strcmp(p1, p2));
	char *tree = cap("git -C %s rev-parse refs/kbench/dedupe^{tree} %s^{tree}", repo, v[2].oid);
	char *t1 = strtok(tree, "\n"), *t2 = strtok(NULL, "\n");
	T_OK(t1 && t2 && !strcmp(t1, t2));
	T_EQ_INT(kb_session_store_commit(st, "four\n", 5, NULL, NULL, &next, &err), 0);
	T_EQ_STR(next.name, "v4");
	T_OK(next.note == NULL && next.label == NULL);
	T_EQ_STR(next.message, "src/k/kern.cu v4\n");
	free(parents);
	free(tree);

	kb_session_variant_free(&next);
	kb_session_variant_free(&again);
	kb_session_variant_free(&same);
	for (int i = 0; i < 3; i++)
		kb_session_variant_free(&v[i]);
	free(count); free(note);
	kb_session_store_close(st);
	kb_session_free(&s);
	free(file); free(repo);
}


/* ===== (3b) several files in one session ===== */

/* Commits text as the next variant of file in session s; its name. */
static void commit_to(const kb_session *s, const char *file, const char *text, const char *msg,
		      json_t *note, char name[16], char oid[41])
{
	kb_store *st = NULL;
	kb_variant v;
	kb_err err = {0};
	T_EQ_INT(kb_session_store_open(s, file, &st, &err), 0);
	T_EQ_INT(kb_session_store_commit(st, text, strlen(text), msg, note, &v, &err), 0);
	snprintf(name, 16, "%s", v.name);
	snprintf(oid, 41, "%s", v.oid);
	kb_session_variant_free(&v);
	kb_session_store_close(st);
}

/* The names and texts of file's variants: "v1=a1 v2=a2". */
static char *listing(const kb_session *s, const char *file)
{
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	kb_err err = {0};
	int n = 0, counted = -1;
	kb_buf b = KB_BUF_INIT;
	T_EQ_INT(kb_session_store_open(s, file, &st, &err), 0);
	T_EQ_INT(kb_session_store_list(st, &vs, &n, &err), 0);
	T_EQ_INT(kb_session_store_count(st, &counted, &err), 0);
	T_EQ_INT(counted, n);
	for (int i = 0; i < n; i++) {
		char *text = NULL;
		size_t len = 0;
		T_EQ_INT(kb_session_store_text(st, &vs[i], &text, &len, &err), 0);
		kb_buf_catf(&b, "%s%s=%.*s", i ? " " : "", vs[i].name, (int)strcspn(text, "\n"), text);
		free(text);
	}
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
	return b.s ? kb_buf_detach(&b) : kb_xstrdup("");
}

static void several_files(const char *dir, const char *id)
{
	kb_session s;
	kb_err err = {0};
	char name[16], oid[41], a2[41];
	T_EQ_INT(kb_session_new(id, &s, &err), 0);
	char *a = kb_xasprintf("%s/a.cu", dir), *b = kb_xasprintf("%s/b.cu", dir);
	char *c = kb_xasprintf("%s/c.cu", dir);
	commit_to(&s, a, "a1\n", "first a", NULL, name, oid);
	T_EQ_STR(name, "v1");
	commit_to(&s, b, "b1\n", "first b", NULL, name, oid);
	T_EQ_STR(name, "v1");
	commit_to(&s, a, "a2\n", "second a", NULL, name, a2);
	T_EQ_STR(name, "v2");
	commit_to(&s, c, "c1\n", "first c", NULL, name, oid);
	T_EQ_STR(name, "v1");
	/* a's latest text again, after c's commit: a's v2, not a new variant,
	 * and not rewritten (it is no longer the ref's tip) */
	commit_to(&s, a, "a2\n", "again", note_for("a-two", 2), name, oid);
	T_EQ_STR(name, "v2");
	T_EQ_STR(oid, a2);
	commit_to(&s, b, "b2\n", "second b", NULL, name, oid);
	T_EQ_STR(name, "v2");
	char *la = listing(&s, a), *lb = listing(&s, b), *lc = listing(&s, c);
	T_EQ_STR(la, "v1=a1 v2=a2");
	T_EQ_STR(lb, "v1=b1 v2=b2");
	T_EQ_STR(lc, "v1=c1");
	/* a name another file has is not this file's */
	kb_store *st = NULL;
	kb_variant v;
	T_EQ_INT(kb_session_store_open(&s, c, &st, &err), 0);
	T_EQ_INT(kb_session_store_read(st, "v2", &v, NULL, NULL, &err), KB_ENOTFOUND);
	kb_session_store_close(st);
	T_EQ_INT(kb_session_store_open(&s, a, &st, &err), 0);
	T_EQ_INT(kb_session_store_read(st, "a-two", &v, NULL, NULL, &err), 0);
	T_EQ_STR(v.name, "v2");
	kb_session_variant_free(&v);
	kb_session_store_close(st);
	free(la); free(lb); free(lc); free(a); free(b); free(c);
	kb_session_free(&s);
}

static void test_session__files(void)
{
	char *plain = kb_xasprintf("%s/three", root);
	T_EQ_INT(kb_mkdirs(plain, NULL), 0);
	several_files(plain, "files-private");
	char *repo = make_user_repo("three-repo");
	several_files(repo, "files-repo");
	char *log = cap("git -C %s log --format=%%s refs/kbench/files-repo", repo);
	T_EQ_STR(log, "b.cu v2: second b\nc.cu v1: first c\na.cu v2: second a\nb.cu v1: first b\n"
		      "a.cu v1: first a");
	char *status = cap("git -C %s --no-optional-locks status --porcelain", repo);
	T_EQ_STR(status, "MM README\n M src/k/kern.cu\n?? untracked.txt");
	free(status); free(log); free(repo); free(plain);
}

/* ===== (3) a file in no repository ===== */

static void test_session__private_repo(void)
{
	char *plain = kb_xasprintf("%s/plain", root);
	char *file = kb_xasprintf("%s/k.cu", plain);
	T_EQ_INT(kb_mkdirs(plain, NULL), 0);
	T_EQ_INT(kb_file_write(file, "x\n", 2, NULL), 0);
	kb_session s;
	kb_err err = {0};
	kb_store *st = NULL;
	kb_variant a, b, *vs = NULL;
	int n = 0;
	T_EQ_INT(kb_session_new("private1", &s, &err), 0);
	T_EQ_INT(kb_session_store_open(&s, file, &st, &err), 0);
	if (!st)
		return;
	char *expect = kb_xasprintf("%s/repo", s.dir);
	T_EQ_STR(kb_session_store_repo(st), expect);
	T_EQ_INT(kb_session_store_commit(st, "a\n", 2, "a", note_for("a", 1), &a, &err), 0);
	T_EQ_INT(kb_session_store_commit(st, "b\n", 2, "b", NULL, &b, &err), 0);
	char *real = realpath(file, NULL);
	T_EQ_STR(a.path, real + 1); /* its own path: another k.cu is another file */
	free(real);
	kb_session_store_close(st);

	char *count = cap("git --git-dir=%s rev-list --count refs/kbench/private1", expect);
	T_EQ_STR(count, "2");
	char *bare = cap("git --git-dir=%s rev-parse --is-bare-repository", expect);
	T_EQ_STR(bare, "true");
	char *log = cap("git --git-dir=%s log --format=%%s", expect);
	T_EQ_STR(log, "k.cu v2: b\nk.cu v1: a");
	char *note = cap("git --git-dir=%s notes --ref=kbench show %s", expect, a.oid);
	T_CONTAINS(note, "\"label\":\"a\"");
	char *ls = cap("ls -A %s", plain);
	T_EQ_STR(ls, "k.cu");

	/* Reopened, the store still lists both. */
	T_EQ_INT(kb_session_store_open(&s, file, &st, &err), 0);
	T_EQ_INT(kb_session_store_list(st, &vs, &n, &err), 0);
	T_EQ_INT(n, 2);
	if (n == 2) {
		T_EQ_STR(vs[0].oid, a.oid);
		T_EQ_STR(vs[1].name, "v2");
		T_EQ_STR(vs[0].label, "a");
	}
	kb_session_variants_free(vs, n);
	int commits = -1; /* counted from the commits, no note read */
	T_EQ_INT(kb_session_store_count(st, &commits, &err), 0);
	T_EQ_INT(commits, 2);
	kb_session_store_close(st);
	kb_session_variant_free(&a);
	kb_session_variant_free(&b);
	free(ls); free(note); free(log); free(bare); free(count); free(expect);
	kb_session_free(&s);
	free(file); free(plain);
}

/* ===== (4) the journal ===== */

static void raw_append(const kb_session *s, const char *bytes)
{
	char *path = kb_xasprintf("%s/journal.jsonl", s->dir);
	FILE *f = fopen(path, "a");
	T_OK(f != NULL);
	if (f) {
		fputs(bytes, f);
		fclose(f);
	}
	free(path);
}

static long journal_size(const kb_session *s)
{
	char *path = kb_xasprintf("%s/journal.jsonl", s->dir);
	struct stat sb;
	long n = stat(path, &sb) == 0 ? (long)sb.st_size : -1;
	free(path);
	return n;
}

static void test_session__journal(void)
{
	kb_session s;
	kb_err err = {0};
	json_t *ev = NULL;
	long trunc = 0;
	T_EQ_INT(kb_session_new("journal", &s, &err), 0);
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0); /* no file yet */
	T_EQ_INT(json_array_size(ev), 0);
	T_EQ_INT(trunc, -1);
	json_decref(ev);

	T_EQ_INT(kb_session_journal_append(&s, "compile", json_pack("{s:b, s:f}", "ok", 1, "ms", 12.5),
					   &err), 0);
	T_EQ_INT(kb_session_journal_append(&s, "run", json_pack("{s:i}", "i", 1), &err), 0);
	T_EQ_INT(kb_session_journal_append(&s, "note", NULL, &err), 0);
	T_EQ_INT(kb_session_journal_append(&s, "x", json_pack("{s:s, s:i}", "t", "bad", "k", 2),
					   &err), 0);
	T_EQ_INT(kb_session_journal_append(&s, NULL, json_object(), &err), KB_EINVAL);
	T_EQ_INT(kb_session_journal_append(&s, "bad", json_integer(3), &err), KB_EINVAL);
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0);
	T_EQ_INT(json_array_size(ev), 4);
	T_EQ_INT(trunc, -1);
	json_t *e0 = json_array_get(ev, 0);
	T_EQ_STR(json_string_value(json_object_get(e0, "event")), "compile");
	T_OK(json_is_true(json_object_get(e0, "ok")));
	T_NEAR(json_number_value(json_object_get(e0, "ms")), 12.5, 1e-9);
	T_OK(json_is_real(json_object_get(e0, "t")));
	T_NEAR(json_real_value(json_object_get(e0, "t")), (double)time(NULL), 60);
	T_OK(json_is_real(json_object_get(json_array_get(ev, 3), "t"))); /* "t" is not overridden */
	json_decref(ev);

	/* A torn last line is skipped and reported; the next append cuts it off. */
	long torn_at = journal_size(&s);
	raw_append(&s, "{\"t\":1.0,\"event\":\"tor");
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0);
	T_EQ_INT(json_array_size(ev), 4);
	T_EQ_INT(trunc, torn_at);
	json_decref(ev);
	T_EQ_INT(kb_session_journal_append(&s, "after", NULL, &err), 0);
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0);
	T_EQ_INT(json_array_size(ev), 5);
	T_EQ_INT(trunc, -1);
	T_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 4), "event")), "after");
	json_decref(ev);

	/* An invalid complete last line is skipped too; in the middle (damage
	 * from outside) it is an "unreadable" event naming it, and the events
	 * after it are read. */
	long bad_at = journal_size(&s);
	raw_append(&s, "garbage\n");
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0);
	T_EQ_INT(json_array_size(ev), 5);
	T_EQ_INT(trunc, bad_at);
	json_decref(ev);
	T_EQ_INT(kb_session_journal_append(&s, "later", NULL, &err), 0);
	raw_append(&s, "\xff\x01 not json\n");
	T_EQ_INT(kb_session_journal_append(&s, "last", NULL, &err), 0);
	ev = NULL;
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0);
	T_EQ_INT(json_array_size(ev), 9);
	json_t *bad = json_array_get(ev, 5);
	T_EQ_STR(json_string_value(json_object_get(bad, "event")), "unreadable");
	T_EQ_INT(json_integer_value(json_object_get(bad, "line")), 6);
	T_EQ_STR(json_string_value(json_object_get(bad, "text")), "garbage");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 6), "event")), "later");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 7), "text")), "?? not json");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(ev, 8), "event")), "last");
	T_EQ_INT(trunc, -1);
	json_decref(ev);
	kb_session_free(&s);
}

/* The child appends numbered, fat events, reporting each completed one on fd. */
static void journal_child(const kb_session *s, int fd)
{
	enum { PAD = 64 << 10 }; /* fat lines: a kill may land inside write(2) */
	char *pad = kb_xmalloc(PAD + 1);
	memset(pad, 'x', PAD);
	pad[PAD] = '\0';
	for (int i = 0; i < 1000; i++) {
		if (kb_session_journal_append(s, "tick", json_pack("{s:i, s:s}", "i", i, "pad", pad),
					      NULL) < 0)
			_exit(3);
		if (write(fd, &i, sizeof i) != (ssize_t)sizeof i)
			_exit(4);
	}
	for (;;)
		pause();
}

static void test_session__journal_kill9(void)
{
	kb_session s;
	kb_err err = {0};
	int p[2], last = -1, got, status = 0;
	T_EQ_INT(kb_session_new("killed", &s, &err), 0);
	T_EQ_INT(pipe(p), 0);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		journal_child(&s, p[1]);
	}
	close(p[1]);
	while (last < 50 && read(p[0], &got, sizeof got) == (ssize_t)sizeof got)
		last = got;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	while (read(p[0], &got, sizeof got) == (ssize_t)sizeof got)
		last = got; /* completions reported before the kill */
	close(p[0]);
	T_OK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	json_t *ev = NULL;
	long trunc = 0;
	T_EQ_INT(kb_session_journal_read(&s, &ev, &trunc, &err), 0);
	size_t n = json_array_size(ev);
	T_OK(n >= (size_t)last + 1);
	for (size_t i = 0; i < n; i++)
		T_EQ_INT(json_integer_value(json_object_get(json_array_get(ev, i), "i")), (long long)i);
	if (getenv("T_VERBOSE"))
		printf("  kill9: %d reported, %zu read, torn at %ld\n", last + 1, n, trunc);
	json_decref(ev);
	kb_session_free(&s);
}

/* ===== (5) reading variants back ===== */

static void test_session__read(void)
{
	char *repo = make_user_repo("r5");
	char *file = kb_xasprintf("%s/src/k/kern.cu", repo);
	kb_session s;
	kb_err err = {0};
	kb_store *st = NULL;
	kb_variant v[3], r;
	char *text = NULL;
	size_t len = 0;
	T_EQ_INT(kb_session_new("reading", &s, &err), 0);
	T_EQ_INT(kb_session_store_open(&s, file, &st, &err), 0);
	if (!st)
		return;
	commit3(st, v);
	T_EQ_INT(kb_session_store_read(st, "v2", &r, &text, &len, &err), 0);
	T_EQ_STR(text, "two\n");
	T_EQ_INT(len, 4);
	T_EQ_STR(r.name, "v2");
	T_EQ_STR(r.oid, v[1].oid);
	kb_session_variant_free(&r);
	free(text);

	T_EQ_INT(kb_session_store_read(st, "vec", &r, &text, NULL, &err), 0);
	T_EQ_STR(r.name, "v3");
	T_EQ_STR(text, "three\n");
	kb_session_variant_free(&r);
	free(text);

	char prefix[8];
	snprintf(prefix, sizeof prefix, "%.7s", v[0].oid);
	T_EQ_INT(kb_session_store_read(st, prefix, NULL, &text, NULL, &err), 0);
	T_EQ_STR(text, "one\n");
	free(text);
	T_EQ_INT(kb_session_store_read(st, v[2].oid, &r, NULL, NULL, &err), 0);
	T_EQ_STR(r.name, "v3");
	kb_session_variant_free(&r);

	T_EQ_INT(kb_session_store_read(st, "v9", NULL, &text, NULL, &err), KB_ENOTFOUND);
	T_OK(text == NULL);
	T_EQ_INT(kb_session_store_read(st, "nolabel", NULL, &text, NULL, &err), KB_ENOTFOUND);
	T_EQ_INT(kb_session_store_read(st, "abc", NULL, &text, NULL, &err), KB_ENOTFOUND);

	T_EQ_INT(kb_session_store_set_note(st, "v1", note_for("first", 0.5), &err), 0);
	T_EQ_INT(kb_session_store_read(st, "first", &r, NULL, NULL, &err), 0);
	T_EQ_STR(r.name, "v1");
	T_NEAR(json_number_value(json_object_get(r.note, "time_ms")), 0.5, 1e-12);
	kb_session_variant_free(&r);
	T_EQ_INT(kb_session_store_read(st, "base", &r, NULL, NULL, &err), KB_ENOTFOUND);
	T_EQ_INT(kb_session_store_set_note(st, "v7", note_for("x", 1), &err), KB_ENOTFOUND);

	for (int i = 0; i < 3; i++)
		kb_session_variant_free(&v[i]);
	kb_session_store_close(st);
	kb_session_free(&s);
	free(file); free(repo);
}

/* ===== (6) naming, switching and listing sessions ===== */

/* Points XDG_DATA_HOME at <root>/<sub>; returns the previous value. */
static char *use_data(const char *sub)
{
	char *old = kb_xstrdup(getenv("XDG_DATA_HOME"));
	char *data = kb_xasprintf("%s/%s", root, sub);
	setenv("XDG_DATA_HOME", data, 1);
	free(data);
	return old;
}

static void restore_data(char *old)
{
	setenv("XDG_DATA_HOME", old, 1);
	free(old);
}

static bool is_time_id(const char *id)
{
	return strlen(id) == 20 && id[8] == '-' && id[15] == '-' &&
	       strspn(id, "0123456789") == 8 && strspn(id + 16, "0123456789abcdef") == 4;
}

static void test_session__current(void)
{
	char *old = use_data("data-current");
	kb_session s, t;
	kb_err err = {0};
	char **ids = NULL;
	int n = -1;
	char id[96] = "";
	T_EQ_INT(kb_session_list(&ids, &n, &err), 0);
	T_EQ_INT(n, 0);
	free(ids);
	T_EQ_INT(kb_session_current_id(id), KB_ENOTFOUND);
	T_EQ_INT(kb_session_current(&s, &err), 0); /* none yet: one is started */
	T_OK(is_time_id(s.id));
	T_EQ_INT(kb_session_current_id(id), 0);
	T_EQ_STR(id, s.id);
	T_OK(kb_file_exists(s.dir));
	T_EQ_INT(kb_session_current(&t, &err), 0);
	T_EQ_STR(t.id, s.id);
	kb_session_free(&t);

	/* A `current` naming a vanished session starts a new one. */
	char *cur = kb_xasprintf("%s/kbench/current", getenv("XDG_DATA_HOME"));
	T_EQ_INT(kb_file_write(cur, "gone\n", 5, NULL), 0);
	T_EQ_INT(kb_session_current_id(id), KB_ENOTFOUND);
	T_EQ_INT(kb_session_current(&t, &err), 0);
	T_OK(is_time_id(t.id) && strcmp(t.id, s.id) != 0);
	kb_session_free(&t);
	kb_session_free(&s);
	free(cur);
	restore_data(old);
}

static void test_session__names(void)
{
	static const char *bad[] = {"", "a/b", "x y", "..", ".hidden", "x.lock", "tail.", "a..b",
				    "\xc3\xbc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
	char *old = use_data("data-names");
	kb_session s;
	kb_err err = {0};
	for (size_t i = 0; i < KB_ARRAY_LEN(bad); i++)
		T_EQ_INT(kb_session_new(bad[i], &s, &err), KB_EINVAL);
	T_EQ_INT(kb_session_new("alpha", &s, &err), 0);
	kb_session_free(&s);
	T_EQ_INT(kb_session_new("alpha", &s, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "exists");
	T_EQ_INT(kb_session_current(&s, &err), 0);
	T_EQ_STR(s.id, "alpha");
	kb_session_free(&s);
	T_EQ_INT(kb_session_new("b-2.x_y", &s, &err), 0);
	kb_session_free(&s);

	T_EQ_INT(kb_session_open("alpha", &s, &err), 0);
	T_EQ_STR(s.id, "alpha");
	char *dir = kb_xstrdup(s.dir);
	kb_session_free(&s);
	T_EQ_INT(kb_session_open("sessions/alpha", &s, &err), 0);
	T_EQ_STR(s.dir, dir);
	kb_session_free(&s);
	T_EQ_INT(kb_session_open(dir, &s, &err), 0);
	T_EQ_STR(s.id, "alpha");
	kb_session_free(&s);
	T_EQ_INT(kb_session_open("nope", &s, &err), KB_ENOTFOUND);
	T_EQ_INT(kb_session_current(&s, &err), 0); /* open does not switch */
	T_EQ_STR(s.id, "b-2.x_y");
	kb_session_free(&s);
	free(dir);
	restore_data(old);
}

static void test_session__list(void)
{
	char *old = use_data("data-list");
	kb_session s;
	kb_err err = {0};
	char **ids = NULL;
	int n = -1;
	T_EQ_INT(kb_session_new("one", &s, &err), 0);
	kb_session_free(&s);
	T_EQ_INT(kb_session_new("two", &s, &err), 0);
	kb_session_free(&s);
	T_EQ_INT(kb_session_new(NULL, &s, &err), 0);
	T_EQ_INT(kb_session_list(&ids, &n, &err), 0);
	T_EQ_INT(n, 3);
	if (n == 3) {
		T_EQ_STR(ids[0], s.id);
		T_EQ_STR(ids[1], "two");
		T_EQ_STR(ids[2], "one");
	}
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	kb_session_free(&s);
	restore_data(old);
}

/* An export's manifest is untrusted: members missing or of another type
 * are errors, not crashes (found by tests/fuzz/fuzz_export.c). */
static void test_session__import_bad_manifest(void)
{
	char *old = use_data("data-import-bad");
	const char *manifests[] = {
		/* a file without "path", a variant without "name" */
		"{\"format\":\"kbench-session/1\",\"id\":\"bad1\",\"files\":[{\"variants\":[]},"
		"{\"path\":\"k.cu\",\"variants\":[{\"source\":\"v1.cu\"}]}],\"order\":[[\"k.cu\",\"v1\"]]}",
		/* a variant without "source" */
		"{\"format\":\"kbench-session/1\",\"id\":\"bad2\",\"files\":[{\"path\":\"k.cu\","
		"\"variants\":[{\"name\":\"v1\"}]}],\"order\":[[\"k.cu\",\"v1\"]]}",
		/* no "id" and no name given */
		"{\"format\":\"kbench-session/1\",\"files\":[]}",
	};
	char *dir = kb_xasprintf("%s/bad-export", root);
	char *man = kb_xasprintf("%s/manifest.json", dir);
	mkdir(dir, 0700);
	for (size_t i = 0; i < KB_ARRAY_LEN(manifests); i++) {
		kb_session s;
		kb_err err = {0};
		T_EQ_INT(kb_file_write(man, manifests[i], strlen(manifests[i]), NULL), 0);
		T_EQ_INT(kb_session_import(dir, NULL, &s, &err), KB_EINVAL);
	}
	free(man);
	free(dir);
	restore_data(old);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	char *data = kb_xasprintf("%s/data", root);
	char *cfg = kb_xasprintf("%s/.gitconfig", root);
	const char *gitcfg = "[user]\n\tname = Test User\n\temail = test@example.com\n"
			     "[init]\n\tdefaultBranch = main\n";
	kb_file_write(cfg, gitcfg, strlen(gitcfg), NULL);
	setenv("HOME", root, 1); /* before libgit2 reads its global config path */
	setenv("XDG_CONFIG_HOME", root, 1);
	setenv("XDG_DATA_HOME", data, 1);
	setenv("GIT_CEILING_DIRECTORIES", root, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);

	T_RUN(test_session__user_repo);
	T_RUN(test_session__identical);
	T_RUN(test_session__private_repo);
	T_RUN(test_session__files);
	T_RUN(test_session__journal);
	T_RUN(test_session__journal_kill9);
	T_RUN(test_session__read);
	T_RUN(test_session__current);
	T_RUN(test_session__names);
	T_RUN(test_session__list);
	T_RUN(test_session__import_bad_manifest);

	git_libgit2_shutdown();
	if (!getenv("T_KEEP"))
		sh(NULL, "rm -rf %s", root);
	else
		printf("  kept %s\n", root);
	free(cfg);
	free(data);
	return t_report();
}
