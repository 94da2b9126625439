// Transformer's cached decoding step (model/decoder_cache.hpp): the decoder half of
// transformer.cpp's run_stack for one new token per row, the attentions reading KV caches.
#include <cstring>

#include "scalelab/model/transformer.hpp"

namespace scalelab {

template <class T>
void Transformer<T>::start_decoding(const ModelInput& in, DecoderCache<T>& cache, int64_t capacity) {
  SL_CHECK(capacity >= 1 && capacity <= config_.max_len, "decoding capacity ", capacity,
           " must be in [1, model.max_len = ", config_.max_len, "]");
  const int64_t rows = in.batch, d = config_.d_model;
  SL_CHECK(rows >= 1, "start_decoding: no rows (batch = ", rows, ")");
  cache.layers.clear();
  cache.layers.resize(decoder_.blocks.size());
  cache.rows = rows;
  cache.position = 0;
  cache.capacity = capacity;
  cache.source_of_row.clear();
  cache.source_lengths.clear();
  for (BlockCache<T>& l : cache.layers) l.self.reset(rows, capacity, d);
  if (!encoder_decoder_) return;
  encode(in, ForwardMode{});  // m = the encoder's output [batch*src_len, d], once per source
  for (size_t l = 0; l < decoder_.blocks.size(); ++l)
    decoder_.blocks[l].cache_memory(encoder_.output->data(), rows, in.src_len, cache.layers[l]);
  cache.source_of_row.resize(rows);
  cache.source_lengths.assign(in.src_lengths, in.src_lengths + rows);
  for (int64_t b = 0; b < rows; ++b) cache.source_of_row[b] = b;
}

// run_stack(decoder) and output_logits for the rows of position t only; the blocks' attentions
// extend and read the caches (Block::forward_step).
template <class T>
const Tensor<T>& Transformer<T>::decode_step(DecoderCache<T>& cache, const int32_t* tokens) {
  const int64_t rows = cache.rows, t = cache.position, d = config_.d_model, H = config_.n_heads;
  SL_CHECK(static_cast<int64_t>(cache.layers.size()) == config_.decoder_layers,
           "decode_step: the cache was not started for this model (start_decoding)");
  SL_CHECK(t < cache.capacity, "decode_step: position ", t, " is past the cache's capacity ",
           cache.capacity, " (model.max_len = ", config_.max_len, ")");
  Stack& s = decoder_;
  s.batch = rows;
  s.len = 1;
  s.e0.resize({rows, d});
  s.x0.resize({rows, d});
  s.embed.forward(tokens, rows, s.e0.data());  // s · E[ids]
  if (config_.positions == PositionEncoding::sinusoidal) {
    add_sinusoidal_positions(s.e0.data(), rows, 1, d, /*offset=*/t);  // + PE[t]
  } else if (config_.positions == PositionEncoding::learned) {
    const T* p = s.positions.value.data() + t * d;  // + P[t]
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < d; ++j) s.e0[r * d + j] += p[j];
  }
  if (config_.embedding.layernorm) {
    s.embed_norm.forward(s.e0.data(), rows, s.x0.data());  // N_e
  } else {
    std::memcpy(s.x0.data(), s.e0.data(), s.e0.bytes());
  }
  BlockCall call{.batch = rows, .len = 1, .causal = false};
  if (encoder_decoder_) {
    call.memory_len = cache.layers.empty() ? 0 : cache.layers[0].cross.len;
    call.memory_lengths = cache.source_lengths.data();
    call.memory_sequence_of_row = cache.source_of_row.data();
  }
  if (config_.positions == PositionEncoding::t5_bias) {  // the query's row: table[bucket(j - t), h]
    step_bias_.resize({H, t + 1});
    const T* table = s.relative_bias.value.data();  // [buckets, heads]
    for (int64_t j = 0; j <= t; ++j) {
      const int64_t bucket = relative_position_bucket(j - t, s.bias_shape);
      for (int64_t h = 0; h < H; ++h) step_bias_[h * (t + 1) + j] = table[bucket * H + h];
    }
    call.self_bias = step_bias_.data();
  }
  const T* x = s.x0.data();
  for (size_t l = 0; l < s.blocks.size(); ++l) x = s.blocks[l].forward_step(call, x, cache.layers[l]).data();
  s.out.resize({rows, d});
  if (has_final_norm()) {
    s.final_norm.forward(x, rows, s.out.data());
  } else {
    std::memcpy(s.out.data(), x, rows * d * sizeof(T));
  }
  cache.position = t + 1;
  return output_logits(s.out.data(), rows, nullptr);
}

template void Transformer<float>::start_decoding(const ModelInput&, DecoderCache<float>&, int64_t);
template void Transformer<double>::start_decoding(const ModelInput&, DecoderCache<double>&, int64_t);
template const Tensor<float>& Transformer<float>::decode_step(DecoderCache<float>&, const int32_t*);
template const Tensor<double>& Transformer<double>::decode_step(DecoderCache<double>&, const int32_t*);

}  // namespace scalelab
