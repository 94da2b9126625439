// model/config: the typed description of a model. Read once from the [model] section of a
// config (or a checkpoint's metadata) and never looked up by string again. Every scale knob of
// docs/model.md is a field here or in the LayerOptions it extends (nn/options.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "scalelab/core/config_section.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/nn/options.hpp"

namespace scalelab {

enum class Architecture { encoder_decoder, decoder_only };

enum class EmbeddingInit {
  normal,           // N(0, 1)              (PyTorch nn.Embedding default, T5)
  normal_inv_d,     // N(0, 1/d)            (tensor2tensor, fairseq: std d^-0.5)
  xavier_uniform,   // U(±sqrt(6/(V+d)))    (Annotated Transformer)
  uniform_sqrt3_d,  // U(±sqrt(3/d))        (Marian: rows of about unit norm)
  normal_std,       // N(0, init_std²)      (BERT, LLaMA, Gemma: a small fixed std)
};

enum class LinearInit {
  xavier_uniform,   // U(±sqrt(6/(in+out)))  (Annotated Transformer, fairseq attention)
  torch_default,    // U(±1/sqrt(in))        (nn.Linear's kaiming_uniform(a=sqrt 5))
  normal_fan_in,    // N(0, 1/in)            (Mesh TensorFlow / T5)
  normal_std,       // N(0, linear_init_std²) (BERT: 0.02)
};

enum class PositionEncoding { sinusoidal, learned, rope, alibi, t5_bias, none };

// Every scale knob of the embedding path: x = N_e(s · E[token] + P[pos]), N_e optional.
struct EmbeddingScaling {
  std::string scale = "sqrt_d";  // "1" | "sqrt_d" | "d" | "inv_sqrt_d" | "inv_d" | "learned" | a number
  double scale_value = 0.0;      // the resolved constant (or the learned scalar's initial value)
  bool learned = false;
  DType scale_dtype = DType::f32;  // the constant rounded to this format (Gemma: bf16)
  EmbeddingInit init = EmbeddingInit::normal_inv_d;
  double init_std = 0.02;        // for init = normal_std
  bool layernorm = false;        // BERT's embedding LayerNorm
  double output_scale = 1.0;     // logits = output_scale · h Wᵀ
};

// The layer knobs (d_model, n_heads, d_ff, activation, norm, norm_kind, norm_eps, dropout, bias,
// attention) are the LayerOptions this config is made of: parsed here, read by nn as they are.
struct ModelConfig : LayerOptions {
  ModelConfig();  // the base model of "Attention Is All You Need": 512 wide, 8 heads, 6 + 6 layers
  Architecture arch = Architecture::encoder_decoder;
  int64_t src_vocab = 0;  // 0: taken from the data
  int64_t tgt_vocab = 0;
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  int64_t max_len = 512;
  bool tie_output = false;  // the decoder's output projection is its input embedding
  double output_softcap = 0.0;  // > 0: logits = cap · tanh(logits / cap) (Gemma 2: 30)
  bool zero_init_output = false;  // muP: the untied readout starts at zero
  PositionEncoding positions = PositionEncoding::sinusoidal;
  double learned_positions_std = 0.02;
  double rope_base = 10000.0;
  int64_t t5_buckets = 32;
  int64_t t5_max_distance = 128;
  LinearInit linear_init = LinearInit::xavier_uniform;
  double linear_init_std = 0.02;
  EmbeddingScaling embedding;
  bool zero_init_query = false;           // muP: W_q starts at zero
  // W_q, W_k, W_v start at this multiple of their linear_init values. 1/sqrt(2) is PyTorch's
  // nn.MultiheadAttention: Xavier over the fused [3d, d] in_proj_weight, not over each [d, d].
  double qkv_init_gain = 1.0;
  uint64_t seed = 1;  // initialisation

  // What a layer reads: these options with the attention's positions (RoPE, ALiBi) filled from
  // `positions` and `rope_base`.
  LayerOptions layer_options() const;
};

// Reads and validates [model]; throws Error naming the key, the value and what is allowed.
ModelConfig parse_model_config(ConfigSection section);
Json model_config_to_json(const ModelConfig& config);

}  // namespace scalelab
