/* test_runner_hot.c - hot spots mapped to source lines (kb_runner__map_hot)
 * on a hand-made compile: the sampled PCs of a .tile kernel whose helpers
 * (the tile prologue's block reduction) are inlined count for the .tile
 * line that called them when nvdisasm -gi gives the call site, and are an
 * entry of their own file otherwise.  No GPU, no disassembler. */
#include "../../src/runner/runner_int.h"
#include "t.h"

static kb_sass_insn insn(uint32_t addr, const char *op, const char *file, int line,
			 const char *call_file, int call_line)
{
	kb_sass_insn i = {0};
	i.addr = addr;
	i.opcode = (char *)op;
	i.operands = (char *)"R0";
	i.file = (char *)file;
	i.line = line;
	i.call_file = (char *)call_file;
	i.call_line = call_line;
	return i;
}

static json_t *sample(const char *fn, uint32_t pc, int n, double pct)
{
	return json_pack("{s:s, s:I, s:I, s:f, s:[{s:s, s:I}]}", "function", fn, "pc", (json_int_t)pc,
			 "samples", (json_int_t)n, "share_pct", pct, "stalls", "reason", "long_scoreboard",
			 "samples", (json_int_t)n);
}

/* A compile of `text` at path whose listing is the one function f. */
static void unit_of(kb_compile_unit *u, const char *path, const char *text, kb_sass_func *f)
{
	memset(u, 0, sizeof *u);
	u->src.path = (char *)path;
	u->src.text = (char *)text;
	u->src.len = strlen(text);
	u->build.sass.available = true;
	u->build.sass.funcs = f;
	u->build.sass.nfuncs = 1;
}

static void test_runner_hot__inlined_helpers_count_at_the_call(void)
{
	static const char text[] = "# softmax\n"
				   "kernel softmax(x: f32[N]) grid(1) threads(32) {\n"
				   "    t = load(x[0 : 128])\n"
				   "    s = sum(t)\n"
				   "}\n";
	kb_sass_insn v[] = {
		insn(0x00, "LDG.E.128", "k/softmax.tile", 3, NULL, 0),
		/* the prologue's kb_block_sum_f, inlined at line 4 */
		insn(0x10, "SHFL.BFLY", "<kbench tile prologue>", 12, "k/softmax.tile", 4),
		insn(0x20, "BAR.SYNC", "<kbench tile prologue>", 15, "k/softmax.tile", 4),
		/* a helper line without its call site (nvdisasm -g) */
		insn(0x30, "FADD", "<kbench tile prologue>", 12, NULL, 0),
	};
	kb_sass_func f = {.name = (char *)"softmax", .v = v, .n = 4};
	kb_compile_unit u;
	unit_of(&u, "k/softmax.tile", text, &f);
	json_t *r = json_pack("{s:[o, o, o, o]}", "hot", sample("softmax", 0x00, 10, 10.0),
			      sample("softmax", 0x10, 50, 50.0), sample("softmax", 0x20, 30, 30.0),
			      sample("softmax", 0x30, 10, 10.0));
	kb_runner__map_hot(&u, r);
	json_t *lines = json_object_get(r, "hot_lines");
	T_EQ_INT(json_array_size(lines), 3);
	json_t *top = json_array_get(lines, 0);
	/* SHFL and BAR of the reduction: the .tile line of the sum, 80% */
	T_EQ_INT(json_integer_value(json_object_get(top, "line")), 4);
	T_NEAR(json_number_value(json_object_get(top, "share_pct")), 80.0, 1e-9);
	T_EQ_STR(json_string_value(json_object_get(top, "text")), "s = sum(t)");
	T_OK(!json_object_get(top, "file"));
	T_EQ_INT(json_array_size(json_object_get(top, "sass")), 2);
	/* each instruction with its share and the reason it stalled most */
	json_t *insns = json_object_get(top, "insns");
	T_EQ_INT(json_array_size(insns), 2);
	json_t *shfl = json_array_get(insns, 0);
	T_EQ_STR(json_string_value(json_object_get(shfl, "sass")), "SHFL.BFLY R0");
	T_NEAR(json_number_value(json_object_get(shfl, "share_pct")), 50.0, 1e-9);
	T_EQ_STR(json_string_value(json_object_get(shfl, "stall")), "long_scoreboard");
	T_NEAR(json_number_value(json_object_get(shfl, "stall_pct")), 100.0, 1e-9);
	/* the load's own line and the unplaced helper line: 10% each (in
	 * either order), the helper one named by its file, not a .tile line */
	json_t *a = json_array_get(lines, 1), *b = json_array_get(lines, 2);
	json_t *helper = json_object_get(a, "file") ? a : b, *load = helper == a ? b : a;
	T_EQ_INT(json_integer_value(json_object_get(load, "line")), 3);
	T_EQ_STR(json_string_value(json_object_get(load, "text")), "t = load(x[0 : 128])");
	T_EQ_INT(json_integer_value(json_object_get(helper, "line")), 12);
	T_EQ_STR(json_string_value(json_object_get(helper, "file")), "<kbench tile prologue>");
	T_EQ_STR(json_string_value(json_object_get(helper, "text")), "");
	json_decref(r);
}

