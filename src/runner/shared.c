/*
 * shared.c - the client side of the shared runner: one warm `kbench serve
 * --listen` per user, binary and environment, which one-shot commands
 * (`kbench run`, `kbench profile`) reuse instead of starting a worker each.
 * A cold worker spends 0.3-0.4 s opening the GPU and 0.2 s in CUPTI's first
 * profiler start (H200); a warm one answers a re-run in ~140 ms and every
 * counter section in ~340 ms.  Why this departs from "the front end owns its
 * worker" (architecture §2) and what it costs: docs/decisions.md.
 *
 * Where: $XDG_RUNTIME_DIR/kbench (else /tmp/kbench-UID), a directory only
 * this user may enter.  Names carry a hash of what the runner's answers
 * depend on: this executable (path, size, mtime) and the environment it
 * inherits (KBENCH_*, CUDA_*, XDG_*, NVIDIA_*, PATH, LD_LIBRARY_PATH, HOME),
 * with what the runner adds on top (a pool's CUDA_VISIBLE_DEVICES=N: `kbench
 * run --gpus` keeps one warm runner per GPU, as a plain run keeps one).
 *
 * One client at a time: a client holds KEY.lock (flock) for as long as it
 * may use or start the runner; a client that finds it held uses a private
 * worker, as before.  The runner leaves after KBENCH_SHARED_IDLE seconds
 * (default 300) without a client, or after a sticky CUDA error.
 *
 * Not used (a private worker instead) when KBENCH_NO_SHARED_RUNNER is set,
 * when a tool is injected into this process (ncu, nsys, compute-sanitizer:
 * see tool_injected), since the tool must see the kernels run in its own
 * process tree; nor without an NVIDIA driver, where there is no GPU to keep
 * open (KBENCH_SHARED_RUNNER=1 forces it, for tests).  Between clients the
 * runner holds CUDA and an initialised (not enabled) CUPTI: ncu works
 * beside it (bench/ncu_alongside.txt).
 */
#define _GNU_SOURCE /* F_DUPFD_CLOEXEC, SO_PEERCRED */
#include "runner_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPAWN_WAIT_MS 10000.0
#define DEFAULT_IDLE_S 300

extern char **environ;

static bool set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

/* A private directory for the sockets, or NULL. */
static char *runtime_dir(void)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *dir = xdg && *xdg ? kb_xasprintf("%s/kbench", xdg)
				: kb_xasprintf("/tmp/kbench-%d", (int)getuid());
	struct stat st;
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || lstat(dir, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) {
		free(dir); /* not ours alone: someone else could answer as our runner */
		return NULL;
	}
	return dir;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether "NAME=..." e names a variable that env sets. */
static bool overridden(const char *e, char *const *env)
{
	size_t n = strcspn(e, "=");
	for (int i = 0; env && env[i]; i++)
		if (!strncmp(env[i], e, n) && env[i][n] == '=')
			return true;
	return false;
}

/* The hash of this executable and the environment a runner would inherit
 * (ours, with env on top). */
static void identity(const char *exe, char *const *env, char hex[KB_HASH_HEX])
{
	static const char *const prefixes[] = {"KBENCH_", "CUDA_", "XDG_", "NVIDIA_", "PATH=",
					       "LD_LIBRARY_PATH=", "HOME="};
	kb_hasher *h = kb_hash_new();
	struct stat st;
	kb_hash_str(h, exe);
	if (stat(exe, &st) == 0) {
		kb_hash_update(h, &st.st_size, sizeof st.st_size);
		kb_hash_update(h, &st.st_mtim, sizeof st.st_mtim);
	}
	int n = 0;
	for (char **e = environ; *e; e++)
		n++;
	for (int i = 0; env && env[i]; i++)
		n++;
	const char **vars = kb_xcalloc((size_t)n + 1, sizeof *vars);
	int m = 0;
	for (char **e = environ; *e; e++)
		for (size_t i = 0; i < KB_ARRAY_LEN(prefixes); i++)
			if (!strncmp(*e, prefixes[i], strlen(prefixes[i])) && !overridden(*e, env)) {
				vars[m++] = *e;
				break;
			}
	for (int i = 0; env && env[i]; i++)
		vars[m++] = env[i];
	qsort(vars, (size_t)m, sizeof *vars, cmp_str);
	for (int i = 0; i < m; i++)
		kb_hash_str(h, vars[i]);
	free(vars);
	kb_hash_final(h, hex);
}

