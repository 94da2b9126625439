// The passes a training step splits across threads outside the GEMMs (core/parallel.hpp's
// parallel_elements, the embedding's and the learned positions' scatter-adds, a Linear layer's bias
// gradient, inactive dropout): each element is written exactly once, the sums add their rows in
// the same order on any number of threads (1 and 2 threads give the same bits), and the values
// are right (against plain loops in long double).
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/nn/dropout.hpp"
#include "scalelab/nn/embedding.hpp"
#include "scalelab/nn/linear.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

bool same_bits(const float* a, const float* b, int64_t n) {
  return n == 0 || std::memcmp(a, b, static_cast<size_t>(n) * sizeof(float)) == 0;  // (data() of an empty vector may be null)
}

TEST(ParallelElements, EveryElementOnceAtAnySize) {
  const ScopedNumThreads two(2);
  for (int64_t n : {int64_t{0}, int64_t{1}, kElementChunk - 1, kElementChunk, 3 * kElementChunk + 5}) {
    std::vector<int> visits(static_cast<size_t>(n), 0);
    parallel_elements(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++visits[static_cast<size_t>(i)];
    });
    int wrong = 0;
    for (int v : visits) wrong += v != 1;
    EXPECT_EQ(wrong, 0) << "n = " << n;

    const std::vector<float> src = testing::normals<float>(n, 7, 0.5);
    std::vector<float> dst(static_cast<size_t>(n) + 1, -3.0f);  // one past the end stays
    parallel_copy(src.data(), dst.data(), n);
    EXPECT_TRUE(same_bits(src.data(), dst.data(), n)) << "n = " << n;
    EXPECT_EQ(dst.back(), -3.0f);
    parallel_zero(dst.data(), n);
    int nonzero = 0;
    for (int64_t i = 0; i < n; ++i) nonzero += dst[static_cast<size_t>(i)] != 0.0f;
    EXPECT_EQ(nonzero, 0) << "n = " << n;
    EXPECT_EQ(dst.back(), -3.0f);
  }
}

// Embedding forward and backward at a thread count: y and dE after one backward from dE = 0.
struct EmbeddingRun {
  std::vector<float> y, dtable;
};
EmbeddingRun embedding_run(int threads, int64_t vocab, int64_t dim, const std::vector<int32_t>& ids,
                           const std::vector<float>& dy) {
  const ScopedNumThreads scoped(threads);
  Embedding<float> e("e", vocab, dim, 2.5, /*learned_scale=*/false);
  const std::vector<float> table = testing::normals<float>(vocab * dim, 3, 0.5);
  std::copy(table.begin(), table.end(), e.table().value.data());
  e.table().grad.zero();
  const int64_t rows = static_cast<int64_t>(ids.size());
  EmbeddingRun out{std::vector<float>(static_cast<size_t>(rows * dim)), {}};
  e.forward(ids.data(), rows, out.y.data());
  e.backward(dy.data());
  out.dtable.assign(e.table().grad.data(), e.table().grad.data() + vocab * dim);
  return out;
}

TEST(ThreadSplit, EmbeddingScatterAddIsTheSameOnOneAndTwoThreadsAndRight) {
  for (int64_t dim : {64, 40, 7}) {  // 4 column blocks, a partial block, one block
    const int64_t vocab = 11, rows = 700;
    std::vector<int32_t> ids(static_cast<size_t>(rows));
    Rng rng(5);
    for (int32_t& id : ids) id = static_cast<int32_t>(rng.below(vocab));  // many repeats per id
    const std::vector<float> dy = testing::normals<float>(rows * dim, 9, 0.5);
    const EmbeddingRun one = embedding_run(1, vocab, dim, ids, dy);
    const EmbeddingRun two = embedding_run(2, vocab, dim, ids, dy);
    EXPECT_TRUE(same_bits(one.y.data(), two.y.data(), rows * dim)) << "dim " << dim;
    EXPECT_TRUE(same_bits(one.dtable.data(), two.dtable.data(), vocab * dim)) << "dim " << dim;
    double worst = 0;
    for (int64_t v = 0; v < vocab; ++v)
      for (int64_t j = 0; j < dim; ++j) {
        long double want = 0;
        for (int64_t r = 0; r < rows; ++r)
          if (ids[static_cast<size_t>(r)] == v) want += 2.5L * dy[static_cast<size_t>(r * dim + j)];
        worst = std::max(worst, std::fabs(double(want) - double(two.dtable[static_cast<size_t>(v * dim + j)])));
      }
    EXPECT_LT(worst, 1e-4) << "dim " << dim;  // about 64 terms of size <= 2.5 in float
  }
}

