/* remote_drop.c - run by tests/cli/remote.sh (not a unit test: it needs the
 * loopback sshd that script starts).  One client, three requests to
 * `ssh $1 kbench serve`: the first is cut mid-request (the remote runner,
 * under KBENCH_TEST_STALL, writes "PID PPID" into the stall file and waits;
 * this program kills PPID, the sshd session, dropping the connection), and
 * must come back as a "disconnected" result naming the host; the next two
 * must reconnect by themselves and be answered (no GPU there: "no_gpu"). */
#include "../../src/runner/runner.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *stall;

/* The sshd process serving pid's session: its first ancestor named sshd*
 * (the remote command's shell may sit between); 0 when none. */
static int sshd_of(int pid)
{
	for (int depth = 0; pid > 1 && depth < 8; depth++) {
		char path[64], comm[64] = "";
		int ppid = 0;
		snprintf(path, sizeof path, "/proc/%d/stat", pid);
		FILE *f = fopen(path, "r");
		if (!f || fscanf(f, "%*d (%63[^)]) %*c %d", comm, &ppid) != 2) {
			if (f)
				fclose(f);
			return 0;
		}
		fclose(f);
		if (!strncmp(comm, "sshd", 4))
			return pid;
		pid = ppid;
	}
	return 0;
}

static void *cut_later(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3000; i++) {
		FILE *f = fopen(stall, "r");
		int pid = 0, ppid = 0;
		if (f && fscanf(f, "%d %d", &pid, &ppid) == 2 && ppid > 1) {
			fclose(f);
			int sshd = sshd_of(ppid);
			printf("cutting: runner %d, sshd session %d\n", pid, sshd);
			kill(sshd > 0 ? sshd : pid, SIGKILL); /* the connection drops, as a network would */
			usleep(200 * 1000);
			unlink(stall);
			return NULL;
		}
		if (f)
			fclose(f);
		usleep(10 * 1000);
	}
	return NULL;
}

static const char *status_of(json_t *r)
{
	const char *s = json_string_value(json_object_get(r, "status"));
	return s ? s : "?";
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return fprintf(stderr, "usage: remote_drop HOST STALL_FILE\n"), 2;
	stall = argv[2];
	kb_runner *r = kb_runner_new_remote(argv[1], -1, true);
	json_t *q = json_pack("{s:s, s:s}", "type", "run", "path", "kernels/vector_add.cu");
	pthread_t th;
	pthread_create(&th, NULL, cut_later, NULL);
	json_t *res = NULL;
	kb_err err = {0};
	double t0 = kb_now_ms();
	int rc = kb_runner_call(r, q, 20000, NULL, NULL, &res, &err);
	pthread_join(th, NULL);
	printf("call1 rc=%d status=%s ms=%.0f message=%s\n", rc, status_of(res), kb_now_ms() - t0,
	       json_string_value(json_object_get(res, "message")));
	json_decref(res);
	for (int i = 2; i <= 3; i++) {
		rc = kb_runner_call(r, q, 20000, NULL, NULL, &res, &err);
		printf("call%d rc=%d status=%s starts=%d message=%s\n", i, rc, status_of(res),
		       kb_runner_starts(r), json_string_value(json_object_get(res, "message")));
		json_decref(res);
	}
	json_decref(q);
	kb_runner_free(r);
	return 0;
}
