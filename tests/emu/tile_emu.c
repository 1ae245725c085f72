/*
 * tile_emu.c - runs a .tile file's generated CUDA, or a .cu file, on the
 * CPU, on the host emulator (cuda_emu.h, cuda_emu.cpp), and checks every
 * output against the spec's reference (tests/emu/README.md):
 *
 *   tile_emu FILE.tile|FILE.cu [-D NAME=V]... --size "M=200 N=264 K=136"... [options]
 *
 * The file goes through the compile layer as `kbench compile` takes it
 * (lowering, spec, binding; the launch line kbench writes from grid() and
 * threads()), its CUDA (a .cu file's own text, after its tune values and
 * -D as #defines) through emu_source.c into a shared object, and each
 * --size is one case: inputs filled as the spec says (its own generator,
 * seeded), outputs poisoned with 0xFF bytes, every tensor between guard
 * pages, the launch in a child process (a fault or deadlock fails that
 * case only), then the spec's reference in double and its tolerances.
 * One line a case: "ok   LABEL: ..." or "FAIL LABEL: why", details
 * indented below.  Exit status 0 when every case passed, 1 otherwise, 2 for
 * a usage error.
 *
 * Not a GPU backend (style rule 10): it lives in tests/ and runs nothing
 * of kbench's profile layer but the CPU reference and the comparison.
 */
#include "emu.h"

#include <dlfcn.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096
#define MAXT 16

typedef struct {
	const char *file;
	const char *defines[32];
	int ndefines;
	const char *sizes[32];
	int nsizes;
	int copies, sched;
	size_t offset;            /* bytes every buffer starts past 16-byte alignment */
	unsigned long long seed;
	const char *work, *emu_dir, *runtime;
	const char *cuda;         /* run this CUDA instead of the lowering's (a mutant) */
	const char *specs[16];    /* `//! ...` lines added to the file's (a corpus file has none) */
	const char *arch;         /* the target the lowering sees: sm_90, or sm_90a (the row layout's wgmma) */
	int sm_count;             /* `sm_count` of the spec (a persistent launch's blocks); 0: the spec's default */
	int nspecs;
} options;

/* One tensor of a case: the host copy (reference, comparison) and the
 * emulated device buffer, whose last byte sits at most 15 bytes before a
 * guard page. */
typedef struct {
	const kb_spec_tensor *spec;
	kb_tensor host;
	unsigned char *region, *dev;
	size_t region_len, bytes;
} tensor;

typedef struct {
	const options *o;
	kb_compile_unit *u;
	emu_launch_fn launch;
	const kb_kernel *refk;    /* the spec's `ref kernel`, or NULL (a built-in) */
	emu_launch_fn ref_launch;
	kb_ref_out refs[MAXT];    /* its outputs, per tensor (v NULL: not an output) */
	char label[512];
	tensor t[MAXT];
	int nt;
} emu_case;

/* ===== options ===== */

static const char usage[] =
	"usage: tile_emu FILE.tile|FILE.cu [-D NAME=V]... --size \"M=64 N=100\"... [--copies wait|issue]\n"
	"                [--sched order|shuffle|warp] [--offset BYTES] [--seed S] [--work DIR]\n"
	"                [--emu-dir DIR] [--runtime FILE.o] [--cuda FILE.cu] [--spec '//! LINE']...\n"
	"                [--arch sm_90|sm_90a] [--sm-count N]\n"
	"(--work, --emu-dir and --runtime default to this program's own files: work/ and\n"
	"cuda_emu.o beside it, the checkout's tests/emu two folders up)\n";

/* The files --work, --emu-dir and --runtime did not name, found from where
 * this program is (build/emu/ of a checkout: its runtime beside it,
 * cuda_emu.h in tests/emu two folders up), as kbench finds its toolkit, so
 * that it runs from any directory.  The names live as long as the process. */
static void own_files(options *o)
{
	static char *work, *runtime, *emu_dir;
	char *dir = kb_self_dir();
	if (!dir)
		dir = kb_xstrdup(".");
	if (!o->work)
		o->work = work = kb_xasprintf("%s/work", dir);
	if (!o->runtime)
		o->runtime = runtime = kb_xasprintf("%s/cuda_emu.o", dir);
	if (!o->emu_dir)
		o->emu_dir = emu_dir = kb_xasprintf("%s/../../tests/emu", dir);
	free(dir);
}

