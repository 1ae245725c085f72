/*
 * build.c - the compile pipeline for one kernel file: options, cache key,
 * NVRTC or nvJitLink, resources, occupancy at the spec's launch, SASS and
 * its instruction mix.  It owns kb_build; the compilers, the cache, the log
 * parsers and the calculator live in their own files.
 *
 * The cache key covers the kbench version, the source kind, the compiler's
 * library file (its real path, size and time: toolkit.c, without loading
 * it), the source text, the text of every local header it includes
 * ("..." includes, transitively), the option list (kbench's own, then the
 * user's: `//! options` words, then --option) and the name expressions:
 * everything that decides the cubin.  A hit never loads NVRTC: the
 * compiler's version it shows is the one stored with the entry.
 *
 * The user's options go after kbench's, so where the compiler takes the
 * last of two values the user's wins; kbench's --std=c++17 is left out when
 * the user gives -std.  What the compiler says about them (an unknown
 * option, a bad value) is placed at the option's word (options.c).
 */
#include "compile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	char **v;
	int n, cap;
} strv;

static void strv_add(strv *s, char *owned)
{
	*KB_PUSH(s->v, s->n, s->cap) = owned;
}

static void strv_free(strv *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

static const char *cuda_home(void)
{
	const char *h = getenv("CUDA_HOME");
	return h && *h ? h : "/usr/local/cuda";
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? kb_xstrndup(path, (size_t)(slash - path)) : kb_xstrdup(".");
}

/* True when opts->defines already sets macro `name` ("NAME=..." or "NAME"). */
static bool defined_by_user(const kb_build_opts *opts, const char *name)
{
	size_t n = strlen(name);
	for (int i = 0; i < opts->ndefines; i++)
		if (!strncmp(opts->defines[i], name, n) &&
		    (opts->defines[i][n] == '=' || opts->defines[i][n] == '\0'))
			return true;
	return false;
}

/* -D flags: each tune line's first value unless --define overrides it. */
static void add_defines(const kb_spec *spec, const kb_build_opts *opts, strv *o)
{
	if (opts->lowered)
		return;
	for (int i = 0; spec && i < spec->ntunes; i++) {
		const kb_spec_list *t = &spec->tunes[i];
		if (t->nvalues > 0 && !defined_by_user(opts, t->name))
			strv_add(o, kb_xasprintf("-D%s=%s", t->name, t->texts[0]));
	}
	for (int i = 0; i < opts->ndefines; i++)
		strv_add(o, kb_xasprintf("-D%s", opts->defines[i]));
}

/* The user's options: the spec's words, then --option (placeless).  The
 * texts are borrowed; free only the array. */
static kb_spec_option *user_options(const kb_spec *spec, const kb_build_opts *opts, int *n)
{
	int ns = spec ? spec->noptions : 0;
	*n = ns + opts->noptions;
	kb_spec_option *v = kb_xcalloc((size_t)*n + 1, sizeof *v);
	for (int i = 0; i < ns; i++)
		v[i] = spec->options[i];
	for (int i = 0; i < opts->noptions; i++) {
		v[ns + i].text = (char *)opts->options[i];
		v[ns + i].len = (int)strlen(opts->options[i]);
	}
	return v;
}

static void cuda_options(const kb_source *src, const kb_spec *spec, const kb_build_opts *opts,
			 const kb_spec_option *user, int nuser, strv *o)
{
	char *dir = dir_of(src->path);
	bool user_std = false;
	for (int i = 0; i < nuser; i++)
		user_std = user_std || kb_compile_option_is(KB_SRC_CUDA, user[i].text, "-std");
	strv_add(o, kb_xasprintf("--gpu-architecture=%s", opts->arch));
	strv_add(o, kb_xstrdup("-lineinfo"));
	if (!user_std)
		strv_add(o, kb_xstrdup("--std=c++17"));
	strv_add(o, kb_xasprintf("-I%s", dir));
	strv_add(o, kb_xasprintf("-I%s/include", cuda_home()));
	strv_add(o, kb_xasprintf("-I%s/include/cccl", cuda_home()));
	strv_add(o, kb_xstrdup("-Xptxas"));
	strv_add(o, kb_xstrdup("-v"));
	add_defines(spec, opts, o);
	for (int i = 0; i < nuser; i++)
		strv_add(o, kb_xstrdup(user[i].text));
	free(dir);
}

static void ptx_options(const kb_build_opts *opts, const kb_spec_option *user, int nuser,
			strv *o)
{
	strv_add(o, kb_xasprintf("-arch=%s", opts->arch));
	strv_add(o, kb_xstrdup("-lineinfo"));
	strv_add(o, kb_xstrdup("-verbose"));
	for (int i = 0; i < nuser; i++)
		strv_add(o, kb_xstrdup(user[i].text));
}

/* Name expressions NVRTC must lower: C++ kernels (not extern "C"); a
 * template only when the spec names its instantiation ("k<float, 4>"). */
static void name_expressions(const kb_spec *spec, const kb_kernels *ks, strv *names)
{
	for (int i = 0; ks && i < ks->n; i++) {
		const kb_kernel *k = &ks->v[i];
		if (k->extern_c)
			continue;
		if (!k->is_template) {
			strv_add(names, kb_xstrdup(k->name));
			continue;
		}
		const char *want = spec ? spec->kernel : NULL;
		size_t n = strlen(k->name);
		if (want && !strncmp(want, k->name, n) && want[n] == '<')
			strv_add(names, kb_xstrdup(want));
	}
}

/* ---- cache key ------------------------------------------------------ */

/* Hashes the text of each local header `#include "x"`, recursively. */
static void hash_local_includes(kb_hasher *h, const char *path, const char *text, int depth)
{
	if (depth > 8)
		return;
	char *dir = dir_of(path);
	for (const char *p = text; (p = strstr(p, "#include")); p += 8) {
		const char *q = p + 8;
		while (*q == ' ' || *q == '\t')
			q++;
		const char *e = *q == '"' ? strchr(q + 1, '"') : NULL;
		const char *nl = strchr(q, '\n');
		if (!e || (nl && e > nl))
			continue;
		char *inc = kb_xasprintf("%s/%.*s", dir, (int)(e - q - 1), q + 1);
		kb_buf b = KB_BUF_INIT;
		kb_hash_str(h, inc);
		if (kb_file_read(inc, &b, NULL) == KB_OK) {
			kb_hash_str(h, b.s);
			hash_local_includes(h, inc, b.s, depth + 1);
		}
		kb_buf_free(&b);
		free(inc);
	}
	free(dir);
}

static char *cache_key(const kb_source *src, const strv *o, const strv *names)
{
	kb_hasher *h = kb_hash_new();
	kb_hash_str(h, "kbench-compile " KB_VERSION);
	kb_hash_str(h, src->kind == KB_SRC_PTX ? "ptx" : "cuda");
	char *id = src->kind == KB_SRC_PTX ? kb_compile__nvjitlink_id() : kb_compile__nvrtc_id();
	kb_hash_str(h, id);
	free(id);
	kb_hash_str(h, src->text);
	hash_local_includes(h, src->path, src->text, 0);
	for (int i = 0; i < o->n; i++)
		kb_hash_str(h, o->v[i]);
	kb_hash_str(h, "--names--");
	for (int i = 0; i < names->n; i++)
		kb_hash_str(h, names->v[i]);
	char hex[KB_HASH_HEX];
	kb_hash_final(h, hex);
	return kb_xstrdup(hex);
}

/* ---- results: kernels, resources, occupancy, SASS ------------------- */

static const char *lowered_name(const kb_kernel *k, const strv *names,
				const kb_compile__out *out)
{
	if (k->extern_c)
		return k->name;
	for (int i = 0; i < names->n && i < out->nlowered; i++) {
		const char *nm = names->v[i];
		size_t n = strlen(k->name);
		if (!strncmp(nm, k->name, n) && (nm[n] == '\0' || nm[n] == '<'))
			return out->lowered[i];
	}
	return NULL;
}

static bool find_resources(const kb_resources *rs, int n, const char *sym, kb_resources *res)
{
	for (int i = 0; i < n; i++)
		if (sym && rs[i].kernel && !strcmp(rs[i].kernel, sym)) {
			*res = rs[i];
			res->kernel = kb_xstrdup(sym);
			return true;
		}
	return false;
}

static void free_resources(kb_resources *rs, int n)
{
	for (int i = 0; i < n; i++)
		free(rs[i].kernel);
	free(rs);
}

/* The kernel the spec runs: spec->kernel without template args, or the only one. */
static bool is_spec_kernel(const kb_spec *spec, const kb_kernels *ks, const kb_kernel *k)
{
	if (spec && spec->kernel) {
		size_t n = strlen(k->name);
		return !strncmp(spec->kernel, k->name, n) &&
		       (spec->kernel[n] == '\0' || spec->kernel[n] == '<');
	}
	return ks->n == 1;
}

static void add_occupancy(const kb_source *src, const kb_spec *spec, int sm,
			  kb_build_kernel *bk)
{
	const kb_arch_limits *lim = kb_compile_arch_limits(sm);
	kb_launch_dims dims;
	kb_diags scratch = {0};
	if (lim && spec && spec->launch.present &&
	    kb_compile_spec_launch_dims(spec, src, &dims, &scratch) == KB_OK) {
		int threads = (int)(dims.block[0] * dims.block[1] * dims.block[2]);
		kb_compile_occupancy(lim, &bk->res, threads, (int)dims.smem, &bk->occ);
		bk->has_occupancy = true;
	}
	kb_diags_free(&scratch);
}

/* Whether the compiled code holds function sym: a ptxas report, the cubin's
 * own records of it, or its PTX entry. */
static bool compiled(const char *sym, const kb_compile__out *out)
{
	if (!out->ptx || !sym)
		return false;
	size_t n = strlen(sym);
	for (const char *p = out->ptx; (p = strstr(p, ".entry ")); p += 7)
		if (!strncmp(p + 7, sym, n) && !(p[7 + n] == '_' || (p[7 + n] >= '0' && p[7 + n] <= '9') ||
						 ((p[7 + n] | 0x20) >= 'a' && (p[7 + n] | 0x20) <= 'z')))
			return true;
	return false;
}

/* The kernels' resources and the spec kernel's occupancy; returns
 * KB_ECOMPILE, with an error at its line, when the spec's kernel is not in
 * the compiled code (never a kernel of 0 registers). */
static int fill_kernels(const kb_source *src, const kb_spec *spec, const kb_kernels *ks,
			const strv *names, const kb_compile__out *out, kb_build *b)
{
	int rc = KB_OK;
	kb_resources *from_log = NULL, *from_elf = NULL;
	int nlog = kb_compile_parse_ptxas_log(out->log, &from_log);
	int nelf = kb_compile_cubin_resources(out->cubin, out->cubin_len, &from_elf, NULL);
	b->kernels = kb_xcalloc((size_t)(ks ? ks->n : 0) + 1, sizeof *b->kernels);
	for (int i = 0; ks && i < ks->n; i++) {
		const kb_kernel *k = &ks->v[i];
		const char *sym = lowered_name(k, names, out);
		if (!sym)
			continue; /* an uninstantiated template: nothing to show */
		kb_build_kernel *bk = &b->kernels[b->nkernels++];
		bk->name = kb_xstrdup(k->name);
		bk->lowered = kb_xstrdup(sym);
		bool found = find_resources(from_log, nlog, sym, &bk->res) ||
			     find_resources(from_elf, nelf, sym, &bk->res);
		kb_resources elf;
		if (!found)
			bk->res.kernel = kb_xstrdup(sym);
		else if (find_resources(from_elf, nelf, sym, &elf)) { /* the log has no .maxntid */
			bk->res.max_threads = elf.max_threads;
			free(elf.kernel);
		}
		kb_compile_ptx_setmaxnreg(out->ptx, sym, &bk->res);
		if (!is_spec_kernel(spec, ks, k))
			continue;
		if (!found && !compiled(sym, out)) {
			char *line = kb_src_line(src->text, k->line);
			const char *at = line ? strstr(line, k->name) : NULL;
			int col = at ? (int)(at - line) + 1 : 0;
			free(line);
			kb_diag_add(&b->diags, KB_DIAG_ERROR, src->path, src->text, k->line, col,
				    (int)strlen(k->name),
				    "kernel '%s' is not in the compiled code: the compiler never saw it "
				    "(is it inside #if, or after a byte that ended the file?)", k->name);
			rc = KB_ECOMPILE;
		}
		add_occupancy(src, spec, b->sm, bk);
	}
	free_resources(from_log, nlog > 0 ? nlog : 0);
	free_resources(from_elf, nelf > 0 ? nelf : 0);
	return rc;
}

int kb_compile_build_sass(const char *key, const void *cubin, size_t cubin_len, kb_sass *sass)
{
	memset(sass, 0, sizeof *sass);
	kb_compile__out cached = {0};
	if (key && kb_compile__cache_load_sass(key, &cached) == 0 && cached.sass_text) {
		kb_compile_sass_parse(cached.sass_text, sass);
		sass->available = true;
		sass->tool = kb_xstrdup(cached.sass_tool ? cached.sass_tool : "nvdisasm");
		kb_compile__out_free(&cached);
		return KB_OK;
	}
	kb_compile__out_free(&cached);
	kb_err err = {0};
	int rc = kb_compile_sass(cubin, cubin_len, sass, &err);
	if (rc < 0) {
		sass->available = false;
		sass->unavailable_why = kb_xasprintf("disassembler failed: %s", err.msg);
	} else if (key && sass->available && sass->text) {
		kb_compile__cache_store_sass(key, sass->tool, sass->text);
	}
	return rc;
}

void kb_compile_build_take_sass(kb_build *b, kb_sass *sass, double ms)
{
	kb_compile_sass_free(&b->sass);
	b->sass = *sass;
	memset(sass, 0, sizeof *sass);
	for (int i = 0; i < b->nkernels; i++) {
		kb_compile_sass_mix_free(b->kernels[i].mix, b->kernels[i].nmix);
		b->kernels[i].mix = NULL;
		b->kernels[i].nmix = 0;
		for (int f = 0; f < b->sass.nfuncs; f++)
			if (!strcmp(b->sass.funcs[f].name, b->kernels[i].lowered))
				b->kernels[i].nmix = kb_compile_sass_mix(&b->sass.funcs[f],
									 &b->kernels[i].mix);
	}
	b->ms_sass = ms;
}

static void add_sass(const char *key, kb_compile__out *out, kb_build *b)
{
	double t0 = kb_now_ms();
	kb_sass sass = {0};
	if (out->sass_text) {
		kb_compile_sass_parse(out->sass_text, &sass);
		sass.available = true;
		sass.tool = kb_xstrdup(out->sass_tool ? out->sass_tool : "nvdisasm");
	} else {
		kb_compile_build_sass(NULL, out->cubin, out->cubin_len, &sass);
		if (sass.available && sass.text)
			kb_compile__cache_store_sass(key, sass.tool, sass.text);
	}
	kb_compile_build_take_sass(b, &sass, kb_now_ms() - t0);
}

/* ---- the pipeline ---------------------------------------------------- */

static int run_compiler(const kb_source *src, const strv *o, const strv *names,
			kb_compile__out *out, kb_build *b, kb_err *err)
{
	double t0 = kb_now_ms();
	int rc;
	if (src->kind == KB_SRC_PTX) {
		rc = kb_compile__nvjitlink(src, (const char *const *)o->v, o->n, out, &b->diags, err);
		b->ms_nvjitlink = kb_now_ms() - t0;
	} else {
		rc = kb_compile__nvrtc(src, (const char *const *)o->v, o->n,
				       (const char *const *)names->v, names->n, out, &b->diags, err);
		b->ms_nvrtc = kb_now_ms() - t0;
	}
	/* Loaded by now, when it could be. */
	out->compiler = kb_xstrdup(src->kind == KB_SRC_PTX ? kb_compile__nvjitlink_version()
							   : kb_compile__nvrtc_version());
	return rc;
}

/* The line of a compiler's log that says why it failed: the first naming an
 * error ("ptxas error   : ... uses too much shared data"), else the first
 * with any words.  ptxas puts its info lines ("0 bytes gmem") first, so the
 * first line alone can say nothing of why.  *named: an error was named. */
static void why_line(const char *log, const char **line, int *len, bool *named)
{
	const char *first = NULL;
	*named = false;
	for (const char *l = log; *l;) {
		int n = (int)strcspn(l, "\n");
		const char *w = l;
		while (w < l + n && (*w == ' ' || *w == '\t'))
			w++;
		if (w < l + n && !first)
			first = w;
		for (const char *p = w; p + 5 <= l + n; p++)
			if (!strncmp(p, "error", 5) || !strncmp(p, "fatal", 5)) {
				*line = w, *len = (int)(l + n - w), *named = true;
				return;
			}
		l += n + (l[n] == '\n');
	}
	*line = first ? first : "(no message)";
	*len = (int)strcspn(*line, "\n");
}

/* NVRTC fails a kernel whose static __shared__ passes the 48 KiB a block
 * may declare with no error in its log, only ptxas's "Used ... N bytes
 * smem": say so.  0 when the log shows no such kernel. */
static long long static_smem_over(const char *log)
{
	long long worst = 0;
	for (const char *p = log; (p = strstr(p, " bytes smem")); p++) {
		const char *d = p;
		while (d > log && d[-1] >= '0' && d[-1] <= '9')
			d--;
		long long v = strtoll(d, NULL, 10);
		if (v > 48 * 1024 && v > worst)
			worst = v;
	}
	return worst;
}

/* The compiler's complaints about the user's options at their words, and
 * never a failed compile without a word of why: its log's reason then. */
static void option_diags(const kb_source *src, const char *log, const kb_spec_option *user,
			 int nuser, int rc, kb_build *b)
{
	kb_compile_options_log_diags(src->kind, log ? log : "", user, nuser, src, &b->diags);
	if (rc != KB_ECOMPILE || kb_diag_count(&b->diags, KB_DIAG_ERROR) > 0)
		return;
	const char *l;
	int n;
	bool named;
	why_line(log ? log : "", &l, &n, &named);
	long long smem = named ? 0 : static_smem_over(log ? log : "");
	if (smem)
		kb_diag_add(&b->diags, KB_DIAG_ERROR, src->path, NULL, 0, 0, 1,
			    "%s failed: a kernel declares %lld bytes of static __shared__ memory, past "
			    "the 48 KiB (49152 bytes) a block may declare statically (more needs "
			    "extern __shared__ and a dynamic size; //! launch smem=)",
			    b->compiler, smem);
	else
		kb_diag_add(&b->diags, KB_DIAG_ERROR, src->path, NULL, 0, 0, 1, "%s failed: %.*s",
			    b->compiler, n, l);
}

/* The cache entry for b->key, or a compile (stored when it worked). */
static int load_or_compile(const kb_source *src, const kb_build_opts *opts, const strv *o,
			   const strv *names, const kb_spec_option *user, int nuser,
			   kb_compile__out *out, kb_build *b, kb_err *err)
{
	if (opts->prebuilt && kb_compile__prebuilt_load(opts->prebuilt, out) < 0)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "the request's prebuilt cubin is malformed");
	int hit = opts->prebuilt || opts->no_cache ? KB_ENOTFOUND : kb_compile__cache_load(b->key, out);
	b->cache_damaged = hit == KB_EIO; /* compiled again below; the store replaces it */
	if (opts->prebuilt || hit == KB_OK) {
		b->cache_hit = !opts->prebuilt;
		b->prebuilt = opts->prebuilt != NULL;
		b->compiler = kb_xstrdup(out->compiler ? out->compiler
					 : src->kind == KB_SRC_PTX ? kb_compile__nvjitlink_version()
					 : kb_compile__nvrtc_version());
		/* Warnings are part of the result, hit or miss. */
		if (src->kind == KB_SRC_PTX)
			kb_compile__ptxas_log_diags(out->log, src, NULL, &b->diags);
		else
			kb_compile__nvrtc_log_diags(out->log, src, &b->diags);
		option_diags(src, out->log, user, nuser, 0, b);
		return KB_OK;
	}
	int rc = run_compiler(src, o, names, out, b, err);
	b->compiler = kb_xstrdup(out->compiler);
	/* an arch NVRTC does not know is the command's mistake, not the file's */
	if (rc == KB_ECOMPILE && src->kind != KB_SRC_PTX &&
	    kb_compile__nvrtc_check_arch(b->sm, err) < 0)
		return KB_EINVAL;
	if (rc == KB_OK || rc == KB_ECOMPILE)
		option_diags(src, out->log, user, nuser, rc, b);
	if (rc == KB_OK)
		kb_compile__cache_store(b->key, out);
	return rc;
}

