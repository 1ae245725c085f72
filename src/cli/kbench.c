/*
 * kbench.c - the `kbench <verb>` entry point: argument parsing, output and
 * exit codes only.  Every verb's work is a kb_app_* call.
 * Exit codes: 0 ok, 1 kernel or spec error, 2 usage error, 3 environment
 * (a file, library or device could not be used).
 */
#include "cli.h"

#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

enum { EXIT_KERNEL = 1, EXIT_USAGE = 2, EXIT_ENV = 3 };

static const char usage_main[] =
	"usage: kbench <command> [options]\n"
	"\n"
	"commands:\n"
	"  compile FILE   compile a .cu, .ptx or .tile kernel file: resources, occupancy, SASS\n"
	"  run FILE       compile, check against the reference, time, compare with the ceilings\n"
	"  profile FILE   run, then hardware counters by section and hot spots (CUPTI)\n"
	"  calibrate      measure this GPU's ceilings (bandwidth, FMA and tensor-core rates)\n"
	"  devices        show the GPU, its state and its cached ceilings\n"
	"  serve          the runner process (framed JSON on stdin/stdout; used by run)\n"
	"  ref FILE       compute the spec's reference here, on the CPU (no GPU)\n"
	"  new --from-kernelbench PROBLEM.py  a KernelBench problem as a kernel file\n"
	"\n"
	"  log [FILE|SESSION]        each file's variants with their numbers, best marked\n"
	"  show vN [--file F]        a variant's source and Result\n"
	"  diff vA vB [--source|--sass|--numbers] [--file F]\n"
	"                            compare two variants (all three by default)\n"
	"  checkout vN [--file F]    write vN to the file (the current text is kept first)\n"
	"  label vN LABEL [--file F] name a variant (usable wherever vN is)\n"
	"  note vN TEXT... [--file F]  keep a remark with a variant\n"
	"  sessions                  list sessions (* = current)\n"
	"  session new [NAME]        start a new session (compile and run record into it)\n"
	"  session export S -o DIR   a session as a plain-text folder (sessions/NAME/ of a repo)\n"
	"  session import DIR        bring such a folder into the local store\n"
	"  replay SESSION [--file F] [--only vA,vB]  re-run a session's variants here: recorded vs now\n"
	"  report SESSION -o FILE.md|FILE.html [--file F]  a file's variants for code review\n"
	"  (variants are numbered per file; in a session of several files, --file says which)\n"
	"\n"
	"  optimize FILE [--rounds N] [--llm-cmd CMD]  ask a model, check and time each\n"
	"                            proposal, keep the best CORRECT one (docs/llm.md)\n"
	"  llm templates [--init] | llm config  the prompt templates; the LLM settings\n"
	"\n"
	"options:\n"
	"  -h, --help     show help (also `kbench COMMAND --help`)\n"
	"  --version      print the version\n"
	"\n"
	"Exit status: 0 ok, 1 kernel or spec error, 2 usage error, 3 environment error.\n";

static const char usage_compile[] =
	"usage: kbench compile FILE [--arch sm_XX] [--define K=V]... [--option OPT]... [--json]\n"
	"                           [--no-cache] [--no-sass] [--emit-cuda]\n"
	"\n"
	"Compiles FILE (.cu through NVRTC, .ptx through nvJitLink, .tile lowered to CUDA C\n"
	"by kbench's tile compiler, then NVRTC) for one architecture\n"
	"and prints registers, shared and local memory, spills, theoretical occupancy\n"
	"and what limits it (at the //! launch line's block size), and the SASS\n"
	"instruction mix (when nvdisasm is found: $KBENCH_NVDISASM, the CUDA toolkit's\n"
	"bin/, then PATH).  No GPU is needed.  NVRTC and nvJitLink come from\n"
	"$CUDA_HOME, else the toolkit kbench was built against, else the loader's path.\n"
	"\n"
	"  --arch sm_XX      target (default: the present GPU's, else sm_90; $KBENCH_ARCH)\n"
	"  -D, --define K=V  a preprocessor definition; overrides a //! tune default\n"
	"  --option OPT      a compiler option (NVRTC for .cu, nvJitLink for .ptx), after\n"
	"                    the spec's //! options: --option -use_fast_math\n"
	"                    --option=-maxrregcount=64 (one option per flag)\n"
	"  --json            print the full structured result as JSON\n"
	"  --no-cache        compile even when the compile cache has this variant\n"
	"  --no-sass         skip disassembly\n"
	"  --emit-cuda       a .tile file: print the CUDA C it lowers to, and nothing else\n"
	"  --remote HOST     for HOST's GPU (its arch asked over ssh; $KBENCH_REMOTE)\n"
	"\n"
	"The cache lives under $XDG_CACHE_HOME/kbench/compile (default ~/.cache/kbench).\n";

