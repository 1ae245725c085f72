/*
 * test_tui_panes.c - src/tui/panes.c without a terminal: which panes a file
 * has (the CUDA pane for .tile files only) and how F2/F3 and Alt-N move
 * through them, and the CUDA pane's text for kernels/softmax/softmax.tile
 * lowered by src/tile (no NVRTC): the code of the cursor's line marked,
 * the prologue not, and what it says when the file did not lower or is not
 * a .tile file.  The Summary of a recorded Result (sessions/softmax): the
 * headline first, on one line of the pane's width, then one row per
 * section until F4; the help's keys at narrow and wide widths.
 */
#include "t.h"

#include "../../src/tui/tui_int.h"

static void test_tui_panes__shown(void)
{
	T_OK(kb_tui__pane_shown(KB_TUI__PANE_CUDA, "k/softmax.tile"));
	T_OK(!kb_tui__pane_shown(KB_TUI__PANE_CUDA, "k/softmax.cu"));
	T_OK(!kb_tui__pane_shown(KB_TUI__PANE_CUDA, "saxpy.ptx"));
	T_OK(kb_tui__pane_shown(KB_TUI__PANE_SASS, "saxpy.ptx"));
	T_OK(!kb_tui__pane_shown(KB_TUI__NPANES, "a.tile"));
	T_OK(!kb_tui__pane_shown(-1, "a.tile"));
	T_EQ_STR(kb_tui__pane_names[KB_TUI__PANE_CUDA], "CUDA");

	/* F2 / F3 skip what the file lacks, and wrap */
	T_EQ_INT(kb_tui__pane_step(KB_TUI__PANE_SUMMARY, +1, "a.cu"), KB_TUI__PANE_SASS);
	T_EQ_INT(kb_tui__pane_step(KB_TUI__PANE_SUMMARY, +1, "a.tile"), KB_TUI__PANE_CUDA);
	T_EQ_INT(kb_tui__pane_step(KB_TUI__PANE_SASS, -1, "a.cu"), KB_TUI__PANE_SUMMARY);
	T_EQ_INT(kb_tui__pane_step(KB_TUI__PANE_SASS, -1, "a.tile"), KB_TUI__PANE_CUDA);
	T_EQ_INT(kb_tui__pane_step(KB_TUI__PANE_HELP, +1, "a.cu"), KB_TUI__PANE_SUMMARY);
	T_EQ_INT(kb_tui__pane_step(KB_TUI__PANE_SUMMARY, -1, "a.tile"), KB_TUI__PANE_HELP);

	/* Alt-N: the N-th tab of the bar the file has */
	T_EQ_INT(kb_tui__pane_nth(0, "a.cu"), KB_TUI__PANE_SUMMARY);
	T_EQ_INT(kb_tui__pane_nth(1, "a.cu"), KB_TUI__PANE_SASS);
	T_EQ_INT(kb_tui__pane_nth(3, "a.cu"), KB_TUI__PANE_OCCUPANCY);
	T_EQ_INT(kb_tui__pane_nth(8, "a.cu"), KB_TUI__PANE_LLM);
	T_EQ_INT(kb_tui__pane_nth(9, "a.cu"), KB_TUI__PANE_HELP);
	T_EQ_INT(kb_tui__pane_nth(10, "a.cu"), -1);
	T_EQ_INT(kb_tui__pane_nth(1, "a.tile"), KB_TUI__PANE_CUDA);
	T_EQ_INT(kb_tui__pane_nth(4, "a.tile"), KB_TUI__PANE_OCCUPANCY);
	T_EQ_INT(kb_tui__pane_nth(9, "a.tile"), KB_TUI__PANE_LLM);
	T_EQ_INT(kb_tui__pane_nth(10, "a.tile"), KB_TUI__PANE_HELP);
}

/* The CUDA pane's text for result r at cursor line `line` of path. */
static char *cuda_pane(const kb_tui__result *r, const char *path, int line)
{
	kb_tui__view v = {.pane = KB_TUI__PANE_CUDA, .r = r, .path = path, .cursor_line = line, .width = 60, .height = 30};
	kb_buf out = KB_BUF_INIT;
	kb_tui__pane_text(&v, &out);
	return kb_buf_detach(&out);
}

