// Independent checks of kernels/softmax: fast vs _ref in float, known answers, and a
// finite-difference check of the backward in double.
#include "scalelab/kernels/softmax.hpp"

#include <cmath>
#include <iostream>
#include <limits>
#include <ostream>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_difference.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using testing::normals;

// Test-local definition of softmax in long double, written from the header's formula.
std::vector<double> softmax_oracle(const std::vector<double>& x, int64_t rows, int64_t cols) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    long double m = -kInf;
    for (int64_t j = 0; j < cols; ++j) m = std::max<long double>(m, x[r * cols + j]);
    long double s = 0;
    for (int64_t j = 0; j < cols; ++j)
      s += m == -kInf ? 0.0L : std::exp(static_cast<long double>(x[r * cols + j]) - m);
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = s == 0 ? 0.0 : static_cast<double>(std::exp(x[r * cols + j] - m) / s);
  }
  return y;
}

// ---- fast vs reference twin, float --------------------------------------------------------

struct FastVsRefCase {
  int64_t rows, cols;
  double logit_std;
  double tol;  // max abs difference allowed between fast and ref (float)
  friend std::ostream& operator<<(std::ostream& o, const FastVsRefCase& c) {
    return o << c.rows << "x" << c.cols << " std " << c.logit_std << " tol " << c.tol;
  }
};

class SoftmaxFastVsRef : public ::testing::TestWithParam<FastVsRefCase> {};

TEST_P(SoftmaxFastVsRef, ForwardAndBackwardMatchRefAndOracle) {
  const auto c = GetParam();
  const int64_t n = c.rows * c.cols;
  auto x = normals<float>(n, 11 + n, c.logit_std);
  // Mask a few entries and, if there are >= 3 rows, a whole row.
  for (int64_t i = 0; i < n; i += 7) x[i] = -std::numeric_limits<float>::infinity();
  if (c.rows >= 3)
    for (int64_t j = 0; j < c.cols; ++j) x[2 * c.cols + j] = -std::numeric_limits<float>::infinity();
  const auto dy = normals<float>(n, 99 + n);
  std::vector<float> y(n, 7.f), y_ref(n, 8.f), dx(n, 9.f), dx_ref(n, 10.f);
  softmax_forward(x.data(), y.data(), c.rows, c.cols);
  softmax_forward_ref(x.data(), y_ref.data(), c.rows, c.cols);
  softmax_backward(y.data(), dy.data(), dx.data(), c.rows, c.cols);
  softmax_backward_ref(y_ref.data(), dy.data(), dx_ref.data(), c.rows, c.cols);

  const std::vector<double> xd(x.begin(), x.end());
  const auto oracle = softmax_oracle(xd, c.rows, c.cols);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(y[i])) << i;
    ASSERT_TRUE(std::isfinite(dx[i])) << i;
    EXPECT_NEAR(y[i], y_ref[i], c.tol) << "y at " << i;
    EXPECT_NEAR(dx[i], dx_ref[i], c.tol) << "dx at " << i;
    EXPECT_NEAR(y[i], oracle[i], c.tol) << "y vs long-double oracle at " << i;
  }
  // Rows sum to 1 (or 0 if fully masked); dx rows sum to 0 (softmax is shift invariant).
  for (int64_t r = 0; r < c.rows; ++r) {
    double sy = 0, sdx = 0;
    for (int64_t j = 0; j < c.cols; ++j) {
      sy += y[r * c.cols + j];
      sdx += dx[r * c.cols + j];
    }
    bool any_live = false;
    for (int64_t j = 0; j < c.cols; ++j) any_live |= std::isfinite(x[r * c.cols + j]);
    EXPECT_NEAR(sy, any_live ? 1.0 : 0.0, c.cols * 1e-7) << "row " << r;
    EXPECT_NEAR(sdx, 0.0, c.cols * 1e-6) << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, SoftmaxFastVsRef,
                         ::testing::Values(FastVsRefCase{1, 1, 1.0, 1e-7},
                                           FastVsRefCase{3, 5, 1.0, 1e-7},
                                           FastVsRefCase{17, 33, 3.0, 1e-6},
                                           FastVsRefCase{64, 129, 10.0, 1e-6},
                                           FastVsRefCase{257, 16, 1.0, 1e-6}));

// ---- known answers --------------------------------------------------------------------------

TEST(SoftmaxKnown, MinusInfinityEntriesGetZeroAndTheRestRenormalise) {
  const double x[5] = {1.0, -kInf, 2.0, -kInf, 0.5};
  double y[5];
  softmax_forward(x, y, 1, 5);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(y[3], 0.0);
  EXPECT_NEAR(y[0], std::exp(1.0) / z, 1e-15);
  EXPECT_NEAR(y[2], std::exp(2.0) / z, 1e-15);
  EXPECT_NEAR(y[4], std::exp(0.5) / z, 1e-15);
}

TEST(SoftmaxKnown, FullyMaskedRowGivesZerosAndZeroGradient) {
  for (int64_t cols : {1, 4}) {
    std::vector<float> x(cols, -std::numeric_limits<float>::infinity()), y(cols, 5.f),
        dy(cols, 1.f), dx(cols, 5.f);
    softmax_forward(x.data(), y.data(), 1, cols);
    softmax_backward(y.data(), dy.data(), dx.data(), 1, cols);
    for (int64_t j = 0; j < cols; ++j) {
      EXPECT_EQ(y[j], 0.f);
      EXPECT_EQ(dx[j], 0.f);
    }
    softmax_forward_ref(x.data(), y.data(), 1, cols);
    for (int64_t j = 0; j < cols; ++j) EXPECT_EQ(y[j], 0.f);
  }
}

