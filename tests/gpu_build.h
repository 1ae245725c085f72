/*
 * gpu_build.h - what the GPU unit tests that map PCs to SASS share: a CUDA
 * source compiled for device d's architecture (-lineinfo, as kbench
 * builds) and its nvdisasm listing (the toolkit's nvdisasm put on PATH
 * when PATH lacks one).  Include after src/gpu/gpu.h.
 */
#ifndef KB_GPU_BUILD_H
#define KB_GPU_BUILD_H

#include <unistd.h>

/* Builds `cuda` (called `name` in diagnostics) into b and disassembles it
 * into sass (sass->available false, with why, without a disassembler).
 * Returns 0 or a KB_E* with err; free b and sass either way. */
static inline int t_build_with_sass(kb_device *d, const char *name, const char *cuda, kb_build *b,
				    kb_sass *sass, kb_err *err)
{
	char *tool = kb_which("nvdisasm");
	if (!tool && access("/usr/local/cuda/bin/nvdisasm", X_OK) == 0) {
		const char *path = getenv("PATH");
		char *np = kb_xasprintf("%s:/usr/local/cuda/bin", path ? path : "/usr/bin:/bin");
		setenv("PATH", np, 1);
		free(np);
	}
	free(tool);
	kb_source src;
	kb_compile_source_init(&src, name, cuda, KB_SRC_CUDA);
	char *arch = kb_xasprintf("sm_%d", kb_profile_device_info(d)->sm);
	kb_build_opts o = {.arch = arch};
	int rc = kb_compile_build(&src, NULL, NULL, &o, b, err);
	if (rc == 0)
		rc = kb_compile_sass(b->cubin, b->cubin_len, sass, err);
	kb_compile_source_free(&src);
	free(arch);
	return rc;
}

#endif
