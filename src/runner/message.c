/*
 * message.c - what the runner's files share below them all: a message
 * written as one frame (from any thread), the result of an error or of a
 * unit's diagnostics, a run request's strings and arg overrides, and a
 * fresh seed.  It knows no worker, server or request flow: client.c,
 * remote.c, server.c, run.c and ticker.c call it, never the other way.
 */
#include "runner_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int kb_runner__send(int fd, json_t *msg)
{
	static pthread_mutex_t one_writer = PTHREAD_MUTEX_INITIALIZER;
	char *s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!s)
		return KB_EINVAL;
	size_t n;
	char *frame = kb_frame_encode(s, strlen(s), &n);
	free(s);
	const char *p = frame;
	int rc = KB_OK;
	pthread_mutex_lock(&one_writer);
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = KB_EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	pthread_mutex_unlock(&one_writer);
	free(frame);
	return rc;
}

json_t *kb_runner__error_result(const char *status, const kb_err *err)
{
	json_t *r = json_pack("{s:s, s:s}", "type", "result", "status", status);
	if (err) {
		json_object_set_new(r, "message", json_string(err->msg));
		if (err->domain == KB_DOM_CUDA) {
			const char *colon = strchr(err->msg, ':');
			json_object_set_new(r, "error", colon ? json_stringn(err->msg, (size_t)(colon - err->msg))
							      : json_string(err->msg));
		}
	}
	return r;
}

uint64_t kb_runner__fresh_seed(void)
{
	uint64_t s = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &s, sizeof s) != (ssize_t)sizeof s)
			s = 0;
		close(fd);
	}
	if (!s)
		s = (uint64_t)time(NULL) * 2654435761u;
	return s % 1000000000u + 1; /* short enough to retype; never 0, "none yet" */
}

const char **kb_runner__strings(json_t *a, int *n)
{
	*n = (int)json_array_size(a);
	const char **v = kb_xcalloc((size_t)*n + 1, sizeof(char *));
	for (int i = 0; i < *n; i++)
		v[i] = json_string_value(json_array_get(a, (size_t)i));
	return v;
}

/* The request's {"N": 1024} as overrides (names borrowed from args). */
/* See runner.h. */
kb_arg_override *kb_runner_arg_overrides(json_t *args, int *n)
{
	*n = (int)json_object_size(args);
	kb_arg_override *v = kb_xcalloc((size_t)*n + 1, sizeof *v);
	const char *name;
	json_t *val;
	int i = 0;
	json_object_foreach(args, name, val) {
		v[i].name = name;
		v[i].value = (kb_value){.is_float = json_is_real(val), .i = json_integer_value(val),
					.f = json_number_value(val)};
		i++;
	}
	return v;
}

/* See runner.h. */
json_t *kb_runner_diag_result(const char *status, const kb_compile_unit *u)
{
	json_t *r = json_pack("{s:s, s:s}", "type", "result", "status", status);
	json_object_set_new(r, "diagnostics", kb_compile_diags_json(&u->diags));
	kb_buf text = KB_BUF_INIT;
	kb_diag_render(&u->diags, &text, false);
	json_object_set_new(r, "diagnostics_text", json_string(text.s ? text.s : ""));
	kb_buf_free(&text);
	return r;
}
