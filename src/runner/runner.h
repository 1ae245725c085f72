/*
 * runner.h - the runner process (architecture §2): `kbench serve` owns one
 * CUDA context and answers framed JSON requests (core/proto.h); the client
 * side spawns it, keeps a watchdog on every request, and restarts it after a
 * crash, a hang or a sticky CUDA error, turning each into a result.
 */
#ifndef KB_RUNNER_H
#define KB_RUNNER_H

#include "../core/kb.h"
#include "../compile/compile.h"
#include "../measure/measure.h"

/* ===== server.c ===== */

/* Serves requests from in_fd, answers on out_fd, until EOF or "quit".
 * Returns the process exit status (3 after a sticky error: the context is
 * dead and the client must start a fresh runner). */
int kb_runner_serve(int in_fd, int out_fd);
/* The shared runner (client.c starts it; see kb_runner_share): the same
 * server listening on the Unix socket `path`, one client at a time, each
 * greeted with {"type":"ready"}.  It exits after a sticky error (having
 * taken its socket away before that reply), or after idle_s seconds without
 * a client when it can take lock_path (no client is about to connect). */
int kb_runner_serve_socket(const char *path, const char *lock_path, int idle_s);

/* ===== message.c ===== */

/* The result of a run that stopped at the unit's diagnostics: status
 * "spec_error" or "compile_error", the diagnostics and their text.  A new
 * reference. */
json_t *kb_runner_diag_result(const char *status, const kb_compile_unit *u);
/* A run request's "args" ({"N": 1024}) as overrides (*n of them; the names
 * borrowed from args).  Free the array. */
kb_arg_override *kb_runner_arg_overrides(json_t *args, int *n);

/* ===== client.c, call.c ===== */

typedef struct kb_runner kb_runner;

/* Called for each progress frame while a request runs. */
typedef void (*kb_runner_progress_fn)(void *ctx, json_t *progress);

/* Prepares a client; the worker (argv, NULL for this executable's `serve`)
 * starts on the first request. */
kb_runner *kb_runner_new(char *const *argv);
/* Sends req and waits for its result, with a watchdog: a GPU phase that
 * runs past timeout_ms, a worker that dies, or a broken stream kill the
 * worker and come back as a result with "status" timeout / crash, naming
 * the phase, kernel and launch that were running.  Returns 0 with *result
 * (a new reference), or KB_EIO when no worker could be started. */
int kb_runner_call(kb_runner *r, json_t *req, double timeout_ms, kb_runner_progress_fn fn,
		   void *ctx, json_t **result, kb_err *err);
/* From another thread: ends the call in flight now, as a result with
 * "status" cancelled (the worker is killed; the next call starts a fresh
 * one).  A cancel while no call runs is dropped. */
void kb_runner_cancel(kb_runner *r);
/* Lets one-shot commands use the shared runner (shared.c) when this process
 * may: kept warm between commands, it answers without opening the GPU or
 * starting CUPTI again.  Otherwise, or when it is busy, a private worker.
 * Call it after kb_runner_add_env: the environment picks which shared
 * runner (one per GPU for a pool). */
void kb_runner_share(kb_runner *r);
/* `kbench serve --stop`: stops this user's shared runners that no command
 * is using (they give the GPU back now instead of after their idle time);
 * says what it did in report.  Returns how many it stopped. */
int kb_runner_stop_shared(kb_buf *report);
/* Sends the worker's stderr to /dev/null (for a front end that owns the
 * terminal). */
void kb_runner_set_quiet(kb_runner *r, bool quiet);
/* How many workers this client has started (restarts = n - 1). */
int kb_runner_starts(const kb_runner *r);
void kb_runner_free(kb_runner *r);
/* For a one-shot command about to exit: asks the worker to quit and frees r
 * at once, without waiting for the worker's teardown (CUPTI, NVML, the
 * context: ~150 ms on an H200), which finishes on its own.  A worker that
 * is still busy is killed, as kb_runner_free would after its grace time. */
