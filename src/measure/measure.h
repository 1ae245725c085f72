/*
 * measure.h - one guarded run of a built kernel, tying the folders below
 * together: the correctness trials against a reference and the re-checks
 * (check.c), the timed loop (timing.c) whose every launch is checked
 * against its checked twin (guard.c), and the run from allocation to
 * Result JSON, with counters and hot spots when asked (run.c).
 *
 * Data flow (style rule 8): kb_build + kb_spec -> kb_profile_run -> the
 * "check", "timing" and "launch" parts of a Result.  Layers below, each
 * with its own header: src/gpu/ (driver, device, launch), src/tensor/
 * (host tensors, compare), src/reference/ (CPU references),
 * src/counters/ (CUPTI), src/ceilings/ (calibrate, roofline, NVML).
 */
#ifndef KB_MEASURE_H
#define KB_MEASURE_H

#include "../reference/reference.h"
#include "../counters/counters.h"
#include "../ceilings/ceilings.h"

#include <pthread.h>

/* ===== run.c ===== */

/* Called before each step that waits on the GPU, so a watchdog outside the
 * process knows what was running if it never returns. */
typedef void (*kb_progress_fn)(void *ctx, const char *phase, const char *kernel,
				const int64_t grid[3], const int64_t block[3]);

typedef struct {
	int trials;               /* correctness trials, fresh seeds each (default 3) */
	uint64_t seed;            /* base seed; trial t uses seed + t */
	bool time_it;             /* time after a correct check */
	double max_time_ms;       /* budget of the timed loop (default 1000) */
	int min_reps, max_reps;
	kb_progress_fn progress;
	void *progress_ctx;
	kb_nvml *nvml;            /* when set, clocks and power are sampled while timing */
	int timing_mode;          /* KB_TIMING_AUTO / _EVENTS / _GRAPH */
	struct kb_cupti *cupti;   /* with metrics: hardware counters after the checks */
	/* Or, when cupti is NULL: called once, just before the counters and hot
	 * spots, for a CUPTI handle opened as late as possible (so that its
	 * host-side preparation, ~250 ms on a fresh runner, runs on a thread
	 * through the checks and timing).  NULL back: neither runs. */
	struct kb_cupti *(*open_cupti)(void *ctx);
	void *open_cupti_ctx;
	const char *const *metrics;
	int nmetrics;
	bool hot;                 /* PC-sampling hot spots (needs cupti's library) */
	bool sass_metrics;        /* per-instruction counts (CUPTI SASS metrics): one
				   * instrumented launch after everything else */
	bool sass_metrics_only;   /* only that: the inputs filled, one instrumented launch,
				   * nothing checked or timed (the runner's fresh process) */
	json_t *sass_hot;         /* with it: the hot spots of the run it serves, annotated */
	bool passes_keep_l2;      /* counter passes after the first start without an L2
				   * flush (ncu --cache-control none) */
} kb_run_opts;

enum { KB_TIMING_AUTO, KB_TIMING_EVENTS, KB_TIMING_GRAPH, KB_TIMING_DIFF };

/* Runs the built kernel per its spec on dev: allocate, init, poison, launch,
 * check (trials), time, re-check; results as JSON (the "check", "timing",
 * "launch" parts of a Result).  Returns 0 (whatever the verdict), or a KB_E*
 * with err filled when the GPU failed (sticky: *sticky set, the context is
 * gone and the process must exit after reporting). */
int kb_profile_run(kb_device *dev, const kb_source *src, const kb_spec *spec,
		   const kb_kernels *all, const kb_kernel *kernel, const kb_build *build,
		   const kb_run_opts *opts, json_t **result, bool *sticky, kb_err *err);

/* guard.c: the timed launches as twins of the checked ones (its top says
 * how).  A set: one trial's inputs with the output its checked launch
 * wrote ("golden"), and outputs for the timed launches to write. */
typedef struct {
	kb_profile__bound bd;
	CUdeviceptr *golden;       /* per buffer: the checked output, or 0 */
	bool clone;                /* bd's buffers are the set's own, not the run's */
	uint64_t seed;             /* the trial whose inputs these are */
} kb_profile__tset;

typedef struct {
	kb_profile__tset *sets;    /* in trial order; the run's own buffers last */
	int nsets;
	int *out_buf;              /* the checked outputs' buffer indices */
	int nchecked;
	double rtol, atol;
	CUdeviceptr counts, firsts;/* per (timed launch, checked output) */
	int64_t capacity;          /* timed launches the slots hold */
	int64_t launches;          /* timed launches checked */
	int64_t unchecked;         /* timed launches beyond the slots */
	const kb_profile__bound *shape; /* the run's own (shapes and names) */
	const char *why_one_set;   /* why the inputs are not rotated, or NULL */
} kb_profile__guard;

/* checked[i]: buffer i is an output that the check compares. */
void kb_profile__guard_init(kb_profile__guard *g, const kb_profile__bound *bd, const bool *checked,
			    double rtol, double atol);
/* Whether another trial's inputs are worth keeping as a set: inputs drawn
 * from seeds, room in the set table and in GPU memory (else why_one_set
 * says why not). */
bool kb_profile__guard_wants(kb_profile__guard *g, const kb_spec *spec,
			     const kb_profile__bound *bd);
/* Keeps bd's state now (a checked launch just ran) as the next set: a copy,
 * or bd itself when is_run_bound (the last trial's). */
int kb_profile__guard_keep(kb_profile__guard *g, kb_device *d, kb_profile__bound *bd,
			   uint64_t seed, bool is_run_bound, kb_err *err);
/* Room for `launches` timed launches' verdicts (forgets earlier ones). */
int kb_profile__guard_slots(kb_profile__guard *g, kb_device *d, int64_t launches, kb_err *err);
/* Enqueues the check of the launch just made with bd against set's golden
 * outputs, as the next timed launch. */
