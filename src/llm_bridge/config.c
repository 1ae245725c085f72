/*
 * config.c - where the model is: defaults, then the config file
 * ($XDG_CONFIG_HOME/kbench/config, `key = value` lines, docs/llm.md), then
 * $KBENCH_LLM_* variables; flags are applied by the caller last.  The key
 * itself is never a setting: the file names the environment variable that
 * holds it (key_env) or a file of mode 0600 (key_file), and a line that
 * looks like a key is refused, so that a config file can be shared, pasted
 * into an issue or committed without leaking anything.
 */
#include "llm_bridge_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *kb_llm__config_dir(const char *sub)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		return kb_xasprintf("%s/kbench/%s", xdg, sub);
	return kb_xasprintf("%s/.config/kbench/%s", home && *home ? home : "/tmp", sub);
}

char *kb_llm_config_path(void)
{
	return kb_llm__config_dir("config");
}

void kb_llm_config_set(char **field, const char *value)
{
	free(*field);
	*field = value ? kb_xstrdup(value) : NULL;
}

void kb_llm_config_free(kb_llm_config *c)
{
	free(c->base_url);
	free(c->model);
	free(c->key_env);
	free(c->key_file);
	free(c->command);
	free(c->source);
	memset(c, 0, sizeof *c);
}

static void defaults(kb_llm_config *c)
{
	memset(c, 0, sizeof *c);
	c->base_url = kb_xstrdup("https://api.openai.com/v1");
	c->model = kb_xstrdup("gpt-4o");
	c->key_env = kb_xstrdup("OPENAI_API_KEY");
	c->timeout_s = 300;
	c->stall_s = 60;
	c->connect_s = 10;
	c->retries = 3;
	c->stream = true;
	c->max_tokens = 0;
	c->temperature = -1;
	c->source = kb_xstrdup("defaults");
}

static bool parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "on"))
		return *out = true, true;
	if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "off"))
		return *out = false, true;
	return false;
}

static bool parse_num(const char *v, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end)
		return false;
	*out = d;
	return true;
}

/* Sets setting `k` (without the "llm." prefix) to v; false when k is unknown
 * or v is not of its kind. */
static bool set_one(kb_llm_config *c, const char *k, const char *v)
{
	struct { const char *name; char **field; } strs[] = {
		{"base_url", &c->base_url}, {"model", &c->model}, {"key_env", &c->key_env},
		{"key_file", &c->key_file}, {"command", &c->command},
	};
	struct { const char *name; double *field; } nums[] = {
		{"timeout", &c->timeout_s}, {"stall_timeout", &c->stall_s},
		{"connect_timeout", &c->connect_s}, {"temperature", &c->temperature},
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(strs); i++)
		if (!strcmp(k, strs[i].name))
			return kb_llm_config_set(strs[i].field, *v ? v : NULL), true;
	for (size_t i = 0; i < KB_ARRAY_LEN(nums); i++)
		if (!strcmp(k, nums[i].name))
			return parse_num(v, nums[i].field);
	double d; /* counts: 0 .. INT_MAX (1e99 and inf are no int) */
	if (!strcmp(k, "retries") && parse_num(v, &d) && d >= 0 && d <= INT_MAX)
		return c->retries = (int)d, true;
	if (!strcmp(k, "max_tokens") && parse_num(v, &d) && d >= 0 && d <= INT_MAX)
		return c->max_tokens = (int)d, true;
	if (!strcmp(k, "stream"))
		return parse_bool(v, &c->stream);
	return false;
}

/* Whether a setting's name or value says it is a key: never kept in a file
 * that is not 0600, and never echoed back (the message names the line). */
