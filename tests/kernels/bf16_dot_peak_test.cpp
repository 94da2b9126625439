// kernels/bf16_dot_peak: the vdpbf16ps loop does the arithmetic it claims, and is refused where the
// processor or SCALELAB_SIMD rules it out.
#include "scalelab/kernels/bf16_dot_peak.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "scalelab/core/cpu.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

namespace scalelab {
namespace {

// 24 chains × 16 lanes; chain i starts at i/8 and gains 2⁻⁹ per round.
double expected_checksum(int64_t rounds) {
  double sum = 0;
  for (int i = 0; i < 24; ++i) sum += 16.0 * (i / 8.0 + static_cast<double>(rounds) / 512.0);
  return sum;
}

TEST(Bf16DotPeak, AvailableExactlyWhereTheProcessorHasAvx512Bf16) {
  EXPECT_EQ(bf16_dot_peak_available(),
            detect_cpu().has("avx512bf16") && simd_target().rfind("AVX3", 0) == 0);
}

TEST(Bf16DotPeak, EveryInstructionAddsTwoProductsPerLane) {
  if (!bf16_dot_peak_available()) GTEST_SKIP() << "no avx512bf16 here";
  for (int64_t rounds : {0, 1, 7, 1000, 100000}) {
    const Bf16DotPeakRun run = bf16_dot_peak_run(rounds);
    EXPECT_EQ(run.checksum, expected_checksum(rounds)) << rounds << " rounds";
    EXPECT_EQ(run.flops, 2.0 * 32 * 24 * static_cast<double>(rounds));
  }
}

TEST(Bf16DotPeak, RefusedUnderAnAvx2Cap) {
  const std::vector<std::string> targets = simd_targets();
  if (std::find(targets.begin(), targets.end(), "AVX2") == targets.end()) GTEST_SKIP() << "no AVX2";
  force_simd_target("AVX2");
  EXPECT_FALSE(bf16_dot_peak_available());
  try {
    bf16_dot_peak_run(1);
    ADD_FAILURE() << "no error under an AVX2 cap";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("AVX2"), std::string::npos) << e.what();
  }
  force_simd_target("");
}

TEST(Bf16DotPeak, NegativeRoundsRefused) {
  if (!bf16_dot_peak_available()) GTEST_SKIP() << "no avx512bf16 here";
  EXPECT_THROW(bf16_dot_peak_run(-1), Error);
}

}  // namespace
}  // namespace scalelab
