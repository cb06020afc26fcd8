// eqsat CUDA kernel for sm_90

__device__ __forceinline__ long long eqsat_min_i64(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long eqsat_max_i64(long long a, long long b) { return a > b ? a : b; }

extern "C" __global__ void __launch_bounds__(256) fused_elementwise_s0(float* __restrict__ b_t5, const float* __restrict__ b_t1, const float* __restrict__ b_t2, const float* __restrict__ b_t4) {
  // stage relu2
  const long long i0_2_o = blockIdx.x;
  const long long i0_2_i = threadIdx.x;
  if (i0_2_i < eqsat_min_i64(256, (1000 - (i0_2_o * 256)))) {
    b_t5[(i0_2_i + (i0_2_o * 256))] = fmaxf(((b_t1[(i0_2_i + (i0_2_o * 256))] * b_t2[(i0_2_i + (i0_2_o * 256))]) + b_t4[(i0_2_i + (i0_2_o * 256))]), 0.0f);
  }
}

// schedule
// split('i0_2', 256)
// bindblocks('i0_2.o')
// bindthreads('i0_2.i')
