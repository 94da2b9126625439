// nn/dropout and kernels/dropout: the counter-based mask is the same on any thread count and SIMD
// target, follows the seed, and drops a share p of the elements.
#include "scalelab/nn/dropout.hpp"

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace scalelab {
namespace {

std::vector<float> dropped(int threads, uint64_t seed, int64_t n, double p) {
  const ScopedNumThreads scoped(threads);
  Dropout<float> drop(p);
  Rng rng(seed);
  std::vector<float> x(n, 1.0f);
  drop.forward(x.data(), n, &rng, /*training=*/true);
  return x;
}

TEST(CounterDropout, SameMaskOnOneAndTwoThreads) {
  const int64_t n = 3 * 8192 + 7;  // several chunks, an odd tail
  EXPECT_EQ(dropped(1, 11, n, 0.1), dropped(2, 11, n, 0.1));
}

TEST(CounterDropout, MaskFollowsTheSeed) {
  EXPECT_NE(dropped(1, 11, 4096, 0.5), dropped(1, 12, 4096, 0.5));
  EXPECT_EQ(dropped(1, 12, 4096, 0.5), dropped(1, 12, 4096, 0.5));
}

TEST(CounterDropout, EvenAndOddElementsAreDroppedAtRateP) {
  const int64_t n = 200000;
  const std::vector<float> x = dropped(2, 5, n, 0.1);
  int64_t zeros[2] = {0, 0};
  for (int64_t i = 0; i < n; ++i)
    if (x[i] == 0.0f) ++zeros[i % 2];
    else ASSERT_FLOAT_EQ(x[i], 1.0f / 0.9f);
  // Each half: 100,000 Bernoulli(0.1) draws, sd 0.00095; 5 sd.
  EXPECT_NEAR(zeros[0] / 100000.0, 0.1, 0.005);
  EXPECT_NEAR(zeros[1] / 100000.0, 0.1, 0.005);
}

TEST(CounterDropout, FastKernelEqualsItsTwinOnEveryTarget) {
  const int64_t n = 3 * 8192 + 37;
  for (const std::string& target : simd_targets()) {
    force_simd_target(target);
    std::vector<float> x(n), mask(n), x_ref(n), mask_ref(n);
    for (int64_t i = 0; i < n; ++i) x[i] = x_ref[i] = 0.5f + float(i % 7);
    dropout_forward<float>(0x0123456789ABCDEFull, 0.2, x.data(), mask.data(), n);
    dropout_forward_ref<float>(0x0123456789ABCDEFull, 0.2, x_ref.data(), mask_ref.data(), n);
    EXPECT_EQ(x, x_ref) << target;
    EXPECT_EQ(mask, mask_ref) << target;
  }
  force_simd_target("");
}

// The fused residual pass: the same mask and x as dropout_forward, out = residual + x exactly, on
// every SIMD target and for double; the module's forward_add too, also when inactive.
TEST(CounterDropout, ForwardAddIsDropoutThenTheResidualSum) {
  const int64_t n = 3 * 8192 + 37;
  std::vector<float> residual(n);
  for (int64_t i = 0; i < n; ++i) residual[i] = -3.0f + 0.001f * float(i % 4001);
  for (const std::string& target : simd_targets()) {
    force_simd_target(target);
    std::vector<float> x(n), mask(n), out(n, -1.0f), x_ref(n), mask_ref(n);
    for (int64_t i = 0; i < n; ++i) x[i] = x_ref[i] = 0.5f + float(i % 7);
    dropout_forward_add<float>(0x0123456789ABCDEFull, 0.2, x.data(), mask.data(), residual.data(),
                               out.data(), n);
    dropout_forward_ref<float>(0x0123456789ABCDEFull, 0.2, x_ref.data(), mask_ref.data(), n);
    EXPECT_EQ(x, x_ref) << target;
    EXPECT_EQ(mask, mask_ref) << target;
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += out[i] != residual[i] + x_ref[i];
    EXPECT_EQ(bad, 0) << target;
  }
  force_simd_target("");
  std::vector<double> xd(999, 2.0), maskd(999), rd(999, 0.5), outd(999);
  dropout_forward_add<double>(42, 0.5, xd.data(), maskd.data(), rd.data(), outd.data(), 999);
  for (int i = 0; i < 999; ++i) EXPECT_EQ(outd[i], 0.5 + xd[i]);
  for (bool training : {true, false}) {
    Dropout<double> drop(0.3);
    Rng rng(3);
    std::vector<double> x(1001, 2.0), r(1001, 1.5), out(1001);
    drop.forward_add(x.data(), r.data(), out.data(), 1001, &rng, training);
    int dropped = 0;
    for (int i = 0; i < 1001; ++i) {
      EXPECT_DOUBLE_EQ(out[i], 1.5 + x[i]);
      dropped += x[i] == 0.0;
    }
    if (training) {
      EXPECT_GT(dropped, 200);  // p = 0.3 of 1,001
    } else {
      EXPECT_EQ(dropped, 0);
    }
  }
}

// The identity case (not training, or p = 0): out = residual + x exactly, on every SIMD target,
// with a tail that fills no whole vector, for float through the module and for double.
TEST(CounterDropout, InactiveForwardAddIsTheResidualSumOnEveryTarget) {
  const int64_t n = 2 * (int64_t{1} << 14) + 29;  // several parallel chunks and a tail
  std::vector<float> residual(n), x(n);
  for (int64_t i = 0; i < n; ++i) {
    residual[i] = -3.0f + 0.001f * float(i % 4001);
    x[i] = 0.37f * float(i % 13) - 1.0f;
  }
  for (const std::string& target : simd_targets()) {
    force_simd_target(target);
    for (double p : {0.0, 0.3}) {
      Dropout<float> drop(p);
      std::vector<float> out(n, -1.0f), x_copy = x;
      drop.forward_add(x_copy.data(), residual.data(), out.data(), n, nullptr, /*training=*/false);
      int bad = 0;
      for (int64_t i = 0; i < n; ++i) bad += out[i] != residual[i] + x[i];
      EXPECT_EQ(bad, 0) << target << ", p " << p;
      EXPECT_EQ(x_copy, x) << target;  // x untouched
    }
  }
  force_simd_target("");
  std::vector<double> rd(1003, 0.25), xd(1003, 2.5), outd(1003);
  residual_add<double>(rd.data(), xd.data(), outd.data(), 1003);
  EXPECT_EQ(outd, std::vector<double>(1003, 2.75));
}

TEST(CounterDropout, BackwardAppliesTheSameMask) {
  Dropout<double> drop(0.3);
  Rng rng(3);
  std::vector<double> x(1001, 2.0), dy(1001, 1.0);
  drop.forward(x.data(), 1001, &rng, true);
  drop.backward(dy.data(), 1001);
  for (int i = 0; i < 1001; ++i) EXPECT_DOUBLE_EQ(dy[i], x[i] / 2.0);
}

}  // namespace
}  // namespace scalelab
