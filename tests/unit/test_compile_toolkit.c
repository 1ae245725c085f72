/* test_compile_toolkit.c - where kbench finds the CUDA toolkit's libraries
 * (src/compile/toolkit.c): $CUDA_HOME before the built-against toolkit,
 * a library's file and identity named without loading it, the message that
 * says where it looked, and a library that lacks an entry point.  The
 * "libraries" are links to libm and libc, which every process has loaded,
 * so nothing new is mapped; NVRTC itself is the CLI tests' (a cache hit
 * never loads it, tests/cli/compile.sh). */
#define _GNU_SOURCE /* dladdr */
#include "../../src/compile/compile_int.h"
#include "t.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static int resolved;
static char resolved_path[4096];

/* The real path of the loaded library that defines sym (a new string). */
static char *lib_of(void *sym)
{
	Dl_info info;
	if (!dladdr(sym, &info) || !info.dli_fname)
		return NULL;
	return realpath(info.dli_fname, NULL);
}

static const char *resolve_cos(void *h, const char *path)
{
	resolved++;
	snprintf(resolved_path, sizeof resolved_path, "%s", path);
	return dlsym(h, "cos") ? NULL : "cos";
}

static const char *resolve_missing(void *h, const char *path)
{
	(void)path;
	return dlsym(h, "kb_no_such_entry_point") ? NULL : "kb_no_such_entry_point";
}

