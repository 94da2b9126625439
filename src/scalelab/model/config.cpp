#include "scalelab/model/config.hpp"

#include <cmath>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

const char* name(Architecture a) {
  return a == Architecture::encoder_decoder ? "encoder_decoder" : "decoder_only";
}
const char* name(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }
const char* name(NormPlacement n) { return n == NormPlacement::post ? "post" : "pre"; }
const char* name(PositionEncoding p) {
  return p == PositionEncoding::sinusoidal ? "sinusoidal" : "none";
}
const char* name(LinearInit i) {
  return i == LinearInit::xavier_uniform ? "xavier_uniform" : "torch_default";
}
const char* name(EmbeddingInit i) {
  switch (i) {
    case EmbeddingInit::normal: return "normal";
    case EmbeddingInit::normal_inv_d: return "normal_inv_d";
    case EmbeddingInit::xavier_uniform: return "xavier_uniform";
    case EmbeddingInit::uniform_sqrt3_d: return "uniform_sqrt3_d";
  }
  return "";
}
const char* name(AttentionScaleMode m) {
  switch (m) {
    case AttentionScaleMode::inv_sqrt_dk: return "inv_sqrt_dk";
    case AttentionScaleMode::inv_dk: return "inv_dk";
    case AttentionScaleMode::constant: return "constant";
  }
  return "";
}

void require_positive(ConfigSection& s, const std::string& key, int64_t value) {
  if (value <= 0) s.fail(key, "must be a positive integer");
}

// embedding.scale: a named rule or a number; "learned" makes it a trained scalar whose initial
// value is embedding.learned_init (default sqrt(d)).
void parse_embedding(ConfigSection s, ModelConfig& c) {
  EmbeddingScaling& e = c.embedding;
  const double d = static_cast<double>(c.d_model);
  if (const Json* raw = s.get_raw("scale")) {
    if (raw->is_number()) {
      e.scale = "constant";
      e.scale_value = raw->get<double>();
    } else if (raw->is_string()) {
      e.scale = raw->get<std::string>();
    } else {
      s.fail("scale", "expected a number or one of 1, sqrt_d, d, inv_sqrt_d, learned");
    }
  }
  if (e.scale == "1") e.scale_value = 1.0;
  else if (e.scale == "sqrt_d") e.scale_value = std::sqrt(d);
  else if (e.scale == "d") e.scale_value = d;
  else if (e.scale == "inv_sqrt_d") e.scale_value = 1.0 / std::sqrt(d);
  else if (e.scale == "learned") e.learned = true;
  else if (e.scale != "constant") s.fail("scale", "allowed: 1, sqrt_d, d, inv_sqrt_d, learned, or a number");
  const double learned_init = s.get_double("learned_init", std::sqrt(d));
  if (e.learned) e.scale_value = learned_init;
  const std::string init = s.get_choice(
      "init", "normal_inv_d", {"normal", "normal_inv_d", "xavier_uniform", "uniform_sqrt3_d"});
  e.init = init == "normal" ? EmbeddingInit::normal
           : init == "normal_inv_d" ? EmbeddingInit::normal_inv_d
           : init == "xavier_uniform" ? EmbeddingInit::xavier_uniform
                                      : EmbeddingInit::uniform_sqrt3_d;
  const std::string out = s.get_choice("output_scale", "1", {"1", "inv_sqrt_d"});
  e.output_scale = out == "1" ? 1.0 : 1.0 / std::sqrt(d);
  s.finish();
}

void parse_attention(ConfigSection s, ModelConfig& c) {
  const std::string mode =
      s.get_choice("scale", "inv_sqrt_dk", {"inv_sqrt_dk", "inv_dk", "none", "constant"});
  AttentionScale& a = c.attention_scale;
  a.multiplier = s.get_double("multiplier", 1.0);
  if (mode == "inv_sqrt_dk") a.mode = AttentionScaleMode::inv_sqrt_dk;
  else if (mode == "inv_dk") a.mode = AttentionScaleMode::inv_dk;
  else if (mode == "none") a = {AttentionScaleMode::constant, 1.0};
  else a.mode = AttentionScaleMode::constant;
  s.finish();
}

}  // namespace

LayerOptions ModelConfig::layer_options() const {
  return {.d_model = d_model, .n_heads = n_heads, .d_ff = d_ff, .activation = activation,
          .norm = norm, .norm_eps = norm_eps, .dropout = dropout,
          .attention_scale = attention_scale};
}

