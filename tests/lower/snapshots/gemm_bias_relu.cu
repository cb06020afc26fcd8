// eqsat CUDA kernel for sm_90

#ifndef EQSAT_HOST_EMULATION
__device__ __forceinline__ unsigned eqsat_tf32(float x) {
  unsigned r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r;
}
__device__ __forceinline__ void eqsat_mma_tf32(float* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

extern "C" __global__ void __launch_bounds__(128, 1) gemm_bias_relu_s0(float* __restrict__ b_t3, const float* __restrict__ b_t1, const float* __restrict__ b_t4, const float* __restrict__ b_w0) {
  // stage matmul0.tile
  const int tid = threadIdx.x;
  int bid = blockIdx.x;
  const int tn = bid % 1; bid /= 1;
  const int tm = bid % 1; bid /= 1;
  const int m0 = tm * 64, n0 = tn * 64;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  __shared__ float As[64][20];
  __shared__ float Bs[16][72];
  float acc[32];
  #pragma unroll
  for (int q = 0; q < 32; ++q) acc[q] = 0.0f;
  float ra[8], rb[8];
  const int kb = 0, ke = 40;
  #pragma unroll 1
  for (int kn = kb; ; kn += 16) {
    if (kn < ke) {
      #pragma unroll
      for (int r = 0; r < 8; ++r) {
        const int el = tid + r * 128;
        const int mm = el / 16, kk = el % 16;
        const int i_1 = m0 + mm, k = kn + kk;
        float val = 0.0f;
        if (i_1 < 33 && k < 40) {
          val = b_t4[((i_1 * 40) + k)];
        }
        ra[r] = val;
      }
      #pragma unroll
      for (int r = 0; r < 8; ++r) {
        const int el = tid + r * 128;
        const int kk = el / 64, nn = el % 64;
        const int j_1 = n0 + nn, k = kn + kk;
        float val = 0.0f;
        if (j_1 < 24 && k < 40) {
          val = b_w0[(j_1 + (k * 24))];
        }
        rb[r] = val;
      }
    }
    if (kn > kb) {
      #pragma unroll
      for (int k8 = 0; k8 < 16; k8 += 8) {
        unsigned a[2][4], b[4][2];
        #pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          const int r = wm + mi * 16 + g;
          a[mi][0] = __float_as_uint(As[r][k8 + t]); a[mi][1] = __float_as_uint(As[r + 8][k8 + t]);
          a[mi][2] = __float_as_uint(As[r][k8 + t + 4]); a[mi][3] = __float_as_uint(As[r + 8][k8 + t + 4]);
        }
        #pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
          const int c = wn + ni * 8 + g;
          b[ni][0] = __float_as_uint(Bs[k8 + t][c]); b[ni][1] = __float_as_uint(Bs[k8 + t + 4][c]);
        }
        #pragma unroll
        for (int mi = 0; mi < 2; ++mi)
          #pragma unroll
          for (int ni = 0; ni < 4; ++ni) eqsat_mma_tf32(&acc[(mi * 4 + ni) * 4], a[mi], b[ni]);
      }
      __syncthreads();
    }
    if (kn >= ke) break;
    #pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int el = tid + r * 128; As[el / 16][el % 16] = __uint_as_float(eqsat_tf32(ra[r]));
    }
    #pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int el = tid + r * 128; Bs[el / 64][el % 64] = __uint_as_float(eqsat_tf32(rb[r]));
    }
    __syncthreads();
  }
  #pragma unroll
  for (int q = 0; q < 32; ++q) {
    const int f = q >> 2, h = (q >> 1) & 1, c2 = q & 1, mi = f / 4, ni = f % 4;
    const int i_1 = m0 + wm + mi * 16 + g + 8 * h, j_1 = n0 + wn + ni * 8 + 2 * t + c2;
    if (i_1 < 33 && j_1 < 24) {
      b_t3[((i_1 * 24) + j_1)] = b_t1[j_1];
      b_t3[((i_1 * 24) + j_1)] = b_t3[((i_1 * 24) + j_1)] + acc[q];
      b_t3[((i_1 * 24) + j_1)] = fmaxf(b_t3[((i_1 * 24) + j_1)], 0.0f);
    }
  }
}

// schedule
// tilegemm('matmul0', 'matmul0.init', ('matmul0.epilogue',), 64, 64, 16, 'tf32', 1)
