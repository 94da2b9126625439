// MatmulPrecision::bf16 (kernels/gemm.hpp): a float GEMM with both operands rounded to bf16 and
// f32 sums. Both paths (oneDNN bf16 in hardware, and operands rounded into f32 buffers) and the
// dispatch through gemm<float> are checked against the twin: a long-double product of the
// operands rounded by f32_to_bf16_bits, over all transposes, dense and sub-block layouts and
// several alpha/beta. The tolerance is f32 summation error (normalised by |alpha| sum|ab| +
// |beta c|); to show the test sees the rounding at all, the same results must differ from the
// product of the unrounded operands by far more than that tolerance.
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/gemm_speed_probe.hpp"
#include "scalelab/kernels/precision.hpp"

namespace scalelab {
namespace {

constexpr double kSumTolerance = 1e-5;     // f32 accumulation over k <= 1024, any order
constexpr double kRoundingVisible = 1e-4;  // max normalised |bf16 - unrounded| must exceed this

enum class Path { hardware, rounded_f32, dispatch };
const char* path_name(Path p) {
  return p == Path::hardware ? "hardware" : p == Path::rounded_f32 ? "rounded_f32" : "dispatch";
}

using GemmFn = std::function<void(const GemmShape&, const float*, const float*, float*, float, float)>;
GemmFn path_fn(Path p) {
  switch (p) {
    case Path::hardware:
      return [](const GemmShape& s, const float* a, const float* b, float* c, float al, float be) {
        detail::gemm_bf16_hardware(s, a, b, c, al, be);
      };
    case Path::rounded_f32:
      return [](const GemmShape& s, const float* a, const float* b, float* c, float al, float be) {
        detail::gemm_bf16_rounded_f32(s, a, b, c, al, be);
      };
    default:
      return [](const GemmShape& s, const float* a, const float* b, float* c, float al, float be) {
        const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
        gemm<float>(s, a, b, c, al, be);
      };
  }
}

double bf16(float x) { return bf16_bits_to_f32(f32_to_bf16_bits(x)); }

struct Result {
  double worst_vs_twin = 0;       // max normalised |got - twin|
  double worst_vs_unrounded = 0;  // max normalised |got - product of unrounded operands|
  std::string problem;            // a write outside C, or a modified operand
};

Result run_case(Path path, bool ta, bool tb, bool sub, int64_t m, int64_t n, int64_t k,
                double alpha, double beta, uint64_t seed) {
  Rng rng(seed);
  const int64_t pad = sub ? 3 : 0;
  const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k, b_rows = tb ? n : k, b_cols = tb ? k : n;
  const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = n + pad;
  std::vector<float> A(a_rows * lda), B(b_rows * ldb), C(m * ldc);
  for (float& x : A) x = static_cast<float>(rng.normal());
  for (float& x : B) x = static_cast<float>(rng.normal());
  for (float& x : C) x = static_cast<float>(rng.normal());
  const std::vector<float> A0 = A, B0 = B, C0 = C;
  auto a_op = [&](int64_t i, int64_t q) { return ta ? A0[q * lda + i] : A0[i * lda + q]; };
  auto b_op = [&](int64_t q, int64_t j) { return tb ? B0[j * ldb + q] : B0[q * ldb + j]; };

  GemmShape s{m, n, k, ta, tb, sub ? lda : 0, sub ? ldb : 0, sub ? ldc : 0};
  path_fn(path)(s, A.data(), B.data(), C.data(), static_cast<float>(alpha), static_cast<float>(beta));

  Result r;
  if (A != A0 || B != B0) r.problem = "an operand was modified";
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= n) {
        if (C[i * ldc + j] != C0[i * ldc + j]) r.problem = "wrote outside the C block";
        continue;
      }
      long double twin = 0, exact = 0, mag = 0;
      for (int64_t q = 0; q < k; ++q) {
        twin += static_cast<long double>(bf16(a_op(i, q))) * bf16(b_op(q, j));
        exact += static_cast<long double>(a_op(i, q)) * b_op(q, j);
        mag += std::abs(static_cast<long double>(a_op(i, q)) * b_op(q, j));
      }
      const long double c0 = C0[i * ldc + j];
      const double scale = static_cast<double>(std::abs(alpha) * mag + std::abs(beta * c0)) + 1e-300;
      const double got = C[i * ldc + j];
      r.worst_vs_twin = std::max(r.worst_vs_twin,
                                 std::abs(got - static_cast<double>(alpha * twin + beta * c0)) / scale);
      r.worst_vs_unrounded = std::max(
          r.worst_vs_unrounded, std::abs(got - static_cast<double>(alpha * exact + beta * c0)) / scale);
    }
  }
  return r;
}

