// eqsat CUDA kernel for sm_90

extern "C" __global__ void __launch_bounds__(64) softmax_s0(float* __restrict__ b_t1, const float* __restrict__ b_i_x) {
  // stage softmax1
  const long long i0_o = blockIdx.x;
  const long long i0_i = threadIdx.x;
  float l_maxv[1];
  float l_sumv[1];
  l_maxv[0] = __int_as_float(0xff800000);
  for (long long j = 0; j < 100; ++j) {
    l_maxv[0] = fmaxf(l_maxv[0], b_i_x[(((i0_i * 100) + (i0_o * 6400)) + j)]);
  }
  l_sumv[0] = 0.0f;
  for (long long j_1 = 0; j_1 < 100; ++j_1) {
    b_t1[(((i0_i * 100) + (i0_o * 6400)) + j_1)] = expf((b_i_x[(((i0_i * 100) + (i0_o * 6400)) + j_1)] - l_maxv[0]));
    l_sumv[0] = (l_sumv[0] + b_t1[(((i0_i * 100) + (i0_o * 6400)) + j_1)]);
  }
  l_sumv[0] = (1.0f / l_sumv[0]);
  for (long long j_2 = 0; j_2 < 100; ++j_2) {
    b_t1[(((i0_i * 100) + (i0_o * 6400)) + j_2)] = (b_t1[(((i0_i * 100) + (i0_o * 6400)) + j_2)] * l_sumv[0]);
  }
}

// schedule
// split('i0', 64)
// bindblocks('i0.o')
// bindthreads('i0.i')
