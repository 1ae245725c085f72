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
 * A file damaged after it was written (a disk error, a truncation, someone's
 * edit) must not be a hit either: `ok` lists the SHA-256 of every file of
 * the entry ("<hex>  <name>" lines, what `sha256sum -c ok` checks), and a
 * load that finds one missing or different reports the entry as damaged
 * (KB_EIO): the caller compiles again and the store replaces the entry.
 * sass.ok does the same for the SASS files, written after them.  An `ok`
 * without sums (kbench before them) is a plain miss.
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

static void sum_of(const void *p, size_t n, char hex[KB_HASH_HEX])
{
	kb_hasher *h = kb_hash_new();
	kb_hash_update(h, p, n);
	kb_hash_final(h, hex);
}

/* Checks every "<hex>  <name>" line of the manifest `list` (sums of the
 * entry's files).  KB_OK, KB_ENOTFOUND for a manifest without sums, or
 * KB_EIO naming the first file missing or changed in *bad. */
static int verify(const char *key, const char *list, const char **bad)
{
	int n = 0;
	for (const char *l = list; l && *l; l += strcspn(l, "\n"), l += *l == '\n') {
		char name[32], want[KB_HASH_HEX], got[KB_HASH_HEX];
		size_t len = 0;
		if (sscanf(l, "%64[0-9a-f]  %31[^\n]", want, name) != 2)
			return KB_EIO;
		char *data = read_entry(key, name, &len);
		if (data)
			sum_of(data, len, got);
		free(data);
		if (!data || strcmp(got, want)) {
			*bad = strstr(l, name); /* points into list */
			return KB_EIO;
		}
		n++;
	}
	return n ? KB_OK : KB_ENOTFOUND;
}

/* Checks the entry against its manifest (ok or sass.ok): KB_OK, KB_ENOTFOUND
 * (no manifest, or one without sums), or KB_EIO for a damaged entry, logged
 * (the caller then compiles or disassembles again). */
static int checked(const char *key, const char *manifest)
{
	char *list = read_entry(key, manifest, NULL);
	const char *bad = NULL;
	int rc = list ? verify(key, list, &bad) : KB_ENOTFOUND;
	if (rc == KB_EIO)
		kb_log("compile cache: entry %.16s is damaged (%.*s missing or changed since %s was "
		       "written): made again", key, (int)strcspn(bad ? bad : "?", "\n"),
		       bad ? bad : "?", manifest);
	free(list);
	return rc;
}

static void parse_lowered(char *text, kb_compile__out *out)
{
	int cap = 0;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		*KB_PUSH(out->lowered, out->nlowered, cap) = strcmp(l, "-") ? kb_xstrdup(l) : NULL;
}

int kb_compile__cache_load(const char *key, kb_compile__out *out)
{
	int rc = checked(key, "ok");
	if (rc < 0)
		return rc;
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
	kb_compile__cache_load_sass(key, out);
	return KB_OK;
}

int kb_compile__cache_load_sass(const char *key, kb_compile__out *out)
{
	if (checked(key, "sass.ok") < 0)
		return KB_ENOTFOUND; /* disassembled again */
	out->sass_text = read_entry(key, "sass.txt", NULL);
	out->sass_tool = read_entry(key, "sass.tool", NULL);
	return out->sass_text ? KB_OK : KB_ENOTFOUND;
}

/* Writes one file of the entry and adds its sum to the manifest. */
static void put(const char *key, const char *file, const void *p, size_t n, kb_buf *manifest)
{
	char *path = entry_path(key, file);
	char hex[KB_HASH_HEX];
	if (kb_file_write(path, p, n, NULL) < 0)
		kb_log("compile cache: cannot write %s", path);
	sum_of(p, n, hex);
	if (manifest)
		kb_buf_catf(manifest, "%s  %s\n", hex, file);
	free(path);
}

void kb_compile__cache_store(const char *key, const kb_compile__out *out)
{
	char *dir = entry_path(key, NULL);
	int rc = kb_mkdirs(dir, NULL);
	free(dir);
	if (rc < 0)
		return; /* a read-only cache costs speed, never correctness */
	kb_buf lowered = KB_BUF_INIT, sums = KB_BUF_INIT;
	for (int i = 0; i < out->nlowered; i++)
		kb_buf_catf(&lowered, "%s\n", out->lowered[i] ? out->lowered[i] : "-");
	put(key, "out.cubin", out->cubin, out->cubin_len, &sums);
	put(key, "out.ptx", out->ptx, out->ptx_len, &sums);
	put(key, "out.log", out->log, strlen(out->log), &sums);
	put(key, "lowered", lowered.s ? lowered.s : "", lowered.len, &sums);
	if (out->compiler)
		put(key, "compiler", out->compiler, strlen(out->compiler), &sums);
	put(key, "ok", sums.s, sums.len, NULL);
	kb_buf_free(&sums);
	kb_buf_free(&lowered);
}

void kb_compile__cache_store_sass(const char *key, const char *tool, const char *text)
{
	kb_buf sums = KB_BUF_INIT;
	put(key, "sass.txt", text, strlen(text), &sums);
	put(key, "sass.tool", tool, strlen(tool), &sums);
	put(key, "sass.ok", sums.s, sums.len, NULL);
	kb_buf_free(&sums);
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
