// Each scale knob does what docs/model.md says, beyond its gradients (transformer_gradcheck_test).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "scalelab/kernels/rope.hpp"
#include "scalelab/model/presets.hpp"
#include "scalelab/model/relative_bias.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/nn/attention.hpp"
#include "support/numerics.hpp"
#include "support/model_config.hpp"

namespace scalelab {
namespace {

ModelConfig tiny(Architecture arch = Architecture::encoder_decoder) {
  ModelConfig m = testing::sized_model({.arch = arch, .src_vocab = 11, .tgt_vocab = 13,
                                       .d_model = 16, .n_heads = 2, .d_ff = 32,
                                       .encoder_layers = 2, .decoder_layers = 2, .max_len = 32});
  m.dropout = 0.0;
  m.embedding.scale_value = 4.0;
  return m;
}

struct Inputs {
  std::vector<int32_t> src{4, 5, 6, 7, 2, 8, 9, 2, 0, 0}, src_len{5, 3}, tgt{1, 4, 5, 6, 1, 7, 8, 9};
  ModelInput get(Architecture arch) const {
    ModelInput in{.batch = 2, .src_len = 5, .tgt_len = 4, .tgt = tgt.data()};
    if (arch == Architecture::encoder_decoder) {
      in.src = src.data();
      in.src_lengths = src_len.data();
    }
    return in;
  }
};

// T5 folds 1/sqrt(d_k) into W_q's initialisation: at init the logits equal those of the model
// with the explicit scale and the same draws.
TEST(FoldedInit, SameLogitsAsTheExplicitScaleAtInit) {
  ModelConfig explicit_scale = tiny();
  explicit_scale.linear_init = LinearInit::normal_fan_in;
  ModelConfig folded = explicit_scale;
  folded.attention.fold_into_init = true;
  Transformer<double> a(explicit_scale), b(folded);
  const Tensor<double>* wa = &a.find_parameter("encoder.layers.0.self_attn.q.weight")->value;
  const Tensor<double>* wb = &b.find_parameter("encoder.layers.0.self_attn.q.weight")->value;
  EXPECT_NEAR((*wb)[3], (*wa)[3] / std::sqrt(8.0), 1e-15);  // d_k = 8
  Inputs in;
  const Tensor<double> la = a.forward(in.get(Architecture::encoder_decoder), {});
  const Tensor<double> lb = b.forward(in.get(Architecture::encoder_decoder), {});
  EXPECT_LT(testing::rel_error(lb, la), 1e-12);
}

// The values the scales decide are set by their modules, and initialize() sets them again: the
// learned embedding scale (embedding.learned_init), every temperature (the kernel's scale, here
// 8/d_k = 1), and a folded W_q once (not once per initialize()).
TEST(ScaleInit, InitializeRestoresTheModuleOwnedValues) {
  ModelConfig m = tiny();
  m.embedding.learned = true;
  m.embedding.scale_value = 2.5;
  m.attention.scale = {AttentionScaleMode::inv_dk, 8.0};
  m.attention.learned_temperature = true;
  Transformer<double> model(m);
  auto starts = [&] {
    std::map<std::string, double> out;
    for (Parameter<double>* p : model.parameters())
      if (p->role == ParamRole::embedding_scale || p->role == ParamRole::attention_temperature)
        for (int64_t j = 0; j < p->value.numel(); ++j) out[p->name + std::to_string(j)] = p->value[j];
    return out;
  };
  const std::map<std::string, double> first = starts();
  ASSERT_EQ(first.size(), 2u + 6u * 2u);  // two embedding scales, six attention modules of 2 heads
  for (const auto& [name, v] : first)
    EXPECT_EQ(v, name.find(".scale") != std::string::npos ? 2.5 : 1.0) << name;
  for (Parameter<double>* p : model.parameters()) p->value.fill(7.0);  // as after training
  model.initialize();
  EXPECT_EQ(starts(), first);

  ModelConfig f = tiny();
  f.attention.fold_into_init = true;
  Transformer<double> folded(f);
  Tensor<double> wq = folded.find_parameter("decoder.layers.1.cross_attn.q.weight")->value;
  folded.initialize();
  const Tensor<double>& again = folded.find_parameter("decoder.layers.1.cross_attn.q.weight")->value;
  for (int64_t j = 0; j < wq.numel(); ++j) ASSERT_EQ(again[j], wq[j]) << j;
}

// LayerNorm over d_k gives |q̂| = |k̂| = sqrt(d_k) (eps aside), so |s| <= c·d_k however large
// the weights; without QK-norm the logits grow with the weights.
TEST(QkNorm, BoundsTheLogitsWhateverTheWeights) {
  for (QkNorm kind : {QkNorm::none, QkNorm::layer, QkNorm::rms}) {
    LayerOptions o{.d_model = 16, .n_heads = 2, .d_ff = 32};
    o.attention.qk_norm = kind;
    o.attention.qk_norm_learned = false;
    o.attention.kernel = AttentionKernel::naive;
    MultiHeadAttention<double> mha("a", o);
    Rng rng(5);
    for (Parameter<double>* p : mha.parameters())
      for (double& v : p->value) v = rng.normal(0, 30.0);  // huge weights
    Tensor<double> x({2 * 6, 16}), y({2 * 6, 16});
    for (double& v : x) v = rng.normal(0, 1);
    mha.forward({2, 6, 6}, x.data(), x.data(), y.data());
    const Tensor<double>& q = mha.kernel_q();
    const Tensor<double>& k = mha.kernel_k();
    const double c = 1.0 / std::sqrt(8.0);
    double max_logit = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 6; ++i)
          for (int64_t j = 0; j < 6; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < 8; ++e) dot += q[(b * 6 + i) * 16 + h * 8 + e] * k[(b * 6 + j) * 16 + h * 8 + e];
            max_logit = std::max(max_logit, std::abs(c * dot));
          }
    if (kind == QkNorm::none) EXPECT_GT(max_logit, 1e4);
    else EXPECT_LE(max_logit, c * 8.0 * (1 + 1e-9));
  }
}

