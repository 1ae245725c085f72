/*
 * reference.h - the CPU references a check compares with: the built-in
 * ones, in double precision on all cores (reference.c: the table and the
 * entry point; reference_call.c: a call bound to its spec;
 * reference_parallel.c: threads and conversion to doubles; by family,
 * reference_rows.c, reference_elementwise.c, reference_matmul.c,
 * reference_attention.c), the Python ones (pyref.c, with the server
 * pyref_server.py), and their results kept by what they depend on, in the
 * process (refcache.c) and in files a machine's runners share
 * (refstore.c).  Knows nothing of the GPU or of CUPTI; the comparison
 * itself is src/tensor/compare.c.
 */
#ifndef KB_REFERENCE_H
#define KB_REFERENCE_H

#include "../tensor/tensor.h"

/* ===== reference.c ===== */

/* Computes the spec's built-in reference (`ref FN(args) -> outs`), or its
 * Python one (`ref numpy|torch ...`, pyref.c: errors in KB_DOM_PYTHON), in double
 * precision from the input tensors (looked up by name in ins) and scalar args
 * (from spec). Multithreaded over rows (nthreads <= 0: all cores).
 * Returns 0, or KB_EINVAL with err naming the problem. outs gets ref->nouts
 * entries, in the order of ref->outs (zeroed on failure), each shaped like
 * the spec's output tensor. */
int kb_profile_reference(const kb_spec *spec, const kb_source *src, const kb_tensor *ins,
			 int nins, kb_ref_out *outs, int nthreads, kb_err *err);
void kb_ref_out_free(kb_ref_out *o);
/* pyref.c: stops this process's warm Python reference server (it stops
 * by itself with the process too) and removes its shared-memory folder. */
void kb_profile_pyref_stop(void);
/* The Python that runs references: $KBENCH_PYTHON, else python3 on PATH;
 * *out a new string.  Returns 0, or KB_EUNSUP saying what to install. */
int kb_profile_pyref_interpreter(char **out, kb_err *err);
/* The warm server's process id, 0 when none runs. */
int kb_profile_pyref_pid(void);
/* The names of the built-in references, NULL-terminated. */
const char *const *kb_profile_reference_names(void);

/* refcache.c: reference results by the hash of everything they depend on.
 * get returns a borrowed array (valid until the next put) or NULL; put
 * takes ownership of outs (n entries) and returns it, borrowed. */
kb_ref_out *kb_profile__refcache_get(const char *key, int *n);
kb_ref_out *kb_profile__refcache_put(const char *key, kb_ref_out *outs, int n);
/* The bytes the cache holds; its budget set to bytes (the old one back;
 * the default is 4 GiB, or an eighth of memory where less): for the
 * tests, which cannot afford the default. */
size_t kb_profile__refcache_bytes(void);
size_t kb_profile__refcache_budget(size_t bytes);
/* refstore.c: the same results in files shared by a machine's runners.
 * load: the outputs (the caller owns them) and *n, or NULL when absent or
 * damaged (then removed); save: keeps small ones, silently. */
kb_ref_out *kb_profile__refstore_load(const char *key, int *n);
void kb_profile__refstore_save(const char *key, const kb_ref_out *outs, int n);
/* Whether a result of that many bytes is kept in the files (worth a claim). */
bool kb_profile__refstore_keeps(size_t bytes);
/* The right to compute key's reference: a descriptor holding its lock, taken
 * after any other runner computing it is done (*waited: there was one; its
 * result is then in the files); -1 when no lock could be had (compute
 * anyway).  Give it back with kb_profile__refstore_release. */
int kb_profile__refstore_claim(const char *key, bool *waited);
/* Gives back *claim (a descriptor or -1) and sets it to -1. */
void kb_profile__refstore_release(int *claim);

/* ===== the built-in CPU references: reference.c (the table, the entry
 * point), reference_call.c (a call bound to its spec), reference_parallel.c
 * (threads, conversion to doubles) and the references by family,
 * reference_rows.c, reference_elementwise.c, reference_matmul.c,
 * reference_attention.c ===== */

#define KB_REF_MAXPOS 4      /* positional arguments of a reference call */
#define KB_REF_MAXKW 8       /* keyword arguments of a reference call */
#define KB_REF_EW_CHUNK 4096 /* elements per elementwise work item */

/* One call of a built-in reference: the spec, its inputs, the arguments
 * split into positional and keyword ones, the output being made. */
typedef struct {
	const kb_spec *spec;
	const kb_source *src;
	const kb_spec_ref *ref;
	const kb_tensor *ins;
	int nins;
	const kb_ref_arg *pos[KB_REF_MAXPOS];
	int npos;
	const kb_ref_arg *kw[KB_REF_MAXKW];
	bool kw_used[KB_REF_MAXKW];
	int nkw;
	const char *out_name;
	kb_ref_out *out;
	int nthreads;
	kb_err *err;
} kb_profile__refcall;