int kb_compile_build(const kb_source *src, const kb_spec *spec, const kb_kernels *kernels,
		     const kb_build_opts *opts, kb_build *b, kb_err *err)
{
	double t0 = kb_now_ms();
	memset(b, 0, sizeof *b);
	strv o = {0}, names = {0};
	kb_compile__out out = {0};
	int nuser;
	kb_spec_option *user = user_options(spec, opts, &nuser);
	int rc = kb_compile_arch_parse(opts->arch, &b->sm);
	if (rc < 0) {
		rc = kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				"bad --arch '%s' (expected e.g. sm_90)", opts->arch);
		goto out;
	}
	b->arch = kb_xstrdup(opts->arch);
	if (src->kind == KB_SRC_PTX)
		ptx_options(opts, user, nuser, &o);
	else
		cuda_options(src, spec, opts, user, nuser, &o), name_expressions(spec, kernels, &names);
	b->key = cache_key(src, &o, &names);
	b->options = kb_xcalloc((size_t)nuser + 1, sizeof *b->options);
	for (b->noptions = 0; b->noptions < nuser; b->noptions++)
		b->options[b->noptions] = kb_xstrdup(user[b->noptions].text);
	rc = load_or_compile(src, opts, &o, &names, user, nuser, &out, b, err);
	if (rc < 0) {
		b->log = out.log ? kb_xstrdup(out.log) : NULL;
		goto out;
	}
	b->log = kb_xstrdup(out.log);
	rc = fill_kernels(src, spec, kernels, &names, &out, b);
	b->ok = rc == KB_OK;
	if (opts->want_sass)
		add_sass(b->key, &out, b);
	b->ptx = out.ptx, b->ptx_len = out.ptx_len, out.ptx = NULL;
	b->cubin = out.cubin, b->cubin_len = out.cubin_len, out.cubin = NULL;
out:
	kb_compile__out_free(&out);
	strv_free(&o);
	strv_free(&names);
	free(user);
	b->ms_total = kb_now_ms() - t0;
	return rc;
}

void kb_compile_build_free(kb_build *b)
{
	free(b->arch);
	free(b->key);
	for (int i = 0; i < b->noptions; i++)
		free(b->options[i]);
	free(b->options);
	free(b->ptx);
	free(b->cubin);
	free(b->log);
	kb_diags_free(&b->diags);
	for (int i = 0; i < b->nkernels; i++) {
		kb_build_kernel *k = &b->kernels[i];
		free(k->name);
		free(k->lowered);
		free(k->res.kernel);
		for (int m = 0; m < k->nmix; m++)
			free(k->mix[m].key);
		free(k->mix);
	}
	free(b->kernels);
	kb_compile_sass_free(&b->sass);
	free(b->compiler);
	memset(b, 0, sizeof *b);
}
