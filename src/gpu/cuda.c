/*
 * cuda.c - the CUDA driver API, loaded with dlopen("libcuda.so.1") so that
 * kbench starts, edits and compiles on machines with no driver (style rule
 * 11).  Owns symbol resolution and turning CUresult into kb_err; nothing
 * else in kbench calls dlopen on libcuda.
 */
#include "gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_cu_api kb_cu;

#define KB_STR2(x) #x
#define KB_STR(x) KB_STR2(x)

static void *cuda_lib;
static int load_rc = 1; /* 1: not tried yet */
static char load_msg[512];

static int resolve_all(void)
{
#define KB_CU_RESOLVE(f) \
	kb_cu.f = (__typeof__(kb_cu.f))dlsym(cuda_lib, KB_STR(f)); \
	if (!kb_cu.f) { \
		snprintf(load_msg, sizeof load_msg, "libcuda.so.1 lacks %s (driver too old?)", \
			 KB_STR(f)); \
		return KB_ENODEV; \
	}
	KB_CU_FUNCS(KB_CU_RESOLVE)
#undef KB_CU_RESOLVE
	return KB_OK;
}

int kb_profile__cuda_load(kb_err *err)
{
	if (load_rc == 1) {
		/* kbench keeps its own compile cache; the driver's would hide the
		 * ptxas report of in-process compiles (see compile_int.h). */
		setenv("CUDA_CACHE_DISABLE", "1", 1);
		cuda_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!cuda_lib) {
			snprintf(load_msg, sizeof load_msg,
				 "no CUDA driver: libcuda.so.1 cannot be loaded (%s)", dlerror());
			load_rc = KB_ENODEV;
		} else {
			load_rc = resolve_all();
		}
	}
	if (load_rc < 0)
		return kb_err_set(err, load_rc, KB_DOM_CUDA, 0, "%s", load_msg);
	return KB_OK;
}

bool kb_profile_sticky(const kb_err *err)
{
	return err && err->domain == KB_DOM_CUDA && kb_profile__cu_sticky(err->code);
}

bool kb_profile__cu_sticky(int code)
{
	switch (code) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
	case CUDA_ERROR_ECC_UNCORRECTABLE:
	case CUDA_ERROR_CONTEXT_IS_DESTROYED:
		return true;
	default:
		return false;
	}
}

int kb_profile__cu_err(kb_err *err, CUresult r, const char *call, const char *file, int line)
{
	const char *name = NULL, *text = NULL;
	if (kb_cu.cuGetErrorName)
		kb_cu.cuGetErrorName(r, &name);
	if (kb_cu.cuGetErrorString)
		kb_cu.cuGetErrorString(r, &text);
	/* "cuMemAlloc_v2(&p, n)" -> "cuMemAlloc_v2" */
	const char *paren = strchr(call, '(');
	int n = paren ? (int)(paren - call) : (int)strlen(call);
	int rc = (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY ||
		  r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_INVALID_DEVICE)
		 ? KB_ENODEV : KB_ERROR;
	return kb_err_set_at(err, file, line, rc, KB_DOM_CUDA, (int)r, "%s: %s (%.*s)",
			     name ? name : "CUDA_ERROR_UNKNOWN", text ? text : "unknown error", n,
			     call);
}

int kb_profile__cu_check(kb_err *err, CUresult r, const char *call, const char *file, int line)
{
	return r == CUDA_SUCCESS ? KB_OK : kb_profile__cu_err(err, r, call, file, line);
}