/* Whether a tool is injected into this process: ncu gives its target
 * NV_NSIGHT_INJECTION_* and NV_TPS_LAUNCH_TOKEN (seen with ncu 2025.3, which
 * sets neither CUDA_INJECTION64_PATH nor LD_PRELOAD there); others use
 * CUDA_INJECTION64_PATH or a preload; any library named *injection* in our
 * address space counts too. */
static bool tool_injected(void)
{
	static const char *const vars[] = {"CUDA_INJECTION64_PATH", "LD_PRELOAD",
					   "NV_NSIGHT_INJECTION_TRANSPORT_TYPE", "NV_TPS_LAUNCH_TOKEN",
					   "NVIDIA_PROCESS_INJECTION_XML_TARGET_SETTINGS"};
	for (size_t i = 0; i < KB_ARRAY_LEN(vars); i++)
		if (set(vars[i]))
			return true;
	kb_buf maps = KB_BUF_INIT;
	bool found = kb_file_read("/proc/self/maps", &maps, NULL) == 0 &&
		     (strstr(maps.s, "njection") || strstr(maps.s, "sanitizer"));
	kb_buf_free(&maps);
	return found;
}

uint64_t kb_runner_pool_seed(void)
{
	const char *idle_s = getenv("KBENCH_SHARED_IDLE");
	int idle = idle_s && atoi(idle_s) > 0 ? atoi(idle_s) : DEFAULT_IDLE_S;
	char *dir = runtime_dir();
	char *path = dir ? kb_xasprintf("%s/pool-seed", dir) : NULL;
	uint64_t seed = 0;
	struct stat st;
	kb_buf b = KB_BUF_INIT;
	if (path && stat(path, &st) == 0 && time(NULL) - st.st_mtime < idle &&
	    kb_file_read(path, &b, NULL) == 0)
		seed = strtoull(b.s, NULL, 10);
	if (!seed)
		seed = kb_runner__fresh_seed();
	if (path) { /* written again: its time says when it was last used */
		char text[32];
		int n = snprintf(text, sizeof text, "%llu\n", (unsigned long long)seed);
		kb_file_write(path, text, (size_t)n, NULL);
	}
	kb_buf_free(&b);
	free(path);
	free(dir);
	return seed;
}

