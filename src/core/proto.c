/*
 * proto.c - framing of the runner protocol (see proto.h): pure functions
 * over bytes, no I/O, so they are unit-tested and fuzzed directly.
 */
#include "kb.h"

#include <stdlib.h>
#include <string.h>

void kb_frame_feed(kb_frame_reader *r, const void *p, size_t n)
{
	if (n == 0)
		return;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n)
			cap *= 2;
		r->buf = kb_xrealloc(r->buf, cap);
		r->cap = cap;
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

static uint32_t get_le32(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int kb_frame_next(kb_frame_reader *r, char **frame, size_t *len)
{
	if (r->len < 4)
		return 0;
	uint32_t n = get_le32((const unsigned char *)r->buf);
	if (n > KB_FRAME_MAX)
		return KB_EINVAL;
	if (r->len < 4 + (size_t)n)
		return 0;
	*frame = kb_xstrndup(r->buf + 4, n);
	*len = n;
	memmove(r->buf, r->buf + 4 + n, r->len - 4 - n);
	r->len -= 4 + (size_t)n;
	return 1;
}

void kb_frame_reader_free(kb_frame_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof *r);
}

char *kb_frame_encode(const char *payload, size_t len, size_t *out_len)
{
	char *b = kb_xmalloc(len + 4);
	b[0] = (char)(len & 0xff);
	b[1] = (char)((len >> 8) & 0xff);
	b[2] = (char)((len >> 16) & 0xff);
	b[3] = (char)((len >> 24) & 0xff);
	memcpy(b + 4, payload, len);
	*out_len = len + 4;
	return b;
}

int kb_proto_version(void)
{
	const char *t = getenv("KBENCH_TEST_PROTOCOL");
	return t && *t ? atoi(t) : KB_PROTOCOL_VERSION;
}
