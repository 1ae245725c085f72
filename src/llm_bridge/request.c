/*
 * request.c - what both providers (http.c, command.c) share, below them:
 * the request body, the messages as text, cancellation and token
 * estimates.  It knows neither provider; provider.c picks one.
 */
#include "llm_bridge_int.h"

#include <string.h>
#include <time.h>

json_t *kb_llm_request_body(const kb_llm_config *c, json_t *messages)
{
	json_t *j = json_pack("{s:s, s:O, s:b}", "model", c->model ? c->model : "",
			      "messages", messages, "stream", c->stream);
	if (c->stream) /* the usage numbers in the last chunk, where servers support it */
		json_object_set_new(j, "stream_options", json_pack("{s:b}", "include_usage", 1));
	if (c->max_tokens > 0)
		json_object_set_new(j, "max_tokens", json_integer(c->max_tokens));
	if (c->temperature >= 0)
		json_object_set_new(j, "temperature", json_real(c->temperature));
	return j;
}

void kb_llm_messages_text(json_t *messages, kb_buf *out)
{
	size_t i;
	json_t *m;
	json_array_foreach(messages, i, m) {
		const char *role = json_string_value(json_object_get(m, "role"));
		const char *text = json_string_value(json_object_get(m, "content"));
		kb_buf_catf(out, "%s### %s\n\n%s\n", i ? "\n" : "", role ? role : "user",
			    text ? text : "");
	}
	if (!out->s)
		kb_buf_cat(out, "");
}

bool kb_llm__cancelled(const kb_llm_hooks *h)
{
	return h && h->cancel && atomic_load(h->cancel);
}

bool kb_llm__sleep(const kb_llm_hooks *h, double ms)
{
	double end = kb_now_ms() + ms;
	while (kb_now_ms() < end) {
		if (kb_llm__cancelled(h))
			return false;
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return !kb_llm__cancelled(h);
}

void kb_llm__estimate(json_t *messages, kb_llm_answer *a)
{
	kb_buf t = KB_BUF_INIT;
	kb_llm_messages_text(messages, &t);
	a->prompt_tokens = (int)(t.len / 4);
	a->completion_tokens = (int)(a->text ? strlen(a->text) / 4 : 0);
	a->estimated = true;
	kb_buf_free(&t);
}
