/*
 * sse.c - the server-sent-events decoder of a streamed chat-completions
 * answer (http.c): bytes in as libcurl hands them over, in pieces cut
 * anywhere; each complete `data: {...}` line parsed and handed on.
 * Comments, `event:` and `id:` lines and `data: [DONE]` are skipped; a
 * line that is not JSON is handed on as NULL (the caller ignores it).
 */
#include "llm_bridge_int.h"

#include <string.h>

/* One complete line, without its line end. */
static void sse_line(kb_llm__sse *d, const char *s)
{
	if (strncmp(s, "data:", 5))
		return;
	s += 5;
	while (*s == ' ')
		s++;
	if (!strcmp(s, "[DONE]"))
		return;
	json_t *j = json_loads(s, 0, NULL);
	d->on_chunk(d->ctx, j);
	json_decref(j);
}

void kb_llm__sse_feed(kb_llm__sse *d, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n') {
			kb_buf_catc(&d->line, p[i]);
			continue;
		}
		if (d->line.len && d->line.s[d->line.len - 1] == '\r')
			d->line.s[--d->line.len] = 0;
		if (d->line.len)
			sse_line(d, d->line.s);
		kb_buf_reset(&d->line);
	}
}