/* The number of lines of text that start with c. */
static int lines_starting(const char *text, char c)
{
	int n = 0;
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += *p == c;
	return n;
}

/* The line of text holding needle, from its start; "" when none. */
static char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	if (!p)
		return kb_xstrdup("");
	while (p > text && p[-1] != '\n')
		p--;
	return kb_xstrndup(p, strcspn(p, "\n"));
}

static void test_tui_panes__generated_cuda(void)
{
	const char *path = "kernels/softmax/softmax.tile";
	kb_buf src = KB_BUF_INIT;
	kb_err err = {0};
	T_EQ_INT(kb_file_read(path, &src, &err), 0);
	kb_tile_out out = {0};
	kb_diags diags = {0};
	T_EQ_INT(kb_tile_compile(path, src.s, src.len, NULL, &out, &diags), 0);
	kb_tui__result r = {0};
	r.compiled = true;
	kb_compile_source_init(&r.unit.src, path, src.s, KB_SRC_TILE);
	kb_compile_source_init(&r.unit.gen, path, out.cuda.s, KB_SRC_CUDA);

	/* line 20: `const BLOCK = 16384` -> one place, its directive and code */
	char *text = cuda_pane(&r, path, 20);
	T_CONTAINS(text, "'>' marks the code of line 20 (the cursor's)\n");
	char *l = line_with(text, "#line 20 ");
	T_EQ_STR(l, ">#line 20 \"kernels/softmax/softmax.tile\"");
	free(l);
	l = line_with(text, "constexpr int BLOCK");
	T_EQ_STR(l, ">    constexpr int BLOCK = 16384;"); /* a tab: four spaces */
	free(l);
	l = line_with(text, "#line 22 ");
	T_EQ_INT(l[0], ' ');
	free(l);
	l = line_with(text, "#include <cuda_fp16.h>"); /* the prologue */
	T_EQ_STR(l, " #include <cuda_fp16.h>");
	free(l);
	/* macro lines lose the padding before their backslash */
	l = line_with(text, "#define KB_BLOCK_REDUCE(");
	T_EQ_STR(l, " #define KB_BLOCK_REDUCE(NAME, T, OP, ID) \\");
	free(l);
	T_OK(!strchr(text, '\t'));
	free(text);

	/* line 27 (max of a tile) is lowered twice: the one-trip path and the loop */
	text = cuda_pane(&r, path, 27);
	T_CONTAINS(text, "'>' marks the code of line 27 (the cursor's), in 2 places\n");
	T_OK(lines_starting(text, '>') > 4);
	free(text);

	/* a comment line has no code; no marks */
	text = cuda_pane(&r, path, 1);
	T_CONTAINS(text, "line 1 (the cursor's) has no code of its own\n");
	T_EQ_INT(lines_starting(text, '>'), 0);
	free(text);

	/* did not lower: says so and where the errors are */
	kb_compile_source_free(&r.unit.gen);
	text = cuda_pane(&r, path, 20);
	T_CONTAINS(text, "No generated CUDA: the file did not lower to CUDA.");
	T_CONTAINS(text, "errors are in the Summary");
	free(text);

	/* a .cu file has no generated CUDA (the pane is not in its tab bar) */
	text = cuda_pane(&r, "kernels/softmax.cu", 20);
	T_CONTAINS(text, "only .tile files are lowered to CUDA");
	free(text);

	kb_compile_unit_free(&r.unit);
	kb_tile_out_free(&out);
	kb_diags_free(&diags);
	kb_buf_free(&src);
}

/* Display columns of the line at text (to its newline), SGR escapes not
 * counted. */
static int line_cols(const char *p)
{
	int c = 0;
	for (; *p && *p != '\n'; p++) {
		if (*p == '\033') {
			p = strchr(p, 'm');
			if (!p)
				break;
			continue;
		}
		c += ((unsigned char)*p & 0xC0) != 0x80;
	}
	return c;
}

