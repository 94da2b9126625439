// train/sampling: text generation from a decoder-only language model.
//
// Each step runs the model on the last `context` tokens of (prompt + generated) and draws the next
// token from softmax(logits / temperature) with a seeded Rng (same seed, same text). Temperature
// 0 takes the argmax. The special tokens (<pad>, <bos>, <eos>, <unk>) are never drawn: the
// character LM is trained on raw text windows, which hold none of them.
// With use_cache (the default) the model runs one cached decoder step per token
// (Transformer::decode_step; the prompt is fed token by token) while prompt + generated text fits
// the window; once the window has to slide, the positions of every token change, so each further
// step re-runs the whole window (the uncached path, also taken throughout when use_cache = false).
#pragma once
#include <cstdint>
#include <vector>

#include "scalelab/model/transformer.hpp"

namespace scalelab {

struct SampleOptions {
  int64_t length = 300;      // tokens to generate
  double temperature = 1.0;  // >= 0; 0: greedy
  uint64_t seed = 1;
  int64_t context = 0;       // tokens the model sees (0: the model's max_len)
  bool use_cache = true;     // false: re-run the whole window every step (the reference)
};

// Index drawn from softmax(logits / temperature) over [first, V), using one uniform from rng.
int32_t draw_token(const float* logits, int64_t V, int32_t first, double temperature, Rng& rng);

// Returns only the generated tokens. The prompt must hold at least one token.
std::vector<int32_t> sample_tokens(Transformer<float>& model, const std::vector<int32_t>& prompt,
                                   const SampleOptions& options);

}  // namespace scalelab
