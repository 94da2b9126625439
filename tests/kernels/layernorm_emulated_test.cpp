// Emulated LayerNorm: matches the exact result within the format's tolerance, and the variance
// sum overflows f16 when accumulated in the format but not in f32.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/layernorm_emulated.hpp"

namespace scalelab {
namespace {

// max|y - exact| over rows, per format (values of y are O(1), so this is a relative error).
double tolerance(DType dtype) { return dtype == DType::f32 ? 1e-5 : dtype == DType::f16 ? 8e-3 : 6e-2; }

// Exact LayerNorm (or RMSNorm) in double of the format-rounded x.
std::vector<double> exact(const std::vector<float>& x, int64_t rows, int64_t cols, DType dt,
                          const std::vector<float>& gamma, const std::vector<float>& beta,
                          bool rms, double eps) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mean += round_to(dt, x[r * cols + j]);
    mean = rms ? 0 : mean / cols;
    for (int64_t j = 0; j < cols; ++j) var += std::pow(round_to(dt, x[r * cols + j]) - mean, 2);
    const double rstd = 1 / std::sqrt(var / cols + eps);
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = (round_to(dt, x[r * cols + j]) - mean) * rstd * gamma[j] + (rms ? 0 : beta[j]);
  }
  return y;
}

struct Row {
  std::vector<float> x, gamma, beta;
  Row(int64_t rows, int64_t cols, double mean, double sd, uint64_t seed) {
    Rng rng(seed);
    for (int64_t i = 0; i < rows * cols; ++i) x.push_back(static_cast<float>(rng.normal(mean, sd)));
    for (int64_t j = 0; j < cols; ++j) {
      gamma.push_back(static_cast<float>(round_to(DType::bf16, rng.uniform(0.5, 1.5))));
      beta.push_back(static_cast<float>(round_to(DType::bf16, rng.uniform(-0.5, 0.5))));
    }
  }
};

TEST(LayerNormEmulated, CloseToExactInEveryFormat) {
  Row in(8, 96, 0.5, 2.0, 1);
  for (bool rms : {false, true})
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      NormShape s{8, 96, 1e-5};
      EmulatedNormOptions opt{dt, DType::f32, rms};
      std::vector<float> y(in.x.size());
      OverflowCounters c;
      layernorm_emulated_forward(s, opt, in.x.data(), in.gamma.data(), in.beta.data(), y.data(), c);
      const std::vector<double> ref = exact(in.x, 8, 96, dt, in.gamma, in.beta, rms, 1e-5);
      double err = 0;
      for (size_t i = 0; i < y.size(); ++i) err = std::max(err, std::abs(y[i] - ref[i]));
      EXPECT_LE(err, tolerance(dt)) << dtype_name(dt) << " rms " << rms;
      EXPECT_EQ(c.total_overflow() + c.total_nan(), 0);
      EXPECT_EQ(c[PrecisionOp::layernorm_sum].results, rms ? 0 : 8 * (96 + 1));
    }
}

// d = 4096 with |x - mean| about 5: sum of squares about 102400 > 65504 (claim E6).
TEST(LayerNormEmulated, VarianceSumOverflowsF16OnlyWhenAccumulatedInFormat) {
  const int64_t d = 4096;
  Row in(2, d, 0.0, 5.0, 2);
  NormShape s{2, d, 1e-5};
  std::vector<float> y(in.x.size());
  OverflowCounters in_f32, in_format;
  layernorm_emulated_forward(s, {DType::f16, DType::f32, false}, in.x.data(), in.gamma.data(),
                             in.beta.data(), y.data(), in_f32);
  EXPECT_EQ(in_f32.total_overflow(), 0);
  const std::vector<double> ref = exact(in.x, 2, d, DType::f16, in.gamma, in.beta, false, 1e-5);
  double err = 0;
  for (size_t i = 0; i < y.size(); ++i) err = std::max(err, std::abs(y[i] - ref[i]));
  EXPECT_LE(err, tolerance(DType::f16));
  layernorm_emulated_forward(s, {DType::f16, DType::f16, false}, in.x.data(), in.gamma.data(),
                             in.beta.data(), y.data(), in_format);
  EXPECT_GE(in_format[PrecisionOp::layernorm_var].overflow, 2);  // once per row
  EXPECT_EQ(in_format[PrecisionOp::layernorm_sum].overflow, 0);
  // var = inf, rstd = 0: the row collapses to beta.
  EXPECT_EQ(y[5], in.beta[5]);
  // A mean sum of 4096 · 20 = 81920 overflows f16 in-format too.
  std::vector<float> big(d, 20.0f);
  OverflowCounters c;
  NormShape one{1, d, 1e-5};
  layernorm_emulated_forward(one, {DType::f16, DType::f16, false}, big.data(), in.gamma.data(),
                             in.beta.data(), y.data(), c);
  EXPECT_EQ(c[PrecisionOp::layernorm_sum].overflow, 1);
}

TEST(LayerNormEmulated, RejectsMixedAccumulation) {
  Row in(1, 4, 0, 1, 3);
  std::vector<float> y(4);
  OverflowCounters c;
  EXPECT_THROW(layernorm_emulated_forward({1, 4, 1e-5}, {DType::f16, DType::bf16, false},
                                          in.x.data(), in.gamma.data(), in.beta.data(), y.data(), c),
               Error);
}

}  // namespace
}  // namespace scalelab
