// Finite-difference check, in double, of the whole model's backward through the loss:
// every parameter of small encoder-decoder and decoder-only Transformers, for each variant.
#include <gtest/gtest.h>

#include "scalelab/model/transformer.hpp"
#include "scalelab/train/loss.hpp"
#include "support/finite_difference.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

constexpr double kTolerance = 1e-5;  // relative, double, eps 1e-6 (see modules_gradcheck_test)

struct ModelCase {
  const char* name;
  Architecture arch;
  NormPlacement norm;
  bool tie_output;
  const char* embed_scale;
  Activation activation;
  double dropout;
  double smoothing;
  void (*knobs)(ModelConfig&) = nullptr;  // extra scale knobs on top of the case
};

ModelConfig small_config(const ModelCase& c) {
  ModelConfig m = testing::sized_model({.arch = c.arch, .src_vocab = 9, .tgt_vocab = 7,
                                       .d_model = 8, .n_heads = 2, .d_ff = 12,
                                       .encoder_layers = 2, .decoder_layers = 2, .max_len = 16});
  m.norm = c.norm;
  m.activation = c.activation;
  m.dropout = c.dropout;
  m.tie_output = c.tie_output;
  m.embedding.scale = c.embed_scale;
  m.embedding.learned = std::string(c.embed_scale) == "learned";
  m.embedding.scale_value = m.embedding.learned ? 1.5 : std::sqrt(8.0);
  m.embedding.output_scale = c.tie_output ? 1.0 / std::sqrt(8.0) : 1.0;
  if (c.knobs) c.knobs(m);
  return m;
}

class TransformerGrad : public ::testing::TestWithParam<ModelCase> {};

