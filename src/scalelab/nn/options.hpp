// nn/options: the typed knobs a layer needs (the model layer fills them from its config).
#pragma once
#include <cmath>
#include <cstdint>

#include "scalelab/kernels/activation.hpp"

namespace scalelab {

enum class NormPlacement {
  post,  // x = LN(x + f(x))            (Vaswani et al. 2017, fairseq, Marian)
  pre,   // x = x + f(LN(x)), final LN  (tensor2tensor since late 2017, Annotated Transformer code)
};

enum class AttentionScaleMode {
  inv_sqrt_dk,  // multiplier / sqrt(d_k)  (the paper)
  inv_dk,       // multiplier / d_k        (muP; "c/d_k")
  constant,     // multiplier              ("none" is constant 1)
};

struct AttentionScale {
  AttentionScaleMode mode = AttentionScaleMode::inv_sqrt_dk;
  double multiplier = 1.0;

  double resolve(int64_t head_dim) const {
    switch (mode) {
      case AttentionScaleMode::inv_sqrt_dk: return multiplier / std::sqrt(double(head_dim));
      case AttentionScaleMode::inv_dk: return multiplier / double(head_dim);
      case AttentionScaleMode::constant: return multiplier;
    }
    return multiplier;
  }
};

struct LayerOptions {
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ff = 0;
  Activation activation = Activation::relu;
  NormPlacement norm = NormPlacement::post;
  double norm_eps = 1e-5;
  double dropout = 0.0;
  AttentionScale attention_scale;
  int64_t head_dim() const { return d_model / n_heads; }
};

}  // namespace scalelab
