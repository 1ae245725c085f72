/*
 * app.h - the one layer that wires the others together (architecture §1):
 * each verb a front end offers (CLI, later the TUI and replay) is a
 * function here, and its human rendering lives here too, so every front
 * end shows the same text.
 */
#ifndef KB_APP_H
#define KB_APP_H

#include "../core/kb.h"
#include "../compile/compile.h"
#include "../runner/runner.h"

/* ===== compile.c ===== */

/* The compile verb is kb_compile_unit_run (compile.h); here is its output. */

/* The compact human summary (diagnostics are rendered separately). */
void kb_app_compile_render(const kb_compile_unit *r, kb_buf *out);
/* The full structured result. A new reference. */
json_t *kb_app_compile_json(const kb_compile_unit *r);

/* ===== run.c ===== */

typedef struct {
	const char *path;
	const char *arch;         /* NULL: the GPU's own */
	const char **defines;
	int ndefines;
	int trials;               /* 0: the runner's default (3) */
	bool has_seed;
	uint64_t seed;
	double timeout_ms;        /* per GPU phase; 0: 10 s */
	bool no_time;
	const char *timing;       /* "events", "graph" or NULL (auto) */
	json_t *args;             /* arg overrides {"N": 1024}, borrowed, may be NULL */
} kb_app_run_opts;

/* One run through the runner (started if needed). Returns 0 with *result
 * (always a result: ok, spec_error, fault, timeout ...), or KB_EIO when no
 * runner could be started. */
int kb_app_run(kb_runner *r, const kb_app_run_opts *o, kb_runner_progress_fn fn, void *ctx,
	       json_t **result, kb_err *err);
/* The compact summary of a result: correctness first, then time,
 * bandwidth, ceilings, resources, the GPU's state. */
void kb_app_run_render(json_t *result, kb_buf *out);
/* The verdict word of a result: CORRECT, INCORRECT, IMPOSSIBLE, FAULT,
 * TIMEOUT, CRASH, SPEC ERROR, COMPILE ERROR, NO GPU, ERROR. */
const char *kb_app_run_verdict(json_t *result);

/* ===== device.c ===== */

/* The answer of a "devices" or "calibrate" request as text: the GPU, its
 * state, and its measured ceilings beside the datasheet. */
void kb_app_device_render(json_t *result, kb_buf *out);

/* ===== sweep.c ===== */

/* Runs the spec's sweep lines (every combination of their values) and tune
 * lines (every combination of -D values), each through kb_app_run.  *out is
 * {"sweep":[{"args":{..},"result":{..}}..], "tune":[{"defines":[..],"result":
 * {..}}..], "best_tune": index or null}.  Returns 0, or a KB_E*. */
int kb_app_sweep_and_tune(kb_runner *r, const kb_app_run_opts *o, const kb_spec *spec,
			  kb_runner_progress_fn fn, void *ctx, json_t **out, kb_err *err);
/* Tables of the sweep and of the tune variants, best marked. */
void kb_app_sweep_render(json_t *sweeps, kb_buf *out);

#endif
