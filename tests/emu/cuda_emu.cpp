/*
 * cuda_emu.cpp - the machine under cuda_emu.h: a block's threads as fibers
 * on one OS thread, __syncthreads as a barrier over them, warp collectives
 * (shuffles, ldmatrix, mma.sync) as a rendezvous of the warp's 32 lanes,
 * dynamic shared memory with a shadow that finds races on it, and cp.async
 * with real commit/wait_group accounting; ptx_emu.cpp interprets the few
 * PTX instructions the tile compiler writes inline on top of these.
 *
 * The PTX semantics come from NVIDIA's PTX ISA (9.7.9.25 cp.async,
 * 9.7.14.5.8 the m16n8k16 fragments of mma, 9.7.14.5.15 ldmatrix), not
 * from kbench's own comments: the point is an independent check of the
 * layouts the tile compiler assumes.
 *
 * Invariants: blocks run one after another; within a block a fiber runs
 * until it reaches a barrier, a warp collective or its end, and nothing
 * else switches it.  The lane that completes a warp collective computes
 * every lane's result before any lane goes on.  A cp.async's bytes land
 * at the wait_group that completes its group (or at once with
 * EMU_COPY_AT_ISSUE), and shared bytes are "in flight" from issue to that
 * wait whichever is chosen: reading them then, or overwriting bytes another
 * warp read since the last barrier, is a race and is reported.
 *
 * Does not: model timing, memory coalescing or bank conflicts, or check
 * plain C++ loads and stores of shared memory (only those made through PTX).
 */
#include "cuda_emu_int.h"

#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

