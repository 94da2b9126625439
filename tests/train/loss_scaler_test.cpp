// Dynamic loss scaling: the schedule (back-off, skip, growth), detection, and what it buys in f16.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/train/loss_scaler.hpp"

namespace scalelab {
namespace {

TEST(LossScaler, StartsAt2To15AndHalvesAndSkipsOnOverflow) {
  DynamicLossScaler s;
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_FALSE(s.update(true));
  EXPECT_EQ(s.scale(), 16384.0);
  EXPECT_FALSE(s.update(true));
  EXPECT_EQ(s.scale(), 8192.0);
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 8192.0);
  EXPECT_EQ(s.skipped_steps(), 2);
  EXPECT_EQ(s.steps(), 3);
}

TEST(LossScaler, DoublesAfterGrowthIntervalCleanStepsInARow) {
  LossScalerOptions o;
  o.growth_interval = 3;
  o.initial_scale = 4;
  DynamicLossScaler s(o);
  EXPECT_TRUE(s.update(false));
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 4.0);
  EXPECT_TRUE(s.update(false));
  EXPECT_EQ(s.scale(), 8.0);  // third clean step in a row
  EXPECT_EQ(s.clean_steps_in_a_row(), 0);
  s.update(false), s.update(false);
  EXPECT_FALSE(s.update(true));  // the run is broken: back to 4, count restarts
  EXPECT_EQ(s.scale(), 4.0);
  s.update(false), s.update(false);
  EXPECT_EQ(s.scale(), 4.0);
  s.update(false);
  EXPECT_EQ(s.scale(), 8.0);
}

TEST(LossScaler, GrowthStopsAtMaxAndUnderflowBelowMinIsAnError) {
  LossScalerOptions o;
  o.initial_scale = 2, o.max_scale = 4, o.min_scale = 1, o.growth_interval = 1;
  DynamicLossScaler s(o);
  for (int i = 0; i < 5; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 4.0);
  s.update(true), s.update(true);
  EXPECT_EQ(s.scale(), 1.0);
  EXPECT_THROW(s.update(true), Error);
  o.backoff_factor = 1.5;
  EXPECT_THROW(DynamicLossScaler{o}, Error);
  o.backoff_factor = 0.5, o.growth_interval = 0;
  EXPECT_THROW(DynamicLossScaler{o}, Error);
}

TEST(LossScaler, DetectsInfAndNanAndUnscales) {
  std::vector<float> g = {1.0f, -2.0f, 0.0f, 3e38f};
  EXPECT_FALSE(DynamicLossScaler::has_overflow(g.data(), 4));
  g[2] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(DynamicLossScaler::has_overflow(g.data(), 4));
  g[2] = std::nanf("");
  EXPECT_TRUE(DynamicLossScaler::has_overflow(g.data(), 4));
  g[2] = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(DynamicLossScaler::has_overflow(g.data(), 4));
  DynamicLossScaler s;
  std::vector<float> h = {32768.0f, -65536.0f};
  s.unscale(h.data(), 2);
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
}

// Claim B4 in miniature: a gradient of 1e-8 vanishes in f16 (below 2^-25) unless scaled; with
// 2^15 it survives. A gradient of 4 overflows at 2^15 (131072 > 65504), and the scaler backs off.
TEST(LossScaler, ScalingRescuesF16UnderflowAndBacksOffFromOverflow) {
  OverflowCounters c;
  EXPECT_EQ(round_counted(DType::f16, 1e-8, PrecisionOp::loss_scale, &c), 0.0f);
  EXPECT_EQ(c[PrecisionOp::loss_scale].underflow, 1);
  DynamicLossScaler s;
  const float scaled = round_counted(DType::f16, 1e-8 * s.scale(), PrecisionOp::loss_scale, &c);
  EXPECT_GT(scaled, 0.0f);
  EXPECT_NEAR(scaled / s.scale(), 1e-8, 1e-10);
  // A gradient of 4 at scale 2^15 is 131072 > 65504: overflow, skip, halve until it fits.
  int skipped = 0;
  while (true) {
    float g = round_counted(DType::f16, 4.0 * s.scale(), PrecisionOp::loss_scale, &c);
    if (s.update(DynamicLossScaler::has_overflow(&g, 1))) break;
    ++skipped;
  }
  EXPECT_EQ(skipped, 2);  // 2^15 -> 2^14 -> 2^13: 4 · 2^13 = 32768 fits
  EXPECT_EQ(s.scale(), 8192.0);
}

}  // namespace
}  // namespace scalelab