/* SASS metrics joined to the listing: each shared-memory instruction gets
 * its SASS and line, conflicts add up per line, and a hot line's
 * instructions carry their executions and conflicts. */
static void test_runner_hot__sass_metrics_joined(void)
{
	static const char text[] = "__global__ void k(float *y)\n"
				   "{\n"
				   "  float a = s[t * 32];\n"
				   "  s[t] = a;\n"
				   "}\n";
	kb_sass_insn v[] = {
		insn(0x00, "LDS", "k.cu", 3, NULL, 0),
		insn(0x10, "STS", "k.cu", 4, NULL, 0),
		insn(0x20, "LDS", "k.cu", 3, NULL, 0),
	};
	kb_sass_func f = {.name = (char *)"k", .v = v, .n = 3};
	kb_compile_unit u;
	unit_of(&u, "k.cu", text, &f);
	json_t *hot = sample("k", 0x00, 10, 100.0);
	json_object_update_new(hot, json_pack("{s:I, s:I, s:I}", "executions", (json_int_t)1024,
					      "shared_wavefronts", (json_int_t)32768, "bank_conflicts",
					      (json_int_t)31744));
	json_t *r = json_pack(
		"{s:[o], s:{s:[{s:s, s:I, s:I, s:I, s:I}, {s:s, s:I, s:I, s:I, s:I},"
		" {s:s, s:I, s:I, s:I, s:I}]}}", "hot", hot, "sass_metrics", "shared",
		"function", "k", "pc", (json_int_t)0, "executions", (json_int_t)1024, "shared_wavefronts",
		(json_int_t)32768, "bank_conflicts", (json_int_t)31744,
		"function", "k", "pc", (json_int_t)0x20, "executions", (json_int_t)1024,
		"shared_wavefronts", (json_int_t)2048, "bank_conflicts", (json_int_t)1024,
		"function", "k", "pc", (json_int_t)0x10, "executions", (json_int_t)1024,
		"shared_wavefronts", (json_int_t)1024, "bank_conflicts", (json_int_t)0);
	kb_runner__map_hot(&u, r);
	kb_runner__map_sassm(&u, r);
	json_t *in = json_array_get(json_object_get(json_array_get(json_object_get(r, "hot_lines"), 0),
						    "insns"), 0);
	T_EQ_INT(json_integer_value(json_object_get(in, "bank_conflicts")), 31744);
	T_EQ_INT(json_integer_value(json_object_get(in, "executions")), 1024);
	json_t *sm = json_object_get(r, "sass_metrics");
	json_t *lds = json_array_get(json_object_get(sm, "shared"), 0);
	T_EQ_STR(json_string_value(json_object_get(lds, "sass")), "LDS R0");
	T_EQ_INT(json_integer_value(json_object_get(lds, "line")), 3);
	json_t *lines = json_object_get(sm, "conflict_lines");
	T_EQ_INT(json_array_size(lines), 2);
	json_t *l3 = json_array_get(lines, 0), *l4 = json_array_get(lines, 1);
	T_EQ_INT(json_integer_value(json_object_get(l3, "line")), 3);
	T_EQ_INT(json_integer_value(json_object_get(l3, "bank_conflicts")), 31744 + 1024);
	T_EQ_INT(json_integer_value(json_object_get(l3, "instructions")), 2);
	T_EQ_STR(json_string_value(json_object_get(l3, "text")), "float a = s[t * 32];");
	T_EQ_INT(json_integer_value(json_object_get(l4, "line")), 4);
	T_EQ_INT(json_integer_value(json_object_get(l4, "bank_conflicts")), 0);
	json_decref(r);
}

int main(void)
{
	T_RUN(test_runner_hot__inlined_helpers_count_at_the_call);
	T_RUN(test_runner_hot__sass_metrics_joined);
	return t_report();
}
