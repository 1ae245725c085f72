/*
 * mbar_emu.cpp - the emulator's mbarriers and the bulk copies that complete
 * on them (cp.async.bulk ... mbarrier::complete_tx::bytes), as the ring
 * kernels use them (softmax/09_ring.cu and its kin): a producer warp's
 * copies into slots, consumers waiting on a slot's barrier by phase parity.
 * Semantics from NVIDIA's PTX ISA (9.7.13.15 mbarrier: the pending arrival
 * count and transaction count of the current phase, which completes when
 * both reach zero, then starts the next with the count it was initialised
 * with; try_wait.parity P succeeds once the phase of parity P has completed,
 * so a fresh barrier's parity-1 wait succeeds at once; 9.7.9.25.4
 * cp.async.bulk), not from kbench.  The TMA loads of the wgmma lowering
 * (tma_emu.cpp) complete their bytes here too, at issue.
 *
 * A barrier's state lives here, keyed by its shared address (the dynamic
 * shared memory, or a static __shared__ variable's handle), and is cleared
 * at each block's start: an arrival or wait on one that was not initialised
 * in this block is fatal, and so are more arrivals than a phase expects.
 * A bulk copy lands (its bytes written, its transaction bytes completed)
 * at the first wait on its barrier, the latest legal moment (or at issue
 * with --copies issue): a consumer that reads a slot before its wait reads
 * the block-start NaNs.
 *
 * A completed phase orders shared memory (cuda_emu.cpp's shadow) as a
 * named barrier does: a producer's cp.async into a slot its consumers
 * handed back on an empty barrier is no race.
 *
 * Does not: model the cluster (one block: shared::cluster is this block's),
 * timing, or the order of copies beyond that.
 */
#include "cuda_emu_int.h"

#include <map>
#include <vector>

namespace emu {

struct Landing {
	uint64_t dst, src;
	long long bytes;
	const char *file;
	int line;
};

struct Mbar {
	long long count, pending, tx;
	unsigned phase;            /* phases completed */
	std::vector<Landing> copies;  /* issued, not landed */
};

static std::map<uint64_t, Mbar> bars;

void mbar_reset() { bars.clear(); }

static Mbar &bar_at(uint64_t a, const char *what, const char *file, int line)
{
	shared_at(a, 8, what, file, line);
	auto it = bars.find(a);
	if (it == bars.end())
		fatal(file, line, "%s on shared 0x%llx, no mbarrier initialised in this block", what,
		      (unsigned long long)a);
	return it->second;
}

static void complete(Mbar &m)
{
	if (m.pending == 0 && m.tx == 0) {
		m.phase++;
		m.pending = m.count;
		events++;
		shadow_order();
	}
}

void mbar_init(uint64_t a, long long count, const char *file, int line)
{
	shared_at(a, 8, "mbarrier.init", file, line);
	if (count <= 0 || count >= (1 << 20))
		fatal(file, line, "mbarrier.init with count %lld", count);
	Mbar &m = bars[a];
	if (!m.copies.empty())
		fatal(file, line, "mbarrier.init over a barrier with %zu bulk copies in flight", m.copies.size());
	m = Mbar{count, count, 0, 0, {}};
	events++;
}

void mbar_arrive(uint64_t a, long long tx, const char *file, int line)
{
	Mbar &m = bar_at(a, "mbarrier.arrive", file, line);
	if (m.pending == 0)
		fatal(file, line, "mbarrier.arrive: more arrivals than the %lld of a phase", m.count);
	m.tx += tx;
	m.pending--;
	events++;
	complete(m);
}

static void land(Mbar &m, const Landing &b)
{
	unsigned char *d = shared_at(b.dst, 16, "cp.async.bulk", b.file, b.line);
	copy_global(d, (const void *)b.src, (size_t)b.bytes, "cp.async.bulk reading global memory", b.file, b.line);
	m.tx -= b.bytes;
	events++;
	complete(m);
}

void mbar_complete_tx(uint64_t a, long long bytes, const char *file, int line)
{
	Mbar &m = bar_at(a, "cp.async.bulk.tensor's mbarrier", file, line);
	m.tx -= bytes;
	events++;
	complete(m);
}

bool mbar_try_wait(uint64_t a, unsigned parity, const char *file, int line)
{
	Mbar &m = bar_at(a, "mbarrier.try_wait", file, line);
	std::vector<Landing> c;
	c.swap(m.copies);
	for (const Landing &b : c)
		land(m, b);
	if ((m.phase & 1) != (parity & 1)) {
		events++;
		return true;
	}
	spin(file, line);
	return false;
}

void bulk_copy(uint64_t dst, uint64_t src, long long bytes, uint64_t bar, const char *file, int line)
{
	if (bytes <= 0 || bytes % 16 || src % 16)
		fatal(file, line, "cp.async.bulk of %lld bytes from 0x%llx: a multiple of 16 from a 16-byte boundary",
		      bytes, (unsigned long long)src);
	shared_at(dst, 16, "cp.async.bulk", file, line);
	shared_at(dst + (uint64_t)bytes - 16, 16, "cp.async.bulk (its end)", file, line);
	Mbar &m = bar_at(bar, "cp.async.bulk's mbarrier", file, line);
	Landing b = {dst, src, bytes, file, line};
	if (copies_at_issue())
		land(m, b);
	else
		m.copies.push_back(b);
}

} // namespace emu