/* The first recorded Result of sessions/softmax (v1 of softmax.cu). */
static json_t *recorded_result(void)
{
	FILE *f = fopen("sessions/softmax/journal.jsonl", "r");
	char line[65536];
	json_t *res = NULL;
	while (f && !res && fgets(line, sizeof line, f)) {
		json_t *ev = json_loads(line, 0, NULL);
		if (json_object_get(ev, "result"))
			res = json_incref(json_object_get(ev, "result"));
		json_decref(ev);
	}
	if (f)
		fclose(f);
	return res;
}

static void test_tui_panes__summary_headline(void)
{
	kb_tui__result r = {0};
	r.run = recorded_result();
	T_OK(r.run != NULL);
	T_EQ_INT(kb_app_headline_of(NULL, NULL, r.run, &r.head, NULL), 0);
	r.has_head = true;
	for (int w = 34; w <= 120; w += 43) {
		kb_tui__view v = {.pane = KB_TUI__PANE_SUMMARY, .r = &r, .path = "softmax.cu",
				  .width = w, .height = 30, .head = &r.head};
		kb_buf out = KB_BUF_INIT;
		kb_tui__pane_text(&v, &out);
		/* the headline opens the pane, one line no wider than it */
		T_OK(!strncmp(out.s, "\033[1;32mCORRECT", 14));
		T_OK(line_cols(out.s) <= w);
		T_CONTAINS(out.s, " us");
		/* folded: every line one row of the pane */
		for (const char *p = out.s; *p; p = strchr(p, '\n') + 1) {
			if (line_cols(p) > w)
				T_FAIL_AT("width %d: a %d-column line: %.60s", w, line_cols(p), p);
			if (!strchr(p, '\n'))
				break;
		}
		T_CONTAINS(out.s, "F4");
		kb_buf_free(&out);
		/* F4: the sections whole */
		v.details = true;
		kb_tui__pane_text(&v, &out);
		T_CONTAINS(out.s, "differential device events; L2 flushed");
		kb_buf_free(&out);
	}
	kb_app_headline_free(&r.head);
	json_decref(r.run);
}

static void test_tui_panes__help_keys(void)
{
	for (int w = 34; w <= 100; w += 33) {
		kb_tui__view v = {.pane = KB_TUI__PANE_HELP, .width = w, .height = 30};
		kb_buf out = KB_BUF_INIT;
		kb_tui__pane_text(&v, &out);
		T_CONTAINS(out.s, "F8");
		T_CONTAINS(out.s, "Ctrl-T/Ctrl-W");
		for (const char *p = out.s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
			int lead = (int)strspn(p, " ");
			/* no row laid out by hand for one width: text starts at 2 or 4 */
			if (lead > 4)
				T_FAIL_AT("width %d: a line indented %d: %.40s", w, lead, p);
			/* narrow: a key alone on its line, what it does below */
			if (w < 60 && lead == 2 && line_cols(p) > w)
				T_FAIL_AT("width %d: key line too wide: %.40s", w, p);
		}
		kb_buf_free(&out);
	}
}

/* Metrics after F8: bars for the throughputs and the stall reasons, the
 * hot lines with their share, each row within the pane; the tables after
 * them.  The Result is shaped as the runner's (`kbench profile --hot
 * --section quick`, bench/profile_hot.txt). */
