/*
 * toolkit.c - which CUDA toolkit kbench uses, and how its libraries are
 * loaded: nvrtc.c and nvjitlink.c each describe their library in a
 * kb_compile__lib and resolve their own entry points; the search, the
 * dlopen, the message when nothing is found and the identity of the file
 * for the compile cache's key are here, once.  sass.c asks it where the
 * toolkit's programs (nvdisasm, cuobjdump) are, beside the NVRTC it names.
 *
 * The search list, in order (style rule 11; docs/decisions.md):
 *   1. $CUDA_HOME/lib64, $CUDA_HOME/lib      (when CUDA_HOME is set)
 *   2. the toolkit kbench was built against  (KB_CUDA_HOME, the Makefile's
 *      CUDA_HOME, e.g. /usr/local/cuda), lib64/ then lib/
 *   3. the plain file names through the loader's own search
 *      (LD_LIBRARY_PATH, ld.so.cache, ...).
 * 1 and 2 are looked up with stat() alone, so a cache hit can name the
 * library it would use without loading 100 MB of it; only 3 needs a
 * dlopen to say which file it is.
 *
 * A library is loaded at most once per process and never unloaded; every
 * field of a kb_compile__lib after the description is guarded by one lock
 * here (a TUI compiles on one thread and disassembles on another).
 */
#define _GNU_SOURCE /* dlinfo, RTLD_DI_LINKMAP */
#include "compile_int.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef KB_CUDA_HOME
#define KB_CUDA_HOME "/usr/local/cuda"
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *builtin_root = KB_CUDA_HOME;

/* Tests: root stands for the built-against toolkit; NULL restores it. */
void kb_compile__toolkit_set_builtin(const char *root)
{
	builtin_root = root ? root : KB_CUDA_HOME;
}

/* $CUDA_HOME (when set), then the built-against toolkit; returns how many. */
int kb_compile__toolkit_roots(const char *roots[2])
{
	int n = 0;
	const char *env = getenv("CUDA_HOME");
	if (env && *env)
		roots[n++] = env;
	if (*builtin_root && (n == 0 || strcmp(roots[0], builtin_root)))
		roots[n++] = builtin_root;
	return n;
}

/* The library folders of the roots, in search order (a new array of new
 * strings, *n of them). */
static char **lib_dirs(int *n)
{
	const char *roots[2];
	int nr = kb_compile__toolkit_roots(roots);
	char **dirs = kb_xcalloc((size_t)nr * 2 + 1, sizeof *dirs);
	*n = 0;
	for (int i = 0; i < nr; i++) {
		dirs[(*n)++] = kb_xasprintf("%s/lib64", roots[i]);
		dirs[(*n)++] = kb_xasprintf("%s/lib", roots[i]);
	}
	return dirs;
}

static void free_strs(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The first of lib's names in the roots' lib64/ and lib/ (stat only), or NULL. */
char *kb_compile__toolkit_find_lib(const kb_compile__lib *lib)
{
	int n;
	char **dirs = lib_dirs(&n);
	char *found = NULL;
	for (int i = 0; i < n && !found; i++)
		for (int j = 0; lib->names[j] && !found; j++) {
			char *p = kb_xasprintf("%s/%s", dirs[i], lib->names[j]);
			if (is_file(p))
				found = p;
			else
				free(p);
		}
	free_strs(dirs, n);
	return found;
}

/* "NVRTC not found: looked in A, B, and the loader's search path (why)". */
static int not_found(const kb_compile__lib *lib, const char *why, kb_err *err)
{
	int n;
	char **dirs = lib_dirs(&n);
	kb_buf b = KB_BUF_INIT;
	kb_buf_catf(&b, "%s not found: looked for %s", lib->what, lib->names[0]);
	kb_buf_cat(&b, " in ");
	for (int i = 0; i < n; i++)
		kb_buf_catf(&b, "%s, ", dirs[i]);
	kb_buf_catf(&b, "and the loader's search path (%s); set CUDA_HOME to the CUDA 13 toolkit",
		    why && *why ? why : "not found");
	free_strs(dirs, n);
	int rc = kb_err_set(err, KB_EUNSUP, lib->dom, 0, "%s", b.s);
	kb_buf_free(&b);
	return rc;
}

/* The real path of the file behind a handle the loader found, or NULL. */
static char *handle_path(void *h)
{
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name || !*lm->l_name)
		return NULL;
	return realpath(lm->l_name, NULL);
}

