/*
 * test_tui_worker.c - src/tui/worker.c without a terminal or a GPU: the
 * options handed to kb_tui__worker_start are in place before its threads
 * run, and a worker whose threads cannot start leaves nothing open (its
 * wake pipe closed, its runner freed: the ASan build's leak check sees the
 * rest).  Threads are made to fail by a default stack no mmap can give.
 */
#define _GNU_SOURCE
#include "t.h"

#include "../../src/tui/tui_int.h"

#include <dirent.h>

/* The number of descriptors this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_tui_worker__options(void)
{
	const char *words[] = {"-DN=4", "-lineinfo"};
	kb_tui__worker_opts o = {.arch = "sm_90", .options = words, .noptions = 2,
				 .timeout_ms = 250, .run = false, .record = false};
	kb_tui__worker w;
	kb_err err = {0};
	T_EQ_INT(kb_tui__worker_start(&w, &o, &err), KB_OK);
	T_OK(w.started);
	T_EQ_STR(w.arch, "sm_90");
	T_OK(w.arch != o.arch); /* a copy */
	T_OK(w.options == words);
	T_EQ_INT(w.noptions, 2);
	T_NEAR(w.timeout_ms, 250, 0);
	T_OK(!w.run && !w.record && !w.runner);
	kb_tui__worker_stop(&w);
}

static void start_without_threads(bool run)
{
	pthread_attr_t def, huge;
	T_EQ_INT(pthread_getattr_default_np(&def), 0);
	pthread_attr_init(&huge);
	pthread_attr_setstacksize(&huge, (size_t)1 << 60);
	T_EQ_INT(pthread_setattr_default_np(&huge), 0);
	int before = open_fds();
	kb_tui__worker_opts o = {.arch = "sm_90", .run = run};
	kb_tui__worker w;
	kb_err err = {0};
	int rc = kb_tui__worker_start(&w, &o, &err);
	int after = open_fds();
	T_EQ_INT(pthread_setattr_default_np(&def), 0);
	pthread_attr_destroy(&huge);
	pthread_attr_destroy(&def);
	T_EQ_INT(rc, KB_ERROR);
	T_CONTAINS(err.msg, "cannot start the worker thread");
	T_EQ_INT(after, before); /* the wake pipe closed */
	T_OK(!w.started && !w.runner && !w.arch);
	kb_tui__worker_stop(&w); /* a no-op, as for any worker that did not start */
}

static void test_tui_worker__start_fails_cleanly(void)
{
	start_without_threads(false);
	/* with a runner (never started: it runs nothing until asked) */
	unsetenv("KBENCH_REMOTE");
	start_without_threads(true);
}

int main(void)
{
	T_RUN(test_tui_worker__options);
	T_RUN(test_tui_worker__start_fails_cleanly);
	return t_report();
}
