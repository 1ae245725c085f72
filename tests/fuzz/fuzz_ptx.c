/* fuzz_ptx.c - the PTX entry parser (ptx.c: kb_compile_discover_ptx and
 * the setmaxnreg scan of each entry found) and, on the same text, the
 * ptxas -v report parser (resources.c). */
#include "../../src/compile/compile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	kb_source src = {"k.ptx", text, size, KB_SRC_PTX};
	kb_kernels ks = {0};
	kb_diags d = {0};
	kb_err err = {0};
	(void)kb_compile_discover_ptx(&src, &ks, &d, &err);
	for (int i = 0; i < ks.n; i++) {
		kb_resources r = {0};
		kb_compile_ptx_setmaxnreg(text, ks.v[i].name, &r);
	}
	kb_resources *res = NULL;
	int n = kb_compile_parse_ptxas_log(text, &res);
	kb_compile_resources_free(res, n > 0 ? n : 0);
	kb_compile_kernels_free(&ks);
	kb_diags_free(&d);
	free(text);
	return 0;
}