static void print_diags(const kb_diags *d)
{
	if (!d->n)
		return;
	kb_buf out = KB_BUF_INIT;
	kb_diag_render(d, &out, isatty(2) && !getenv("NO_COLOR"));
	fputs(out.s, stderr);
	kb_buf_free(&out);
}

/* Every compile lands in the current session (app/record.c); a recording
 * problem is a warning, never a failed compile. */
static void record_compile(const kb_compile_unit *u)
{
	if (!kb_app_recording() || !u->src.path)
		return;
	kb_err err = {0};
	if (kb_app_record_compile(u, NULL, &err) < 0)
		fprintf(stderr, "kbench: warning: not recorded in the session: %s\n", err.msg);
}

/* Records a run and appends to deltas how it compares with the previous
 * and best variants of the file in the session. */
static void record_run(const char *path, json_t *res, kb_buf *deltas, kb_variant *v)
{
	if (!kb_app_recording())
		return;
	kb_err err = {0};
	if (kb_app_record_run(path, res, v, deltas, &err) < 0)
		fprintf(stderr, "kbench: warning: not recorded in the session: %s\n", err.msg);
}

/* The headline (what kbench-tui shows atop its Summary): one line of the
 * terminal's width, coloured on a terminal. */
static void headline(const char *path, const kb_variant *v, json_t *res, kb_buf *out)
{
	kb_app_headline h;
	bool tty = isatty(1);
	struct winsize ws;
	int width = tty && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 ? ws.ws_col : 100;
	kb_app_headline_of(kb_app_recording() && v->name[0] ? path : NULL, v->name[0] ? v->name : NULL,
			   res, &h, NULL);
	kb_app_headline_text(&h, width, tty && !getenv("NO_COLOR"), out);
	kb_buf_cat(out, "\n");
	kb_app_headline_free(&h);
}

/* The --remote host's GPU arch (a new string), or NULL having said why. */
static char *ask_remote_arch(void)
{
	kb_runner *r = kb_cli_runner(false);
	json_t *fail = NULL;
	kb_err err = {0};
	char *arch = NULL;
	if (kb_runner_connect(r, &fail, &err) < 0)
		fprintf(stderr, "kbench: %s\n", err.msg);
	else if (fail)
		fprintf(stderr, "kbench: %s\n", json_string_value(json_object_get(fail, "message")));
	else if (kb_runner_arch(r))
		arch = kb_xstrdup(kb_runner_arch(r));
	else
		fprintf(stderr, "kbench: NO GPU on %s (its runner says: %s); --arch sm_XX compiles "
			"without asking\n", kb_cli_remote_host(),
			json_string_value(json_object_get(kb_runner_peer(r), "gpu_error")));
	json_decref(fail);
	kb_runner_close(r);
	return arch;
}

