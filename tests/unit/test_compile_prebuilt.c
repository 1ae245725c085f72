/* test_compile_prebuilt.c - the cubin a remote runner's client sends
 * (docs/remote.md): a build exported from the compile cache and handed back
 * as kb_compile_unit_opts.prebuilt gives the same cubin and kernels without
 * running the compiler or reading the cache.  Needs NVRTC (no GPU). */
#include "../../src/compile/compile.h"
#include "t.h"

#include <stdlib.h>
#include <string.h>

static void test_compile_prebuilt__round_trip(void)
{
	char dir[] = "/tmp/kbench-prebuilt.XXXXXX";
	T_OK(mkdtemp(dir) != NULL);
	setenv("XDG_CACHE_HOME", dir, 1);
	kb_compile_unit_opts o = {.arch = "sm_90"};
	kb_compile_unit a, b;
	kb_err err = {0};
	int rc = kb_compile_unit_run("kernels/vector_add.cu", NULL, &o, &a, &err);
	if (rc < 0) {
		kb_compile_unit_free(&a);
		T_SKIP("no NVRTC here");
	}
	json_t *pb = kb_compile_build_export(&a.build);
	T_OK(pb != NULL);
	char *moved = kb_xasprintf("%s.moved", dir); /* no cache to fall back on */
	setenv("XDG_CACHE_HOME", moved, 1);
	kb_compile_unit_opts p = {.arch = "sm_90", .prebuilt = pb};
	T_EQ_INT(kb_compile_unit_run("kernels/vector_add.cu", NULL, &p, &b, &err), 0);
	T_OK(b.build.prebuilt && !b.build.cache_hit);
	T_EQ_INT((int)b.build.cubin_len, (int)a.build.cubin_len);
	T_OK(b.build.cubin_len && !memcmp(a.build.cubin, b.build.cubin, a.build.cubin_len));
	T_EQ_INT(b.build.nkernels, a.build.nkernels);
	json_object_set_new(pb, "cubin", json_string("not base64!"));
	kb_compile_unit c;
	T_OK(kb_compile_unit_run("kernels/vector_add.cu", NULL, &p, &c, &err) < 0);
	kb_compile_unit_free(&c);
	kb_compile_unit_free(&b);
	kb_compile_unit_free(&a);
	json_decref(pb);
	char *rm = kb_xasprintf("rm -rf %s %s", dir, moved);
	T_EQ_INT(system(rm), 0);
	free(rm);
	free(moved);
}

int main(void)
{
	T_RUN(test_compile_prebuilt__round_trip);
	return t_report();
}