static int parse_options(int argc, char **argv, options *o)
{
	static const struct option longs[] = {
		{"define", required_argument, NULL, 'D'}, {"size", required_argument, NULL, 's'},
		{"copies", required_argument, NULL, 'c'}, {"sched", required_argument, NULL, 'S'},
		{"offset", required_argument, NULL, 'o'}, {"seed", required_argument, NULL, 'r'},
		{"work", required_argument, NULL, 'w'}, {"emu-dir", required_argument, NULL, 'e'},
		{"runtime", required_argument, NULL, 'R'}, {"cuda", required_argument, NULL, 'C'},
		{"spec", required_argument, NULL, 'P'}, {"arch", required_argument, NULL, 'A'},
		{"sm-count", required_argument, NULL, 'N'}, {NULL, 0, NULL, 0},
	};
	*o = (options){.seed = 1};
	for (int c; (c = getopt_long(argc, argv, "D:", longs, NULL)) != -1;) {
		switch (c) {
		case 'D': if (o->ndefines < 32) o->defines[o->ndefines++] = optarg; break;
		case 's': if (o->nsizes < 32) o->sizes[o->nsizes++] = optarg; break;
		case 'c': o->copies = !strcmp(optarg, "issue") ? EMU_COPY_AT_ISSUE : EMU_COPY_AT_WAIT; break;
		case 'S':
			o->sched = !strcmp(optarg, "shuffle") ? EMU_SCHED_SHUFFLE
				   : !strcmp(optarg, "warp") ? EMU_SCHED_WARP : EMU_SCHED_IN_ORDER;
			break;
		case 'o': o->offset = strtoul(optarg, NULL, 0) % 16; break;
		case 'r': o->seed = strtoull(optarg, NULL, 0); break;
		case 'w': o->work = optarg; break;
		case 'e': o->emu_dir = optarg; break;
		case 'R': o->runtime = optarg; break;
		case 'C': o->cuda = optarg; break;
		case 'P': if (o->nspecs < 16) o->specs[o->nspecs++] = optarg; break;
		case 'A': o->arch = optarg; break;
		case 'N': o->sm_count = atoi(optarg); break;
		default: return -1;
		}
	}
	if (optind != argc - 1 || !o->nsizes)
		return -1;
	o->file = argv[optind];
	own_files(o);
	return 0;
}

/* ===== the kernel: compile layer, then g++ ===== */

static void print_diags(const kb_diags *d)
{
	kb_buf b = KB_BUF_INIT;
	kb_diag_render(d, &b, false);
	if (b.s)
		fputs(b.s, stdout);
	kb_buf_free(&b);
}

/* A --size, "M=200 N=264" (or with commas), as arg overrides: up to 16
 * into v, their names in the string *words (the caller frees it); the
 * count, or -1 where a word is no NAME=V. */
static int parse_size(const char *text, kb_arg_override *v, char **words)
{
	char *copy = *words = kb_xstrdup(text), *save = NULL;
	int n = 0;
	for (char *w = strtok_r(copy, " ,", &save); w; w = strtok_r(NULL, " ,", &save)) {
		char *eq = strchr(w, '=');
		if (!eq || n == 16)
			return -1;
		*eq = '\0';
		v[n++] = (kb_arg_override){.name = w, .value = {.i = strtoll(eq + 1, NULL, 0)}};
	}
	return n;
}

/* Sets the spec's args from a --size; returns 0 or -1. */
static int set_sizes(kb_spec *sp, const char *text)
{
	kb_arg_override v[16];
	char *words;
	int n = parse_size(text, v, &words), rc = n < 0 ? -1 : 0;
	for (int i = 0; i < n && !rc; i++)
		rc = kb_compile_spec_set_arg(sp, v[i].name, v[i].value);
	free(words);
	return rc;
}

/* Lowers and binds the file.  A missing NVRTC is no error here: the CUDA
 * is what this test runs. */
