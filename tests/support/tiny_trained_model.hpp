// tests/support/tiny_trained_model: a small Transformer of any configuration, trained for a few
// Adam steps on a synthetic task so that its weights are no longer at their initialisation.
//
//   encoder-decoder: copy (source = random ids, target = the source, <eos>)
//   decoder-only:    language modelling of the same random sequences (<bos> y, y <eos>)
// The model config is a preset (model/presets.hpp; "" for the defaults) with the overrides merged.
#pragma once
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/data/batch.hpp"
#include "scalelab/data/example.hpp"
#include "scalelab/model/presets.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/optimizer.hpp"

namespace scalelab::testing {

// preset's [model] keys, then d_model 32, 4 heads, d_ff 64, 2+2 layers, vocab 12, max_len 24,
// no dropout, then `overrides`.
inline ModelConfig tiny_model_config(const std::string& preset, const Json& overrides) {
  Json tree = preset.empty() ? Json::object() : find_preset(preset).model;
  tree.update(Json{{"d_model", 32}, {"n_heads", 4}, {"d_ff", 64}, {"encoder_layers", 2},
                   {"decoder_layers", 2}, {"src_vocab", 12}, {"tgt_vocab", 12}, {"max_len", 24},
                   {"dropout", 0.0}});
  tree.update(overrides, /*merge_objects=*/true);
  return parse_model_config(ConfigSection(&tree, "model"));
}

// `count` examples of length [2, max_len] over the ids after the specials (seq2seq: copy).
inline std::vector<Example> tiny_examples(int64_t vocab, int64_t count, int64_t max_len, uint64_t seed) {
  Rng rng(seed);
  std::vector<Example> out;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = 2 + static_cast<int64_t>(rng.below(uint64_t(max_len - 1)));
    std::vector<int32_t> ids;
    for (int64_t j = 0; j < n; ++j)
      ids.push_back(kNumSpecialTokens + static_cast<int32_t>(rng.below(uint64_t(vocab - kNumSpecialTokens))));
    out.push_back({ids, ids});
  }
  return out;
}

// Trains `steps` Adam steps (lr 3e-3) on batches of tiny_examples; returns the last loss.
inline double train_tiny(Transformer<float>& model, int64_t steps, uint64_t seed = 7) {
  const ModelConfig& c = model.config();
  const bool seq2seq = c.arch == Architecture::encoder_decoder;
  const auto examples = tiny_examples(c.tgt_vocab, 64, 8, seed);
  Optimizer<float> opt(model.parameters(), OptimizerOptions{});
  std::vector<float> dlogits;
  double loss = 0;
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < 16; ++i) idx.push_back((step * 16 + i) % int64_t(examples.size()));
    const Batch b = make_batch(examples, idx, seq2seq ? BatchLayout::seq2seq : BatchLayout::sequence);
    ModelInput in{.batch = b.size, .src_len = b.src_len, .tgt_len = b.tgt_len,
                  .src = seq2seq ? b.src.data() : nullptr,
                  .src_lengths = seq2seq ? b.src_lengths.data() : nullptr, .tgt = b.tgt_in.data()};
    model.zero_grad();
    const Tensor<float>& logits = model.forward(in, ForwardMode{.training = true});
    const int64_t rows = b.size * b.tgt_len;
    dlogits.assign(rows * c.tgt_vocab, 0.0f);
    loss = cross_entropy(logits.data(), b.tgt_out.data(), rows, c.tgt_vocab, 0.0, kPadId,
                         dlogits.data()).loss;
    model.backward(dlogits.data());
    opt.step(3e-3);
  }
  return loss;
}

}  // namespace scalelab::testing
