/*
 * emu.h - the host emulator's C side (tests/emu/README.md): the launch
 * call between the driver (tile_emu.c, C) and a kernel built for the
 * emulator (the generated CUDA + cuda_emu.h + cuda_emu.cpp, a shared
 * object), and the driver's translation of generated CUDA into that
 * shared object (emu_source.c).  The launch part is plain C so that the
 * C++ runtime includes it too.
 */
#ifndef KB_EMU_H
#define KB_EMU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===== the launch (cuda_emu.cpp) ===== */

/* A buffer the kernel may touch, named in fault reports ("past the end of
 * 'c'"). */
typedef struct {
	const char *name;
	const void *base;
	size_t bytes;
} emu_buffer;

/* When a cp.async copy lands in shared memory. */
enum {
	EMU_COPY_AT_WAIT,   /* at the wait_group that completes its group (the latest legal time) */
	EMU_COPY_AT_ISSUE,  /* at once (the earliest) */
};

/* In which order the runnable threads of a block run between two
 * synchronisation points. */
enum {
	EMU_SCHED_IN_ORDER, /* thread 0, 1, 2 ... */
	EMU_SCHED_SHUFFLE,  /* a fresh random order every round (seed) */
	EMU_SCHED_WARP,     /* one warp at a time, as far as it goes (the lowest
			     * runnable first): a warp gets ahead of the others
			     * to the next barrier, so shared memory reused with
			     * no barrier between shows */
};

typedef struct {
	unsigned grid[3], block[3];
	size_t smem;              /* dynamic shared memory the launch gives, bytes */
	int copies;               /* EMU_COPY_* */
	int sched;                /* EMU_SCHED_* */
	unsigned long long seed;
	const emu_buffer *bufs;
	int nbufs;
} emu_launch_cfg;

/* Runs the translation unit's kernel over the whole grid, one block after
 * another.  Returns the number of problems found (each reported on stderr:
 * races on shared memory, copies left in flight, ...); a fault, a deadlock
 * or PTX the emulator does not know ends the process with status 3 after
 * saying where.  args: one pointer per kernel parameter, to the value
 * (a scalar) or the buffer itself (a pointer parameter). */
/* The emulator's CUtensorMap (tests/emu/include/cuda.h): 64-bit words
 * tile_emu.c fills from a `//! tensormap` line (all zeros where TMA could
 * not describe the tensor) and tma_emu.cpp reads.  Dims and the box are
 * innermost first; the stride is a row's bytes. */
enum { EMU_TMAP_BASE, EMU_TMAP_ESIZE, EMU_TMAP_DIM0, EMU_TMAP_DIM1, EMU_TMAP_STRIDE, EMU_TMAP_BOX0,
       EMU_TMAP_BOX1, EMU_TMAP_SWIZZLE };

typedef int (*emu_launch_fn)(const emu_launch_cfg *cfg, void **args);
int emu_launch(const emu_launch_cfg *cfg, void **args);

/* Defined by the generated translation unit: calls the kernel with args. */
void emu_kernel_entry(void **args);

#ifdef __cplusplus
}
#else

/* ===== generated CUDA to a host shared object (emu_source.c) ===== */

#include "../../src/core/kb.h"
#include "../../src/compile/compile.h"

/* The generated CUDA as g++ compiles it here: each asm statement becomes
 * an emu::Ptx run with its operands, `extern __shared__ T name[]` a
 * pointer to the block's dynamic shared memory, other __shared__
 * variables function statics (one block runs at a time).  Lines keep
 * their numbers, so the #line directives still name the .tile lines.
 * Returns 0, or KB_EINVAL with err saying what could not be read. */
int emu_source_rewrite(const char *cuda, kb_buf *out, kb_err *err);
/* The whole translation unit: cuda_emu.h, the rewritten CUDA and an
 * emu_kernel_entry that calls kernel k.  Returns 0 or KB_EINVAL. */
int emu_source_unit(const char *cuda, const kb_kernel *k, kb_buf *out, kb_err *err);
/* Compiles cpp (with the headers of emu_dir) and links it with the
 * runtime object into the shared object so: $CXX, else g++.  Returns 0,
 * or KB_ECOMPILE with the compiler's messages in err. */
int emu_source_build(const char *cpp, const char *so, const char *emu_dir, const char *runtime,
		     kb_err *err);

/* ===== a case's failure in words (emu_report.c) ===== */

#include "../../src/reference/reference.h"

/* Appends where t's elements beyond rtol and atol of ref lie: the rows and
 * columns that hold any (or the flat indices of a rank-1 output), and the
 * first six with their values. */
void emu_describe_bad(kb_buf *why, const kb_tensor *t, const kb_ref_out *ref, double rtol, double atol);
/* Appends text with every line indented by four spaces. */
void emu_indent(kb_buf *b, const char *text);

#endif

#endif
