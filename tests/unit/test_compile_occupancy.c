/* test_compile_occupancy.c - the arch table, arch names, hand-worked
 * occupancy cases and a sweep against CUDA's own cuda_occupancy.h.
 *
 * Notes on the reference header (CUDA 13.0):
 *  - its structs must not be left all-zero: cudaOccDeviceState.carveoutConfig
 *    = 0 means SHAREDMEM_CARVEOUT_MAX_L1 (prefer L1), which lets any block that
 *    uses shared memory run alone on the SM.  The default is -1.
 *  - it allows 256 regs/thread from sm_70 on; the guide and ptxas say 255,
 *    so the sweep stops at 255.
 *  - for sm_12x it hard-codes 24 blocks/SM while the Programming Guide's 12.x
 *    column (and CCCL's arch_traits.h) say 32; the driver on a GB10 (12.1)
 *    reports MAX_BLOCKS_PER_MULTIPROCESSOR = 24, so our table says 24 and the
 *    sweep agrees with the header for sm_120 too.
 */
#include "../../src/compile/compile.h"
#include "t.h"

#include <cuda_occupancy.h>

static kb_resources res(int regs, int smem_static, int barriers)
{
	kb_resources r = {0};
	r.regs = regs;
	r.smem_static = smem_static;
	r.barriers = barriers;
	r.max_threads = 1024;
	r.cmem0 = -1;
	return r;
}

/* Runs one case; checks blocks, limiter and occupancy. */
static void occ_case(int sm, int regs, int threads, int dyn, int barriers, int blocks,
		     kb_limit limiter, double occ, kb_occupancy *o)
{
	const kb_arch_limits *a = kb_compile_arch_limits(sm);
	kb_resources r = res(regs, 0, barriers);
	T_OK(a != NULL);
	if (!a)
		return;
	T_EQ_INT(kb_compile_occupancy(a, &r, threads, dyn, o), 0);
	T_EQ_INT(o->blocks_per_sm, blocks);
	T_EQ_STR(kb_limit_name(o->limiter), kb_limit_name(limiter));
	T_NEAR(o->occupancy, occ, 1e-9);
}

static void test_compile_occupancy__arch_parse(void)
{
	int sm = 0;
	T_EQ_INT(kb_compile_arch_parse("sm_90", &sm), 0); T_EQ_INT(sm, 90);
	T_EQ_INT(kb_compile_arch_parse("sm_90a", &sm), 0); T_EQ_INT(sm, 90);
	T_EQ_INT(kb_compile_arch_parse("compute_90", &sm), 0); T_EQ_INT(sm, 90);
	T_EQ_INT(kb_compile_arch_parse("90", &sm), 0); T_EQ_INT(sm, 90);
	T_EQ_INT(kb_compile_arch_parse("sm_100f", &sm), 0); T_EQ_INT(sm, 100);
	T_EQ_INT(kb_compile_arch_parse("sm_120a", &sm), 0); T_EQ_INT(sm, 120);
	T_EQ_INT(kb_compile_arch_parse("compute_75", &sm), 0); T_EQ_INT(sm, 75);
	const char *bad[] = {"", "sm_", "sm_9", "sm_90b", "sm_90aa", "gfx90a", "sm90",
			     "sm_ 90", "sm_90 ", "123456", "-90"};
	for (size_t i = 0; i < KB_ARRAY_LEN(bad); i++)
		T_EQ_INT(kb_compile_arch_parse(bad[i], &sm), KB_EINVAL);
	T_EQ_INT(kb_compile_arch_parse(NULL, &sm), KB_EINVAL);
}

static void test_compile_occupancy__table(void)
{
	static const int sms[] = {75, 80, 86, 87, 89, 90, 100, 103, 120};
	for (size_t i = 0; i < KB_ARRAY_LEN(sms); i++) {
		const kb_arch_limits *a = kb_compile_arch_limits(sms[i]);
		T_OK(a != NULL);
		if (!a)
			continue;
		T_EQ_INT(a->sm, sms[i]);
		/* One block of the largest opt-in size always fits in the SM. */
		T_OK(a->smem_per_block_optin + a->smem_reserved_per_block <= a->smem_per_sm);
		T_EQ_INT(a->carveout_kib[a->ncarveouts - 1] * 1024, a->smem_per_sm);
		T_EQ_INT(a->regs_per_block, a->regs_per_sm);
	}
	T_OK(kb_compile_arch_limits(91) == NULL);
	const kb_arch_limits *h = kb_compile_arch_limits(90);
	T_EQ_INT(h->smem_per_sm, 233472);
	T_EQ_INT(h->smem_per_block_optin, 232448);
	T_EQ_INT(h->sm_count, 132);
	T_EQ_INT(kb_compile_arch_limits(80)->sm_count, 108);
	T_EQ_INT(kb_compile_arch_limits(89)->sm_count, 128);
	T_EQ_INT(kb_compile_arch_limits(100)->sm_count, 148);
	T_EQ_INT(kb_compile_arch_limits(120)->sm_count, 170);
	T_EQ_STR(kb_limit_name(KB_LIMIT_REGS), "registers");
	T_EQ_STR(kb_limit_name(KB_LIMIT_INVALID), "invalid");
}

