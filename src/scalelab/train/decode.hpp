// train/decode: greedy decoding for the encoder-decoder (beam search lives in beam.hpp).
#pragma once
#include <vector>

#include "scalelab/data/batch.hpp"
#include "scalelab/model/transformer.hpp"

namespace scalelab {

// Decodes each source of the batch, argmax at every step, until <eos> or max_len tokens.
// Returns the tokens without <bos>/<eos>. The decoder is re-run on the growing prefix (no cache).
std::vector<std::vector<int32_t>> greedy_decode(Transformer<float>& model, const Batch& batch,
                                                int64_t max_len);

// Share of examples whose decoded output equals the reference exactly.
double exact_match(Transformer<float>& model, const std::vector<Example>& examples,
                   int64_t batch_size, int64_t max_extra_len = 10);

}  // namespace scalelab