int kb_runner__shared_init(kb_runner__shared *sh, char *const *env)
{
	memset(sh, 0, sizeof *sh);
	sh->lock_fd = -1;
	sh->env = env;
	if (set("KBENCH_NO_SHARED_RUNNER") || tool_injected())
		return -1;
	if (!set("KBENCH_SHARED_RUNNER") && !kb_file_exists("/proc/driver/nvidia/version"))
		return -1;
	char *dir = runtime_dir();
	sh->exe = kb_self_exe();
	if (!dir || !sh->exe) {
		free(dir);
		kb_runner__shared_free(sh);
		return -1;
	}
	char hex[KB_HASH_HEX];
	identity(sh->exe, env, hex);
	sh->sock = kb_xasprintf("%s/runner-%.16s.sock", dir, hex);
	sh->lock = kb_xasprintf("%s/runner-%.16s.lock", dir, hex);
	sh->log = kb_xasprintf("%s/runner-%.16s.log", dir, hex);
	free(dir);
	if (strlen(sh->sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		kb_runner__shared_free(sh);
		return -1;
	}
	return 0;
}

void kb_runner__shared_free(kb_runner__shared *sh)
{
	if (sh->lock_fd >= 0)
		close(sh->lock_fd); /* releases the flock */
	free(sh->exe);
	free(sh->sock);
	free(sh->lock);
	free(sh->log);
	memset(sh, 0, sizeof *sh);
	sh->lock_fd = -1;
}

/* Starts `kbench serve --listen` detached from this process (its own
 * session, reparented once we go), stderr to the log. */
static void spawn(const kb_runner__shared *sh)
{
	const char *s = getenv("KBENCH_SHARED_IDLE");
	char idle[16];
	snprintf(idle, sizeof idle, "%d", s && atoi(s) > 0 ? atoi(s) : DEFAULT_IDLE_S);
	pid_t p = fork();
	if (p == 0) {
		setsid();
		if (fork() != 0)
			_exit(0);
		int null = open("/dev/null", O_RDWR);
		/* the log outlives its runners (a line a client): begun again past 1 MiB */
		struct stat st;
		int trunc = stat(sh->log, &st) == 0 && st.st_size > (1 << 20) ? O_TRUNC : 0;
		int log = open(sh->log, O_WRONLY | O_CREAT | O_APPEND | trunc, 0600);
		dup2(null, 0);
		dup2(null, 1);
		dup2(log >= 0 ? log : null, 2);
		for (int i = 0; sh->env && sh->env[i]; i++)
			putenv(sh->env[i]);
		execl(sh->exe, sh->exe, "serve", "--listen", sh->sock, "--lock", sh->lock, "--idle", idle,
		      (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
}

static int try_connect(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Reads the runner's "ready" frame (the runner will serve us), or fails. */
static bool ready(int fd)
{
	kb_frame_reader rd = {0};
	double deadline = kb_now_ms() + SPAWN_WAIT_MS;
	bool ok = false;
	for (;;) {
		char *frame = NULL;
		size_t len;
		int got = kb_frame_next(&rd, &frame, &len);
		if (got > 0) {
			json_t *m = json_loadb(frame, len, 0, NULL);
			const char *t = json_string_value(json_object_get(m, "type"));
			ok = t && !strcmp(t, "ready") &&
			     json_integer_value(json_object_get(m, "protocol")) == KB_PROTOCOL_VERSION;
			json_decref(m);
			free(frame);
			break;
		}
		int left = (int)(deadline - kb_now_ms());
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (got < 0 || left <= 0 || poll(&p, 1, left) <= 0)
			break;
		char chunk[512];
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n <= 0)
			break; /* it is leaving (idle or after a sticky error) */
		kb_frame_feed(&rd, chunk, (size_t)n);
	}
	kb_frame_reader_free(&rd);
	return ok;
}

int kb_runner__shared_connect(kb_runner__shared *sh, pid_t *pid)
{
	if (sh->lock_fd < 0) {
		sh->lock_fd = open(sh->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (sh->lock_fd < 0 || flock(sh->lock_fd, LOCK_EX | LOCK_NB) < 0) {
			if (sh->lock_fd >= 0)
				close(sh->lock_fd);
			sh->lock_fd = -1;
			return -1; /* another client has it: a private worker then */
		}
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = try_connect(sh->sock);
		if (fd < 0) {
			unlink(sh->sock); /* none listens: a stale name, if any */
			spawn(sh);
			double deadline = kb_now_ms() + SPAWN_WAIT_MS;
			while (fd < 0 && kb_now_ms() < deadline) {
				usleep(2000);
				fd = try_connect(sh->sock);
			}
		}
		if (fd < 0)
			return -1;
		struct ucred cred;
		socklen_t cl = sizeof cred;
		if (ready(fd) && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
			*pid = cred.pid;
			return fd;
		}
		close(fd);
		unlink(sh->sock);
	}
	return -1;
}

/* One runner's socket: stops it unless a client holds its lock.  Returns
 * 1 stopped, 0 busy, -1 nothing listened (a stale name, removed). */
static int stop_one(const char *sock, pid_t *pid)
{
	char *lock = kb_xasprintf("%.*s.lock", (int)(strlen(sock) - strlen(".sock")), sock);
	int lfd = open(lock, O_RDWR | O_CLOEXEC);
	int rc = 0;
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0)
		goto out; /* a client is using it: leave it */
	int fd = try_connect(sock);
	struct ucred cred;
	socklen_t cl = sizeof cred;
	if (fd < 0 || !ready(fd) || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		rc = -1;
	} else {
		*pid = cred.pid;
		kill(cred.pid, SIGTERM);
		for (int i = 0; i < 2000 && kill(cred.pid, 0) == 0; i++)
			usleep(1000);
		rc = 1;
	}
	if (fd >= 0)
		close(fd);
	unlink(sock);
out:
	if (lfd >= 0)
		close(lfd);
	free(lock);
	return rc;
}

int kb_runner_stop_shared(kb_buf *report)
{
	char *dir = runtime_dir();
	int stopped = 0;
	DIR *d = dir ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (strncmp(e->d_name, "runner-", 7) || n < 5 || strcmp(e->d_name + n - 5, ".sock"))
			continue;
		char *sock = kb_xasprintf("%s/%s", dir, e->d_name);
		pid_t pid = 0;
		int rc = stop_one(sock, &pid);
		if (rc == 1)
			kb_buf_catf(report, "stopped the shared runner pid %d (%s)\n", (int)pid, e->d_name);
		else if (rc == 0)
			kb_buf_catf(report, "left %s: a kbench command is using it\n", e->d_name);
		stopped += rc == 1;
		free(sock);
	}
	if (d)
		closedir(d);
	kb_buf_catf(report, "%d shared runner%s stopped\n", stopped, stopped == 1 ? "" : "s");
	free(dir);
	return stopped;
}
