/*
 * test_tui_headline.c - the headline kbench-tui's Summary and `kbench run`
 * open with (src/app/headline.c): one line, never wider than asked, the
 * least important parts left out first; an arrow and a colour only for a
 * change beyond the noise; the sparkline's levels.
 */
#include "t.h"

#include "../../src/app/app.h"

/* Display columns of s, SGR escapes not counted. */
static int cols(const char *s)
{
	int c = 0;
	for (; *s; s++) {
		if (*s == '\033') {
			s = strchr(s, 'm');
			if (!s)
				break;
			continue;
		}
		c += ((unsigned char)*s & 0xC0) != 0x80;
	}
	return c;
}

static kb_app_headline sample(kb_app_trend prev, kb_app_trend best)
{
	static double times[] = {1706.6, 1461.5, 0, 1097.3, 715.5};
	kb_app_headline h = {.median_us = 715.5, .spread_pct = 0.3, .roof_pct = 99.2,
			     .times = times, .ntimes = 5, .current = 4};
	snprintf(h.verdict, sizeof h.verdict, "CORRECT");
	snprintf(h.roof, sizeof h.roof, "copy");
	h.prev = (kb_app_headline_delta){"v4", prev, -34.8};
	h.best = (kb_app_headline_delta){"v1", best, -58.1};
	return h;
}

static void test_tui_headline__fits(void)
{
	kb_app_headline h = sample(KB_APP_TREND_FASTER, KB_APP_TREND_SLOWER);
	int last = 0;
	for (int w = 10; w <= 200; w++) {
		for (int ansi = 0; ansi < 2; ansi++) {
			kb_buf out = KB_BUF_INIT;
			kb_app_headline_text(&h, w, ansi, &out);
			T_OK(out.s && !strchr(out.s, '\n'));
			if (out.s && cols(out.s) > w)
				T_FAIL_AT("width %d: %d columns: %s", w, cols(out.s), out.s);
			T_CONTAINS(out.s, "CORRECT");
			/* wider never shows less */
			if (!ansi && out.s) {
				T_OK(cols(out.s) >= last);
				last = cols(out.s);
			}
			kb_buf_free(&out);
		}
	}
	kb_buf out = KB_BUF_INIT;
	kb_app_headline_text(&h, 200, false, &out);
	T_CONTAINS(out.s, "715.5 us");
	T_CONTAINS(out.s, "\u00b10.3%");
	T_CONTAINS(out.s, "99% of copy");
	T_CONTAINS(out.s, "\u2193" "34.8% vs v4");
	T_CONTAINS(out.s, "\u2191" "58.1% vs best v1");
	T_CONTAINS(out.s, "\u2588\u2586 \u2584\u2581"); /* the sparkline, a gap for v3 */
	kb_buf_free(&out);
	/* at 36 columns (an 80-column screen's pane) the time and the share stay */
	kb_app_headline_text(&h, 36, false, &out);
	T_CONTAINS(out.s, "715.5 us");
	T_CONTAINS(out.s, "99% of copy");
	kb_buf_free(&out);
}

static void test_tui_headline__noise(void)
{
	kb_app_headline h = sample(KB_APP_TREND_SAME, KB_APP_TREND_SAME);
	kb_buf out = KB_BUF_INIT;
	kb_app_headline_text(&h, 200, true, &out);
	/* within the noise: no arrow, no colour but the verdict's */
	T_OK(!strstr(out.s, "\u2193") && !strstr(out.s, "\u2191"));
	T_OK(!strstr(out.s, "\033[32m") && !strstr(out.s, "\033[31m"));
	T_CONTAINS(out.s, "= v4");
	kb_buf_free(&out);
	h = sample(KB_APP_TREND_FASTER, KB_APP_TREND_SLOWER);
	kb_app_headline_text(&h, 200, true, &out);
	T_CONTAINS(out.s, "\033[32m\u2193");
	T_CONTAINS(out.s, "\033[31m\u2191");
	kb_buf_free(&out);
}

/* The verdict's colour: green CORRECT, red for a failed kernel, plain bold
 * for what says nothing about the kernel. */
static void test_tui_headline__verdict_colour(void)
{
	static const struct { const char *verdict, *sgr; } c[] = {
		{"CORRECT", "\033[1;32m"}, {"INCORRECT", "\033[1;31m"}, {"TIMEOUT", "\033[1;31m"},
		{"NO GPU", "\033[1m"}, {"compiled", "\033[1m"},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		kb_app_headline h = {.median_us = -1, .spread_pct = -1, .roof_pct = -1, .current = -1};
		snprintf(h.verdict, sizeof h.verdict, "%s", c[i].verdict);
		kb_buf out = KB_BUF_INIT;
		kb_app_headline_text(&h, 80, true, &out);
		T_OK(out.s && !strncmp(out.s, c[i].sgr, strlen(c[i].sgr)));
		T_CONTAINS(out.s, c[i].verdict);
		kb_buf_free(&out);
	}
}

static void test_tui_headline__sparkline(void)
{
	double v[] = {4, 3, 2, 1, -1, 1};
	kb_buf out = KB_BUF_INIT;
	kb_app_sparkline(v, 6, 16, &out);
	T_EQ_STR(out.s, "\u2588\u2586\u2583\u2581 \u2581");
	kb_buf_reset(&out);
	kb_app_sparkline(v, 6, 2, &out); /* the newest two */
	T_EQ_STR(out.s, " \u2584"); /* one value: the middle level */
	kb_buf_free(&out);
}

int main(void)
{
	T_RUN(test_tui_headline__fits);
	T_RUN(test_tui_headline__noise);
	T_RUN(test_tui_headline__verdict_colour);
	T_RUN(test_tui_headline__sparkline);
	return t_report();
}