std::vector<float> bias_gradient(int threads, int64_t rows, int64_t out, const std::vector<float>& x,
                                 const std::vector<float>& dy) {
  const ScopedNumThreads scoped(threads);
  Linear<float> layer("l", 8, out);
  for (Parameter<float>* p : layer.parameters()) p->grad.zero();
  std::vector<float> y(static_cast<size_t>(rows * out));
  layer.forward(x.data(), rows, y.data());
  layer.backward(dy.data(), nullptr);
  Parameter<float>* bias = layer.parameters().back();
  return {bias->grad.data(), bias->grad.data() + out};
}

TEST(ThreadSplit, LinearBiasGradientIsTheSameOnOneAndTwoThreadsAndRight) {
  for (int64_t out : {64, 40, 1024, 3}) {
    for (int64_t rows : {1025, 2}) {
      const std::vector<float> x = testing::normals<float>(rows * 8, 1, 0.5);
      const std::vector<float> dy = testing::normals<float>(rows * out, 2, 0.5);
      const std::vector<float> one = bias_gradient(1, rows, out, x, dy);
      const std::vector<float> two = bias_gradient(2, rows, out, x, dy);
      EXPECT_TRUE(same_bits(one.data(), two.data(), out)) << "out " << out << " rows " << rows;
      double worst = 0;
      for (int64_t o = 0; o < out; ++o) {
        long double want = 0;
        for (int64_t r = 0; r < rows; ++r) want += dy[static_cast<size_t>(r * out + o)];
        worst = std::max(worst, std::fabs(double(want) - double(two[static_cast<size_t>(o)])));
      }
      EXPECT_LT(worst, 1e-4) << "out " << out << " rows " << rows;
    }
  }
}

TEST(ThreadSplit, InactiveDropoutAddsCopiesAndViewsWithoutACopy) {
  const ScopedNumThreads two(2);
  const int64_t n = 2 * kElementChunk + 3;
  std::vector<float> x = testing::normals<float>(n, 4, 0.5);
  const std::vector<float> residual = testing::normals<float>(n, 5, 0.5);
  const std::vector<float> dy = testing::normals<float>(n, 6, 0.5);
  std::vector<float> out(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
  Dropout<float> dropout(0.1);
  dropout.forward_add(x.data(), residual.data(), out.data(), n, nullptr, /*training=*/false);
  int wrong = 0;
  for (size_t i = 0; i < out.size(); ++i) wrong += out[i] != residual[i] + x[i];
  EXPECT_EQ(wrong, 0);
  dropout.backward_into(dy.data(), dx.data(), n);
  EXPECT_TRUE(same_bits(dy.data(), dx.data(), n));
  EXPECT_EQ(dropout.backward_view(dy.data(), dx.data(), n), dy.data());

  // Active: the view is the scratch, holding dy · m / (1 - p).
  Rng rng(8);
  dropout.forward_add(x.data(), residual.data(), out.data(), n, &rng, /*training=*/true);
  std::vector<float> scratch(static_cast<size_t>(n));
  const float* view = dropout.backward_view(dy.data(), scratch.data(), n);
  EXPECT_EQ(view, scratch.data());
  std::vector<float> in_place = dy;
  dropout.backward(in_place.data(), n);
  EXPECT_TRUE(same_bits(in_place.data(), scratch.data(), n));
}

}  // namespace
}  // namespace scalelab
