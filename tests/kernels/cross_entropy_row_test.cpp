// kernels/cross_entropy_row against its plain twin on every compiled SIMD target: widths around
// the vector widths, small and wide logit spreads (exponentials that underflow), ties for the
// largest logit (the first index wins), -0 against +0, and rows holding NaN or infinities (handed
// to the twin: the same bits). The sums agree to 1e-14 relative and every gradient entry to one
// float ulp (plus 1e-14 of the gradient's scale where p - q cancels), the argmax exactly.
#include "scalelab/kernels/cross_entropy_row.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/kernels/simd_dispatch.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

constexpr double kScale = 1.0 / 37;  // the gradient's 1 / N

void expect_twin(const std::vector<float>& z, int32_t target, double smoothing,
                 const std::string& where) {
  const int64_t V = static_cast<int64_t>(z.size());
  std::vector<float> dz(z.size()), dz_twin(z.size());
  const CrossEntropyRow got = cross_entropy_row(z.data(), V, target, smoothing, kScale, dz.data());
  const CrossEntropyRow want =
      cross_entropy_row_plain(z.data(), V, target, smoothing, kScale, dz_twin.data());
  const CrossEntropyRow no_grad = cross_entropy_row(z.data(), V, target, smoothing, kScale, nullptr);
  const std::string at = where + ", V " + std::to_string(V) + ", target " + std::to_string(target);
  EXPECT_EQ(got.argmax, want.argmax) << at;
  EXPECT_EQ(no_grad.argmax, want.argmax) << at;
  if (std::isfinite(want.log_norm) && std::isfinite(want.sum_z)) {
    EXPECT_NEAR(got.log_norm, want.log_norm, 1e-14 * std::max(1.0, std::fabs(want.log_norm))) << at;
    EXPECT_NEAR(got.sum_z, want.sum_z, 1e-14 * std::max(1.0, std::fabs(want.sum_z))) << at;
    EXPECT_EQ(no_grad.log_norm, got.log_norm) << at;
    for (int64_t j = 0; j < V; ++j) {
      const float ulp = std::nextafter(std::fabs(dz_twin[j]), INFINITY) - std::fabs(dz_twin[j]);
      EXPECT_NEAR(dz[j], dz_twin[j], ulp + 1e-14 * kScale) << at << ", j " << j;
    }
  } else {  // a non-finite row: the twin ran, bit for bit
    EXPECT_EQ(std::memcmp(&got.log_norm, &want.log_norm, sizeof(double)), 0) << at;
    EXPECT_EQ(std::memcmp(&got.sum_z, &want.sum_z, sizeof(double)), 0) << at;
    EXPECT_EQ(std::memcmp(dz.data(), dz_twin.data(), dz.size() * sizeof(float)), 0) << at;
  }
}

TEST(CrossEntropyRow, EveryTargetMatchesPlainTwin) {
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const std::string& simd : targets) {
    force_simd_target(simd);
    for (int64_t V : {1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 100, 1000})
      for (double spread : {1.0, 30.0})
        for (double smoothing : {0.0, 0.1}) {
          const std::vector<float> z = testing::normals<float>(V, 3 + V, spread);
          for (int32_t target : {0, static_cast<int32_t>(V / 2), static_cast<int32_t>(V - 1)})
            expect_twin(z, target, smoothing, simd);
        }
  }
  force_simd_target("");
}

TEST(CrossEntropyRow, TiesNegativeZeroAndNonFiniteRowsAsTheTwin) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  const std::vector<std::vector<float>> rows = {
      std::vector<float>(40, 1.5f),                   // all tied: argmax 0
      {-1, 3, 2, 3, 3, -5, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 0},  // first of the tied 3s: 1
      {-0.0f, 0.0f, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16},
      {0.0f, -0.0f, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16},
      {nan, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18},  // twin: argmax 0
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, nan, 18},
      {1, 2, inf, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, inf},
      {1, -inf, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19},
  };
  for (const std::string& simd : simd_targets()) {
    force_simd_target(simd);
    for (size_t r = 0; r < rows.size(); ++r)
      expect_twin(rows[r], 1, 0.1, simd + ", row " + std::to_string(r));
  }
  force_simd_target("");
  // The ties' first index, and the NaN row's argmax as the twin's scan leaves it.
  EXPECT_EQ(cross_entropy_row(rows[1].data(), 19, 0, 0.0, 1.0, nullptr).argmax, 1);
  EXPECT_EQ(cross_entropy_row(rows[4].data(), 19, 0, 0.0, 1.0, nullptr).argmax, 0);
  EXPECT_EQ(cross_entropy_row(rows[6].data(), 19, 0, 0.0, 1.0, nullptr).argmax, 2);
}

// The values themselves, from the definition: z = (0, log 3), y = 1, e = 0.2:
// e = (1/3, 1) after subtracting m = log 3, S = 4/3, log_norm = log 4, p = (1/4, 3/4),
// q = (0.1, 0.9), dz = (p - q) · scale.
TEST(CrossEntropyRow, ValuesOfATwoClassRow) {
  const std::vector<float> z = {0.0f, static_cast<float>(std::log(3.0))};
  std::vector<float> dz(2);
  const CrossEntropyRow row = cross_entropy_row(z.data(), 2, 1, 0.2, 0.5, dz.data());
  EXPECT_EQ(row.argmax, 1);
  EXPECT_NEAR(row.log_norm, std::log(1.0 + std::exp(double(z[1]))), 1e-15);
  EXPECT_NEAR(row.sum_z, double(z[1]), 1e-15);
  EXPECT_NEAR(dz[0], (0.25 - 0.1) * 0.5, 1e-7);
  EXPECT_NEAR(dz[1], (0.75 - 0.9) * 0.5, 1e-7);
}

}  // namespace
}  // namespace scalelab
