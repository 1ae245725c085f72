/*
 * nvjitlink.c - PTX to cubin through nvJitLink, in process (no ptxas binary,
 * no GPU).  Owns the nvJitLink calls and the translation of ptxas messages
 * ("ptxas application ptx input, line N; error : msg") into kb_diags at the
 * user's .ptx file and line: the PTX is passed verbatim, so lines match.
 *
 * libnvJitLink (about 100 MB) is dlopen'ed by the first link that needs it
 * (style rule 11), found as toolkit.c says.  Its public names are inline
 * wrappers (left out here: NVJITLINK_NO_INLINE) over versioned symbols,
 * __nvJitLinkCreate_13_0 and so on, which are what is resolved; the
 * version suffix is the header's, so a header of another version fails to
 * compile here instead of calling a symbol of the wrong version.
 */
#include "compile_int.h"

#define NVJITLINK_NO_INLINE
#include <dlfcn.h>
#include <nvJitLink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry points: each field is named after the public name and typed and
 * resolved as the versioned symbol the header's wrapper calls. */
#define NVJL_FUNCS(X) \
	X(Create) X(Destroy) X(AddData) X(Complete) X(GetLinkedCubinSize) \
	X(GetLinkedCubin) X(GetErrorLogSize) X(GetErrorLog) X(GetInfoLogSize) \
	X(GetInfoLog)
#define NVJL_SYM(f) __nvJitLink##f##_13_0

static struct {
	__typeof__(&nvJitLinkVersion) Version;
#define KB_NVJL_FIELD(f) __typeof__(&NVJL_SYM(f)) f;
	NVJL_FUNCS(KB_NVJL_FIELD)
#undef KB_NVJL_FIELD
} api;

#define KB_STR2(x) #x
#define KB_STR(x) KB_STR2(x)

static const char *resolve(void *h, const char *path)
{
	api.Version = (__typeof__(api.Version))dlsym(h, "nvJitLinkVersion");
	if (!api.Version)
		return "nvJitLinkVersion";
#define KB_NVJL_RESOLVE(f) \
	api.f = (__typeof__(api.f))dlsym(h, KB_STR(NVJL_SYM(f))); \
	if (!api.f) \
		return KB_STR(NVJL_SYM(f));
	NVJL_FUNCS(KB_NVJL_RESOLVE)
#undef KB_NVJL_RESOLVE
	return NULL;
}

static kb_compile__lib lib = {
	.what = "nvJitLink",
	.dom = KB_DOM_NVJITLINK,
	.names = {"libnvJitLink.so.13", "libnvJitLink.so", NULL},
	.resolve = resolve,
};

/* nvJitLink's file, size and time for the cache key, without loading it. */
char *kb_compile__nvjitlink_id(void)
{
	return kb_compile__lib_id(&lib);
}

/* "nvjitlink 13.0" (loads nvJitLink), or "nvjitlink" when it cannot be loaded. */
const char *kb_compile__nvjitlink_version(void)
{
	static char v[32];
	if (kb_compile__lib_load(&lib, NULL) < 0)
		return "nvjitlink";
	if (!v[0]) {
		unsigned major = 0, minor = 0;
		api.Version(&major, &minor);
		snprintf(v, sizeof v, "nvjitlink %u.%u", major, minor);
	}
	return v;
}

static char *take_log(nvJitLinkHandle h, bool error_log)
{
	size_t n = 0;
	nvJitLinkResult r = error_log ? api.GetErrorLogSize(h, &n) : api.GetInfoLogSize(h, &n);
	if (r != NVJITLINK_SUCCESS || n == 0)
		return kb_xstrdup("");
	char *log = kb_xmalloc(n + 1);
	r = error_log ? api.GetErrorLog(h, log) : api.GetInfoLog(h, log);
	if (r != NVJITLINK_SUCCESS)
		log[0] = '\0';
	log[n] = '\0';
	return log;
}

