/*
 * occupancy.c - theoretical occupancy of one kernel launch, without a GPU.
 *
 * Owns the per-architecture SM limits table (kb_compile_arch_limits) and
 * kb_compile_occupancy, which turns (regs/thread, static smem, dynamic
 * smem, barriers, block size) into blocks per SM, the binding limit and one
 * sentence saying why.  The arch-name parser is the spec's (spec/spec.c,
 * `//! arch`).  It does not read logs or cubins (resources.c, cubin.c do)
 * and it never asks a driver: the numbers are the published ones, and the
 * device's own attributes, where a GPU is at hand, are the runner's
 * business.
 *
 * The arithmetic is the one CUDA's cuda_occupancy.h implements (gpu-apis.md
 * §7.3); tests/unit/test_compile_occupancy.c sweeps thousands of launches
 * against that header.  Invariants:
 *   - every limit is a block count; a limit that does not apply is NA (-1) in
 *     kb_occupancy.limit_blocks and "infinite" in the min;
 *   - a valid launch always fits at least one block (the table guarantees
 *     smem_per_sm >= opt-in + reservation and regs_per_block == regs_per_sm);
 *   - the limiter is the first limit, in the order warps, registers, shared
 *     memory, block slots, barriers, whose count equals the minimum.  Warps
 *     come first because a warp-bound launch is already at the ceiling its
 *     block size allows, so no resource hint could help; block slots come
 *     before barriers because on sm_120 one barrier per block ties with the
 *     slot limit on every launch.  Other limits that tie are named in `why`.
 */
#include "compile.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define NA (-1)
#define KIB 1024

/* ===== The limits table ===== */

/*
 * Sources, per column:
 *  - warps/SM, blocks/SM, regs/SM, regs/block, regs/thread, smem/SM, smem
 *    opt-in/block: CUDA C++ Programming Guide, "Technical Specifications per
 *    Compute Capability" (also NVIDIA CCCL cuda/__device/arch_traits.h, which
 *    encodes that table: opt-in = smem/SM - reservation).
 *  - reservation 1 KiB on sm_80+, 0 on sm_75: the guide's "shared memory
 *    reserved by the system per block" and CU_DEVICE_ATTRIBUTE_RESERVED_
 *    SHARED_MEMORY_PER_BLOCK (cuda_occupancy.h adds it from major 8 on).
 *  - register allocation 256 regs per warp, 4 sub-partitions; shared memory
 *    allocation unit 128 B (256 B on sm_7x); carveout steps; barrier pool =
 *    2 x blocks/SM on sm_90/sm_10x, 1 x on sm_12x: cuda_occupancy.h (CUDA
 *    13.0), which models barriers only from sm_90 on (0 below: not modelled).
 *  - sm_120 blocks/SM: the guide's 12.x column (and CCCL) say 32, but
 *    cuda_occupancy.h says 24, and the driver reports
 *    MAX_BLOCKS_PER_MULTIPROCESSOR = 24 on a GB10 (12.1).  We use 24, what the
 *    hardware says; see the test for the note.
 *  - SM counts: the reference part's spec sheet / deviceQuery.
 */
