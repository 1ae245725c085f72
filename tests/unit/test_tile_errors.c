/* test_tile_errors.c - the tile DSL's bad programs for the constructs of
 * issue 29 (operators ** << >> & |, the functions, exact=, keep=, trans,
 * atomics, gathers), each with its one message, line and column; the
 * older constructs' table is test_tile_front.c's.  No lowering, no GPU. */
#include "../../src/tilegen/tilegen_int.h"
#include "t.h"
#include "tile_front.h"

#define H "kernel f(x: f32[M, N], y: f32[M, N], a: f32) grid(M) threads(256) {\n"

static const struct {
	int src_line;
	const char *text;
	int line, col;
	const char *msg;
} bad[] = {
	/* the math of issue 29: operators and functions */
	{__LINE__, H "    r = tanh(1.0, approximate = true)\n}\n", 2, 33,
	 "tanh has no argument approximate= (tanh(x) or tanh(x, exact = false))"},
	{__LINE__, H "    r = tanh(1.0, exact = 1)\n}\n", 2, 27,
	 "exact= is true or false (a literal), got i32 scalar"},
	{__LINE__, H "    e = true\n    r = exp(1.0, exact = e)\n}\n", 3, 26,
	 "exact= is true or false (a literal), got bool scalar"},
	{__LINE__, H "    r = sigmoid(1.0 > 0.0)\n}\n", 2, 17, "sigmoid needs a number, got bool scalar"},
	{__LINE__, H "    r = 1.5 >> 1\n}\n", 2, 9, "'>>' needs integers, got f32 scalar and i32 scalar"},
	{__LINE__, H "    r = 3 & 1.0\n}\n", 2, 9, "'&' needs integers, got i32 scalar and f32 scalar"},
	{__LINE__, H "    r = (1 > 0) | 2\n}\n", 2, 9, "'|' needs integers, got bool scalar and i32 scalar"},
	{__LINE__, H "    r = true ** 2\n}\n", 2, 9, "'**' needs numbers, got bool scalar and i32 scalar"},
	{__LINE__, H "    const S = 1 << 70\n}\n", 2, 15, "integer overflow in a constant"},
	{__LINE__, H "    r = load(x[0, 0 : 8]) ** load(x[0, 0 : 4])\n}\n", 2, 9,
	 "shape mismatch in '**': f32[8] and f32[4]"},
	{__LINE__, H "    r = pow(1.0)\n}\n", 2, 9, "pow takes 2 arguments, got 1 (pow(a, b), the same as a ** b)"},
	{__LINE__, H "    r = 2 *** 3\n}\n", 2, 13, "expected an expression, got '*'"},
	/* 2-d tiles: keep = true is a literal; a kept reduction broadcasts against its tile */
	{__LINE__, H "    r = max(load(x[0 : 4, 0 : 8]), axis = 1, keep = 1)\n}\n", 2, 53,
	 "keep= is true or false (a literal), got i32 scalar"},
	{__LINE__, H "    t = load(x[0 : 4, 0 : 8])\n    r = t - max(t, axis = 1)\n}\n", 3, 9,
	 "shape mismatch in '-': f32[4, 8] and f32[4]"},
	{__LINE__, H "    r = trans(load(x[0, 0 : 8]))\n}\n", 2, 15, "trans takes a 2-d tile, got f32[8]"},
	/* atomics */
	{__LINE__, "kernel f(y: bf16[N]) grid(1) threads(32) {\n    atomic_add(y[0 : 32], 1.0)\n}\n", 2, 16,
	 "atomic_add adds into f32, f64 or i32 tensors; y is bf16"},
	{__LINE__, "kernel f(y: f64[N]) grid(1) threads(32) {\n    atomic_max(y[0], 1.0)\n}\n", 2, 16,
	 "atomic_max works on f32 or i32 tensors; y is f64"},
	{__LINE__, H "    r = atomic_add(y[0, 0], 1.0)\n}\n", 2, 9,
	 "atomic_add(...) is not a value: it is only a statement"},
	{__LINE__, H "    atomic_add(y[0, 0 : 8], 1.0, other = 0.0)\n}\n", 2, 42,
	 "atomic_add has no argument other= (it takes mask = M)"},
	{__LINE__, H "    atomic_max(y[0, 0 : 8])\n}\n", 2, 5,
	 "atomic_max takes a slice and a value, like atomic_max(y[i, c : c + B], v), got 1 argument"},
	{__LINE__, H "    atomic_add(y[0, 0 : 8], load(x[0, 0 : 4]))\n}\n", 2, 29,
	 "the value is f32[4] but the slice of y is f32[8]"},
	/* gathers: an index loaded from a tensor is an integer scalar like any other */
	{__LINE__, H "    r = load(x[0, load(y[0, 0])])\n}\n", 2, 19,
	 "an index is an integer scalar, got f32 scalar"},
};

static void test_tile_errors__issue29_table(void)
{
	T_OK(KB_ARRAY_LEN(bad) >= 20);
	for (size_t i = 0; i < KB_ARRAY_LEN(bad); i++)
		one_error(bad[i].src_line, bad[i].text, bad[i].line, bad[i].col, bad[i].msg);
}

int main(void)
{
	T_RUN(test_tile_errors__issue29_table);
	return t_report();
}
