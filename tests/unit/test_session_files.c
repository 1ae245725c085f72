/*
 * test_session_files.c - a file of a session is its real path (issue 25):
 * two files named k.cu in two folders are two histories, shown as a/k.cu
 * and b/k.cu; what a user types finds the file in the current directory
 * first, and a name that fits both is refused, naming them (KB_EAMBIG);
 * a session recorded before (no "file_keys" in meta.json: both files on
 * the path k.cu of its private repository) still reads each file apart,
 * by the commits its journal records for each.
 */
#include "../../src/session/session.h"
#include "t.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[] = "/tmp/kbench-session-files-XXXXXX";

/* Records text as the next variant of the file at path, as `kbench
 * compile` does: the session's name for it, the commit, the journal line. */
static void record(const kb_session *s, const char *path, const char *text, kb_variant *v)
{
	kb_err err = {0};
	kb_store *st = NULL;
	T_EQ_INT(kb_file_write(path, text, strlen(text), NULL), 0);
	char *name = kb_session_file_name(s, path);
	T_EQ_INT(kb_session_store_open(s, name, &st, &err), 0);
	if (st)
		T_EQ_INT(kb_session_store_commit(st, text, strlen(text), "compiled", NULL, v, &err), 0);
	kb_session_journal_append(s, "compile", json_pack("{s:s, s:s, s:s}", "file", name, "variant",
							  v->name, "commit", v->oid), NULL);
	kb_session_store_close(st);
	free(name);
}

/* The texts of every variant of the file `typed` names, joined by '|'. */
static char *history(const kb_session *s, const char *typed)
{
	kb_err err = {0};
	kb_store *st = NULL;
	kb_variant *vs = NULL;
	char *name = NULL;
	int n = 0;
	kb_buf b = KB_BUF_INIT;
	if (kb_session_file_find(s, typed, &name, &err) == 0 &&
	    kb_session_store_open(s, name, &st, &err) == 0 &&
	    kb_session_store_list(st, &vs, &n, &err) == 0)
		for (int i = 0; i < n; i++) {
			char *text = NULL;
			size_t len = 0;
			if (kb_session_store_text(st, &vs[i], &text, &len, &err) == 0)
				kb_buf_catf(&b, "%s%.*s", i ? "|" : "", (int)strcspn(text, "\n"), text);
			free(text);
		}
	kb_session_variants_free(vs, n);
	kb_session_store_close(st);
	free(name);
	return b.s ? kb_buf_detach(&b) : kb_xstrdup(err.msg);
}

/* Two folders, each with its k.cu, in session id (a legacy one: meta.json
 * without "file_keys"); checks each file's history from each place. */
static void two_folders(const char *id, bool legacy)
{
	char *a = kb_xasprintf("%s/%s/a/k.cu", root, id), *b = kb_xasprintf("%s/%s/b/k.cu", root, id);
	char *dir = kb_xasprintf("%s/%s", root, id);
	kb_session s;
	kb_err err = {0};
	kb_variant v;
	char *da = kb_xasprintf("%s/a", dir), *db = kb_xasprintf("%s/b", dir);
	T_EQ_INT(kb_mkdirs(da, NULL), 0);
	T_EQ_INT(kb_mkdirs(db, NULL), 0);
	free(da), free(db);
	T_EQ_INT(kb_session_new(id, &s, &err), 0);
	if (legacy) {
		char *meta = kb_xasprintf("%s/meta.json", s.dir);
		const char *old = "{\"id\": \"legacy\", \"created\": 1}\n";
		T_EQ_INT(kb_file_write(meta, old, strlen(old), NULL), 0);
		free(meta);
	}
	T_EQ_INT(chdir(dir), 0);
	record(&s, "a/k.cu", "a1\n", &v), kb_session_variant_free(&v);
	T_EQ_INT(chdir("b"), 0);
	record(&s, "k.cu", "b1\n", &v), kb_session_variant_free(&v);
	T_EQ_INT(chdir("../a"), 0);
	record(&s, "k.cu", "a2\n", &v);
	T_EQ_STR(v.name, "v2"); /* a's second: b's text is no variant of a */
	kb_session_variant_free(&v);

	char *h = history(&s, "k.cu");
	T_EQ_STR(h, "a1|a2");
	free(h);
	T_EQ_INT(chdir(".."), 0);
	h = history(&s, "b/k.cu");
	T_EQ_STR(h, "b1");
	free(h);
	h = history(&s, b);
	T_EQ_STR(h, "b1");
	free(h);
	char *name = NULL;
	T_EQ_INT(kb_session_file_find(&s, "k.cu", &name, &err), KB_EAMBIG);
	T_CONTAINS(err.msg, "a/k.cu, b/k.cu");
	T_EQ_INT(kb_session_file_find(&s, "zz.cu", &name, &err), KB_ENOTFOUND);
	T_CONTAINS(err.msg, "zz.cu is not a file of session");

	char **files = NULL;
	int n = kb_session_files(&s, &files, &err);
	T_EQ_INT(n, 2);
	char **shown = n == 2 ? kb_session_files_shown(&s, files, n) : NULL;
	if (shown) {
		T_EQ_STR(shown[0], "a/k.cu");
		T_EQ_STR(shown[1], "b/k.cu");
	}
	for (int i = 0; i < n; i++) {
		free(files[i]);
		if (shown)
			free(shown[i]);
	}
	free(files);
	free(shown);
	kb_session_free(&s);
	T_EQ_INT(chdir(root), 0);
	free(a), free(b), free(dir);
}

static void test_session_files__two_folders(void)
{
	two_folders("apart", false);
	char *tree = NULL;
	kb_buf out = KB_BUF_INIT;
	char *cmd = kb_xasprintf("git --git-dir=%s/data/kbench/sessions/apart/repo ls-tree -r "
				 "--name-only refs/kbench/apart | sed 's|.*/apart/||'", root);
	char *argv[] = {"sh", "-c", cmd, NULL};
	kb_spawn_capture(argv, &out, NULL, NULL);
	tree = out.s ? out.s : "";
	T_EQ_STR(tree, "a/k.cu\nb/k.cu\n"); /* two paths in the private repository */
	kb_buf_free(&out);
	free(cmd);
}

static void test_session_files__legacy_shared_path(void)
{
	two_folders("legacy", true);
}

int main(void)
{
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	char *data = kb_xasprintf("%s/data", root);
	setenv("HOME", root, 1);
	setenv("XDG_DATA_HOME", data, 1);
	setenv("GIT_CEILING_DIRECTORIES", root, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	T_RUN(test_session_files__two_folders);
	T_RUN(test_session_files__legacy_shared_path);
	git_libgit2_shutdown();
	char *rm = kb_xasprintf("rm -rf %s", root);
	if (!getenv("T_KEEP") && system(rm) != 0)
		printf("  could not remove %s\n", root);
	free(rm);
	free(data);
	return t_report();
}