static int cmd_compile(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"arch", required_argument, NULL, 'a'}, {"define", required_argument, NULL, 'D'},
		{"json", no_argument, NULL, 'j'}, {"no-cache", no_argument, NULL, 'n'},
		{"no-sass", no_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'},
		{"option", required_argument, NULL, 'O'}, {"emit-cuda", no_argument, NULL, 'E'},
		{NULL, 0, NULL, 0},
	};
	kb_compile_unit_opts opts = {.want_sass = true};
	const char *defines[64], *options[64];
	bool json = false, emit = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "a:D:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a': opts.arch = optarg; break;
		case 'D':
			if (opts.ndefines == (int)KB_ARRAY_LEN(defines))
				return kb_cli_usage(usage_compile, "too many --define flags%s", "");
			defines[opts.ndefines++] = optarg;
			break;
		case 'O':
			if (opts.noptions == (int)KB_ARRAY_LEN(options))
				return kb_cli_usage(usage_compile, "too many --option flags%s", "");
			options[opts.noptions++] = optarg;
			break;
		case 'j': json = true; break;
		case 'E': emit = true; opts.want_sass = false; break;
		case 'n': opts.no_cache = true; break;
		case 's': opts.want_sass = false; break;
		case 'h': fputs(usage_compile, stdout); return 0;
		default: fputs(usage_compile, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return kb_cli_usage(usage_compile, "compile takes one FILE%s", "");
	opts.defines = defines;
	opts.options = options;
	if (opts.arch) {
		int sm;
		if (kb_compile_arch_parse(opts.arch, &sm) < 0)
			return kb_cli_usage(usage_compile, "bad --arch '%s' (expected e.g. sm_90)",
					   opts.arch);
	}
	if (emit && strcmp(kb_extension(argv[optind]), "tile"))
		return kb_cli_usage(usage_compile, "--emit-cuda is for .tile files, not %s", argv[optind]);
	char *remote_arch = NULL;
	if (kb_cli_remote_host() && !opts.arch && (remote_arch = ask_remote_arch()) == NULL)
		return EXIT_ENV;
	opts.arch = remote_arch ? remote_arch : opts.arch;
	kb_compile_unit r;
	kb_err err = {0};
	int rc = kb_compile_unit_run(argv[optind], NULL, &opts, &r, &err);
	free(remote_arch);
	if (rc < 0 && rc != KB_ESPEC && rc != KB_ECOMPILE) {
		fprintf(stderr, "kbench: %s\n", err.msg);
		kb_compile_unit_free(&r);
		return rc == KB_EINVAL ? EXIT_USAGE : EXIT_ENV;
	}
	if (emit) { /* the generated CUDA, or why there is none */
		print_diags(&r.diags);
		bool lowered = r.gen.text != NULL;
		if (lowered)
			fputs(r.gen.text, stdout);
		kb_compile_unit_free(&r);
		return lowered ? 0 : EXIT_KERNEL;
	}
	record_compile(&r);
	if (json) {
		kb_cli_print_json(kb_app_compile_json(&r));
	} else {
		print_diags(&r.diags);
		kb_buf out = KB_BUF_INIT;
		kb_app_compile_render(&r, &out);
		fputs(out.s, r.build.ok ? stdout : stderr);
		kb_buf_free(&out);
	}
	kb_compile_unit_free(&r);
	return rc < 0 ? EXIT_KERNEL : 0;
}

/* ---- run ------------------------------------------------------------------ */

