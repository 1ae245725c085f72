/*
 * test_app.c - the end of `kbench optimize` without a GPU or a model:
 * kb_app__optimize_finish given what the rounds found, writing the best
 * variant back to a file that takes it, and to one that cannot (its path is
 * a directory: even root cannot replace one with a file).  The write-back's
 * error must reach the caller (the exit status) and say where the best
 * variant is: the session's variant, or a copy where nothing is recorded.
 */
#include "t.h"

#include "../../src/app/app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kbench-test-app.XXXXXX";

static kb_app__best found(const char *path, const char *name)
{
	return (kb_app__best){.path = path, .orig = "__global__ void k() {}\n",
			      .best = "__global__ void k() { /* faster */ }\n", .best_name = name,
			      .orig_us = 10.0, .best_us = 7.5};
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A file that takes the write: "written to", and it holds the best. */
static void test_app__write_back(void)
{
	char *path = kb_xasprintf("%s/ok.cu", dir);
	kb_app__best b = found(path, "v3");
	kb_buf out = KB_BUF_INIT, text = KB_BUF_INIT;
	kb_err err = {0};
	T_EQ_INT(kb_app__optimize_finish(&b, &out, &err), 0);
	T_CONTAINS(out.s, "best: v3 CORRECT 7.50 us (-25.0% vs the original 10.00 us)");
	T_CONTAINS(out.s, "written to");
	T_EQ_INT(kb_file_read(path, &text, &err), 0);
	T_EQ_STR(text.s, b.best);
	kb_buf_free(&out), kb_buf_free(&text);
	free(path);
}

/* The file cannot be written: an error (non-zero exit) naming the file
 * and the session's variant that holds the best, nothing said written. */
static void test_app__write_back_fails(void)
{
	char *path = kb_xasprintf("%s/dir.cu", dir);
	T_EQ_INT(mkdir(path, 0755), 0);
	kb_app__best b = found(path, "v3");
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	T_OK(kb_app__optimize_finish(&b, &out, &err) < 0);
	T_CONTAINS(out.s, "best: v3 CORRECT");
	T_OK(!strstr(out.s, "written to"));
	T_CONTAINS(err.msg, path);
	T_CONTAINS(err.msg, "`kbench checkout v3` writes it");
	T_OK(is_dir(path));
	kb_buf_free(&out);
	free(path);
}

/* Nothing recorded (KBENCH_NO_SESSION): no variant to name, so the best
 * is kept in a copy, and the error says where. */
static void test_app__write_back_fails_unrecorded(void)
{
	char *path = kb_xasprintf("%s/norec.cu", dir);
	T_EQ_INT(mkdir(path, 0755), 0);
	kb_app__best b = found(path, "");
	kb_buf out = KB_BUF_INIT, text = KB_BUF_INIT;
	kb_err err = {0};
	T_OK(kb_app__optimize_finish(&b, &out, &err) < 0);
	T_OK(!strstr(out.s, "written to"));
	T_CONTAINS(err.msg, path);
	T_OK(!strstr(err.msg, "checkout"));
	const char *at = strstr(err.msg, "kept in ");
	T_OK(at != NULL);
	if (at) {
		char *copy = kb_xstrdup(at + strlen("kept in "));
		T_OK(kb_path_within(copy, dir));
		T_EQ_STR(kb_extension(copy), "cu");
		T_EQ_INT(kb_file_read(copy, &text, &err), 0);
		T_EQ_STR(text.s, b.best);
		unlink(copy);
		free(copy);
	}
	kb_buf_free(&out), kb_buf_free(&text);
	free(path);
}

/* --no-write, and a best that is the original: the file is not touched. */
static void test_app__no_write(void)
{
	char *path = kb_xasprintf("%s/dir2.cu", dir);
	T_EQ_INT(mkdir(path, 0755), 0);
	kb_app__best b = found(path, "v2");
	b.no_write = true;
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	T_EQ_INT(kb_app__optimize_finish(&b, &out, &err), 0);
	T_CONTAINS(out.s, "the file is unchanged (--no-write): `kbench checkout v2` writes it");
	kb_buf_reset(&out);
	b = found(path, "v1");
	b.best = b.orig;
	T_EQ_INT(kb_app__optimize_finish(&b, &out, &err), 0);
	T_CONTAINS(out.s, "best: the original");
	kb_buf_free(&out);
	free(path);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	setenv("TMPDIR", dir, 1); /* where an unrecorded best's copy goes */
	T_RUN(test_app__write_back);
	T_RUN(test_app__write_back_fails);
	T_RUN(test_app__write_back_fails_unrecorded);
	T_RUN(test_app__no_write);
	char *rm = kb_xasprintf("rm -rf '%s'", dir);
	if (system(rm) != 0)
		printf("could not remove %s\n", dir);
	free(rm);
	return t_report();
}
