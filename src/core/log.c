/*
 * log.c - a debug log written to the file named by $KBENCH_LOG, so that
 * nothing ever scribbles over a curses screen.  Off when the variable is unset.
 */
#include "kb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void kb_log(const char *fmt, ...)
{
	const char *path = getenv("KBENCH_LOG");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "[%.3f] ", kb_now_ms() / 1e3);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}
