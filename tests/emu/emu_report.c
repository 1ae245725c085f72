/*
 * emu_report.c - a case's failure in words for tile_emu: where an output's
 * wrong elements are, and text indented under a case's line.
 */
#include "emu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "0-7, 64-71, 130" for the set flags of n. */
static void ranges(kb_buf *b, const bool *flag, int64_t n)
{
	int shown = 0;
	for (int64_t i = 0; i < n; i++) {
		if (!flag[i])
			continue;
		int64_t j = i;
		while (j + 1 < n && flag[j + 1])
			j++;
		if (shown++ == 10) {
			kb_buf_cat(b, ", ...");
			return;
		}
		kb_buf_catf(b, shown > 1 ? ", %lld" : "%lld", (long long)i);
		if (j > i)
			kb_buf_catf(b, "-%lld", (long long)j);
		i = j;
	}
}

/* See emu.h. */
void emu_describe_bad(kb_buf *why, const kb_tensor *t, const kb_ref_out *ref, double rtol, double atol)
{
	int64_t rows = t->rank == 2 ? t->dims[0] : 1, cols = t->n / (rows ? rows : 1);
	bool *br = kb_xcalloc((size_t)rows + 1, 1), *bc = kb_xcalloc((size_t)cols + 1, 1);
	int samples = 0;
	for (int64_t i = 0; i < t->n && i < ref->n; i++) {
		double got = kb_tensor_get(t, i), want = ref->v[i];
		if (!isfinite(want) || (isfinite(got) && fabs(got - want) <= atol + rtol * fabs(want)))
			continue;
		br[i / cols] = bc[i % cols] = true;
		if (samples++ < 6) {
			char at[96];
			kb_tensor_coord(t, i, at, sizeof at);
			kb_buf_catf(why, "      %s = %g, want %g\n", at, got, want);
		}
	}
	if (t->rank == 2) {
		kb_buf_cat(why, "    wrong rows: ");
		ranges(why, br, rows);
		kb_buf_cat(why, "\n    wrong cols: ");
		ranges(why, bc, cols);
	} else {
		kb_buf_cat(why, "    wrong elements: ");
		ranges(why, bc, cols);
	}
	kb_buf_cat(why, "\n");
	free(br);
	free(bc);
}

/* See emu.h. */
void emu_indent(kb_buf *b, const char *text)
{
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		kb_buf_catf(b, "    %.*s\n", (int)n, p);
		p += n + (e != NULL);
	}
}
