/*
 * gpu_fixture.h - what the unit tests that run their own kernels share:
 * device 0 open, one CUDA source compiled for it and loaded, two device
 * buffers x and y of n floats, and event-timed launches, each after an L2
 * flush.  Include after src/gpu/gpu.h.
 */
#ifndef KB_GPU_FIXTURE_H
#define KB_GPU_FIXTURE_H

typedef struct {
	kb_device *d;
	CUmodule mod;
	CUdeviceptr x, y;
	unsigned long long n;
} t_gpu;

/* Opens device 0, builds `cuda` (named `name` in diagnostics) for its
 * architecture, loads it, and allocates x and y (n floats each, zeroed).
 * On failure, what was made is left for t_gpu_close. */
static int t_gpu_open(t_gpu *g, const char *name, const char *cuda, unsigned long long n,
		      kb_err *err)
{
	memset(g, 0, sizeof *g);
	int rc = kb_profile_device_open(&g->d, 0, err);
	if (rc < 0)
		return rc;
	kb_source src;
	kb_compile_source_init(&src, name, cuda, KB_SRC_CUDA);
	char *arch = kb_xasprintf("sm_%d", kb_profile_device_info(g->d)->sm);
	kb_build_opts o = {.arch = arch};
	kb_build b;
	rc = kb_compile_build(&src, NULL, NULL, &o, &b, err);
	if (rc < 0)
		goto out;
	g->n = n;
	if ((rc = KB_CU(err, cuModuleLoadData(&g->mod, b.cubin))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&g->x, n * 4))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemAlloc(&g->y, n * 4))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8(g->x, 0, n * 4))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuMemsetD8(g->y, 0, n * 4))) < 0)
		goto out;
out:
	kb_compile_build_free(&b);
	kb_compile_source_free(&src);
	free(arch);
	return rc;
}

static void t_gpu_close(t_gpu *g)
{
	if (g->x)
		kb_cu.cuMemFree(g->x);
	if (g->y)
		kb_cu.cuMemFree(g->y);
	if (g->mod)
		kb_cu.cuModuleUnload(g->mod);
	kb_profile_device_close(g->d);
}

/* ms[i] for `reps` launches of launch(ctx), each after an L2 flush and
 * between two events. */
static int t_gpu_event_ms(t_gpu *g, kb_launch_fn launch, void *ctx, int reps, double *ms,
			  kb_err *err)
{
	CUevent a = NULL, b = NULL;
	int rc = KB_OK;
	if ((rc = KB_CU(err, cuEventCreate(&a, CU_EVENT_DEFAULT))) < 0)
		goto out;
	if ((rc = KB_CU(err, cuEventCreate(&b, CU_EVENT_DEFAULT))) < 0)
		goto out;
	for (int i = 0; i < reps; i++) {
		if ((rc = kb_profile__flush_l2(g->d, err)) < 0)
			goto out;
		if ((rc = KB_CU(err, cuEventRecord(a, g->d->stream))) < 0)
			goto out;
		if ((rc = launch(ctx, err)) < 0)
			goto out;
		if ((rc = KB_CU(err, cuEventRecord(b, g->d->stream))) < 0)
			goto out;
		if ((rc = KB_CU(err, cuEventSynchronize(b))) < 0)
			goto out;
		float x = 0;
		if ((rc = KB_CU(err, cuEventElapsedTime(&x, a, b))) < 0)
			goto out;
		ms[i] = x;
	}
out:
	if (a)
		kb_cu.cuEventDestroy(a);
	if (b)
		kb_cu.cuEventDestroy(b);
	return rc;
}

#endif
