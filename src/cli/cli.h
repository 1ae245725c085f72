/*
 * cli.h - what the files of `kbench` (src/cli/kbench*.c) share: the exit
 * codes and the verbs that live outside kbench.c.
 */
#ifndef KB_CLI_H
#define KB_CLI_H

#include "../app/app.h"

enum { KB_CLI_EXIT_KERNEL = 1, KB_CLI_EXIT_USAGE = 2, KB_CLI_EXIT_ENV = 3 };

/* The flags main takes out of every verb's argv (kb_app_target_parse), for
 * the help of each verb that uses them. */
#define KB_CLI_TARGET_USAGE \
	"where it runs (docs/remote.md):\n" \
	"  --remote HOST     on HOST's GPU over your ssh (compiled here, the cubin sent;\n" \
	"                    $KBENCH_REMOTE)\n" \
	"  --gpus all|0,1    sweep, tune and replay rows over these GPUs of this machine,\n" \
	"                    one queue, each row naming its GPU\n" \
	"  --hosts h1,h2     the same over every GPU of these hosts (ssh)\n" \
	"  --launcher CMD    workers started as `CMD kbench serve` (srun ...) for the rows\n" \
	"  --workers N       how many workers --launcher starts (default 1)\n"

/* ===== kbench_out.c: what every verb prints and parses alike ===== */

/* "kbench: <fmt with arg>" and the usage on stderr; returns KB_CLI_EXIT_USAGE. */
int kb_cli_usage(const char *usage, const char *fmt, const char *arg);
/* j (its reference taken) on stdout, indented; -1 when it cannot be printed. */
int kb_cli_print_json(json_t *j);
/* NAME=VALUE into args (an integer where it reads as one, else a real);
 * -1 when there is no NAME. */
int kb_cli_parse_arg(json_t *args, const char *kv);
/* The runner's progress (a kb_runner_call callback) on one stderr line,
 * when stderr is a terminal; cleared by kb_cli_clear_progress. */
void kb_cli_show_progress(void *ctx, json_t *p);
void kb_cli_clear_progress(void);

/* ===== kbench_target.c: where the verbs run ===== */

/* Takes --remote / --gpus / --hosts / --launcher out of argv (main, once,
 * before the verb).  Returns 0 or KB_EINVAL with err. */
int kb_cli_target_parse(int *argc, char **argv, kb_err *err);
/* The --remote host, or NULL. */
const char *kb_cli_remote_host(void);
/* The runner a verb talks to: over ssh with --remote, else local (shared
 * between one-shot commands when share and this process may). */
kb_runner *kb_cli_runner(bool share);
/* The workers of --gpus / --hosts / --launcher, or NULL. */
kb_pool *kb_cli_pool(void);

/* ===== kbench_session.c: the session verbs (argv[0] is the verb) ===== */

int kb_cli_log(int argc, char **argv);
int kb_cli_show(int argc, char **argv);
int kb_cli_diff(int argc, char **argv);
int kb_cli_checkout(int argc, char **argv);
int kb_cli_label(int argc, char **argv);
int kb_cli_note(int argc, char **argv);
int kb_cli_sessions(int argc, char **argv);
int kb_cli_session(int argc, char **argv);
int kb_cli_replay(int argc, char **argv);
int kb_cli_report(int argc, char **argv);
int kb_cli_remote(int argc, char **argv);

/* ===== kbench_tools.c: the runner and this machine (argv[0] is the verb) ===== */

int kb_cli_serve(int argc, char **argv);
int kb_cli_calibrate(int argc, char **argv);
int kb_cli_devices(int argc, char **argv);
int kb_cli_new(int argc, char **argv);
int kb_cli_ref(int argc, char **argv);

/* ===== kbench_llm.c ===== */

/* `kbench optimize FILE ...` (argv[0] is "optimize"). */
int kb_cli_optimize(int argc, char **argv);
/* `kbench llm templates [--init] | config`. */
int kb_cli_llm(int argc, char **argv);

#endif