static int compile_unit(const options *o, kb_compile_unit *u)
{
	char *header = kb_xasprintf("%s/cuda_emu.h", o->emu_dir);
	const char *missing = !kb_file_exists(header) ? header
			      : !kb_file_exists(o->runtime) ? o->runtime : NULL;
	memset(u, 0, sizeof *u);
	if (missing) /* said before anything else goes wrong for want of it */
		printf("FAIL %s: the emulator's %s is not there (--emu-dir DIR holds cuda_emu.h, "
		       "--runtime names cuda_emu.o; `make build-tests` makes them)\n", o->file, missing);
	bool gone = missing != NULL;
	free(header);
	if (gone)
		return -1;
	/* compiled at the first --size's values, as kbench run compiles at its
	 * --arg's: a launch line (shared memory) may hold only at such sizes */
	kb_arg_override first[16];
	char *words = NULL;
	int nfirst = o->nsizes ? parse_size(o->sizes[0], first, &words) : 0;
	kb_compile_unit_opts co = {.arch = o->arch ? o->arch : "sm_90", .defines = (const char **)o->defines,
				   .ndefines = o->ndefines, .sm_count = o->sm_count, .args = first,
				   .nargs = nfirst > 0 ? nfirst : 0};
	kb_err err = {0};
	kb_buf text = KB_BUF_INIT;
	if (o->nspecs && kb_file_read(o->file, &text, &err) == 0)
		for (int i = 0; i < o->nspecs; i++)
			kb_buf_catf(&text, "\n%s", o->specs[i]);
	int rc = kb_compile_unit_run(o->file, text.s, &co, u, &err);
	kb_buf_free(&text);
	free(words);
	if (u->src.kind == KB_SRC_PTX && !err.msg[0])
		kb_err_set(&err, KB_EINVAL, KB_DOM_NONE, 0, "a .ptx file has no CUDA to run here");
	if ((!u->gen.text && u->src.kind != KB_SRC_CUDA) || !u->chosen || u->status == KB_ESPEC ||
	    rc == KB_ECOMPILE) {
		printf("FAIL %s: %s\n", o->file, err.msg[0] ? err.msg : "does not lower, bind or compile");
		print_diags(&u->diags);
		return -1;
	}
	return 0;
}

/* Whether the first n characters of name are a tuned name of sp. */
static bool is_tuned(const kb_spec *sp, const char *name, size_t n)
{
	for (int t = 0; t < sp->ntunes; t++)
		if (strlen(sp->tunes[t].name) == n && !strncmp(sp->tunes[t].name, name, n))
			return true;
	return false;
}

/* The CUDA to run: --cuda's text, else the lowering's (a .tile file, its
 * consts already in), else the file itself (a .cu file).  A .cu file is
 * compiled as kbench compiles it, so its text comes after a #define of
 * each tuned name (the value compiled in: the tune line's first, or -D)
 * and of every other -D, with a #line that keeps the file's numbering. */
static int cuda_text(const options *o, const kb_compile_unit *u, kb_buf *out, kb_err *err)
{
	if (u->src.kind == KB_SRC_CUDA) {
		const kb_spec *sp = &u->spec;
		for (int i = 0; i < sp->ntunes; i++)
			if (sp->tunes[i].value_text)
				kb_buf_catf(out, "#define %s %s\n", sp->tunes[i].name, sp->tunes[i].value_text);
		for (int i = 0; i < o->ndefines; i++) {
			const char *d = o->defines[i], *eq = strchr(d, '=');
			size_t n = eq ? (size_t)(eq - d) : strlen(d);
			if (!is_tuned(sp, d, n))
				kb_buf_catf(out, "#define %.*s %s\n", (int)n, d, eq ? eq + 1 : "1");
		}
		kb_buf_catf(out, "#line 1 \"%s\"\n", u->src.path);
	}
	if (o->cuda)
		return kb_file_read(o->cuda, out, err);
	kb_buf_cat(out, u->src.kind == KB_SRC_CUDA ? u->src.text : u->gen.text);
	return KB_OK;
}

/* The shared object of the unit's CUDA (cuda_text), loaded; NULL after
 * saying why. */