static const kb_arch_limits arch_table[] = {
	{75, "sm_75", 32, 16, 1024, 65536, 65536, 255, 256, 64 * KIB, 64 * KIB, 0, 256,
	 72, "Quadro RTX 6000 / Titan RTX (TU102)", 4, 0, 2, {32, 64}},
	{80, "sm_80", 64, 32, 1024, 65536, 65536, 255, 256, 164 * KIB, 163 * KIB, KIB, 128,
	 108, "A100", 4, 0, 8, {0, 8, 16, 32, 64, 100, 132, 164}},
	{86, "sm_86", 48, 16, 1024, 65536, 65536, 255, 256, 100 * KIB, 99 * KIB, KIB, 128,
	 82, "RTX 3090", 4, 0, 6, {0, 8, 16, 32, 64, 100}},
	{87, "sm_87", 48, 16, 1024, 65536, 65536, 255, 256, 164 * KIB, 163 * KIB, KIB, 128,
	 16, "Jetson AGX Orin 64GB", 4, 0, 8, {0, 8, 16, 32, 64, 100, 132, 164}},
	{89, "sm_89", 48, 24, 1024, 65536, 65536, 255, 256, 100 * KIB, 99 * KIB, KIB, 128,
	 128, "RTX 4090", 4, 0, 6, {0, 8, 16, 32, 64, 100}},
	{90, "sm_90", 64, 32, 1024, 65536, 65536, 255, 256, 228 * KIB, 227 * KIB, KIB, 128,
	 132, "H100 SXM5 / H200", 4, 64, 10, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}},
	{100, "sm_100", 64, 32, 1024, 65536, 65536, 255, 256, 228 * KIB, 227 * KIB, KIB, 128,
	 148, "B200", 4, 64, 10, {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}},
	{103, "sm_103", 64, 32, 1024, 65536, 65536, 255, 256, 228 * KIB, 227 * KIB, KIB, 128,
	 0, "B300 (SM count not confirmed)", 4, 64, 10,
	 {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}},
	{120, "sm_120", 48, 24, 1024, 65536, 65536, 255, 256, 100 * KIB, 99 * KIB, KIB, 128,
	 170, "RTX 5090", 4, 24, 6, {0, 8, 16, 32, 64, 100}},
};

/* The table row for sm, or NULL when unknown. */
const kb_arch_limits *kb_compile_arch_limits(int sm)
{
	for (size_t i = 0; i < KB_ARRAY_LEN(arch_table); i++)
		if (arch_table[i].sm == sm)
			return &arch_table[i];
	return NULL;
}

/* A human name ("registers", "shared memory", ...), never NULL. */
const char *kb_limit_name(kb_limit l)
{
	switch (l) {
	case KB_LIMIT_NONE: return "none";
	case KB_LIMIT_WARPS: return "warps";
	case KB_LIMIT_REGS: return "registers";
	case KB_LIMIT_SMEM: return "shared memory";
	case KB_LIMIT_BLOCKS: return "block slots";
	case KB_LIMIT_BARRIERS: return "barriers";
	case KB_LIMIT_INVALID: return "invalid";
	}
	return "?";
}

/* ===== The limits, one function each ===== */

static int round_up(int x, int unit)
{
	return (x + unit - 1) / unit * unit;
}

static int warps_per_block(int threads)
{
	return (threads + 31) / 32;
}

/* Registers one warp is given: regs/thread x 32, rounded to the unit. */
static int regs_per_warp(const kb_arch_limits *a, int regs)
{
	return round_up(regs * 32, a->reg_alloc_unit);
}

/* Blocks the register file holds: it is split into sub-partitions, each
 * holding whole warps.  INT_MAX when the kernel uses no registers. */
static int regs_limit(const kb_arch_limits *a, int regs, int warps)
{
	int rw = regs_per_warp(a, regs);
	if (rw == 0)
		return INT_MAX;
	int per_sub = a->regs_per_sm / a->reg_subpartitions / rw;
	return per_sub * a->reg_subpartitions / warps;
}

/* Shared memory one block is given: static + dynamic + reservation, rounded. */
static int smem_alloc(const kb_arch_limits *a, int smem)
{
	return round_up(smem + a->smem_reserved_per_block, a->smem_alloc_unit);
}

/* The SM's shared memory for a block of `alloc` bytes: the preferred carveout
 * (pref_kib < 0: the default, the largest) rounded up to a supported step, or,
 * if one block does not fit in that, the smallest step that holds one. */
static int smem_per_sm(const kb_arch_limits *a, int alloc, int pref_kib)
{
	int want = pref_kib < 0 ? a->smem_per_sm : pref_kib * KIB;
	if (want < alloc)
		want = alloc;
	for (int i = 0; i < a->ncarveouts; i++)
		if (a->carveout_kib[i] * KIB >= want)
			return a->carveout_kib[i] * KIB;
	return a->smem_per_sm;
}

