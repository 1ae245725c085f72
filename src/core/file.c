/*
 * file.c - files, directories, the XDG cache location, PATH lookup and
 * running a helper program with its output captured.  All failures come
 * back as KB_E* codes with the OS's reason in kb_err.  Paths as names
 * (resolved, their parts, this program's own) are path.c's.
 */
#include "kb.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int kb_file_read(const char *path, kb_buf *out, kb_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return kb_err_errno(err, "cannot open", path);
	char chunk[65536];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int rc = kb_err_errno(err, "cannot read", path);
			close(fd);
			return rc;
		}
		if (n == 0)
			break;
		kb_buf_catn(out, chunk, (size_t)n);
	}
	close(fd);
	if (!out->s)
		kb_buf_catn(out, "", 0);
	return KB_OK;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The file a write to path replaces: path, or what a link at path leads
 * to (a user's kernel file may be a link into another tree: saving must
 * change that file, not turn the link into a copy). */
static char *write_target(const char *path)
{
	struct stat st;
	char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
	return real ? real : kb_xstrdup(path);
}

int kb_file_write(const char *path_in, const void *p, size_t n, kb_err *err)
{
	char *path = write_target(path_in);
	char *tmp = kb_xasprintf("%s.tmp.%d", path, (int)getpid());
	int rc = KB_OK;
	struct stat st;
	bool had = stat(path, &st) == 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) { /* the file the user named, not our temporary one */
		rc = kb_err_errno(err, "cannot write", path);
		goto out;
	}
	if (had) /* the file keeps its permissions (a private 0600 stays private) */
		fchmod(fd, st.st_mode & 07777);
	if (write_all(fd, p, n) < 0 || close(fd) < 0) {
		rc = kb_err_errno(err, "cannot write", tmp);
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		rc = kb_err_errno(err, "cannot rename to", path);
		unlink(tmp);
	}
out:
	free(tmp);
	free(path);
	return rc;
}

int kb_mkdirs(const char *path, kb_err *err)
{
	char *p = kb_xstrdup(path);
	int rc = KB_OK;
	for (char *s = p + 1; ; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = kb_err_errno(err, "cannot create directory", p);
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

bool kb_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

char *kb_cache_dir(const char *sub)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char *base = (xdg && *xdg) ? kb_xasprintf("%s/kbench", xdg)
		     : kb_xasprintf("%s/.cache/kbench", (home && *home) ? home : "/tmp");
	if (!sub)
		return base;
	char *dir = kb_xasprintf("%s/%s", base, sub);
	free(base);
	return dir;
}

char *kb_which(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0 ? kb_xstrdup(prog) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	const char *p = path;
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *cand = kb_xasprintf("%.*s/%s", (int)n, n ? p : ".", prog);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!e)
			break;
		p = e + 1;
	}
	return NULL;
}

/* Reads both pipes until EOF without deadlocking on either. */
static void drain(int fo, int fe, kb_buf *out, kb_buf *errout)
{
	struct pollfd pf[2] = {{fo, POLLIN, 0}, {fe, POLLIN, 0}};
	kb_buf *dst[2] = {out, errout};
	int open_n = 2;
	char chunk[65536];
	while (open_n > 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(pf[i].fd, chunk, sizeof chunk);
			if (n > 0) {
				if (dst[i])
					kb_buf_catn(dst[i], chunk, (size_t)n);
				continue;
			}
			if (n < 0 && errno == EINTR)
				continue;
			close(pf[i].fd);
			pf[i].fd = -1;
			open_n--;
		}
	}
}

int kb_spawn_capture(char *const argv[], kb_buf *out, kb_buf *errout, kb_err *err)
{
	int po[2], pe[2];
	if (pipe(po) < 0)
		return kb_err_errno(err, "pipe", NULL);
	if (pipe(pe) < 0) {
		close(po[0]);
		close(po[1]);
		return kb_err_errno(err, "pipe", NULL);
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		return kb_err_errno(err, "fork", NULL);
	}
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	drain(po[0], pe[0], out, errout);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return kb_err_set(err, KB_ERROR, KB_DOM_OS, status, "%s died with signal %d",
			  argv[0], WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
