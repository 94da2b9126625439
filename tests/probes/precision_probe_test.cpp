#include <gtest/gtest.h>

#include "scalelab/probes/precision_probe.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

ModelConfig config(double embed_scale, const char* attention_scale) {
  ModelConfig m = testing::sized_model({.arch = Architecture::decoder_only, .tgt_vocab = 20,
                                       .d_model = 64, .n_heads = 2, .d_ff = 128, .decoder_layers = 2});
  m.dropout = 0.0;
  m.norm = NormPlacement::pre;
  m.embedding.init = EmbeddingInit::normal;  // N(0, 1)
  m.embedding.scale = "constant";
  m.embedding.scale_value = embed_scale;
  m.attention.scale = std::string(attention_scale) == "none" ? AttentionScale{AttentionScaleMode::constant, 1.0}
                                                             : AttentionScale{};
  return m;
}

OverflowCounters run(const ModelConfig& m, const probes::PrecisionProbeOptions& o) {
  Transformer<float> model(m);
  std::vector<int32_t> tgt(4 * 16);
  for (size_t i = 0; i < tgt.size(); ++i) tgt[i] = 4 + static_cast<int32_t>(i % 16);
  model.forward({.batch = 4, .tgt_len = 16, .tgt = tgt.data()}, {});
  OverflowCounters totals;
  for (const probes::ProbeRecord& r : probes::probe_precision(model, o, 1, 0)) {
    EXPECT_EQ(r.probe, "precision");
    probes::add_counts(r, totals);
  }
  return totals;
}

TEST(PrecisionProbe, AModestModelDoesNotOverflowInF16) {
  const OverflowCounters c = run(config(8.0, "inv_sqrt_dk"), {.dtype = DType::f16});
  EXPECT_EQ(c.total_overflow(), 0);
  EXPECT_EQ(c.total_nan(), 0);
  EXPECT_GT(c[PrecisionOp::qk_matmul].results, 0);
  EXPECT_GT(c[PrecisionOp::embedding_scale].results, 0);
}

// N(0, 1) entries times 20000 reach |x| ~ 1e5 > 65504: f16 overflows at the embedding scale,
// bf16 (max ~3.4e38) does not.
TEST(PrecisionProbe, HugeEmbeddingScaleOverflowsF16NotBf16) {
  const OverflowCounters f16 = run(config(20000.0, "inv_sqrt_dk"), {.dtype = DType::f16});
  EXPECT_GT(f16[PrecisionOp::embedding_scale].overflow, 0);
  const OverflowCounters bf16 = run(config(20000.0, "inv_sqrt_dk"), {.dtype = DType::bf16});
  EXPECT_EQ(bf16[PrecisionOp::embedding_scale].overflow, 0);
}

// Unscaled logits of a few tens, exponentiated without subtracting the maximum, exceed
// e^11.09 = 65504 in f16; with the maximum subtracted, exp never exceeds 1.
TEST(PrecisionProbe, SoftmaxWithoutMaxSubtractionOverflows) {
  const ModelConfig m = config(30.0, "none");
  const OverflowCounters raw = run(m, {.dtype = DType::f16, .subtract_max = false});
  EXPECT_GT(raw[PrecisionOp::softmax_exp].overflow, 0);
  const OverflowCounters safe = run(m, {.dtype = DType::f16, .subtract_max = true});
  EXPECT_EQ(safe[PrecisionOp::softmax_exp].overflow, 0);
  EXPECT_LE(safe[PrecisionOp::softmax_exp].max_abs, 1.0);
}

}  // namespace
}  // namespace scalelab
