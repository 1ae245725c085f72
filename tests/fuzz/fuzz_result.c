/* fuzz_result.c - the JSON Result reader: everything that renders a Result
 * it did not produce itself.  The input is a variant's note as git keeps it
 * ({"compile", "file", "label", "result"}, decoded as session/store.c
 * decodes notes) or a bare Result as the runner answers; it goes through
 * the CLI's and the TUI result pane's summary (kb_app_run_render), the
 * profile tables, the sweep/tune tables, the device text, and, as the
 * notes of three variants (twice the input, once none), through the
 * Markdown and HTML reports, the terminal roofline and the deltas line. */
#include "../../src/app/app.h"
#include "fuzz.h"

static void report(json_t *note)
{
	const char *srcs[3] = {"//! grid 1 block 32\n__global__ void k() {}\n", "<b>&\"'</b>\n",
			       NULL};
	char *sources[3];
	size_t lens[3];
	kb_variant vs[3];
	memset(vs, 0, sizeof vs);
	for (int i = 0; i < 3; i++) {
		snprintf(vs[i].name, sizeof vs[i].name, "v%d", i + 1);
		vs[i].path = "k.cu";
		vs[i].message = "k.cu: a variant";
		vs[i].seq = i + 1;
		vs[i].note = i < 2 ? note : NULL;
		vs[i].kernel = (char *)json_string_value(json_object_get(
			json_object_get(json_object_get(note, "compile"), "kernel"), "name"));
		sources[i] = (char *)srcs[i];
		lens[i] = srcs[i] ? strlen(srcs[i]) : 0;
	}
	vs[1].label = (char *)json_string_value(json_object_get(note, "label"));
	kb_buf out = KB_BUF_INIT, svg = KB_BUF_INIT;
	kb_err err = {0};
	for (int html = 0; html < 2; html++) {
		kb_app_report_opts o = {.session_id = "fuzz", .svg_name = "r.svg", .html = html};
		(void)kb_app_report(&o, vs, 3, sources, lens, &out, &svg, &err);
		kb_buf_reset(&out);
		kb_buf_reset(&svg);
	}
	(void)kb_app_roofline_text(vs, 3, 60, 14, &out);
	kb_app_deltas_text(vs, 3, "v2", &out);
	kb_buf_free(&svg);
	kb_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *note = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!note)
		return 0;
	json_t *res = json_object_get(note, "result");
	if (!json_is_object(res))
		res = note;
	kb_buf out = KB_BUF_INIT;
	kb_app_run_render(res, &out);
	(void)kb_app_run_verdict(res);
	kb_app_profile_render(res, &out);
	kb_app_sweep_render(note, &out);
	kb_app_device_render(res, &out);
	char text[64];
	kb_app_progress_text(res, text, sizeof text);
	kb_buf_free(&out);
	report(note);
	json_decref(note);
	return 0;
}
