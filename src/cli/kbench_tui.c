/*
 * kbench_tui.c - the `kbench-tui` entry point: arguments only; the
 * workbench is src/tui (kb_tui_run).
 */
#include "../app/app.h"
#include "../tui/tui.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: kbench-tui FILE [--arch sm_XX] [--option OPT]... [--watch] [--no-run] [--timeout S]\n"
	"       kbench-tui --replay SESSION [--arch sm_XX]\n"
	"\n"
	"Edit a kernel file (.cu or .ptx) and see, on every save, whether it compiles,\n"
	"its resources, occupancy, SASS and PTX, and - where a GPU is present - whether\n"
	"it is correct and how fast it is.  Every variant is kept in the session.\n"
	"\n"
	"  --arch sm_XX   target architecture (default: the GPU's, else sm_90)\n"
	"  --option OPT   a compiler option after the spec's //! options (repeatable)\n"
	"  --watch        also follow saves made by another editor\n"
	"  --no-run       compile only\n"
	"  --timeout S    a kernel running longer is reported as a hang (default 10)\n"
	"  --remote HOST  run on HOST's GPU over ssh (docs/remote.md; $KBENCH_REMOTE)\n"
	"  --replay SESSION  step through a recorded session (id or directory,\n"
	"                 see `kbench sessions`): each event's text and results\n"
	"\n"
	"F1 inside shows every key.\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch", required_argument, NULL, 'a'}, {"watch", no_argument, NULL, 'w'},
		{"no-run", no_argument, NULL, 'n'}, {"help", no_argument, NULL, 'h'},
		{"timeout", required_argument, NULL, 't'}, {"replay", required_argument, NULL, 'r'},
		{"option", required_argument, NULL, 'O'}, {NULL, 0, NULL, 0},
	};
	kb_app_target target;
	kb_err terr = {0};
	if (kb_app_target_parse(&argc, argv, &target, &terr) < 0) {
		fprintf(stderr, "kbench-tui: %s\n", terr.msg);
		return 2;
	}
	if (target.remote) /* the worker reads it (tui/worker.c) */
		setenv("KBENCH_REMOTE", target.remote, 1);
	kb_tui_opts o = {0};
	const char *options[64];
	o.options = options;
	int c;
	while ((c = getopt_long(argc, argv, "a:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': o.arch = optarg; break;
		case 'w': o.watch = true; break;
		case 'n': o.no_run = true; break;
		case 't': o.timeout_ms = atof(optarg) * 1e3; break;
		case 'r': o.replay = optarg; break;
		case 'O':
			if (o.noptions == (int)KB_ARRAY_LEN(options)) {
				fputs("kbench-tui: too many --option flags\n", stderr);
				return 2;
			}
			options[o.noptions++] = optarg;
			break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind != argc - (o.replay ? 0 : 1)) {
		fputs(usage, stderr);
		return 2;
	}
	o.path = o.replay ? NULL : argv[optind];
	return kb_tui_run(&o);
}