static emu_launch_fn load_kernel(const options *o, const kb_compile_unit *u, const kb_kernel *k)
{
	kb_err err = {0};
	kb_buf tu = KB_BUF_INIT, cuda = KB_BUF_INIT;
	emu_launch_fn fn = NULL;
	char *dir = kb_xasprintf("%s/%d", o->work, (int)getpid());
	char *cpp = kb_xasprintf("%s/%s.cpp", dir, k->name);
	char *so = kb_xasprintf("%s/%s.so", dir, k->name);
	if (cuda_text(o, u, &cuda, &err) < 0 || kb_mkdirs(dir, &err) < 0 ||
	    emu_source_unit(cuda.s, k, &tu, &err) < 0 ||
	    kb_file_write(cpp, tu.s, tu.len, &err) < 0 ||
	    emu_source_build(cpp, so, o->emu_dir, o->runtime, &err) < 0) {
		printf("FAIL %s: %s\n", o->file, err.msg);
		goto out;
	}
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	fn = h ? (emu_launch_fn)(uintptr_t)dlsym(h, "emu_launch") : NULL;
	if (!fn)
		printf("FAIL %s: %s\n", o->file, dlerror());
out:
	kb_buf_free(&tu);
	kb_buf_free(&cuda);
	free(dir);
	free(cpp);
	free(so);
	return fn;
}

/* ===== tensors ===== */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *s) { return ((double)(splitmix(s) >> 11) + 0.5) * 0x1p-53; }

/* The spec's init of an input, with this test's own generator. */
static int fill(kb_tensor *h, const kb_init *in, uint64_t seed)
{
	uint64_t s = seed;
	for (int64_t i = 0; i < h->n; i++) {
		double v;
		switch (in->kind) {
		case KB_INIT_RAND: v = in->lo + (in->hi - in->lo) * uniform(&s); break;
		case KB_INIT_ARANGE: v = (double)i; break;
		case KB_INIT_ONES: v = 1; break;
		case KB_INIT_ZEROS: v = 0; break;
		case KB_INIT_FILE: return -1;
		default: /* randn(mean, std) */
			v = in->lo + in->hi * sqrt(-2 * log(uniform(&s))) * cos(2 * M_PI * uniform(&s));
		}
		kb_tensor_set(h, i, v);
	}
	return 0;
}

/* The device buffer: [guard][canary ... data ... canary][guard], the data
 * ending within 16 bytes of the second guard page. */
