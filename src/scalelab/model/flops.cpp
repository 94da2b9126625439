#include "scalelab/model/flops.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab {

StepFlops step_flops(const ModelConfig& config, const StepShape& shape) {
  const bool enc_dec = config.arch == Architecture::encoder_decoder;
  SL_CHECK(shape.batch > 0 && shape.tgt_len > 0, "step_flops: batch ", shape.batch, " and tgt_len ",
           shape.tgt_len, " must be positive");
  SL_CHECK(enc_dec ? shape.src_len > 0 : shape.src_len == 0, "step_flops: src_len ", shape.src_len,
           enc_dec ? " must be positive for an encoder-decoder" : " must be 0 for a decoder-only model");
  const double d = static_cast<double>(config.d_model);
  const double ff = static_cast<double>(config.d_ff);
  const double vocab = static_cast<double>(config.tgt_vocab);
  const double b = static_cast<double>(shape.batch);
  const double s = static_cast<double>(shape.src_len);
  const double t = static_cast<double>(shape.tgt_len);
  auto linear = [](double rows, double in, double out) { return 2.0 * rows * in * out; };
  // 4 · q_len · k_len · d_k per head; summed over heads d_k · heads = d_model.
  auto attention = [&](double q_len, double k_len, bool causal) {
    return 4.0 * b * q_len * k_len * d * (causal ? 0.5 : 1.0);
  };
  auto feed_forward = [&](double rows) { return linear(rows, d, ff) + linear(rows, ff, d); };

  StepFlops f;
  const double src_rows = b * s, tgt_rows = b * t;
  if (enc_dec) {
    const double per_layer = 4 * linear(src_rows, d, d) + feed_forward(src_rows);
    f.linear_forward += static_cast<double>(config.encoder_layers) * per_layer;
    f.attention_forward += static_cast<double>(config.encoder_layers) * attention(s, s, false);
  }
  const double layers = static_cast<double>(config.decoder_layers);
  double per_layer = 4 * linear(tgt_rows, d, d) + feed_forward(tgt_rows);  // self-attention, FFN
  double attn = attention(t, t, true);
  if (enc_dec) {  // cross-attention: q and out on the target rows, k and v on the memory
    per_layer += 2 * linear(tgt_rows, d, d) + 2 * linear(src_rows, d, d);
    attn += attention(t, s, false);
  }
  f.linear_forward += layers * per_layer + linear(tgt_rows, d, vocab);  // output projection
  f.attention_forward += layers * attn;
  return f;
}

}  // namespace scalelab
