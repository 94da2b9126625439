// Emulated-format attention: f32 emulation reproduces the engine's attention; where f16/bf16
// overflow really arises for each order (claim A9); flash vs naive in f16/bf16 (claim A10).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/attention_emulated.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

using testing::rel_error;

// Tolerances on max|o - exact| / max|exact| against the f64 reference, per format (f32
// accumulation). f16 keeps 11 bits (unit roundoff 2^-11 = 4.9e-4), bf16 8 bits (3.9e-3); the
// softmax and p·v add a few roundings each, so a small multiple of the unit roundoff.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::f32: return 1e-5;
    case DType::f16: return 4e-3;   // 8 units of roundoff
    case DType::bf16: return 3e-2;  // 8 units of roundoff
  }
  return 0;
}

struct Inputs {
  AttentionShape shape;
  std::vector<float> q, k, v;
  Inputs(int64_t batch, int64_t heads, int64_t q_len, int64_t k_len, int64_t d, double sd,
         uint64_t seed)
      : shape{batch, heads, q_len, k_len, d} {
    Rng rng(seed);
    q.resize(batch * q_len * heads * d);
    k.resize(batch * k_len * heads * d);
    v.resize(batch * k_len * heads * d);
    for (float& e : q) e = static_cast<float>(rng.normal(0, sd));
    for (float& e : k) e = static_cast<float>(rng.normal(0, sd));
    for (float& e : v) e = static_cast<float>(rng.normal(0, 1));
  }
};

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// The exact result in double (attention_naive_forward<double>) on the format-rounded inputs.
std::vector<double> exact(const Inputs& in, DType dtype, double scale, bool causal) {
  std::vector<double> q(in.q.begin(), in.q.end()), k(in.k.begin(), in.k.end()),
      v(in.v.begin(), in.v.end()), out(in.shape.batch * in.shape.q_len * in.shape.heads * in.shape.head_dim);
  for (auto* x : {&q, &k, &v})
    for (double& e : *x) e = round_to(dtype, e);
  AttentionOptions<double> opt;
  opt.scale = scale;
  opt.causal = causal;
  AttentionSaved<double> saved;
  attention_naive_forward(in.shape, opt, q.data(), k.data(), v.data(), out.data(), saved);
  return out;
}

std::vector<float> emulate(const Inputs& in, EmulatedAttentionOptions opt, OverflowCounters& c) {
  std::vector<float> out(in.shape.batch * in.shape.q_len * in.shape.heads * in.shape.head_dim);
  attention_emulated_forward(in.shape, opt, in.q.data(), in.k.data(), in.v.data(), out.data(), c);
  return out;
}

TEST(AttentionEmulated, EveryOrderAndAlgorithmIsCloseToExact) {
  Inputs in(2, 2, 37, 45, 16, 1.0, 3);
  for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
    double worst[2] = {0, 0};  // per algorithm: the largest error seen (recorded in the XML)
    for (bool causal : {false, true}) {
      const std::vector<double> ref = exact(in, dt, 0.25, causal);
      for (ScaleOrder order : {ScaleOrder::logits_after, ScaleOrder::q_before})
        for (SoftmaxAlgorithm alg : {SoftmaxAlgorithm::naive, SoftmaxAlgorithm::flash}) {
          EmulatedAttentionOptions opt;
          opt.dtype = dt, opt.scale = 0.25, opt.causal = causal, opt.scale_order = order;
          opt.algorithm = alg, opt.tile = 16;
          OverflowCounters c;
          const std::vector<float> out = emulate(in, opt, c);
          worst[int(alg)] = std::max(worst[int(alg)], rel_error(out, ref));
          EXPECT_LE(rel_error(out, ref), tolerance(dt))
              << dtype_name(dt) << " causal " << causal << " order " << int(order) << " alg "
              << int(alg);
          EXPECT_EQ(c.total_overflow() + c.total_nan(), 0);
          EXPECT_GT(c[PrecisionOp::qk_matmul].results, 0);
          EXPECT_EQ(c[order == ScaleOrder::q_before ? PrecisionOp::logit_scale
                                                    : PrecisionOp::q_scale].results, 0);
        }
    }
    RecordProperty(std::string("max_rel_error_naive_") + dtype_name(dt), sci(worst[0]));
    RecordProperty(std::string("max_rel_error_flash_") + dtype_name(dt), sci(worst[1]));
  }
}

// Flash and naive directly against each other in f16 and bf16, at a length of several tiles.
TEST(AttentionEmulated, FlashAgreesWithNaiveInEachFormat) {
  Inputs in(1, 2, 64, 300, 32, 1.0, 8);
  for (DType dt : {DType::f16, DType::bf16}) {
    EmulatedAttentionOptions opt;
    opt.dtype = dt, opt.scale = 1.0 / std::sqrt(32.0), opt.tile = 64;
    OverflowCounters c;
    const std::vector<float> naive = emulate(in, opt, c);
    opt.algorithm = SoftmaxAlgorithm::flash;
    const std::vector<float> flash = emulate(in, opt, c);
    const std::vector<double> naive_d(naive.begin(), naive.end());
    EXPECT_LE(rel_error(flash, naive_d), 2 * tolerance(dt)) << dtype_name(dt);
    const std::vector<double> ref = exact(in, dt, opt.scale, false);
    RecordProperty(std::string("flash_vs_naive_") + dtype_name(dt),
                   sci(rel_error(flash, naive_d)));
    RecordProperty(std::string("flash_vs_exact_") + dtype_name(dt), sci(rel_error(flash, ref)));
    RecordProperty(std::string("naive_vs_exact_") + dtype_name(dt), sci(rel_error(naive, ref)));
    EXPECT_EQ(c.total_overflow() + c.total_nan(), 0);
  }
}

