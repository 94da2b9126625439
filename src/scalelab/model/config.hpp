// model/config: the typed description of a model. Read once from the [model] section of a
// config (or a checkpoint's metadata) and never looked up by string again.
#pragma once
#include <cstdint>
#include <string>

#include "scalelab/core/config_section.hpp"
#include "scalelab/nn/options.hpp"

namespace scalelab {

enum class Architecture { encoder_decoder, decoder_only };

enum class EmbeddingInit {
  normal,           // N(0, 1)              (PyTorch nn.Embedding default, T5)
  normal_inv_d,     // N(0, 1/d)            (tensor2tensor, fairseq: std d^-0.5)
  xavier_uniform,   // U(±sqrt(6/(V+d)))    (Annotated Transformer)
  uniform_sqrt3_d,  // U(±sqrt(3/d))        (Marian: rows of about unit norm)
};

enum class LinearInit {
  xavier_uniform,   // U(±sqrt(6/(in+out)))  (Annotated Transformer, fairseq attention)
  torch_default,    // U(±1/sqrt(in))        (nn.Linear's kaiming_uniform(a=sqrt 5))
};

enum class PositionEncoding { sinusoidal, none };

// Every scale knob of the embedding path. The scale multiplies the looked-up row:
// x = scale · E[token] + PE[pos].
struct EmbeddingScaling {
  std::string scale = "sqrt_d";  // "1" | "sqrt_d" | "d" | "inv_sqrt_d" | "learned" | a number
  double scale_value = 0.0;      // the resolved constant (or the learned scalar's initial value)
  bool learned = false;
  EmbeddingInit init = EmbeddingInit::normal_inv_d;
  double output_scale = 1.0;     // tied output: logits = output_scale · h Eᵀ
};

struct ModelConfig {
  Architecture arch = Architecture::encoder_decoder;
  int64_t src_vocab = 0;  // 0: taken from the data
  int64_t tgt_vocab = 0;
  int64_t d_model = 512;
  int64_t n_heads = 8;
  int64_t d_ff = 2048;
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  int64_t max_len = 512;
  Activation activation = Activation::relu;
  NormPlacement norm = NormPlacement::post;
  double norm_eps = 1e-5;
  double dropout = 0.1;
  bool tie_output = false;  // the decoder's output projection is its input embedding
  PositionEncoding positions = PositionEncoding::sinusoidal;
  LinearInit linear_init = LinearInit::xavier_uniform;
  EmbeddingScaling embedding;
  AttentionScale attention_scale;
  uint64_t seed = 1;  // initialisation

  LayerOptions layer_options() const;
  int64_t head_dim() const { return d_model / n_heads; }
};

// Reads and validates [model]; throws Error naming the key, the value and what is allowed.
ModelConfig parse_model_config(ConfigSection section);
Json model_config_to_json(const ModelConfig& config);

}  // namespace scalelab