static int smem_limit(const kb_arch_limits *a, int smem)
{
	int alloc = smem_alloc(a, smem);
	if (alloc == 0)
		return INT_MAX;
	return smem_per_sm(a, alloc, -1) / alloc;
}

static int barriers_limit(const kb_arch_limits *a, int barriers)
{
	if (a->barriers_per_sm <= 0 || barriers <= 0)
		return INT_MAX;
	return a->barriers_per_sm / barriers;
}

/* ===== Validity ===== */

/* Fills why and returns false when the launch cannot run at all. */
static bool launch_valid(const kb_arch_limits *a, const kb_resources *r, int threads,
			 int smem, char *why, size_t n)
{
	int w = warps_per_block(threads > 0 ? threads : 1);
	if (threads <= 0 || threads > a->max_threads_per_block) {
		snprintf(why, n, "a block of %d threads is outside 1..%d, the limit of %s", threads,
			 a->max_threads_per_block, a->name);
	} else if (r->max_threads > 0 && threads > r->max_threads) {
		snprintf(why, n, "a block of %d threads exceeds the kernel's own limit of %d "
			 "(__launch_bounds__/.maxntid)", threads, r->max_threads);
	} else if (r->regs < 0 || r->regs > a->max_regs_per_thread) {
		snprintf(why, n, "%d regs/thread is outside 0..%d, the limit of %s", r->regs,
			 a->max_regs_per_thread, a->name);
	} else if ((long)regs_per_warp(a, r->regs) * round_up(w, a->reg_subpartitions) >
		   a->regs_per_block) {
		snprintf(why, n, "%d regs/thread x %d threads need %ld registers (checked as %d "
			 "warps x %d), more than the %d a block may have", r->regs, threads,
			 (long)regs_per_warp(a, r->regs) * round_up(w, a->reg_subpartitions),
			 round_up(w, a->reg_subpartitions), regs_per_warp(a, r->regs),
			 a->regs_per_block);
	} else if (r->smem_static < 0 || smem < r->smem_static ||
		   smem > a->smem_per_block_optin) {
		snprintf(why, n, "%.1f KiB of shared memory per block exceeds the %d KiB opt-in "
			 "limit of %s", smem / 1024.0, a->smem_per_block_optin / KIB, a->name);
	} else {
		return true;
	}
	return false;
}

/* ===== The sentence ===== */

static const kb_limit tie_order[] = {
	KB_LIMIT_WARPS, KB_LIMIT_REGS, KB_LIMIT_SMEM, KB_LIMIT_BLOCKS, KB_LIMIT_BARRIERS,
};

/* The smallest limit other than `skip` (INT_MAX if none applies). */
static int min_other(const int *lim, kb_limit skip)
{
	int m = INT_MAX;
	for (size_t i = 0; i < KB_ARRAY_LEN(tie_order); i++) {
		int v = lim[tie_order[i]];
		if (tie_order[i] != skip && v != NA && v < m)
			m = v;
	}
	return m;
}

/* The largest regs/thread below r whose register limit reaches `blocks`, or 0. */
static int regs_for(const kb_arch_limits *a, int r, int warps, int blocks)
{
	for (int x = r - 1; x >= 1; x--)
		if (regs_limit(a, x, warps) >= blocks)
			return x;
	return 0;
}

static void why_regs(const kb_arch_limits *a, const kb_resources *r, int threads,
		     const int *lim, kb_buf *b)
{
	int blocks = lim[KB_LIMIT_REGS];
	kb_buf_catf(b, "registers bind: %d regs/thread x %d threads allow %d block%s", r->regs,
		    threads, blocks, blocks == 1 ? "" : "s");
	int x = regs_for(a, r->regs, warps_per_block(threads), blocks + 1);
	if (x > 0 && min_other(lim, KB_LIMIT_REGS) > blocks)
		kb_buf_catf(b, "; <= %d regs/thread would allow %d", x, blocks + 1);
}

