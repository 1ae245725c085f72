/*
 * test_llm_bridge.c - the LLM bridge's pure parts: code blocks of answers,
 * unified diffs applied by context, candidates and their verdicts (no
 * code, not applying, spec changed), prompt templates, the config file and
 * the key's hygiene (redaction, 0600 key files, keys refused in the config).
 * The providers are tested end to end by tests/cli/llm.sh.  No GPU needed.
 */
#include "t.h"

#include "../../src/llm_bridge/llm_bridge.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char base[] =
	"// a kernel\n"
	"//! arg n = 1024\n"
	"//! launch grid=(4) block=(256)\n"
	"//! tol rtol=1e-6\n"
	"__global__ void k(float *x, int n)\n"
	"{\n"
	"\tint i = threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\tx[i] = 1;\n"
	"}\n";

static void test_llm_bridge__blocks(void)
{
	kb_llm_block *b;
	int n = kb_llm_blocks("text\n```cuda\nint a;\n```\nmore\n```diff\n@@ -1 +1 @@\n-a\n+b\n```\n"
			      "```cuda\nunclosed\n", &b);
	T_EQ_INT(n, 2);
	T_EQ_INT(b[0].kind, KB_LLM_BLOCK_FILE);
	T_EQ_STR(b[0].lang, "cuda");
	T_EQ_STR(b[0].text, "int a;\n");
	T_EQ_INT(b[1].kind, KB_LLM_BLOCK_DIFF);
	kb_llm_blocks_free(b, n);
}

static void test_llm_bridge__patch_by_context(void)
{
	/* wrong line numbers (models miscount): placed by context */
	const char *d = "--- a/k.cu\n+++ b/k.cu\n@@ -30,3 +30,3 @@\n \tint i = threadIdx.x;\n"
			"-\tif (i < n)\n+\tif (i < n && i >= 0)\n \t\tx[i] = 1;\n";
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	T_EQ_INT(kb_llm_patch(base, d, &out, &err), 0);
	T_CONTAINS(out.s, "\tif (i < n && i >= 0)\n\t\tx[i] = 1;\n}\n");
	T_OK(!strstr(out.s, "\tif (i < n)\n"));
	kb_buf_free(&out);
}