/*
 * sm_90, 256 threads = 8 warps/block, 16 KiB dynamic smem (gpu-apis.md §7.3):
 *   warps:  64 / 8 = 8 blocks
 *   smem:   16384 + 1024 reserved = 17408 (a multiple of 128); 233472 / 17408 = 13
 *   slots:  32
 *   regs:   per warp Rw = roundup(regs x 32, 256); per sub-partition 16384 / Rw
 *           warps; x 4 sub-partitions / 8 warps per block:
 *     32 -> Rw 1024, 16 warps/sub, 64/8 = 8 blocks  (ties warps: warps bind) 100%
 *     40 -> Rw 1280, 12, 48/8 = 6 (75%); 7 blocks need 56 warps = 14/sub, so
 *           Rw <= 1170 -> 1024 -> <= 32 regs
 *     64 -> Rw 2048,  8, 32/8 = 4 (50%); 5 blocks need 10/sub: Rw <= 1638 ->
 *           1536 -> <= 48 regs (not 56: 56 x 32 = 1792, 16384/1792 = 9, 36/8 = 4)
 *     72 -> Rw 2304,  7, 28/8 = 3 (37.5%)
 *    128 -> Rw 4096,  4, 16/8 = 2 (25%)
 *    168 -> Rw 5376,  3, 12/8 = 1 (12.5%)
 *    255 -> Rw 8160 -> 8192, 2, 8/8 = 1; the block check 8192 x 8 = 65536 passes
 */
static void test_compile_occupancy__sm90_registers(void)
{
	kb_occupancy o;
	occ_case(90, 32, 256, 16384, 1, 8, KB_LIMIT_WARPS, 1.0, &o);
	T_EQ_INT(o.limit_blocks[KB_LIMIT_REGS], 8);
	T_EQ_INT(o.limit_blocks[KB_LIMIT_SMEM], 13);
	T_EQ_INT(o.limit_blocks[KB_LIMIT_BLOCKS], 32);
	T_EQ_INT(o.limit_blocks[KB_LIMIT_BARRIERS], 64);
	T_EQ_INT(o.smem_per_block, 17408);
	T_EQ_INT(o.regs_per_block, 8192);
	T_EQ_INT(o.warps_per_sm, 64);
	T_CONTAINS(o.why, "warps bind");
	T_CONTAINS(o.why, "also at this count: registers");
	occ_case(90, 40, 256, 16384, 1, 6, KB_LIMIT_REGS, 0.75, &o);
	T_CONTAINS(o.why, "<= 32 regs/thread would allow 7");
	occ_case(90, 64, 256, 16384, 1, 4, KB_LIMIT_REGS, 0.5, &o);
	T_EQ_STR(o.why, "registers bind: 64 regs/thread x 256 threads allow 4 blocks; "
			"<= 48 regs/thread would allow 5");
	occ_case(90, 72, 256, 16384, 1, 3, KB_LIMIT_REGS, 0.375, &o);
	occ_case(90, 128, 256, 16384, 1, 2, KB_LIMIT_REGS, 0.25, &o);
	occ_case(90, 168, 256, 16384, 1, 1, KB_LIMIT_REGS, 0.125, &o);
	occ_case(90, 255, 256, 16384, 1, 1, KB_LIMIT_REGS, 0.125, &o);
}

/*
 * Shared memory binds, sm_90, 128 threads (4 warps), 32 regs, 48 KiB dynamic:
 *   alloc 49152 + 1024 = 50176; 233472 / 50176 = 4 (4.65); warps 16, regs 16.
 *   4 blocks x 4 warps = 16 of 64 = 25 %.  5 blocks: 233472 / 5 = 46694 ->
 *   46592 (multiple of 128) - 1024 = 45568 B = 44.5 KiB.
 * sm_80, 128 threads, 40 KiB: 40960 + 1024 = 41984; 167936 / 41984 = 4 exactly.
 */