ModelConfig parse_model_config(ConfigSection s) {
  ModelConfig c;
  const std::string arch = s.get_choice("arch", "encoder_decoder", {"encoder_decoder", "decoder_only"});
  c.arch = arch == "encoder_decoder" ? Architecture::encoder_decoder : Architecture::decoder_only;
  c.src_vocab = s.get_int("src_vocab", 0);
  c.tgt_vocab = s.get_int("tgt_vocab", 0);
  c.d_model = s.get_int("d_model", c.d_model);
  c.n_heads = s.get_int("n_heads", c.n_heads);
  c.d_ff = s.get_int("d_ff", c.d_ff);
  c.encoder_layers = s.get_int("encoder_layers", c.encoder_layers);
  c.decoder_layers = s.get_int("decoder_layers", c.decoder_layers);
  c.max_len = s.get_int("max_len", c.max_len);
  require_positive(s, "d_model", c.d_model);
  require_positive(s, "n_heads", c.n_heads);
  require_positive(s, "d_ff", c.d_ff);
  require_positive(s, "decoder_layers", c.decoder_layers);
  require_positive(s, "max_len", c.max_len);
  if (c.arch == Architecture::encoder_decoder) require_positive(s, "encoder_layers", c.encoder_layers);
  if (c.src_vocab < 0) s.fail("src_vocab", "must be >= 0 (0: from the data)");
  if (c.tgt_vocab < 0) s.fail("tgt_vocab", "must be >= 0 (0: from the data)");
  if (c.d_model % c.n_heads != 0) {
    config_error(s.full_key("d_model"), std::to_string(c.d_model),
                 "must be divisible by model.n_heads = " + std::to_string(c.n_heads));
  }
  c.activation = s.get_choice("activation", "relu", {"relu", "gelu"}) == "relu" ? Activation::relu
                                                                              : Activation::gelu;
  c.norm = s.get_choice("norm", "post", {"post", "pre"}) == "post" ? NormPlacement::post
                                                                 : NormPlacement::pre;
  c.norm_eps = s.get_double("norm_eps", c.norm_eps);
  if (!(c.norm_eps > 0)) s.fail("norm_eps", "must be > 0");
  c.dropout = s.get_double("dropout", c.dropout);
  if (!(c.dropout >= 0 && c.dropout < 1)) s.fail("dropout", "must be in [0, 1)");
  c.tie_output = s.get_bool("tie_output", c.tie_output);
  c.positions = s.get_choice("positions", "sinusoidal", {"sinusoidal", "none"}) == "sinusoidal"
                    ? PositionEncoding::sinusoidal
                    : PositionEncoding::none;
  c.linear_init = s.get_choice("linear_init", "xavier_uniform", {"xavier_uniform", "torch_default"}) ==
                          "xavier_uniform"
                      ? LinearInit::xavier_uniform
                      : LinearInit::torch_default;
  const int64_t seed = s.get_int("seed", 1);
  if (seed < 0) s.fail("seed", "must be >= 0");
  c.seed = static_cast<uint64_t>(seed);
  parse_embedding(s.subsection("embedding"), c);
  parse_attention(s.subsection("attention"), c);
  s.finish();
  return c;
}

Json model_config_to_json(const ModelConfig& c) {
  Json embedding = {{"init", name(c.embedding.init)},
                    {"output_scale", c.embedding.output_scale == 1.0 ? "1" : "inv_sqrt_d"}};
  if (c.embedding.scale == "constant") embedding["scale"] = c.embedding.scale_value;
  else embedding["scale"] = c.embedding.scale;
  if (c.embedding.learned) embedding["learned_init"] = c.embedding.scale_value;
  Json attention = {{"scale", name(c.attention_scale.mode)},
                    {"multiplier", c.attention_scale.multiplier}};
  return {{"arch", name(c.arch)},          {"src_vocab", c.src_vocab},
          {"tgt_vocab", c.tgt_vocab},      {"d_model", c.d_model},
          {"n_heads", c.n_heads},          {"d_ff", c.d_ff},
          {"encoder_layers", c.encoder_layers}, {"decoder_layers", c.decoder_layers},
          {"max_len", c.max_len},          {"activation", name(c.activation)},
          {"norm", name(c.norm)},          {"norm_eps", c.norm_eps},
          {"dropout", c.dropout},          {"tie_output", c.tie_output},
          {"positions", name(c.positions)}, {"linear_init", name(c.linear_init)},
          {"seed", c.seed},                {"embedding", embedding},
          {"attention", attention}};
}

}  // namespace scalelab