/* dlopen and resolve, once; called under the lock. */
static void load_locked(kb_compile__lib *lib)
{
	lib->tried = true;
	char *file = kb_compile__toolkit_find_lib(lib);
	if (file) {
		lib->handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
		if (!lib->handle) {
			lib->rc = kb_err_set(&lib->err, KB_EUNSUP, lib->dom, 0,
					     "%s cannot be loaded from %s (%s)", lib->what, file,
					     dlerror());
			free(file);
			return;
		}
		lib->path = realpath(file, NULL);
		if (!lib->path)
			lib->path = kb_xstrdup(file);
		free(file);
	} else {
		char first[400] = "";
		for (int j = 0; lib->names[j] && !lib->handle; j++) {
			lib->handle = dlopen(lib->names[j], RTLD_NOW | RTLD_LOCAL);
			if (!lib->handle && !first[0])
				snprintf(first, sizeof first, "%s", dlerror());
		}
		if (!lib->handle) {
			lib->rc = not_found(lib, first, &lib->err);
			return;
		}
		lib->path = handle_path(lib->handle);
		if (!lib->path)
			lib->path = kb_xstrdup(lib->names[0]);
	}
	const char *missing = lib->resolve(lib->handle, lib->path);
	if (missing)
		lib->rc = kb_err_set(&lib->err, KB_EUNSUP, lib->dom, 0,
				     "%s at %s lacks %s (not a CUDA 13 toolkit?)", lib->what,
				     lib->path, missing);
}

/* Loads and resolves lib once: 0, or KB_EUNSUP with err saying where it looked. */
int kb_compile__lib_load(kb_compile__lib *lib, kb_err *err)
{
	pthread_mutex_lock(&lock);
	if (!lib->tried)
		load_locked(lib);
	int rc = lib->rc;
	if (rc < 0 && err)
		*err = lib->err;
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The loaded file's real path, else the one find_lib names; NULL if neither. */
char *kb_compile__lib_file(kb_compile__lib *lib)
{
	pthread_mutex_lock(&lock);
	char *p = lib->path && lib->rc == KB_OK ? kb_xstrdup(lib->path) : NULL;
	pthread_mutex_unlock(&lock);
	if (p)
		return p;
	char *found = kb_compile__toolkit_find_lib(lib);
	p = found ? realpath(found, NULL) : NULL;
	if (found && !p)
		p = kb_xstrdup(found);
	free(found);
	return p;
}

/* "WHAT PATH SIZE MTIME" for cache keys; loads only what the loader alone finds. */
char *kb_compile__lib_id(kb_compile__lib *lib)
{
	char *file = kb_compile__lib_file(lib);
	if (!file && kb_compile__lib_load(lib, NULL) == KB_OK)
		file = kb_compile__lib_file(lib); /* only the loader could find it */
	if (!file)
		return kb_xasprintf("%s: not found", lib->what);
	struct stat st;
	char *id = stat(file, &st) == 0
		   ? kb_xasprintf("%s %s %lld %lld.%09ld", lib->what, file, (long long)st.st_size,
				  (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec)
		   : kb_xasprintf("%s %s", lib->what, file);
	free(file);
	return id;
}

/* ---- the toolkit's programs ------------------------------------------ */

/* Appends dir to v unless it is there already (same real folder). */
static void add_dir(char ***v, int *n, int *cap, char *dir)
{
	char *real = realpath(dir, NULL);
	for (int i = 0; i < *n; i++) {
		char *other = realpath((*v)[i], NULL);
		bool same = !strcmp((*v)[i], dir) || (real && other && !strcmp(real, other));
		free(other);
		if (same) {
			free(real);
			free(dir);
			return;
		}
	}
	free(real);
	*KB_PUSH(*v, *n, *cap) = dir;
}

/* NVRTC's bin/, $CUDA_HOME/bin, the built-against bin/, then PATH: a new list. */
int kb_compile__toolkit_bin_dirs(const char *lib_file, char ***dirs, int *ntoolkit)
{
	char **v = NULL;
	int n = 0, cap = 0;
	/* The toolkit whose library folder holds lib_file: its real folder's
	 * parent, so a /usr/local/cuda link or a pip layout leads to the bin/
	 * beside the very library kbench compiles with. */
	char *lib = lib_file ? kb_xstrdup(lib_file) : NULL;
	if (lib) {
		char *slash = strrchr(lib, '/');
		if (slash) {
			*slash = '\0';
			slash = strrchr(lib, '/');
			if (slash) {
				*slash = '\0';
				add_dir(&v, &n, &cap, kb_xasprintf("%s/bin", *lib ? lib : ""));
			}
		}
		free(lib);
	}
	const char *roots[2];
	int nr = kb_compile__toolkit_roots(roots);
	for (int i = 0; i < nr; i++)
		add_dir(&v, &n, &cap, kb_xasprintf("%s/bin", roots[i]));
	*ntoolkit = n;
	const char *path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		add_dir(&v, &n, &cap, len ? kb_xstrndup(p, len) : kb_xstrdup("."));
		if (!e)
			break;
		p = e + 1;
	}
	*dirs = v;
	return n;
}
