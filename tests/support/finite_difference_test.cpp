// Tests of the finite-difference helper itself: it must pass a correct gradient and catch a
// wrong one (otherwise every gradient check built on it proves nothing).
#include "support/finite_difference.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace scalelab::testing {
namespace {

// L(x, w) = sum_i w_i sin(x_i) + (sum_i x_i)^2
struct Toy {
  std::vector<double> x{0.3, -1.2, 2.0, 0.7};
  std::vector<double> w{1.5, -0.5, 0.25, 2.0};
  double loss() const {
    double s = 0, t = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      s += w[i] * std::sin(x[i]);
      t += x[i];
    }
    return s + t * t;
  }
  std::vector<double> dx() const {
    double t = 0;
    for (double v : x) t += v;
    std::vector<double> g(x.size());
    for (size_t i = 0; i < x.size(); ++i) g[i] = w[i] * std::cos(x[i]) + 2 * t;
    return g;
  }
  std::vector<double> dw() const {
    std::vector<double> g(x.size());
    for (size_t i = 0; i < x.size(); ++i) g[i] = std::sin(x[i]);
    return g;
  }
};

TEST(FiniteDifference, AcceptsCorrectGradientAndRestoresInputs) {
  Toy toy;
  const std::vector<double> x0 = toy.x, w0 = toy.w;
  const auto dx = toy.dx(), dw = toy.dw();
  const FdReport r = check_gradients([&] { return toy.loss(); },
                                     {{toy.x.data(), 4, "x", dx.data()},
                                      {toy.w.data(), 4, "w", dw.data()}});
  EXPECT_EQ(r.checked, 8);
  EXPECT_TRUE(r.finite);
  EXPECT_LT(r.worst_rel_error, 1e-8) << r;
  EXPECT_EQ(toy.x, x0);  // bit-exact restore
  EXPECT_EQ(toy.w, w0);
}

TEST(FiniteDifference, NamesTheWrongEntry) {
  Toy toy;
  auto dx = toy.dx();
  const auto dw = toy.dw();
  auto wrong_dw = dw;
  wrong_dw[2] *= 1.001;  // a 0.1% error in one entry
  const FdReport r = check_gradients([&] { return toy.loss(); },
                                     {{toy.x.data(), 4, "x", dx.data()},
                                      {toy.w.data(), 4, "w", wrong_dw.data()}});
  EXPECT_GT(r.worst_rel_error, 5e-4) << r;
  EXPECT_EQ(r.worst_name, "w");
  EXPECT_EQ(r.worst_index, 2);
}

TEST(FiniteDifference, ZeroAnalyticGradientForLiveInputIsCaught) {
  Toy toy;
  std::vector<double> zeros(4, 0.0);
  const FdReport r =
      check_gradients([&] { return toy.loss(); }, {{toy.x.data(), 4, "x", zeros.data()}});
  EXPECT_GT(r.worst_rel_error, 0.99) << r;
}

TEST(FiniteDifference, NonFiniteGradientIsWorst) {
  Toy toy;
  auto dx = toy.dx();
  dx[1] = std::numeric_limits<double>::quiet_NaN();
  const FdReport r =
      check_gradients([&] { return toy.loss(); }, {{toy.x.data(), 4, "x", dx.data()}});
  EXPECT_FALSE(r.finite);
  EXPECT_FALSE(r.worst_rel_error < 1.0) << r;
}

}  // namespace
}  // namespace scalelab::testing
