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

// Everything that decides how one attention module turns q and k into logits. The module
// resolves the scale once (MultiHeadAttention::query_scale, kernel_scale, folded_query_init);
// nothing else computes it.
struct AttentionKnobs {
  AttentionScale scale;
  bool scale_query = false;          // multiply q before q·kᵀ (t2t, fairseq) instead of the logits
  bool learned_temperature = false;  // a trained per-head multiplier, initialised to the scale
  bool fold_into_init = false;       // T5: W_q's init multiplied by the scale, none at run time
  double softcap = 0.0;              // > 0: s = cap · tanh(s / cap)
  QkNorm qk_norm = QkNorm::none;     // normalise q and k over head_dim (per head) before q·kᵀ
  bool qk_norm_learned = true;       // the norms' gains are trained (else fixed at 1)
  // Positions inside attention: the model fills these from its position encoding
  // (ModelConfig::layer_options); cross-attention has neither (LayerOptions::cross_attention).
  bool rope = false;                 // rotary positions on q and k
  double rope_base = 10000.0;
  bool alibi = false;                // linear distance penalty per head
  AttentionKernel kernel = AttentionKernel::flash;
};

// The knobs of one layer: what a Block, its attention modules and its feed-forward read. The
// model's config (model/config.hpp) is these plus the model-level knobs, so each is set once.
struct LayerOptions {
  int64_t d_model = 0;
  int64_t n_heads = 0;
  int64_t d_ff = 0;
  Activation activation = Activation::relu;
  NormPlacement norm = NormPlacement::post;
  NormKind norm_kind = NormKind::layer;
  double norm_eps = 1e-5;
  double dropout = 0.0;
  bool bias = true;  // biases of every linear map: q, k, v, o and the feed-forward (T5, LLaMA: none)
  AttentionKnobs attention;  // self-attention's

  int64_t head_dim() const { return d_model / n_heads; }
  // Cross-attention's options: the same knobs without positions (they act within a sequence).
  LayerOptions cross_attention() const {
    LayerOptions o = *this;
    o.attention.rope = o.attention.alibi = false;
    return o;
  }
};

}  // namespace scalelab
