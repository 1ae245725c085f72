/*
 * runner_int.h - shared inside src/runner only.
 */
#ifndef KB_RUNNER_INT_H
#define KB_RUNNER_INT_H

#include "runner.h"

#include <pthread.h>
#include <stdio.h>

/* ===== message.c: below every other file of the runner ===== */

/* Writes one frame with msg (consumed); frames from several threads do not
 * interleave. Returns 0 or KB_EIO. */
int kb_runner__send(int fd, json_t *msg);
/* {"type":"result","status":status,"message":..,"error":CUDA name}. */
json_t *kb_runner__error_result(const char *status, const kb_err *err);
/* A request's array of strings as a new array of borrowed strings (*n of
 * them, NULL-terminated; free the array). */
const char **kb_runner__strings(json_t *a, int *n);
/* A new random seed, 1 ..= 1e9 (short enough to retype; 0 means none). */
uint64_t kb_runner__fresh_seed(void);

/* ===== listing.c: an instruction's SASS and source line ===== */

/* The SASS instruction of u's build at (function, pc offset), or NULL. */
const kb_sass_insn *kb_runner__insn_at(const kb_compile_unit *u, const char *fn, uint64_t pc);
/* Line `line` of the unit's own file `file`, trimmed; "" for another file
 * or no such line.  A new string. */
char *kb_runner__source_line(const kb_compile_unit *u, const char *file, int line);

/* Where a {function, pc} entry's instruction comes from. */
typedef struct {
	const char *file;   /* the unit's own path when own */
	int line;
	bool own;           /* a line of the unit's file (inlined code at its call) */
} kb_runner__where;
/* Gives entry e ({function, pc, ...}) its "sass" text and, when the line
 * info has one, its "line"; true (w filled) only when it has a line. */
bool kb_runner__place(const kb_compile_unit *u, json_t *e, kb_runner__where *w);

/* What a run request needs of the server. */
typedef struct {
	int out_fd;
	kb_device *dev;
	kb_nvml *nvml;
	kb_cupti **cupti;      /* opened on the first request that asks for counters */
	int *cupti_rc;         /* 1: not tried yet */
	double ms_cupti_open;  /* when this request opened CUPTI */
	kb_progress_fn progress;
	void *progress_ctx;
	bool sticky;          /* set when the GPU context died */
	kb_cupti_prep *prep;  /* CUPTI host work begun while the GPU opened */
	double ms_prep;       /* how long that ran (joined in need_cupti) */
	const char *const *metrics; /* the request's (kb_runner__wanted_metrics) */
	int nmetrics;
	/* Of this request, set when CUPTI is opened just before the counters: */
	int passes;           /* the metric list's replay passes */
	kb_err cupti_err;     /* why there are no counters, when CUPTI refused */
	kb_err metric_err;    /* a bad metric name: the run's answer is this */
	bool metric_failed;
} kb_runner__ctx;

/* shared.c: the shared runner's client side (see the top of shared.c). */
typedef struct {
	int lock_fd;          /* held (flock) while this client may use or start it */
	char *exe, *sock, *lock, *log;
	char *const *env;     /* "NAME=value" the runner gets beside ours (borrowed) */
} kb_runner__shared;
/* 0 when this process may use a shared runner (paths filled), else -1.
 * env (NULL-terminated, may be NULL): variables the runner gets on top of
 * this process's, part of its identity (a pool's CUDA_VISIBLE_DEVICES=N:
 * one shared runner per GPU). */
int kb_runner__shared_init(kb_runner__shared *sh, char *const *env);
/* A connected socket to the shared runner (started if none listens), after
 * its "ready", with its pid; -1 when it cannot be had (then a private
 * worker).  Takes the lock on the first call and keeps it. */
int kb_runner__shared_connect(kb_runner__shared *sh, pid_t *pid);
void kb_runner__shared_free(kb_runner__shared *sh);

/* client.c: one client of one worker (see runner.h). */
struct kb_runner {
	char **argv;
	pid_t pid;
	int to_fd, from_fd;
	kb_frame_reader rd;
	int starts;
	int last_status;      /* wait status of the last worker that ended */
	bool quiet;           /* the worker's stderr goes to /dev/null (a TUI owns the tty) */
	int cancel[2];        /* kb_runner_cancel writes a byte; the wait polls [0] */
	bool may_share;       /* kb_runner_share said yes: try the shared runner first */
	bool shared;          /* the worker is the shared runner (not our child) */
	bool lost_shared;     /* the last worker lost was the shared runner */
	kb_runner__shared sh;
	/* remote and pool workers (remote.c, pool.c): */
	char *host;           /* the ssh host of a remote runner; NULL: this machine */
	bool hello;           /* a hello exchange (protocol check) after each start */
	bool in_handshake;    /* kb_runner_call is making that exchange */
	json_t *peer;         /* the worker's hello */
	char *arch;           /* the remote GPU's arch (asked at connect); NULL: none */
	char **env;           /* "K=V" for the worker's environment (its GPU) */
	char lost_why[400];   /* what the worker sent (or did not) that lost it */
};