static void map_device(tensor *t, size_t offset)
{
	size_t span = (t->bytes + offset + 15) / 16 * 16, body = (span + PAGE - 1) / PAGE * PAGE;
	t->region_len = body + 2 * PAGE;
	t->region = mmap(NULL, t->region_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t->region == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	mprotect(t->region, PAGE, PROT_NONE);
	mprotect(t->region + PAGE + body, PAGE, PROT_NONE);
	memset(t->region + PAGE, 0xa5, body);
	t->dev = t->region + PAGE + body - span + offset;
}

/* Whether the canary bytes around the data are intact. */
static bool canary_ok(const tensor *t)
{
	for (const unsigned char *p = t->region + PAGE; p < t->region + t->region_len - PAGE; p++)
		if ((p < t->dev || p >= t->dev + t->bytes) && *p != 0xa5)
			return false;
	return true;
}

static int make_tensors(emu_case *c)
{
	const kb_spec *sp = &c->u->spec;
	for (int i = 0; i < sp->ntensors && c->nt < MAXT; i++) {
		const kb_spec_tensor *st = &sp->tensors[i];
		tensor *t = &c->t[c->nt++];
		int64_t dims[KB_MAX_RANK];
		for (int d = 0; d < st->rank; d++) {
			kb_value v;
			if (kb_compile_spec_eval(sp, st->dims[d], &v, &c->u->src, NULL) < 0)
				return -1;
			dims[d] = v.is_float ? (int64_t)v.f : v.i;
		}
		t->spec = st;
		kb_tensor_init(&t->host, st->name, st->dtype, st->rank, dims);
		t->bytes = (size_t)t->host.n * (size_t)kb_dtype_size(st->dtype);
		map_device(t, c->o->offset);
		if (st->is_out) /* poisoned, or zeroed: an accumulator atomics add into */
			memset(t->dev, st->init.kind == KB_INIT_ZEROS ? 0 : KB_POISON_BYTE, t->bytes);
		else if (fill(&t->host, &st->init, c->o->seed * 1000003u + (st->init.has_seed ? st->init.seed : (uint64_t)i)) < 0)
			return -1;
		else
			memcpy(t->dev, t->host.data, t->bytes);
	}
	return 0;
}

static void free_tensors(emu_case *c)
{
	for (int i = 0; i < c->nt; i++) {
		kb_tensor_free(&c->t[i].host);
		munmap(c->t[i].region, c->t[i].region_len);
	}
	c->nt = 0;
}

/* ===== one case ===== */

/* The emulator's tensormap (emu.h) of the spec's line m into map: the
 * tensor's buffer, dims and row stride, the box innermost first, the
 * swizzle; all zeros where a row or the buffer is no 16-byte multiple (the
 * runner's unaligned=zero; src/gpu/tensormap.c). */
static int bind_tmap(emu_case *c, const kb_spec_tmap *m, uint64_t *map, kb_buf *why)
{
	memset(map, 0, 128);
	for (int i = 0; i < c->nt; i++) {
		const tensor *t = &c->t[i];
		if (strcmp(t->spec->name, m->tensor))
			continue;
		if (t->host.rank < 2 || m->nbox != 2) {
			kb_buf_catf(why, "    tensormap %s: only 2-d boxes are emulated\n", m->name);
			return -1;
		}
		uint64_t rows = 1; /* a higher-rank tensor's leading dims as one (src/gpu/tensormap.c) */
		for (int d = 0; d + 1 < t->host.rank; d++)
			rows *= (uint64_t)t->host.dims[d];
		int64_t cols = t->host.dims[t->host.rank - 1];
		uint64_t es = (uint64_t)kb_dtype_size(t->spec->dtype), stride = es * (uint64_t)cols;
		if (stride % 16 || (uintptr_t)t->dev % 16)
			return 0;
		map[EMU_TMAP_BASE] = (uintptr_t)t->dev;
		map[EMU_TMAP_ESIZE] = es;
		map[EMU_TMAP_DIM0] = (uint64_t)cols;
		map[EMU_TMAP_DIM1] = rows;
		map[EMU_TMAP_STRIDE] = stride;
		map[EMU_TMAP_SWIZZLE] = (uint64_t)m->swizzle;
		for (int d = 0; d < 2; d++) {
			kb_value v;
			if (kb_compile_spec_eval(&c->u->spec, m->box[d], &v, &c->u->src, NULL) < 0 || v.is_float) {
				kb_buf_catf(why, "    tensormap %s: its box does not evaluate\n", m->name);
				return -1;
			}
			map[d ? EMU_TMAP_BOX0 : EMU_TMAP_BOX1] = (uint64_t)v.i;
		}
		return 0;
	}
	kb_buf_catf(why, "    tensormap %s: no tensor %s\n", m->name, m->tensor);
	return -1;
}

/* The kernel's arguments, bound by name: tensors to their device buffers,
 * scalars to the spec's args in the parameter's C type, tensormaps to
 * maps (16 words each). */
static int bind_args(emu_case *c, const kb_kernel *k, void **args, uint64_t *vals, uint64_t (*maps)[16],
		     kb_buf *why)
{
	for (int p = 0; p < k->nparams; p++) {
		const kb_param *pa = &k->params[p];
		const kb_spec_tmap *m = kb_compile_spec_tmap(&c->u->spec, pa->name);
		args[p] = NULL;
		if (m) {
			if (bind_tmap(c, m, maps[p], why) < 0)
				return -1;
			args[p] = maps[p];
			continue;
		}
		for (int i = 0; i < c->nt && pa->is_pointer; i++)
			if (!strcmp(c->t[i].spec->name, pa->name))
				args[p] = c->t[i].dev;
		for (int i = 0; i < c->u->spec.nargs && !pa->is_pointer; i++) {
			const kb_spec_arg *a = &c->u->spec.args[i];
			kb_dtype dt = KB_DT_I32;
			if (strcmp(a->name, pa->name) || kb_compile_ctype_dtype(pa->elem, &dt) < 0)
				continue;
			double f = a->value.is_float ? a->value.f : (double)a->value.i;
			int64_t n = a->value.is_float ? (int64_t)a->value.f : a->value.i;
			float f32 = (float)f;
			int32_t i32 = (int32_t)n;
			vals[p] = 0;
			memcpy(&vals[p], dt == KB_DT_F32 ? (void *)&f32 : dt == KB_DT_F64 ? (void *)&f :
			       dt == KB_DT_I64 ? (void *)&n : (void *)&i32, (size_t)kb_dtype_size(dt));
			args[p] = &vals[p];
		}
		if (!args[p]) {
			kb_buf_catf(why, "    nothing binds parameter %s\n", pa->name);
			return -1;
		}
	}
	return 0;
}

/* Runs the launch in a child, its stderr into msgs.  Returns the number of
 * problems the emulator reported, or -1 when the child did not finish. */
static int launch_child(emu_launch_fn launch, const emu_launch_cfg *cfg, void **args, kb_buf *msgs)
{
	int pe[2];
	fflush(stdout);
	if (pipe(pe) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pe[1], 2);
		close(pe[0]);
		close(pe[1]);
		int n = launch(cfg, args);
		_exit(n > 100 ? 100 : n);
	}
	close(pe[1]);
	char b[4096];
	for (ssize_t n; (n = read(pe[0], b, sizeof b)) > 0;)
		kb_buf_catn(msgs, b, (size_t)n);
	close(pe[0]);
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	if (WIFSIGNALED(status))
		kb_buf_catf(msgs, "emu: the run died with signal %d\n", WTERMSIG(status));
	return WIFEXITED(status) && WEXITSTATUS(status) != 3 ? WEXITSTATUS(status) : -1;
}

