/*
 * llm_bridge.h - the optional LLM bridge (architecture §8): where a model
 * is (config.c), how a question reaches it (providers: OpenAI-compatible
 * chat completions over libcurl in http.c, any command in command.c, one
 * ops table in provider.c), what the question says (prompt.c: templates
 * filled with a variant's facts) and what comes back (reply.c: code blocks;
 * patch.c: unified diffs applied to a buffer).  No terminal I/O, no session:
 * app/ records, front ends show.  Keys are read here and used only as an
 * HTTP header; no function of this folder puts one in a message or a buffer
 * it returns.
 */
#ifndef KB_LLM_BRIDGE_H
#define KB_LLM_BRIDGE_H

#include "../core/kb.h"

#include <jansson.h>
#include <stdatomic.h>

/* ===== config.c ===== */

/* Where the model is and how to talk to it.  Strings are owned. */
typedef struct {
	char *base_url;        /* "https://api.openai.com/v1" (.../chat/completions is added) */
	char *model;           /* "gpt-4o", "qwen2.5-coder" ... */
	char *key_env;         /* the NAME of the environment variable holding the key */
	char *key_file;        /* or a file holding it, mode 0600 (checked), or NULL */
	char *command;         /* the command provider's shell command, or NULL: HTTP */
	double timeout_s;      /* a whole request (0: none) */
	double stall_s;        /* no byte for this long mid-answer: timed out */
	double connect_s;
	int retries;           /* on 429 and 5xx, with backoff honouring Retry-After */
	bool stream;           /* server-sent events */
	int max_tokens;        /* per reply (0: the server's default) */
	double temperature;    /* < 0: the server's default */
	char *source;          /* where the settings came from, for messages */
} kb_llm_config;

/* The config file: $XDG_CONFIG_HOME/kbench/config (default ~/.config); a
 * new string. */
char *kb_llm_config_path(void);
/* Defaults, then the config file (when present), then $KBENCH_LLM_* (see
 * docs/llm.md).  Flags are the caller's to apply after.  Returns 0, or
 * KB_EINVAL with err for a bad line (file:line) or a key written in the file. */
int kb_llm_config_load(kb_llm_config *c, kb_err *err);
/* Replaces *field by a copy of value (NULL clears it). */
void kb_llm_config_set(char **field, const char *value);
void kb_llm_config_free(kb_llm_config *c);
/* The key for c into key[n] ("" when c names none and none is needed).
 * From $key_env, else key_file (refused unless mode 0600).  The message of
 * an error names the variable or file, never the key.  0, or KB_EPERM /
 * KB_ENOTFOUND with err. */
int kb_llm_key(const kb_llm_config *c, char *key, size_t n, kb_err *err);
/* Copies s to out with the key (when non-empty) and anything shaped like a
 * secret key ("sk-" and 8+ key characters) replaced by "[redacted]". */
void kb_llm_redact(const char *s, const char *key, kb_buf *out);

/* ===== provider.c, request.c, http.c, command.c ===== */

/* What a caller learns while the answer streams; every member may be NULL. */
typedef struct {
	void (*on_text)(void *ctx, const char *text, size_t n);   /* answer text as it comes */
	void (*on_retry)(void *ctx, int attempt, double wait_s, const char *why);
	void *ctx;
	atomic_int *cancel;    /* set non-zero (any thread, a signal) to stop */
	int round;             /* exported to a command as $KBENCH_LLM_ROUND */
} kb_llm_hooks;

/* One answer. */
typedef struct {
	char *text;            /* the whole answer (owned) */
	int prompt_tokens, completion_tokens; /* from the server, else estimated */
	bool estimated;        /* the token counts are estimates (chars / 4) */
	int attempts;          /* requests made (retries + 1) */
	int http_status;       /* the last one; 0 for a command */
	double ms;
} kb_llm_answer;

/* A provider: HTTP or command (style rule 10). */
typedef struct {
	const char *name;
	int (*ask)(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
		   kb_llm_answer *a, kb_err *err);
} kb_llm_provider;