class GemmBf16 : public ::testing::TestWithParam<std::tuple<Path, bool, bool, bool>> {};

// oneDNN may have no bf16 matmul at all for the ISA in use (oneDNN 2.6 on AVX2; the dispatch
// never calls it there). Its bf16 matmul is tested wherever oneDNN has one for the ISA in use (the probe ran it),
// whether or not it is fast enough to be chosen.
bool path_available(Path p) {
  return p != Path::hardware || measured_matmul_speed().bf16_unavailable.empty();
}

TEST_P(GemmBf16, MatchesTwinOnRoundedOperands) {
  const auto [path, ta, tb, sub] = GetParam();
  if (!path_available(path)) GTEST_SKIP() << "oneDNN has no bf16 matmul here: " << measured_matmul_speed().bf16_unavailable;
  uint64_t seed = 1;
  double worst_twin = 0, worst_unrounded = 0;
  for (auto [m, n, k, alpha, beta] :
       {std::tuple{1, 1, 1, 1.0, 0.0}, std::tuple{7, 5, 33, 1.0, 0.0}, std::tuple{16, 33, 2, 0.5, 1.0},
        std::tuple{64, 48, 256, 1.0, 1.0}, std::tuple{130, 70, 300, -1.5, 0.25},
        std::tuple{33, 96, 17, 2.0, -1.0}}) {
    const Result r = run_case(path, ta, tb, sub, m, n, k, alpha, beta, seed++);
    EXPECT_TRUE(r.problem.empty()) << r.problem << " at m=" << m << " n=" << n << " k=" << k;
    EXPECT_LE(r.worst_vs_twin, kSumTolerance) << "m=" << m << " n=" << n << " k=" << k;
    worst_twin = std::max(worst_twin, r.worst_vs_twin);
    worst_unrounded = std::max(worst_unrounded, r.worst_vs_unrounded);
  }
  EXPECT_GT(worst_unrounded, kRoundingVisible) << "the operands do not look rounded to bf16";
  std::cout << "[ gemm bf16 ] " << path_name(path) << (ta ? " At" : " A") << (tb ? " Bt" : " B")
            << (sub ? " sub-block" : " dense") << ": worst vs twin " << worst_twin
            << ", vs unrounded " << worst_unrounded << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, GemmBf16,
    ::testing::Combine(::testing::Values(Path::hardware, Path::rounded_f32, Path::dispatch),
                       ::testing::Bool(), ::testing::Bool(), ::testing::Bool()));