/* ===== checking ===== */

static bool check_output(tensor *t, const kb_ref_out *ref, const kb_spec *sp, kb_buf *why,
			 double *max_abs)
{
	double rtol, atol;
	kb_profile_default_tol(t->spec->dtype, &rtol, &atol);
	if (sp->has_tol) {
		rtol = sp->rtol;
		atol = sp->atol;
	}
	memcpy(t->host.data, t->dev, t->bytes);
	kb_check_stats st;
	kb_profile_compare(&t->host, ref, rtol, atol, &st);
	*max_abs = fmax(*max_abs, st.max_abs);
	if (st.ok)
		return true;
	kb_buf_catf(why, "    %s: %lld of %lld elements wrong: %lld unwritten, %lld NaN/Inf, "
		    "%lld beyond rtol=%g atol=%g\n", t->spec->name,
		    (long long)(st.unwritten + st.nan_count + st.inf_count + st.mismatches),
		    (long long)st.n, (long long)st.unwritten, (long long)(st.nan_count + st.inf_count),
		    (long long)st.mismatches, rtol, atol);
	emu_describe_bad(why, &t->host, ref, rtol, atol);
	return false;
}

/* Whether every tensor's canary bytes are intact (saying which are not). */
static bool canaries_ok(emu_case *c, kb_buf *why)
{
	bool ok = true;
	for (int i = 0; i < c->nt; i++)
		if (!canary_ok(&c->t[i])) {
			kb_buf_catf(why, "    wrote outside '%s'\n", c->t[i].spec->name);
			ok = false;
		}
	return ok;
}

/* A `ref kernel`: run after the kernel under test, with its launch, on the
 * same inputs and freshly poisoned (or zeroed) outputs; its outputs become
 * c->refs (in double) and the tested kernel's are put back.  Returns the
 * problems the emulator reported (-1: the run stopped). */
static int run_ref_kernel(emu_case *c, const emu_launch_cfg *cfg, kb_buf *why)
{
	void *args[64];
	uint64_t vals[64];
	uint64_t maps[64][16] __attribute__((aligned(64)));
	unsigned char *saved[MAXT] = {NULL};
	kb_buf msgs = KB_BUF_INIT;
	if (bind_args(c, c->refk, args, vals, maps, why) < 0)
		return -1;
	for (int i = 0; i < c->nt; i++) {
		tensor *t = &c->t[i];
		if (!t->spec->is_out)
			continue;
		saved[i] = kb_xmalloc(t->bytes);
		memcpy(saved[i], t->dev, t->bytes);
		memset(t->dev, t->spec->init.kind == KB_INIT_ZEROS ? 0 : KB_POISON_BYTE, t->bytes);
	}
	int problems = launch_child(c->ref_launch, cfg, args, &msgs);
	if (msgs.len)
		kb_buf_cat(why, "    the reference kernel:\n");
	emu_indent(why, msgs.s);
	for (int i = 0; i < c->nt; i++) {
		tensor *t = &c->t[i];
		if (!saved[i])
			continue;
		memcpy(t->host.data, t->dev, t->bytes);
		kb_ref_out *r = &c->refs[i];
		r->n = t->host.n;
		r->rank = t->host.rank;
		memcpy(r->dims, t->host.dims, sizeof r->dims);
		r->v = kb_xmalloc((size_t)(r->n ? r->n : 1) * sizeof(double));
		for (int64_t k = 0; k < r->n; k++)
			r->v[k] = kb_tensor_get(&t->host, k);
		memcpy(t->dev, saved[i], t->bytes);
		free(saved[i]);
	}
	kb_buf_free(&msgs);
	return problems;
}

