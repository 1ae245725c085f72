/*
 * kbench_llm.c - the LLM verbs of `kbench`: `optimize FILE` and `llm
 * templates|config`.  Argument parsing, output and exit codes only; the
 * loop is kb_app_optimize, the settings kb_llm_config_load.  Ctrl-C
 * cancels the request in flight (a second one ends kbench as usual).
 */
#include "cli.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_optimize[] =
	"usage: kbench optimize FILE [--rounds N] [--max-tokens N] [--max-time SECONDS]\n"
	"                            [--llm-cmd CMD | --llm-url URL] [--llm-model M]\n"
	"                            [--llm-key-env NAME] [--llm-timeout S] [--llm-stall S]\n"
	"                            [--no-stream] [--question TEXT] [--dry-run] [--no-write]\n"
	"                            [--show-answers] [--profile] [--arch sm_XX] [--option OPT]...\n"
	"                            [--trials N] [--timeout SECONDS]\n"
	"\n"
	"Asks a model how to make FILE's kernel faster, with its measured facts (compile\n"
	"log, resources, occupancy, timing, roofline, profile, hot lines, SASS, what the\n"
	"session tried), turns the answer's code block (whole file or diff) into a\n"
	"variant, compiles, checks and times it like `kbench run`, feeds the outcome\n"
	"back, and repeats.  Only a CORRECT timed variant can become the best; at the\n"
	"end the best is written to FILE (the original stays in the session).  Every\n"
	"step is in the session: `kbench log`, `replay`, `report` show it.\n"
	"\n"
	"  --rounds N          questions to ask (default 3)\n"
	"  --max-tokens N      stop once prompts and answers used this many tokens\n"
	"  --max-time SECONDS  start no round after this long\n"
	"  --llm-cmd CMD       a command provider: the prompt on its stdin, the answer on\n"
	"                      its stdout ($KBENCH_LLM_ROUND says which round)\n"
	"  --llm-url URL       an OpenAI-compatible API root (…/v1); --llm-model, and\n"
	"  --llm-key-env NAME  the environment variable that holds the key\n"
	"  --llm-timeout S     a whole request; --llm-stall S: no data for S seconds\n"
	"  --no-stream         one JSON answer instead of server-sent events\n"
	"  --dry-run           print the first request body (never the key) and stop\n"
	"  --no-write          leave FILE as it is\n"
	"  --show-answers      print the answers as they stream\n"
	"  --profile           profile every run (quick counters, PC-sampling hot lines\n"
	"                      with their stall reasons and SASS) so the prompts have them\n"
	"\n"
	"Settings: $XDG_CONFIG_HOME/kbench/config, then $KBENCH_LLM_*, then these flags\n"
	"(docs/llm.md).  Exit status: 0 the rounds ran, 2 usage, 3 environment (no GPU to\n"
	"check a compiled candidate, the model unreachable or refusing the key),\n"
	"130 cancelled.\n";

static atomic_int cancel_flag;

static void on_sigint(int sig)
{
	if (atomic_load(&cancel_flag)) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	atomic_store(&cancel_flag, 1);
}

static void print_line(void *ctx, const char *line)
{
	printf("%s\n", line);
	fflush(stdout);
}

static void print_text(void *ctx, const char *s, size_t n)
{
	fwrite(s, 1, n, stdout);
	fflush(stdout);
}

typedef struct {
	kb_app_optimize_opts o;
	kb_llm_config c;
	const char *options[64];
	bool show;
} opt_cli;

/* A flag that sets an LLM setting; false when ch is none of them. */
static bool llm_flag(kb_llm_config *c, int ch, const char *arg)
{
	switch (ch) {
	case 'c': kb_llm_config_set(&c->command, arg); return true;
	case 'u': kb_llm_config_set(&c->base_url, arg), kb_llm_config_set(&c->command, NULL); return true;
	case 'm': kb_llm_config_set(&c->model, arg); return true;
	case 'k': kb_llm_config_set(&c->key_env, arg); return true;
	case 'T': c->timeout_s = atof(arg); return true;
	case 'S': c->stall_s = atof(arg); return true;
	case 'n': c->stream = false; return true;
	default: return false;
	}
}

static int parse_optimize(int argc, char **argv, opt_cli *p)
{
	static const struct option longopts[] = {
		{"rounds", required_argument, NULL, 'r'}, {"max-tokens", required_argument, NULL, 'K'},
		{"max-time", required_argument, NULL, 'W'}, {"llm-cmd", required_argument, NULL, 'c'},
		{"llm-url", required_argument, NULL, 'u'}, {"llm-model", required_argument, NULL, 'm'},
		{"llm-key-env", required_argument, NULL, 'k'}, {"llm-timeout", required_argument, NULL, 'T'},
		{"llm-stall", required_argument, NULL, 'S'}, {"no-stream", no_argument, NULL, 'n'},
		{"question", required_argument, NULL, 'q'}, {"dry-run", no_argument, NULL, 'd'},
		{"no-write", no_argument, NULL, 'w'}, {"show-answers", no_argument, NULL, 's'},
		{"arch", required_argument, NULL, 'a'}, {"option", required_argument, NULL, 'O'},
		{"trials", required_argument, NULL, 't'}, {"timeout", required_argument, NULL, 'x'},
		{"profile", no_argument, NULL, 'P'}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *quick[] = {"quick"};
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (llm_flag(&p->c, ch, optarg))
			continue;
		switch (ch) {
		case 'r': p->o.rounds = atoi(optarg); break;
		case 'K': p->o.max_tokens = atol(optarg); break;
		case 'W': p->o.max_seconds = atof(optarg); break;
		case 'q': p->o.question = optarg; break;
		case 'd': p->o.dry_run = true; break;
		case 'w': p->o.no_write = true; break;
		case 's': p->show = true; break;
		case 'P': /* the model sees counters and hot lines with their stalls */
			p->o.run.sections = quick, p->o.run.nsections = 1, p->o.run.hot = true;
			break;
		case 'a': p->o.run.arch = optarg; break;
		case 'O':
			if (p->o.run.noptions == (int)KB_ARRAY_LEN(p->options))
				return kb_cli_usage(usage_optimize, "too many --option flags%s", "");
			p->options[p->o.run.noptions++] = optarg;
			break;
		case 't': p->o.run.trials = atoi(optarg); break;
		case 'x': p->o.run.timeout_ms = atof(optarg) * 1e3; break;
		case 'h': fputs(usage_optimize, stdout); return -1;
		default: fputs(usage_optimize, stderr); return KB_CLI_EXIT_USAGE;
		}
	}
	if (optind != argc - 1)
		return kb_cli_usage(usage_optimize, "optimize takes one FILE%s", "");
	if (p->o.rounds < 0 || p->o.max_tokens < 0 || p->o.max_seconds < 0)
		return kb_cli_usage(usage_optimize, "bad --rounds, --max-tokens or --max-time%s", "");
	p->o.path = argv[optind];
	p->o.run.options = p->options;
	return 0;
}

