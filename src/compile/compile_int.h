/*
 * compile_int.h - declarations shared between the files of src/compile only
 * (style rule 1); other folders use compile.h.
 */
#ifndef KB_COMPILE_INT_H
#define KB_COMPILE_INT_H

#include "compile.h"
#include "../tilegen/tilegen.h"

#include <stdarg.h>
#include <string.h>

/* What one compiler invocation produced (nvrtc.c, nvjitlink.c, cache.c). */
typedef struct {
	char *ptx; size_t ptx_len;
	void *cubin; size_t cubin_len;
	char *log;
	char **lowered;       /* per requested name expression; NULL when not lowered */
	int nlowered;
	char *sass_text;      /* cached raw disassembly, or NULL */
	char *sass_tool;
	char *compiler;       /* "nvrtc 13.0": what made it */
} kb_compile__out;

void kb_compile__out_free(kb_compile__out *o);

/* toolkit.c: the CUDA toolkit kbench uses, and loading its libraries. */

/* A toolkit library, described by nvrtc.c or nvjitlink.c; the fields after
 * resolve are toolkit.c's (under its lock). */
typedef struct {
	const char *what;        /* "NVRTC", in messages and the cache key */
	kb_domain dom;
	const char *names[3];    /* file names, most specific first; NULL-ended */
	/* Resolves the entry points from the loaded file at path: NULL, or
	 * the name of the first one missing. */
	const char *(*resolve)(void *handle, const char *path);
	bool tried;
	int rc;
	void *handle;
	char *path;              /* the loaded file's real path */
	kb_err err;
} kb_compile__lib;

/* The toolkit folders in search order: $CUDA_HOME when set, then the one
 * kbench was built against.  Fills roots (borrowed strings); returns how many. */
int kb_compile__toolkit_roots(const char *roots[2]);
/* Tests: the built-against toolkit folder becomes root (NULL: the build's again). */
void kb_compile__toolkit_set_builtin(const char *root);
/* The first of lib's names in a root's lib64/ or lib/, roots in order, found
 * without loading it (a new string), or NULL. */
char *kb_compile__toolkit_find_lib(const kb_compile__lib *lib);
/* Loads lib once (the file find_lib names, else its names through the
 * loader) and resolves it.  Returns 0, or KB_EUNSUP with err saying where
 * it looked ("NVRTC not found: looked for ... in ..."). */
int kb_compile__lib_load(kb_compile__lib *lib, kb_err *err);
/* The real path of the file lib is (or would be) loaded from, without
 * loading it; NULL when only the loader's search could say.  New string. */
char *kb_compile__lib_file(kb_compile__lib *lib);
/* "WHAT PATH SIZE MTIME" of lib's file, for the compile cache's key (a new
 * string); loads lib only when the loader's search alone finds it. */
char *kb_compile__lib_id(kb_compile__lib *lib);
/* The folders where the toolkit's programs are looked for, in order: the
 * bin/ beside the library folder of lib_file (NVRTC's real path, or NULL),
 * $CUDA_HOME/bin, the built-against toolkit's bin/ (the first *ntoolkit),
 * then PATH's.  A new array of new strings; returns how many. */
int kb_compile__toolkit_bin_dirs(const char *lib_file, char ***dirs, int *ntoolkit);

/* nvrtc.c: compiles CUDA source. names are NVRTC name expressions to lower.
 * Returns 0, KB_ECOMPILE (diags filled from the log), or KB_ERROR. */
int kb_compile__nvrtc(const kb_source *src, const char *const *opts, int nopts,
		      const char *const *names, int nnames, kb_compile__out *out,
		      kb_diags *diags, kb_err *err);
/* Loads NVRTC (once): 0, or KB_EUNSUP with err saying where it looked. */
int kb_compile__nvrtc_load(kb_err *err);
/* 0 when NVRTC compiles for sm (or cannot say which archs it takes); else
 * KB_EINVAL with err listing the archs it knows (loads NVRTC). */
int kb_compile__nvrtc_check_arch(int sm, kb_err *err);
/* "nvrtc 13.0" (loads NVRTC); "nvrtc" when it cannot be loaded. */
const char *kb_compile__nvrtc_version(void);
/* NVRTC's file and its size and time, for the cache key (a new string). */
char *kb_compile__nvrtc_id(void);
/* The real path of NVRTC's file, loaded or not (see kb_compile__lib_file). */
char *kb_compile__nvrtc_file(void);
/* Turns NVRTC's "file(line): error: msg / source / caret" log into diags. */
void kb_compile__nvrtc_log_diags(const char *log, const kb_source *src, kb_diags *diags);

/* Where a driver is loaded, NVRTC hands code generation to it, and the
 * driver's own compute cache then returns cubins without running ptxas, so
 * the log has no resource report (seen on H200, driver 580).  kbench has its
 * own cache; this turns the driver's off (CUDA_CACHE_DISABLE=1) for the
 * process, before the driver is initialised and before each compile. */
void kb_compile__no_driver_cache(void);

/* nvjitlink.c: PTX -> cubin. Returns 0, KB_ECOMPILE (diags), or KB_ERROR. */
int kb_compile__nvjitlink(const kb_source *src, const char *const *opts, int nopts,
			  kb_compile__out *out, kb_diags *diags, kb_err *err);
/* "nvjitlink 13.0" (loads nvJitLink); "nvjitlink" when it cannot be loaded. */
const char *kb_compile__nvjitlink_version(void);
/* nvJitLink's file and its size and time, for the cache key (a new string). */
char *kb_compile__nvjitlink_id(void);
/* Turns "ptxas application ptx input, line N; error : msg" lines into diags:
 * at line N of src (a .ptx file, ptx NULL), or at the source line that
 * line N of ptx (NVRTC's PTX of the .cu file src) has in its line info. */
void kb_compile__ptxas_log_diags(const char *log, const kb_source *src, const char *ptx,
				 kb_diags *diags);

/* cache.c: the content-addressed store under $XDG_CACHE_HOME/kbench/compile. */
int kb_compile__cache_load(const char *key, kb_compile__out *out);
void kb_compile__cache_store(const char *key, const kb_compile__out *out);
/* Only the entry's SASS (sass_text, sass_tool): 0, or KB_ENOTFOUND. */
/* A build made elsewhere (kb_compile_build_export's JSON) as a compiler's
 * output.  Returns 0 or KB_EINVAL (a malformed one). */
int kb_compile__prebuilt_load(json_t *j, kb_compile__out *out);
int kb_compile__cache_load_sass(const char *key, kb_compile__out *out);
void kb_compile__cache_store_sass(const char *key, const char *tool, const char *text);

/* bind_ref.c: checks a built-in reference call's arguments and shapes
 * against the spec (adds diags). */
void kb_compile__bind_builtin(const kb_spec *spec, const kb_source *src, kb_diags *d);

/* discover_text.c: the length of a conditional directive line (#if #ifdef
 * #elif #else #endif ...) starting at p, continuation lines included; 0 for
 * other lines. */
size_t kb_compile__directive_len(const char *p, const char *end);
/* A copy of text with the attributes the CUDA grammar does
 * not know (__cluster_dims__(...), __maxnreg__(...), ...) blanked, or NULL
 * when it has none (discover.c parses that). */
char *kb_compile__mask_unknown_attrs(const char *text, size_t len);

#endif
