/*
 * nvrtc.c - CUDA C++ to PTX and cubin through NVRTC, in process.
 * Owns the NVRTC calls and the translation of NVRTC's log into kb_diags at
 * the user's file and line.  The program is named after the user's path, so
 * NVRTC's messages already name the right file; no temporary file exists.
 *
 * libnvrtc (about 100 MB) is dlopen'ed by the first compile that needs it
 * (style rule 11), found as toolkit.c says; nothing else calls NVRTC, so a
 * cache hit, `kbench log` or the TUI's start never load it.  NVRTC loads
 * libnvrtc-builtins.so.MAJOR.MINOR by name when it compiles; the copy
 * beside the libnvrtc that was loaded is loaded first, so the loader's
 * search cannot pair it with another toolkit's (an SONAME already loaded
 * is what a later dlopen by that name gets).
 */
#include "compile_int.h"

#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NVRTC_FUNCS(X) \
	X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) \
	X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) \
	X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize) \
	X(nvrtcGetCUBIN) X(nvrtcGetLoweredName) X(nvrtcDestroyProgram)

static struct {
#define KB_NVRTC_FIELD(f) __typeof__(&f) f;
	NVRTC_FUNCS(KB_NVRTC_FIELD)
#undef KB_NVRTC_FIELD
	/* optional: what --arch values this NVRTC takes */
	__typeof__(&nvrtcGetNumSupportedArchs) nvrtcGetNumSupportedArchs;
	__typeof__(&nvrtcGetSupportedArchs) nvrtcGetSupportedArchs;
} api;

