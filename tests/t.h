/*
 * t.h - the unit-test harness (modelled on redis' testhelp.h and clar's
 * naming).  A test binary defines cases `static void test_<dir>__<case>(void)`,
 * lists them with T_RUN, and ends main with `return t_report();`.
 * The last line it prints, "# passed=N failed=N skipped=N", is what
 * tests/run.sh adds up.  A case that needs a GPU calls T_SKIP(reason).
 */
#ifndef KB_T_H
#define KB_T_H

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int t_passed, t_failed, t_skipped, t_case_failed, t_case_skipped;
static const char *t_case;

#define T_FAIL_AT(...) do { \
	printf("  FAIL %s (%s:%d): ", t_case, __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); t_case_failed = 1; } while (0)

#define T_OK(cond) do { if (!(cond)) T_FAIL_AT("%s", #cond); } while (0)
#define T_EQ_INT(a, b) do { long long t_a_ = (long long)(a), t_b_ = (long long)(b); \
	if (t_a_ != t_b_) T_FAIL_AT("%s == %s: %lld != %lld", #a, #b, t_a_, t_b_); } while (0)
#define T_EQ_STR(a, b) do { const char *t_a_ = (a), *t_b_ = (b); \
	if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_)) \
		T_FAIL_AT("%s == %s: \"%s\" != \"%s\"", #a, #b, t_a_ ? t_a_ : "(null)", \
			  t_b_ ? t_b_ : "(null)"); } while (0)
#define T_NEAR(a, b, tol) do { double t_a_ = (a), t_b_ = (b); \
	if (!(fabs(t_a_ - t_b_) <= (tol))) \
		T_FAIL_AT("%s ~= %s: %g != %g (tol %g)", #a, #b, t_a_, t_b_, (double)(tol)); } while (0)
#define T_CONTAINS(hay, needle) do { const char *t_h_ = (hay), *t_n_ = (needle); \
	if (!t_h_ || !strstr(t_h_, t_n_)) \
		T_FAIL_AT("\"%s\" not in:\n%s", t_n_, t_h_ ? t_h_ : "(null)"); } while (0)
#define T_SKIP(...) do { printf("  SKIP %s: ", t_case); printf(__VA_ARGS__); \
	printf("\n"); t_case_skipped = 1; return; } while (0)

#define T_RUN(fn) do { t_case = #fn; t_case_failed = t_case_skipped = 0; fn(); \
	if (t_case_skipped) t_skipped++; \
	else if (t_case_failed) t_failed++; \
	else { t_passed++; if (getenv("T_VERBOSE")) printf("  ok   %s\n", #fn); } } while (0)

static inline int t_report(void)
{
	printf("# passed=%d failed=%d skipped=%d\n", t_passed, t_failed, t_skipped);
	return t_failed ? 1 : 0;
}

#endif