// Claim A9 with large activations: q = k = 25 in all 128 dimensions, scale 1/sqrt(128).
// Scaling the logits after q·kᵀ overflows f16 in the product itself (80000 > 65504); pre-scaling q
// keeps q·kᵀ at 7071, and then only a softmax without max subtraction overflows (e^7071).
TEST(AttentionEmulated, WhereF16OverflowArises) {
  Inputs in(1, 1, 4, 4, 128, 1.0, 5);
  for (float& e : in.q) e = 25.0f;
  for (float& e : in.k) e = 25.0f;
  EmulatedAttentionOptions opt;
  opt.dtype = DType::f16, opt.scale = 1.0 / std::sqrt(128.0);
  {
    OverflowCounters c;
    opt.scale_order = ScaleOrder::logits_after;
    const std::vector<float> out = emulate(in, opt, c);
    EXPECT_EQ(c[PrecisionOp::qk_matmul].overflow, 16);  // every logit
    EXPECT_GT(c[PrecisionOp::softmax_max_sub].nan, 0);  // inf - inf
    EXPECT_TRUE(std::isnan(out[0]));
  }
  {
    OverflowCounters c;
    opt.scale_order = ScaleOrder::q_before;
    const std::vector<float> out = emulate(in, opt, c);
    EXPECT_EQ(c.total_overflow() + c.total_nan(), 0);
    EXPECT_NEAR(c[PrecisionOp::qk_matmul].max_abs, 7072, 8);  // round(25/sqrt(128))·25·128
    const std::vector<double> ref = exact(in, DType::f16, opt.scale, false);
    EXPECT_LE(rel_error(out, ref), tolerance(DType::f16));
  }
  {
    OverflowCounters c;
    opt.subtract_max = false;
    const std::vector<float> out = emulate(in, opt, c);
    EXPECT_EQ(c[PrecisionOp::qk_matmul].overflow, 0);
    EXPECT_EQ(c[PrecisionOp::softmax_exp].overflow, 16);  // e^7071
    EXPECT_TRUE(std::isnan(out[0]));                      // inf / inf
  }
}

// Logits of about ±30 (the seed's d_k = 128 example): safe with max subtraction in both formats;
// without it e^30 = 1.07e13 overflows f16 (max 65504) but not bf16 (max 3.4e38).
TEST(AttentionEmulated, UnsubtractedSoftmaxOverflowsF16ButNotBf16) {
  Inputs in(1, 2, 16, 16, 128, 1.0, 9);
  // Make q·k/sqrt(128) span about ±30: q_i = 30·sqrt(128)/|k|² · k_j-ish via scaled copies.
  for (size_t e = 0; e < in.q.size(); ++e) in.q[e] = in.k[e] * 2.7f;
  EmulatedAttentionOptions opt;
  opt.scale = 1.0 / std::sqrt(128.0);
  for (DType dt : {DType::f16, DType::bf16}) {
    opt.dtype = dt;
    opt.subtract_max = true;
    OverflowCounters safe;
    emulate(in, opt, safe);
    EXPECT_EQ(safe.total_overflow() + safe.total_nan(), 0) << dtype_name(dt);
    EXPECT_GT(safe[PrecisionOp::logit_scale].max_abs, 25) << dtype_name(dt);
    opt.subtract_max = false;
    OverflowCounters raw;
    emulate(in, opt, raw);
    if (dt == DType::f16) {
      EXPECT_GT(raw[PrecisionOp::softmax_exp].overflow, 0);
    } else {
      EXPECT_EQ(raw.total_overflow() + raw.total_nan(), 0);
    }
  }
}

TEST(AttentionEmulated, InFormatAccumulationOverflowsWherePartialSumsDo) {
  // Products 40000 fit f16, the partial sum 80000 does not; the total is 0.
  Inputs in(1, 1, 1, 1, 4, 1.0, 1);
  in.q = {200, 200, 200, 200};
  in.k = {200, 200, -200, -200};
  EmulatedAttentionOptions opt;
  opt.dtype = DType::f16;
  OverflowCounters f32_acc, f16_acc;
  const std::vector<float> good = emulate(in, opt, f32_acc);
  opt.accumulate = DType::f16;
  emulate(in, opt, f16_acc);
  EXPECT_EQ(f32_acc.total_overflow(), 0);
  EXPECT_EQ(good[0], static_cast<float>(round_to(DType::f16, in.v[0])));  // one key: p = 1
  EXPECT_EQ(f16_acc[PrecisionOp::qk_matmul].overflow, 1);
  EXPECT_THROW(
      [&] {
        opt.accumulate = DType::bf16;
        emulate(in, opt, f16_acc);
      }(),
      Error);
}

TEST(AttentionEmulated, RowsWithoutVisibleKeysAreZero) {
  Inputs in(2, 1, 3, 3, 2, 1.0, 2);
  const int32_t lengths[2] = {3, 0};
  EmulatedAttentionOptions opt;
  opt.key_lengths = lengths;
  OverflowCounters c;
  const std::vector<float> out = emulate(in, opt, c);
  for (int i = 6; i < 12; ++i) EXPECT_EQ(out[i], 0.0f);
  EXPECT_EQ(c.total_nan(), 0);
}

}  // namespace
}  // namespace scalelab
