/*
 * test_gpu_util.c - kbench's own kernels (src/gpu/util_kernels.c: the
 * fills, the L2 flush and its discard, the checks, the guard) compile with
 * the real NVRTC, and every kernel the device loader looks up by name is in
 * the result with the parameters its launch passes.  They are compiled only
 * when a GPU opens, so without this a slip there would pass every CPU test
 * and break every run on a GPU.  The instruction-cache thrash (kb_icache,
 * PTX written by a loop) must assemble and stay larger than an SM's
 * instruction caches, or the default timing program stops emptying them.
 */
#include "../../src/compile/compile.h"
#include "../../src/gpu/gpu.h"
#include "../t.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char cache_dir[] = "/tmp/kbench-util-test-XXXXXX";
static kb_build build;
static int built = -1;

static void compile_util(void)
{
	kb_source src;
	kb_compile_source_init(&src, "<kbench util>.cu", kb_profile__util_src, KB_SRC_CUDA);
	kb_build_opts o = {.arch = "sm_90"};
	kb_err err = {0};
	built = kb_compile_build(&src, NULL, NULL, &o, &build, &err);
	if (built < 0)
		printf("  compile: %s\n", err.msg);
	kb_compile_source_free(&src);
}

/* The parameter list of .entry name in the PTX, or NULL. */
static const char *entry_params(const char *name)
{
	char want[128];
	snprintf(want, sizeof want, ".entry %s(", name);
	const char *p = build.ptx ? strstr(build.ptx, want) : NULL;
	return p ? p + strlen(want) : NULL;
}

static int count_params(const char *list)
{
	int n = 0;
	for (const char *p = list; p && *p && *p != ')'; p++)
		n += !strncmp(p, ".param", 6);
	return n;
}

static void test_gpu_util__compiles(void)
{
	T_EQ_INT(built, 0);
	T_OK(build.ok);
	T_OK(build.ptx != NULL);
}

static void test_gpu_util__every_loaded_kernel_is_there(void)
{
	if (built < 0 || !build.ptx)
		T_SKIP("the utility source did not compile (the case above says why)");
	int n = 0;
	for (const char *name; (name = kb_profile__util_kernel(n)); n++)
		if (!entry_params(name))
			T_FAIL_AT("%s is looked up by the loader but not in the compiled PTX", name);
	T_OK(n >= 10 + KB_DT_COUNT);
}

/* The flush's discard takes (buffer, lines, groups): device.c passes three. */
static void test_gpu_util__discard_signature(void)
{
	if (built < 0 || !build.ptx)
		T_SKIP("the utility source did not compile");
	T_EQ_INT(count_params(entry_params("kb_l2_discard")), 3);
	T_EQ_INT(count_params(entry_params("kb_flush_read")), 3);
	T_EQ_INT(count_params(entry_params("kb_spin")), 1);
	T_CONTAINS(build.ptx, "discard.global.L2");
	T_CONTAINS(build.ptx, "%smid");
}

/* kb_icache assembles for sm_90 through nvJitLink, takes the three
 * parameters device.c passes, and its cubin holds at least its 12288
 * instructions of 16 bytes: more than an SM's 128 KB of instruction cache. */
static void test_gpu_util__icache_thrash_is_large(void)
{
	char *ptx = kb_profile__icache_ptx();
	kb_source src;
	kb_compile_source_init(&src, "<kbench icache>.ptx", ptx, KB_SRC_PTX);
	kb_build_opts o = {.arch = "sm_90"};
	kb_build b;
	kb_err err = {0};
	int rc = kb_compile_build(&src, NULL, NULL, &o, &b, &err);
	if (rc < 0)
		printf("  compile: %s\n", err.msg);
	T_EQ_INT(rc, 0);
	T_OK(b.ok);
	T_OK(b.cubin_len >= 12288 * 16);
	const char *params = strstr(ptx, ".entry kb_icache(");
	T_OK(params != NULL);
	T_EQ_INT(count_params(params ? params + strlen(".entry kb_icache(") : NULL), 3);
	kb_compile_build_free(&b);
	kb_compile_source_free(&src);
	free(ptx);
}

int main(void)
{
	/* a fresh cache: a hit would bring back the cubin without its PTX */
	if (!mkdtemp(cache_dir))
		return 1;
	setenv("XDG_CACHE_HOME", cache_dir, 1);
	setenv("PATH", "/usr/bin:/bin", 1); /* no SASS needed */
	compile_util();
	T_RUN(test_gpu_util__compiles);
	T_RUN(test_gpu_util__every_loaded_kernel_is_there);
	T_RUN(test_gpu_util__discard_signature);
	T_RUN(test_gpu_util__icache_thrash_is_large);
	kb_compile_build_free(&build);
	char *rm = kb_xasprintf("rm -rf %s", cache_dir);
	if (system(rm) != 0)
		printf("  (could not remove %s)\n", cache_dir);
	free(rm);
	return t_report();
}
