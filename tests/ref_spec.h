/* ref_spec.h - for the tests of the built-in references: runs the
 * reference of a spec written as //! lines (printing the spec's
 * diagnostics when it does not parse). */
#ifndef KB_TEST_REF_SPEC_H
#define KB_TEST_REF_SPEC_H

#include "../src/reference/reference.h"

#include <stdio.h>
#include <string.h>

static inline int t_run_ref(const char *lines, const kb_tensor *ins, int nins, kb_ref_out *out,
			    int nthreads, kb_err *err)
{
	kb_source src = {"k.cu", (char *)lines, strlen(lines), KB_SRC_CUDA};
	kb_spec spec;
	kb_diags diags = {0};
	int rc = kb_compile_spec_parse(&src, &spec, &diags);
	if (rc) {
		kb_buf b = KB_BUF_INIT;
		kb_diag_render(&diags, &b, false);
		printf("spec parse failed:\n%s", b.s ? b.s : "");
		kb_buf_free(&b);
	} else {
		rc = kb_profile_reference(&spec, &src, ins, nins, out, nthreads, err);
	}
	kb_diags_free(&diags);
	kb_compile_spec_free(&spec);
	return rc;
}

#endif
