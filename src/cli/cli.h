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

/* "kbench: <fmt with arg>" and the usage on stderr; returns KB_CLI_EXIT_USAGE. */
int kb_cli_usage(const char *usage, const char *fmt, const char *arg);

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

/* ===== kbench_llm.c ===== */

/* `kbench optimize FILE ...` (argv[0] is "optimize"). */
int kb_cli_optimize(int argc, char **argv);
/* `kbench llm templates [--init] | config`. */
int kb_cli_llm(int argc, char **argv);

#endif
