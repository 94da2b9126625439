// Independent checks of kernels/activation (ReLU, exact-erf GELU): known values, fast vs _ref in
// float, and finite-difference checks of the backward in double.
#include "scalelab/kernels/activation.hpp"

#include <cmath>
#include <iostream>
#include <ostream>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_difference.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

using testing::normals;

const char* name(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }

// ---- known answers --------------------------------------------------------------------------

TEST(ActivationKnown, GeluValues) {
  // x Phi(x) with Phi from standard normal tables: Phi(1) = 0.8413447460685429,
  // Phi(2) = 0.9772498680518208, Phi(-3) = 0.0013498980316300946, Phi(0.5) = 0.6914624612740131.
  const double x[] = {0.0, 1.0, -1.0, 2.0, -3.0, 0.5};
  const double want[] = {0.0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416,
                         -0.004049694094890284, 0.34573123063700656};
  double y[6];
  activation_forward(Activation::gelu, x, y, 6);
  EXPECT_EQ(y[0], 0.0);
  for (int i = 1; i < 6; ++i) EXPECT_NEAR(y[i], want[i], 1e-15) << "gelu(" << x[i] << ")";
  float xf[6], yf[6];
  for (int i = 0; i < 6; ++i) xf[i] = static_cast<float>(x[i]);
  activation_forward(Activation::gelu, xf, yf, 6);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(yf[i], want[i], 2e-7) << "float gelu(" << x[i] << ")";
}

TEST(ActivationKnown, GeluDerivativeValues) {
  // d/dx x Phi(x) = Phi(x) + x phi(x): at 0 it is 1/2; at 1 it is Phi(1) + phi(1).
  const double x[] = {0.0, 1.0, -1.0};
  const double phi1 = std::exp(-0.5) / std::sqrt(2 * M_PI);
  const double want[] = {0.5, 0.8413447460685429 + phi1, 0.15865525393145707 - phi1};
  const double dy[] = {1.0, 1.0, 2.0};
  double dx[3];
  activation_backward(Activation::gelu, x, dy, dx, 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(dx[i], dy[i] * want[i], 1e-15) << x[i];
}

TEST(ActivationKnown, ReluValuesAndDerivative) {
  const double x[] = {-2.0, -0.0, 0.0, 1e-300, 3.5};
  const double dy[] = {5.0, 5.0, 5.0, 5.0, 5.0};
  double y[5], dx[5];
  activation_forward(Activation::relu, x, y, 5);
  activation_backward(Activation::relu, x, dy, dx, 5);
  const double want_y[] = {0.0, 0.0, 0.0, 1e-300, 3.5};
  const double want_dx[] = {0.0, 0.0, 0.0, 5.0, 5.0};  // derivative [x > 0]: 0 at x = 0
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(y[i], want_y[i]) << i;
    EXPECT_EQ(dx[i], want_dx[i]) << i;
  }
}

TEST(ActivationKnown, GeluTails) {
  // For large |x|, gelu(x) -> x (x > 0) and -> 0 (x < 0), without NaN.
  const float x[] = {30.f, -30.f, 1e4f, -1e4f};
  float y[4], dx[4];
  const float dy[] = {1.f, 1.f, 1.f, 1.f};
  activation_forward(Activation::gelu, x, y, 4);
  activation_backward(Activation::gelu, x, dy, dx, 4);
  EXPECT_EQ(y[0], 30.f);
  EXPECT_EQ(y[2], 1e4f);
  EXPECT_LE(std::abs(y[1]), 1e-30f);
  EXPECT_LE(std::abs(y[3]), 1e-30f);
  EXPECT_EQ(dx[0], 1.f);
  EXPECT_EQ(dx[2], 1.f);
  EXPECT_LE(std::abs(dx[1]), 1e-30f);
  EXPECT_LE(std::abs(dx[3]), 1e-30f);
}

// ---- fast vs reference, float ---------------------------------------------------------------