// On 2 threads, oneDNN's bf16 matmul takes a weight gradient's shape (op(A) = Aᵀ with a small C
// over a deep k, or a column band of an untransposed B) in depth slices whose products are summed
// (kernels/gemm.cpp, in_bands): the split is what the shapes below take, and the sums match the
// twin, with alpha, beta, k not a multiple of the slices and a padded C. A C too large for the
// partial sums keeps its row bands, as does a product with an epilogue.
TEST(GemmBf16Threaded, DepthSlicesMatchTheTwin) {
  const ScopedNumThreads two(2);
  using detail::BandSplit;
  using detail::band_split;
  const auto split = [](int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
    return band_split(GemmShape{m, n, k, ta, tb}, false, /*dense_slices=*/true, false);
  };
  EXPECT_EQ(split(64, 64, 1024, true, false).axis, BandSplit::depth);   // dW[64, 64]: row bands of Aᵀ
  EXPECT_EQ(split(64, 256, 1024, true, false).axis, BandSplit::depth);  // dW[64, 256]: column bands of B
  EXPECT_EQ(split(64, 200, 512, false, false).axis, BandSplit::depth);
  EXPECT_EQ(split(512, 512, 2048, true, false).axis, BandSplit::rows);  // C of 256 Ki floats
  EXPECT_EQ(split(1024, 64, 64, false, true).axis, BandSplit::rows);    // a forward product: dense bands
  EXPECT_EQ(band_split(GemmShape{64, 64, 1024, true, false}, false, /*dense_slices=*/false, false).axis,
            BandSplit::rows);  // f32: rows
  EXPECT_EQ(band_split(GemmShape{64, 256, 1024, true, false}, false, true, /*has_epilogue=*/true).axis,
            BandSplit::columns);
  EXPECT_EQ(split(64, 64, 1024, true, false).bands, 2);
  {
    const ScopedNumThreads one(1);
    EXPECT_EQ(split(64, 64, 1024, true, false).bands, 1);
  }
  for (Path path : {Path::hardware, Path::dispatch}) {
    if (!path_available(path)) continue;
    uint64_t seed = 50;
    for (auto [m, n, k, ta, tb, sub, alpha, beta] :
         {std::tuple{64, 64, 1024, true, false, false, 1.0, 1.0},
          std::tuple{64, 256, 1001, true, false, true, -0.5, 0.25},
          std::tuple{96, 64, 700, true, false, false, 2.0, 0.0},
          std::tuple{64, 200, 512, false, false, true, 1.0, -1.0}}) {
      ASSERT_EQ(split(m, n, k, ta, tb).axis, BandSplit::depth) << m << " x " << n << " x " << k;
      const Result r = run_case(path, ta, tb, sub, m, n, k, alpha, beta, seed++);
      EXPECT_TRUE(r.problem.empty()) << r.problem << " at m=" << m << " n=" << n << " k=" << k;
      EXPECT_LE(r.worst_vs_twin, kSumTolerance) << path_name(path) << " m=" << m << " n=" << n << " k=" << k;
      EXPECT_GT(r.worst_vs_unrounded, kRoundingVisible) << "the operands do not look rounded to bf16";
    }
  }
}

TEST(GemmBf16Edge, KZeroScalesCAndBetaZeroIgnoresNaN) {
  for (Path p : {Path::hardware, Path::rounded_f32, Path::dispatch}) {
    if (!path_available(p)) continue;
    std::vector<float> c = {1, 2, 3, 4};
    path_fn(p)(GemmShape{2, 2, 0}, nullptr, nullptr, c.data(), 1.f, 0.5f);
    EXPECT_EQ(c, (std::vector<float>{0.5f, 1.f, 1.5f, 2.f})) << path_name(p);
    const std::vector<float> a(6, 1.f), b(6, 2.f);
    std::vector<float> nan_c(4, NAN);
    path_fn(p)(GemmShape{2, 2, 3}, a.data(), b.data(), nan_c.data(), 1.f, 0.f);
    EXPECT_EQ(nan_c, (std::vector<float>(4, 6.f))) << path_name(p);
  }
}

TEST(GemmBf16Edge, ScopedSettingRestoresAndParses) {
  EXPECT_EQ(matmul_precision(), MatmulPrecision::f32);
  {
    const ScopedMatmulPrecision outer(MatmulPrecision::bf16);
    EXPECT_EQ(matmul_precision(), MatmulPrecision::bf16);
    {
      const ScopedMatmulPrecision inner(MatmulPrecision::f32);
      EXPECT_EQ(matmul_precision(), MatmulPrecision::f32);
    }
    EXPECT_EQ(matmul_precision(), MatmulPrecision::bf16);
  }
  EXPECT_EQ(matmul_precision(), MatmulPrecision::f32);
  EXPECT_EQ(parse_matmul_precision("bf16"), MatmulPrecision::bf16);
  EXPECT_EQ(parse_matmul_precision("f32"), MatmulPrecision::f32);
  EXPECT_STREQ(matmul_precision_name(MatmulPrecision::bf16), "bf16");
  // "auto" resolves with this process's measured bf16/f32 ratio (the rule itself:
  // gemm_speed_probe_test.cpp).
  EXPECT_EQ(parse_matmul_precision("auto"),
            auto_matmul_precision(measured_matmul_speed().bf16_over_f32()));
  try {
    parse_matmul_precision("tf32");
    ADD_FAILURE() << "tf32 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"tf32\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"auto\""), std::string::npos) << e.what();
  }
}

// A product whose operands are exact in bf16 is computed exactly in every mode (the f32 sum of
// small integers is exact), so the setting changes nothing there.
TEST(GemmBf16Edge, ExactOperandsGiveTheF32Result) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {1, 1, 1, 1};
  const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
  gemm<float>(GemmShape{2, 2, 2}, a, b, c, 2.f, -1.f);
  EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{37, 43, 85, 99}));
}

