/* fuzz.h - what every libFuzzer target (tests/fuzz/fuzz_*.c) shares: the
 * entry point's prototype and the input as a NUL-terminated string, as
 * the parsers get text from files, pipes and sockets. */
#ifndef KB_FUZZ_H
#define KB_FUZZ_H

#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

static char fuzz_dir_[64];

static inline int fuzz_rm_(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* Removes everything under path, path too. */
static inline void fuzz_rm_tree(const char *path)
{
	nftw(path, fuzz_rm_, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void fuzz_rm_dir_(void)
{
	fuzz_rm_tree(fuzz_dir_);
}

/* A new private folder /tmp/kb-fuzz-TAG-XXXXXX, removed when the run
 * exits (libFuzzer ends a timed run with exit()). */
static inline const char *fuzz_tmpdir(const char *tag)
{
	snprintf(fuzz_dir_, sizeof fuzz_dir_, "/tmp/kb-fuzz-%s-XXXXXX", tag);
	if (!mkdtemp(fuzz_dir_))
		abort();
	atexit(fuzz_rm_dir_);
	return fuzz_dir_;
}

#endif
