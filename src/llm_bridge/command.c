/*
 * command.c - the command provider (`--llm-cmd 'some-cli --flag'`): the
 * messages go to `sh -c CMD` on stdin as plain text (kb_llm_messages_text)
 * and whatever it prints on stdout is the answer, streamed as it comes.
 * Any CLI that talks to a model (or a script that replays answers, as
 * tests/fixtures/scripted-llm does) becomes a provider.  The same limits as
 * HTTP apply: the whole timeout, the stall timeout, and the cancel flag,
 * each of which kills the command's process group.  $KBENCH_LLM_ROUND tells
 * the command which round of `kbench optimize` asks.
 */
#include "llm_bridge_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
	pid_t pid;
	int in, out, errfd;   /* our ends; -1 when closed */
} child;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* environ with KBENCH_LLM_ROUND=round in front, made before fork: the child
 * of a threaded process (the TUI) may only call async-signal-safe functions,
 * so it must not allocate (setenv). */
static char **child_env(char *round_var)
{
	extern char **environ;
	int n = 0;
	while (environ[n])
		n++;
	char **env = kb_xcalloc((size_t)n + 2, sizeof *env);
	env[0] = round_var;
	for (int i = 0, k = 1; i < n; i++)
		if (strncmp(environ[i], "KBENCH_LLM_ROUND=", 17))
			env[k++] = environ[i];
	return env;
}

/* Starts sh -c cmd in its own process group with three pipes. */
static int spawn(const char *cmd, int round, child *ch, kb_err *err)
{
	int pin[2], pout[2], perr[2];
	if (pipe(pin) < 0 || pipe(pout) < 0 || pipe(perr) < 0)
		return kb_err_errno(err, "pipe", NULL);
	char round_var[32];
	snprintf(round_var, sizeof round_var, "KBENCH_LLM_ROUND=%d", round);
	char **env = child_env(round_var);
	char *const argv[] = {"sh", "-c", (char *)cmd, NULL};
	pid_t pid = fork();
	if (pid < 0) {
		free(env);
		return kb_err_errno(err, "fork", NULL);
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(pin[0], 0), dup2(pout[1], 1), dup2(perr[1], 2);
		for (int i = 0; i < 2; i++)
			close(pin[i]), close(pout[i]), close(perr[i]);
		execve("/bin/sh", argv, env);
		_exit(127);
	}
	free(env);
	setpgid(pid, pid);
	close(pin[0]), close(pout[1]), close(perr[1]);
	ch->pid = pid, ch->in = pin[1], ch->out = pout[0], ch->errfd = perr[0];
	fcntl(ch->in, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Reads what fd has; false at its end. */
static bool drain(int *fd, kb_buf *to, const kb_llm_hooks *h, bool stream)
{
	char b[8192];
	ssize_t n = read(*fd, b, sizeof b);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		close_fd(fd);
		return false;
	}
	kb_buf_catn(to, b, (size_t)n);
	if (stream && h && h->on_text)
		h->on_text(h->ctx, b, (size_t)n);
	return true;
}

/* The pump: stdin fed, stdout and stderr read, until both end, or a limit. */
static int pump(const kb_llm_config *c, child *ch, const kb_buf *in, const kb_llm_hooks *h,
		kb_buf *out, kb_buf *errout, kb_err *err)
{
	size_t off = 0;
	double t0 = kb_now_ms(), last = t0;
	signal(SIGPIPE, SIG_IGN); /* a command that ignores stdin must not kill us */
	while (ch->out >= 0 || ch->errfd >= 0) {
		struct pollfd p[3] = {{ch->out, POLLIN, 0}, {ch->errfd, POLLIN, 0},
				      {ch->in, POLLOUT, 0}};
		int np = ch->in >= 0 ? 3 : 2;
		if (poll(p, (nfds_t)np, 100) < 0 && errno != EINTR)
			return kb_err_errno(err, "poll", NULL);
		if (kb_llm__cancelled(h))
			return kb_err_set(err, KB_ECANCELED, KB_DOM_OS, 0,
					  "cancelled after %zu chars of the answer", out->len);
		double now = kb_now_ms();
		if (c->timeout_s > 0 && now - t0 > c->timeout_s * 1000)
			return kb_err_set(err, KB_ETIMEOUT, KB_DOM_OS, 0,
					  "the command gave no full answer within %g s (timeout)", c->timeout_s);
		if (c->stall_s > 0 && now - last > c->stall_s * 1000)
			return kb_err_set(err, KB_ETIMEOUT, KB_DOM_OS, 0,
					  "the command's answer stalled after %zu chars: no output for "
					  "%g s (stall_timeout)", out->len, c->stall_s);
		if (np == 3 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = write(ch->in, in->s + off, in->len - off);
			if (n > 0)
				off += (size_t)n;
			if ((n < 0 && errno != EAGAIN) || off == in->len)
				close_fd(&ch->in);
		}
		if (p[0].revents && drain(&ch->out, out, h, true))
			last = now;
		if (p[1].revents)
			drain(&ch->errfd, errout, h, false);
	}
	return 0;
}

/* The exit status, waited for; the group killed first when it must stop. */
static int reap(child *ch, bool kill_it)
{
	if (kill_it)
		kill(-ch->pid, SIGKILL);
	int st = 0;
	while (waitpid(ch->pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int kb_llm__command_ask(const kb_llm_config *c, json_t *messages, const kb_llm_hooks *h,
			kb_llm_answer *a, kb_err *err)
{
	kb_buf in = KB_BUF_INIT, out = KB_BUF_INIT, errout = KB_BUF_INIT;
	kb_llm_messages_text(messages, &in);
	child ch = {.pid = -1, .in = -1, .out = -1, .errfd = -1};
	double t0 = kb_now_ms();
	int rc = spawn(c->command, h ? h->round : 0, &ch, err);
	if (rc == 0) {
		rc = pump(c, &ch, &in, h, &out, &errout, err);
		close_fd(&ch.in), close_fd(&ch.out), close_fd(&ch.errfd);
		int st = reap(&ch, rc < 0);
		if (rc == 0 && st != 0) {
			kb_buf r = KB_BUF_INIT;
			kb_llm_redact(errout.s ? errout.s : "", NULL, &r);
			rc = kb_err_set(err, KB_EIO, KB_DOM_OS, st, "the command `%s` exited with %d%s%.400s",
					c->command, st, r.len ? ": " : "", r.s);
			kb_buf_free(&r);
		}
	}
	a->ms = kb_now_ms() - t0;
	a->attempts = 1;
	a->text = out.s ? kb_buf_detach(&out) : kb_xstrdup("");
	kb_llm__estimate(messages, a);
	kb_buf_free(&in), kb_buf_free(&out), kb_buf_free(&errout);
	return rc;
}
