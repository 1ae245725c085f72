/* fuzz.h - what every libFuzzer target (tests/fuzz/fuzz_*.c) shares: the
 * entry point's prototype and the input as a NUL-terminated string, as
 * the parsers get text from files, pipes and sockets. */
#ifndef KB_FUZZ_H
#define KB_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A new NUL-terminated copy of the input (it may hold NULs of its own). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
