/* test_core.c - kb_buf, diagnostics rendering, SHA-256, files and paths. */
#include "../../src/core/kb.h"
#include "t.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_core__buf(void)
{
	kb_buf b = KB_BUF_INIT;
	kb_buf_cat(&b, "ab");
	kb_buf_catf(&b, "%d-%s", 42, "x");
	kb_buf_catc(&b, '!');
	T_EQ_STR(b.s, "ab42-x!");
	T_EQ_INT(b.len, 7);
	for (int i = 0; i < 1000; i++)
		kb_buf_cat(&b, "0123456789");
	T_EQ_INT(b.len, 10007);
	T_EQ_INT(b.s[b.len], 0);
	char *s = kb_buf_detach(&b);
	T_OK(b.s == NULL && b.len == 0);
	free(s);
}

static void test_core__diag_render(void)
{
	const char *src = "first\n//! in x : f31[M]\nthird\n";
	kb_diags d = {0};
	kb_diag_add(&d, KB_DIAG_ERROR, "k.cu", src, 2, 12, 3, "unknown dtype '%s'", "f31");
	kb_buf out = KB_BUF_INIT;
	kb_diag_render(&d, &out, false);
	T_EQ_STR(out.s, "k.cu:2:12: error: unknown dtype 'f31'\n"
			" 2 | //! in x : f31[M]\n"
			"   |            ^~~\n");
	T_EQ_INT(kb_diag_count(&d, KB_DIAG_ERROR), 1);
	kb_buf_free(&out);
	kb_diags_free(&d);
}

static void test_core__diag_sort(void)
{
	kb_diags d = {0};
	kb_diag_add(&d, KB_DIAG_ERROR, "a", NULL, 9, 1, 1, "late");
	kb_diag_add(&d, KB_DIAG_ERROR, "a", NULL, 2, 5, 1, "early");
	kb_diag_add(&d, KB_DIAG_ERROR, "a", NULL, 2, 1, 1, "earliest");
	kb_diag_sort(&d);
	T_EQ_STR(d.v[0].msg, "earliest");
	T_EQ_STR(d.v[1].msg, "early");
	T_EQ_STR(d.v[2].msg, "late");
	kb_diags_free(&d);
}

static void test_core__src_line(void)
{
	char *l = kb_src_line("a\r\nbb\nccc", 2);
	T_EQ_STR(l, "bb");
	free(l);
	l = kb_src_line("a\nb", 3);
	T_OK(l == NULL);
}

static void test_core__sha256(void)
{
	/* FIPS 180-2 test vector. */
	kb_hasher *h = kb_hash_new();
	kb_hash_update(h, "abc", 3);
	char hex[KB_HASH_HEX];
	kb_hash_final(h, hex);
	T_EQ_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	/* Length-prefixed strings keep field boundaries apart. */
	char a[KB_HASH_HEX], b[KB_HASH_HEX];
	h = kb_hash_new(); kb_hash_str(h, "ab"); kb_hash_str(h, "c"); kb_hash_final(h, a);
	h = kb_hash_new(); kb_hash_str(h, "a"); kb_hash_str(h, "bc"); kb_hash_final(h, b);
	T_OK(strcmp(a, b) != 0);
}

static void test_core__files(void)
{
	char dir[] = "/tmp/kbench-test-XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	char *sub = kb_xasprintf("%s/a/b/c", dir);
	kb_err err = {0};
	T_EQ_INT(kb_mkdirs(sub, &err), 0);
	char *f = kb_xasprintf("%s/file", sub);
	T_EQ_INT(kb_file_write(f, "hello", 5, &err), 0);
	kb_buf b = KB_BUF_INIT;
	T_EQ_INT(kb_file_read(f, &b, &err), 0);
	T_EQ_STR(b.s, "hello");
	kb_buf_free(&b);
	T_EQ_INT(kb_file_read("/nonexistent/x", &b, &err), KB_ENOTFOUND);
	T_CONTAINS(err.msg, "/nonexistent/x");
	T_EQ_STR(kb_extension("a/b.c/k.cu"), "cu");
	T_EQ_STR(kb_basename("a/b.c/k.cu"), "k.cu");
	char *rm = kb_xasprintf("rm -rf %s", dir);
	T_EQ_INT(system(rm), 0);
	free(rm); free(f); free(sub);
}

/* A write keeps what the user's file was: its permissions, and a link
 * stays a link with its target rewritten (the TUI's save, checkout). */
