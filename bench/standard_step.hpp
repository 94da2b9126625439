// The standard training step of the benchmarks (train_step_bench times it, train_step_check writes
// its initial weights, batch and losses for the peers of bench/compare_train_step.py): forward,
// label-smoothed cross-entropy (0.1), backward, global-norm clipping (1.0) and an Adam step
// (lr 1e-4, the engine's defaults) on a fixed random batch, dropout off. The configurations:
//
//   encoder_decoder: d_model 256, 8 heads, 3+3 layers, d_ff 1024, batch 64, 32 source and 32 target
//                    tokens, vocabulary 64                                              (a)
//   decoder_only:    6 layers, d_model 256, 8 heads, d_ff 1024, 128 tokens, batch 16, vocabulary 512 (b)
//   large_decoder:   8 layers, d_model 512, 8 heads, d_ff 2048, 256 tokens, batch 8, vocabulary 512 (c)
//   small:           d_model 64, 4 heads, 2+2 layers, d_ff 256, batch 64, 16 + 16 tokens,
//                    vocabulary 64: the ledger's kind of run, where per-step overhead decides
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/model/config.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/optimizer.hpp"

namespace scalelab::bench {

struct BenchShape {
  Architecture arch;
  int64_t d_model, heads, d_ff, layers, batch, src_len, tgt_len, vocab;
};

inline const BenchShape kEncoderDecoder{Architecture::encoder_decoder, 256, 8, 1024, 3, 64, 32, 32, 64};
inline const BenchShape kDecoderOnly{Architecture::decoder_only, 256, 8, 1024, 6, 16, 0, 128, 512};
inline const BenchShape kLargeDecoder{Architecture::decoder_only, 512, 8, 2048, 8, 8, 0, 256, 512};
inline const BenchShape kSmall{Architecture::encoder_decoder, 64, 4, 256, 2, 64, 16, 16, 64};

// The model of a shape, with the given dropout (the rest: the engine's defaults), made by the
// config parser as a run's model is: it resolves derived fields (e.g. the embedding scale's
// constant), which a ModelConfig filled in by hand would leave at their zero defaults.
inline ModelConfig config_for(const BenchShape& s, double dropout) {
  const Json model = {
      {"arch", s.arch == Architecture::encoder_decoder ? "encoder_decoder" : "decoder_only"},
      {"d_model", s.d_model},       {"n_heads", s.heads},
      {"d_ff", s.d_ff},             {"encoder_layers", s.layers},
      {"decoder_layers", s.layers}, {"src_vocab", s.vocab},
      {"tgt_vocab", s.vocab},       {"dropout", dropout},
      {"max_len", 256}};
  return parse_model_config(ConfigSection(&model, "model"));
}

// The standard configuration of a name, as the command lines of the bench programs give it.
inline BenchShape shape_named(const std::string& name) {
  if (name == "encoder_decoder") return kEncoderDecoder;
  if (name == "decoder_only") return kDecoderOnly;
  if (name == "large_decoder") return kLargeDecoder;
  if (name == "small") return kSmall;
  throw_error("configuration \"", name,
              "\" is not one of encoder_decoder, decoder_only, large_decoder, small");
}

// One configuration's model, optimiser and batch; step() runs one training step.
class StandardStep {
 public:
  explicit StandardStep(const BenchShape& shape)
      : shape_(shape), model_(config_for(shape, 0.0)), optimizer_(model_.parameters(), {}) {
    Rng rng(1);
    auto random_ids = [&](int64_t n) {  // ids 4.. : no pad (0) and no special tokens
      std::vector<int32_t> ids(static_cast<size_t>(n));
      for (int32_t& id : ids) id = 4 + static_cast<int32_t>(rng.below(shape.vocab - 4));
      return ids;
    };
    src_ = random_ids(shape.batch * shape.src_len);
    tgt_in_ = random_ids(shape.batch * shape.tgt_len);
    tgt_out_ = random_ids(shape.batch * shape.tgt_len);
    src_lengths_.assign(static_cast<size_t>(shape.batch), static_cast<int32_t>(shape.src_len));
    in_ = ModelInput{.batch = shape.batch, .src_len = shape.src_len, .tgt_len = shape.tgt_len,
                     .tgt = tgt_in_.data()};
    if (shape.arch == Architecture::encoder_decoder) {
      in_.src = src_.data();
      in_.src_lengths = src_lengths_.data();
    }
  }

  // One step; returns its loss (before the update).
  double step() {
    model_.zero_grad();
    const Tensor<float>& logits = model_.forward(in_, {.training = true, .rng = &dropout_rng_});
    dlogits_.resize(logits.shape());
    const LossResult loss = cross_entropy<float>(logits.data(), tgt_out_.data(),
                                                 shape_.batch * shape_.tgt_len, shape_.vocab, 0.1,
                                                 /*pad_id=*/0, dlogits_.data());
    model_.backward(dlogits_.data());
    clip_grad_norm(optimizer_.params(), 1.0);
    optimizer_.step(1e-4);
    return loss.loss;
  }

  // The loss of the current weights, without an update.
  double loss() {
    const Tensor<float>& logits = model_.forward(in_, {.training = false, .rng = &dropout_rng_});
    return cross_entropy<float>(logits.data(), tgt_out_.data(), shape_.batch * shape_.tgt_len,
                                shape_.vocab, 0.1, /*pad_id=*/0, nullptr)
        .loss;
  }

  Transformer<float>& model() { return model_; }
  const std::vector<int32_t>& src() const { return src_; }
  const std::vector<int32_t>& tgt_in() const { return tgt_in_; }
  const std::vector<int32_t>& tgt_out() const { return tgt_out_; }

 private:
  BenchShape shape_;
  Transformer<float> model_;
  Optimizer<float> optimizer_;
  std::vector<int32_t> src_, tgt_in_, tgt_out_, src_lengths_;
  ModelInput in_;
  Tensor<float> dlogits_;
  Rng dropout_rng_{2};
};

}  // namespace scalelab::bench
