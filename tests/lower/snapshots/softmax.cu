// eqsat CUDA kernel for sm_90

__device__ __forceinline__ float eqsat_warp_add(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) { const float u = __shfl_xor_sync(0xffffffffu, v, o); v = v + u; }
  return v;
}
__device__ __forceinline__ float eqsat_block_add(float v, float* sh, int nw) {
  v = eqsat_warp_add(v);
  __syncthreads();  // the slots may still be read by a previous reduction
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (int)(threadIdx.x & 31) < nw ? sh[threadIdx.x & 31] : 0.0f;
  return eqsat_warp_add(v);
}
__device__ __forceinline__ float eqsat_warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) { const float u = __shfl_xor_sync(0xffffffffu, v, o); v = fmaxf(v, u); }
  return v;
}
__device__ __forceinline__ float eqsat_block_max(float v, float* sh, int nw) {
  v = eqsat_warp_max(v);
  __syncthreads();  // the slots may still be read by a previous reduction
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (int)(threadIdx.x & 31) < nw ? sh[threadIdx.x & 31] : __int_as_float(0xff800000);
  return eqsat_warp_max(v);
}
__device__ __forceinline__ float eqsat_warp_min(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) { const float u = __shfl_xor_sync(0xffffffffu, v, o); v = fminf(v, u); }
  return v;
}
__device__ __forceinline__ float eqsat_block_min(float v, float* sh, int nw) {
  v = eqsat_warp_min(v);
  __syncthreads();  // the slots may still be read by a previous reduction
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (int)(threadIdx.x & 31) < nw ? sh[threadIdx.x & 31] : __int_as_float(0x7f800000);
  return eqsat_warp_min(v);
}

extern "C" __global__ void __launch_bounds__(128) softmax_s0(float* __restrict__ b_t0, const float* __restrict__ b_t1) {
  // stage softmax0
  const long long i0 = blockIdx.x;
  __shared__ float red_sh[32];
  float l_maxv[1];
  float l_sumv[1];
  l_maxv[0] = __int_as_float(0xff800000);
  float red_maxv = __int_as_float(0xff800000);
  for (long long j = threadIdx.x; j < 100; j += 128) {
    red_maxv = fmaxf(red_maxv, b_t1[((i0 * 100) + j)]);
  }
  red_maxv = eqsat_block_max(red_maxv, red_sh, 4);
  l_maxv[0] = fmaxf(l_maxv[0], red_maxv);
  l_sumv[0] = 0.0f;
  float red_sumv = 0.0f;
  for (long long j_1 = threadIdx.x; j_1 < 100; j_1 += 128) {
    b_t0[((i0 * 100) + j_1)] = expf((b_t1[((i0 * 100) + j_1)] - l_maxv[0]));
    red_sumv = (red_sumv + b_t0[((i0 * 100) + j_1)]);
  }
  red_sumv = eqsat_block_add(red_sumv, red_sh, 4);
  l_sumv[0] = (l_sumv[0] + red_sumv);
  __syncthreads();
  l_sumv[0] = (1.0f / l_sumv[0]);
  for (long long j_2 = threadIdx.x; j_2 < 100; j_2 += 128) {
    b_t0[((i0 * 100) + j_2)] = (b_t0[((i0 * 100) + j_2)] * l_sumv[0]);
  }
}

// schedule
// blockrows('i0', 128)
