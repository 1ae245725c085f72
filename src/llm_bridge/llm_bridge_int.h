/*
 * llm_bridge_int.h - declarations shared inside src/llm_bridge/ only
 * (style rule 1); other folders use llm_bridge.h.
 */
#ifndef KB_LLM_BRIDGE_INT_H
#define KB_LLM_BRIDGE_INT_H

#include "llm_bridge.h"

#include <curl/curl.h>

/* ===== curl.c: libcurl, loaded when the first request needs it ===== */

/* The few libcurl entry points the HTTP provider uses. */
typedef struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *h);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} kb_llm__curl;

/* libcurl's table (dlopen of libcurl.so.4, once).  Returns 0, or KB_EUNSUP
 * with err when it cannot be loaded. */
int kb_llm__curl_load(const kb_llm__curl **out, kb_err *err);

/* ===== http.c, command.c: the providers ===== */

int kb_llm__http_ask(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
		     kb_llm_answer *a, kb_err *err);
int kb_llm__command_ask(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
			kb_llm_answer *a, kb_err *err);

/* ===== sse.c ===== */

/* A streamed answer's decoder: on_chunk gets each `data:` line's JSON
 * (NULL when it is not JSON; borrowed). */
typedef struct {
	kb_buf line;           /* a line not yet complete */
	void (*on_chunk)(void *ctx, json_t *chunk);
	void *ctx;
} kb_llm__sse;

/* Feeds n bytes of the stream; calls on_chunk for each line completed. */
void kb_llm__sse_feed(kb_llm__sse *d, const char *p, size_t n);

/* ===== config.c ===== */

/* $XDG_CONFIG_HOME/kbench/<sub> (default ~/.config/kbench/<sub>); a new string. */
char *kb_llm__config_dir(const char *sub);

/* ===== request.c ===== */

/* Whether the caller asked to stop. */
bool kb_llm__cancelled(const kb_llm_hooks *h);
/* Sleeps ms in small steps; false when cancelled meanwhile. */
bool kb_llm__sleep(const kb_llm_hooks *h, double ms);
/* Token estimates for an answer without usage numbers (chars / 4). */
void kb_llm__estimate(json_t *messages, kb_llm_answer *a);

#endif