static int optimize_exit(int rc)
{
	if (rc == 0)
		return 0;
	if (rc == KB_ECANCELED)
		return 130;
	if (rc == KB_ESPEC) /* the spec rules the baseline's values out */
		return KB_CLI_EXIT_KERNEL;
	return KB_CLI_EXIT_ENV;
}

int kb_cli_optimize(int argc, char **argv)
{
	opt_cli p;
	memset(&p, 0, sizeof p);
	p.o.rounds = 3;
	kb_err err = {0};
	if (kb_llm_config_load(&p.c, &err) < 0) {
		fprintf(stderr, "kbench: %s\n", err.msg);
		kb_llm_config_free(&p.c);
		return KB_CLI_EXIT_ENV;
	}
	int rc = parse_optimize(argc, argv, &p);
	if (rc != 0) {
		kb_llm_config_free(&p.c);
		return rc < 0 ? 0 : rc;
	}
	p.o.llm = &p.c;
	p.o.cancel = &cancel_flag;
	p.o.on_line = print_line;
	p.o.on_text = p.show ? print_text : NULL;
	signal(SIGINT, on_sigint);
	kb_runner *r = kb_runner_new(NULL);
	kb_runner_share(r);
	kb_buf out = KB_BUF_INIT;
	rc = kb_app_optimize(r, &p.o, &out, &err);
	fputs(out.s ? out.s : "", stdout);
	if (rc < 0)
		fprintf(stderr, "kbench: %s\n", err.msg);
	kb_buf_free(&out);
	kb_runner_close(r);
	kb_llm_config_free(&p.c);
	return optimize_exit(rc);
}

/* ---- kbench llm templates [--init] | config ---- */

static int templates(bool init)
{
	char *dir = kb_llm_templates_dir();
	kb_err err = {0};
	printf("templates: %s/NAME.md (a file there replaces the built-in; {{key}} slots: "
	       "docs/llm.md)\n", dir);
	if (init && kb_mkdirs(dir, &err) < 0) {
		fprintf(stderr, "kbench: %s\n", err.msg);
		free(dir);
		return KB_CLI_EXIT_ENV;
	}
	for (int i = 0; kb_llm_template_names[i]; i++) {
		const char *name = kb_llm_template_names[i];
		char *path = kb_xasprintf("%s/%s.md", dir, name);
		const char *text = kb_llm_template_builtin(name);
		bool had = kb_file_exists(path);
		if (init && !had)
			kb_file_write(path, text, strlen(text), &err);
		printf("  %-9s %s\n", name, had ? path : init ? "written from the built-in"
						   : "built-in (`kbench llm templates --init` copies it)");
		free(path);
	}
	free(dir);
	return 0;
}

static int show_config(void)
{
	kb_llm_config c;
	kb_err err = {0};
	if (kb_llm_config_load(&c, &err) < 0) {
		fprintf(stderr, "kbench: %s\n", err.msg);
		return KB_CLI_EXIT_ENV;
	}
	char *path = kb_llm_config_path();
	const char *kv = c.key_env ? getenv(c.key_env) : NULL;
	printf("config file   %s%s\n", path, kb_file_exists(path) ? "" : " (none: defaults)");
	printf("provider      %s\n", kb_llm_provider_for(&c)->name);
	if (c.command)
		printf("command       %s\n", c.command);
	printf("base_url      %s\nmodel         %s\n", c.base_url, c.model);
	printf("key           $%s (%s)%s%s\n", c.key_env ? c.key_env : "", kv && *kv ? "set" : "not set",
	       c.key_file ? ", key_file " : "", c.key_file ? c.key_file : "");
	printf("timeouts      %g s whole, %g s stall, %g s connect; %d retries; stream %s\n",
	       c.timeout_s, c.stall_s, c.connect_s, c.retries, c.stream ? "on" : "off");
	free(path);
	kb_llm_config_free(&c);
	return 0;
}

int kb_cli_llm(int argc, char **argv)
{
	static const char u[] = "usage: kbench llm templates [--init] | kbench llm config\n";
	if (argc >= 2 && !strcmp(argv[1], "templates"))
		return templates(argc >= 3 && !strcmp(argv[2], "--init"));
	if (argc >= 2 && !strcmp(argv[1], "config"))
		return show_config();
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return fputs(u, stdout), 0;
	return kb_cli_usage(u, "llm takes templates or config%s", "");
}
