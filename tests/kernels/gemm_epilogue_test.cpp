// gemm_bias_act (kernels/gemm.hpp): C = act(op(A) op(B) + bias) [· (a > 0)], the bias, the ReLU
// and the ReLU-gradient mask fused with each f32 library's GEMM (oneDNN's matmul and scalelab's
// packed GEMM), against its twin gemm_bias_act_ref (gemm_ref, then the bias and the ReLU in
// plain loops) and against a long-double product. Every float path: f32 at 1 and 2 threads (the
// banded split), bf16 through oneDNN's bf16 kernel (where the processor has it) and bf16 rounded
// into the f32 matmul, each on the operands rounded to bf16 for the twin; all four transposes,
// dense and strided operands, with and without bias, with and without the ReLU; the cached
// primitive of one shape reused with other data; NaN kept by the ReLU; k = 0.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/bf16_convert.hpp"
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {
namespace {

enum class Path { f32, bf16_hardware, bf16_rounded_f32 };

void run_path(Path p, const GemmShape& s, const float* a, const float* b, float* c,
              const GemmEpilogue<float>& e) {
  switch (p) {
    case Path::f32: return gemm_bias_act<float>(s, a, b, c, e);
    case Path::bf16_hardware: return detail::gemm_bf16_hardware(s, a, b, c, 1.0f, 0.0f, e);
    case Path::bf16_rounded_f32: return detail::gemm_bf16_rounded_f32(s, a, b, c, 1.0f, 0.0f, e);
  }
}

struct Case {
  int64_t m, n, k;
  bool trans_a, trans_b, strided, bias, relu, mask;
};

// Max over C of |got - twin| / (sum_p |a b| + |bias| + 1e-30), and whether anything outside C's
// columns (the padding of a strided C) was written.
double worst_error(Path path, const Case& c, uint64_t seed, bool* wrote_outside) {
  Rng rng(seed);
  const int64_t pad = c.strided ? 3 : 0;
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = c.n + pad;
  std::vector<float> A(a_rows * lda), B(b_rows * ldb), bias(c.n), keep(c.m * c.n);
  for (float& v : A) v = static_cast<float>(rng.normal(0, 1));
  for (float& v : B) v = static_cast<float>(rng.normal(0, 1));
  for (float& v : bias) v = static_cast<float>(rng.normal(0, 2));
  for (size_t i = 0; i < keep.size(); ++i)  // a ReLU's output: zeros where it clamped, and a NaN
    keep[i] = i % 3 == 0 ? 0.0f : i % 17 == 5 ? std::numeric_limits<float>::quiet_NaN()
                                              : static_cast<float>(rng.normal(0, 1));
  const bool bf16 = path != Path::f32;
  std::vector<float> Ar = A, Br = B;  // the operands the twin multiplies
  if (bf16) {
    round_row_to_bf16(A.data(), int64_t(A.size()), Ar.data());
    round_row_to_bf16(B.data(), int64_t(B.size()), Br.data());
  }
  const GemmShape s{.m = c.m, .n = c.n, .k = c.k, .trans_a = c.trans_a, .trans_b = c.trans_b,
                    .lda = lda, .ldb = ldb, .ldc = ldc};
  const GemmEpilogue<float> e{.bias = c.bias ? bias.data() : nullptr, .relu = c.relu,
                              .keep_where_positive = c.mask ? keep.data() : nullptr};
  constexpr float kSentinel = -777.125f;
  std::vector<float> got(c.m * ldc, kSentinel), twin(c.m * ldc, kSentinel);
  run_path(path, s, A.data(), B.data(), got.data(), e);
  gemm_bias_act_ref<float>(s, Ar.data(), Br.data(), twin.data(), e);
  double worst = 0;
  *wrote_outside = false;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= c.n) {
        *wrote_outside |= got[i * ldc + j] != kSentinel;
        continue;
      }
      long double magnitude = c.bias ? std::fabs(bias[j]) : 0.0L, exact = c.bias ? bias[j] : 0.0L;
      for (int64_t p = 0; p < c.k; ++p) {
        const float av = c.trans_a ? Ar[p * lda + i] : Ar[i * lda + p];
        const float bv = c.trans_b ? Br[j * ldb + p] : Br[p * ldb + j];
        magnitude += std::fabs((long double)av * bv);
        exact += (long double)av * bv;
      }
      if (c.relu && exact < 0) exact = 0;
      if (c.mask && !(keep[i * c.n + j] > 0)) exact = 0;  // NaN in the mask: not positive
      const double norm = double(magnitude) + 1e-30;
      worst = std::max(worst, std::fabs(got[i * ldc + j] - twin[i * ldc + j]) / norm);
      worst = std::max(worst, std::fabs(got[i * ldc + j] - double(exact)) / norm);
      if (c.relu) {
        EXPECT_GE(got[i * ldc + j], 0.0f);
      }
    }
  }
  return worst;
}

bool path_available(Path p) { return p != Path::bf16_hardware || bf16_matmul_in_hardware(); }

// A path and the f32 library behind it (the bf16 hardware path is oneDNN's bf16 matmul only).
struct PathOn {
  Path path;
  GemmLibrary library;
};

class GemmEpilogueGrid : public ::testing::TestWithParam<PathOn> {};