int kb_profile__guard_check(kb_profile__guard *g, kb_device *d, const kb_profile__bound *bd,
			    const kb_profile__tset *set, kb_err *err);
/* The set timed launch number `launch` uses. */
const kb_profile__tset *kb_profile__guard_set(const kb_profile__guard *g, int64_t launch);
/* Reads the verdicts: check["timed_launches"], *ok false when a launch
 * wrote other than its checked twin. */
int kb_profile__guard_finish(kb_profile__guard *g, kb_device *d, json_t *check, bool *ok,
			     kb_err *err);
void kb_profile__guard_free(kb_profile__guard *g, bool sticky);
/* A copy of bd's buffers (contents too) with its parameters pointed at
 * them; freed by free_clone (buffers that are main_bd's stay). */
int kb_profile__clone_bound(kb_device *d, const kb_profile__bound *bd, kb_profile__bound *set,
			    kb_err *err);
void kb_profile__free_clone(kb_profile__bound *set, const kb_profile__bound *main_bd);
/* The bytes of bd's buffers (of its outputs only). */
size_t kb_profile__bound_bytes(const kb_profile__bound *bd, bool outputs_only);
/* Whether `bytes` fit in `share` of the GPU memory free now. */
bool kb_profile__fits(size_t bytes, double share);

/* timing.c: times the guard's sets (see the file's comment), checking every
 * timed launch; out gets the "timing" JSON. */
int kb_profile__time(kb_device *d, kb_profile__guard *g, const kb_run_opts *o, json_t **out,
		     kb_err *err);

/* run.c and check.c: one run in progress. */
typedef struct kb_profile__run kb_profile__run;

/* A trial's built-in reference and what obtaining it and comparing with it
 * cost.  The run has its own (kb_profile__run.ref), which only the main
 * thread touches; the reference thread works on its own
 * (kb_profile__pending.ref), merged into the run's once it is joined. */
typedef struct {
	kb_ref_out *outs;          /* results per output (borrowed from the reference
				      cache) */
	int nouts;
	int claim;                 /* refstore's lock while computing it, or -1 */
	bool claim_tried;          /* for the current trial's reference */
	/* wall ms, summed over trials */
	double ms_reference, ms_compare, ms_devcheck;
} kb_profile__refwork;

/* The last trial's CPU reference and host comparison, on a thread of their
 * own beside the timing.  The thread reads the run and writes only here:
 * into the JSON of trial and outs, and ok, rc, err and ref, all of which the
 * main thread reads after the join; thread and running are the main
 * thread's. */
typedef struct {
	const kb_profile__run *run;
	json_t *trial, *outs;      /* where its verdict goes */
	kb_profile__refwork ref;
	bool ok;
	int rc;
	kb_err err;
	pthread_t thread;
	bool running;
} kb_profile__pending;

struct kb_profile__run {
	kb_device *d;
	const kb_source *src;
	const kb_spec *spec;
	const kb_kernel *k;
	const kb_build *b;
	const kb_run_opts *o;
	struct kb_cupti *cupti;    /* o->cupti, or what o->open_cupti gave */
	kb_profile__bound bd;      /* the kernel under test */
	kb_profile__bound ref_bd;  /* a reference kernel, when `ref kernel` */
	kb_profile__buf *ref_bufs; /* its own outputs (inputs shared) */
	kb_profile__refwork ref;   /* the built-in reference (main thread only) */
	char ref_key[KB_HASH_HEX]; /* what the current trial's reference depends on */
	int ref_cached;            /* trials whose reference came from a cache */
	double rtol, atol;
	bool gpu_compare;          /* compare on the GPU (not $KBENCH_COMPARE=cpu) */
	bool ref_too_big;          /* the reference did not fit on the GPU */
	bool *sticky;
	kb_profile__pending pending; /* the last trial's reference, beside the timing */
	kb_profile__guard guard;   /* the trials' sets the timed launches rotate over */
	/* Where the checking time goes, summed over trials (ms; the rest in ref). */
	double ms_gpu, ms_readback, ms_upload;
};

/* progress.c: a phase on the GPU (bd's launch) or, for host work, on the
 * host. */
void kb_profile__progress(kb_profile__run *c, const kb_profile__bound *bd, const char *phase);
void kb_profile__host_progress(kb_profile__run *c, const char *phase);
/* Records a GPU failure: sticky errors poison the context for good. Returns rc. */
int kb_profile__gpu_fail(kb_profile__run *c, int rc, kb_err *err);

/* check.c: the trials, the reference, the re-checks (rules at its top). */
int kb_profile__setup_ref_kernel(kb_profile__run *c, const kb_kernel *rk, kb_err *err);
/* Runs the correctness trials; *correct says whether all passed so far.
 * The last trial's CPU work may be left pending (c->pending). */
int kb_profile__check_trials(kb_profile__run *c, json_t *check, bool *correct, kb_err *err);
/* The inputs filled as the first trial fills them, nothing checked. */
int kb_profile__fill_inputs(kb_profile__run *c, kb_err *err);
/* Waits for a pending check and folds its verdict into *correct. */
int kb_profile__check_join(kb_profile__run *c, bool *correct, kb_err *err);
/* The guard's table of outputs to check (run.c calls it once rtol and
 * atol are known, before the trials). */
void kb_profile__check_guard_init(kb_profile__run *c);
/* After the timed loop: poison, launch, compare, several times over. */
int kb_profile__recheck(kb_profile__run *c, json_t *check, bool *correct, kb_err *err);
/* Joins what is pending and frees the references of the run. */
void kb_profile__check_free(kb_profile__run *c);

#endif
