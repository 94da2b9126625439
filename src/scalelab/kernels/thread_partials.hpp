// kernels/thread_partials: a scratch of per-thread partial sums, each thread's part on its own
// cache lines (64-byte aligned, parts rounded up to 64 bytes). Kernels that accumulate a row
// vector per thread and add the parts up afterwards (layernorm's and RMSNorm's dgamma) read and
// write their part at every row: a line shared by two threads' parts moved between the cores at
// every row. Also the column sums' per-chunk partials and the GEMM's depth slices' partial
// products (kernels/column_sums.cpp, kernels/gemm_bands.hpp). One scratch per thread and type:
// a kernel uses it only between its call and its return, and calls no other user meanwhile.
#pragma once
#include <cstdint>

#include "scalelab/core/tensor.hpp"

namespace scalelab {

// Room for `parts` parts of `width` elements; part p starts at the result + p · *stride. The
// calling thread's scratch (grows, never shrinks, not cleared): pass the pointer, not the scratch,
// into a parallel region.
template <class T>
T* thread_partials(int64_t parts, int64_t width, int64_t* stride) {
  constexpr int64_t kLine = 64 / static_cast<int64_t>(sizeof(T));
  *stride = (width + kLine - 1) / kLine * kLine;
  thread_local Tensor<T> scratch;
  scratch.resize({parts * *stride});
  return scratch.data();
}

}  // namespace scalelab