namespace emu {

/* ===== 16-bit floats ===== */


uint16_t f32_to_bf16(float f)
{
	uint32_t u = f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* a quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

/* Drops `shift` low bits of m, rounding to nearest even. */
static uint32_t round_shift(uint32_t m, int shift)
{
	if (shift > 31)
		return 0;
	uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
	return rem > half || (rem == half && (q & 1)) ? q + 1 : q;
}

uint16_t f32_to_f16(float f)
{
	uint32_t u = f32_bits(f), a = u & 0x7fffffffu;
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	if (a > 0x7f800000u)
		return sign | 0x7e00;                       /* NaN */
	if (a >= 0x477ff000u)
		return sign | 0x7c00;                       /* 65520 and up round to inf */
	int e = (int)(a >> 23);
	if (e < 113) {                                      /* below 2^-14: subnormal or 0 */
		if (e == 0)
			return sign;
		return sign | (uint16_t)round_shift((a & 0x7fffffu) | 0x800000u, 126 - e);
	}
	return sign | (uint16_t)(round_shift(a, 13) - ((127 - 15) << 10));
}

float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	if (e == 0)
		return (sign ? -1.0f : 1.0f) * (float)m * 0x1p-24f;
	if (e == 31)
		return bits_f32(sign | 0x7f800000u | m << 13);
	return bits_f32(sign | (e + 112) << 23 | m << 13);
}

/* ===== state ===== */

Lane *cur;
uint3 block_idx;
dim3 block_dim, grid_dim;

static const emu_launch_cfg *cfg;
static void **kargs;
static std::vector<Fiber> fibers;
static std::vector<Warp> warps;
static Fiber *running;
static ucontext_t sched_ctx;
static int nthreads, nlive, ndone;
static int bar_arrived, bar_line;
static const char *bar_file;
static struct {
	int arrived, count, line;
	const char *file;
} named[16];                /* bar.sync / bar.arrive's barriers 1-15 (0 is __syncthreads') */
static uint32_t epoch;
static unsigned char *stacks, *smem_region, *smem;
static size_t stacks_len, smem_region_len, smem_size;
static std::vector<Unit> shadow;
static int problems;
unsigned long long events;
/* static __shared__ variables (host statics here) as shared addresses:
 * 0x80000000 + their offset from anchor, so address arithmetic holds */
static const unsigned char *anchor;
static const uint64_t STATIC_SHARED = 0x80000000u;

int warp_index(const Warp &w) { return (int)(&w - warps.data()); }
unsigned char *shared_bytes() { return smem; }
int current_lane() { return running->lane.lane; }
/* What the running thread does, for a fault report (volatile: the stores
 * must stay around the copy that may fault). */
static const char *volatile doing, *volatile doing_file;
static volatile int doing_line;

static const size_t STACK = 256 * 1024, PAGE = 4096;

/* ===== reports ===== */

static void where(char *b, size_t n)
{
	if (running)
		snprintf(b, n, "block (%u,%u,%u) thread (%u,%u,%u)", block_idx.x, block_idx.y,
			 block_idx.z, running->lane.tid.x, running->lane.tid.y, running->lane.tid.z);
	else
		snprintf(b, n, "block (%u,%u,%u)", block_idx.x, block_idx.y, block_idx.z);
}

static void vreport(const char *file, int line, const char *fmt, va_list ap)
{
	char msg[1024], w[96];
	vsnprintf(msg, sizeof msg, fmt, ap);
	where(w, sizeof w);
	fprintf(stderr, "%s:%d: emu: %s [%s]\n", file ? file : "?", line, msg, w);
}

/* A problem after which the run cannot go on: says so and ends the process. */
[[noreturn]] __attribute__((format(printf, 3, 4)))
void fatal(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(file, line, fmt, ap);
	va_end(ap);
	fflush(stderr);
	_exit(3);
}

/* Whether a problem of this kind (its message) at this place was reported
 * already in this launch; remembers it if not. */
static bool reported(const char *fmt, const char *file, int line)
{
	static struct { const char *fmt, *file; int line; } seen[16];
	static int nseen;
	if (!problems)
		nseen = 0;
	for (int i = 0; i < nseen; i++)
		if (seen[i].fmt == fmt && seen[i].line == line && !strcmp(seen[i].file, file))
			return true;
	if (nseen < 16)
		seen[nseen++] = {fmt, file, line};
	return nseen == 16;
}

/* A problem the run survives (a race): counted; the first of each kind at
 * each place printed. */
__attribute__((format(printf, 3, 4)))
void problem(const char *file, int line, const char *fmt, ...)
{
	bool again = reported(fmt, file ? file : "?", line);
	problems++;
	if (again)
		return;
	va_list ap;
	va_start(ap, fmt);
	vreport(file, line, fmt, ap);
	va_end(ap);
}

/* ===== fibers, barriers, warps ===== */

static void yield(int state, const char *file, int line)
{
	Fiber *f = running;
	f->state = state;
	f->file = file;
	f->line = line;
	swapcontext(&f->ctx, &sched_ctx);
}

void syncthreads(const char *file, int line)
{
	if (bar_arrived == 0) {
		bar_file = file;
		bar_line = line;
	} else if (bar_line != line || strcmp(bar_file, file)) {
		fatal(file, line, "divergent __syncthreads: others wait at %s:%d", bar_file, bar_line);
	}
	events++;
	if (++bar_arrived < nlive) {
		yield(AT_BARRIER, file, line);
		return;
	}
	if (nlive < nthreads)
		problem(file, line, "__syncthreads after %d of the block's threads have exited",
			nthreads - nlive);
	for (Fiber &f : fibers)
		if (f.state == AT_BARRIER)
			f.state = RUNNABLE;
	bar_arrived = 0;
	epoch++;
}

/* bar.sync (wait) or bar.arrive of named barrier id for count threads
 * (PTX ISA 9.7.13.1; whole warps arrive): the barrier completes when count
 * threads have arrived, and releases those that wait.  Its completion
 * orders shared memory as __syncthreads does (the shadow's epoch: one for
 * the block, so a barrier of some threads orders the others' accesses too;
 * races between threads it does not join can go unseen). */
void named_barrier(long long id, long long count, bool wait, const char *file, int line)
{
	if (id < 1 || id > 15 || count < 32 || count % 32 || count > nthreads)
		fatal(file, line, "bar %lld, %lld: the id 1 to 15, the count whole warps of the block's %d threads",
		      id, count, nthreads);
	auto &b = named[id];
	if (b.arrived == 0) {
		b.count = (int)count;
		b.file = file;
		b.line = line;
	} else if (b.count != count) {
		fatal(file, line, "bar %lld: %lld threads here, %d at %s:%d", id, count, b.count, b.file, b.line);
	}
	if (++b.arrived < b.count) {
		if (wait) {
			running->named = (int)id;
			yield(AT_NAMED, file, line);
		}
		return;
	}
	for (Fiber &f : fibers)
		if (f.state == AT_NAMED && f.named == id)
			f.state = RUNNABLE;
	b.arrived = 0;
	epoch++;
}

/* Brings the running lane to its warp's collective `id`; the lane that
 * completes it runs compute(w, ctx) for all lanes.  in: this lane's words;
 * afterwards w.out[lane] holds its result. */
Warp &rendezvous(const void *id, const uint32_t *in, int nin, const char *file, int line,
			void (*compute)(Warp &, const void *), const void *ctx)
{
	Fiber *f = running;
	Warp &w = warps[f->lane.warp];
	if (w.arrived == 0) {
		w.id = id;
		w.file = file;
		w.line = line;
	} else if (w.id != id || w.line != line || strcmp(w.file, file)) {
		fatal(file, line, "warp %d diverged: other lanes wait at %s:%d", f->lane.warp, w.file,
		      w.line);
	}
	memcpy(w.in[f->lane.lane], in, (size_t)nin * 4);
	events++;
	if (++w.arrived < w.live) {
		yield(AT_WARP, file, line);
		return w;
	}
	if (w.live < 32 && w.live != (int)(nthreads - f->lane.warp * 32))
		fatal(file, line, "warp %d: a collective after %d of its lanes exited", f->lane.warp,
		      32 - w.live);
	compute(w, ctx);
	int first = f->lane.warp * 32;
	for (int i = first; i < first + 32 && i < nthreads; i++)
		if (fibers[i].state == AT_WARP)
			fibers[i].state = RUNNABLE;
	w.arrived = 0;
	return w;
}

void check_mask(unsigned mask, const char *file, int line)
{
	int first = running->lane.warp * 32, n = nthreads - first < 32 ? nthreads - first : 32;
	unsigned full = n == 32 ? 0xffffffffu : (1u << n) - 1;
	if (mask != full)
		fatal(file, line, "warp mask 0x%08x: only the full warp (0x%08x) is emulated", mask, full);
}

static void shfl_compute(Warp &w, const void *)
{
	for (int l = 0; l < 32; l++) {
		int kind = (int)w.in[l][2], arg = (int)w.in[l][3], width = (int)w.in[l][4];
		int seg = l / width * width, src = l;
		switch (kind) {
		case SHFL_XOR: src = l ^ arg; break;
		case SHFL_DOWN: src = l + arg; break;
		case SHFL_UP: src = l - arg; break;
		default: src = seg + arg % width; break;
		}
		if (src < seg || src >= seg + width)
			src = l;
		w.out[l][0] = w.in[src][0];
		w.out[l][1] = w.in[src][1];
	}
}

uint64_t shfl(int kind, unsigned mask, uint64_t v, int arg, int width, const char *file, int line)
{
	check_mask(mask, file, line);
	if (width <= 0 || width > 32 || (width & (width - 1)))
		fatal(file, line, "__shfl width %d", width);
	static const char site = 0;
	uint32_t in[5] = {(uint32_t)v, (uint32_t)(v >> 32), (uint32_t)kind, (uint32_t)arg, (uint32_t)width};
	Warp &w = rendezvous(&site, in, 5, file, line, shfl_compute, nullptr);
	int l = running->lane.lane;
	return (uint64_t)w.out[l][1] << 32 | w.out[l][0];
}

static void nothing(Warp &, const void *) {}

void syncwarp(unsigned mask, const char *file, int line)
{
	check_mask(mask, file, line);
	static const char site = 0;
	rendezvous(&site, nullptr, 0, file, line, nothing, nullptr);
}

void spin(const char *file, int line)
{
	running->spinning = true;
	yield(RUNNABLE, file, line);
	running->spinning = false;
}

/* ===== shared memory ===== */

unsigned char *dyn_smem() { return smem; }

void fatal_rank(unsigned rank)
{
	fatal("<cooperative_groups>", 0, "map_shared_rank(p, %u): the emulator's cluster is one block", rank);
}

/* Whether c is in a thread's stack or one of the launch's buffers (so no
 * static __shared__ variable). */
static bool local_or_global(const unsigned char *c)
{
	if (c >= stacks && c < stacks + stacks_len)
		return true;
	for (int i = 0; i < cfg->nbufs; i++) {
		const unsigned char *b = (const unsigned char *)cfg->bufs[i].base;
		if (c >= b && c < b + cfg->bufs[i].bytes)
			return true;
	}
	return false;
}

unsigned long long cvta_shared(const void *p, const char *file, int line)
{
	const unsigned char *c = (const unsigned char *)p;
	if (c >= smem && c <= smem + smem_size)
		return (unsigned long long)(c - smem);
	if (local_or_global(c))
		fatal(file, line, "__cvta_generic_to_shared of %p, a local or global address", p);
	if (!anchor)
		anchor = c - (STATIC_SHARED >> 1);
	if (c < anchor || c >= anchor + STATIC_SHARED)
		fatal(file, line, "__cvta_generic_to_shared of %p, outside the shared memory", p);
	return STATIC_SHARED + (unsigned long long)(c - anchor);
}

Fiber *current_fiber() { return running; }

unsigned char *shared_at(uint64_t a, int n, const char *what, const char *file, int line)
{
	if (a < STATIC_SHARED) {
		check_shared(what, a, n, n, file, line);
		return smem + a;
	}
	unsigned char *c = (unsigned char *)anchor + (a - STATIC_SHARED);
	if (!anchor || a >= 2 * STATIC_SHARED || local_or_global(c))
		fatal(file, line, "%s: shared address 0x%llx is no shared variable's", what, (unsigned long long)a);
	if (a % (uint64_t)n)
		fatal(file, line, "%s: shared address 0x%llx is not %d-byte aligned", what, (unsigned long long)a, n);
	return c;
}

void copy_global(void *dst, const void *src, size_t n, const char *what, const char *file, int line)
{
	doing = what;
	doing_file = file;
	doing_line = line;
	memcpy(dst, src, n);
	doing = nullptr;
}

bool copies_at_issue() { return cfg->copies == EMU_COPY_AT_ISSUE; }

/* Shared bytes [a, a + n) as an operand: in bounds and aligned, or fatal. */
void check_shared(const char *what, uint64_t a, int n, int align, const char *file, int line)
{
	if (a % (uint64_t)align)
		fatal(file, line, "%s: shared address %llu is not %d-byte aligned", what,
		      (unsigned long long)a, align);
	if (a + (uint64_t)n > smem_size)
		fatal(file, line, "%s: shared bytes [%llu, %llu) past the %zu bytes of dynamic shared "
		      "memory the launch gives", what, (unsigned long long)a,
		      (unsigned long long)(a + (uint64_t)n), smem_size);
}

/* A warp reads shared [a, a + n) (ldmatrix): it must not race a copy. */
void shadow_read(int warp, uint32_t a, int n, const char *file, int line)
{
	for (uint32_t u = a / 2; u < (a + (uint32_t)n) / 2; u++) {
		Unit &s = shadow[u];
		if (s.inflight)
			problem(file, line, "warp %d reads shared byte %u while thread %d's cp.async to it "
				"is in flight (no wait_group completed it)", warp, 2 * u, s.issuer);
		else if (s.writer >= 0 && s.wepoch == epoch && s.writer / 32 != warp)
			problem(file, line, "warp %d reads shared byte %u that thread %d's cp.async wrote "
				"with no __syncthreads between", warp, 2 * u, s.writer);
		if (s.repoch != epoch || s.reader == -1)
			s.reader = warp;
		else if (s.reader != warp)
			s.reader = -2;
		s.repoch = epoch;
	}
}

/* An mbarrier's phase completed (mbar_emu.cpp): its waiters' reads and
 * writes after it are ordered after its arrivers' before it, as a named
 * barrier's are (one epoch for the block: races between threads it does not
 * join can go unseen). */
void shadow_order() { epoch++; }

/* Thread t starts a copy into shared [a, a + n). */
static void shadow_issue(int t, uint32_t a, int n, const char *file, int line)
{
	for (uint32_t u = a / 2; u < (a + (uint32_t)n) / 2; u++) {
		Unit &s = shadow[u];
		if (s.inflight)
			problem(file, line, "thread %d's cp.async to shared byte %u while thread %d's is "
				"still in flight", t, 2 * u, s.issuer);
		else if (s.repoch == epoch && s.reader != -1 && s.reader != t / 32)
			problem(file, line, "thread %d's cp.async overwrites shared byte %u that warp %d "
				"read with no __syncthreads between", t, 2 * u, s.reader);
		s.inflight++;
		s.issuer = t;
	}
}

static void shadow_land(int t, uint32_t a, int n)
{
	for (uint32_t u = a / 2; u < (a + (uint32_t)n) / 2; u++) {
		Unit &s = shadow[u];
		s.inflight--;
		s.writer = t;
		s.wepoch = epoch;
	}
}

/* ===== cp.async ===== */

static void land(Fiber *f, const std::vector<Copy> &g)
{
	for (const Copy &c : g) {
		if (cfg->copies == EMU_COPY_AT_WAIT)
			memcpy(smem + c.dst, c.data, (size_t)c.bytes);
		shadow_land(f->index, c.dst, c.bytes);
	}
}

void cp_async(uint64_t dst, uint64_t src, int cp_size, int src_size, const char *file,
		     int line)
{
	if (src_size < 0 || src_size > cp_size)
		fatal(file, line, "cp.async: src-size %d with cp-size %d", src_size, cp_size);
	if (src % (uint64_t)cp_size)
		fatal(file, line, "cp.async: global address 0x%llx is not %d-byte aligned",
		      (unsigned long long)src, cp_size);
	check_shared("cp.async", dst, cp_size, cp_size, file, line);
	Copy c = {(uint32_t)dst, cp_size, {0}};
	doing = "cp.async reading global memory";
	doing_file = file;
	doing_line = line;
	memcpy(c.data, (const void *)src, (size_t)src_size);
	doing = nullptr;
	shadow_issue(running->index, c.dst, cp_size, file, line);
	if (cfg->copies == EMU_COPY_AT_ISSUE)
		memcpy(smem + c.dst, c.data, (size_t)cp_size);
	running->open.push_back(c);
}

void commit_group()
{
	running->groups.push_back(std::move(running->open));
	running->open.clear();
}

void wait_group(long long n)
{
	Fiber *f = running;
	while ((long long)f->groups.size() > n) {
		land(f, f->groups.front());
		f->groups.pop_front();
	}
}

/* ===== faults ===== */

static void say(const char *s) { ssize_t r = write(2, s, strlen(s)); (void)r; }

/* Names what the faulting address is near: a fiber's stack guard, past the
 * dynamic shared memory, or before/after one of the launch's buffers. */
static void name_address(const unsigned char *a, char *b, size_t n)
{
	if (a >= stacks && a < stacks + stacks_len) {
		snprintf(b, n, "a thread's stack overflowed (%zu KiB)", STACK / 1024);
		return;
	}
	if (a >= smem_region && a < smem_region + smem_region_len) {
		snprintf(b, n, "shared byte %td: past the %zu bytes of dynamic shared memory the launch "
			 "gives", a - smem, smem_size);
		return;
	}
	for (int i = 0; i < cfg->nbufs; i++) {
		const unsigned char *base = (const unsigned char *)cfg->bufs[i].base;
		size_t len = cfg->bufs[i].bytes;
		if (a >= base + len && a < base + len + 2 * PAGE) {
			snprintf(b, n, "byte %td past the end of '%s' (%zu bytes)", a - base - len,
				 cfg->bufs[i].name, len);
			return;
		}
		if (a < base && a + 2 * PAGE >= base) {
			snprintf(b, n, "byte %td before the start of '%s'", base - a, cfg->bufs[i].name);
			return;
		}
	}
	snprintf(b, n, "an address that is no buffer of the launch");
}

static void on_fault(int sig, siginfo_t *si, void *)
{
	char msg[768], w[96], what[200], in[256] = "";
	where(w, sizeof w);
	name_address((const unsigned char *)si->si_addr, what, sizeof what);
	if (doing)
		snprintf(in, sizeof in, " in %s at %s:%d", doing, doing_file, doing_line);
	snprintf(msg, sizeof msg, "emu: %s at %p: %s [%s]%s\n", sig == SIGBUS ? "bus error" : "fault",
		 si->si_addr, what, w, in);
	say(msg);
	_exit(3);
}

static void catch_faults()
{
	static unsigned char alt[64 * 1024];
	stack_t ss = {};
	ss.ss_sp = alt;
	ss.ss_size = sizeof alt;
	sigaltstack(&ss, nullptr);
	struct sigaction sa = {};
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, nullptr);
	sigaction(SIGBUS, &sa, nullptr);
}