static void test_llm_bridge__patch_not_applying(void)
{
	const char *d = "@@ -5,2 +5,2 @@\n int nowhere = 0;\n-\tx[i] = 1;\n+\tx[i] = 2;\n";
	kb_buf out = KB_BUF_INIT;
	kb_err err = {0};
	T_EQ_INT(kb_llm_patch(base, d, &out, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "hunk 1 of 1");
	T_CONTAINS(err.msg, "the file has no line 'int nowhere = 0;'");
	T_OK(!out.s);
	kb_buf_free(&out);
}

static void test_llm_bridge__candidate_whole_file(void)
{
	char *t = NULL;
	kb_buf why = KB_BUF_INIT;
	char *ans = kb_xasprintf("Faster:\n```cuda\n%s// tuned\n```\n", base);
	T_EQ_INT(kb_llm_candidate(base, ans, &t, &why), KB_LLM_OK);
	T_CONTAINS(t, "// tuned");
	free(t), free(ans);
	/* a launch change is allowed */
	ans = kb_xasprintf("```cuda\n%s```\n", base);
	char *p = strstr(ans, "block=(256)");
	memcpy(p, "block=(128)", 11);
	T_EQ_INT(kb_llm_candidate(base, ans, &t, &why), KB_LLM_OK);
	free(t), free(ans);
	kb_buf_free(&why);
}

static void test_llm_bridge__candidate_verdicts(void)
{
	char *t = NULL;
	kb_buf why = KB_BUF_INIT;
	T_EQ_INT(kb_llm_candidate(base, "use shared memory", &t, &why), KB_LLM_NO_CODE);
	T_CONTAINS(why.s, "no code block with a kernel");
	kb_buf_reset(&why);
	/* a snippet without a kernel is no proposal either */
	T_EQ_INT(kb_llm_candidate(base, "```cuda\nint x;\n```\n", &t, &why), KB_LLM_NO_CODE);
	kb_buf_reset(&why);
	char *ans = kb_xasprintf("```cuda\n%s```\n", base);
	char *p = strstr(ans, "rtol=1e-6");
	memcpy(p, "rtol=1e-1", 9);
	T_EQ_INT(kb_llm_candidate(base, ans, &t, &why), KB_LLM_SPEC_CHANGED);
	T_CONTAINS(why.s, "//! tol rtol=1e-6");
	T_OK(!t);
	free(ans);
	kb_buf_reset(&why);
	T_EQ_INT(kb_llm_candidate(base, "```diff\n@@ -1 +1 @@\n-nothing\n+x\n```\n", &t, &why),
		 KB_LLM_NOT_APPLYING);
	T_CONTAINS(why.s, "does not apply");
	kb_buf_free(&why);
}

static void test_llm_bridge__prompt_fill(void)
{
	json_t *vars = json_pack("{s:s, s:s}", "kernel", "k", "spec", "");
	kb_buf out = KB_BUF_INIT;
	kb_llm_prompt_fill("{{kernel}}: {{spec}} {{history}} {{unknown}} {{", vars, &out);
	T_EQ_STR(out.s, "k: (none) (none) {{unknown}} {{");
	kb_buf_free(&out);
	json_decref(vars);
	for (int i = 0; kb_llm_template_names[i]; i++)
		T_OK(kb_llm_template_builtin(kb_llm_template_names[i]) != NULL);
}

static void test_llm_bridge__redact(void)
{
	kb_buf out = KB_BUF_INIT;
	kb_llm_redact("bad key sk-test-0123456789abcdef and mykey-xyz here, sk-no", "mykey-xyz", &out);
	T_EQ_STR(out.s, "bad key [redacted] and [redacted] here, sk-no");
	kb_buf_free(&out);
}

/* A private config folder with `text` as its config file. */
static char *config_dir(const char *text)
{
	char tmpl[] = "/tmp/kb-llm-test.XXXXXX";
	char *dir = kb_xstrdup(mkdtemp(tmpl));
	char *sub = kb_xasprintf("%s/kbench", dir), *path = kb_xasprintf("%s/config", sub);
	kb_mkdirs(sub, NULL);
	kb_file_write(path, text, strlen(text), NULL);
	setenv("XDG_CONFIG_HOME", dir, 1);
	free(sub), free(path);
	return dir;
}

static void test_llm_bridge__config(void)
{
	char *dir = config_dir("# x\n[llm]\nllm.base_url = http://h/v1\nmodel = m\nretries = 5\n"
			       "stream = no\n");
	setenv("KBENCH_LLM_MODEL", "from-env", 1);
	kb_llm_config c;
	kb_err err = {0};
	T_EQ_INT(kb_llm_config_load(&c, &err), 0);
	T_EQ_STR(c.base_url, "http://h/v1");
	T_EQ_STR(c.model, "from-env");
	T_EQ_INT(c.retries, 5);
	T_OK(!c.stream);
	T_EQ_STR(kb_llm_provider_for(&c)->name, "http");
	kb_llm_config_free(&c);
	unsetenv("KBENCH_LLM_MODEL");
	free(config_dir("api_key = sk-test-secretsecret\n"));
	T_EQ_INT(kb_llm_config_load(&c, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "a key does not belong");
	T_OK(!strstr(err.msg, "secretsecret"));
	kb_llm_config_free(&c);
	/* counts past INT_MAX are bad values (found by tests/fuzz/fuzz_config.c) */
	const char *too_big[] = {"retries = 4e10\n", "max_tokens = inf\n", "retries = 1e999\n"};
	for (size_t i = 0; i < KB_ARRAY_LEN(too_big); i++) {
		free(config_dir(too_big[i]));
		T_EQ_INT(kb_llm_config_load(&c, &err), KB_EINVAL);
		kb_llm_config_free(&c);
	}
	free(config_dir("bogus = 1\n"));
	T_EQ_INT(kb_llm_config_load(&c, &err), KB_EINVAL);
	T_CONTAINS(err.msg, "config:1: unknown setting");
	kb_llm_config_free(&c);
	free(dir);
}

static void test_llm_bridge__key_file_mode(void)
{
	char path[] = "/tmp/kb-llm-key.XXXXXX";
	int fd = mkstemp(path);
	T_OK(write(fd, "sk-test-filekey123\n", 19) == 19);
	close(fd);
	chmod(path, 0644);
	kb_llm_config c = {.key_file = path};
	char key[128];
	kb_err err = {0};
	unsetenv("KBENCH_NO_SUCH_VAR");
	c.key_env = "KBENCH_NO_SUCH_VAR";
	T_EQ_INT(kb_llm_key(&c, key, sizeof key, &err), KB_EPERM);
	T_CONTAINS(err.msg, "chmod 600");
	T_OK(!strstr(err.msg, "filekey"));
	chmod(path, 0600);
	T_EQ_INT(kb_llm_key(&c, key, sizeof key, &err), 0);
	T_EQ_STR(key, "sk-test-filekey123");
	unlink(path);
}

static void test_llm_bridge__request_body(void)
{
	kb_llm_config c = {.model = "m", .stream = true, .max_tokens = 100, .temperature = -1};
	json_t *msgs = json_pack("[{s:s, s:s}]", "role", "user", "content", "hi");
	json_t *b = kb_llm_request_body(&c, msgs);
	T_EQ_STR(json_string_value(json_object_get(b, "model")), "m");
	T_OK(json_is_true(json_object_get(b, "stream")));
	T_EQ_INT(json_integer_value(json_object_get(b, "max_tokens")), 100);
	T_OK(!json_object_get(b, "temperature"));
	kb_buf t = KB_BUF_INIT;
	kb_llm_messages_text(msgs, &t);
	T_EQ_STR(t.s, "### user\n\nhi\n");
	kb_buf_free(&t);
	json_decref(b);
	json_decref(msgs);
}

static void test_llm_bridge__gist(void)
{
	char g[32];
	kb_llm_gist("```cuda\nint x;\n```\n\n## **Use float4 loads** to halve the requests\n", g, sizeof g);
	T_EQ_STR(g, "Use float4 loads** to halve the");
	kb_llm_gist("", g, sizeof g);
	T_EQ_STR(g, "");
}

int main(void)
{
	T_RUN(test_llm_bridge__blocks);
	T_RUN(test_llm_bridge__patch_by_context);
	T_RUN(test_llm_bridge__patch_not_applying);
	T_RUN(test_llm_bridge__candidate_whole_file);
	T_RUN(test_llm_bridge__candidate_verdicts);
	T_RUN(test_llm_bridge__prompt_fill);
	T_RUN(test_llm_bridge__redact);
	T_RUN(test_llm_bridge__config);
	T_RUN(test_llm_bridge__key_file_mode);
	T_RUN(test_llm_bridge__request_body);
	T_RUN(test_llm_bridge__gist);
	return t_report();
}
