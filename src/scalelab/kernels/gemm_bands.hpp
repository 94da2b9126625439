// How a float GEMM is shared among the threads (kernels/gemm.cpp's oneDNN and packed paths): C in
// one band of rows or columns per thread, or the depth k in one slice per thread. Internal to the
// GEMM layer; detail::BandSplit and detail::band_split are declared in gemm.hpp for the tests.
#pragma once

#include <omp.h>

#include <cstddef>
#include <cstdint>
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/thread_partials.hpp"

namespace scalelab::detail {

// Element strides of the stored A, B and C.
struct Strides {
  int64_t lda, ldb, ldc;
};

// A GEMM on C split into one band per thread, the bands computed concurrently in one OpenMP
// region, each by band_gemm(band) on its thread (oneDNN, called inside a parallel region, runs
// each call on its calling thread).
// Why: oneDNN 2.6 runs matmuls of a training step's size (a few hundred rows, K and N 256-1024)
// on one thread while the other waits (perf: the second thread spun ~45 % of a G2P step);
// bands give both threads work. C is split by rows where it has 64 rows per thread, else by
// columns where it has 64 columns per thread, else (a deep product, k >= 256) by 32 rows or
// columns: a weight gradient of a narrow layer (dW[64, 64] = dyᵀ x over a thousand rows, the
// small model's) has a small C and is still a thousand rows of work. A ReLU mask and a bf16 copy
// of C keep row bands (their row stride is C's width). The split depends only on the shape and
// the thread count, so results stay deterministic for a given thread count (as everywhere in
// scalelab: core/parallel.hpp).
//
// Depth slices, for oneDNN's bf16 matmul only (dense_slices): a row band of a transposed A, or a
// column band of an untransposed B, is a strided block of the stored operand, and oneDNN 2.6 then
// leaves its AMX matmul (brgemm) for its older gemm:jit one (ONEDNN_VERBOSE: every weight gradient
// dW = dyᵀ · x of a 2-thread bf16 step; the small model's dW[64, 64] over 1024 rows took 44 us
// per 32-row band there, against 37 us for all 64 rows on one thread). Such a product is split
// along k instead, where it has no epilogue, at least 128 of k per thread and a C of at most 64 Ki
// floats (partial sums that stay in L2; gemm_bands.cpp has the measurements): thread t computes
// alpha op(A)[:, k_t] op(B)[k_t, :] over its slice k_t, the first thread into C with beta, the
// others into partial products, which are then added to C in slice order, the rows of C shared
// by the threads. Every slice of a stored operand is then a run of whole rows (or columns of
// Aᵀ's op): dense.

// One band's product: C_band[band.m, band.n] (row stride ldc) = act(alpha op(A_band) op(B_band) +
// beta C_band), A_band and B_band at the full operands' strides.
struct Band {
  GemmShape shape;
  const void* a;
  const void* b;
  float* c;
  int64_t ldc;
  float beta;
  GemmEpilogue<float> epilogue;
};

// c[j] += p[j] for j < n
inline void add_row(const float* p, int64_t n, float* c) {
  for (int64_t j = 0; j < n; ++j) c[j] += p[j];
}

template <class BandGemm>
void in_bands(const GemmShape& s, const Strides& st, size_t element_bytes, const void* a,
              const void* b, float* c, float beta, const GemmEpilogue<float>& epilogue,
              bool dense_slices, const BandGemm& band_gemm) {
  const bool has_epilogue = epilogue.bias || epilogue.relu || epilogue.keep_where_positive ||
                            epilogue.bf16_out;
  const BandSplit split =
      band_split(s, epilogue.keep_where_positive != nullptr || epilogue.bf16_out != nullptr,
                 dense_slices, has_epilogue);
  const int64_t bands = split.bands;
  if (bands <= 1) {
    band_gemm(Band{s, a, b, c, st.ldc, beta, epilogue});
    return;
  }
  const char* a_bytes = static_cast<const char*>(a);
  const char* b_bytes = static_cast<const char*>(b);
  // Depth slices: the partial products of slices 1.., [m, n] each (row stride n), slice p's at
  // partial + (p - 1) · stride.
  int64_t stride = 0;
  float* const partial = split.axis == BandSplit::depth
                             ? thread_partials<float>(bands - 1, s.m * s.n, &stride)
                             : nullptr;
#pragma omp parallel num_threads(static_cast<int>(bands))
  {
    const int64_t t = omp_get_thread_num();
    GemmShape band = s;
    GemmEpilogue<float> band_epilogue = epilogue;
    if (split.axis == BandSplit::rows) {
      const int64_t m0 = s.m * t / bands, m1 = s.m * (t + 1) / bands;
      band.m = m1 - m0;
      // op(A)'s rows m0.. start at row m0 of A, or at column m0 of the stored Aᵀ
      const char* a_band = a_bytes + element_bytes * (s.trans_a ? m0 : m0 * st.lda);
      if (epilogue.keep_where_positive) band_epilogue.keep_where_positive += m0 * s.n;  // row stride n
      if (epilogue.bf16_out) band_epilogue.bf16_out += m0 * s.n;
      band_gemm(Band{band, a_band, b, c + m0 * st.ldc, st.ldc, beta, band_epilogue});
    } else if (split.axis == BandSplit::columns) {
      const int64_t n0 = s.n * t / bands, n1 = s.n * (t + 1) / bands;
      band.n = n1 - n0;
      // op(B)'s columns n0.. start at column n0 of B, or at row n0 of the stored Bᵀ
      const char* b_band = b_bytes + element_bytes * (s.trans_b ? n0 * st.ldb : n0);
      if (epilogue.bias) band_epilogue.bias += n0;
      band_gemm(Band{band, a, b_band, c + n0, st.ldc, beta, band_epilogue});
    } else {
      const int64_t k0 = s.k * t / bands, k1 = s.k * (t + 1) / bands;
      band.k = k1 - k0;
      // op(A)'s columns k0.. are rows k0.. of the stored Aᵀ, or columns k0.. of A; op(B)'s rows
      // k0.. are rows k0.. of B, or columns k0.. of the stored Bᵀ
      const char* a_slice = a_bytes + element_bytes * (s.trans_a ? k0 * st.lda : k0);
      const char* b_slice = b_bytes + element_bytes * (s.trans_b ? k0 : k0 * st.ldb);
      if (t == 0)
        band_gemm(Band{band, a_slice, b_slice, c, st.ldc, beta, {}});
      else
        band_gemm(Band{band, a_slice, b_slice, partial + (t - 1) * stride, s.n, 0.0f, {}});
#pragma omp barrier
      // C[i, :] += partial_1[i, :] + partial_2[i, :] + ..., in slice order, rows i shared out
      const int64_t i0 = s.m * t / bands, i1 = s.m * (t + 1) / bands;
      for (int64_t p = 0; p + 1 < bands; ++p)
        for (int64_t i = i0; i < i1; ++i)
          add_row(partial + p * stride + i * s.n, s.n, c + i * st.ldc);
    }
  }
}

}  // namespace scalelab::detail