struct FastCase {
  Activation act;
  int64_t n;  // crosses the 4096-element chunk boundary for the larger sizes
  double tol;
  friend std::ostream& operator<<(std::ostream& o, const FastCase& c) {
    return o << name(c.act) << " n=" << c.n << " tol " << c.tol;
  }
};

class ActivationFastVsRef : public ::testing::TestWithParam<FastCase> {};

TEST_P(ActivationFastVsRef, Matches) {
  const auto c = GetParam();
  const auto x = normals<float>(c.n, 3 + c.n, 3.0);
  const auto dy = normals<float>(c.n, 4 + c.n);
  std::vector<float> y(c.n, -7.f), y_ref(c.n, -8.f), dx(c.n, -7.f), dx_ref(c.n, -8.f);
  activation_forward(c.act, x.data(), y.data(), c.n);
  activation_forward_ref(c.act, x.data(), y_ref.data(), c.n);
  activation_backward(c.act, x.data(), dy.data(), dx.data(), c.n);
  activation_backward_ref(c.act, x.data(), dy.data(), dx_ref.data(), c.n);
  for (int64_t i = 0; i < c.n; ++i) {
    ASSERT_NEAR(y[i], y_ref[i], c.tol) << "y at " << i;
    ASSERT_NEAR(dx[i], dx_ref[i], c.tol) << "dx at " << i;
    // and against the double-precision definition
    const double xd = x[i];
    const double yd = c.act == Activation::relu ? std::max(xd, 0.0)
                                                : 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0)));
    ASSERT_NEAR(y[i], yd, 1e-6 * (1 + std::abs(yd))) << "y vs double at " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Grid, ActivationFastVsRef,
                         ::testing::Values(FastCase{Activation::relu, 1, 0.0},
                                           FastCase{Activation::relu, 10001, 0.0},
                                           FastCase{Activation::gelu, 1, 0.0},
                                           FastCase{Activation::gelu, 4097, 0.0},
                                           FastCase{Activation::gelu, 10001, 0.0}));

// ---- finite differences, double -------------------------------------------------------------

struct FdCase {
  Activation act;
  double tol;
  friend std::ostream& operator<<(std::ostream& o, const FdCase& c) {
    return o << name(c.act) << " tol " << c.tol;
  }
};

class ActivationFd : public ::testing::TestWithParam<FdCase> {};

TEST_P(ActivationFd, BackwardMatchesCentralDifferences) {
  const testing::ScopedThreads one_thread(1);
  const auto c = GetParam();
  const int64_t n = 64;
  auto x = normals<double>(n, 77, 2.0);
  for (auto& v : x)  // keep ReLU away from its kink at 0
    if (std::abs(v) < 1e-2) v += 0.1;
  const auto w = normals<double>(n, 78);
  std::vector<double> y(n), dx(n);
  auto loss = [&] {
    activation_forward(c.act, x.data(), y.data(), n);
    return testing::weighted_sum(w.data(), y.data(), n);
  };
  activation_backward(c.act, x.data(), w.data(), dx.data(), n);
  const auto r = testing::check_gradients(loss, {{x.data(), n, "x", dx.data()}});
  EXPECT_LT(r.worst_rel_error, c.tol) << r;
  std::cout << "[ fd       ] " << c << ": " << r << "\n";
  std::vector<double> dx_ref(n);
  activation_backward_ref(c.act, x.data(), w.data(), dx_ref.data(), n);
  const auto r_ref = testing::check_gradients(loss, {{x.data(), n, "x(ref)", dx_ref.data()}});
  EXPECT_LT(r_ref.worst_rel_error, c.tol) << r_ref;
}

INSTANTIATE_TEST_SUITE_P(Both, ActivationFd,
                         ::testing::Values(FdCase{Activation::relu, 1e-6},
                                           FdCase{Activation::gelu, 1e-6}));

}  // namespace
}  // namespace scalelab
