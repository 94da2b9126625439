// kernels/simd_dispatch: one list of targets, one override (SCALELAB_SIMD) for Highway and oneDNN.
#include "scalelab/kernels/simd_dispatch.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {
namespace {

TEST(SimdDispatch, BestTargetFirst) {
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(simd_target(), targets.front());
}

TEST(SimdDispatch, OneDnnCapFollowsTheHighwayTarget) {
  EXPECT_EQ(onednn_isa_for("AVX3_SPR"), "all");
  EXPECT_EQ(onednn_isa_for("AVX3_ZEN4"), "avx512_core_bf16");
  EXPECT_EQ(onednn_isa_for("AVX3"), "avx512_core");
  EXPECT_EQ(onednn_isa_for("AVX2"), "avx2");
  EXPECT_EQ(onednn_isa_for("SSE4"), "sse41");
  EXPECT_EQ(onednn_isa_for("best"), "all");
}

TEST(SimdDispatch, ForcingAnUnknownTargetNamesTheAllowedOnes) {
  try {
    force_simd_target("AVX9000");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("AVX9000"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(simd_targets().front()), std::string::npos);
  }
  force_simd_target("");
  EXPECT_EQ(simd_target(), simd_targets().front());
}

// The environment is read once per process: each case runs in a forked child.
[[noreturn]] void run_under_lowest_target(const std::string& lowest) {
  setenv("SCALELAB_SIMD", lowest.c_str(), 1);
  apply_simd_environment();
  // A GEMM runs under the cap (oneDNN accepts it only before its first primitive).
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {};
  gemm<float>(GemmShape{.m = 2, .n = 2, .k = 2}, a, b, c);
  const bool onednn_capped =
      gemm_backend_description().find("ISA " + onednn_isa_for(lowest)) != std::string::npos;
  std::exit(simd_target() == lowest && onednn_capped && c[3] == 4.0f ? 0 : 1);
}

[[noreturn]] void run_with_bad_value() {
  setenv("SCALELAB_SIMD", "AVX9000", 1);
  try {
    apply_simd_environment();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::exit(3);
  }
  std::exit(0);
}

TEST(SimdDispatchDeathTest, EnvironmentOverrideSelectsTheTargetForEveryKernel) {
  EXPECT_EXIT(run_under_lowest_target(simd_targets().back()), ::testing::ExitedWithCode(0), "");
  if (simd_targets().size() > 1)  // the second best: AVX2 under AVX3 here, a cap oneDNN has too
    EXPECT_EXIT(run_under_lowest_target(simd_targets()[1]), ::testing::ExitedWithCode(0), "");
}

TEST(SimdDispatchDeathTest, BadEnvironmentValueIsOneClearError) {
  EXPECT_EXIT(run_with_bad_value(), ::testing::ExitedWithCode(3),
              "SCALELAB_SIMD = \"AVX9000\" is not a SIMD target.*allowed: best, ");
}

}  // namespace
}  // namespace scalelab
