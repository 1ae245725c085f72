/*
 * kb.h - the core of kbench: errors, diagnostics, strings, allocation,
 * hashing, paths, files, clocks and logging.  Every other folder includes
 * this header; core includes nobody else's.
 *
 * Sections follow the .c file that defines each part (style.md rule 1).
 */
#ifndef KB_H
#define KB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KB_VERSION "0.1.0"

#define KB_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define KB_UNUSED __attribute__((unused))
#define KB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Return codes: 0 on success, a negative KB_E* on failure (style rule 3). */
enum {
	KB_OK = 0,
	KB_ERROR = -1,     /* generic failure; details in kb_err */
	KB_ENOTFOUND = -2, /* a file, kernel, name or cache entry is absent */
	KB_ENODEV = -3,    /* no GPU or driver */
	KB_EPERM = -4,     /* permission denied (e.g. counters) */
	KB_EINVAL = -5,    /* bad argument */
	KB_ESPEC = -6,     /* the kernel file's spec has errors (see diags) */
	KB_ECOMPILE = -7,  /* the compiler rejected the kernel (see diags) */
	KB_EIO = -8,       /* reading or writing a file or pipe failed */
	KB_ETIMEOUT = -9,  /* something ran past its time limit */
	KB_EUNSUP = -10,   /* not supported here (tool or API missing) */
	KB_ENOMEM = -11,   /* not enough (device) memory for something optional */
	KB_EAMBIG = -12,   /* several candidates fit: the caller must say which */
	KB_ECANCELED = -13, /* the user stopped it (an LLM request) */
};

/* ===== err.c ===== */

typedef enum {
	KB_DOM_NONE,
	KB_DOM_OS,
	KB_DOM_CUDA,
	KB_DOM_NVRTC,
	KB_DOM_NVJITLINK,
	KB_DOM_CUPTI,
	KB_DOM_GIT,
	KB_DOM_HTTP,
	KB_DOM_DSL,
	KB_DOM_SPEC,
	KB_DOM_JSON,
	KB_DOM_TREESITTER,
	KB_DOM_PYTHON,      /* a Python reference (reference/pyref.c) */
} kb_domain;

/* A place in a source file; line and col are 1-based, 0 when unknown. */
typedef struct {
	const char *file; /* borrowed; owned by whoever owns the source */
	int line;
	int col;
} kb_loc;

/* Details of a failure, filled by the callee (no hidden global). */
typedef struct {
	kb_domain domain;
	int code;          /* the native code of the domain (errno, CUresult ...) */
	char msg[1024];
	char where[96];    /* __FILE__:__LINE__ of the check that failed */
} kb_err;

/* Fills err (when non-NULL) and returns rc, so callers can `return kb_err_set(...)`. */
int kb_err_set(kb_err *err, int rc, kb_domain domain, int code, const char *fmt, ...)
	KB_PRINTF(5, 6);
/* Like kb_err_set but records the caller's file and line. */
int kb_err_set_at(kb_err *err, const char *file, int line, int rc, kb_domain domain,
		  int code, const char *fmt, ...) KB_PRINTF(7, 8);
#define KB_ERR(err, rc, dom, code, ...) \
	kb_err_set_at((err), __FILE__, __LINE__, (rc), (dom), (code), __VA_ARGS__)
/* Sets err from errno with a message prefix; returns KB_EIO. */
int kb_err_errno(kb_err *err, const char *what, const char *path);
void kb_err_clear(kb_err *err);
/* The name of a domain, e.g. "nvrtc". */
const char *kb_domain_name(kb_domain domain);
/* A short name of a KB_E* code, e.g. "ENOTFOUND". */
const char *kb_rc_name(int rc);

/* ===== alloc.c ===== */

/* These abort on out-of-memory (style rule 6). */
void *kb_xmalloc(size_t n);
void *kb_xcalloc(size_t n, size_t size);
void *kb_xrealloc(void *p, size_t n);
char *kb_xstrdup(const char *s);
char *kb_xstrndup(const char *s, size_t n);
char *kb_xasprintf(const char *fmt, ...) KB_PRINTF(1, 2);
/* vsnprintf into a new string; ap is consumed. */
char *kb_xvasprintf(const char *fmt, va_list ap) KB_PRINTF(1, 0);
/* Grows *v (an array of elem-size items) so that index `need-1` fits. */
void kb_xgrow(void **v, int *cap, int need, size_t elem);
#define KB_PUSH(arr, n, cap) \
	(kb_xgrow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr))), &(arr)[(n)++])
/* Large host blocks (tensors, references: hundreds of MB) are recycled:
 * a freed block is kept for the next request of the same size, so a re-run
 * does not page-fault the same memory in again (a fresh 256 MB costs tens of
 * ms in page faults).  Blocks under KB_BIG_MIN go straight to malloc. */
#define KB_BIG_MIN (8u << 20)

/* Runs fn(ctx, t, n) for every t in [0, n): t = 0 on the calling thread,
 * the others each on a thread of its own (on the caller when a thread
 * cannot be started); returns when all have.  n < 1 counts as 1. */
