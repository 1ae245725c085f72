/* test_runner.c - the runner client's watchdog against real processes: a
 * worker that crashes, one that hangs in a "GPU" phase, one that sends
 * garbage, and the real `kbench serve`; after each failure the next call
 * must work with a fresh worker.  No GPU needed: the failures are made by
 * small shell workers speaking (or breaking) the protocol. */
#include "../../src/runner/runner.h"
#include "t.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static json_t *req(const char *type)
{
	return json_pack("{s:s}", "type", type);
}

static const char *status_of(json_t *r)
{
	return json_string_value(json_object_get(r, "status"));
}

/* A worker that reads nothing and dies of SIGSEGV. */
static void test_runner__crash_is_a_result(void)
{
	char *argv[] = {"sh", "-c", "kill -SEGV $$", NULL};
	kb_runner *r = kb_runner_new(argv);
	json_t *q = req("run"), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_runner_call(r, q, 2000, NULL, NULL, &res, &err), 0);
	T_EQ_STR(status_of(res), "crash");
	T_CONTAINS(json_string_value(json_object_get(res, "message")), "signal 11");
	json_decref(res);
	/* The next call starts a fresh worker by itself. */
	T_EQ_INT(kb_runner_call(r, q, 2000, NULL, NULL, &res, &err), 0);
	T_EQ_STR(status_of(res), "crash");
	T_OK(kb_runner_starts(r) >= 2); /* 3 when the write itself met the dead worker */
	json_decref(res);
	json_decref(q);
	kb_runner_free(r);
}

/* A shell script for a worker that says it waits on the GPU in `phase` (a
 * progress frame with "gpu": true, naming a kernel and launch) and then
 * never answers. */
static char *hanging_worker(const char *phase)
{
	char *frame = kb_xasprintf("{\"type\":\"progress\",\"phase\":\"%s\",\"gpu\":true,"
				   "\"kernel\":\"k\",\"grid\":[4,1,1],\"block\":[256,1,1]}", phase);
	char *script = kb_xasprintf("printf '\\%03o\\000\\000\\000%s'; exec sleep 30",
				    (unsigned)strlen(frame), frame);
	free(frame);
	return script;
}

static void test_runner__hang_is_a_timeout(void)
{
	char *script = hanging_worker("check trial 1/3");
	char *argv[] = {"sh", "-c", script, NULL};
	kb_runner *r = kb_runner_new(argv);
	json_t *q = req("run"), *res = NULL;
	kb_err err = {0};
	int seen = 0;
	double t0 = kb_now_ms();
	T_EQ_INT(kb_runner_call(r, q, 500, NULL, &seen, &res, &err), 0);
	double ms = kb_now_ms() - t0;
	T_EQ_STR(status_of(res), "timeout");
	T_OK(ms >= 450 && ms < 5000);
	json_t *during = json_object_get(res, "during");
	T_EQ_STR(json_string_value(json_object_get(during, "kernel")), "k");
	T_EQ_INT(json_integer_value(json_array_get(json_object_get(during, "grid"), 0)), 4);
	json_decref(res);
	json_decref(q);
	kb_runner_free(r);
	free(script);
}

/* kb_runner_cancel from another thread ends a call stuck on the GPU at
 * once; a cancel between calls is for no call. */
static void *cancel_later(void *r)
{
	usleep(200 * 1000);
	kb_runner_cancel(r);
	return NULL;
}

static void test_runner__cancel(void)
{
	char *script = hanging_worker("timing");
	char *argv[] = {"sh", "-c", script, NULL};
	kb_runner *r = kb_runner_new(argv);
	json_t *q = req("run"), *res = NULL;
	kb_err err = {0};
	pthread_t th;
	pthread_create(&th, NULL, cancel_later, r);
	double t0 = kb_now_ms();
	T_EQ_INT(kb_runner_call(r, q, 10000, NULL, NULL, &res, &err), 0);
	double ms = kb_now_ms() - t0;
	pthread_join(th, NULL);
	T_EQ_STR(status_of(res), "cancelled");
	T_OK(ms >= 150 && ms < 2000);
	T_CONTAINS(json_string_value(json_object_get(res, "message")), "cancelled by the caller");
	T_EQ_STR(json_string_value(json_object_get(json_object_get(res, "during"), "phase")), "timing");
	json_decref(res);
	/* A cancel now, with no call running, does not cancel the next call:
	 * that one runs to its own timeout in a fresh worker. */
	kb_runner_cancel(r);
	t0 = kb_now_ms();
	T_EQ_INT(kb_runner_call(r, q, 400, NULL, NULL, &res, &err), 0);
	ms = kb_now_ms() - t0;
	T_EQ_STR(status_of(res), "timeout");
	T_OK(ms >= 350);
	T_EQ_INT(kb_runner_starts(r), 2);
	json_decref(res);
	json_decref(q);
	kb_runner_free(r);
	free(script);
}

/* A worker whose frame length is absurd: a protocol error, not a hang. */
static void test_runner__garbage_is_an_error(void)
{
	char *argv[] = {"sh", "-c", "printf '\\377\\377\\377\\377junk'; exec sleep 30", NULL};
	kb_runner *r = kb_runner_new(argv);
	json_t *q = req("hello"), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_runner_call(r, q, 2000, NULL, NULL, &res, &err), 0);
	T_EQ_STR(status_of(res), "protocol_error");
	T_CONTAINS(json_string_value(json_object_get(res, "message")), "it began \"\\xff\\xff\\xff\\xffjunk\"");
	json_decref(res);
	json_decref(q);
	kb_runner_free(r);
}

