/* fuzz_spec.c - the //! spec parser (spec.c, spec_lex.c, spec_tensor.c,
 * spec_check.c) and the expression evaluator (spec_expr.c): the input is a
 * whole .cu file; every expression the spec holds is evaluated (require
 * lines judged), at its own values and at each sweep value and tune, and
 * the diagnostics rendered. */
#include "../../src/compile/compile.h"
#include "fuzz.h"

static void eval(const kb_spec *s, const kb_source *src, const kb_expr *e, kb_diags *d)
{
	kb_value v;
	if (e)
		(void)kb_compile_spec_eval(s, e, &v, src, d);
}

static void eval_all(const kb_spec *s, const kb_source *src, kb_diags *d)
{
	kb_launch_dims dims;
	(void)kb_compile_spec_launch_dims(s, src, &dims, d);
	eval(s, src, s->bytes, d);
	eval(s, src, s->flops, d);
	for (int i = 0; i < s->ntensors; i++)
		for (int r = 0; r < s->tensors[i].rank && r < KB_MAX_RANK; r++)
			eval(s, src, s->tensors[i].dims[r], d);
	for (int i = 0; i < s->ntmaps; i++)
		for (int r = 0; r < s->tmaps[i].nbox && r < KB_MAX_RANK; r++)
			eval(s, src, s->tmaps[i].box[r], d);
	for (int i = 0; i < s->nargs; i++)
		eval(s, src, s->args[i].expr, d);
	char *why = NULL; /* the require lines, judged and explained */
	(void)kb_compile_spec_requires(s, src, &why, NULL, d);
	free(why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	kb_source src = {"k.cu", text, size, KB_SRC_CUDA};
	kb_spec s;
	kb_diags d = {0};
	if (kb_compile_spec_parse(&src, &s, &d) == 0) {
		eval_all(&s, &src, &d);
		for (int i = 0; i < s.nsweeps; i++)
			for (int j = 0; j < s.sweeps[i].nvalues; j++) {
				kb_value v;
				if (kb_compile_spec_eval(&s, s.sweeps[i].values[j], &v, &src, &d) == 0 &&
				    kb_compile_spec_set_arg(&s, s.sweeps[i].name, v) == 0)
					eval_all(&s, &src, &d);
			}
		for (int i = 0; i < s.ntunes; i++)
			for (int j = 0; j < s.tunes[i].nvalues; j++)
				if (kb_compile_spec_set_tune(&s, s.tunes[i].name, s.tunes[i].texts[j]) == 0)
					eval_all(&s, &src, &d);
	}
	kb_buf out = KB_BUF_INIT;
	kb_diag_sort(&d);
	kb_diag_render(&d, &out, true);
	kb_buf_free(&out);
	kb_diags_free(&d);
	kb_compile_spec_free(&s);
	free(text);
	return 0;
}
