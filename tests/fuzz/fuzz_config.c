/* fuzz_config.c - the LLM config file reader (llm_bridge/config.c): the
 * input is written as $XDG_CONFIG_HOME/kbench/config (a private folder of
 * this process) and loaded as kbench loads it, then the key redactor runs
 * over the same text. */
#include "../../src/llm_bridge/llm_bridge.h"
#include "fuzz.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char *path;

static void setup(void)
{
	const char *dir = fuzz_tmpdir("config");
	setenv("XDG_CONFIG_HOME", dir, 1);
	path = kb_xasprintf("%s/kbench", dir);
	mkdir(path, 0700);
	free(path);
	path = kb_llm_config_path();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path)
		setup();
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);
	kb_llm_config c = {0};
	kb_err err = {0};
	(void)kb_llm_config_load(&c, &err);
	kb_llm_config_free(&c);
	char *text = fuzz_text(data, size);
	kb_buf out = KB_BUF_INIT;
	kb_llm_redact(text, "sk-fuzz0123456789", &out);
	kb_buf_free(&out);
	free(text);
	return 0;
}