/* A worker running the shell script `script`, asked to run: its answer
 * (*res) and how long it took (*ms); the runner, for a next call. */
static kb_runner *call_worker(const char *script, double timeout_ms, json_t **res, double *ms)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	kb_runner *r = kb_runner_new(argv);
	json_t *q = req("run");
	kb_err err = {0};
	double t0 = kb_now_ms();
	T_EQ_INT(kb_runner_call(r, q, timeout_ms, NULL, NULL, res, &err), 0);
	*ms = kb_now_ms() - t0;
	json_decref(q);
	return r;
}

/* Well-formed frames that are not messages (not JSON; JSON without a
 * "type"): a protocol error at once that shows what came, not a wait for
 * the host timeout; the next call gets a fresh worker. */
static void test_runner__not_a_message_is_an_error(void)
{
	static const char *const workers[] = {
		"printf '\\021\\000\\000\\000}{ not a message!'; exec sleep 30",
		"printf '\\017\\000\\000\\000{\"status\":\"ok\"}'; exec sleep 30",
	};
	static const char *const shown[] = {"\"}{ not a message!\"", "\"{\"status\":\"ok\"}\""};
	for (int i = 0; i < 2; i++) {
		json_t *res = NULL, *q = req("run");
		kb_err err = {0};
		double ms;
		kb_runner *r = call_worker(workers[i], 2000, &res, &ms);
		T_OK(ms < 2000);
		T_EQ_STR(status_of(res), "protocol_error");
		const char *msg = json_string_value(json_object_get(res, "message"));
		T_CONTAINS(msg, "not a kbench message");
		T_CONTAINS(msg, shown[i]);
		json_decref(res);
		T_EQ_INT(kb_runner_call(r, q, 2000, NULL, NULL, &res, &err), 0);
		T_EQ_INT(kb_runner_starts(r), 2);
		json_decref(res);
		json_decref(q);
		kb_runner_free(r);
	}
}

/* A worker that says nothing (a stalled connection or process), or stops
 * in the middle of a frame: lost after the silence limit ($KBENCH_TEST_SILENCE
 * here; 60 s by default), named as such. */
static void test_runner__silence_is_lost(void)
{
	static const char *const workers[] = {"exec sleep 30",
					      "printf 'd\\000\\000\\000{\"type\"'; exec sleep 30"};
	setenv("KBENCH_TEST_SILENCE", "1", 1);
	for (int i = 0; i < 2; i++) {
		json_t *res = NULL;
		double ms;
		kb_runner *r = call_worker(workers[i], 20000, &res, &ms);
		T_OK(ms >= 900 && ms < 5000);
		T_EQ_STR(status_of(res), "crash");
		T_CONTAINS(json_string_value(json_object_get(res, "message")),
			   "no answer from the runner for 1 s, not even a progress tick");
		json_decref(res);
		kb_runner_free(r);
	}
	unsetenv("KBENCH_TEST_SILENCE");
}

/* The real runner answers hello with the protocol version. */
static void test_runner__real_serve_hello(void)
{
	if (access("build/kbench", X_OK) != 0)
		T_SKIP("build/kbench not built");
	char *argv[] = {"build/kbench", "serve", NULL};
	kb_runner *r = kb_runner_new(argv);
	json_t *q = req("hello"), *res = NULL;
	kb_err err = {0};
	T_EQ_INT(kb_runner_call(r, q, 5000, NULL, NULL, &res, &err), 0);
	T_EQ_STR(json_string_value(json_object_get(res, "type")), "hello");
	T_EQ_INT(json_integer_value(json_object_get(res, "protocol")), KB_PROTOCOL_VERSION);
	json_decref(res);
	json_decref(q);
	kb_runner_free(r);
}

/* Frames split at every byte boundary decode the same. */
static void test_runner__frames_split_anywhere(void)
{
	size_t n;
	char *f = kb_frame_encode("{\"a\":1}", 7, &n);
	for (size_t cut = 0; cut <= n; cut++) {
		kb_frame_reader rd = {0};
		char *out = NULL;
		size_t len = 0;
		kb_frame_feed(&rd, f, cut);
		int got = kb_frame_next(&rd, &out, &len);
		if (cut < n)
			T_EQ_INT(got, 0);
		kb_frame_feed(&rd, f + cut, n - cut);
		if (got == 0)
			got = kb_frame_next(&rd, &out, &len);
		T_EQ_INT(got, 1);
		T_EQ_STR(out, "{\"a\":1}");
		free(out);
		kb_frame_reader_free(&rd);
	}
	free(f);
}

int main(void)
{
	alarm(120); /* a watchdog that fails to fire must fail the test, not hang it */
	T_RUN(test_runner__crash_is_a_result);
	T_RUN(test_runner__hang_is_a_timeout);
	T_RUN(test_runner__cancel);
	T_RUN(test_runner__garbage_is_an_error);
	T_RUN(test_runner__not_a_message_is_an_error);
	T_RUN(test_runner__silence_is_lost);
	T_RUN(test_runner__real_serve_hello);
	T_RUN(test_runner__frames_split_anywhere);
	return t_report();
}