static const char usage_run[] =
	"usage: kbench run FILE [--arch sm_XX] [--define K=V]... [--option OPT]... [--arg N=V]...\n"
	"                       [--trials N] [--seed S] [--timeout SECONDS] [--timing MODE]\n"
	"                       [--no-sweep] [--json] [--trust-python]\n"
	"\n"
	"Compiles FILE for the GPU, fills its inputs per the //! spec, poisons its outputs,\n"
	"launches it and checks every output against the reference (trials with fresh\n"
	"seeds), then times it (device events, L2 flushed, adaptive repetitions), re-checks\n"
	"after the timed loop, and compares the result with this GPU's ceilings.\n"
	"An incorrect kernel is reported INCORRECT and never timed as if it were right.\n"
	"`sweep` and `tune` lines of the spec run after the base run (unless --no-sweep).\n"
	"\n"
	"  --option OPT      a compiler option after the spec's //! options (see compile)\n"
	"  --arg N=V         override a //! arg for this run\n"
	"  --trials N        correctness trials (default 3)\n"
	"  --seed S          base seed (default: fresh, printed)\n"
	"  --timeout SECONDS a GPU phase running longer is a hang (default 10)\n"
	"  --timing MODE     diff: events around (flush, kernel) minus events around the\n"
	"                    flush alone, L2 flushed before each, so the launch latency an\n"
	"                    event adds drops out; events: plain event pairs around each\n"
	"                    launch; graph: a CUDA graph of launches over rotated buffer\n"
	"                    copies larger than L2; auto (default): graph under 10 us,\n"
	"                    else diff\n"
	"  --json            print the full Result as JSON\n"
	"  --trust-python    run a Python reference (`ref numpy|torch`) of a file that is\n"
	"                    not your own (a session folder); see docs/python-refs.md\n"
	"  --metrics a,b,c   hardware counters by Nsight Compute name (kbench profile)\n"
	"  --section NAME    sol, memory, compute, occupancy, stalls, roofline, or quick\n"
	"                    (one pass: cheap enough for every save); profile: all\n"
	"  --hot             hot spots: PC sampling mapped to SASS and source lines, with\n"
	"                    each instruction's SASS metrics (as --sass-metrics)\n"
	"  --sass-metrics    per-instruction counts from one instrumented launch (CUPTI\n"
	"                    SASS metrics): executions, shared-memory wavefronts and\n"
	"                    bank conflicts of every shared-memory instruction\n"
	"  --no-sass-metrics --hot without them (no instrumented launch)\n"
	"  --cache-control all|none\n"
	"                    as Nsight Compute's flag: all (default) flushes L2 before\n"
	"                    every counter pass; none flushes before the first only, so\n"
	"                    later passes start with what the previous one left in L2\n"
	"\n"
	"\n"
	KB_CLI_TARGET_USAGE
	"\n"
	"`kbench profile FILE` is `kbench run` with every section (and one trial\n"
	"unless --trials says otherwise); counters need\n"
	"permission to read GPU performance counters (root, or see the message).\n"
	"\n"
	"Exit status: 0 correct, 1 incorrect/impossible/fault/timeout/spec or compile error,\n"
	"2 usage error, 3 no GPU or the runner could not start.\n";

typedef struct {
	kb_app_run_opts o;
	const char *defines[64];
	const char *options[64];
	const char *metrics[256];
	const char *sections[16];
	char *metric_text[16];    /* --metrics arguments, split in place */
	int nmetric_text;
	json_t *args;
	bool json, no_sweep;
	int sassm;                /* --sass-metrics 1, --no-sass-metrics -1, else 0 */
} run_cli;

/* "a,b,c" -> metrics (the text is kept for the names' lifetime). */
static int add_metrics(run_cli *c, const char *list)
{
	if (c->nmetric_text == (int)KB_ARRAY_LEN(c->metric_text))
		return -1;
	char *t = c->metric_text[c->nmetric_text++] = kb_xstrdup(list);
	for (char *save = NULL, *m = strtok_r(t, ", ", &save); m; m = strtok_r(NULL, ", ", &save)) {
		if (c->o.nmetrics == (int)KB_ARRAY_LEN(c->metrics))
			return -1;
		c->metrics[c->o.nmetrics++] = m;
	}
	return 0;
}

