// The attention probe on synthetic q and k with known answers: iid unit q, k give Var(q·k) = d_k
// and, after 1/sqrt(d_k), unit-variance logits with 99.7 % inside [-3, 3]; masks decide which
// pairs count; the softmax figures agree with the attention kernels' own online statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/attention.hpp"
#include "scalelab/probes/attention_probe.hpp"

namespace scalelab::probes {
namespace {

struct Qkv {
  AttentionShape shape;
  std::vector<float> q, k, v;
};

Qkv random_qkv(int64_t batch, int64_t heads, int64_t len, int64_t dk, uint64_t seed,
               double sd = 1.0) {
  Qkv x;
  x.shape = {.batch = batch, .heads = heads, .q_len = len, .k_len = len, .head_dim = dk};
  Rng rng(seed);
  const int64_t n = batch * len * heads * dk;
  for (auto* t : {&x.q, &x.k, &x.v}) {
    t->resize(n);
    for (float& e : *t) e = static_cast<float>(rng.normal(0.0, sd));
  }
  return x;
}

// Monte-Carlo tolerance for Var(q·k) = d_k with d_k = 64: 16·4 (batch, head) blocks of 32×32
// logits = 65536 pairs. For one pair Var(s²) = 2d² + 6d and two pairs that share q_i (or k_j) have
// Cov(s², s'²) = 2d, a correlation 1/(d+3); each pair shares a row or column with 62 others, so
// the variance of the sample variance is inflated by about 1 + 62/67 ≈ 2: relative standard error
// sqrt((2 + 6/d) · 1.93 / 65536) ≈ 0.0078. The test allows 5 standard errors: 4 %.
constexpr double kVarianceTolerance = 0.04;
// Share inside [-3, 3] of ~unit-normal logits is 0.9973; its standard error at n_eff ≈ 34000 is
// 2.8e-4, and the excess kurtosis 6/d_k of a sum of d_k products moves it by < 1e-3: allow 2e-3.
constexpr double kShareTolerance = 2e-3;

TEST(AttentionProbe, IidUnitQueriesAndKeysGiveLogitVarianceDk) {
  const int64_t dk = 64;
  const Qkv x = random_qkv(16, 4, 32, dk, 7);
  AttentionOptions<float> opt;
  opt.scale = 1.0 / std::sqrt(double(dk));
  std::vector<HeadAttentionStats> stats;
  probe_attention(x.shape, opt, x.q.data(), x.k.data(), {}, stats);
  ASSERT_EQ(stats.size(), 4u);
  const HeadAttentionStats all = merge_heads(stats);
  EXPECT_EQ(all.raw.moments.count, 16 * 4 * 32 * 32);
  EXPECT_NEAR(all.raw.moments.variance() / dk, 1.0, kVarianceTolerance);
  EXPECT_NEAR(all.scaled.moments.variance(), 1.0, kVarianceTolerance);
  EXPECT_NEAR(all.scaled.within_share(), 0.9973, kShareTolerance);
  EXPECT_NEAR(all.q.variance(), 1.0, 0.02);  // 131072 iid entries: stderr 0.004
  EXPECT_NEAR(all.k.variance(), 1.0, 0.02);
  // Unscaled, the same logits have standard deviation 8: few fall inside [-3, 3].
  EXPECT_NEAR(all.raw.within_share(), std::erf(3.0 / 8.0 / std::sqrt(2.0)), 0.01);
  // The scaled logits are exactly scale · raw here.
  EXPECT_NEAR(all.scaled.moments.variance(), all.raw.moments.variance() / dk,
              1e-6 * all.scaled.moments.variance());
}

TEST(AttentionProbe, QueryPrescaleIsDividedOutOfTheRawLogits) {
  const int64_t dk = 16;
  Qkv x = random_qkv(2, 2, 8, dk, 3);
  AttentionOptions<float> plain;
  plain.scale = 0.25;
  std::vector<HeadAttentionStats> a, b;
  probe_attention(x.shape, plain, x.q.data(), x.k.data(), {}, a);
  for (float& e : x.q) e *= 0.25f;  // t2t: q pre-scaled, the kernel's scale 1
  AttentionOptions<float> pre;
  pre.scale = 1.0;
  probe_attention(x.shape, pre, x.q.data(), x.k.data(), {}, b, nullptr, 0.25);
  const HeadAttentionStats sa = merge_heads(a), sb = merge_heads(b);
  EXPECT_NEAR(sb.raw.moments.variance(), sa.raw.moments.variance(), 1e-5 * sa.raw.moments.variance());
  EXPECT_NEAR(sb.scaled.moments.variance(), sa.scaled.moments.variance(),
              1e-5 * sa.scaled.moments.variance());
}

TEST(AttentionProbe, CausalRowsOfZeroLogitsAreUniformAndTheFirstRowSetApart) {
  Qkv x = random_qkv(3, 2, 6, 4, 1);
  std::fill(x.q.begin(), x.q.end(), 0.0f);  // every logit 0: each row uniform over its keys
  AttentionOptions<float> opt;
  opt.causal = true;
  std::vector<HeadAttentionStats> stats;
  probe_attention(x.shape, opt, x.q.data(), x.k.data(), {}, stats);
  const HeadAttentionStats all = merge_heads(stats);
  EXPECT_EQ(all.softmax.rows, 3 * 2 * 6);
  EXPECT_EQ(all.raw.moments.count, 3 * 2 * (1 + 2 + 3 + 4 + 5 + 6));  // visible pairs only
  EXPECT_EQ(all.softmax.single_key_rows, 3 * 2);  // row 0 sees one key: p = 1, not saturation
  EXPECT_EQ(all.softmax.saturated_rows, 0);
  EXPECT_NEAR(all.softmax.normalized_entropy.mean, 1.0, 1e-12);
  EXPECT_NEAR(all.softmax.normalized_entropy.min, 1.0, 1e-12);
  EXPECT_EQ(all.softmax.near_uniform_share(), 1.0);
}

TEST(AttentionProbe, PaddingAndSkippedQueryRowsAreLeftOut) {
  Qkv x = random_qkv(2, 1, 5, 4, 2);
  const std::vector<int32_t> lengths{5, 2};
  const std::vector<uint8_t> rows{1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
  AttentionOptions<float> opt;
  opt.key_lengths = lengths.data();
  std::vector<HeadAttentionStats> stats;
  probe_attention(x.shape, opt, x.q.data(), x.k.data(), {}, stats, rows.data());
  EXPECT_EQ(stats[0].softmax.rows, 5 + 2);
  EXPECT_EQ(stats[0].raw.moments.count, 5 * 5 + 2 * 2);
  EXPECT_EQ(stats[0].k.count, (5 + 2) * 4);
}

TEST(AttentionProbe, SoftcapBoundsTheScaledLogitsAndHistogramsCountEveryPair) {
  const Qkv x = random_qkv(2, 2, 8, 8, 4, 3.0);
  AttentionOptions<float> opt;
  opt.scale = 1.0;
  opt.softcap = 5.0;
  AttentionProbeOptions po;
  po.logit_edges = {-10, -5, 0, 5, 10};
  po.entropy_edges = {0, 0.5, 1};
  std::vector<HeadAttentionStats> stats;
  probe_attention(x.shape, opt, x.q.data(), x.k.data(), po, stats);
  const HeadAttentionStats all = merge_heads(stats);
  EXPECT_LE(all.scaled.moments.max_abs(), 5.0);
  EXPECT_GT(all.raw.moments.max_abs(), 5.0);
  ASSERT_TRUE(all.scaled_histogram && all.raw_histogram && all.softmax.entropy_histogram);
  EXPECT_EQ(all.scaled_histogram->total(), all.scaled.moments.count);
  EXPECT_EQ(all.scaled_histogram->below() + all.scaled_histogram->above(), 0);
  EXPECT_EQ(all.softmax.entropy_histogram->total(), all.softmax.rows);
}

// The probe's softmax figures, recomputed in double from q and k, against the statistics the
// naive kernel computes from p and the flash kernel computes online.
TEST(AttentionProbe, AgreesWithTheKernelsOnlineStatistics) {
  const int64_t dk = 16;
  const Qkv x = random_qkv(3, 4, 24, dk, 9, 1.5);
  const std::vector<int32_t> lengths{24, 10, 17};
  AttentionOptions<float> opt;
  opt.scale = 1.0 / std::sqrt(double(dk));
  opt.key_lengths = lengths.data();
  std::vector<HeadAttentionStats> mine;
  AttentionProbeOptions po;
  po.thresholds.saturated = 0.5;  // so that some rows count, in both conventions
  probe_attention(x.shape, opt, x.q.data(), x.k.data(), po, mine);
  for (AttentionKernel kernel : {AttentionKernel::naive, AttentionKernel::flash}) {
    AttentionProbeStats ks;
    ks.saturation_threshold = 0.5;
    ks.uniform_threshold = po.thresholds.near_uniform;
    std::vector<float> out(x.q.size());
    AttentionSaved<float> saved;
    attention_forward<float>(kernel, x.shape, opt, x.q.data(), x.k.data(), x.v.data(), out.data(),
                             saved, &ks);
    for (int64_t h = 0; h < 4; ++h) {
      const SoftmaxAccumulator& s = mine[h].softmax;
      EXPECT_EQ(ks.rows[h], s.rows);
      EXPECT_NEAR(ks.normalized_entropy_sum[h] / ks.normalized_rows[h], s.normalized_entropy.mean, 1e-5)
          << attention_kernel_name(kernel) << " head " << h;
      EXPECT_NEAR(ks.max_prob_sum[h] / ks.rows[h], s.max_p.mean, 1e-5);
      // The kernels count max p >= threshold, the probe max p > threshold: equal unless a row
      // sits exactly on it, which random rows do not.
      EXPECT_EQ(ks.saturated_rows[h], s.saturated_rows);
      EXPECT_EQ(ks.uniform_rows[h], s.near_uniform_rows);
    }
  }
}

}  // namespace
}  // namespace scalelab::probes
