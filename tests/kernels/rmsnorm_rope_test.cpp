#include <gtest/gtest.h>

#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/rmsnorm.hpp"
#include "scalelab/kernels/rope.hpp"
#include "support/finite_difference.hpp"

namespace scalelab {
namespace {

constexpr double kFdTolerance = 1e-6;      // double, eps 1e-6
constexpr double kFloatVsRef = 0.0;        // the fast path runs the reference's row code: bit-equal

TEST(RmsNorm, FastEqualsReferenceAndUnitRms) {
  Rng rng(1);
  const NormShape s{7, 33, 1e-6};
  std::vector<float> x(7 * 33), g(33, 1.0f), y(7 * 33), y_ref(7 * 33), r(7), r_ref(7);
  for (float& v : x) v = static_cast<float>(rng.normal(3.0, 2.0));
  rmsnorm_forward<float>(s, x.data(), g.data(), y.data(), r.data());
  rmsnorm_forward_ref<float>(s, x.data(), g.data(), y_ref.data(), r_ref.data());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], y_ref[i], kFloatVsRef);
  for (int row = 0; row < 7; ++row) {
    double ms = 0;
    for (int j = 0; j < 33; ++j) ms += double(y[row * 33 + j]) * y[row * 33 + j];
    EXPECT_NEAR(ms / 33, 1.0, 1e-5);
  }
}

TEST(RmsNorm, BackwardMatchesFiniteDifferences) {
  Rng rng(2);
  const NormShape s{5, 9, 1e-3};
  std::vector<double> x(45), g(9), w(45), y(45), r(5), dx(45), dg(9, 0.0);
  for (double& v : x) v = rng.normal(0.5, 1.0);
  for (double& v : g) v = rng.normal(1.0, 0.3);
  for (double& v : w) v = rng.normal(0.0, 1.0);
  auto loss = [&] {
    rmsnorm_forward<double>(s, x.data(), g.data(), y.data(), r.data());
    return testing::weighted_sum(w.data(), y.data(), 45);
  };
  loss();
  rmsnorm_backward<double>(s, w.data(), x.data(), g.data(), r.data(), dx.data(), dg.data());
  const auto report = testing::check_gradients(loss, {{x.data(), 45, "x", dx.data()}, {g.data(), 9, "gamma", dg.data()}});
  EXPECT_LT(report.worst_rel_error, kFdTolerance) << report;
  // The reference backward agrees with the fast one.
  std::vector<double> dx_ref(45), dg_ref(9, 0.0);
  rmsnorm_backward_ref<double>(s, w.data(), x.data(), g.data(), r.data(), dx_ref.data(), dg_ref.data());
  for (int i = 0; i < 45; ++i) EXPECT_NEAR(dx[i], dx_ref[i], 1e-14);
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(dg[i], dg_ref[i], 1e-13);
}

TEST(Rope, BackwardMatchesFiniteDifferencesWithStrides) {
  Rng rng(3);
  const RopeShape s{.batch = 2, .len = 3, .heads = 2, .head_dim = 4, .token_stride = 10, .offset = 2, .base = 100.0};
  std::vector<double> x(2 * 3 * 10), w(x.size()), y(x.size());
  for (double& v : x) v = rng.normal(0, 1);
  for (double& v : w) v = rng.normal(0, 1);
  auto loss = [&] {
    y = x;
    rope_forward<double>(s, y.data());
    return testing::weighted_sum(w.data(), y.data(), static_cast<int64_t>(y.size()));
  };
  std::vector<double> dx = w;
  rope_backward<double>(s, dx.data());
  // Entries 8 and 9 of each token are outside the heads: untouched, gradient = w.
  const auto report = testing::check_gradients(loss, {{x.data(), static_cast<int64_t>(x.size()), "x", dx.data()}});
  EXPECT_LT(report.worst_rel_error, kFdTolerance) << report;
  std::vector<double> y_ref = x, y_fast = x;
  rope_forward<double>(s, y_fast.data());
  rope_forward_ref<double>(s, y_ref.data());
  EXPECT_EQ(y_fast, y_ref);
}

TEST(Rope, RejectsAnOddHeadDimension) {
  std::vector<float> x(3);
  EXPECT_THROW(rope_forward<float>({1, 1, 1, 3}, x.data()), Error);
}

}  // namespace
}  // namespace scalelab