static bool looks_secret(const char *k, const char *v)
{
	if (!strcmp(k, "key") || !strcmp(k, "api_key") || !strcmp(k, "token"))
		return true;
	return !strncmp(v, "sk-", 3) || !strncmp(v, "Bearer ", 7);
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* One line of the file; 0 or KB_EINVAL with err naming path:line. */
static int config_line(kb_llm_config *c, char *line, const char *path, int lineno, kb_err *err)
{
	char *s = trim(line);
	if (!*s || *s == '#' || *s == ';' || !strcmp(s, "[llm]"))
		return 0;
	char *eq = strchr(s, '=');
	if (!eq)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s:%d: expected `name = value`", path, lineno);
	*eq = 0;
	char *k = trim(s), *v = trim(eq + 1);
	if (!strncmp(k, "llm.", 4))
		k += 4;
	if (looks_secret(k, v))
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s:%d: a key does not belong in the config file: name the "
				  "environment variable holding it (key_env = NAME) or a file "
				  "of mode 0600 (key_file = PATH)", path, lineno);
	if (!set_one(c, k, v))
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0,
				  "%s:%d: unknown setting or bad value for '%s' (docs/llm.md)",
				  path, lineno, k);
	return 0;
}

static int read_file(kb_llm_config *c, const char *path, kb_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0; /* no file: defaults */
	char line[4096];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f))
		rc = config_line(c, line, path, ++lineno, err);
	fclose(f);
	if (rc == 0)
		kb_llm_config_set(&c->source, path);
	return rc;
}

/* $KBENCH_LLM_<NAME> for each setting. */
static int read_env(kb_llm_config *c, kb_err *err)
{
	static const char *const names[] = {
		"base_url", "model", "key_env", "key_file", "command", "timeout", "stall_timeout",
		"connect_timeout", "retries", "max_tokens", "temperature", "stream",
	};
	for (size_t i = 0; i < KB_ARRAY_LEN(names); i++) {
		char var[64];
		snprintf(var, sizeof var, "KBENCH_LLM_%s", names[i]);
		for (char *p = var; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		const char *v = getenv(var);
		if (!v || !*v)
			continue;
		if (!set_one(c, names[i], v))
			return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "$%s: bad value", var);
	}
	return 0;
}

int kb_llm_config_load(kb_llm_config *c, kb_err *err)
{
	defaults(c);
	char *path = kb_llm_config_path();
	int rc = read_file(c, path, err);
	free(path);
	if (rc == 0)
		rc = read_env(c, err);
	return rc;
}

/* ---- the key ---- */

static int key_from_file(const char *path, char *key, size_t n, kb_err *err)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_OS, errno,
				  "key_file %s: %s", path, strerror(errno));
	if (st.st_mode & 077)
		return kb_err_set(err, KB_EPERM, KB_DOM_OS, 0,
				  "key_file %s is readable by others (mode %03o): "
				  "chmod 600 %s", path, (unsigned)(st.st_mode & 0777), path);
	FILE *f = fopen(path, "r");
	if (!f || !fgets(key, (int)n, f)) {
		if (f)
			fclose(f);
		return kb_err_set(err, KB_EIO, KB_DOM_OS, errno, "key_file %s: cannot read it", path);
	}
	fclose(f);
	key[strcspn(key, "\r\n")] = 0;
	return 0;
}

int kb_llm_key(const kb_llm_config *c, char *key, size_t n, kb_err *err)
{
	key[0] = 0;
	const char *v = c->key_env && *c->key_env ? getenv(c->key_env) : NULL;
	if (v && *v) {
		if (strlen(v) >= n)
			return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "$%s is too long",
					  c->key_env);
		memcpy(key, v, strlen(v) + 1);
		return 0;
	}
	if (c->key_file && *c->key_file)
		return key_from_file(c->key_file, key, n, err);
	return 0; /* local servers (vLLM, llama.cpp, Ollama) need none */
}

static bool key_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '-' || ch == '_';
}

void kb_llm_redact(const char *s, const char *key, kb_buf *out)
{
	size_t klen = key ? strlen(key) : 0;
	while (s && *s) {
		if (klen >= 4 && !strncmp(s, key, klen)) {
			kb_buf_cat(out, "[redacted]");
			s += klen;
			continue;
		}
		if (!strncmp(s, "sk-", 3)) {
			size_t m = 3;
			while (key_char(s[m]))
				m++;
			if (m >= 11) {
				kb_buf_cat(out, "[redacted]");
				s += m;
				continue;
			}
		}
		kb_buf_catc(out, *s++);
	}
	if (!out->s)
		kb_buf_cat(out, "");
}