TEST_P(GemmEpilogueGrid, MatchesTwinAndLongDoubleProduct) {
  const Path path = GetParam().path;
  const ScopedGemmLibrary library(GetParam().library);
  if (!path_available(path)) GTEST_SKIP() << "no bf16 matmul hardware on this processor";
  int cases = 0;
  for (int threads : {1, 2}) {
    const ScopedNumThreads scoped(threads);
    for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 1, 1}, {3, 5, 7}, {17, 64, 33}, {130, 96, 64}, {256, 257, 40}, {300, 40, 300},
             {40, 200, 70}, {40, 70, 260}})  // the last two: two column bands of 100 and
                                                 // (deep enough for bands of 32) of 35
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool strided : {false, true})
            for (bool bias : {false, true})
              for (bool relu : {false, true})
              for (bool mask : {false, true}) {
                const Case c{m, n, k, ta, tb, strided, bias, relu, mask};
                bool outside = false;
                const double worst = worst_error(path, c, 1000 + cases, &outside);
                EXPECT_LE(worst, 1e-5) << "m=" << m << " n=" << n << " k=" << k << " ta=" << ta
                                       << " tb=" << tb << " strided=" << strided << " bias="
                                       << bias << " relu=" << relu << " mask=" << mask << " threads=" << threads;
                EXPECT_FALSE(outside) << "wrote outside C, m=" << m << " n=" << n;
                ++cases;
              }
  }
  EXPECT_EQ(cases, 2 * 8 * 64);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, GemmEpilogueGrid,
    ::testing::Values(PathOn{Path::f32, GemmLibrary::onednn}, PathOn{Path::f32, GemmLibrary::packed},
                      PathOn{Path::bf16_hardware, GemmLibrary::onednn},
                      PathOn{Path::bf16_rounded_f32, GemmLibrary::onednn},
                      PathOn{Path::bf16_rounded_f32, GemmLibrary::packed}),
    [](const auto& info) {
      const Path p = info.param.path;
      return std::string(p == Path::f32 ? "f32" : p == Path::bf16_hardware ? "bf16_hardware" : "bf16_rounded_f32") +
             "_" + (info.param.library == GemmLibrary::packed ? "packed" : "onednn");
    });

// The primitive of a shape is cached with its memory objects; a second call with other operands,
// bias and output buffers must use those, not the first call's.
TEST(GemmEpilogue, CachedPrimitiveTakesEachCallsBuffers) {
  const GemmShape s{.m = 4, .n = 3, .k = 2};
  std::vector<float> a1(8, 1.0f), b1(6, 1.0f), bias1(3, 10.0f), c1(12, 0.0f);
  std::vector<float> a2(8, 2.0f), b2(6, 3.0f), bias2(3, -100.0f), c2(12, 0.0f);
  gemm_bias_act<float>(s, a1.data(), b1.data(), c1.data(), {.bias = bias1.data()});
  gemm_bias_act<float>(s, a2.data(), b2.data(), c2.data(), {.bias = bias2.data()});
  for (float v : c1) EXPECT_EQ(v, 12.0f);           // 1*1*2 + 10
  for (float v : c2) EXPECT_EQ(v, 2 * 3 * 2 - 100.0f);  // 12 - 100
  gemm_bias_act<float>(s, a2.data(), b2.data(), c2.data(), {.bias = bias2.data(), .relu = true});
  for (float v : c2) EXPECT_EQ(v, 0.0f);
  gemm_bias_act<float>(s, a1.data(), b1.data(), c1.data(), {});  // no bias: the plain product
  for (float v : c1) EXPECT_EQ(v, 2.0f);
}

// NaN in an input row reaches its outputs through the ReLU (never silently zeroed, as oneDNN's
// eltwise_relu post-op would: the trainer's non-finite guard must see it); the other rows are clamped as usual; k = 0 gives act(bias).
TEST(GemmEpilogue, ReluKeepsNaNAndKZeroGivesTheActivatedBias) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const GemmShape s{.m = 2, .n = 3, .k = 2};
  const std::vector<float> a = {nan, 1.0f, -1.0f, -1.0f}, b = {1, 1, 1, 1, 1, 1};
  const std::vector<float> bias = {0.5f, 1.0f, 5.0f};
  for (auto [path, library] : {std::pair{Path::f32, GemmLibrary::onednn}, std::pair{Path::f32, GemmLibrary::packed},
                                std::pair{Path::bf16_rounded_f32, GemmLibrary::onednn},
                                std::pair{Path::bf16_rounded_f32, GemmLibrary::packed}}) {
    const ScopedGemmLibrary scoped(library);
    std::vector<float> c(6, 0.0f);
    run_path(path, s, a.data(), b.data(), c.data(), {.bias = bias.data(), .relu = true});
    for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(c[j])) << "column " << j;
    EXPECT_EQ(c[3], 0.0f);  // -2 + 0.5
    EXPECT_EQ(c[4], 0.0f);  // -2 + 1
    EXPECT_EQ(c[5], 3.0f);  // -2 + 5
  }
  std::vector<float> c(6, nan);  // k = 0: C is not read
  gemm_bias_act<float>({.m = 2, .n = 3, .k = 0}, nullptr, nullptr, c.data(),
                       {.bias = bias.data(), .relu = true});
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.0f, 5.0f, 0.5f, 1.0f, 5.0f}));
}

}  // namespace
}  // namespace scalelab
