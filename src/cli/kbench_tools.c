/*
 * kbench_tools.c - the verbs that ask the runner or this machine about
 * itself rather than run a kernel: `kbench serve` (the runner), `calibrate`
 * and `devices` (one request each), `new --from-kernelbench` and `ref` (a
 * kernel file from a KernelBench problem; its reference on this CPU).
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_cli_serve(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		puts("usage: kbench serve [--listen SOCKET --lock FILE --idle SECONDS]\n"
		     "       kbench serve --stop\n\n"
		     "The runner: reads length-prefixed JSON requests on stdin and answers\n"
		     "on stdout (see src/core/proto.h). `kbench run` starts one by itself.\n"
		     "With --listen it is the shared runner `kbench run` and `profile` keep warm\n"
		     "between calls (started by them; see README). --stop stops those no\n"
		     "command is using, so that they give the GPU back now.");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--stop")) {
		kb_buf out = KB_BUF_INIT;
		kb_runner_stop_shared(&out);
		fputs(out.s ? out.s : "", stdout);
		kb_buf_free(&out);
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "--listen") && !strcmp(argv[3], "--lock") &&
	    !strcmp(argv[5], "--idle"))
		return kb_runner_serve_socket(argv[2], argv[4], atoi(argv[6]));
	return kb_runner_serve(0, 1);
}

static int simple_request(const char *type, const char *usage, int argc, char **argv)
{
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	if (argc > 1 && !json) {
		fputs(usage, strcmp(argv[1], "--help") ? stderr : stdout);
		return strcmp(argv[1], "--help") ? KB_CLI_EXIT_USAGE : 0;
	}
	kb_runner *r = kb_cli_runner(false);
	json_t *req = json_pack("{s:s}", "type", type), *res = NULL;
	kb_err err = {0};
	int rc = kb_runner_call(r, req, 600e3, kb_cli_show_progress, NULL, &res, &err);
	kb_cli_clear_progress();
	json_decref(req);
	kb_runner_free(r);
	if (rc < 0) {
		fprintf(stderr, "kbench: %s\n", err.msg);
		return KB_CLI_EXIT_ENV;
	}
	const char *status = json_string_value(json_object_get(res, "status"));
	int code = status && !strcmp(status, "ok") ? 0 : KB_CLI_EXIT_ENV;
	if (json || code) {
		const char *msg = json_string_value(json_object_get(res, "message"));
		if (!json)
			fprintf(stderr, "kbench %s: %s\n", type, msg ? msg : status ? status : "failed");
		else
			kb_cli_print_json(json_incref(res));
	} else {
		kb_buf out = KB_BUF_INIT;
		kb_app_device_render(res, &out);
		fputs(out.s, stdout);
		kb_buf_free(&out);
	}
	json_decref(res);
	return code;
}

int kb_cli_calibrate(int argc, char **argv)
{
	return simple_request("calibrate", "usage: kbench calibrate [--json]\n\n"
			      "Measures this GPU's copy and read bandwidth, FP32 FMA rate and bf16\n"
			      "tensor-core rate with kbench's own micro-kernels, beside a cuMemcpy\n"
			      "device-to-device copy, and caches them per GPU (by UUID).\n", argc, argv);
}

static const char usage_new[] =
	"usage: kbench new --from-kernelbench PROBLEM.py [-o FILE.cu]\n"
	"\n"
	"Writes a kernel file for a KernelBench problem (a torch Model with get_inputs()\n"
	"and get_init_inputs()): its inputs and the Model's parameters as //! in lines,\n"
	"the outputs, KernelBench's tolerances, flops where PyTorch counts them, the\n"
	"Model's forward as a Python reference (FILE.ref.py, beside it) and a kernel\n"
	"skeleton to fill in. Runs the problem's Python (imports it) to learn the shapes.\n"
	"FILE.cu defaults to the problem's name in this folder; nothing is overwritten.\n";

int kb_cli_new(int argc, char **argv)
{
	const char *problem = NULL, *out = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--from-kernelbench") && i + 1 < argc)
			problem = argv[++i];
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return fputs(usage_new, stdout), 0;
		else
			return kb_cli_usage(usage_new, "unexpected '%s'", argv[i]);
	}
	if (!problem)
		return kb_cli_usage(usage_new, "new needs --from-kernelbench PROBLEM.py%s", "");
	kb_buf msg = KB_BUF_INIT;
	kb_err err = {0};
	int rc = kb_app_new_kernelbench(problem, out, &msg, &err);
	if (rc < 0)
		fprintf(stderr, "kbench: %s\n", err.msg);
	else
		fputs(msg.s, stdout);
	kb_buf_free(&msg);
	return rc == 0 ? 0 : rc == KB_EUNSUP ? KB_CLI_EXIT_ENV : rc == KB_EINVAL && !strstr(err.msg, "open")
		? KB_CLI_EXIT_USAGE : KB_CLI_EXIT_KERNEL;
}

static const char usage_ref[] =
	"usage: kbench ref FILE [--arg N=V]... [--trust-python] [--json]\n"
	"\n"
	"Computes FILE's reference (a built-in or a Python one) here, on the CPU, with no\n"
	"GPU, from inputs drawn as the spec says (this machine's generator: not the values a\n"
	"GPU run draws), and says which reference ran, how long it took and what it gave.\n"
	"Exit 0 when it ran; 1 when the reference or the spec fails; 3 when this machine\n"
	"cannot (no Python, NumPy or torch; not enough memory for these sizes).\n";

int kb_cli_ref(int argc, char **argv)
{
	const char *path = NULL;
	bool as_json = false;
	json_t *args = json_object(), *r = NULL;
	int status = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--arg") && i + 1 < argc) {
			if (kb_cli_parse_arg(args, argv[++i]) < 0)
				status = kb_cli_usage(usage_ref, "--arg takes NAME=VALUE, not '%s'", argv[i]);
		} else if (!strcmp(argv[i], "--json")) {
			as_json = true;
		} else if (!strcmp(argv[i], "--trust-python")) {
			setenv("KBENCH_TRUST_PYTHON", "1", 1);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_ref, stdout);
			goto out;
		} else if (!path && argv[i][0] != '-') {
			path = argv[i];
		} else {
			status = kb_cli_usage(usage_ref, "unexpected '%s'", argv[i]);
		}
	}
	if (status || !path) {
		status = status ? status : kb_cli_usage(usage_ref, "ref takes one FILE%s", "");
		goto out;
	}
	kb_err err = {0};
	int rc = kb_app_ref_check(path, args, &r, &err);
	if (!r) {
		fprintf(stderr, "kbench: %s\n", err.msg);
		status = KB_CLI_EXIT_ENV;
		goto out;
	}
	kb_buf text = KB_BUF_INIT;
	if (as_json)
		kb_cli_print_json(json_incref(r));
	else
		kb_app_ref_render(r, &text), fputs(text.s, stdout);
	kb_buf_free(&text);
	status = rc == 0 ? 0 : rc == KB_EUNSUP || rc == KB_ENOMEM || rc == KB_EIO ? KB_CLI_EXIT_ENV
		: KB_CLI_EXIT_KERNEL;
out:
	json_decref(r);
	json_decref(args);
	return status;
}

int kb_cli_devices(int argc, char **argv)
{
	/* the GPU (through the runner) and, GPU or not, the disassembler SASS
	 * needs: where it is, or the whole advice a missing one's note refers to */
	int rc = simple_request("devices", "usage: kbench devices [--json]\n\n"
				"The GPU, its state and cached ceilings; the disassembler SASS "
				"listings use.\n", argc, argv);
	if (argc > 1)
		return rc;
	char *tool;
	bool found = kb_compile_sass_tool(&tool) == 0;
	printf("  SASS        %s%s%s\n", found ? "" : "not shown: ", tool,
	       found ? "" : " Resources and occupancy do not need it.");
	free(tool);
	return rc;
}
