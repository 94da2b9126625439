#include "scalelab/kernels/gemm_bands.hpp"

#include <algorithm>

#include "scalelab/core/parallel.hpp"

namespace scalelab::detail {
namespace {

// Where a product is split along k (in_bands, depth slices): at least this depth per thread, and
// a C of at most this many elements (256 KiB of partial sums, in L2). Measured on an Intel Xeon
// with AMX (family 6 model 167), bf16, 2 threads, `train_step_loop` alternated with the build
// before depth slices, old / new step time, medians of 4-6 rounds: without the bound on C the (c)
// decoder's dW[2048, 512] and dW[512, 2048] were split too and its step took 0.91 (the partial
// sums' pass through memory); with it `small` 1.04, (a) 0.99, (b) 1.00, (c) 0.99.
constexpr int64_t kMinDepthSlice = 128;
constexpr int64_t kMaxDepthSplitOutput = 65536;

}  // namespace

BandSplit band_split(const GemmShape& s, bool rows_only, bool dense_slices, bool has_epilogue) {
  const int64_t threads = omp_in_parallel() ? 1 : num_threads();
  BandSplit split;
  for (const int64_t min_band : {int64_t{64}, int64_t{32}}) {
    if (min_band < 64 && s.k < 256) break;
    const int64_t row_bands = std::min<int64_t>(threads, s.m / min_band);
    if (row_bands > 1) {
      split = {row_bands, BandSplit::rows};
      break;
    }
    const int64_t column_bands = rows_only ? 1 : std::min<int64_t>(threads, s.n / min_band);
    if (column_bands > 1) {
      split = {column_bands, BandSplit::columns};
      break;
    }
  }
  const bool strided_band = split.bands > 1 && (split.axis == BandSplit::rows ? s.trans_a : !s.trans_b);
  if (dense_slices && strided_band && !has_epilogue && s.m * s.n <= kMaxDepthSplitOutput) {
    const int64_t depth_bands = std::min<int64_t>(threads, s.k / kMinDepthSlice);
    if (depth_bands > 1) return {depth_bands, BandSplit::depth};
  }
  return split;
}

}  // namespace scalelab::detail