static void test_core__file_write_keeps(void)
{
	char dir[] = "/tmp/kbench-test-XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	char *real = kb_xasprintf("%s/real.cu", dir), *link = kb_xasprintf("%s/link.cu", dir);
	kb_err err = {0};
	T_EQ_INT(kb_file_write(real, "one", 3, &err), 0);
	T_EQ_INT(chmod(real, 0600), 0);
	T_EQ_INT(symlink(real, link), 0);
	T_EQ_INT(kb_file_write(link, "two", 3, &err), 0);
	struct stat st;
	T_OK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	kb_buf b = KB_BUF_INIT;
	T_EQ_INT(kb_file_read(real, &b, &err), 0);
	T_EQ_STR(b.s, "two");
	T_OK(stat(real, &st) == 0);
	T_EQ_INT(st.st_mode & 0777, 0600);
	kb_buf_free(&b);
	char *rm = kb_xasprintf("rm -rf %s", dir);
	T_EQ_INT(system(rm), 0);
	free(rm); free(real); free(link);
}

static void test_core__cache_dir(void)
{
	setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
	char *d = kb_cache_dir("compile");
	T_EQ_STR(d, "/tmp/xdg/kbench/compile");
	free(d);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	d = kb_cache_dir(NULL);
	T_EQ_STR(d, "/home/u/.cache/kbench");
	free(d);
}

static void test_core__spawn(void)
{
	kb_buf out = KB_BUF_INIT, errb = KB_BUF_INIT;
	kb_err err = {0};
	char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	T_EQ_INT(kb_spawn_capture(argv, &out, &errb, &err), 3);
	T_EQ_STR(out.s, "out\n");
	T_EQ_STR(errb.s, "err\n");
	kb_buf_free(&out);
	kb_buf_free(&errb);
	char *w = kb_which("sh");
	T_OK(w != NULL);
	free(w);
	T_OK(kb_which("no-such-program-kbench") == NULL);
}

/* Paths resolved for file() (spec/spec_tensor.c): symbolic links of what
 * exists, "." and ".." of what does not; "within" by whole components. */
static void test_core__paths(void)
{
	char dir[] = "/tmp/kbench-test-XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	char *k = kb_xasprintf("%s/k", dir), *out = kb_xasprintf("%s/out", dir);
	char *link = kb_xasprintf("%s/k/link", dir), *via = kb_xasprintf("%s/k/link/a.npy", dir);
	char *want = kb_xasprintf("%s/out/a.npy", dir);
	T_OK(mkdir(k, 0700) == 0 && mkdir(out, 0700) == 0 && symlink("../out", link) == 0);
	char *r = kb_path_resolve(via); /* a.npy is not there: its folder resolved */
	T_EQ_STR(r, want);
	free(r);
	T_OK(!kb_path_within(via, k));
	T_OK(kb_path_within(via, out));
	r = kb_path_resolve("/no/such/a/../b/./c//d");
	T_EQ_STR(r, "/no/such/b/c/d");
	free(r);
	r = kb_path_resolve("/no/such/../../..");
	T_EQ_STR(r, "/");
	free(r);
	T_OK(kb_path_within("/no/a/b", "/no/a"));
	T_OK(kb_path_within("/no/a", "/no/a/"));
	T_OK(!kb_path_within("/no/ab", "/no/a"));
	T_OK(!kb_path_within("/no/a/../b", "/no/a"));
	T_OK(kb_path_within("/etc/passwd", "/"));
	char *rm = kb_xasprintf("rm -rf %s", dir);
	T_EQ_INT(system(rm), 0);
	free(rm), free(want), free(via), free(link), free(out), free(k);
}

/* This program's own file and folder (kb_self_exe, kb_self_dir): what the
 * TUI starts `kbench serve` from and `remote setup` finds its bundle by. */
static void test_core__self(void)
{
	char *exe = kb_self_exe(), *dir = kb_self_dir();
	T_OK(exe && exe[0] == '/' && kb_file_exists(exe));
	T_EQ_STR(kb_basename(exe), "test_core");
	T_OK(dir && strlen(dir) < strlen(exe) && dir[strlen(dir) ? strlen(dir) - 1 : 0] != '/');
	char *joined = kb_xasprintf("%s/test_core", dir ? dir : "?");
	T_EQ_STR(joined, exe);
	free(joined), free(dir), free(exe);
}

/* Every verdict's word reads back as it, and a Result's status and
 * verdict members (the journal's text, old sessions' included) as the
 * verdict kbench printed for them. */