// gemm_bf16_out: C kept only as bf16 bits. Against the twin (the long-double product of the
// rounded operands, + bias, ReLU, mask, then rounded once to bf16): within one rounding of bf16
// (2^-8 relative) plus f32 summation error, over the transposes, a C sub-block (the padding
// untouched), 1 and 2 threads (row bands); with small integers (exact products and sums) equal to
// the twin's bits, the ReLU and the mask included. Where copies are not kept it refuses.
TEST(GemmBf16Out, MatchesTheRoundedTwin) {
  const ScopedMatmulPrecision scoped(MatmulPrecision::bf16);
  if (!Bf16Copy::kept()) {
    EXPECT_THROW(gemm_bf16_out(GemmShape{2, 2, 2}, {nullptr, nullptr}, {nullptr, nullptr}, nullptr, {}), Error);
    GTEST_SKIP() << "oneDNN's bf16 matmul does not run on this CPU";
  }
  for (int threads : {1, 2})
    for (bool exact : {false, true})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          const ScopedNumThreads scoped_threads(threads);
          const int64_t m = 300, n = 37, k = 45, ldc = n + 5;
          Rng rng(11 + threads + 2 * ta + 4 * tb + 8 * exact);
          auto value = [&] {
            return exact ? static_cast<float>(static_cast<int>(rng.below(9)) - 4)
                         : static_cast<float>(rng.normal());
          };
          std::vector<float> A(m * k), B(k * n), bias(n);
          for (float& x : A) x = value();
          for (float& x : B) x = value();
          for (float& x : bias) x = value();
          std::vector<uint16_t> keep(m * n);
          for (uint16_t& x : keep) x = f32_to_bf16_bits(value());
          auto a_op = [&](int64_t i, int64_t q) { return ta ? A[q * m + i] : A[i * k + q]; };
          auto b_op = [&](int64_t q, int64_t j) { return tb ? B[j * k + q] : B[q * n + j]; };
          const GemmShape s{.m = m, .n = n, .k = k, .trans_a = ta, .trans_b = tb, .ldc = ldc};
          for (int variant = 0; variant < 3; ++variant) {  // bias; bias + ReLU; mask
            const GemmBf16Epilogue e{.bias = variant < 2 ? bias.data() : nullptr,
                                     .relu = variant == 1,
                                     .keep_where_positive = variant == 2 ? keep.data() : nullptr};
            std::vector<uint16_t> C(m * ldc, 0xABCD);
            gemm_bf16_out(s, {A.data(), nullptr}, {B.data(), nullptr}, C.data(), e);
            int wrong = 0, outside = 0;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < ldc; ++j) {
                if (j >= n) {
                  outside += C[i * ldc + j] != 0xABCD;
                  continue;
                }
                long double sum = 0, mag = 0;
                for (int64_t q = 0; q < k; ++q) {
                  const long double p = static_cast<long double>(bf16(a_op(i, q))) * bf16(b_op(q, j));
                  sum += p, mag += std::abs(p);
                }
                double want = static_cast<double>(sum) + (e.bias ? e.bias[j] : 0.0);
                if (e.relu && want < 0) want = 0;
                if (e.keep_where_positive && !(bf16_bits_to_f32(keep[i * n + j]) > 0)) want = 0;
                const uint16_t want_bits = f32_to_bf16_bits(static_cast<float>(want));
                const double got = bf16_bits_to_f32(C[i * ldc + j]);
                const double bound = exact ? 0.0
                                           : std::ldexp(std::abs(want), -8) +
                                                 kSumTolerance * static_cast<double>(mag + 1);
                wrong += exact ? C[i * ldc + j] != want_bits : std::abs(got - want) > bound;
              }
            const std::string where = "threads " + std::to_string(threads) + (exact ? " exact" : "") +
                                      " ta " + std::to_string(ta) + " tb " + std::to_string(tb) +
                                      " variant " + std::to_string(variant);
            EXPECT_EQ(wrong, 0) << where;
            EXPECT_EQ(outside, 0) << where << ": wrote outside the C block";
          }
        }
}

}  // namespace
}  // namespace scalelab
