/*
 * remote.c - where runs go (docs/remote.md): the flags every GPU verb
 * takes (--remote HOST, --gpus, --hosts, --launcher, --workers, and
 * $KBENCH_REMOTE), the runner or the pool of workers they name, and
 * `kbench remote setup HOST`, which copies the `make dist` bundle there,
 * unpacks it and checks the remote's driver through its own runner.
 */
#define _GNU_SOURCE /* posix_spawn file actions with O_* */
#include "app_int.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool take(int *argc, char **argv, int i, const char *flag, const char **val)
{
	size_t n = strlen(flag);
	if (strncmp(argv[i], flag, n) || (argv[i][n] && argv[i][n] != '='))
		return false;
	int used = argv[i][n] == '=' ? 1 : 2;
	*val = argv[i][n] == '=' ? argv[i] + n + 1 : i + 1 < *argc ? argv[i + 1] : NULL;
	memmove(argv + i, argv + i + used, (size_t)(*argc - i - used + 1) * sizeof *argv);
	*argc -= used;
	return true;
}

int kb_app_target_parse(int *argc, char **argv, kb_app_target *t, kb_err *err)
{
	memset(t, 0, sizeof *t);
	const char *workers = NULL;
	struct { const char *flag; const char **val; } flags[] = {
		{"--remote", &t->remote}, {"--gpus", &t->gpus}, {"--hosts", &t->hosts},
		{"--launcher", &t->launcher}, {"--workers", &workers},
	};
	for (int i = 1; i < *argc;) {
		bool got = false;
		for (size_t f = 0; f < KB_ARRAY_LEN(flags) && !got; f++) {
			const char *v = NULL;
			if (!take(argc, argv, i, flags[f].flag, &v))
				continue;
			if (!v || !*v)
				return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "%s needs a value",
						  flags[f].flag);
			*flags[f].val = v;
			got = true;
		}
		if (!got)
			i++;
	}
	const char *env = getenv("KBENCH_REMOTE");
	if (!t->remote && env && *env)
		t->remote = env;
	t->workers = workers ? atoi(workers) : 0;
	if (workers && (t->workers < 1 || t->workers > 1024))
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "bad --workers '%s'", workers);
	if (t->workers && !t->launcher)
		return kb_err_set(err, KB_EINVAL, KB_DOM_NONE, 0, "--workers goes with --launcher");
	return kb_app__check_gpus(t->gpus, !t->hosts && !t->remote && !t->launcher, err);
}

kb_runner *kb_app_target_runner(const kb_app_target *t, bool batch)
{
	if (t && t->remote)
		return kb_runner_new_remote(t->remote, -1, batch);
	kb_runner *r = kb_runner_new(NULL);
	kb_runner_share(r);
	return r;
}

/* One worker per launcher slot: `sh -c 'LAUNCHER KBENCH serve'`, the slot's
 * number in $KBENCH_WORKER (a launcher such as srun gives each its GPU). */
static void add_launched(kb_pool *p, const kb_app_target *t)
{
	char *self = kb_self_exe();
	char *cmd = kb_xasprintf("%s %s serve", t->launcher, self ? self : "kbench");
	int n = t->workers ? t->workers : 1;
	for (int i = 0; i < n; i++) {
		char *argv[] = {"sh", "-c", cmd, NULL};
		kb_runner *r = kb_runner_new(argv);
		char env[32], label[32];
		snprintf(env, sizeof env, "KBENCH_WORKER=%d", i);
		snprintf(label, sizeof label, "slot %d", i);
		kb_runner_add_env(r, env);
		kb_pool_add(p, r, label);
	}
	free(cmd);
	free(self);
}

/* Workers on the hosts of "h1,h2" (or the one --remote host), one per GPU. */
static void add_hosts(kb_pool *p, const char *hosts, const char *gpus)
{
	int g[64], ng = kb_app__gpu_list(gpus, false, g, 64);
	char *list = kb_xstrdup(hosts), *save = NULL;
	for (char *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save))
		for (int i = 0; i < ng; i++) {
			char label[300];
			if (g[i] >= 0)
				snprintf(label, sizeof label, "%s:gpu %d", h, g[i]);
			else
				snprintf(label, sizeof label, "%s", h);
			kb_pool_add(p, kb_runner_new_remote(h, g[i], true), label);
		}
	free(list);
}