static void why_smem(const kb_arch_limits *a, int smem, const int *lim, kb_buf *b)
{
	int blocks = lim[KB_LIMIT_SMEM];
	int sm = smem_per_sm(a, smem_alloc(a, smem), -1);
	kb_buf_catf(b, "shared memory binds: %.1f KiB/block", smem / 1024.0);
	if (a->smem_reserved_per_block)
		kb_buf_catf(b, " (+%d KiB reserved)", a->smem_reserved_per_block / KIB);
	kb_buf_catf(b, " of %d KiB/SM allows %d block%s", sm / KIB, blocks,
		    blocks == 1 ? "" : "s");
	int fit = sm / (blocks + 1) / a->smem_alloc_unit * a->smem_alloc_unit -
		  a->smem_reserved_per_block;
	if (fit >= 0 && min_other(lim, KB_LIMIT_SMEM) > blocks)
		kb_buf_catf(b, "; <= %.1f KiB would allow %d", fit / 1024.0, blocks + 1);
}

static void why_warps(const kb_arch_limits *a, int threads, const int *lim, kb_buf *b)
{
	int w = warps_per_block(threads), blocks = lim[KB_LIMIT_WARPS];
	kb_buf_catf(b, "warps bind: %d threads = %d warp%s/block; %d warps/SM hold %d block%s "
		    "(%d warps, %.1f%%)", threads, w, w == 1 ? "" : "s", a->max_warps_per_sm,
		    blocks, blocks == 1 ? "" : "s", blocks * w,
		    100.0 * blocks * w / a->max_warps_per_sm);
	if (blocks * w < a->max_warps_per_sm)
		kb_buf_catf(b, "; a block size whose warps divide %d would fill the SM",
			    a->max_warps_per_sm);
}

static void why_blocks(const kb_arch_limits *a, int threads, const int *lim, kb_buf *b)
{
	int w = warps_per_block(threads), blocks = lim[KB_LIMIT_BLOCKS];
	kb_buf_catf(b, "block slots bind: at most %d blocks/SM x %d warp%s = %d of %d warps "
		    "(%.1f%%); larger blocks would raise occupancy", blocks, w, w == 1 ? "" : "s",
		    blocks * w, a->max_warps_per_sm, 100.0 * blocks * w / a->max_warps_per_sm);
}

static void why_barriers(const kb_arch_limits *a, const kb_resources *r, const int *lim,
			 kb_buf *b)
{
	int blocks = lim[KB_LIMIT_BARRIERS];
	kb_buf_catf(b, "barriers bind: %d barriers/block of %d/SM allow %d block%s", r->barriers,
		    a->barriers_per_sm, blocks, blocks == 1 ? "" : "s");
	if (r->barriers > 1 && min_other(lim, KB_LIMIT_BARRIERS) > blocks)
		kb_buf_catf(b, "; %d would allow %d", r->barriers - 1,
			    a->barriers_per_sm / (r->barriers - 1));
}

/* Names the other limits that allow exactly as many blocks as the limiter. */
static void why_ties(const kb_occupancy *o, kb_buf *b)
{
	int n = 0;
	for (size_t i = 0; i < KB_ARRAY_LEN(tie_order); i++) {
		kb_limit l = tie_order[i];
		if (l == o->limiter || o->limit_blocks[l] != o->blocks_per_sm)
			continue;
		kb_buf_catf(b, "%s%s", n++ ? ", " : " (also at this count: ", kb_limit_name(l));
	}
	if (n)
		kb_buf_cat(b, ")");
}

