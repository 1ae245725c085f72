/* cooperative_groups.h - what the ring kernels use of it, on the host
 * emulator: a cluster of one block (the emulator runs one block at a time,
 * so a kernel's clusters are tested at CLUSTER = 1, its exchange then a
 * block's own message).  cluster.sync() is a __syncthreads of the block;
 * map_shared_rank(p, 0) is p, and any other rank is a fault. */
#ifndef KB_EMU_COOPERATIVE_GROUPS_H
#define KB_EMU_COOPERATIVE_GROUPS_H
#include "cuda_emu.h"

namespace cooperative_groups {

struct cluster_group {
	unsigned block_rank() const { return 0; }
	unsigned num_blocks() const { return 1; }
	void sync() const { emu::syncthreads("<cluster.sync>", 0); }
	template <class T> T *map_shared_rank(T *p, unsigned rank) const
	{
		if (rank != 0)
			emu::fatal_rank(rank);
		return p;
	}
};

inline cluster_group this_cluster() { return cluster_group{}; }

} // namespace cooperative_groups

#endif