void kb_runner_close(kb_runner *r);

/* ===== remote.c: a runner on another machine (docs/remote.md) ===== */

/* The ssh command line of a remote runner: $KBENCH_SSH (default "ssh",
 * split at blanks), keep-alives, BatchMode when batch (a front end that
 * owns the terminal), HOST, and the remote command: env (e.g.
 * "export CUDA_VISIBLE_DEVICES=1; ", may be NULL) then $KBENCH_REMOTE_CMD,
 * default the bundle of `kbench remote setup`, else kbench on the remote's
 * PATH.  A NULL-terminated array of new strings. */
char **kb_runner_ssh_argv(const char *host, const char *env, bool batch);
/* A client of `ssh HOST kbench serve` (GPU gpu of it when >= 0): each start
 * exchanges hello (both sides check the protocol) and asks for the GPU's
 * arch; run requests carry the file's text and a cubin compiled here. */
kb_runner *kb_runner_new_remote(const char *host, int gpu, bool batch);
/* Starts the worker if none runs (with the hello exchange).  Returns 0 and
 * *failure NULL when it serves; 0 and *failure (a result: unreachable,
 * protocol_mismatch) when it cannot; KB_EIO when no process could start. */
int kb_runner_connect(kb_runner *r, json_t **failure, kb_err *err);
/* The remote's host, NULL for a local runner. */
const char *kb_runner_host(const kb_runner *r);
/* The remote GPU's arch ("sm_90"), NULL when unknown or there is none. */
const char *kb_runner_arch(const kb_runner *r);
/* The worker's hello (protocol, version, host; "gpu_error" when a remote
 * has no usable GPU), NULL before one; borrowed. */
json_t *kb_runner_peer(const kb_runner *r);
/* A worker that exchanges hello (protocol check) at each start, like a
 * remote one: pool workers. */
void kb_runner_set_hello(kb_runner *r, bool on);
/* "K=V" put in the worker's environment (a local GPU: CUDA_VISIBLE_DEVICES). */
void kb_runner_add_env(kb_runner *r, const char *kv);

/* ===== pool.c: one queue over several workers (docs/remote.md) ===== */

typedef struct kb_pool kb_pool;

kb_pool *kb_pool_new(void);
/* Adds a worker (the pool owns r from now on; it exchanges hello at each
 * start); label names it in results ("gpu 1", "h2:gpu 0"). */
void kb_pool_add(kb_pool *p, kb_runner *r, const char *label);
int kb_pool_size(const kb_pool *p);
/* Runs every request of the array reqs on the workers, in parallel, each
 * job on one worker; a job whose worker is lost goes back on the queue
 * once, then is reported.  *results: the results in reqs' order, each with
 * "worker", "attempts" and, when re-queued, "requeued_from" (the worker) and
 * "requeued_because" ("crash: ...": the status and message of the loss).
 * Returns 0, or KB_EINVAL for a pool without workers. */
int kb_pool_run(kb_pool *p, json_t *reqs, double timeout_ms, json_t **results, kb_err *err);
/* The seed that a pool's runs share when the user names none, so that every
 * worker meets the same inputs (the variants are compared on equal terms,
 * and a CPU reference computed by one runner serves the others through
 * refstore.c): kept for this user beside the shared runners and renewed
 * once it has gone unused as long as they stay warm (KBENCH_SHARED_IDLE),
 * as one shared runner keeps its seed between commands; else fresh. */
uint64_t kb_runner_pool_seed(void);
/* fn hears a progress frame {"phase": "7 of 20 done on 2 workers"} as each
 * job of a run settles (from the workers' threads, one at a time). */
void kb_pool_set_progress(kb_pool *p, kb_runner_progress_fn fn, void *ctx);
/* Starts workers from..n-1 and opens their GPUs now, in the background, so
 * that the first run finds them warm (kbench replay: while the session's
 * variants are read). */
void kb_pool_warm(kb_pool *p, int from);
void kb_pool_free(kb_pool *p);

#endif
