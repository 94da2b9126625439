// nn/options: the typed knobs a layer needs (the model layer fills them from its config).
#pragma once
#include <cmath>
#include <cstdint>

#include "scalelab/kernels/activation.hpp"
#include "scalelab/kernels/attention.hpp"
#include "scalelab/nn/norm.hpp"

namespace scalelab {

enum class NormPlacement {
  post,      // x = N(x + f(x))              (Vaswani et al. 2017, fairseq, Marian, BERT)
  pre,       // x = x + f(N(x)), final N     (tensor2tensor since late 2017, T5, LLaMA)
  sandwich,  // x = x + N'(f(N(x))), final N (Gemma 2)
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

enum class QkNorm { none, layer, rms };

// Everything that decides how one attention module turns q and k into logits.
struct AttentionKnobs {
  AttentionScale scale;
  bool scale_query = false;          // multiply q before q·kᵀ (t2t, fairseq) instead of the logits
  bool learned_temperature = false;  // a trained per-head multiplier, initialised to the scale
  double softcap = 0.0;              // > 0: s = cap · tanh(s / cap)
  QkNorm qk_norm = QkNorm::none;     // normalise q and k over head_dim (per head) before q·kᵀ
  bool qk_norm_learned = true;       // the norms' gains are trained (else fixed at 1)
  bool rope = false;                 // rotary positions on q and k (self-attention only)
  double rope_base = 10000.0;
  bool alibi = false;                // linear distance penalty per head (self-attention only)
  bool bias = true;                  // biases on the q, k, v, o projections
  AttentionKernel kernel = AttentionKernel::flash;
};

struct LayerOptions {
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ff = 0;
  Activation activation = Activation::relu;
  NormPlacement norm = NormPlacement::post;
  NormKind norm_kind = NormKind::layer;
  double norm_eps = 1e-5;
  double dropout = 0.0;
  bool ffn_bias = true;
  AttentionKnobs attention;
  int64_t head_dim() const { return d_model / n_heads; }
};

}  // namespace scalelab