void kb_parallel(int n, void (*fn)(void *ctx, int t, int n), void *ctx);
/* How many threads work of `units` is worth: one per unit, at most the
 * online CPUs and `max`, at least 1. */
int kb_parallel_width(int64_t units, int max);
void *kb_big_alloc(size_t n);   /* uninitialised */
void *kb_big_calloc(size_t n);  /* zeroed */
void kb_big_free(void *p);      /* p from kb_big_alloc/calloc, or NULL */
/* The bytes of freed big blocks kept for reuse (at most 8 GiB, or an eighth
 * of memory where less); with budget, that budget set and the old one
 * back in *budget (for the tests). */
size_t kb_big_kept(size_t *budget);
/* cap, or an eighth of this machine's memory where that is less: the most
 * a process-lifetime cache keeps (the reference cache, kept big blocks) */
size_t kb_mem_budget(size_t cap);
void kb_unreachable_at(const char *file, int line) __attribute__((noreturn));
#define KB_UNREACHABLE() kb_unreachable_at(__FILE__, __LINE__)

/* ===== buf.c ===== */

/* A growable, length-tracked, always NUL-terminated byte buffer (sds-like). */
typedef struct {
	char *s;
	size_t len;
	size_t cap;
} kb_buf;

#define KB_BUF_INIT {NULL, 0, 0}
void kb_buf_cat(kb_buf *b, const char *s);
void kb_buf_catn(kb_buf *b, const void *p, size_t n);
void kb_buf_catc(kb_buf *b, char c);
void kb_buf_catf(kb_buf *b, const char *fmt, ...) KB_PRINTF(2, 3);
void kb_buf_reset(kb_buf *b);
void kb_buf_free(kb_buf *b);
/* Hands the string over to the caller (never NULL) and empties b. */
char *kb_buf_detach(kb_buf *b);

/* ===== diag.c ===== */

typedef enum { KB_DIAG_ERROR, KB_DIAG_WARNING, KB_DIAG_NOTE } kb_diag_level;

/* One message about a place in a user's file, rendered like a compiler's. */
typedef struct {
	kb_diag_level level;
	char *file;     /* owned */
	int line, col;  /* 1-based; 0 when unknown */
	int len;        /* columns to underline after the caret (>= 1) */
	char *msg;      /* owned */
	char *src_line; /* owned copy of the source line, or NULL */
} kb_diag;

typedef struct {
	kb_diag *v;
	int n, cap;
} kb_diags;

/* Appends a diagnostic; src (the whole file text, may be NULL) supplies the line. */
void kb_diag_add(kb_diags *d, kb_diag_level level, const char *file, const char *src,
		 int line, int col, int len, const char *fmt, ...) KB_PRINTF(8, 9);
int kb_diag_count(const kb_diags *d, kb_diag_level level);
/* Renders all diagnostics: "file:line:col: error: msg", the line, a caret. */
void kb_diag_render(const kb_diags *d, kb_buf *out, bool color);
/* Sorts by file, line, col (stable), so reports read top to bottom. */
void kb_diag_sort(kb_diags *d);
void kb_diags_free(kb_diags *d);
/* Copies line `line` (1-based) of src into a new string, or NULL if absent. */
char *kb_src_line(const char *src, int line);
/* The edit (Levenshtein) distance of a[0..na) and b[0..nb), for "did you
 * mean": INT_MAX when either is longer than KB_EDIT_MAX (never close). */
#define KB_EDIT_MAX 255
int kb_edit_distance(const char *a, size_t na, const char *b, size_t nb);

/* ===== hash.c ===== */

#define KB_HASH_HEX 65 /* 64 hex digits + NUL */
typedef struct kb_hasher kb_hasher;
/* SHA-256 (libcrypto), incremental: new, update (any number), final. */
kb_hasher *kb_hash_new(void);
void kb_hash_update(kb_hasher *h, const void *p, size_t n);
/* Adds a string and its length, so ("ab","c") and ("a","bc") differ. */
void kb_hash_str(kb_hasher *h, const char *s);
void kb_hash_final(kb_hasher *h, char hex[KB_HASH_HEX]);
/* Base64 (RFC 4648, padded) of n bytes: a new string.  Cubins travel to a
 * remote runner in it (docs/remote.md). */
char *kb_base64_encode(const void *p, size_t n);
/* Decodes s into a new buffer (*out, *n bytes).  Returns 0 or KB_EINVAL. */
int kb_base64_decode(const char *s, void **out, size_t *n);

/* ===== path.c ===== */

/* The last path component, borrowed from path. */
const char *kb_basename(const char *path);
/* path absolute, its symbolic links resolved (what does not exist yet taken
 * as written, "." and ".." folded); a new string. */
char *kb_path_resolve(const char *path);
/* Whether path, resolved, is dir (resolved) or lies below it. */
bool kb_path_within(const char *path, const char *dir);
/* The extension after the last '.', or "" ; borrowed. */
const char *kb_extension(const char *path);
/* This program's file as the kernel names it: exec()ing it starts this
 * program again, stat() on it reads its file even after a rebuild replaced
 * it (a runner started as `KB_SELF_EXE serve` shows so in ps). */