static void test_compile_occupancy__smem(void)
{
	kb_occupancy o;
	occ_case(90, 32, 128, 48 * 1024, 0, 4, KB_LIMIT_SMEM, 0.25, &o);
	T_EQ_INT(o.smem_per_block, 50176);
	T_EQ_STR(o.why, "shared memory binds: 48.0 KiB/block (+1 KiB reserved) of 228 KiB/SM "
			"allows 4 blocks; <= 44.5 KiB would allow 5");
	occ_case(80, 32, 128, 40 * 1024, 0, 4, KB_LIMIT_SMEM, 0.25, &o);
	T_EQ_INT(o.limit_blocks[KB_LIMIT_BARRIERS], -1); /* not modelled before sm_90 */
	/* Static + dynamic add up: 16 KiB static + 32 KiB dynamic = the 48 KiB above. */
	const kb_arch_limits *h = kb_compile_arch_limits(90);
	kb_resources r = res(32, 16384, 0);
	T_EQ_INT(kb_compile_occupancy(h, &r, 128, 32768, &o), 0);
	T_EQ_INT(o.blocks_per_sm, 4);
	/* The largest opt-in block: 227 KiB + 1 KiB = 228 KiB, one per SM. */
	occ_case(90, 32, 128, 227 * 1024, 0, 1, KB_LIMIT_SMEM, 4.0 / 64, &o);
}

/*
 * Warps bind: sm_90, 384 threads = 12 warps, 32 regs, no smem:
 *   warps 64/12 = 5; regs 64/12 = 5 (tie); smem (0 + 1024) -> 228; slots 32.
 *   5 x 12 = 60 warps = 93.75 %.
 * Block slots bind: sm_90, 32 threads = 1 warp, 16 regs: warps 64, regs
 *   Rw 512 -> 32/sub -> 128, slots 32 -> 32 blocks = 32 warps = 50 %.
 * Barriers bind: same with 3 barriers/block: 64 / 3 = 21 blocks = 32.8 %.
 */
static void test_compile_occupancy__warps_slots_barriers(void)
{
	kb_occupancy o;
	occ_case(90, 32, 384, 0, 0, 5, KB_LIMIT_WARPS, 60.0 / 64, &o);
	T_CONTAINS(o.why, "93.8%");
	occ_case(90, 16, 32, 0, 1, 32, KB_LIMIT_BLOCKS, 0.5, &o);
	T_CONTAINS(o.why, "block slots bind: at most 32 blocks/SM");
	occ_case(90, 16, 32, 0, 3, 21, KB_LIMIT_BARRIERS, 21.0 / 64, &o);
	T_EQ_STR(o.why, "barriers bind: 3 barriers/block of 64/SM allow 21 blocks; "
			"2 would allow 32");
	/* sm_120: one barrier per block ties the 24 slots; slots are reported. */
	occ_case(120, 16, 32, 0, 1, 24, KB_LIMIT_BLOCKS, 24.0 / 48, &o);
	T_CONTAINS(o.why, "also at this count: barriers");
}

/*
 * Consumer parts (48 warps/SM):
 *   sm_86, 256 threads (8 warps), 64 regs: warps 48/8 = 6; regs Rw 2048 ->
 *     8/sub -> 32 warps / 8 = 4; slots 16; smem 1024 -> 100.  4 x 8 = 32/48.
 *   sm_89, 128 threads (4 warps), 32 regs: warps 12, regs 64/4 = 16, slots 24
 *     -> 12 blocks = 48 warps = 100 %.
 *   sm_89, 64 threads (2 warps), 16 regs: warps 24, slots 24 (tie: warps
 *     reported), regs 128/2 = 64 -> 24 blocks = 100 %.
 *   sm_86, 64 threads, 16 regs: slots 16 < warps 24 -> 16 x 2 = 32/48.
 *   sm_75, 1024 threads (32 warps), 32 regs: warps 32/32 = 1, regs 64/32 = 2
 *     -> 1 block = 100 %.
 */