TEST(SoftmaxKnown, UniformLogitsGiveOneOverN) {
  for (int64_t n : {1, 3, 10, 1000}) {
    std::vector<double> x(n, 3.7), y(n);
    softmax_forward(x.data(), y.data(), 1, n);
    for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(y[j], 1.0 / n, 1e-15 / n * 10) << n;
  }
}

TEST(SoftmaxKnown, LargeLogitsDoNotOverflow) {
  const float x[3] = {1000.f, 999.f, -1000.f};
  float y[3];
  softmax_forward(x, y, 1, 3);
  const double e = std::exp(-1.0);
  EXPECT_NEAR(y[0], 1.0 / (1 + e), 1e-6);
  EXPECT_NEAR(y[1], e / (1 + e), 1e-6);
  EXPECT_EQ(y[2], 0.f);
}

TEST(SoftmaxKnown, ShiftInvariant) {
  const auto x = normals<double>(12, 5);
  std::vector<double> xs(x), y(12), ys(12);
  for (auto& v : xs) v += 123.0;
  softmax_forward(x.data(), y.data(), 3, 4);
  softmax_forward(xs.data(), ys.data(), 3, 4);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(y[i], ys[i], 1e-13);
}

// Backward against the explicit Jacobian diag(y) - y yᵀ.
TEST(SoftmaxKnown, BackwardIsTheJacobianTransposeProduct) {
  const int64_t n = 6;
  const auto x = normals<double>(n, 21);
  const auto dy = normals<double>(n, 22);
  std::vector<double> y(n), dx(n);
  softmax_forward(x.data(), y.data(), 1, n);
  softmax_backward(y.data(), dy.data(), dx.data(), 1, n);
  for (int64_t j = 0; j < n; ++j) {
    double expect = 0;
    for (int64_t i = 0; i < n; ++i) expect += ((i == j ? y[i] : 0.0) - y[i] * y[j]) * dy[i];
    EXPECT_NEAR(dx[j], expect, 1e-15);
  }
}

// ---- finite differences, double -----------------------------------------------------------

struct FdCase {
  int64_t rows, cols;
  bool with_masks;  // some -inf entries (their gradient must be 0 and FD can't move them)
  double tol;       // worst relative error allowed
  friend std::ostream& operator<<(std::ostream& o, const FdCase& c) {
    return o << c.rows << "x" << c.cols << (c.with_masks ? " masked" : "") << " tol " << c.tol;
  }
};

class SoftmaxFd : public ::testing::TestWithParam<FdCase> {};

TEST_P(SoftmaxFd, BackwardMatchesCentralDifferences) {
  const testing::ScopedThreads one_thread(1);
  const auto c = GetParam();
  const int64_t n = c.rows * c.cols;
  auto x = normals<double>(n, 1000 + n, 2.0);
  std::vector<bool> masked(n, false);
  if (c.with_masks)
    for (int64_t i = 1; i < n; i += 5) masked[i] = true;
  const auto w = normals<double>(n, 2000 + n);
  std::vector<double> y(n);
  // The masked entries stay at -inf; the FD inputs are the free ones, gathered in `free_x`.
  std::vector<int64_t> free_idx;
  for (int64_t i = 0; i < n; ++i)
    if (!masked[i]) free_idx.push_back(i);
    else x[i] = -kInf;
  std::vector<double> free_x(free_idx.size());
  for (size_t f = 0; f < free_idx.size(); ++f) free_x[f] = x[free_idx[f]];
  auto loss = [&] {
    for (size_t f = 0; f < free_idx.size(); ++f) x[free_idx[f]] = free_x[f];
    softmax_forward(x.data(), y.data(), c.rows, c.cols);
    return testing::weighted_sum(w.data(), y.data(), n);
  };
  loss();
  std::vector<double> dx(n), dx_ref(n);
  softmax_backward(y.data(), w.data(), dx.data(), c.rows, c.cols);
  softmax_backward_ref(y.data(), w.data(), dx_ref.data(), c.rows, c.cols);
  std::vector<double> free_dx(free_idx.size()), free_dx_ref(free_idx.size());
  for (size_t f = 0; f < free_idx.size(); ++f) {
    free_dx[f] = dx[free_idx[f]];
    free_dx_ref[f] = dx_ref[free_idx[f]];
  }
  for (int64_t i = 0; i < n; ++i)
    if (masked[i]) {
      EXPECT_EQ(dx[i], 0.0) << "masked entry " << i << " got a gradient";
    }
  const auto r = testing::check_gradients(
      loss, {{free_x.data(), static_cast<int64_t>(free_x.size()), "x", free_dx.data()}});
  EXPECT_LT(r.worst_rel_error, c.tol) << r;
  std::cout << "[ fd       ] " << c << ": " << r << "\n";
  const auto r_ref = testing::check_gradients(
      loss, {{free_x.data(), static_cast<int64_t>(free_x.size()), "x(ref)", free_dx_ref.data()}});
  EXPECT_LT(r_ref.worst_rel_error, c.tol) << r_ref;
}

INSTANTIATE_TEST_SUITE_P(Grid, SoftmaxFd,
                         ::testing::Values(FdCase{1, 1, false, 1e-6}, FdCase{1, 7, false, 1e-6},
                                           FdCase{4, 9, false, 1e-6}, FdCase{5, 6, true, 1e-6}));

}  // namespace
}  // namespace scalelab
