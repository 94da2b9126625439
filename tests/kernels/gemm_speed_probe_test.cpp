// kernels/gemm_speed_probe: the rules that turn the measured bf16/f32 ratio into the matmul
// settings, at their thresholds; the probe's result is well-formed, measured once per process, and
// what parse_matmul_precision("auto") and the bf16 dispatch follow. (Its speeds are figures of the
// benchmarks, never asserted here.)
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/gemm_speed_probe.hpp"

namespace scalelab {
namespace {

TEST(GemmSpeedProbe, AutoPicksBf16FromOneAndAHalfTimesTheF32Speed) {
  EXPECT_EQ(auto_matmul_precision(1.5), MatmulPrecision::bf16);
  EXPECT_EQ(auto_matmul_precision(std::nextafter(1.5, 0.0)), MatmulPrecision::f32);
  EXPECT_EQ(auto_matmul_precision(2.0), MatmulPrecision::bf16);
  EXPECT_EQ(auto_matmul_precision(1.2), MatmulPrecision::f32);
  EXPECT_EQ(auto_matmul_precision(0.0), MatmulPrecision::f32);  // bf16 did not run
  EXPECT_EQ(auto_matmul_precision(std::numeric_limits<double>::quiet_NaN()), MatmulPrecision::f32);
}

TEST(GemmSpeedProbe, Bf16SettingUsesOneDnnBf16OnlyWhenNotSlower) {
  EXPECT_TRUE(bf16_matmul_pays(1.0));
  EXPECT_FALSE(bf16_matmul_pays(std::nextafter(1.0, 0.0)));
  EXPECT_TRUE(bf16_matmul_pays(1.4));  // "bf16" asked for explicitly: faster is enough
  EXPECT_FALSE(bf16_matmul_pays(0.0));
  EXPECT_FALSE(bf16_matmul_pays(std::numeric_limits<double>::quiet_NaN()));
}

TEST(GemmSpeedProbe, MeasuresOnceAndTheSettingsFollowIt) {
  const MatmulSpeedProbe& p = measured_matmul_speed();
  EXPECT_EQ(&p, &measured_matmul_speed());  // once per process
  EXPECT_EQ(p.m, 512);
  EXPECT_EQ(p.n, 1024);
  EXPECT_EQ(p.k, 256);
  EXPECT_TRUE(std::isfinite(p.f32_gflops));
  EXPECT_GT(p.f32_gflops, 0.0);
  if (p.bf16_unavailable.empty()) {
    EXPECT_TRUE(std::isfinite(p.bf16_gflops));
    EXPECT_GT(p.bf16_gflops, 0.0);
    EXPECT_DOUBLE_EQ(p.bf16_over_f32(), p.bf16_gflops / p.f32_gflops);
  } else {
    EXPECT_EQ(p.bf16_gflops, 0.0) << p.bf16_unavailable;
    EXPECT_EQ(p.bf16_over_f32(), 0.0);
  }
  std::cout << "probe: f32 " << p.f32_gflops << " GFLOP/s, bf16 " << p.bf16_gflops << " GFLOP/s "
            << p.bf16_unavailable << "\n";
  EXPECT_EQ(parse_matmul_precision("auto"), auto_matmul_precision(p.bf16_over_f32()));
  EXPECT_EQ(bf16_matmul_uses_hardware(), bf16_matmul_pays(p.bf16_over_f32()));
}

TEST(GemmSpeedProbe, ARatioOfNothingIsZero) {
  MatmulSpeedProbe p;
  EXPECT_EQ(p.bf16_over_f32(), 0.0);
  p.f32_gflops = 100, p.bf16_gflops = 150;
  EXPECT_DOUBLE_EQ(p.bf16_over_f32(), 1.5);
  EXPECT_EQ(auto_matmul_precision(p.bf16_over_f32()), MatmulPrecision::bf16);
}

}  // namespace
}  // namespace scalelab