static void test_compile_occupancy__consumer(void)
{
	kb_occupancy o;
	occ_case(86, 64, 256, 0, 1, 4, KB_LIMIT_REGS, 32.0 / 48, &o);
	occ_case(89, 32, 128, 0, 1, 12, KB_LIMIT_WARPS, 1.0, &o);
	occ_case(89, 16, 64, 0, 1, 24, KB_LIMIT_WARPS, 1.0, &o);
	T_CONTAINS(o.why, "also at this count: block slots");
	occ_case(86, 16, 64, 0, 1, 16, KB_LIMIT_BLOCKS, 32.0 / 48, &o);
	occ_case(75, 32, 1024, 0, 1, 1, KB_LIMIT_WARPS, 1.0, &o);
	/* sm_75 has no reservation and a 256-byte unit: 100 B -> 256 B. */
	occ_case(75, 32, 32, 100, 0, 16, KB_LIMIT_BLOCKS, 0.5, &o);
	T_EQ_INT(o.smem_per_block, 256);
}

static void test_compile_occupancy__invalid(void)
{
	const kb_arch_limits *h = kb_compile_arch_limits(90);
	kb_occupancy o;
	kb_resources r = res(32, 0, 0);
	T_EQ_INT(kb_compile_occupancy(h, &r, 2048, 0, &o), KB_EINVAL);
	T_EQ_INT(o.limiter, KB_LIMIT_INVALID);
	T_EQ_INT(o.blocks_per_sm, 0);
	T_CONTAINS(o.why, "2048 threads");
	T_EQ_INT(kb_compile_occupancy(h, &r, 0, 0, &o), KB_EINVAL);
	T_EQ_INT(kb_compile_occupancy(h, &r, 128, 228 * 1024, &o), KB_EINVAL);
	T_CONTAINS(o.why, "227 KiB opt-in");
	T_EQ_INT(kb_compile_occupancy(h, &r, 128, -1, &o), KB_EINVAL);
	r.regs = 256;
	T_EQ_INT(kb_compile_occupancy(h, &r, 128, 0, &o), KB_EINVAL);
	T_CONTAINS(o.why, "256 regs/thread");
	/* 72 regs x 1024 threads: 2304 x 32 warps = 73728 > 65536. */
	r.regs = 72;
	T_EQ_INT(kb_compile_occupancy(h, &r, 1024, 0, &o), KB_EINVAL);
	T_CONTAINS(o.why, "73728 registers");
	r.regs = 64; /* 2048 x 32 = 65536 fits exactly */
	T_EQ_INT(kb_compile_occupancy(h, &r, 1024, 0, &o), 0);
	T_EQ_INT(o.blocks_per_sm, 1);
	/* __launch_bounds__(256) */
	r.max_threads = 256;
	T_EQ_INT(kb_compile_occupancy(h, &r, 512, 0, &o), KB_EINVAL);
	T_CONTAINS(o.why, "__launch_bounds__");
	T_EQ_INT(kb_compile_occupancy(NULL, &r, 512, 0, &o), KB_EINVAL);
	T_EQ_INT(kb_compile_occupancy(h, NULL, 512, 0, &o), KB_EINVAL);
	T_EQ_INT(kb_compile_occupancy(h, &r, 128, 0, NULL), KB_EINVAL);
}

/* ===== The sweep against cuda_occupancy.h ===== */

static void occ_props(const kb_arch_limits *a, cudaOccDeviceProp *p, cudaOccDeviceState *s)
{
	memset(p, 0, sizeof(*p));
	memset(s, 0, sizeof(*s));
	p->computeMajor = a->sm / 10;
	p->computeMinor = a->sm % 10;
	p->maxThreadsPerBlock = a->max_threads_per_block;
	p->maxThreadsPerMultiprocessor = a->max_warps_per_sm * 32;
	p->regsPerBlock = a->regs_per_block;
	p->regsPerMultiprocessor = a->regs_per_sm;
	p->warpSize = 32;
	p->sharedMemPerBlock = 48 * 1024;
	p->sharedMemPerMultiprocessor = (size_t)a->smem_per_sm;
	p->numSms = a->sm_count > 0 ? a->sm_count : 1;
	p->sharedMemPerBlockOptin = (size_t)a->smem_per_block_optin;
	p->reservedSharedMemPerBlock = (size_t)a->smem_reserved_per_block;
	s->cacheConfig = CACHE_PREFER_NONE;
	s->carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT; /* not 0: that is MAX_L1 */
}