// After RoPE, q_p · k_r depends only on p - r.
TEST(Rope, DotProductsDependOnlyOnTheOffset) {
  const int64_t D = 8;
  Rng rng(2);
  std::vector<double> q(D), k(D);
  for (double& v : q) v = rng.normal(0, 1);
  for (double& v : k) v = rng.normal(0, 1);
  auto rotated_dot = [&](int64_t p, int64_t r) {
    std::vector<double> qp = q, kr = k;
    rope_forward<double>({1, 1, 1, D, 0, p, 10000.0}, qp.data());
    rope_forward<double>({1, 1, 1, D, 0, r, 10000.0}, kr.data());
    double dot = 0;
    for (int64_t e = 0; e < D; ++e) dot += qp[e] * kr[e];
    return dot;
  };
  EXPECT_NEAR(rotated_dot(3, 1), rotated_dot(10, 8), 1e-12);
  EXPECT_NEAR(rotated_dot(0, 5), rotated_dot(20, 25), 1e-12);
  EXPECT_GT(std::abs(rotated_dot(3, 1) - rotated_dot(3, 2)), 1e-6);  // but it does depend on it
  // The rotation is orthogonal and the backward inverts it.
  std::vector<double> x = q;
  rope_forward<double>({1, 1, 1, D, 0, 7, 10000.0}, x.data());
  rope_backward<double>({1, 1, 1, D, 0, 7, 10000.0}, x.data());
  for (int64_t e = 0; e < D; ++e) EXPECT_NEAR(x[e], q[e], 1e-14);
}

