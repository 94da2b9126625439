#include "scalelab/model/presets.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

// The base sizes of the 2017 model (Vaswani et al. Table 3, "base").
Json base_sizes() {
  return {{"d_model", 512}, {"n_heads", 8}, {"d_ff", 2048}, {"encoder_layers", 6},
          {"decoder_layers", 6}};
}

Json with(Json base, const Json& more) {
  base.update(more, /*merge_objects=*/true);
  return base;
}

std::vector<Preset> build() {
  std::vector<Preset> p;
  p.push_back({"vaswani2017",
               "Post-LN, sinusoids, E ~ N(0, 1/d) scaled by sqrt(d), shared output, 1/sqrt(d_k) on the logits",
               "Vaswani et al. 2017, §3.2.1, §3.4, §3.5 (init unstated: tensor2tensor's)",
               with(base_sizes(), {{"arch", "encoder_decoder"}, {"norm", "post"}, {"norm_type", "layernorm"},
                                   {"activation", "relu"}, {"dropout", 0.1}, {"positions", "sinusoidal"},
                                   {"tie_output", true}, {"linear_init", "xavier_uniform"},
                                   {"embedding", {{"scale", "sqrt_d"}, {"init", "normal_inv_d"}, {"output_scale", "1"}}},
                                   {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "logits"}}}})});
  p.push_back({"t2t",
               "Pre-LN, sinusoidal timing, E ~ N(0, 1/d) x sqrt(d) shared with the softmax, q *= d_k^-0.5",
               "tensor2tensor: layers/modalities.py, layers/common_hparams.py, models/transformer.py (transformer_base)",
               with(base_sizes(), {{"arch", "encoder_decoder"}, {"norm", "pre"}, {"norm_type", "layernorm"},
                                   {"activation", "relu"}, {"dropout", 0.1}, {"positions", "sinusoidal"},
                                   {"tie_output", true}, {"linear_init", "xavier_uniform"},
                                   {"embedding", {{"scale", "sqrt_d"}, {"init", "normal_inv_d"}, {"output_scale", "1"}}},
                                   {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "query"}}}})});
  p.push_back({"fairseq",
               "Post-LN, sinusoids, E ~ N(0, 1/d) x sqrt(d) (embed_scale), Xavier projections, q scaled before q.k",
               "fairseq: models/transformer (transformer_base), modules/multihead_attention.py",
               with(base_sizes(), {{"arch", "encoder_decoder"}, {"norm", "post"}, {"norm_type", "layernorm"},
                                   {"activation", "relu"}, {"dropout", 0.1}, {"positions", "sinusoidal"},
                                   {"tie_output", false}, {"linear_init", "xavier_uniform"},
                                   {"embedding", {{"scale", "sqrt_d"}, {"init", "normal_inv_d"}}},
                                   {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "query"}}}})});
  p.push_back({"annotated",
               "Pre-LN as the code does, Xavier uniform on every matrix incl. embeddings, x sqrt(d), untied",
               "The Annotated Transformer (harvardnlp): make_model, Embeddings, SublayerConnection",
               with(base_sizes(), {{"arch", "encoder_decoder"}, {"norm", "pre"}, {"norm_type", "layernorm"},
                                   {"activation", "relu"}, {"dropout", 0.1}, {"positions", "sinusoidal"},
                                   {"tie_output", false}, {"linear_init", "xavier_uniform"},
                                   {"embedding", {{"scale", "sqrt_d"}, {"init", "xavier_uniform"}}},
                                   {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "logits"}}}})});
  p.push_back({"t5",
               "Pre-RMSNorm, no biases, relative bias buckets, E ~ N(0, 1) unscaled, tied output x d^-0.5, scale folded into W_q",
               "Mesh TensorFlow / Hugging Face transformers: models/t5/modeling_t5.py (T5Attention, _init_weights)",
               with(base_sizes(), {{"arch", "encoder_decoder"}, {"norm", "pre"}, {"norm_type", "rmsnorm"},
                                   {"norm_eps", 1e-6}, {"bias", false}, {"activation", "relu"}, {"dropout", 0.1},
                                   {"positions", "t5_bias"}, {"t5_buckets", 32}, {"t5_max_distance", 128},
                                   {"tie_output", true}, {"linear_init", "normal_fan_in"},
                                   {"embedding", {{"scale", "1"}, {"init", "normal"}, {"output_scale", "inv_sqrt_d"}}},
                                   {"attention", {{"scale", "inv_sqrt_dk"}, {"fold_into_init", true}}}})});
  p.push_back({"mup",
               "Pre-LN, attention 8/d_k on q (= 1/sqrt(d_k) at d_k = 64), zero-initialised query and readout",
               "microsoft/mup: README (attention 8/d), mup/layer.py MuReadout; Yang et al. 2022 (Tensor Programs V)",
               {{"norm", "pre"}, {"norm_type", "layernorm"}, {"tie_output", false}, {"zero_init_output", true},
                {"embedding", {{"scale", "1"}, {"init", "normal"}}},
                {"attention", {{"scale", "inv_dk"}, {"multiplier", 8.0}, {"apply_to", "query"},
                               {"zero_init_query", true}}}}});
  p.push_back({"bert",
               "Post-LN, learned positions + embedding LayerNorm, no scale, N(0, 0.02) everywhere, GELU, tied output",
               "google-research/bert: modeling.py (embedding_postprocessor, initializer_range 0.02)",
               {{"d_model", 768}, {"n_heads", 12}, {"d_ff", 3072}, {"encoder_layers", 12}, {"decoder_layers", 12},
                {"norm", "post"}, {"norm_type", "layernorm"}, {"norm_eps", 1e-12}, {"activation", "gelu"},
                {"dropout", 0.1}, {"positions", "learned"}, {"learned_positions_std", 0.02},
                {"tie_output", true}, {"linear_init", "normal_std"}, {"linear_init_std", 0.02},
                {"embedding", {{"scale", "1"}, {"init", "normal_std"}, {"init_std", 0.02}, {"layernorm", true}}},
                {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "logits"}}}}});
  p.push_back({"llama",
               "Decoder-only, pre-RMSNorm, RoPE, no biases, E ~ N(0, 0.02^2) unscaled, untied (SwiGLU: GELU stands in)",
               "meta-llama/llama: model.py; Hugging Face transformers: models/llama/modeling_llama.py",
               {{"arch", "decoder_only"}, {"norm", "pre"}, {"norm_type", "rmsnorm"}, {"norm_eps", 1e-6},
                {"bias", false}, {"activation", "gelu"}, {"dropout", 0.0}, {"positions", "rope"},
                {"rope_base", 10000.0}, {"tie_output", false}, {"linear_init", "normal_std"},
                {"linear_init_std", 0.02},
                {"embedding", {{"scale", "1"}, {"init", "normal_std"}, {"init_std", 0.02}}},
                {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "logits"}}}}});
  p.push_back({"gemma",
               "Decoder-only, sandwich RMSNorm, RoPE, x sqrt(d) rounded to bf16, tied, logit soft-caps 50 (attention) and 30 (output)",
               "Hugging Face transformers: models/gemma/modeling_gemma.py, models/gemma2/modeling_gemma2.py; llama.cpp",
               {{"arch", "decoder_only"}, {"norm", "sandwich"}, {"norm_type", "rmsnorm"}, {"norm_eps", 1e-6},
                {"bias", false}, {"activation", "gelu"}, {"dropout", 0.0}, {"positions", "rope"},
                {"tie_output", true}, {"output_softcap", 30.0}, {"linear_init", "normal_std"},
                {"linear_init_std", 0.02},
                {"embedding", {{"scale", "sqrt_d"}, {"scale_dtype", "bf16"}, {"init", "normal_std"}, {"init_std", 0.02}}},
                {"attention", {{"scale", "inv_sqrt_dk"}, {"apply_to", "logits"}, {"softcap", 50.0}}}}});
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = build();
  return all;
}

const Preset& find_preset(const std::string& name) {
  std::string names;
  for (const Preset& p : presets()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw_error("unknown preset ", name, " (allowed: ", names, ")");
}

}  // namespace scalelab