kb_pool *kb_app_target_pool(const kb_app_target *t)
{
	if (!t || (!t->gpus && !t->hosts && !t->launcher))
		return NULL;
	kb_pool *p = kb_pool_new();
	if (t->launcher) {
		add_launched(p, t);
	} else if (t->hosts || t->remote) {
		add_hosts(p, t->hosts ? t->hosts : t->remote, t->gpus);
	} else {
		int g[64], ng = kb_app__gpu_list(t->gpus, true, g, 64);
		for (int i = 0; i < ng; i++) {
			kb_runner *r = kb_runner_new(NULL);
			char label[32];
			snprintf(label, sizeof label, g[i] >= 0 ? "gpu %d" : "local", g[i]);
			char *visible = g[i] >= 0 ? kb_app__gpu_visible(g[i]) : NULL;
			if (visible) { /* checked by kb_app_target_parse: present */
				char *env = kb_xasprintf("CUDA_VISIBLE_DEVICES=%s", visible);
				kb_runner_add_env(r, env);
				free(env);
				free(visible);
			}
			kb_runner_share(r); /* a warm runner per GPU between commands */
			kb_pool_add(p, r, label);
		}
	}
	return p;
}

/* ---- kbench remote setup ------------------------------------------------- */

/* Runs argv with stdin from in_path (NULL: /dev/null); the exit status. */
static int run_with_input(char **argv, const char *in_path)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in_path ? in_path : "/dev/null", O_RDONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int st = 0;
	while (waitpid(pid, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int ssh_run(const char *host, const char *cmd, const char *in_path)
{
	char **argv = kb_runner_ssh_argv(host, NULL, false);
	int n = 0;
	while (argv[n])
		n++;
	free(argv[n - 1]);
	argv[n - 1] = kb_xstrdup(cmd); /* this command, not the runner's */
	int rc = run_with_input(argv, in_path);
	for (int i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
	return rc;
}

/* Copies and unpacks the bundle, then says what the remote's runner sees. */
int kb_app_remote_setup(const char *host, const char *bundle, kb_buf *out, kb_err *err)
{
	if (!kb_file_exists(bundle))
		return kb_err_set(err, KB_ENOTFOUND, KB_DOM_OS, 0,
				  "no bundle at %s: run `make dist` first, or name one with --bundle",
				  bundle);
	char *cmd = kb_xasprintf("set -e; d=$HOME/.kbench/kbench-%s; rm -rf \"$d\"; mkdir -p \"$d\"; "
				 "tar xzf - -C \"$d\"; ln -sfn \"$d\" $HOME/.kbench/current; "
				 "\"$d/build/kbench\" --version", KB_VERSION);
	int rc = ssh_run(host, cmd, bundle);
	free(cmd);
	if (rc != 0)
		return kb_err_set(err, KB_EIO, KB_DOM_OS, rc,
				  "copying the bundle to %s failed (ssh or tar exited %d; ssh's "
				  "message, if any, is above)", host, rc);
	kb_buf_catf(out, "%s: kbench %s unpacked in ~/.kbench/kbench-%s (~/.kbench/current)\n",
		    host, KB_VERSION, KB_VERSION);
	kb_runner *r = kb_runner_new_remote(host, -1, false);
	json_t *fail = NULL;
	rc = kb_runner_connect(r, &fail, err);
	if (rc == 0 && fail) {
		rc = kb_err_set(err, KB_EIO, KB_DOM_OS, 0, "%s",
				json_string_value(json_object_get(fail, "message")));
	} else if (rc == 0) {
		json_t *peer = kb_runner_peer(r);
		const char *gerr = json_string_value(json_object_get(peer, "gpu_error"));
		kb_buf_catf(out, "%s: runner protocol %lld, kbench %s on host %s; GPU: %s\n", host,
			    json_integer_value(json_object_get(peer, "protocol")),
			    json_string_value(json_object_get(peer, "version")),
			    json_string_value(json_object_get(peer, "host")),
			    kb_runner_arch(r) ? kb_runner_arch(r) : gerr ? gerr : "none");
	}
	json_decref(fail);
	kb_runner_close(r);
	return rc;
}
