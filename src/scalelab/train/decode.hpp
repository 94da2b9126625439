// train/decode: greedy decoding for the encoder-decoder (beam search lives in beam.hpp).
#pragma once
#include <vector>

#include "scalelab/data/batch.hpp"
#include "scalelab/model/transformer.hpp"

namespace scalelab {

// The ids a decoder may output: everything but <pad>, <bos> and <unk> (<eos> ends the output).
// Greedy and beam search (beam.hpp) never emit the others, whatever the logits; the LM sampler
// (sampling.hpp) draws only from the ids after the specials.
bool emittable_token(int64_t id);
// The first id of the largest logit among the emittable ids (ties as std::max_element; Error if
// the vocabulary holds no emittable id). The logits of the emittable ids are used as they are.
int32_t argmax_emittable(const float* logits, int64_t V);

// Decodes each source of the batch, argmax over the emittable ids at every step, until <eos> or max_len tokens.
// Returns the tokens without <bos>/<eos>. use_cache: one cached decoder step per token
// (Transformer::decode_step); false re-runs the decoder on the growing prefix (the reference).
std::vector<std::vector<int32_t>> greedy_decode(Transformer<float>& model, const Batch& batch,
                                                int64_t max_len, bool use_cache = true);

// Share of examples whose decoded output equals the reference exactly.
double exact_match(Transformer<float>& model, const std::vector<Example>& examples,
                   int64_t batch_size, int64_t max_extra_len = 10);

}  // namespace scalelab
