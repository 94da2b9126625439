#include "scalelab/model/config.hpp"

#include <unistd.h>

#include <cmath>
#include <utility>
#include <vector>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

// Name <-> value tables: one place per enum for parsing, printing and the list of allowed values.
template <class E>
using Names = std::vector<std::pair<const char*, E>>;

const Names<Architecture> kArchitectures{{"encoder_decoder", Architecture::encoder_decoder},
                                         {"decoder_only", Architecture::decoder_only}};
const Names<Activation> kActivations{{"relu", Activation::relu}, {"gelu", Activation::gelu}};
const Names<NormPlacement> kPlacements{{"post", NormPlacement::post}, {"pre", NormPlacement::pre},
                                       {"sandwich", NormPlacement::sandwich}};
const Names<NormKind> kNormKinds{{"layernorm", NormKind::layer}, {"rmsnorm", NormKind::rms}};
const Names<PositionEncoding> kPositions{
    {"sinusoidal", PositionEncoding::sinusoidal}, {"learned", PositionEncoding::learned},
    {"rope", PositionEncoding::rope},             {"alibi", PositionEncoding::alibi},
    {"t5_bias", PositionEncoding::t5_bias},       {"none", PositionEncoding::none}};
const Names<LinearInit> kLinearInits{{"xavier_uniform", LinearInit::xavier_uniform},
                                     {"torch_default", LinearInit::torch_default},
                                     {"normal_fan_in", LinearInit::normal_fan_in},
                                     {"normal_std", LinearInit::normal_std}};
const Names<EmbeddingInit> kEmbeddingInits{{"normal", EmbeddingInit::normal},
                                           {"normal_inv_d", EmbeddingInit::normal_inv_d},
                                           {"xavier_uniform", EmbeddingInit::xavier_uniform},
                                           {"uniform_sqrt3_d", EmbeddingInit::uniform_sqrt3_d},
                                           {"normal_std", EmbeddingInit::normal_std}};
const Names<AttentionScaleMode> kScaleModes{{"inv_sqrt_dk", AttentionScaleMode::inv_sqrt_dk},
                                            {"inv_dk", AttentionScaleMode::inv_dk},
                                            {"constant", AttentionScaleMode::constant}};
const Names<QkNorm> kQkNorms{{"none", QkNorm::none}, {"layernorm", QkNorm::layer},
                             {"rmsnorm", QkNorm::rms}};
const Names<AttentionKernel> kKernels{{"flash", AttentionKernel::flash},
                                      {"naive", AttentionKernel::naive}};
const Names<DType> kDTypes{{"f32", DType::f32}, {"bf16", DType::bf16}, {"f16", DType::f16}};

template <class E>
E parse_enum(ConfigSection& s, const std::string& key, E fallback, const Names<E>& names) {
  const char* fallback_name = "";
  for (const auto& [n, v] : names)
    if (v == fallback) fallback_name = n;
  const std::string value = s.get_string(key, fallback_name);
  std::string allowed;
  for (const auto& [n, v] : names) {
    if (value == n) return v;
    allowed += (allowed.empty() ? "" : ", ") + std::string(n);
  }
  s.fail(key, "allowed values: " + allowed);
}

template <class E>
const char* name_of(E value, const Names<E>& names) {
  for (const auto& [n, v] : names)
    if (v == value) return n;
  return "";
}

void require_positive(ConfigSection& s, const std::string& key, int64_t value) {
  if (value <= 0) s.fail(key, "must be a positive integer");
}

// Size limits (see parse_model_config): d_model 2^16 with d_ff 2^20 is 2^36 elements per matrix,
// so products of two sizes and a layer count stay below 2^63.
constexpr int64_t kMaxWidth = int64_t{1} << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxLength = int64_t{1} << 20;
constexpr int64_t kMaxVocab = int64_t{1} << 24;

void require_at_most(ConfigSection& s, const std::string& key, int64_t value, int64_t limit) {
  if (value > limit) s.fail(key, "must be <= " + std::to_string(limit));
}