/* reference_parallel.c */
/* Work items [lo, hi) of a parallel for, with the thread's scratch. */
typedef void (*kb_profile__ref_range_fn)(void *ctx, int64_t lo, int64_t hi, double *scratch);
/* Runs fn over [0, nitems) split into contiguous shares, each thread with
 * its own scratch of scratch_n doubles.  cost: element operations per item. */
void kb_profile__ref_parallel_for(int64_t nitems, double cost, int nthreads, size_t scratch_n,
				  kb_profile__ref_range_fn fn, void *ctx);
/* Elements [i, i+n) of t as doubles into dst. */
void kb_profile__ref_get_run(const kb_tensor *t, int64_t i, int64_t n, double *dst);
/* A new double copy of the whole tensor (kb_big_free it), converted in
 * parallel. */
double *kb_profile__ref_to_doubles(const kb_tensor *t, int nthreads);

/* reference_call.c */
/* Fails with "file:line:col: ref FN: message"; returns KB_EINVAL. */
int kb_profile__ref_fail(kb_profile__refcall *c, const char *fmt, ...) KB_PRINTF(2, 3);
/* "[4, 6]" into buf (n bytes); returns buf. */
const char *kb_profile__ref_shape_str(int rank, const int64_t *dims, char *buf, size_t n);
/* A number, true/false, or a spec arg's value.  Returns 0 or -1. */
int kb_profile__ref_scalar_value(const kb_profile__refcall *c, const char *text, double *v);
/* The keyword argument `key`, marked as used, or NULL. */
const kb_ref_arg *kb_profile__ref_kw_find(kb_profile__refcall *c, const char *key);
/* A scalar given at position pos (when there are that many positional
 * arguments) or as key=...; def when absent.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_param(kb_profile__refcall *c, int pos, const char *key, double def, double *v);
/* An integer dim (position pos or dim=) normalised against x's rank
 * (negative from the end).  Returns 0 or KB_EINVAL. */
int kb_profile__ref_dim_param(kb_profile__refcall *c, int pos, const kb_tensor *x, int def,
			      int *dim);
/* The input tensor at position pos or key=NAME; NULL (and 0) when optional
 * and absent.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_tensor_arg(kb_profile__refcall *c, int pos, const char *key, bool required,
			       const kb_tensor **t);
/* Checks leftover keywords and the natural shape against the spec's output,
 * then allocates the (zeroed) result.  Returns 0 or KB_EINVAL. */
int kb_profile__ref_alloc_out(kb_profile__refcall *c, int rank, const int64_t *dims);

/* The rank and dims of the spec's tensor name: its rank, -1 when the spec
 * has no such tensor, -2 when a dim does not evaluate. */
int kb_profile__ref_spec_dims(const kb_profile__refcall *c, const char *name, int64_t *dims);

/* pyref.c: c's Python reference (c->ref->py) into c->out, one per ref
 * output, outs[0].ran saying what ran.  Returns 0, or in KB_DOM_PYTHON:
 * KB_EUNSUP (no interpreter, NumPy, torch or GPU: what to install),
 * KB_ESPEC (the reference raised, or gave a wrong count, shape or dtype),
 * KB_ETIMEOUT (no answer in time: the server is stopped), KB_EIO/KB_ERROR. */
int kb_profile__pyref_run(kb_profile__refcall *c);
/* A Python reference file's absolute path: as written when absolute, else
 * from the kernel file's folder; a new string. */
char *kb_profile__pyref_file(const kb_source *src, const char *file);
/* pyref_server.py, embedded by the Makefile. */
extern const char kb_pyref_server_py[];

/* The references (reference_rows.c, reference_elementwise.c,
 * reference_matmul.c): each computes c->ref's built-in into c->out.
 * Return 0 or KB_EINVAL. */
int kb_profile__ref_softmax(kb_profile__refcall *c);   /* softmax, log_softmax */
int kb_profile__ref_reduce(kb_profile__refcall *c);    /* sum, max */
int kb_profile__ref_norm(kb_profile__refcall *c);      /* layernorm, rmsnorm */
int kb_profile__ref_cross_entropy(kb_profile__refcall *c);
int kb_profile__ref_binary(kb_profile__refcall *c);    /* add, mul */
int kb_profile__ref_axpy(kb_profile__refcall *c);
int kb_profile__ref_unary(kb_profile__refcall *c);     /* relu, gelu, silu, copy */
int kb_profile__ref_transpose(kb_profile__refcall *c);
int kb_profile__ref_matmul(kb_profile__refcall *c);
int kb_profile__ref_attention(kb_profile__refcall *c); /* reference_attention.c */
/* The environment variable that sets how much of attention a check computes
 * (which rows it samples): part of every reference's key. */
#define KB_REF_BUDGET_ENV "KBENCH_ATTENTION_BUDGET"

#endif
