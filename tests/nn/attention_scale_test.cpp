// The attention scale is resolved once, by the module, and applied in exactly one of three places:
// to q before the kernel (apply_to = "query"), to W_q's initialisation (fold_into_init, T5) or by
// the kernel. Probes read it back through query_scale() and unscaled_q() instead of recomputing it.
#include <gtest/gtest.h>

#include <cmath>

#include "scalelab/core/rng.hpp"
#include "scalelab/nn/attention.hpp"

namespace scalelab {
namespace {

enum class Placement { logits, query, folded };

LayerOptions options_with(AttentionScale scale, Placement where) {
  LayerOptions o{.d_model = 24, .n_heads = 3, .d_ff = 8};  // d_k = 8
  o.attention.scale = scale;
  o.attention.scale_query = where == Placement::query;
  o.attention.fold_into_init = where == Placement::folded;
  o.attention.kernel = AttentionKernel::naive;
  return o;
}

// Each rule and placement: the three places multiply to the configured value, and only the
// configured place differs from 1.
TEST(AttentionScale, AppliedInExactlyOnePlace) {
  const double dk = 8.0;
  const struct {
    AttentionScale scale;
    double expected;
  } rules[] = {{{AttentionScaleMode::inv_sqrt_dk, 1.0}, 1.0 / std::sqrt(dk)},
               {{AttentionScaleMode::inv_dk, 8.0}, 8.0 / dk},
               {{AttentionScaleMode::constant, 0.25}, 0.25}};
  for (const auto& rule : rules) {
    for (Placement where : {Placement::logits, Placement::query, Placement::folded}) {
      const MultiHeadAttention<double> mha("a", options_with(rule.scale, where));
      const double kernel = mha.kernel_scale(), query = mha.query_scale(),
                   folded = mha.folded_query_init();
      EXPECT_DOUBLE_EQ(mha.scale(), rule.expected);
      EXPECT_DOUBLE_EQ(kernel * query * folded, rule.expected);
      EXPECT_EQ(kernel, where == Placement::logits ? rule.expected : 1.0);
      EXPECT_EQ(query, where == Placement::query ? rule.expected : 1.0);
      EXPECT_EQ(folded, where == Placement::folded ? rule.expected : 1.0);
    }
  }
}

// With a query pre-scale the kernel sees c · q and unscaled_q() is q itself; without one both
// are the same tensor.
TEST(AttentionScale, UnscaledQueryIsTheKernelsQueryDividedByTheScale) {
  for (Placement where : {Placement::logits, Placement::query}) {
    LayerOptions o = options_with({AttentionScaleMode::inv_sqrt_dk, 1.0}, where);
    o.attention.qk_norm = QkNorm::rms;  // a q transform before the pre-scale
    MultiHeadAttention<double> mha("a", o);
    Rng rng(7);
    for (Parameter<double>* p : mha.parameters())
      for (double& v : p->value) v = rng.normal(0, 0.5);
    Tensor<double> x({2 * 5, 24}), y({2 * 5, 24});
    for (double& v : x) v = rng.normal(0, 1);
    mha.forward({2, 5, 5}, x.data(), x.data(), y.data());
    const Tensor<double>& kernel_q = mha.kernel_q();
    const Tensor<double>& q = mha.unscaled_q();
    ASSERT_EQ(kernel_q.numel(), q.numel());
    const double c = where == Placement::query ? 1.0 / std::sqrt(8.0) : 1.0;
    EXPECT_EQ(mha.query_scale(), c);
    double max_q = 0;
    for (int64_t i = 0; i < q.numel(); ++i) {
      EXPECT_EQ(kernel_q[i], c * q[i]) << "element " << i;
      max_q = std::max(max_q, std::abs(q[i]));
    }
    EXPECT_GT(max_q, 0.1);  // not a zero tensor compared with itself
  }
}

// initialize_scale() sets what the scale decides: a temperature starts at the kernel's scale, and
// with fold_into_init W_q's values are multiplied by the scale once per call.
TEST(AttentionScale, InitializeScaleSetsTheTemperatureAndFoldsWq) {
  LayerOptions o = options_with({AttentionScaleMode::inv_dk, 2.0}, Placement::logits);
  o.attention.learned_temperature = true;
  MultiHeadAttention<double> mha("a", o);
  ASSERT_NE(mha.temperature(), nullptr);
  for (double& v : mha.temperature()->value) v = 3.0;  // as after training
  mha.initialize_scale();
  for (double v : mha.temperature()->value) EXPECT_EQ(v, 2.0 / 8.0);

  MultiHeadAttention<double> folded("f", options_with({AttentionScaleMode::inv_dk, 2.0}, Placement::folded));
  EXPECT_EQ(folded.temperature(), nullptr);
  for (double& v : folded.q_proj().weight().value) v = 1.5;
  folded.initialize_scale();
  for (double v : folded.q_proj().weight().value) EXPECT_EQ(v, 1.5 * (2.0 / 8.0));
  for (double v : folded.k_proj().weight().value) EXPECT_EQ(v, 0.0);  // W_k untouched
}

// Cross-attention's options drop the positions (RoPE, ALiBi) and keep every other knob.
TEST(LayerOptions, CrossAttentionHasNoPositions) {
  LayerOptions o = options_with({AttentionScaleMode::inv_dk, 2.0}, Placement::query);
  o.attention.rope = o.attention.alibi = true;
  o.attention.softcap = 30.0;
  const LayerOptions cross = o.cross_attention();
  EXPECT_FALSE(cross.attention.rope);
  EXPECT_FALSE(cross.attention.alibi);
  EXPECT_TRUE(cross.attention.scale_query);
  EXPECT_EQ(cross.attention.softcap, 30.0);
  EXPECT_EQ(cross.attention.scale.multiplier, 2.0);
  EXPECT_EQ(cross.d_model, o.d_model);
}

}  // namespace
}  // namespace scalelab