TEST(Alibi, SlopesOfThePaper) {
  const std::vector<double> s8 = alibi_slopes(8);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(s8[i], std::pow(2.0, -(i + 1)));
  const std::vector<double> s6 = alibi_slopes(6);  // 4 of 2^(-2k), then 2^(-1), 2^(-3)
  const std::vector<double> expected{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(s6[i], expected[i]);
}

TEST(T5Buckets, MatchTheReferenceFormula) {
  const RelativeBiasShape bi{32, 128, true}, uni{32, 128, false};
  EXPECT_EQ(relative_position_bucket(0, bi), 0);
  EXPECT_EQ(relative_position_bucket(-1, bi), 1);
  EXPECT_EQ(relative_position_bucket(1, bi), 17);
  EXPECT_EQ(relative_position_bucket(-7, bi), 7);
  EXPECT_EQ(relative_position_bucket(-20, bi), 10);  // 8 + floor(ln(20/8)/ln(16) · 8)
  EXPECT_EQ(relative_position_bucket(20, bi), 26);
  EXPECT_EQ(relative_position_bucket(-1000, bi), 15);
  EXPECT_EQ(relative_position_bucket(1000, bi), 31);
  EXPECT_EQ(relative_position_bucket(5, uni), 0);   // the future shares bucket 0
  EXPECT_EQ(relative_position_bucket(-15, uni), 15);
  EXPECT_EQ(relative_position_bucket(-1000, uni), 31);
}

TEST(OutputSoftcap, BoundsTheLogits) {
  ModelConfig m = tiny(Architecture::decoder_only);
  m.output_softcap = 2.0;
  m.embedding.output_scale = 100.0;  // push the raw logits far out
  Transformer<double> model(m);
  Inputs in;
  const Tensor<double>& logits = model.forward(in.get(Architecture::decoder_only), {});
  double max_abs = 0;
  for (double z : logits) max_abs = std::max(max_abs, std::abs(z));
  EXPECT_LE(max_abs, 2.0);
  EXPECT_GT(max_abs, 1.9);
}

TEST(ZeroInit, MupStartsQueryAndReadoutAtZero) {
  ModelConfig m = tiny();
  m.zero_init_query = true;
  m.zero_init_output = true;
  Transformer<double> model(m);
  for (Parameter<double>* p : model.parameters()) {
    const bool zero = p->name.find("attn.q.") != std::string::npos || p->name == "decoder.out.weight";
    double max_abs = 0;
    for (double v : p->value) max_abs = std::max(max_abs, std::abs(v));
    if (zero) EXPECT_EQ(max_abs, 0.0) << p->name;
  }
  Inputs in;
  const Tensor<double>& logits = model.forward(in.get(Architecture::encoder_decoder), {});
  for (double z : logits) EXPECT_EQ(z, 0.0);  // zero readout: uniform predictions at init
}

TEST(QkvInitGain, ScalesExactlyTheQueryKeyAndValueWeights) {
  ModelConfig m = tiny();
  Transformer<double> plain(m);
  m.qkv_init_gain = 0.5;  // a power of two: the scaled values are exact
  Transformer<double> scaled(m);
  const auto a = plain.parameters(), b = scaled.parameters();
  ASSERT_EQ(a.size(), b.size());
  int scaled_tensors = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& name = a[i]->name;
    const bool qkv = name.find("attn.q.weight") != std::string::npos ||
                     name.find("attn.k.weight") != std::string::npos ||
                     name.find("attn.v.weight") != std::string::npos;
    scaled_tensors += qkv;
    for (int64_t j = 0; j < a[i]->value.numel(); ++j)
      ASSERT_EQ(b[i]->value[j], (qkv ? 0.5 : 1.0) * a[i]->value[j]) << name << " [" << j << "]";
  }
  EXPECT_EQ(scaled_tensors, 3 * (2 + 2 + 2));  // encoder self, decoder self and cross, 2 layers each
}

TEST(QkvInitGain, ConfigRefusesNonPositiveGainsAndRoundTrips) {
  for (double bad : {0.0, -1.0}) {
    Json model = {{"attention", {{"qkv_init_gain", bad}}}};
    try {
      parse_model_config(ConfigSection(&model, "model"));
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("qkv_init_gain"), std::string::npos) << e.what();
    }
  }
  Json model = {{"attention", {{"qkv_init_gain", 0.7071}}}};
  const ModelConfig c = parse_model_config(ConfigSection(&model, "model"));
  EXPECT_EQ(c.qkv_init_gain, 0.7071);
  Json back = model_config_to_json(c);
  EXPECT_EQ(parse_model_config(ConfigSection(&back, "model")).qkv_init_gain, 0.7071);
}