// The weights and gradients (each Parameter allocates both) of every matrix the config implies
// (vocabularies not counted: they come from the data), in bytes; refused before any allocation
// if they exceed the machine's memory, so an oversized model is a one-line error, not a bad_alloc.
void require_fits_in_memory(ConfigSection& s, const ModelConfig& c) {
  const double d = double(c.d_model), ff = double(c.d_ff);
  const double layers = double(c.decoder_layers) +
                        (c.arch == Architecture::encoder_decoder ? double(c.encoder_layers) : 0.0);
  // per layer: Q, K, V, O (4 d^2), cross-attention for the decoder (4 d^2), FFN (2 d d_ff)
  const double params = layers * (8 * d * d + 2 * d * ff) + double(c.max_len) * d;
  const double bytes = params * sizeof(float) * 2;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: let the allocation decide
  const double memory = double(pages) * double(page);
  if (bytes <= memory) return;
  auto gib = [](double b) { return std::to_string(int64_t(std::ceil(b / double(1 << 30)))); };
  s.fail("d_model", "with d_ff = " + std::to_string(c.d_ff) + " and " +
                        std::to_string(int64_t(layers)) + " layers the model needs about " + gib(bytes) +
                        " GiB for weights and gradients, this machine has " + gib(memory) + " GiB");
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
      if (!std::isfinite(e.scale_value)) s.fail("scale", "must be a finite number or a named rule");
    } else if (raw->is_string()) {
      e.scale = raw->get<std::string>();
    } else {
      s.fail("scale", "expected a number or one of 1, sqrt_d, d, inv_sqrt_d, inv_d, learned");
    }
  }
  if (e.scale == "1") e.scale_value = 1.0;
  else if (e.scale == "sqrt_d") e.scale_value = std::sqrt(d);
  else if (e.scale == "d") e.scale_value = d;
  else if (e.scale == "inv_sqrt_d") e.scale_value = 1.0 / std::sqrt(d);
  else if (e.scale == "inv_d") e.scale_value = 1.0 / d;
  else if (e.scale == "learned") e.learned = true;
  else if (e.scale != "constant")
    s.fail("scale", "allowed: 1, sqrt_d, d, inv_sqrt_d, inv_d, learned, or a number");
  const double learned_init = s.get_double("learned_init", std::sqrt(d));
  if (e.learned) e.scale_value = learned_init;
  e.scale_dtype = parse_enum(s, "scale_dtype", DType::f32, kDTypes);
  if (e.scale_dtype != DType::f32)  // Gemma: sqrt(3072) -> 55.5 in bf16
    e.scale_value = round_to(e.scale_dtype, e.scale_value);
  e.init = parse_enum(s, "init", EmbeddingInit::normal_inv_d, kEmbeddingInits);
  e.init_std = s.get_double("init_std", e.init_std);
  if (!(e.init_std > 0)) s.fail("init_std", "must be > 0");
  e.layernorm = s.get_bool("layernorm", false);
  const std::string out = s.get_choice("output_scale", "1", {"1", "inv_sqrt_d"});
  e.output_scale = out == "1" ? 1.0 : 1.0 / std::sqrt(d);
  s.finish();
}

void parse_attention(ConfigSection s, ModelConfig& c) {
  AttentionKnobs& a = c.attention;
  const std::string mode = s.get_choice("scale", "inv_sqrt_dk", {"inv_sqrt_dk", "inv_dk", "none", "constant"});
  a.scale.multiplier = s.get_double("multiplier", 1.0);
  if (mode == "inv_sqrt_dk") a.scale.mode = AttentionScaleMode::inv_sqrt_dk;
  else if (mode == "inv_dk") a.scale.mode = AttentionScaleMode::inv_dk;
  else if (mode == "none") a.scale = {AttentionScaleMode::constant, 1.0};
  else a.scale.mode = AttentionScaleMode::constant;
  a.scale_query = s.get_choice("apply_to", "logits", {"logits", "query"}) == "query";
  a.learned_temperature = s.get_bool("learned_temperature", false);
  a.fold_into_init = s.get_bool("fold_into_init", false);
  c.zero_init_query = s.get_bool("zero_init_query", false);
  c.qkv_init_gain = s.get_double("qkv_init_gain", 1.0);
  if (!(c.qkv_init_gain > 0 && std::isfinite(c.qkv_init_gain)))
    s.fail("qkv_init_gain", "must be a finite number > 0 (PyTorch's nn.MultiheadAttention: 0.7071)");
  a.qk_norm = parse_enum(s, "qk_norm", QkNorm::none, kQkNorms);
  a.qk_norm_learned = s.get_bool("qk_norm_learned", true);
  a.softcap = s.get_double("softcap", 0.0);
  if (!(a.softcap >= 0)) s.fail("softcap", "must be >= 0 (0: off)");
  a.kernel = parse_enum(s, "kernel", AttentionKernel::flash, kKernels);
  if (a.learned_temperature && a.scale_query)
    s.fail("learned_temperature", "cannot be combined with attention.apply_to = \"query\"");
  if (a.fold_into_init && (a.learned_temperature || a.scale_query))
    s.fail("fold_into_init", "excludes learned_temperature and apply_to = \"query\" (the scale is in W_q)");
  s.finish();
}

}  // namespace

