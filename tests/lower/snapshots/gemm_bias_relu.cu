// eqsat CUDA kernel for sm_90

__device__ __forceinline__ long long eqsat_min_i64(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long eqsat_max_i64(long long a, long long b) { return a > b ? a : b; }

extern "C" __global__ void __launch_bounds__(256) gemm_bias_relu_s0(float* __restrict__ b_t6, const float* __restrict__ b_t4, const float* __restrict__ b_i_x, const float* __restrict__ b_w_w) {
  // stage matmul2.init
  const long long i_j_o = blockIdx.x;
  const long long i_j_i = threadIdx.x;
  if (i_j_i < eqsat_min_i64(256, (792 - (i_j_o * 256)))) {
    b_t6[(i_j_i + (i_j_o * 256))] = b_t4[((i_j_i + (i_j_o * 256)) % 24)];
  }
}

extern "C" __global__ void __launch_bounds__(128) gemm_bias_relu_s1(float* __restrict__ b_t6, const float* __restrict__ b_t4, const float* __restrict__ b_i_x, const float* __restrict__ b_w_w) {
  // stage matmul2
  const long long i_1_j_1_o = blockIdx.x;
  const long long i_1_j_1_i = threadIdx.x;
  if (i_1_j_1_i < eqsat_min_i64(128, (792 - (i_1_j_1_o * 128)))) {
    for (long long k = 0; k < 40; ++k) {
      b_t6[(i_1_j_1_i + (i_1_j_1_o * 128))] = (b_t6[(i_1_j_1_i + (i_1_j_1_o * 128))] + (b_i_x[((((i_1_j_1_i + (i_1_j_1_o * 128)) / 24) * 40) + k)] * b_w_w[((k * 24) + ((i_1_j_1_i + (i_1_j_1_o * 128)) % 24))]));
    }
  }
}

extern "C" __global__ void __launch_bounds__(256) gemm_bias_relu_s2(float* __restrict__ b_t6, const float* __restrict__ b_t4, const float* __restrict__ b_i_x, const float* __restrict__ b_w_w) {
  // stage matmul2.epilogue
  const long long ie_je_o = blockIdx.x;
  const long long ie_je_i = threadIdx.x;
  if (ie_je_i < eqsat_min_i64(256, (792 - (ie_je_o * 256)))) {
    b_t6[(ie_je_i + (ie_je_o * 256))] = fmaxf(b_t6[(ie_je_i + (ie_je_o * 256))], 0.0f);
  }
}

// schedule
// fuse('i', 'j')
// split('i.j', 256)
// bindblocks('i.j.o')
// bindthreads('i.j.i')
// fuse('i_1', 'j_1')
// split('i_1.j_1', 128)
// bindblocks('i_1.j_1.o')
// bindthreads('i_1.j_1.i')
// fuse('ie', 'je')
// split('ie.je', 256)
// bindblocks('ie.je.o')
// bindthreads('ie.je.i')
