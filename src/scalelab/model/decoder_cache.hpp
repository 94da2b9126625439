// model/decoder_cache: the state of incremental (cached) decoding, Transformer::decode_step.
//
// The uncached path (Transformer::decode) re-runs the decoder over the whole prefix for every new
// token: step t costs t rows in every layer, plus the cross-attention's k, v of the whole memory.
// With the cache, step t runs one row per hypothesis:
//   per decoder layer l:  self.k, self.v  [rows, capacity, d]  the self-attention's k (after
//                         QK-norm and RoPE) and v of positions 0..t-1, extended by each step
//                         cross.k, cross.v [sources, src_len, d] the encoder memory's k, v,
//                         projected once per source (start_decoding)
// and returns the logits of the new position, equal to the last row of decode() on the prefix up
// to float rounding. Every decoder configuration is supported: post/pre/sandwich wiring,
// LayerNorm/RMSNorm, sinusoidal and learned positions (at position t), RoPE (at t), ALiBi,
// T5 relative bias (the query's row), QK-norm, every scale knob, soft-caps, tied or untied output,
// bf16 matmul precision (the same GEMMs). Not supported: training (dropout, bf16/f16 rounding
// emulation) and a sliding window (positions past max_len): callers use decode() for those.
//
// Rows and sources: row r is one hypothesis, reading source source_of_row[r]. Beam search copies
// rows with select_rows when hypotheses are re-selected (a row's self-attention cache follows its
// hypothesis; the memory cache is shared per source and never copied).
#pragma once
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/nn/block.hpp"

namespace scalelab {

template <class T>
struct DecoderCache {
  std::vector<BlockCache<T>> layers;   // one per decoder layer
  int64_t rows = 0;                    // hypotheses decoded together
  int64_t position = 0;                // tokens consumed per row so far (the next one's position)
  int64_t capacity = 0;                // positions the self-attention caches hold
  std::vector<int64_t> source_of_row;  // [rows] (encoder-decoder)
  std::vector<int32_t> source_lengths; // [rows] the true length of each row's source

  // Row r becomes the old row rows_from[r] (its self-attention keys and values, its source);
  // the number of rows becomes rows_from.size(). Beam search: rows_from[r] = the parent hypothesis.
  void select_rows(const std::vector<int64_t>& rows_from) {
    for (BlockCache<T>& l : layers) l.self.gather(rows_from);
    std::vector<int64_t> src(rows_from.size());
    std::vector<int32_t> lengths(rows_from.size());
    for (size_t r = 0; r < rows_from.size(); ++r) {
      if (!source_of_row.empty()) src[r] = source_of_row[rows_from[r]];
      if (!source_lengths.empty()) lengths[r] = source_lengths[rows_from[r]];
    }
    if (!source_of_row.empty()) source_of_row.swap(src);
    if (!source_lengths.empty()) source_lengths.swap(lengths);
    rows = static_cast<int64_t>(rows_from.size());
  }

  // Keeps rows [0, n) and drops the rest without copying (a row's cache leads the layout): for
  // callers that order their rows so that finished ones come last (rescore.hpp).
  void keep_first_rows(int64_t n) {
    SL_CHECK(n >= 0 && n <= rows, "keep_first_rows: ", n, " of ", rows, " rows");
    for (BlockCache<T>& l : layers) l.self.keep_first(n);
    if (!source_of_row.empty()) source_of_row.resize(static_cast<size_t>(n));
    if (!source_lengths.empty()) source_lengths.resize(static_cast<size_t>(n));
    rows = n;
  }
};

}  // namespace scalelab