ModelConfig::ModelConfig() {
  d_model = 512;
  n_heads = 8;
  d_ff = 2048;
  dropout = 0.1;
}

LayerOptions ModelConfig::layer_options() const {
  LayerOptions o = *this;
  o.attention.rope = positions == PositionEncoding::rope;
  o.attention.rope_base = rope_base;
  o.attention.alibi = positions == PositionEncoding::alibi;
  return o;
}

ModelConfig parse_model_config(ConfigSection s) {
  ModelConfig c;
  c.arch = parse_enum(s, "arch", c.arch, kArchitectures);
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
  // Upper bounds far above any use, so that no size product overflows int64 and an absurd size
  // is an error naming its key rather than a "negative dimension" or a bare bad_alloc.
  require_at_most(s, "d_model", c.d_model, kMaxWidth);
  require_at_most(s, "d_ff", c.d_ff, kMaxWidth * 16);
  require_at_most(s, "encoder_layers", c.encoder_layers, kMaxLayers);
  require_at_most(s, "decoder_layers", c.decoder_layers, kMaxLayers);
  require_at_most(s, "max_len", c.max_len, kMaxLength);
  require_at_most(s, "src_vocab", c.src_vocab, kMaxVocab);
  require_at_most(s, "tgt_vocab", c.tgt_vocab, kMaxVocab);
  if (c.d_model % c.n_heads != 0) {
    config_error(s.full_key("d_model"), std::to_string(c.d_model),
                 "must be divisible by model.n_heads = " + std::to_string(c.n_heads));
  }
  c.activation = parse_enum(s, "activation", c.activation, kActivations);
  c.norm = parse_enum(s, "norm", c.norm, kPlacements);
  c.norm_kind = parse_enum(s, "norm_type", c.norm_kind, kNormKinds);
  c.norm_eps = s.get_double("norm_eps", c.norm_eps);
  if (!(c.norm_eps > 0)) s.fail("norm_eps", "must be > 0");
  c.dropout = s.get_double("dropout", c.dropout);
  if (!(c.dropout >= 0 && c.dropout < 1)) s.fail("dropout", "must be in [0, 1)");
  c.bias = s.get_bool("bias", c.bias);
  c.tie_output = s.get_bool("tie_output", c.tie_output);
  c.output_softcap = s.get_double("output_softcap", 0.0);
  if (!(c.output_softcap >= 0)) s.fail("output_softcap", "must be >= 0 (0: off)");
  c.zero_init_output = s.get_bool("zero_init_output", false);
  c.positions = parse_enum(s, "positions", c.positions, kPositions);
  c.learned_positions_std = s.get_double("learned_positions_std", c.learned_positions_std);
  c.rope_base = s.get_double("rope_base", c.rope_base);
  c.t5_buckets = s.get_int("t5_buckets", c.t5_buckets);
  c.t5_max_distance = s.get_int("t5_max_distance", c.t5_max_distance);
  require_at_most(s, "t5_buckets", c.t5_buckets, kMaxLength);
  require_at_most(s, "t5_max_distance", c.t5_max_distance, kMaxLength);
  if (!(c.learned_positions_std > 0)) s.fail("learned_positions_std", "must be > 0");
  if (!(c.rope_base > 1)) s.fail("rope_base", "must be > 1");
  if (c.t5_buckets < 4) s.fail("t5_buckets", "must be >= 4");
  if (c.t5_max_distance < c.t5_buckets / 2) s.fail("t5_max_distance", "must be >= t5_buckets / 2");
  if (c.positions == PositionEncoding::rope && c.head_dim() % 2 != 0)
    s.fail("positions", "rope needs an even head dimension (d_model / n_heads = " +
                            std::to_string(c.head_dim()) + ")");
  c.linear_init = parse_enum(s, "linear_init", c.linear_init, kLinearInits);
  c.linear_init_std = s.get_double("linear_init_std", c.linear_init_std);
  if (!(c.linear_init_std > 0)) s.fail("linear_init_std", "must be > 0");
  const int64_t seed = s.get_int("seed", 1);
  if (seed < 0) s.fail("seed", "must be >= 0");
  c.seed = static_cast<uint64_t>(seed);
  parse_embedding(s.subsection("embedding"), c);
  parse_attention(s.subsection("attention"), c);
  require_fits_in_memory(s, c);
  if (c.zero_init_output && c.tie_output)
    config_error(s.full_key("zero_init_output"), "true", "needs an untied output (model.tie_output = false)");
  s.finish();
  return c;
}