/* Loads the libnvrtc-builtins beside path, when it is there. */
static void load_builtins(const char *path)
{
	int major = 0, minor = 0;
	if (api.nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
		return;
	const char *slash = strrchr(path, '/');
	if (!slash)
		return;
	char *b = kb_xasprintf("%.*s/libnvrtc-builtins.so.%d.%d", (int)(slash - path), path,
			       major, minor);
	struct stat st;
	if (stat(b, &st) == 0 && !dlopen(b, RTLD_NOW | RTLD_LOCAL))
		kb_log("nvrtc: cannot load %s (%s); NVRTC will look for it", b, dlerror());
	free(b);
}

static const char *resolve(void *h, const char *path)
{
#define KB_NVRTC_RESOLVE(f) \
	api.f = (__typeof__(api.f))dlsym(h, #f); \
	if (!api.f) \
		return #f;
	NVRTC_FUNCS(KB_NVRTC_RESOLVE)
#undef KB_NVRTC_RESOLVE
	api.nvrtcGetNumSupportedArchs = (__typeof__(api.nvrtcGetNumSupportedArchs))dlsym(
		h, "nvrtcGetNumSupportedArchs");
	api.nvrtcGetSupportedArchs = (__typeof__(api.nvrtcGetSupportedArchs))dlsym(
		h, "nvrtcGetSupportedArchs");
	load_builtins(path);
	return NULL;
}

static kb_compile__lib lib = {
	.what = "NVRTC",
	.dom = KB_DOM_NVRTC,
	.names = {"libnvrtc.so.13", "libnvrtc.so", NULL},
	.resolve = resolve,
};

#define KB_NVRTC(call, err) \
	do { \
		nvrtcResult r_ = (api.call); \
		if (r_ != NVRTC_SUCCESS) { \
			rc = KB_ERR((err), KB_ERROR, KB_DOM_NVRTC, (int)r_, "%s: %s", #call, \
				    api.nvrtcGetErrorString(r_)); \
			goto out; \
		} \
	} while (0)

static int nvrtc_calls;

/* How many times NVRTC compiled something in this process (cache tests). */
int kb_compile_nvrtc_invocations(void)
{
	return nvrtc_calls;
}

/* Loads NVRTC once: 0, or KB_EUNSUP with err saying where it looked. */
int kb_compile__nvrtc_load(kb_err *err)
{
	return kb_compile__lib_load(&lib, err);
}

/* NVRTC's file, size and time for the cache key, without loading it. */
char *kb_compile__nvrtc_id(void)
{
	return kb_compile__lib_id(&lib);
}

/* The real path of NVRTC's file, loaded or not; NULL when unknown unloaded. */
char *kb_compile__nvrtc_file(void)
{
	return kb_compile__lib_file(&lib);
}

/* "nvrtc 13.0" (loads NVRTC), or "nvrtc" when it cannot be loaded. */
const char *kb_compile__nvrtc_version(void)
{
	static char v[32];
	if (kb_compile__nvrtc_load(NULL) < 0)
		return "nvrtc";
	if (!v[0]) {
		int major = 0, minor = 0;
		api.nvrtcVersion(&major, &minor);
		snprintf(v, sizeof v, "nvrtc %d.%d", major, minor);
	}
	return v;
}

/* See compile_int.h. */
int kb_compile__nvrtc_check_arch(int sm, kb_err *err)
{
	int n = 0;
	if (kb_compile__nvrtc_load(NULL) < 0 || !api.nvrtcGetNumSupportedArchs ||
	    !api.nvrtcGetSupportedArchs || api.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS ||
	    n <= 0)
		return KB_OK; /* cannot say: the compiler's own message stands */
	int *archs = kb_xcalloc((size_t)n, sizeof *archs);
	bool known = api.nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS;
	kb_buf list = KB_BUF_INIT;
	for (int i = 0; i < n && !known; i++) {
		known = archs[i] == sm;
		kb_buf_catf(&list, "%ssm_%d", i ? ", " : "", archs[i]);
	}
	int rc = known ? KB_OK
		 : kb_err_set(err, KB_EINVAL, KB_DOM_NVRTC, 0, "sm_%d is not an arch %s compiles "
			      "for; it knows %s (with an 'a' or 'f' suffix, sm_90a, where the arch "
			      "has one)", sm, kb_compile__nvrtc_version(), list.s);
	kb_buf_free(&list);
	free(archs);
	return rc;
}

static char *get_log(nvrtcProgram prog)
{
	size_t n = 0;
	if (api.nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0)
		return kb_xstrdup("");
	char *log = kb_xmalloc(n + 1);
	if (api.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS)
		log[0] = '\0';
	log[n] = '\0';
	return log;
}

static void get_lowered(nvrtcProgram prog, const char *const *names, int nnames,
			kb_compile__out *out)
{
	out->nlowered = nnames;
	out->lowered = kb_xcalloc((size_t)nnames ? (size_t)nnames : 1, sizeof(char *));
	for (int i = 0; i < nnames; i++) {
		const char *low = NULL;
		if (api.nvrtcGetLoweredName(prog, names[i], &low) == NVRTC_SUCCESS && low)
			out->lowered[i] = kb_xstrdup(low);
	}
}

/* The driver API's cuda.h cannot be compiled by NVRTC (libc headers, host
 * function declarations), yet a TMA kernel written for nvcc includes it for
 * the one type device code needs: the CUtensorMap it takes by value.  Under
 * NVRTC `#include <cuda.h>` gets this instead, so such a kernel compiles
 * here unchanged (docs/decisions.md). */
static const char *const shim_names[] = {"cuda.h"};
static const char *const shim_texts[] = {
	"#pragma once\n"
	"/* kbench's cuda.h for NVRTC: the driver API's device-side types only */\n"
	"#define __cuda_cuda_h__ 1\n"
	"typedef struct CUtensorMap_st { alignas(64) unsigned long long opaque[16]; } CUtensorMap;\n",
};

/* ptxas's errors in a failed compile (an inline asm statement it rejects),
 * at the source line the PTX's line info gives them: NVRTC still hands out
 * the PTX that ptxas failed on. */
static void ptxas_diags(nvrtcProgram prog, const char *log, const kb_source *src, kb_diags *diags)
{
	size_t n = 0;
	if (!strstr(log, "ptxas ") || api.nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS || n == 0)
		return;
	char *ptx = kb_xmalloc(n + 1);
	if (api.nvrtcGetPTX(prog, ptx) == NVRTC_SUCCESS) {
		ptx[n] = '\0';
		kb_compile__ptxas_log_diags(log, src, ptx, diags);
	}
	free(ptx);
}

/* Compiles src: 0, KB_ECOMPILE (diags), KB_EUNSUP (no NVRTC) or KB_ERROR. */
int kb_compile__nvrtc(const kb_source *src, const char *const *opts, int nopts,
		      const char *const *names, int nnames, kb_compile__out *out,
		      kb_diags *diags, kb_err *err)
{
	nvrtcProgram prog = NULL;
	int rc = kb_compile__nvrtc_load(err);
	if (rc < 0)
		return rc;
	KB_NVRTC(nvrtcCreateProgram(&prog, src->text, src->path, (int)KB_ARRAY_LEN(shim_names),
				    shim_texts, shim_names), err);
	for (int i = 0; i < nnames; i++)
		KB_NVRTC(nvrtcAddNameExpression(prog, names[i]), err);
	nvrtc_calls++;
	kb_compile__no_driver_cache();
	nvrtcResult cr = api.nvrtcCompileProgram(prog, nopts, opts);
	out->log = get_log(prog);
	kb_compile__nvrtc_log_diags(out->log, src, diags);
	/* An option NVRTC rejects is the user's to fix, like a syntax error:
	 * build.c places the log's complaint at the option's word. */
	if (cr == NVRTC_ERROR_COMPILATION || cr == NVRTC_ERROR_INVALID_OPTION) {
		ptxas_diags(prog, out->log, src, diags);
		rc = KB_ECOMPILE;
		goto out;
	}
	if (cr != NVRTC_SUCCESS) {
		rc = KB_ERR(err, KB_ERROR, KB_DOM_NVRTC, (int)cr, "nvrtcCompileProgram: %s\n%s",
			    api.nvrtcGetErrorString(cr), out->log);
		goto out;
	}
	KB_NVRTC(nvrtcGetPTXSize(prog, &out->ptx_len), err);
	out->ptx = kb_xmalloc(out->ptx_len + 1);
	KB_NVRTC(nvrtcGetPTX(prog, out->ptx), err);
	out->ptx[out->ptx_len] = '\0';
	out->ptx_len = strlen(out->ptx);
	KB_NVRTC(nvrtcGetCUBINSize(prog, &out->cubin_len), err);
	if (out->cubin_len == 0) {
		rc = KB_ERR(err, KB_ERROR, KB_DOM_NVRTC, 0,
			    "NVRTC produced no cubin (a virtual compute_XX arch?)");
		goto out;
	}
	out->cubin = kb_xmalloc(out->cubin_len);
	KB_NVRTC(nvrtcGetCUBIN(prog, out->cubin), err);
	get_lowered(prog, names, nnames, out);
out:
	if (prog)
		api.nvrtcDestroyProgram(&prog);
	return rc;
}

/* ---- log -> diagnostics ----------------------------------------------- */

/* Parses "PATH(LINE): error: MSG" at the start of l. Returns true and fills. */
static bool parse_head(const char *l, const char *path, int *line, kb_diag_level *lvl,
		       const char **msg)
{
	size_t pn = strlen(path);
	if (strncmp(l, path, pn) || l[pn] != '(')
		return false;
	char *end;
	long n = strtol(l + pn + 1, &end, 10);
	if (end == l + pn + 1 || strncmp(end, "): ", 3))
		return false;
	const char *rest = end + 3;
	static const struct { const char *word; kb_diag_level lvl; } kinds[] = {
		{"error: ", KB_DIAG_ERROR}, {"catastrophic error: ", KB_DIAG_ERROR},
		{"warning #", KB_DIAG_WARNING}, {"warning: ", KB_DIAG_WARNING},
		{"remark: ", KB_DIAG_NOTE}, {"remark #", KB_DIAG_NOTE},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(kinds); i++) {
		size_t wn = strlen(kinds[i].word);
		if (!strncmp(rest, kinds[i].word, wn)) {
			*line = (int)n;
			*lvl = kinds[i].lvl;
			/* "warning #177-D: msg" keeps its number, which -diag-suppress takes. */
			*msg = rest[wn - 1] == '#' ? rest + wn - 1 : rest + wn;
			return true;
		}
	}
	return false;
}

/* NVRTC prints the source line indented by 2 and a caret line under it
 * that copies the line's tabs, so each character before the caret is one
 * column (as kb_diag_render shows a tab). */
static int caret_col(const char *caret_line)
{
	const char *c = strchr(caret_line, '^');
	if (!c)
		return 0;
	for (const char *p = caret_line; p < c; p++)
		if (*p != ' ' && *p != '\t')
			return 0;
	int col = (int)(c - caret_line) - 2 + 1;
	return col > 0 ? col : 0;
}

void kb_compile__nvrtc_log_diags(const char *log, const kb_source *src, kb_diags *diags)
{
	/* Split into lines; a message's caret, when present, is two lines down. */
	char *copy = kb_xstrdup(log);
	char **lines = NULL;
	int n = 0, cap = 0;
	for (char *p = copy; p && *p;) {
		*KB_PUSH(lines, n, cap) = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = '\0';
	}
	for (int i = 0; i < n; i++) {
		int line;
		kb_diag_level lvl;
		const char *msg;
		if (!parse_head(lines[i], src->path, &line, &lvl, &msg))
			continue;
		int col = i + 2 < n ? caret_col(lines[i + 2]) : 0;
		kb_diag_add(diags, lvl, src->path, src->text, line, col, 1, "%s", msg);
	}
	free(lines);
	free(copy);
}