static void explain(const kb_arch_limits *a, const kb_resources *r, int threads, int smem,
		    kb_occupancy *o)
{
	kb_buf b = KB_BUF_INIT;
	switch (o->limiter) {
	case KB_LIMIT_REGS: why_regs(a, r, threads, o->limit_blocks, &b); break;
	case KB_LIMIT_SMEM: why_smem(a, smem, o->limit_blocks, &b); break;
	case KB_LIMIT_WARPS: why_warps(a, threads, o->limit_blocks, &b); break;
	case KB_LIMIT_BLOCKS: why_blocks(a, threads, o->limit_blocks, &b); break;
	case KB_LIMIT_BARRIERS: why_barriers(a, r, o->limit_blocks, &b); break;
	default: KB_UNREACHABLE();
	}
	why_ties(o, &b);
	snprintf(o->why, sizeof(o->why), "%s", b.s);
	kb_buf_free(&b);
}

/* ===== The calculator ===== */

static int as_limit(int v)
{
	return v == INT_MAX ? NA : v;
}

/* Fills the per-limit block counts, the min and the limiter. */
static void compute(const kb_arch_limits *a, const kb_resources *r, int threads, int smem,
		    kb_occupancy *o)
{
	int w = warps_per_block(threads);
	o->limit_blocks[KB_LIMIT_WARPS] = a->max_warps_per_sm / w;
	o->limit_blocks[KB_LIMIT_REGS] = as_limit(regs_limit(a, r->regs, w));
	o->limit_blocks[KB_LIMIT_SMEM] = as_limit(smem_limit(a, smem));
	o->limit_blocks[KB_LIMIT_BLOCKS] = a->max_blocks_per_sm;
	o->limit_blocks[KB_LIMIT_BARRIERS] = as_limit(barriers_limit(a, r->barriers));
	o->blocks_per_sm = min_other(o->limit_blocks, KB_LIMIT_NONE);
	for (size_t i = 0; i < KB_ARRAY_LEN(tie_order); i++) {
		if (o->limit_blocks[tie_order[i]] == o->blocks_per_sm) {
			o->limiter = tie_order[i];
			break;
		}
	}
	o->warps_per_sm = o->blocks_per_sm * w;
	o->occupancy = (double)o->warps_per_sm / a->max_warps_per_sm;
	o->regs_per_block = regs_per_warp(a, r->regs) * w;
	o->smem_per_block = smem_alloc(a, smem);
}

/* Fills out; 0, or KB_EINVAL with limiter KB_LIMIT_INVALID and why. */
int kb_compile_occupancy(const kb_arch_limits *arch, const kb_resources *res,
			 int block_threads, int dyn_smem, kb_occupancy *out)
{
	if (!out)
		return KB_EINVAL;
	memset(out, 0, sizeof(*out));
	for (int i = 0; i <= KB_LIMIT_INVALID; i++)
		out->limit_blocks[i] = NA;
	out->block_threads = block_threads;
	out->dyn_smem = dyn_smem;
	out->limiter = KB_LIMIT_INVALID;
	if (!arch || !res) {
		snprintf(out->why, sizeof(out->why), "no architecture limits or resources given");
		return KB_EINVAL;
	}
	out->max_warps_per_sm = arch->max_warps_per_sm;
	long smem = (long)res->smem_static + (dyn_smem > 0 ? dyn_smem : 0);
	if (dyn_smem < 0 || smem > INT_MAX / 2) {
		snprintf(out->why, sizeof(out->why), "dynamic shared memory of %d bytes is invalid",
			 dyn_smem);
		return KB_EINVAL;
	}
	if (!launch_valid(arch, res, block_threads, (int)smem, out->why, sizeof(out->why)))
		return KB_EINVAL;
	compute(arch, res, block_threads, (int)smem, out);
	if (out->blocks_per_sm <= 0) { /* the table guarantees otherwise; be safe */
		out->limiter = KB_LIMIT_INVALID;
		snprintf(out->why, sizeof(out->why), "no block fits on an SM of %s", arch->name);
		return KB_EINVAL;
	}
	explain(arch, res, block_threads, (int)smem, out);
	return 0;
}
