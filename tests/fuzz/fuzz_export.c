/* fuzz_export.c - the exported-session reader (session/export.c) and the
 * git-note Result decoding of the variants it commits (session/store.c).
 * The input is an export's manifest.json, then a NUL byte, then the text
 * of every variant's result file; the folder also holds v1.cu and a
 * journal.  Each run imports the folder as session "fuzz" under a private
 * $XDG_DATA_HOME, lists the variants of every file (reading their notes)
 * and removes the session again. */
#include "../../src/session/session.h"
#include "fuzz.h"

#include <stdio.h>
#include <unistd.h>

static char *folder, *data_dir;

static void put(const char *name, const void *p, size_t n)
{
	char *path = kb_xasprintf("%s/%s", folder, name);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(p, 1, n, f);
	fclose(f);
	free(path);
}

static void setup(void)
{
	const char *dir = fuzz_tmpdir("export");
	folder = kb_xasprintf("%s/export", dir);
	data_dir = kb_xasprintf("%s/data", dir);
	setenv("XDG_DATA_HOME", data_dir, 1);
	/* as tests/unit/test_session.c: no user or system git configuration */
	char *cfg = kb_xasprintf("%s/.gitconfig", dir);
	const char *gitcfg = "[user]\n\tname = Fuzz\n\temail = fuzz@example.com\n";
	kb_file_write(cfg, gitcfg, strlen(gitcfg), NULL);
	free(cfg);
	setenv("HOME", dir, 1);
	setenv("XDG_CONFIG_HOME", dir, 1);
	setenv("GIT_CEILING_DIRECTORIES", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	if (mkdir(folder, 0700) < 0 || mkdir(data_dir, 0700) < 0)
		abort();
	const char src[] = "//! arg n = 4\n__global__ void k(float *x, int n) { }\n";
	put("v1.cu", src, sizeof src - 1);
	put("journal.jsonl", "{\"event\":\"run\"}\n", 16);
}

/* Lists the variants of each file the manifest names: every note read. */
static void list_variants(const kb_session *s, const uint8_t *manifest, size_t len)
{
	json_t *m = json_loadb((const char *)manifest, len, 0, NULL);
	json_t *files = json_object_get(m, "files");
	for (size_t i = 0; i < json_array_size(files); i++) {
		const char *path = json_string_value(json_object_get(json_array_get(files, i), "path"));
		kb_store *st = NULL;
		kb_variant *vs = NULL;
		int n = 0;
		kb_err err = {0};
		if (path && kb_session_store_open(s, path, &st, &err) == 0 &&
		    kb_session_store_list(st, &vs, &n, &err) == 0)
			kb_session_variants_free(vs, n);
		kb_session_store_close(st);
	}
	json_decref(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!folder)
		setup();
	const uint8_t *nul = memchr(data, 0, size);
	size_t mlen = nul ? (size_t)(nul - data) : size;
	put("manifest.json", data, mlen);
	put("r1.json", nul ? nul + 1 : (const uint8_t *)"", nul ? size - mlen - 1 : 0);
	kb_session s;
	kb_err err = {0};
	if (kb_session_import(folder, "fuzz", &s, &err) == 0) {
		list_variants(&s, data, mlen);
		kb_session_free(&s);
	}
	fuzz_rm_tree(data_dir);
	mkdir(data_dir, 0700);
	return 0;
}