static void test_core__verdicts(void)
{
	for (int v = KB_VERDICT_NONE + 1; v <= KB_VERDICT_BAD_NOTE; v++) {
		T_OK(kb_verdict_name((kb_verdict)v)[0]);
		T_EQ_INT(kb_verdict_parse(kb_verdict_name((kb_verdict)v)), v);
	}
	T_EQ_INT(kb_verdict_parse(NULL), KB_VERDICT_NONE);
	T_EQ_INT(kb_verdict_parse("compiled"), KB_VERDICT_NONE);
	T_EQ_STR(kb_verdict_name(KB_VERDICT_NONE), "");
	T_EQ_INT(kb_verdict_of("ok", "CORRECT"), KB_VERDICT_CORRECT);
	T_EQ_INT(kb_verdict_of("ok", "INCORRECT"), KB_VERDICT_INCORRECT);
	T_EQ_INT(kb_verdict_of("ok", "IMPOSSIBLE"), KB_VERDICT_IMPOSSIBLE);
	T_EQ_INT(kb_verdict_of("ok", NULL), KB_VERDICT_ERROR);
	T_EQ_INT(kb_verdict_of("ok", "COMPILED"), KB_VERDICT_ERROR);
	T_EQ_INT(kb_verdict_of(NULL, NULL), KB_VERDICT_ERROR);
	T_EQ_INT(kb_verdict_of("fault", NULL), KB_VERDICT_FAULT);
	T_EQ_INT(kb_verdict_of("no_gpu", "CORRECT"), KB_VERDICT_NO_GPU);
	T_EQ_INT(kb_verdict_of("protocol_error", NULL), KB_VERDICT_RUNNER_ERROR);
	T_EQ_INT(kb_verdict_of("python_refused", NULL), KB_VERDICT_REFUSED);
	T_EQ_STR(kb_verdict_name(kb_verdict_of("spec_error", NULL)), "SPEC ERROR");
	T_EQ_STR(kb_verdict_name(kb_verdict_of("unsupported", NULL)), "UNSUPPORTED");
}

/* One edit distance for every "did you mean" (spec, tile, counters). */
static void test_core__edit_distance(void)
{
	T_EQ_INT(kb_edit_distance("kitten", 6, "sitting", 7), 3);
	T_EQ_INT(kb_edit_distance("", 0, "abc", 3), 3);
	T_EQ_INT(kb_edit_distance("launch", 6, "launch", 6), 0);
	T_EQ_INT(kb_edit_distance("lauch", 5, "launch", 6), 1);
	T_EQ_INT(kb_edit_distance("dram__bytes.sum", 11, "dram__byte", 10), 1); /* a prefix */
	char long_word[KB_EDIT_MAX + 2];
	memset(long_word, 'a', sizeof long_word - 1);
	long_word[sizeof long_word - 1] = 0;
	T_EQ_INT(kb_edit_distance(long_word, strlen(long_word), "a", 1), INT_MAX);
}

/* Freed big blocks are kept for reuse within a byte budget, the oldest
 * going first; one larger than the budget is not kept; a kept block serves
 * the next request of its size. */
static void test_core__big_keep_budget(void)
{
	size_t mb = (size_t)1 << 20, budget = 20 * mb;
	kb_big_kept(&budget); /* now 20 MiB; budget holds the default */
	T_OK(budget > 0 && budget <= ((size_t)8 << 30));
	size_t base = kb_big_kept(NULL);
	void *a = kb_big_alloc(8 * mb), *b = kb_big_alloc(9 * mb), *c = kb_big_alloc(10 * mb);
	kb_big_free(a);
	kb_big_free(b);
	T_EQ_INT((int)((kb_big_kept(NULL) - base) / mb), 17);
	kb_big_free(c); /* 27 MiB: the oldest (8 MiB) goes */
	T_OK(kb_big_kept(NULL) <= 20 * mb);
	T_EQ_INT((int)((kb_big_kept(NULL) - base) / mb), 19);
	void *d = kb_big_alloc(10 * mb); /* c's block again */
	T_OK(d == c);
	void *e = kb_big_alloc(32 * mb);
	size_t before = kb_big_kept(NULL);
	kb_big_free(e); /* over the budget: freed, not kept */
	T_EQ_INT((int)(kb_big_kept(NULL) / mb), (int)(before / mb));
	kb_big_free(d);
	kb_big_kept(&budget); /* the default back */
}

int main(void)
{
	T_RUN(test_core__buf);
	T_RUN(test_core__diag_render);
	T_RUN(test_core__diag_sort);
	T_RUN(test_core__src_line);
	T_RUN(test_core__sha256);
	T_RUN(test_core__files);
	T_RUN(test_core__file_write_keeps);
	T_RUN(test_core__paths);
	T_RUN(test_core__self);
	T_RUN(test_core__cache_dir);
	T_RUN(test_core__spawn);
	T_RUN(test_core__verdicts);
	T_RUN(test_core__edit_distance);
	T_RUN(test_core__big_keep_budget);
	return t_report();
}