/* The provider c selects (command when c->command is set, else HTTP). */
const kb_llm_provider *kb_llm_provider_for(const kb_llm_config *c);
/* Asks: messages is a chat array [{"role","content"}...] (borrowed).
 * Returns 0 with *a filled, or KB_ECANCELED, KB_ETIMEOUT, KB_EPERM (401/
 * 403), KB_ENOTFOUND (404), KB_EIO (connection, 5xx after retries, a
 * command that failed) with a message that says what to do. */
int kb_llm_ask(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
	       kb_llm_answer *a, kb_err *err);
void kb_llm_answer_free(kb_llm_answer *a);
/* The chat-completions request body for messages (what --dry-run prints;
 * it never holds the key).  A new reference. */
json_t *kb_llm_request_body(const kb_llm_config *c, json_t *messages);
/* The messages as the command provider's stdin: each as "### role" and
 * its content. */
void kb_llm_messages_text(json_t *messages, kb_buf *out);

/* ===== prompt.c ===== */

/* The built-in templates' names: "system", "optimize", "feedback", "ask". */
extern const char *const kb_llm_template_names[];
/* The folder users' templates are read from first:
 * $XDG_CONFIG_HOME/kbench/templates; a new string. */
char *kb_llm_templates_dir(void);
/* Template `name`: the user's file when present (*from gets its path),
 * else the built-in (*from = NULL).  A new string, or NULL for an unknown
 * name.  from may be NULL. */
char *kb_llm_template(const char *name, char **from);
/* The built-in text of template `name`, or NULL; borrowed. */
const char *kb_llm_template_builtin(const char *name);
/* Fills tmpl: each {{key}} becomes the value of key in vars (a JSON
 * object of strings); a key vars lacks or holds empty becomes "(none)".
 * Unknown keys are left as they are. */
void kb_llm_prompt_fill(const char *tmpl, json_t *vars, kb_buf *out);

/* ===== reply.c ===== */

typedef enum { KB_LLM_BLOCK_FILE, KB_LLM_BLOCK_DIFF } kb_llm_block_kind;

/* One fenced code block of an answer. */
typedef struct {
	kb_llm_block_kind kind;
	char lang[24];
	char *text;
	size_t len;
} kb_llm_block;

/* The fenced code blocks of an answer in order; diffs recognised by their
 * language (diff, patch) or their first line (---, @@).  Returns the count;
 * *blocks is the caller's (kb_llm_blocks_free). */
int kb_llm_blocks(const char *answer, kb_llm_block **blocks);
void kb_llm_blocks_free(kb_llm_block *blocks, int n);
/* Why a proposal was not made into a candidate; KB_LLM_OK when it was. */
typedef enum {
	KB_LLM_OK, KB_LLM_NO_CODE, KB_LLM_NOT_APPLYING, KB_LLM_SPEC_CHANGED
} kb_llm_verdict;
/* The verdict's word: "ok", "no code", "diff does not apply", "spec changed". */
const char *kb_llm_verdict_name(kb_llm_verdict v);
/* The new text an answer proposes for the file whose text is base: the
 * last diff or whole-file block that holds a kernel (a whole file must have
 * a __global__ or .entry).  Checks that the result keeps base's spec lines
 * (//!; a `launch` line may change).  *text (new string) on KB_LLM_OK;
 * why (may be NULL) gets the reason otherwise. */
kb_llm_verdict kb_llm_candidate(const char *base, const char *answer, char **text, kb_buf *why);

/* The gist of an answer for tables: its first line of prose outside code
 * blocks, without Markdown marks, cut to n - 1 bytes ("" when none). */
void kb_llm_gist(const char *answer, char *out, size_t n);

/* ===== patch.c ===== */

/* Applies a unified diff (one file's hunks; ---/+++ headers optional) to
 * base.  Hunks are found by their context, first at the line the header
 * says, then anywhere after the previous hunk (models miscount lines).
 * Returns 0 with out filled, or KB_EINVAL with err saying which hunk did not
 * match and where. */
int kb_llm_patch(const char *base, const char *diff, kb_buf *out, kb_err *err);

#endif
