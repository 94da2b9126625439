// tests/support/model_config: the small ModelConfig a test builds by hand, its sizes set in one
// line instead of one assignment per field.
//
//   ModelConfig m = sized_model({.arch = Architecture::decoder_only, .tgt_vocab = 10,
//                                .d_model = 16, .n_heads = 2, .d_ff = 32, .decoder_layers = 1});
//   m.dropout = 0.0;  // any other knob: set on the result
//
// A size left out keeps ModelConfig's default (the fields' defaults are ModelConfig's own), and
// nothing but the sizes is set, so the config is exactly the one the assignments made.
#pragma once
#include <cstdint>

#include "scalelab/model/config.hpp"

namespace scalelab::testing {

// In ModelConfig's order (designated initialisers must follow it).
struct ModelSizes {
  Architecture arch = ModelConfig{}.arch;
  int64_t src_vocab = ModelConfig{}.src_vocab;
  int64_t tgt_vocab = ModelConfig{}.tgt_vocab;
  int64_t d_model = ModelConfig{}.d_model;
  int64_t n_heads = ModelConfig{}.n_heads;
  int64_t d_ff = ModelConfig{}.d_ff;
  int64_t encoder_layers = ModelConfig{}.encoder_layers;
  int64_t decoder_layers = ModelConfig{}.decoder_layers;
  int64_t max_len = ModelConfig{}.max_len;
};

inline ModelConfig sized_model(const ModelSizes& s) {
  ModelConfig m;
  m.arch = s.arch;
  m.src_vocab = s.src_vocab;
  m.tgt_vocab = s.tgt_vocab;
  m.d_model = s.d_model;
  m.n_heads = s.n_heads;
  m.d_ff = s.d_ff;
  m.encoder_layers = s.encoder_layers;
  m.decoder_layers = s.decoder_layers;
  m.max_len = s.max_len;
  return m;
}

}  // namespace scalelab::testing