/* The spec's reference from the inputs, and every output it names checked. */
static bool check_all(emu_case *c, kb_buf *why, double *max_abs)
{
	const kb_spec *sp = &c->u->spec;
	kb_tensor ins[MAXT];
	int nins = 0;
	for (int i = 0; i < c->nt; i++)
		if (!c->t[i].spec->is_out)
			ins[nins++] = c->t[i].host; /* borrowed */
	if (c->refk) {
		bool ok = true;
		for (int i = 0; i < c->nt; i++)
			if (c->refs[i].v)
				ok = check_output(&c->t[i], &c->refs[i], sp, why, max_abs) && ok;
		return canaries_ok(c, why) && ok;
	}
	kb_ref_out *refs = kb_xcalloc((size_t)sp->ref.nouts + 1, sizeof *refs);
	kb_err err = {0};
	bool ok = kb_profile_reference(sp, &c->u->src, ins, nins, refs, 1, &err) == 0;
	if (!ok)
		kb_buf_catf(why, "    reference: %s\n", err.msg);
	for (int r = 0; ok && r < sp->ref.nouts; r++)
		for (int i = 0; i < c->nt; i++)
			if (!strcmp(c->t[i].spec->name, sp->ref.outs[r]))
				ok = check_output(&c->t[i], &refs[r], sp, why, max_abs) && ok;
	for (int r = 0; r < sp->ref.nouts; r++)
		kb_ref_out_free(&refs[r]);
	free(refs);
	return canaries_ok(c, why) && ok;
}

/* ===== main ===== */

static void make_label(emu_case *c, const char *size)
{
	const options *o = c->o;
	int n = snprintf(c->label, sizeof c->label, "%s", kb_basename(o->file));
	for (int i = 0; i < o->ndefines && n < (int)sizeof c->label; i++)
		n += snprintf(c->label + n, sizeof c->label - (size_t)n, " -D %s", o->defines[i]);
	if (n < (int)sizeof c->label)
		snprintf(c->label + n, sizeof c->label - (size_t)n, " %s%s%s%s", size,
			 o->copies == EMU_COPY_AT_ISSUE ? " [copies at issue]" : "",
			 o->sched == EMU_SCHED_SHUFFLE ? " [shuffled]" : o->sched == EMU_SCHED_WARP ? " [warp by warp]" : "",
			 o->offset ? " [misaligned]" : "");
}

/* Whether a `//! require` line of the file is false at this case's sizes
 * and defines (kbench would call the run UNSUPPORTED and not launch it; run
 * here, the kernel would read past what it holds and the case would fail for
 * the wrong reason), said in why. */
static bool refused(emu_case *c, kb_buf *why)
{
	char *req = NULL;
	kb_diags diags = {0};
	int rc = kb_compile_spec_requires(&c->u->spec, &c->u->src, &req, NULL, &diags);
	if (rc == KB_EUNSUP) {
		kb_buf_catf(why, "    not run: the file %s (kbench: UNSUPPORTED)\n", req);
	} else if (rc != KB_OK) {
		kb_buf d = KB_BUF_INIT;
		kb_diag_render(&diags, &d, false);
		kb_buf_cat(why, "    a require line cannot be evaluated\n");
		emu_indent(why, d.s);
		kb_buf_free(&d);
	}
	free(req);
	kb_diags_free(&diags);
	return rc != KB_OK;
}

/* A case's sizes, launch geometry, tensors and arguments; 0, or -1 with
 * why said. */
static int set_up(emu_case *c, const char *size, kb_launch_dims *dims, void **args,
		  uint64_t *vals, uint64_t (*maps)[16], kb_buf *why)
{
	kb_diags diags = {0};
	int rc = 0;
	if (set_sizes(&c->u->spec, size) < 0 || c->u->chosen->nparams > 64 ||
	    kb_compile_spec_launch_dims(&c->u->spec, &c->u->src, dims, &diags) < 0 ||
	    make_tensors(c) < 0) {
		kb_buf d = KB_BUF_INIT;
		kb_diag_render(&diags, &d, false);
		kb_buf_cat(why, "    cannot set the case up (its sizes, launch or inputs)\n");
		emu_indent(why, d.s);
		kb_buf_free(&d);
		rc = -1;
	} else if (refused(c, why)) {
		memset(dims, 0, sizeof *dims); /* "(not run)" */
		rc = -1;
	} else if (bind_args(c, c->u->chosen, args, vals, maps, why) < 0) {
		rc = -1;
	}
	kb_diags_free(&diags);
	return rc;
}