// Every parameter carries the role its module gave it; the test reads the expected role off the
// checkpoint name (docs/checkpoint.md), which the library itself never parses.
ParamRole role_from_name(const std::string& name) {
  const auto ends = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends("attn.q.weight")) return ParamRole::query_weight;
  if (ends("attn.k.weight")) return ParamRole::key_weight;
  if (ends("attn.v.weight")) return ParamRole::value_weight;
  if (name == "decoder.out.weight") return ParamRole::readout_weight;
  if (ends(".embed.weight")) return ParamRole::embedding_table;
  if (ends(".embed.scale")) return ParamRole::embedding_scale;
  if (ends(".pos_embed.weight")) return ParamRole::learned_positions;
  if (ends(".rel_bias.weight")) return ParamRole::relative_bias;
  if (ends(".temperature")) return ParamRole::attention_temperature;
  if (name.find("norm") != std::string::npos) return ends(".weight") ? ParamRole::norm_gain : ParamRole::norm_bias;
  return ends(".bias") ? ParamRole::bias : ParamRole::weight;
}

TEST(ParameterRoles, EveryParameterHasTheRoleOfItsModule) {
  for (PositionEncoding positions : {PositionEncoding::learned, PositionEncoding::t5_bias}) {
    ModelConfig m = tiny();
    m.positions = positions;
    m.tie_output = false;
    m.embedding.learned = true;
    m.embedding.layernorm = true;
    m.attention.learned_temperature = true;
    m.attention.qk_norm = QkNorm::layer;
    Transformer<double> model(m);
    std::map<ParamRole, int> count;
    for (const Parameter<double>* p : model.parameters()) {
      EXPECT_EQ(p->role, role_from_name(p->name)) << p->name;
      const bool decays = is_linear_map(p->role) || p->role == ParamRole::embedding_table ||
                          p->role == ParamRole::learned_positions;
      EXPECT_EQ(takes_weight_decay(p->role), decays) << p->name;
      ++count[p->role];
    }
    // 2 encoder layers (self) + 2 decoder layers (self + cross): 6 attentions.
    for (ParamRole r : {ParamRole::query_weight, ParamRole::key_weight, ParamRole::value_weight,
                        ParamRole::attention_temperature})
      EXPECT_EQ(count[r], 6);
    EXPECT_EQ(count[ParamRole::readout_weight], 1);
    EXPECT_EQ(count[ParamRole::embedding_table], 2);
    EXPECT_EQ(count[ParamRole::embedding_scale], 2);
    EXPECT_EQ(count[positions == PositionEncoding::learned ? ParamRole::learned_positions
                                                            : ParamRole::relative_bias], 2);
    EXPECT_GT(count[ParamRole::norm_gain], 0);
    EXPECT_GT(count[ParamRole::bias], 0);
  }
}

TEST(ParameterRoles, InitialValuesFollowTheRoleNotTheName) {
  // Renaming every parameter after construction must not change what initialize() draws.
  ModelConfig m = tiny();
  m.qkv_init_gain = 0.5;
  m.tie_output = false;
  m.zero_init_output = true;
  Transformer<double> named(m), renamed(m);
  const auto a = named.parameters(), b = renamed.parameters();
  for (size_t i = 0; i < b.size(); ++i) b[i]->name = "p" + std::to_string(i);
  renamed.initialize();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    for (int64_t j = 0; j < a[i]->value.numel(); ++j)
      ASSERT_EQ(b[i]->value[j], a[i]->value[j]) << a[i]->name << " [" << j << "]";
}

// The presets' initial statistics match their sources within Monte-Carlo tolerance.
struct PresetStat {
  const char* preset;
  const char* tensor;
  double expected_std;  // 0: use expected_bound (uniform)
  double expected_bound;
};

double sample_std(const Tensor<float>& t) {
  double s = 0;
  for (float v : t) s += double(v) * v;
  return std::sqrt(s / t.numel());
}

