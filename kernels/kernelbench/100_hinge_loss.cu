// KernelBench level 1, problem 100 (HingeLoss) at its sizes:
// mean(clamp(1 - predictions * targets, min=0)), targets broadcast over the
// last dim.  Each block sums a share of the rows into part[block]; the last
// block to finish (a ticket counter that is an input of zeros, left at zero
// again by atomicInc's wrap) adds the partial sums in a fixed order, so the
// result does not depend on which block finished when.
//
//! arg     B = 32768
//! arg     D = 32768
//! arg     NB = 1024
//! in      predictions : f32[B, D] = rand(0, 1)
//! in      targets : f32[D] = rand(-1, 1)
//! in      ticket : i32[1] = zeros
//! out     y : f32[1]
//! out     part : f32[NB]
//! launch  grid=(NB) block=(512)
//! ref     torch device=cuda torch.mean(torch.clamp(1 - predictions * targets, min=0)) -> y
//! tol     rtol=1e-4 atol=1e-4

#ifndef __CUDA_ARCH__ /* the host emulator (tests/emu) runs blocks one at a time; it has __threadfence */
static unsigned int atomicInc(unsigned int *p, unsigned int v)
{
	unsigned int o = *p;
	*p = o >= v ? 0 : o + 1;
	return o;
}
#endif

__device__ double block_sum(double v, double *s)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	__syncthreads();
	if (lane == 0)
		s[warp] = v;
	__syncthreads();
	v = lane < blockDim.x / 32 ? s[lane] : 0.0;
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffff, v, o);
	return v;
}

__global__ void hinge_loss(const float *__restrict__ predictions, const float *__restrict__ targets,
			   unsigned int *ticket, float *y, float *part, int B, int D, int NB)
{
	__shared__ double s[32];
	__shared__ bool last;
	float acc = 0;
	for (int r = blockIdx.x; r < B; r += gridDim.x) {
		const float *p = predictions + (long long)r * D;
		float row = 0;
		for (int j = threadIdx.x; j < D; j += blockDim.x)
			row += fmaxf(1.f - p[j] * targets[j], 0.f);
		acc += row;
	}
	double t = block_sum(acc, s);
	if (threadIdx.x == 0) {
		part[blockIdx.x] = (float)t;
		__threadfence();
		last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
	}
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	double sum = 0;
	for (int i = threadIdx.x; i < gridDim.x; i += blockDim.x)
		sum += ((volatile float *)part)[i];
	sum = block_sum(sum, s);
	if (threadIdx.x == 0)
		y[0] = (float)(sum / ((double)B * D));
}