/* ===== blocks and the launch ===== */

static void fiber_main(int i)
{
	Fiber *f = &fibers[(size_t)i];
	emu_kernel_entry(kargs);
	if (!f->open.empty() || !f->groups.empty())
		problem("<kernel end>", 0, "thread %d ends with %zu cp.async group(s) and %zu uncommitted "
			"copies in flight", i, f->groups.size(), f->open.size());
	if (!f->bulk_open.empty())
		problem("<kernel end>", 0, "thread %d ends with %zu uncommitted TMA stores", i, f->bulk_open.size());
	bulk_wait_read(f, 0);
	while (!f->groups.empty()) {
		land(f, f->groups.front());
		f->groups.pop_front();
	}
	f->state = DONE;
	events++;
	ndone++;
	nlive--;
	Warp &w = warps[(size_t)(i / 32)];
	w.live--;
	if (w.arrived && w.arrived == w.live)
		fatal(w.file, w.line, "lane %d exited while its warp waits here", i % 32);
	if (bar_arrived && bar_arrived == nlive)
		fatal(bar_file, bar_line, "thread %d exited while the block waits here", i);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

[[noreturn]] static void deadlock()
{
	int bar = 0, warp = 0, at_named = 0, spins = 0;
	const Fiber *wf = nullptr, *sf = nullptr;
	for (const Fiber &f : fibers) {
		if (f.state == AT_NAMED) {
			char more[256] = "";
			for (int id = 1, n = 0; id < 16; id++) /* every named barrier that holds arrivals */
				if (named[id].arrived)
					n += snprintf(more + n, sizeof more - (size_t)n, "; bar %d: %d of %d", id,
						      named[id].arrived, named[id].count);
			running = nullptr;
			fatal(f.file, f.line, "deadlock: thread %d waits at bar %d (%d exited%s)", f.index, f.named, ndone,
			      more);
		}
		bar += f.state == AT_BARRIER;
		if (f.state == AT_WARP && !wf)
			wf = &f;
		if (f.state == RUNNABLE && f.spinning && !sf)
			sf = &f;
		warp += f.state == AT_WARP;
		at_named += f.state == AT_NAMED;
		spins += f.state == RUNNABLE && f.spinning;
	}
	running = nullptr;
	if (!wf)
		wf = sf;
	fatal(wf ? wf->file : bar_file, wf ? wf->line : bar_line, "deadlock: %d threads at "
	      "__syncthreads (%s:%d), %d at warp collectives, %d at named barriers, %d in mbarrier waits "
	      "that cannot complete, %d exited", bar, bar_file ? bar_file : "-", bar_line, warp, at_named, spins, ndone);
}

static void start_block()
{
	for (size_t i = 0; i + 1 < smem_size; i += 2) { /* 0x7fa5: NaN as bf16, f16 and f32 */
		smem[i] = 0xa5;
		smem[i + 1] = 0x7f;
	}
	shadow.assign(smem_size / 2 + 1, Unit{0, 0, -1, -1, 0, -1});
	bar_arrived = 0;
	for (auto &b : named)
		b.arrived = 0;
	ndone = 0;
	nlive = nthreads;
	mbar_reset();
	for (int w = 0; w < (nthreads + 31) / 32; w++)
		warps[(size_t)w] = Warp{nthreads - 32 * w < 32 ? nthreads - 32 * w : 32, 0, nullptr,
					nullptr, 0, {}, {}};
	for (int i = 0; i < nthreads; i++) {
		Fiber &f = fibers[(size_t)i];
		f.lane.tid = uint3{(unsigned)i % block_dim.x, (unsigned)i / block_dim.x % block_dim.y,
				   (unsigned)i / (block_dim.x * block_dim.y)};
		f.lane.lane = i % 32;
		f.lane.warp = i / 32;
		f.index = i;
		f.state = RUNNABLE;
		f.open.clear();
		f.groups.clear();
		f.spinning = false;
		f.bulk_open.clear();
		f.bulk.clear();
		getcontext(&f.ctx);
		f.ctx.uc_stack.ss_sp = stacks + (size_t)i * (STACK + PAGE) + PAGE;
		f.ctx.uc_stack.ss_size = STACK;
		f.ctx.uc_link = &sched_ctx;
		makecontext(&f.ctx, (void (*)())fiber_main, 1, i);
	}
}

static void run_block(uint64_t *rng)
{
	start_block();
	std::vector<int> order((size_t)nthreads);
	for (int i = 0; i < nthreads; i++)
		order[(size_t)i] = i;
	while (ndone < nthreads) {
		if (cfg->sched == EMU_SCHED_SHUFFLE)
			for (int i = nthreads - 1; i > 0; i--)
				std::swap(order[(size_t)i], order[rng_next(rng) % (uint64_t)(i + 1)]);
		bool ran = false, spun_only = true;
		unsigned long long before = events;
		int warp = -1; /* EMU_SCHED_WARP: the lowest warp with a runnable lane not in a failed
				* mbarrier wait (when every runnable lane is, all of them run) */
		for (int i = 0; i < nthreads && cfg->sched == EMU_SCHED_WARP && warp < 0; i++)
			if (fibers[(size_t)i].state == RUNNABLE && !fibers[(size_t)i].spinning)
				warp = i / 32;
		for (int i : order) {
			Fiber &f = fibers[(size_t)i];
			if (f.state != RUNNABLE || (warp >= 0 && i / 32 != warp))
				continue;
			running = &f;
			cur = &f.lane;
			swapcontext(&sched_ctx, &f.ctx);
			ran = true;
			spun_only = spun_only && f.state == RUNNABLE && f.spinning;
		}
		if (!ran || (spun_only && events == before && warp < 0)) /* (one warp's pass proves nothing) */
			deadlock();
	}
	running = nullptr;
	for (int id = 1; id < 16; id++) /* an arrival no thread waited for: a turn passed too often */
		if (named[id].arrived)
			problem(named[id].file, named[id].line, "the block ends with %d of bar %d's %d threads arrived",
				named[id].arrived, id, named[id].count);
}

/* Fiber stacks (a guard page below each) and the dynamic shared memory
 * (its end against a guard page). */
static void map_memory()
{
	stacks_len = (size_t)nthreads * (STACK + PAGE);
	stacks = (unsigned char *)mmap(nullptr, stacks_len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	size_t body = (smem_size + PAGE - 1) / PAGE * PAGE;
	smem_region_len = body + PAGE;
	smem_region = (unsigned char *)mmap(nullptr, smem_region_len, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stacks == MAP_FAILED || smem_region == MAP_FAILED)
		fatal(nullptr, 0, "out of memory for %d threads", nthreads);
	for (int i = 0; i < nthreads; i++)
		mprotect(stacks + (size_t)i * (STACK + PAGE), PAGE, PROT_NONE);
	mprotect(smem_region + body, PAGE, PROT_NONE);
	smem = smem_region + body - (smem_size + 127) / 128 * 128;
}

} // namespace emu

using namespace emu;

int emu_launch(const emu_launch_cfg *c, void **args)
{
	cfg = c;
	kargs = args;
	problems = 0;
	epoch = 0;
	anchor = nullptr;
	block_dim = dim3{c->block[0], c->block[1], c->block[2]};
	grid_dim = dim3{c->grid[0], c->grid[1], c->grid[2]};
	nthreads = (int)(c->block[0] * c->block[1] * c->block[2]);
	if (nthreads <= 0 || nthreads > 1024)
		fatal(nullptr, 0, "a block of %d threads", nthreads);
	smem_size = c->smem;
	fibers.assign((size_t)nthreads, Fiber{});
	warps.assign((size_t)(nthreads + 31) / 32, Warp{});
	map_memory();
	catch_faults();
	uint64_t rng = c->seed;
	for (unsigned z = 0; z < c->grid[2]; z++)
		for (unsigned y = 0; y < c->grid[1]; y++)
			for (unsigned x = 0; x < c->grid[0]; x++) {
				block_idx = uint3{x, y, z};
				run_block(&rng);
			}
	if (problems > 1)
		fprintf(stderr, "emu: %d problems in all (the first of each kind shown)\n", problems);
	munmap(stacks, stacks_len);
	munmap(smem_region, smem_region_len);
	return problems;
}