/* Closes the worker's pipes and reaps it (killed first when kill_it). */
void kb_runner__reap(kb_runner *r, bool kill_it);
/* Starts the worker: the shared runner when r may use it, else a child of
 * this process.  Returns 0, or KB_EIO with err (no pipe, no fork). */
int kb_runner__start(kb_runner *r, kb_err *err);
/* True when the worker has already exited (e.g. after a sticky error). */
bool kb_runner__worker_gone(kb_runner *r);
/* Empties the cancel pipe; true when it held a request. */
bool kb_runner__drain_cancel(kb_runner *r);
/* Writes req to the worker as one frame.  Returns 0, or KB_EIO with err. */
int kb_runner__send_request(kb_runner *r, json_t *req, kb_err *err);
/* Reads frames until the result, the watchdog's: a lost worker (timeout,
 * crash, silence, a corrupt stream, a cancel) is reaped and becomes the
 * result.  fn gets each progress frame.  A new reference. */
json_t *kb_runner__await_result(kb_runner *r, double timeout_ms, kb_runner_progress_fn fn,
				void *ctx);

/* remote.c: a remote runner's requests and results (docs/remote.md). */
/* The request as a remote runner gets it: the file's text, and the cubin
 * compiled here for its GPU's arch.  A new reference; or NULL with *answer
 * set when the request is answered here (a compile or spec error). */
json_t *kb_runner__remote_request(kb_runner *r, json_t *req, json_t **answer);
/* A result from a remote runner: says where it ran; a lost worker becomes
 * "disconnected", naming the host. */
void kb_runner__remote_result(kb_runner *r, json_t *res);

/* ticker.c: progress frames for phases longer than a second. */
typedef struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd;
	bool running, stop;
	char phase[96];       /* "" between requests */
	bool gpu;
	double since;
} kb_runner__ticker;
void kb_runner__ticker_start(kb_runner__ticker *t, int fd);
/* The phase now running ("" or NULL: none, e.g. before a reply). */
void kb_runner__ticker_phase(kb_runner__ticker *t, const char *phase, bool gpu);
void kb_runner__ticker_stop(kb_runner__ticker *t);

/* Handles one "run" request (run.c). Returns the result message. */
json_t *kb_runner__run(kb_runner__ctx *c, json_t *req);
/* The host copies of a run request's tensors allocated and freed on a
 * thread (kb_profile_host_warm), for a request that waits for the GPU to
 * open; NULL without a path.  Join before the run. */
typedef struct kb_runner__warm kb_runner__warm;
kb_runner__warm *kb_runner__warm_start(json_t *req);
void kb_runner__warm_join(kb_runner__warm *w);
/* The metric names a request asks for: "metrics" and every metric of its
 * "sections" (a new array of borrowed names; free the array). */
const char **kb_runner__wanted_metrics(json_t *req, int *n);
/* The sampled PCs of r's "hot" (function, pc, samples, share_pct, stalls)
 * mapped to u's SASS and source lines: each gets "sass" and "line", and r
 * gets "hot_lines", the samples summed per source line, most first (code
 * inlined from another file counted at the kernel's line that called it
 * when the line info has the call site). */
void kb_runner__map_hot(const kb_compile_unit *u, json_t *r);

/* ===== sassm.c: SASS metrics joined to the listing ===== */

/* Each instruction of r's "sass_metrics"."shared" gets its "sass" text
 * and, when the line info has it, its source "line" and "text" (the
 * kernel's line that called inlined code); "sass_metrics" gets
 * "conflict_lines": bank conflicts summed per source line, most first. */
void kb_runner__map_sassm(const kb_compile_unit *u, json_t *r);
/* Copies a hot PC's SASS metric counts (executions, shared_wavefronts,
 * shared_wavefronts_ideal, bank_conflicts) from `from` into `to`. */
void kb_runner__copy_sassm(json_t *from, json_t *to);
/* SASS metrics of the run that gave r, collected by a fresh `kbench serve`
 * (the same request, "sass_metrics_only", r's raw hot spots to annotate):
 * its "sass_metrics" (or "sass_metrics_error") and annotated "hot" into r. */
void kb_runner__sassm_fresh(kb_runner__ctx *c, json_t *req, json_t *r);

#endif
