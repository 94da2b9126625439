// Softmax-row statistics with known answers: a uniform row has normalised entropy 1 and Jacobian
// norm sqrt(1/n - 1/n²); a one-hot row is saturated with entropy 0 and Jacobian norm 0; the closed
// form of ||diag(p) - p pᵀ||_F equals the explicit matrix norm.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/probes/softmax_stats.hpp"

namespace scalelab::probes {
namespace {

TEST(SoftmaxRow, UniformRowHasNormalisedEntropyOne) {
  for (int n : {2, 3, 17, 1000}) {
    std::vector<double> p(n, 1.0 / n);
    const SoftmaxRow r = softmax_row_from_probs(p.data(), n);
    EXPECT_NEAR(r.normalized_entropy, 1.0, 1e-12) << n;
    EXPECT_NEAR(r.entropy, std::log(n), 1e-12) << n;
    EXPECT_NEAR(r.max_p, 1.0 / n, 1e-15);
    EXPECT_NEAR(r.jacobian_fro, std::sqrt(1.0 / n - 1.0 / (double(n) * n)), 1e-12) << n;
    // Equal logits give the same row.
    std::vector<double> s(n, 4.2), scratch;
    EXPECT_NEAR(softmax_row_from_logits(s.data(), n, scratch).normalized_entropy, 1.0, 1e-12);
  }
}

TEST(SoftmaxRow, OneHotRowIsSaturatedWithZeroEntropyAndJacobian) {
  std::vector<double> p(8, 0.0);
  p[3] = 1.0;
  const SoftmaxRow r = softmax_row_from_probs(p.data(), 8);
  EXPECT_EQ(r.entropy, 0.0);
  EXPECT_EQ(r.normalized_entropy, 0.0);
  EXPECT_EQ(r.max_p, 1.0);
  EXPECT_EQ(r.jacobian_fro, 0.0);
  SoftmaxAccumulator acc;
  acc.add(r);
  EXPECT_EQ(acc.saturated_rows, 1);
  // Huge logit gaps behave the same through the logits path (max subtracted: no overflow).
  std::vector<double> s{0, 0, 1e4, 0}, scratch;
  const SoftmaxRow q = softmax_row_from_logits(s.data(), 4, scratch);
  EXPECT_EQ(q.max_p, 1.0);
  EXPECT_NEAR(q.jacobian_fro, 0.0, 1e-300);
}

TEST(SoftmaxRow, JacobianClosedFormEqualsTheExplicitFrobeniusNorm) {
  Rng rng(5);
  for (int n : {1, 2, 5, 40}) {
    std::vector<double> s(n), scratch;
    for (double& v : s) v = rng.normal(0.0, 2.0);
    const SoftmaxRow r = softmax_row_from_logits(s.data(), n, scratch);
    const std::vector<double>& p = scratch;
    double fro = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double J = (i == j ? p[i] : 0.0) - p[i] * p[j];
        fro += J * J;
      }
    EXPECT_NEAR(r.jacobian_fro, std::sqrt(fro), 1e-12) << n;
    // The explicit entropy as well.
    double H = 0.0;
    for (double pj : p) H -= pj > 0 ? pj * std::log(pj) : 0.0;
    EXPECT_NEAR(r.entropy, H, 1e-12);
    if (n == 1) EXPECT_TRUE(std::isnan(r.normalized_entropy));
  }
}

TEST(SoftmaxAccumulator, ThresholdsAreStrictForSaturationAndSingleKeyRowsAreSetApart) {
  SoftmaxAccumulator acc;  // saturated: max p > 0.99; near-uniform: H/ln n >= 0.9
  std::vector<double> exactly{0.99, 0.01}, above{0.995, 0.005}, single{1.0}, flat{0.5, 0.5};
  for (auto* p : {&exactly, &above, &single, &flat})
    acc.add(softmax_row_from_probs(p->data(), static_cast<int64_t>(p->size())));
  EXPECT_EQ(acc.rows, 4);
  EXPECT_EQ(acc.single_key_rows, 1);  // p = (1) whatever the logits: not in any figure
  EXPECT_EQ(acc.saturated_rows, 1);   // `above` only: 0.99 itself is not > 0.99
  EXPECT_EQ(acc.normalized_entropy.count, 3);
  EXPECT_EQ(acc.max_p.count, 3);
  EXPECT_EQ(acc.jacobian_fro.count, 3);
  EXPECT_EQ(acc.near_uniform_rows, 1);
  EXPECT_DOUBLE_EQ(acc.saturated_share(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(acc.near_uniform_share(), 1.0 / 3.0);
  SoftmaxAccumulator other;
  other.thresholds.saturated = 0.9;
  EXPECT_THROW(acc.merge(other), Error);
}

}  // namespace
}  // namespace scalelab::probes