/* Links src's PTX: 0, KB_ECOMPILE (diags), KB_EUNSUP (no nvJitLink) or KB_ERROR. */
int kb_compile__nvjitlink(const kb_source *src, const char *const *opts, int nopts,
			  kb_compile__out *out, kb_diags *diags, kb_err *err)
{
	nvJitLinkHandle h = NULL;
	int rc = kb_compile__lib_load(&lib, err);
	if (rc < 0)
		return rc;
	nvJitLinkResult r = api.Create(&h, (uint32_t)nopts, (const char *const *)opts);
	if (r == NVJITLINK_ERROR_UNRECOGNIZED_OPTION && h) {
		/* The log names the option; build.c places it at the option's word. */
		out->log = take_log(h, true);
		rc = KB_ECOMPILE;
		goto out;
	}
	if (r != NVJITLINK_SUCCESS) {
		rc = KB_ERR(err, KB_ERROR, KB_DOM_NVJITLINK, (int)r,
			    "nvJitLinkCreate failed (%d): bad options?", (int)r);
		goto out;
	}
	r = api.AddData(h, NVJITLINK_INPUT_PTX, src->text, src->len, src->path);
	if (r == NVJITLINK_SUCCESS)
		r = api.Complete(h);
	char *info = take_log(h, false), *errlog = take_log(h, true);
	out->log = kb_xasprintf("%s%s", info, errlog);
	free(info);
	free(errlog);
	kb_compile__ptxas_log_diags(out->log, src, NULL, diags);
	if (r != NVJITLINK_SUCCESS) {
		if (kb_diag_count(diags, KB_DIAG_ERROR) > 0)
			rc = KB_ECOMPILE;
		else
			rc = KB_ERR(err, KB_ERROR, KB_DOM_NVJITLINK, (int)r, "nvJitLink failed (%d)\n%s",
				    (int)r, out->log);
		goto out;
	}
	if (api.GetLinkedCubinSize(h, &out->cubin_len) != NVJITLINK_SUCCESS ||
	    out->cubin_len == 0) {
		rc = KB_ERR(err, KB_ERROR, KB_DOM_NVJITLINK, 0, "nvJitLink produced no cubin");
		goto out;
	}
	out->cubin = kb_xmalloc(out->cubin_len);
	api.GetLinkedCubin(h, out->cubin);
	out->ptx = kb_xstrdup(src->text);
	out->ptx_len = src->len;
out:
	if (h)
		api.Destroy(&h);
	return rc;
}

/* Whether a PTX `.file` entry's path names src (NVRTC writes the path it
 * was given made absolute). */
static bool names_source(const char *path, size_t n, const char *src_path)
{
	size_t sn = strlen(src_path);
	return n == sn ? !strncmp(path, src_path, n)
		       : n > sn && path[n - sn - 1] == '/' && !strncmp(path + n - sn, src_path, sn);
}

/* The source line and column of PTX line ptx_line of a .cu file's PTX
 * (-lineinfo): the last `.loc F LINE COL` above it, where file F is the
 * source itself; 0 when there is none (a header's code, or no line info). */
static int ptx_line_source(const char *ptx, int ptx_line, const char *src_path, int *col)
{
	int file = 0, line = 0, at = 0;
	*col = 0;
	const char *p = ptx;
	for (int l = 1; p && *p && l < ptx_line; l++) {
		const char *w = p + strspn(p, " \t");
		int f, ln, c;
		if (sscanf(w, ".loc %d %d %d", &f, &ln, &c) == 3)
			file = f, line = ln, at = c;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!file)
		return 0;
	/* `.file F "path"` lines come after the code */
	for (const char *q = ptx; (q = strstr(q, ".file")); q += 5) {
		int f, used = 0;
		if (sscanf(q, ".file %d \"%n", &f, &used) != 1 || !used || f != file)
			continue;
		const char *path = q + used, *end = strchr(path, '"');
		if (end && names_source(path, (size_t)(end - path), src_path)) {
			*col = at;
			return line;
		}
		return 0;
	}
	return 0;
}

/* Whether diags already hold msg (after a "ptxas: " prefix) at line:col. */
static bool said_at(const kb_diags *diags, int line, int col, const char *msg)
{
	for (int i = 0; i < diags->n; i++) {
		const kb_diag *g = &diags->v[i];
		const char *m = strncmp(g->msg, "ptxas: ", 7) ? g->msg : g->msg + 7;
		if (g->line == line && g->col == col && !strcmp(m, msg))
			return true;
	}
	return false;
}

void kb_compile__ptxas_log_diags(const char *log, const kb_source *src, const char *ptx,
				 kb_diags *diags)
{
	const char *p = log;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char *l = kb_xstrndup(p, n);
		int line = 0;
		char kind[16] = "";
		int used = 0;
		/* "ptxas application ptx input, line 8; error   : Unknown modifier" */
		if (sscanf(l, "ptxas %*[^,], line %d; %15[a-z] :%n", &line, kind, &used) == 2 && used) {
			kb_diag_level lvl = !strcmp(kind, "error") ? KB_DIAG_ERROR
					    : !strcmp(kind, "warning") ? KB_DIAG_WARNING : KB_DIAG_NOTE;
			const char *msg = l + used;
			while (*msg == ' ')
				msg++;
			int col = 0, at = ptx ? ptx_line_source(ptx, line, src->path, &col) : line;
			if (at && said_at(diags, at, col, msg))
				; /* one asm statement inlined or unrolled many times: said once */
			else if (at)
				kb_diag_add(diags, lvl, src->path, src->text, at, col, 1, ptx ? "ptxas: %s" : "%s",
					    msg);
			else
				kb_diag_add(diags, lvl, src->path, NULL, 0, 0, 1,
					    "ptxas: %s (line %d of the PTX NVRTC made of it)", msg, line);
		} else if (!strncmp(l, "ptxas fatal", 11) && kb_diag_count(diags, KB_DIAG_ERROR) == 0) {
			const char *msg = strchr(l, ':');
			kb_diag_add(diags, KB_DIAG_ERROR, src->path, NULL, 0, 0, 1, "%s",
				    msg ? msg + 2 : l);
		}
		free(l);
		p = eol ? eol + 1 : NULL;
	}
}