/* One launch through both; returns 1 on disagreement (printing the first few). */
static int sweep_one(const kb_arch_limits *a, const cudaOccDeviceProp *p,
		     const cudaOccDeviceState *s, const kb_resources *r, int threads, int dyn,
		     int *shown)
{
	cudaOccFuncAttributes fa;
	memset(&fa, 0, sizeof(fa));
	fa.maxThreadsPerBlock = 1024;
	fa.numRegs = r->regs;
	fa.sharedSizeBytes = (size_t)r->smem_static;
	fa.partitionedGCConfig = PARTITIONED_GC_OFF;
	fa.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
	fa.maxDynamicSharedSizeBytes = (size_t)dyn;
	fa.numBlockBarriers = r->barriers;
	cudaOccResult cr;
	memset(&cr, 0, sizeof(cr));
	if (cudaOccMaxActiveBlocksPerMultiprocessor(&cr, p, &fa, s, threads, (size_t)dyn) !=
	    CUDA_OCC_SUCCESS)
		cr.activeBlocksPerMultiprocessor = -100;
	kb_occupancy o;
	int rc = kb_compile_occupancy(a, r, threads, dyn, &o);
	int ours = rc == 0 ? o.blocks_per_sm : 0;
	int bad = ours != cr.activeBlocksPerMultiprocessor;
	if (!bad && rc == 0)
		bad = o.smem_per_block != (int)cr.allocatedSharedMemPerBlock ||
		      o.regs_per_block != cr.allocatedRegistersPerBlock ||
		      o.limit_blocks[KB_LIMIT_WARPS] != cr.blockLimitWarps ||
		      o.limit_blocks[KB_LIMIT_BLOCKS] != cr.blockLimitBlocks;
	if (bad && (*shown)++ < 5)
		printf("    %s regs=%d static=%d dyn=%d bar=%d threads=%d: ours %d (%s) "
		       "header %d (regs %d smem %d warps %d blocks %d bars %d)\n", a->name,
		       r->regs, r->smem_static, dyn, r->barriers, threads, ours, o.why,
		       cr.activeBlocksPerMultiprocessor, cr.blockLimitRegs,
		       cr.blockLimitSharedMem, cr.blockLimitWarps, cr.blockLimitBlocks,
		       cr.blockLimitBarriers);
	return bad;
}

static unsigned lcg(unsigned *st)
{
	*st = *st * 1664525u + 1013904223u;
	return *st >> 8;
}

/* Every arch x regs 8..255 x block 32..1024 step 32 x 10 shared-memory sizes
 * in 0..opt-in (static and dynamic mixed, plus sizes straddling the 128-byte
 * unit), barriers 0..4: about 700 000 launches. */
static void test_compile_occupancy__sweep_vs_cuda_occupancy_h(void)
{
	static const int sms[] = {75, 80, 86, 87, 89, 90, 100, 103, 120};
	unsigned st = 12345;
	long n = 0, bad = 0, invalid = 0;
	int shown = 0;
	for (size_t i = 0; i < KB_ARRAY_LEN(sms); i++) {
		const kb_arch_limits *a = kb_compile_arch_limits(sms[i]);
		cudaOccDeviceProp p;
		cudaOccDeviceState s;
		occ_props(a, &p, &s);
		for (int regs = 8; regs <= 255; regs++) {
			for (int threads = 32; threads <= 1024; threads += 32) {
				for (int k = 0; k < 10; k++) {
					int total = (int)(lcg(&st) % (unsigned)(a->smem_per_block_optin + 2048));
					if (k == 0)
						total = 0;
					else if (k == 1)
						total = (int)(lcg(&st) % 64) * 1024 + 1;
					int stat = (lcg(&st) & 1) ? (int)(lcg(&st) % 49153) : 0;
					if (stat > total)
						stat = total;
					kb_resources r = res(regs, stat, (int)(lcg(&st) % 5));
					bad += sweep_one(a, &p, &s, &r, threads, total - stat, &shown);
					kb_occupancy o;
					invalid += kb_compile_occupancy(a, &r, threads, total - stat, &o) != 0;
					n++;
				}
			}
		}
	}
	printf("  sweep: %ld launches, %ld invalid, %ld disagreements\n", n, invalid, bad);
	T_EQ_INT(bad, 0);
	T_OK(n > 500000);
	T_OK(invalid > 1000 && invalid < n / 2);
}

int main(void)
{
	T_RUN(test_compile_occupancy__arch_parse);
	T_RUN(test_compile_occupancy__table);
	T_RUN(test_compile_occupancy__sm90_registers);
	T_RUN(test_compile_occupancy__smem);
	T_RUN(test_compile_occupancy__warps_slots_barriers);
	T_RUN(test_compile_occupancy__consumer);
	T_RUN(test_compile_occupancy__invalid);
	T_RUN(test_compile_occupancy__sweep_vs_cuda_occupancy_h);
	return t_report();
}