static void put_link(const char *target, const char *rel)
{
	char *p = kb_xasprintf("%s/%s", dir, rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	T_EQ_INT(kb_mkdirs(p, NULL), 0);
	*slash = '/';
	T_EQ_INT(symlink(target, p), 0);
	free(p);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* A fresh folder: CUDA_HOME is dir/cuda, the built-against toolkit dir/builtin. */
static void begin(void)
{
	strcpy(dir, "/tmp/kb-toolkit-test-XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = 0;
	char *cuda = kb_xasprintf("%s/cuda", dir);
	setenv("CUDA_HOME", cuda, 1);
	free(cuda);
	static char builtin[96];
	snprintf(builtin, sizeof builtin, "%s/builtin", dir);
	kb_compile__toolkit_set_builtin(builtin);
	resolved = 0;
}

static void end(void)
{
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	unsetenv("CUDA_HOME");
	kb_compile__toolkit_set_builtin(NULL);
}

static void test_compile_toolkit__roots(void)
{
	begin();
	const char *roots[2];
	T_EQ_INT(kb_compile__toolkit_roots(roots), 2);
	T_OK(strstr(roots[0], "/cuda") != NULL);
	T_OK(strstr(roots[1], "/builtin") != NULL);
	unsetenv("CUDA_HOME");
	T_EQ_INT(kb_compile__toolkit_roots(roots), 1);
	T_OK(strstr(roots[0], "/builtin") != NULL);
	end();
}

/* Found in CUDA_HOME by stat alone: its file and identity come without a
 * load; the load then opens that very file. */
static void test_compile_toolkit__cuda_home_first(void)
{
	begin();
	char *libm = lib_of((void *)&cos), *libc = lib_of((void *)&printf);
	T_OK(libm && libc && strcmp(libm, libc));
	put_link(libm, "cuda/lib64/libkbfake.so.1");
	put_link(libc, "builtin/lib64/libkbfake.so.1");
	kb_compile__lib lib = {.what = "kbfake", .dom = KB_DOM_NVRTC,
			       .names = {"libkbfake.so.1", NULL}, .resolve = resolve_cos};
	char *file = kb_compile__lib_file(&lib);
	T_EQ_STR(file, libm);
	char *id = kb_compile__lib_id(&lib);
	T_OK(id && !strncmp(id, "kbfake ", 7) && strstr(id, libm));
	T_OK(!lib.tried && resolved == 0); /* nothing loaded so far */
	kb_err err = {0};
	T_EQ_INT(kb_compile__lib_load(&lib, &err), 0);
	T_EQ_INT(resolved, 1);
	T_EQ_STR(resolved_path, libm);
	T_EQ_INT(kb_compile__lib_load(&lib, &err), 0); /* once */
	T_EQ_INT(resolved, 1);
	/* Without CUDA_HOME, the built-against toolkit's (not loaded: lib_file
	 * of a loaded library is the loaded one, so ask a fresh description). */
	unsetenv("CUDA_HOME");
	kb_compile__lib other = {.what = "kbfake", .names = {"libkbfake.so.1", NULL},
				 .resolve = resolve_cos};
	char *file2 = kb_compile__lib_file(&other);
	T_EQ_STR(file2, libc);
	char *file3 = kb_compile__lib_file(&lib);
	T_EQ_STR(file3, libm);
	free(lib.path); /* a library's own stays loaded for good; this one is the test's */
	free(file);
	free(file2);
	free(file3);
	free(id);
	free(libm);
	free(libc);
	end();
}

/* Nothing anywhere: KB_EUNSUP and every place it looked. */
static void test_compile_toolkit__not_found(void)
{
	begin();
	kb_compile__lib lib = {.what = "kbnone", .dom = KB_DOM_NVRTC,
			       .names = {"libkbench-none.so.1", "libkbench-none.so", NULL},
			       .resolve = resolve_cos};
	T_OK(kb_compile__lib_file(&lib) == NULL);
	kb_err err = {0};
	T_EQ_INT(kb_compile__lib_load(&lib, &err), KB_EUNSUP);
	T_EQ_INT(err.domain, KB_DOM_NVRTC);
	char *want = kb_xasprintf("kbnone not found: looked for libkbench-none.so.1 in "
				  "%s/cuda/lib64, %s/cuda/lib, %s/builtin/lib64, %s/builtin/lib, "
				  "and the loader's search path (libkbench-none.so.1: ",
				  dir, dir, dir, dir);
	T_OK(!strncmp(err.msg, want, strlen(want)));
	if (strncmp(err.msg, want, strlen(want)))
		printf("  got:  %s\n  want: %s...\n", err.msg, want);
	T_CONTAINS(err.msg, "set CUDA_HOME to the CUDA 13 toolkit");
	T_EQ_INT(resolved, 0);
	char *id = kb_compile__lib_id(&lib);
	T_EQ_STR(id, "kbnone: not found");
	free(id);
	free(want);
	end();
}

/* A library without an entry point kbench needs says which. */
static void test_compile_toolkit__missing_symbol(void)
{
	begin();
	char *libm = lib_of((void *)&cos);
	put_link(libm, "cuda/lib/libkbfake.so.1");
	kb_compile__lib lib = {.what = "kbfake", .dom = KB_DOM_NVJITLINK,
			       .names = {"libkbfake.so.1", NULL}, .resolve = resolve_missing};
	kb_err err = {0};
	T_EQ_INT(kb_compile__lib_load(&lib, &err), KB_EUNSUP);
	char *want = kb_xasprintf("kbfake at %s lacks kb_no_such_entry_point", libm);
	T_CONTAINS(err.msg, want);
	free(lib.path);
	free(want);
	free(libm);
	end();
}

/* The identity (the cache key's part) follows the file: its size and time. */
static void test_compile_toolkit__id_follows_file(void)
{
	begin();
	char *p = kb_xasprintf("%s/cuda/lib64/libkbid.so.1", dir);
	char *d = kb_xasprintf("%s/cuda/lib64", dir);
	T_EQ_INT(kb_mkdirs(d, NULL), 0);
	T_EQ_INT(kb_file_write(p, "a", 1, NULL), 0);
	kb_compile__lib lib = {.what = "kbid", .names = {"libkbid.so.1", NULL},
			       .resolve = resolve_cos};
	char *id1 = kb_compile__lib_id(&lib), *id1b = kb_compile__lib_id(&lib);
	T_EQ_STR(id1, id1b);
	T_EQ_INT(kb_file_write(p, "bb", 2, NULL), 0);
	char *id2 = kb_compile__lib_id(&lib);
	T_OK(id1 && id2 && strcmp(id1, id2));
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	T_EQ_INT(utimensat(AT_FDCWD, p, ts, 0), 0);
	char *id3 = kb_compile__lib_id(&lib);
	T_OK(id3 && strcmp(id2, id3));
	T_OK(!lib.tried); /* never loaded (it is no library at all) */
	free(id1);
	free(id1b);
	free(id2);
	free(id3);
	free(p);
	free(d);
	end();
}

int main(void)
{
	T_RUN(test_compile_toolkit__roots);
	T_RUN(test_compile_toolkit__cuda_home_first);
	T_RUN(test_compile_toolkit__not_found);
	T_RUN(test_compile_toolkit__missing_symbol);
	T_RUN(test_compile_toolkit__id_follows_file);
	return t_report();
}