TEST(Presets, InitialWeightsFollowTheirSources) {
  const int64_t d = 64, heads = 4, dk = d / heads, V = 500;
  const std::vector<PresetStat> cases{
      {"vaswani2017", "encoder.embed.weight", 1.0 / std::sqrt(d), 0},
      {"t2t", "decoder.embed.weight", 1.0 / std::sqrt(d), 0},
      {"fairseq", "encoder.embed.weight", 1.0 / std::sqrt(d), 0},
      {"annotated", "encoder.embed.weight", 0, std::sqrt(6.0 / (V + d))},
      {"annotated", "encoder.layers.0.self_attn.q.weight", 0, std::sqrt(6.0 / (2 * d))},
      {"t5", "encoder.embed.weight", 1.0, 0},
      {"t5", "encoder.layers.0.self_attn.q.weight", 1.0 / std::sqrt(double(d * dk)), 0},
      {"t5", "encoder.layers.0.self_attn.k.weight", 1.0 / std::sqrt(double(d)), 0},
      {"t5", "encoder.layers.0.ffn.fc2.weight", 1.0 / std::sqrt(4.0 * d), 0},
      {"bert", "decoder.embed.weight", 0.02, 0},
      {"bert", "decoder.pos_embed.weight", 0.02, 0},
      {"bert", "decoder.layers.0.ffn.fc1.weight", 0.02, 0},
      {"llama", "decoder.embed.weight", 0.02, 0},
      {"gemma", "decoder.layers.0.self_attn.v.weight", 0.02, 0},
      {"mup", "decoder.layers.0.self_attn.q.weight", 0.0, -1},  // zero
  };
  for (const PresetStat& c : cases) {
    Json tree = {{"model", find_preset(c.preset).model}};
    tree["model"].update(Json{{"d_model", d}, {"n_heads", heads}, {"d_ff", 4 * d}, {"encoder_layers", 1},
                              {"decoder_layers", 1}, {"src_vocab", V}, {"tgt_vocab", V}, {"max_len", 512}});
    ConfigSection section(&tree["model"], "model");
    Transformer<float> model(parse_model_config(section));
    Parameter<float>* p = model.find_parameter(c.tensor);
    ASSERT_NE(p, nullptr) << c.preset << " " << c.tensor;
    const double s = sample_std(p->value);
    const double n = double(p->value.numel());
    if (c.expected_bound < 0) {
      EXPECT_EQ(s, 0.0) << c.preset << " " << c.tensor;
    } else if (c.expected_std > 0) {
      // The sample std of n normals has relative standard error 1/sqrt(2n); allow 5 of them.
      EXPECT_NEAR(s / c.expected_std, 1.0, 5.0 / std::sqrt(2 * n)) << c.preset << " " << c.tensor;
    } else {
      const double uniform_std = c.expected_bound / std::sqrt(3.0);
      EXPECT_NEAR(s / uniform_std, 1.0, 5.0 * 0.45 / std::sqrt(n)) << c.preset << " " << c.tensor;
      double max_abs = 0;
      for (float v : p->value) max_abs = std::max(max_abs, double(std::abs(v)));
      EXPECT_LE(max_abs, c.expected_bound);
    }
  }
}

TEST(Presets, GemmaRoundsTheScaleToBf16) {
  Json model = find_preset("gemma").model;
  model.update(Json{{"d_model", 3072}, {"n_heads", 16}, {"tgt_vocab", 10}});
  const ModelConfig c = parse_model_config(ConfigSection(&model, "model"));
  EXPECT_EQ(c.embedding.scale_value, 55.5);  // sqrt(3072) = 55.4256...
}

TEST(Presets, UnknownNameListsTheAllowedOnes) {
  try {
    find_preset("gpt5");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vaswani2017, t2t, fairseq, annotated, t5, mup, bert, llama, gemma"),
              std::string::npos) << e.what();
  }
}

TEST(Config, UnknownKnobValueListsTheAllowedValues) {
  Json model = {{"positions", "spiral"}};
  try {
    parse_model_config(ConfigSection(&model, "model"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sinusoidal, learned, rope, alibi, t5_bias, none"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace scalelab
