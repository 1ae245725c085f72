/* fuzz_sse.c - the SSE stream decoder of streamed LLM answers
 * (llm_bridge/sse.c): the input is a byte stream fed in pieces whose
 * sizes the first byte picks, as libcurl hands them over; each chunk's
 * delta text and usage numbers are read as http.c reads them, and the
 * answer they make is split into its code blocks. */
#include "../../src/llm_bridge/llm_bridge_int.h"
#include "fuzz.h"

static void on_chunk(void *ctx, json_t *j)
{
	kb_buf *text = ctx;
	json_t *delta = json_object_get(json_array_get(json_object_get(j, "choices"), 0), "delta");
	const char *s = json_string_value(json_object_get(delta, "content"));
	if (s)
		kb_buf_cat(text, s);
	(void)json_integer_value(json_object_get(json_object_get(j, "usage"), "prompt_tokens"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t step = (size_t)data[0] % 64 + 1;
	data++, size--;
	kb_buf text = KB_BUF_INIT;
	kb_llm__sse d = {.on_chunk = on_chunk, .ctx = &text};
	for (size_t at = 0; at < size; at += step)
		kb_llm__sse_feed(&d, (const char *)data + at, size - at < step ? size - at : step);
	kb_llm_block *blocks = NULL;
	int n = kb_llm_blocks(text.s ? text.s : "", &blocks);
	kb_llm_blocks_free(blocks, n);
	kb_buf_free(&d.line);
	kb_buf_free(&text);
	return 0;
}
