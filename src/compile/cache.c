/*
 * cache.c - the content-addressed compile cache.
 * An entry is a directory $XDG_CACHE_HOME/kbench/compile/<sha256>/ holding
 * out.cubin, out.ptx, out.log, lowered (one lowered name per line, "-" for
 * none), compiler (the version that made it: "nvrtc 13.0", shown on a hit
 * without loading the compiler) and, once a disassembler has seen it,
 * sass.txt and sass.tool.
 * The key (computed in build.c) covers everything that decides the output,
 * so an entry is never invalidated, only written whole: files are renamed
 * into place and the `ok` marker is written last, so a half-written entry
 * (a crash mid-store) is a miss, never a wrong hit.
 */
#include "compile_int.h"

#include <stdlib.h>
#include <string.h>

static char *entry_path(const char *key, const char *file)
{
	char *dir = kb_cache_dir("compile");
	char *p = file ? kb_xasprintf("%s/%.2s/%s/%s", dir, key, key + 2, file)
		       : kb_xasprintf("%s/%.2s/%s", dir, key, key + 2);
	free(dir);
	return p;
}

static char *read_entry(const char *key, const char *file, size_t *len)
{
	char *p = entry_path(key, file);
	kb_buf b = KB_BUF_INIT;
	int rc = kb_file_read(p, &b, NULL);
	free(p);
	if (rc < 0) {
		kb_buf_free(&b);
		return NULL;
	}
	if (len)
		*len = b.len;
	return kb_buf_detach(&b);
}

static void parse_lowered(char *text, kb_compile__out *out)
{
	int cap = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		*KB_PUSH(out->lowered, out->nlowered, cap) = strcmp(l, "-") ? kb_xstrdup(l) : NULL;
}

int kb_compile__cache_load(const char *key, kb_compile__out *out)
{
	char *ok = entry_path(key, "ok");
	bool present = kb_file_exists(ok);
	free(ok);
	if (!present)
		return KB_ENOTFOUND;
	char *lowered = read_entry(key, "lowered", NULL);
	out->cubin = read_entry(key, "out.cubin", &out->cubin_len);
	out->ptx = read_entry(key, "out.ptx", &out->ptx_len);
	out->log = read_entry(key, "out.log", NULL);
	if (!lowered || !out->cubin || !out->ptx || !out->log) {
		free(lowered);
		kb_compile__out_free(out);
		return KB_ENOTFOUND;
	}
	parse_lowered(lowered, out);
	free(lowered);
	out->compiler = read_entry(key, "compiler", NULL);
	out->sass_text = read_entry(key, "sass.txt", NULL);
	out->sass_tool = read_entry(key, "sass.tool", NULL);
	return KB_OK;
}

int kb_compile__cache_load_sass(const char *key, kb_compile__out *out)
{
	out->sass_text = read_entry(key, "sass.txt", NULL);
	out->sass_tool = read_entry(key, "sass.tool", NULL);
	return out->sass_text ? KB_OK : KB_ENOTFOUND;
}

static void put(const char *key, const char *file, const void *p, size_t n)
{
	char *path = entry_path(key, file);
	if (kb_file_write(path, p, n, NULL) < 0)
		kb_log("compile cache: cannot write %s", path);
	free(path);
}

void kb_compile__cache_store(const char *key, const kb_compile__out *out)
{
	char *dir = entry_path(key, NULL);
	int rc = kb_mkdirs(dir, NULL);
	free(dir);
	if (rc < 0)
		return; /* a read-only cache costs speed, never correctness */
	kb_buf lowered = KB_BUF_INIT;
	for (int i = 0; i < out->nlowered; i++)
		kb_buf_catf(&lowered, "%s\n", out->lowered[i] ? out->lowered[i] : "-");
	put(key, "out.cubin", out->cubin, out->cubin_len);
	put(key, "out.ptx", out->ptx, out->ptx_len);
	put(key, "out.log", out->log, strlen(out->log));
	put(key, "lowered", lowered.s ? lowered.s : "", lowered.len);
	if (out->compiler)
		put(key, "compiler", out->compiler, strlen(out->compiler));
	put(key, "ok", "", 0);
	kb_buf_free(&lowered);
}

void kb_compile__cache_store_sass(const char *key, const char *tool, const char *text)
{
	put(key, "sass.txt", text, strlen(text));
	put(key, "sass.tool", tool, strlen(tool));
}

void kb_compile__out_free(kb_compile__out *o)
{
	free(o->ptx);
	free(o->cubin);
	free(o->log);
	for (int i = 0; i < o->nlowered; i++)
		free(o->lowered[i]);
	free(o->lowered);
	free(o->sass_text);
	free(o->sass_tool);
	free(o->compiler);
	memset(o, 0, sizeof *o);
}

json_t *kb_compile_build_export(const kb_build *b)
{
	kb_compile__out out = {0};
	if (!b->key || kb_compile__cache_load(b->key, &out) < 0)
		return NULL;
	char *cubin = kb_base64_encode(out.cubin, out.cubin_len);
	json_t *lowered = json_array();
	for (int i = 0; i < out.nlowered; i++)
		json_array_append_new(lowered, out.lowered[i] ? json_string(out.lowered[i]) : json_null());
	json_t *j = json_pack("{s:s, s:s%, s:s, s:s?, s:o}", "cubin", cubin, "ptx", out.ptx,
			      out.ptx_len, "log", out.log, "compiler", out.compiler, "lowered", lowered);
	free(cubin);
	kb_compile__out_free(&out);
	return j;
}

int kb_compile__prebuilt_load(json_t *j, kb_compile__out *out)
{
	const char *cubin = json_string_value(json_object_get(j, "cubin"));
	json_t *ptx = json_object_get(j, "ptx");
	const char *log = json_string_value(json_object_get(j, "log"));
	void *bin = NULL;
	if (!cubin || !json_is_string(ptx) || !log ||
	    kb_base64_decode(cubin, &bin, &out->cubin_len) < 0 || out->cubin_len == 0) {
		free(bin);
		return KB_EINVAL;
	}
	out->cubin = bin;
	out->ptx_len = json_string_length(ptx);
	out->ptx = kb_xmalloc(out->ptx_len + 1);
	memcpy(out->ptx, json_string_value(ptx), out->ptx_len + 1);
	out->log = kb_xstrdup(log);
	const char *compiler = json_string_value(json_object_get(j, "compiler"));
	out->compiler = compiler ? kb_xstrdup(compiler) : NULL;
	size_t i;
	json_t *v;
	int cap = 0;
	json_array_foreach(json_object_get(j, "lowered"), i, v)
		*KB_PUSH(out->lowered, out->nlowered, cap) =
			json_is_string(v) ? kb_xstrdup(json_string_value(v)) : NULL;
	return KB_OK;
}
