/* fuzz_frame.c - the runner's wire-frame decoder (core/proto.c): the
 * input is a byte stream fed in pieces whose sizes the first byte picks,
 * as reads from a pipe or socket arrive; each frame is then read as the
 * client and server read it (JSON with a "type"). */
#include "../../src/core/kb.h"
#include "fuzz.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t step = (size_t)data[0] % 17 + 1;
	data++, size--;
	kb_frame_reader rd = {0};
	for (size_t at = 0; at < size;) {
		size_t n = size - at < step ? size - at : step;
		kb_frame_feed(&rd, data + at, n);
		at += n;
		char *frame;
		size_t len;
		int got;
		while ((got = kb_frame_next(&rd, &frame, &len)) == 1) {
			if (frame[len] != '\0')
				abort(); /* promised NUL-terminated */
			json_t *msg = json_loadb(frame, len, 0, NULL);
			(void)json_string_value(json_object_get(msg, "type"));
			json_decref(msg);
			free(frame);
		}
		if (got < 0)
			break;
	}
	kb_frame_reader_free(&rd);
	return 0;
}
