/*
 * compile_int.h - declarations shared between the files of src/compile only
 * (style rule 1); other folders use compile.h.
 */
#ifndef KB_COMPILE_INT_H
#define KB_COMPILE_INT_H

#include "compile.h"

/* What one compiler invocation produced (nvrtc.c, nvjitlink.c, cache.c). */
typedef struct {
	char *ptx; size_t ptx_len;
	void *cubin; size_t cubin_len;
	char *log;
	char **lowered;       /* per requested name expression; NULL when not lowered */
	int nlowered;
	char *sass_text;      /* cached raw disassembly, or NULL */
	char *sass_tool;
} kb_compile__out;

void kb_compile__out_free(kb_compile__out *o);

/* nvrtc.c: compiles CUDA source. names are NVRTC name expressions to lower.
 * Returns 0, KB_ECOMPILE (diags filled from the log), or KB_ERROR. */
int kb_compile__nvrtc(const kb_source *src, const char *const *opts, int nopts,
		      const char *const *names, int nnames, kb_compile__out *out,
		      kb_diags *diags, kb_err *err);
/* "nvrtc 13.0" */
const char *kb_compile__nvrtc_version(void);
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
const char *kb_compile__nvjitlink_version(void);
/* Turns "ptxas application ptx input, line N; error : msg" lines into diags. */
void kb_compile__ptxas_log_diags(const char *log, const kb_source *src, kb_diags *diags);

/* cache.c: the content-addressed store under $XDG_CACHE_HOME/kbench/compile. */
int kb_compile__cache_load(const char *key, kb_compile__out *out);
void kb_compile__cache_store(const char *key, const kb_compile__out *out);
void kb_compile__cache_store_sass(const char *key, const char *tool, const char *text);

#endif