#define KB_SELF_EXE "/proc/self/exe"
/* The real path of this program's file, or NULL; a new string. */
char *kb_self_exe(void);
/* The folder of this program's file, without the last '/' (/opt/kb/bin
 * for /opt/kb/bin/kbench: where its sibling programs and bundled files
 * are), or NULL; a new string. */
char *kb_self_dir(void);

/* ===== file.c ===== */

/* Reads a whole file into a NUL-terminated buffer. Returns 0, or KB_EIO/KB_ENOTFOUND. */
int kb_file_read(const char *path, kb_buf *out, kb_err *err);
/* Writes atomically (temp file + rename): an existing file keeps its
 * permissions, and a link's target is written, the link kept. Returns 0 or
 * KB_EIO. */
int kb_file_write(const char *path, const void *p, size_t n, kb_err *err);
/* mkdir -p. Returns 0 or KB_EIO. */
int kb_mkdirs(const char *path, kb_err *err);
bool kb_file_exists(const char *path);
/* $XDG_CACHE_HOME/kbench[/sub] (or ~/.cache/kbench); a new string. */
char *kb_cache_dir(const char *sub);
/* Finds an executable on PATH; a new string or NULL. */
char *kb_which(const char *prog);

/* Runs argv (argv[0] looked up on PATH), capturing stdout into out and
 * stderr into errout (either may be NULL). Returns the exit status (>= 0),
 * or a negative KB_E* if it could not run. */
int kb_spawn_capture(char *const argv[], kb_buf *out, kb_buf *errout, kb_err *err);

/* ===== clock.c ===== */

/* Monotonic milliseconds. */
double kb_now_ms(void);

/* CPU milliseconds the calling thread has used so far, in user space and
 * in the kernel: beside kb_now_ms they tell work from waiting, and our
 * libraries' work from the driver's. */
void kb_thread_cpu_ms(double *user_ms, double *sys_ms);

/* ===== proto.c ===== */

#include "proto.h"

/* ===== verdict.c: what a run came to ===== */

/* The verdict of a run (a Result's "status" and "verdict"), and the states
 * of a variant that has none.  Code decides on these; kb_verdict_name gives
 * the word printed and stored. */
typedef enum {
	KB_VERDICT_NONE,          /* no verdict word (an unknown or empty one) */
	KB_VERDICT_CORRECT,
	KB_VERDICT_INCORRECT,
	KB_VERDICT_IMPOSSIBLE,    /* faster than this GPU's ceilings allow */
	KB_VERDICT_FAULT,
	KB_VERDICT_TIMEOUT,
	KB_VERDICT_CRASH,
	KB_VERDICT_SPEC_ERROR,
	KB_VERDICT_COMPILE_ERROR,
	KB_VERDICT_REFERENCE_ERROR,
	KB_VERDICT_NO_REFERENCE,
	KB_VERDICT_REFUSED,       /* a Python reference not trusted to run */
	KB_VERDICT_UNSUPPORTED,   /* the spec's require lines rule the values out */
	KB_VERDICT_NO_GPU,
	KB_VERDICT_LAUNCH_ERROR,
	KB_VERDICT_RUNNER_ERROR,
	KB_VERDICT_METRIC_ERROR,
	KB_VERDICT_CANCELLED,
	KB_VERDICT_DISCONNECTED,
	KB_VERDICT_UNREACHABLE,
	KB_VERDICT_PROTOCOL_MISMATCH,
	KB_VERDICT_ERROR,         /* a Result that says nothing known */
	KB_VERDICT_COMPILED,      /* a variant compiled and never run (the report's) */
	KB_VERDICT_NO_RESULT,     /* a variant with no note */
	KB_VERDICT_BAD_NOTE,      /* a variant whose note does not read */
} kb_verdict;

/* The word of v (CORRECT, NO GPU, ...; "" for KB_VERDICT_NONE). */
const char *kb_verdict_name(kb_verdict v);
/* The verdict a word names (the inverse of kb_verdict_name), or
 * KB_VERDICT_NONE for NULL or a word it is not. */
kb_verdict kb_verdict_parse(const char *word);
/* The verdict of a Result from its "status" and "verdict" members (either
 * may be NULL): "ok" with CORRECT, INCORRECT or IMPOSSIBLE is that, another
 * status the verdict it stands for, anything else KB_VERDICT_ERROR. */
kb_verdict kb_verdict_of(const char *status, const char *verdict);

/* ===== progress.c: how far the long step in progress is ===== */

/* Starts a step of n units (0: not measurable); any thread. */
void kb_progress_start(int64_t n);
/* Adds n units done; any thread. */
void kb_progress_add(int64_t n);
/* The fraction done in [0, 1], or -1 when the step is not measurable. */
double kb_progress_fraction(void);

/* ===== log.c ===== */

/* Debug log to the file named by $KBENCH_LOG (never to a terminal screen). */
void kb_log(const char *fmt, ...) KB_PRINTF(1, 2);

#endif
