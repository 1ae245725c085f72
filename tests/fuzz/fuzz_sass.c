/* fuzz_sass.c - the SASS listing parser (sass.c: nvdisasm -c -g/-gi and
 * cuobjdump -sass text), then what is computed from each function: the
 * instruction mix, the body length and every instruction's source line. */
#include "../../src/compile/compile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	kb_sass s = {0};
	if (kb_compile_sass_parse(text, &s) == 0)
		for (int i = 0; i < s.nfuncs; i++) {
			kb_mix *mix = NULL;
			int n = kb_compile_sass_mix(&s.funcs[i], &mix);
			kb_compile_sass_mix_free(mix, n > 0 ? n : 0);
			(void)kb_compile_sass_body_len(&s.funcs[i]);
			for (int j = 0; j < s.funcs[i].n; j++)
				(void)kb_compile_sass_src_line(&s.funcs[i].v[j], "k.cu");
		}
	kb_compile_sass_free(&s);
	free(text);
	return 0;
}