/* Runs one --size; prints its line (and why it failed).  Returns whether
 * it passed. */
static bool run_case(emu_case *c, const char *size)
{
	kb_buf why = KB_BUF_INIT, msgs = KB_BUF_INIT;
	kb_launch_dims dims;
	void *args[64];
	uint64_t vals[64];
	uint64_t maps[64][16] __attribute__((aligned(64)));
	emu_buffer bufs[MAXT];
	double t0 = kb_now_ms(), max_abs = NAN;
	bool ok = false;
	memset(&dims, 0, sizeof dims);
	make_label(c, size);
	if (set_up(c, size, &dims, args, vals, maps, &why) == 0) {
		for (int i = 0; i < c->nt; i++)
			bufs[i] = (emu_buffer){c->t[i].spec->name, c->t[i].dev, c->t[i].bytes};
		emu_launch_cfg cfg = {
			.grid = {(unsigned)dims.grid[0], (unsigned)dims.grid[1], (unsigned)dims.grid[2]},
			.block = {(unsigned)dims.block[0], (unsigned)dims.block[1], (unsigned)dims.block[2]},
			.smem = (size_t)dims.smem, .copies = c->o->copies, .sched = c->o->sched,
			.seed = c->o->seed, .bufs = bufs, .nbufs = c->nt,
		};
		int problems = launch_child(c->launch, &cfg, args, &msgs);
		emu_indent(&why, msgs.s);
		if (problems >= 0 && c->refk) {
			int rp = run_ref_kernel(c, &cfg, &why);
			problems = rp < 0 ? -1 : problems + rp;
		}
		if (problems < 0)
			kb_buf_cat(&why, "    the run stopped: no output is checked\n");
		else
			ok = check_all(c, &why, (max_abs = 0, &max_abs)) && problems == 0;
	}
	if (dims.block[0])
		printf("%s %s  (grid %lldx%lldx%lld, block %lld, smem %lld B; max |err| %.3g; %.2f s)\n%s",
		       ok ? "ok  " : "FAIL", c->label, (long long)dims.grid[0], (long long)dims.grid[1],
		       (long long)dims.grid[2], (long long)dims.block[0], (long long)dims.smem, max_abs,
		       (kb_now_ms() - t0) / 1000, ok || !why.s ? "" : why.s);
	else
		printf("FAIL %s  (not run)\n%s", c->label, why.s ? why.s : "");
	free_tensors(c);
	for (int i = 0; i < MAXT; i++) {
		free(c->refs[i].v);
		c->refs[i].v = NULL;
	}
	kb_buf_free(&why);
	kb_buf_free(&msgs);
	return ok;
}

int main(int argc, char **argv)
{
	options o;
	if (parse_options(argc, argv, &o) < 0) {
		fputs(usage, stderr);
		return 2;
	}
	/* UBSan (alignment and bounds, in the kernel's code) stops the run as
	 * the emulator's own fatal problems do, with status 3. */
	setenv("UBSAN_OPTIONS", "halt_on_error=1:exitcode=3:print_stacktrace=0", 1);
	kb_compile_unit u;
	emu_case c = {.o = &o, .u = &u};
	int failed = 0;
	bool ok = compile_unit(&o, &u) == 0 && (c.launch = load_kernel(&o, &u, u.chosen)) != NULL;
	for (int i = 0; ok && u.spec.ref.is_kernel && !c.refk && i < u.kernels.n; i++)
		if (!strcmp(u.kernels.v[i].name, u.spec.ref.fn))
			c.refk = &u.kernels.v[i];
	if (ok && u.spec.ref.is_kernel && (!c.refk || !(c.ref_launch = load_kernel(&o, &u, c.refk)))) {
		if (!c.refk)
			printf("FAIL %s: no reference kernel %s\n", o.file, u.spec.ref.fn);
		ok = false;
	}
	if (!ok)
		failed = o.nsizes;
	else
		for (int i = 0; i < o.nsizes; i++)
			failed += !run_case(&c, o.sizes[i]);
	kb_compile_unit_free(&u);
	return failed ? 1 : 0;
}