static int parse_run(int argc, char **argv, run_cli *c)
{
	static const struct option longopts[] = {
		{"arch", required_argument, NULL, 'a'}, {"define", required_argument, NULL, 'D'},
		{"arg", required_argument, NULL, 'A'}, {"trials", required_argument, NULL, 't'},
		{"seed", required_argument, NULL, 's'}, {"timeout", required_argument, NULL, 'T'},
		{"json", no_argument, NULL, 'j'}, {"no-sweep", no_argument, NULL, 'n'},
		{"timing", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'},
		{"metrics", required_argument, NULL, 'M'}, {"section", required_argument, NULL, 'S'},
		{"hot", no_argument, NULL, 'H'}, {"cache-control", required_argument, NULL, 'C'},
		{"option", required_argument, NULL, 'O'}, {"sass-metrics", no_argument, NULL, 'X'},
		{"no-sass-metrics", no_argument, NULL, 'x'}, {"trust-python", no_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "a:D:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'P': setenv("KBENCH_TRUST_PYTHON", "1", 1); break; /* app/pyrefs.c's yes */
		case 'a': c->o.arch = optarg; break;
		case 'D':
			if (c->o.ndefines == (int)KB_ARRAY_LEN(c->defines))
				return kb_cli_usage(usage_run, "too many --define flags%s", "");
			c->defines[c->o.ndefines++] = optarg;
			break;
		case 'O':
			if (c->o.noptions == (int)KB_ARRAY_LEN(c->options))
				return kb_cli_usage(usage_run, "too many --option flags%s", "");
			c->options[c->o.noptions++] = optarg;
			break;
		case 'A':
			if (kb_cli_parse_arg(c->args, optarg) < 0)
				return kb_cli_usage(usage_run, "--arg takes NAME=VALUE, not '%s'", optarg);
			break;
		case 't': c->o.trials = atoi(optarg); break;
		case 's': c->o.has_seed = true, c->o.seed = strtoull(optarg, NULL, 0); break;
		case 'T': c->o.timeout_ms = atof(optarg) * 1e3; break;
		case 'j': c->json = true; break;
		case 'n': c->no_sweep = true; break;
		case 'm':
			if (strcmp(optarg, "events") && strcmp(optarg, "graph") && strcmp(optarg, "auto") &&
			    strcmp(optarg, "diff"))
				return kb_cli_usage(usage_run, "--timing takes events, diff, graph or auto, not '%s'",
						   optarg);
			c->o.timing = strcmp(optarg, "auto") ? optarg : NULL;
			break;
		case 'M':
			if (add_metrics(c, optarg) < 0)
				return kb_cli_usage(usage_run, "too many metrics%s", "");
			break;
		case 'S':
			if (!kb_profile_section(optarg) ||
			    c->o.nsections == (int)KB_ARRAY_LEN(c->sections))
				return kb_cli_usage(usage_run, "unknown --section '%s' (sol, memory, compute, "
						   "occupancy, stalls, roofline, quick)", optarg);
			c->sections[c->o.nsections++] = optarg;
			break;
		case 'H': c->o.hot = true; break;
		case 'X': c->sassm = 1; break;
		case 'x': c->sassm = -1; break;
		case 'C':
			if (strcmp(optarg, "all") && strcmp(optarg, "none"))
				return kb_cli_usage(usage_run, "--cache-control takes all or none, not '%s'",
						   optarg);
			c->o.cache_control = optarg;
			break;
		case 'h': fputs(usage_run, stdout); return -1;
		default: fputs(usage_run, stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return kb_cli_usage(usage_run, "run takes one FILE%s", "");
	if (c->o.trials < 0 || (c->o.timeout_ms < 0))
		return kb_cli_usage(usage_run, "bad --trials or --timeout%s", "");
	c->o.path = argv[optind];
	/* --hot brings the SASS metrics along (docs/decisions.md) */
	c->o.sass_metrics = c->sassm > 0 || (c->o.hot && c->sassm == 0);
	c->o.defines = c->defines;
	c->o.options = c->options;
	c->o.metrics = c->metrics;
	c->o.sections = c->sections;
	c->o.args = json_object_size(c->args) ? c->args : NULL;
	return 0;
}

/* 0 for CORRECT; 3 when the machine could not say; 1 for what the kernel
 * and its spec did (INCORRECT, FAULT, SPEC ERROR, UNSUPPORTED ...). */
static int run_exit(json_t *res)
{
	switch (kb_app_verdict(res)) {
	case KB_VERDICT_CORRECT:
		return 0;
	/* a runner that broke the protocol is the environment's fault, not the kernel's */
	case KB_VERDICT_NO_GPU: case KB_VERDICT_ERROR: case KB_VERDICT_DISCONNECTED:
	case KB_VERDICT_UNREACHABLE: case KB_VERDICT_PROTOCOL_MISMATCH:
	case KB_VERDICT_RUNNER_ERROR: case KB_VERDICT_NO_REFERENCE:
		return EXIT_ENV;
	default:
		return EXIT_KERNEL;
	}
}

/* The spec's sweep and tune lines, read on this side to plan the runs;
 * false (and nothing to free) when it has none. */
static bool load_spec(const char *path, kb_spec *spec)
{
	kb_source src;
	kb_diags d = {0};
	memset(spec, 0, sizeof *spec);
	if (kb_compile_source_load(&src, path, NULL) < 0)
		return false;
	kb_compile_spec_parse(&src, spec, &d);
	kb_diags_free(&d);
	kb_compile_source_free(&src);
	if (spec->nsweeps > 0 || spec->ntunes > 0)
		return true;
	kb_compile_spec_free(spec);
	return false;
}

static int run_or_profile(int argc, char **argv, bool profile)
{
	run_cli c;
	memset(&c, 0, sizeof c);
	c.args = json_object();
	int rc = parse_run(argc, argv, &c);
	if (rc == 0 && profile && !c.o.nmetrics && !c.o.nsections) {
		/* kbench profile: every section unless told otherwise */
		for (int i = 0; kb_profile_sections()[i]; i++)
			c.sections[c.o.nsections++] = kb_profile_sections()[i]->name;
	}
	if (profile)
		c.no_sweep = true;
	/* Profiling is about why, not whether: one correctness trial unless
	 * asked for more (a wrong kernel is still reported INCORRECT). */
	if (profile && c.o.trials == 0)
		c.o.trials = 1;
	if (rc != 0) {
		json_decref(c.args);
		return rc < 0 ? 0 : rc;
	}
	kb_log("cli: %s %s", profile ? "profile" : "run", c.o.path);
	/* With --gpus/--hosts/--launcher and something to sweep, the base run
	 * is the first job of the workers' queue: the others start on the
	 * sweep meanwhile (whose results count only when it is CORRECT). */
	kb_spec spec;
	json_t *checked = NULL;
	kb_err cerr = {0};
	/* the file and its spec first, GPU or not: as compile judges them */
	if ((rc = kb_app_run_check(&c.o, &checked, &cerr)) < 0) {
		fprintf(stderr, "kbench: %s\n", cerr.msg);
		json_decref(c.args);
		return rc == KB_EINVAL ? EXIT_USAGE : EXIT_ENV;
	}
	bool sweeping = !checked && !c.no_sweep && load_spec(c.o.path, &spec);
	kb_pool *pool = sweeping ? kb_cli_pool() : NULL;
	kb_runner *r = pool || checked ? NULL : kb_cli_runner(true);
	json_t *res = checked, *sweeps = NULL;
	kb_buf deltas = KB_BUF_INIT;
	kb_variant rec = {0}; /* the run as recorded: its name for the headline */
	kb_err err = {0};
	int status;
	if (res) {
		kb_log("cli: spec error, no runner");
	} else if (pool) {
		if (kb_app_sweep_and_tune(NULL, pool, &c.o, &spec, kb_cli_show_progress, NULL, &res, &sweeps,
					  &err) < 0 || !res) {
			kb_cli_clear_progress();
			fprintf(stderr, "kbench: %s\n", err.msg[0] ? err.msg : "the workers gave no result");
			status = EXIT_ENV;
			goto out;
		}
	} else if (kb_app_run(r, &c.o, kb_cli_show_progress, NULL, &res, &err) < 0) {
		kb_cli_clear_progress();
		fprintf(stderr, "kbench: %s\n", err.msg);
		status = EXIT_ENV;
		goto out;
	}
	status = run_exit(res);
	kb_log("cli: result in");
	record_run(c.o.path, res, &deltas, &rec);
	kb_log("cli: recorded");
	if (pool && status != 0) { /* as without workers: a sweep only of a CORRECT kernel */
		json_decref(sweeps);
		sweeps = NULL;
	} else if (!pool && sweeping && status == 0) {
		kb_app_sweep_and_tune(r, NULL, &c.o, &spec, kb_cli_show_progress, NULL, NULL, &sweeps, &err);
	}
	kb_cli_clear_progress();
	if (c.json) {
		if (sweeps)
			json_object_set(sweeps, "result", res);
		kb_cli_print_json(json_incref(sweeps ? sweeps : res));
	} else {
		kb_buf out = KB_BUF_INIT;
		headline(c.o.path, &rec, res, &out);
		kb_app_run_render(res, &out);
		if (deltas.len)
			kb_buf_cat(&out, deltas.s);
		if (profile || c.o.nmetrics || c.o.nsections || c.o.hot || c.o.sass_metrics)
			kb_app_profile_render(res, &out);
		if (sweeps)
			kb_app_sweep_render(sweeps, &out);
		fputs(out.s, stdout);
		kb_buf_free(&out);
	}
	if (sweeps && status == 0) {
		size_t i;
		json_t *row;
		json_array_foreach(json_object_get(sweeps, "sweep"), i, row) {
			json_t *rr = json_object_get(row, "result");
			/* a point a require line rules out was pruned, not failed */
			if (kb_app_verdict(rr) != KB_VERDICT_UNSUPPORTED && run_exit(rr) != 0)
				status = EXIT_KERNEL;
		}
	}
out:
	kb_buf_free(&deltas);
	kb_session_variant_free(&rec);
	json_decref(res);
	json_decref(sweeps);
	json_decref(c.args);
	for (int i = 0; i < c.nmetric_text; i++)
		free(c.metric_text[i]);
	kb_log("cli: printed");
	if (sweeping)
		kb_compile_spec_free(&spec);
	kb_pool_free(pool);
	if (r)
		kb_runner_close(r); /* its teardown is not the user's wait */
	kb_log("cli: runner released");
	return status;
}

static int cmd_run(int argc, char **argv)
{
	return run_or_profile(argc, argv, false);
}

static int cmd_profile(int argc, char **argv)
{
	return run_or_profile(argc, argv, true);
}

static const struct {
	const char *name;
	int (*run)(int, char **);
} commands[] = {
	{"remote", kb_cli_remote},
	{"report", kb_cli_report},
	{"log", kb_cli_log},
	{"show", kb_cli_show},
	{"diff", kb_cli_diff},
	{"checkout", kb_cli_checkout},
	{"sessions", kb_cli_sessions},
	{"label", kb_cli_label},
	{"note", kb_cli_note},
	{"session", kb_cli_session},
	{"replay", kb_cli_replay},
	{"compile", cmd_compile},
	{"run", cmd_run},
	{"profile", cmd_profile},
	{"calibrate", kb_cli_calibrate},
	{"devices", kb_cli_devices},
	{"serve", kb_cli_serve},
	{"new", kb_cli_new},
	{"ref", kb_cli_ref},
	{"optimize", kb_cli_optimize},
	{"llm", kb_cli_llm},
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return fputs(usage_main, stderr), EXIT_USAGE;
	const char *verb = argv[1];
	kb_log("cli: %s starts", verb);
	if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help"))
		return fputs(usage_main, stdout), 0;
	if (!strcmp(verb, "--version") || !strcmp(verb, "version"))
		return printf("kbench %s\n", KB_VERSION), 0;
	kb_err err = {0};
	if (strcmp(verb, "serve") && strcmp(verb, "remote") &&
	    kb_cli_target_parse(&argc, argv, &err) < 0)
		return kb_cli_usage(usage_main, "%s", err.msg);
	for (size_t i = 0; i < KB_ARRAY_LEN(commands); i++)
		if (!strcmp(verb, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return kb_cli_usage(usage_main, "unknown command '%s'", verb);
}