TEST_P(TransformerGrad, EveryParameterMatchesFiniteDifferences) {
  const ModelCase c = GetParam();
  Transformer<double> model(small_config(c));
  // Perturb the norm gains and biases away from 1/0 so that their gradients are generic.
  Rng rng(11);
  for (Parameter<double>* p : model.parameters())
    if (p->name.find("norm") != std::string::npos || p->name.find("bias") != std::string::npos)
      for (double& v : p->value) v += rng.normal(0.0, 0.2);

  const int64_t B = 2, S = 4, T = 3;
  const std::vector<int32_t> src{4, 5, 6, 2, 7, 2, 0, 0};      // second row padded
  const std::vector<int32_t> src_lengths{4, 2};
  const std::vector<int32_t> tgt_in{1, 4, 5, 1, 6, 0};
  const std::vector<int32_t> tgt_out{4, 5, 2, 6, 2, 0};         // last target ignored (pad)
  ModelInput in{.batch = B, .src_len = S, .tgt_len = T, .tgt = tgt_in.data()};
  if (c.arch == Architecture::encoder_decoder) {
    in.src = src.data();
    in.src_lengths = src_lengths.data();
  }
  Rng dropout_rng(0);
  const ForwardMode mode{.training = c.dropout > 0, .rng = &dropout_rng};
  Tensor<double> dlogits;
  auto loss = [&](bool with_grad) {
    dropout_rng = Rng(99);  // the same masks for every evaluation
    const Tensor<double>& logits = model.forward(in, mode);
    dlogits.resize(logits.shape());
    return cross_entropy<double>(logits.data(), tgt_out.data(), B * T, 7, c.smoothing, 0,
                                 with_grad ? dlogits.data() : nullptr).loss;
  };
  model.zero_grad();
  loss(true);
  model.backward(dlogits.data());
  std::vector<testing::FdInput> inputs;
  for (Parameter<double>* p : model.parameters())
    inputs.push_back({p->value.data(), p->value.numel(), p->name, p->grad.data()});
  const auto report = testing::check_gradients([&] { return loss(false); }, inputs);
  EXPECT_LT(report.worst_rel_error, kTolerance) << report;
  EXPECT_GT(report.checked, 1000);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, TransformerGrad,
    ::testing::Values(
        ModelCase{"encdec_post", Architecture::encoder_decoder, NormPlacement::post, false, "sqrt_d", Activation::relu, 0.0, 0.1},
        ModelCase{"encdec_pre", Architecture::encoder_decoder, NormPlacement::pre, false, "sqrt_d", Activation::gelu, 0.0, 0.0},
        ModelCase{"encdec_pre_tied_learned_dropout", Architecture::encoder_decoder, NormPlacement::pre, true, "learned", Activation::gelu, 0.2, 0.1},
        ModelCase{"decoder_post", Architecture::decoder_only, NormPlacement::post, false, "sqrt_d", Activation::gelu, 0.0, 0.1},
        ModelCase{"decoder_pre_tied", Architecture::decoder_only, NormPlacement::pre, true, "1", Activation::relu, 0.0, 0.0},
        // The scale knobs of docs/model.md, each through the whole model.
        ModelCase{"encdec_rmsnorm_sandwich_nobias", Architecture::encoder_decoder, NormPlacement::sandwich, false, "sqrt_d", Activation::gelu, 0.0, 0.1,
                  [](ModelConfig& m) { m.norm_kind = NormKind::rms; m.bias = false; }},
        ModelCase{"encdec_rope_qknorm_layer", Architecture::encoder_decoder, NormPlacement::pre, false, "sqrt_d", Activation::relu, 0.0, 0.0,
                  [](ModelConfig& m) { m.positions = PositionEncoding::rope; m.attention.qk_norm = QkNorm::layer; }},
        ModelCase{"decoder_alibi_qknorm_rms_fixed", Architecture::decoder_only, NormPlacement::pre, false, "1", Activation::gelu, 0.0, 0.0,
                  [](ModelConfig& m) { m.positions = PositionEncoding::alibi; m.attention.qk_norm = QkNorm::rms; m.attention.qk_norm_learned = false; }},
        ModelCase{"encdec_t5_bias_folded", Architecture::encoder_decoder, NormPlacement::pre, true, "1", Activation::relu, 0.0, 0.1,
                  [](ModelConfig& m) { m.positions = PositionEncoding::t5_bias; m.t5_buckets = 8; m.t5_max_distance = 16;
                                       m.attention.fold_into_init = true; m.norm_kind = NormKind::rms; }},
        ModelCase{"encdec_learned_pos_embed_ln_temperature_softcap", Architecture::encoder_decoder, NormPlacement::post, false, "1", Activation::gelu, 0.0, 0.0,
                  [](ModelConfig& m) { m.positions = PositionEncoding::learned; m.embedding.layernorm = true;
                                       m.attention.learned_temperature = true; m.attention.softcap = 2.0; }},
        ModelCase{"decoder_query_scale_output_softcap_naive", Architecture::decoder_only, NormPlacement::post, false, "sqrt_d", Activation::relu, 0.0, 0.1,
                  [](ModelConfig& m) { m.attention.scale_query = true; m.output_softcap = 3.0; m.attention.kernel = AttentionKernel::naive;
                                       m.attention.scale = {AttentionScaleMode::inv_dk, 2.0}; }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Transformer, RejectsHeadsThatDoNotDivideWidth) {
  ModelConfig m = small_config({"x", Architecture::encoder_decoder, NormPlacement::post, false,
                                "sqrt_d", Activation::relu, 0.0, 0.0});
  m.n_heads = 3;
  EXPECT_THROW(Transformer<float> model(m), Error);
}

TEST(Transformer, SameSeedSameWeightsAndTheParameterOrderIsDocumented) {
  ModelConfig m = small_config({"x", Architecture::encoder_decoder, NormPlacement::pre, false,
                                "sqrt_d", Activation::relu, 0.0, 0.0});
  Transformer<float> a(m), b(m);
  const auto pa = a.parameters(), pb = b.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    for (int64_t j = 0; j < pa[i]->value.numel(); ++j) ASSERT_EQ(pa[i]->value[j], pb[i]->value[j]);
  EXPECT_EQ(pa.front()->name, "encoder.embed.weight");
  EXPECT_EQ(pa[1]->name, "encoder.layers.0.self_attn.q.weight");
  EXPECT_EQ(pa.back()->name, "decoder.out.weight");
  EXPECT_NE(a.find_parameter("decoder.layers.1.cross_attn.o.bias"), nullptr);
  EXPECT_NE(a.find_parameter("decoder.final_norm.weight"), nullptr);
}

TEST(Transformer, EmbeddingInitHasTheConfiguredSpread) {
  ModelConfig m = small_config({"x", Architecture::decoder_only, NormPlacement::pre, false,
                                "sqrt_d", Activation::relu, 0.0, 0.0});
  m.tgt_vocab = 2000;
  m.d_model = 64;
  m.n_heads = 4;
  m.embedding.init = EmbeddingInit::normal_inv_d;
  Transformer<float> model(m);
  const Tensor<float>& e = model.find_parameter("decoder.embed.weight")->value;
  double sum_sq = 0;
  for (float v : e) sum_sq += double(v) * v;
  // Var = 1/d = 1/64; 128k samples give a relative standard error of sqrt(2/128000) = 0.4 %.
  EXPECT_NEAR(sum_sq / e.numel(), 1.0 / 64, 0.02 / 64);
}

}  // namespace
}  // namespace scalelab
