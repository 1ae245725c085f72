/*
 * cuda_emu_int.h - what the emulator's runtime (cuda_emu.cpp: fibers,
 * barriers, warp rendezvous, shared memory and its shadow, cp.async) shares
 * with its PTX interpreter (ptx_emu.cpp).
 */
#ifndef KB_CUDA_EMU_INT_H
#define KB_CUDA_EMU_INT_H

#include "cuda_emu.h"

#include <string.h>
#include <ucontext.h>

#include <deque>
#include <vector>

namespace emu {

enum { RUNNABLE, AT_BARRIER, AT_WARP, AT_NAMED, DONE };

struct Copy {
	uint32_t dst;
	int bytes;
	unsigned char data[16]; /* what the source held at issue, zero-filled */
};

/* A TMA store (tma_emu.cpp): its tensormap, box origin and shared source. */
struct Bulk {
	const uint64_t *map;
	int x, y;
	uint32_t src;
};

struct Fiber {
	Lane lane;
	int index;
	ucontext_t ctx;
	int state;
	int named;              /* AT_NAMED: the barrier's id */
	const char *file;       /* where it waits */
	int line;
	std::vector<Copy> open;                   /* cp.async not yet committed */
	std::deque<std::vector<Copy>> groups;     /* committed, oldest first */
	bool spinning;          /* its last run ended in a failed mbarrier wait */
	std::vector<Bulk> bulk_open;              /* TMA stores not yet committed */
	std::deque<std::vector<Bulk>> bulk;       /* committed bulk groups, oldest first */
};

struct Warp {
	int live, arrived;
	const void *id;         /* which collective the arrived lanes are at */
	const char *file;
	int line;
	uint32_t in[32][136];   /* (wgmma m64n256k16: A, a descriptor, 128 accumulators, scale-d) */
	uint32_t out[32][128];
};

/* The shadow of one 2-byte unit of dynamic shared memory. */
struct Unit {
	uint32_t wepoch, repoch;
	int32_t writer;         /* the thread whose cp.async last completed here, -1 */
	int32_t reader;         /* the warp that read it in repoch, -2 several, -1 none */
	int32_t inflight;       /* cp.async copies issued here and not completed */
	int32_t issuer;
};

static inline uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* the block being run: a warp's index, dynamic shared memory, the running lane */
int warp_index(const Warp &w);
unsigned char *shared_bytes();
int current_lane();

/* reports (a problem is counted and the run goes on; fatal ends it) */
void problem(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
[[noreturn]] void fatal(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A warp collective: the lane leaves nin words of in and waits; the last
 * lane to arrive runs compute over all 32 lanes' words; returns its warp. */
Warp &rendezvous(const void *id, const uint32_t *in, int nin, const char *file, int line,
		 void (*compute)(Warp &, const void *), const void *ctx);
void check_mask(unsigned mask, const char *file, int line);
/* shared memory: bounds and alignment of an access; a warp's read in the shadow */
void check_shared(const char *what, uint64_t a, int n, int align, const char *file, int line);
void shadow_read(int warp, uint32_t a, int n, const char *file, int line);
/* a completed mbarrier phase orders shared memory as a named barrier does */
void shadow_order();
/* cp.async of cp_size bytes, src_size of them read, the rest zeros */
void cp_async(uint64_t dst, uint64_t src, int cp_size, int src_size, const char *file, int line);
void commit_group();
void wait_group(long long n);
/* bar.sync (wait) or bar.arrive id, count: named barrier id (1-15) of count threads */
void named_barrier(long long id, long long count, bool wait, const char *file, int line);

/* Things that can let a waiting thread go on: barrier and warp arrivals,
 * exits, mbarrier arrivals and completed waits.  A pass of the scheduler
 * over the block in which none happened and every thread that ran only
 * failed an mbarrier wait is a deadlock. */
extern unsigned long long events;
/* The running thread's mbarrier wait failed: the others run before it
 * tries again. */
void spin(const char *file, int line);
/* The host bytes [a, a + n) of shared address a (the dynamic shared memory,
 * or a static __shared__ variable's address from __cvta_generic_to_shared),
 * n-byte aligned, or fatal. */
unsigned char *shared_at(uint64_t a, int n, const char *what, const char *file, int line);
/* memcpy from global memory, a fault in it named as `what` at file:line */
void copy_global(void *dst, const void *src, size_t n, const char *what, const char *file, int line);
/* whether copies land at issue (--copies issue) rather than at the wait */
bool copies_at_issue();

/* mbarriers and the bulk copies that complete on them (mbar_emu.cpp) */
void mbar_reset();
void mbar_init(uint64_t a, long long count, const char *file, int line);
/* an arrival (tx: the bytes it expects more this phase, or 0) */
void mbar_arrive(uint64_t a, long long tx, const char *file, int line);
/* whether the phase of this parity has completed; spins if not */
bool mbar_try_wait(uint64_t a, unsigned parity, const char *file, int line);
/* cp.async.bulk of bytes from global src to shared dst, completing on bar */
void bulk_copy(uint64_t dst, uint64_t src, long long bytes, uint64_t bar, const char *file, int line);
/* mbar_emu.cpp: a TMA load's bytes, landed at issue, complete on barrier a */
void mbar_complete_tx(uint64_t a, long long bytes, const char *file, int line);

/* the running fiber */
Fiber *current_fiber();

/* tma_emu.cpp: TMA copies (their mbarriers are mbar_emu.cpp's) and bulk groups */
void tma_load(uint32_t dst, const void *map, int x, int y, uint32_t bar, const char *file, int line);
void tma_store(const void *map, int x, int y, uint32_t src, const char *file, int line);
void bulk_commit();
void bulk_wait_read(Fiber *f, size_t n);
void st_shared32(uint32_t a, uint32_t v, const char *file, int line);

} // namespace emu

#endif