static void test_tui_panes__metrics_bars(void)
{
	kb_tui__result r = {0};
	r.run = json_loads("{\"counters\": {\"gpu__time_duration.sum\": 124220},"
			   " \"sections\": {\"sol\": {\"duration_us\": 124.22, \"dram_pct\": 20.1,"
			   " \"sm_pct\": 30.5}, \"occupancy\": {\"theoretical_pct\": 100,"
			   " \"achieved_pct\": 82.6}},"
			   " \"hot\": true, \"hot_samples\": 1000, \"hot_launches\": 4, \"hot_lines\": ["
			   " {\"line\": 20, \"text\": \"    y[i] = x[j] * scale;  // a long comment that goes on\","
			   "  \"share_pct\": 77.1, \"stalls\": [{\"reason\": \"long_scoreboard\", \"share_pct\": 98}]},"
			   " {\"line\": 21, \"text\": \"}\", \"share_pct\": 12.7,"
			   "  \"stalls\": [{\"reason\": \"drain\", \"share_pct\": 96}]}]}", 0, NULL);
	T_OK(r.run != NULL);
	for (int w = 34; w <= 120; w += 43) {
		kb_tui__view v = {.pane = KB_TUI__PANE_METRICS, .r = &r, .path = "k.cu", .width = w,
				  .height = 30};
		kb_buf out = KB_BUF_INIT;
		kb_tui__pane_text(&v, &out);
		T_CONTAINS(out.s, "Speed of light  (124.22 us)");
		T_CONTAINS(out.s, "DRAM");
		T_CONTAINS(out.s, "20.1%");
		T_CONTAINS(out.s, "\u2588"); /* a bar */
		/* stalls from the PC samples: 77.1 x 98% of long_scoreboard */
		T_CONTAINS(out.s, "long_scoreboard");
		T_CONTAINS(out.s, "75.6%");
		T_CONTAINS(out.s, " 77.1% ");
		T_CONTAINS(out.s, "20  y[i] = x[j]");
		for (const char *p = out.s; *p && strncmp(p, "Every counter", 13);) {
			/* rows of bars (headings are prose: they may wrap, at spaces) */
			if (!strncmp(p, "  ", 2) && line_cols(p) > w)
				T_FAIL_AT("width %d: a %d-column row: %.60s", w, line_cols(p), p);
			p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
		}
		T_CONTAINS(out.s, "Every counter");
		kb_buf_free(&out);
	}
	json_decref(r.run);
}

/* Occupancy: beside the calculator's figures, the run's clusters at once
 * (the driver's), and why, where the GPCs hold fewer than the SMs would. */
static void test_tui_panes__occupancy_clusters(void)
{
	kb_build_kernel k = {.name = "ln", .has_occupancy = true,
			     .occ = {.occupancy = 0.25, .blocks_per_sm = 1, .block_threads = 512,
				     .warps_per_sm = 16, .max_warps_per_sm = 64, .why = "smem"}};
	kb_tui__result r = {0};
	r.unit.build.kernels = &k;
	r.unit.build.nkernels = 1;
	const char *runs[] = {
		"{\"launch\": {\"kernel\": \"ln\", \"cluster_blocks\": 8, \"clusters_launched\": 16,"
		" \"driver_clusters_at_once\": 14, \"clusters_sms_hold\": 16}}",
		"{\"launch\": {\"kernel\": \"ln\", \"cluster_blocks\": 8, \"clusters_launched\": 16,"
		" \"driver_clusters_at_once\": 16, \"clusters_sms_hold\": 16}}",
		"{\"launch\": {\"kernel\": \"other\", \"cluster_blocks\": 8, \"clusters_launched\": 16,"
		" \"driver_clusters_at_once\": 14, \"clusters_sms_hold\": 16}}",
	};
	for (int i = 0; i < 3; i++) {
		r.run = json_loads(runs[i], 0, NULL);
		kb_tui__view v = {.pane = KB_TUI__PANE_OCCUPANCY, .r = &r, .path = "k.cu", .width = 80,
				  .height = 30};
		kb_buf out = KB_BUF_INIT;
		kb_tui__pane_text(&v, &out);
		T_CONTAINS(out.s, "ln: 25%");
		if (i == 0)
			T_CONTAINS(out.s, "clusters of 8 blocks: 14 at once (driver), of 16 launched");
		if (i == 1)
			T_CONTAINS(out.s, "clusters of 8 blocks: 16 at once");
		T_OK((i == 0) == (strstr(out.s, "would hold 16") != NULL));
		T_OK((i == 2) == (strstr(out.s, "clusters of") == NULL)); /* another kernel's run */
		kb_buf_free(&out);
		json_decref(r.run);
	}
}

int main(void)
{
	T_RUN(test_tui_panes__shown);
	T_RUN(test_tui_panes__generated_cuda);
	T_RUN(test_tui_panes__summary_headline);
	T_RUN(test_tui_panes__help_keys);
	T_RUN(test_tui_panes__metrics_bars);
	T_RUN(test_tui_panes__occupancy_clusters);
	return t_report();
}
