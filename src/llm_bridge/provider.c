/*
 * provider.c - the providers' table (style rule 10: an explicit array, no
 * registration) and the one call that picks from it.  What both providers
 * share (the request body, the messages as text, cancellation and token
 * estimates) is request.c's, below them.
 */
#include "llm_bridge_int.h"

#include <stdlib.h>
#include <string.h>

static const kb_llm_provider providers[] = {
	{"http", kb_llm__http_ask},
	{"command", kb_llm__command_ask},
};

const kb_llm_provider *kb_llm_provider_for(const kb_llm_config *c)
{
	return c->command && *c->command ? &providers[1] : &providers[0];
}

int kb_llm_ask(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
	       kb_llm_answer *a, kb_err *err)
{
	memset(a, 0, sizeof *a);
	return kb_llm_provider_for(c)->ask(c, messages, h, a, err);
}

void kb_llm_answer_free(kb_llm_answer *a)
{
	free(a->text);
	memset(a, 0, sizeof *a);
}
