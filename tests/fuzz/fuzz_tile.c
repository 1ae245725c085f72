/* fuzz_tile.c - the tile DSL front end and lowering (src/tile: tokenize,
 * parse, check, lower) through kb_tile_compile: the input is a whole
 * .tile file; the generated CUDA gets its #line pinning as well. */
#include "../../src/tilegen/tilegen.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	kb_tile_out out = {0};
	kb_diags d = {0};
	if (kb_tile_compile("k.tile", text, size, NULL, &out, &d) == 0 && out.cuda.s) {
		kb_buf pinned = KB_BUF_INIT;
		kb_tile_pin_lines(out.cuda.s, "k.tile", &pinned);
		kb_buf_free(&pinned);
	}
	kb_buf r = KB_BUF_INIT;
	kb_diag_render(&d, &r, false);
	kb_buf_free(&r);
	kb_diags_free(&d);
	kb_tile_out_free(&out);
	free(text);
	return 0;
}