Json model_config_to_json(const ModelConfig& c) {
  const EmbeddingScaling& e = c.embedding;
  Json embedding = {{"init", name_of(e.init, kEmbeddingInits)}, {"init_std", e.init_std},
                    {"layernorm", e.layernorm}, {"scale_dtype", name_of(e.scale_dtype, kDTypes)},
                    {"output_scale", e.output_scale == 1.0 ? "1" : "inv_sqrt_d"}};
  if (e.scale == "constant") embedding["scale"] = e.scale_value;
  else embedding["scale"] = e.scale;
  if (e.learned) embedding["learned_init"] = e.scale_value;
  const AttentionKnobs& a = c.attention;
  const Json attention = {{"scale", name_of(a.scale.mode, kScaleModes)},
                          {"multiplier", a.scale.multiplier},
                          {"apply_to", a.scale_query ? "query" : "logits"},
                          {"learned_temperature", a.learned_temperature},
                          {"fold_into_init", a.fold_into_init},
                          {"zero_init_query", c.zero_init_query},
                          {"qkv_init_gain", c.qkv_init_gain},
                          {"qk_norm", name_of(a.qk_norm, kQkNorms)},
                          {"qk_norm_learned", a.qk_norm_learned},
                          {"softcap", a.softcap},
                          {"kernel", name_of(a.kernel, kKernels)}};
  return {{"arch", name_of(c.arch, kArchitectures)},
          {"src_vocab", c.src_vocab},
          {"tgt_vocab", c.tgt_vocab},
          {"d_model", c.d_model},
          {"n_heads", c.n_heads},
          {"d_ff", c.d_ff},
          {"encoder_layers", c.encoder_layers},
          {"decoder_layers", c.decoder_layers},
          {"max_len", c.max_len},
          {"activation", name_of(c.activation, kActivations)},
          {"norm", name_of(c.norm, kPlacements)},
          {"norm_type", name_of(c.norm_kind, kNormKinds)},
          {"norm_eps", c.norm_eps},
          {"dropout", c.dropout},
          {"bias", c.bias},
          {"tie_output", c.tie_output},
          {"output_softcap", c.output_softcap},
          {"zero_init_output", c.zero_init_output},
          {"positions", name_of(c.positions, kPositions)},
          {"learned_positions_std", c.learned_positions_std},
          {"rope_base", c.rope_base},
          {"t5_buckets", c.t5_buckets},
          {"t5_max_distance", c.t5_max_distance},
          {"linear_init", name_of(c.linear_init, kLinearInits)},
          {"linear_init_std", c.linear_init_std},
          {"seed", c.seed},
          {"embedding", embedding},
          {"attention", attention}};
}

}  // namespace scalelab
